# bench/peers/rust_toolchain.sh - sourced by run.sh and scaling.sh: sets CARGO and RUSTC to
# Debian's cargo and rustc (what librust-rayon-dev goes with) when they are there, else to
# whatever is on PATH (which must still build offline against /usr/share/cargo/registry).
if [ -x /usr/bin/cargo ] && [ -x /usr/bin/rustc ]; then
    CARGO=/usr/bin/cargo
    RUSTC=/usr/bin/rustc
else
    CARGO=cargo
    RUSTC=rustc
fi
