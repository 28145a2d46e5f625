#!/bin/sh
# bench/peers/install.sh - installs the Debian packages that bench/peers needs, those that are
# missing, with apt-get (through sudo when not root), as tests/need.sh does for one tool.
# Exits non-zero if any is still missing afterwards. `make bench-peers` runs it first.
# With --check it installs nothing and only says, by its exit status, whether all are there.
#
#   g++                 oneTBB's program (C++)
#   clang, libomp-dev   LLVM OpenMP (clang -fopenmp links libomp)
#   libtbb-dev          oneTBB
#   cargo               Debian's cargo and rustc (the Rayon program is built offline)
#   librust-rayon-dev   Rayon's source, in /usr/share/cargo/registry
#   librust-libc-dev    the libc crate (CPU clocks), likewise
#   gnuplot-nox         the chart
# gcc's libgomp comes with gcc itself.
PACKAGES="gcc g++ clang libomp-dev libtbb-dev cargo librust-rayon-dev librust-libc-dev gnuplot-nox"

installed() {
    dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed'
}

missing() {
    m=
    for p in $PACKAGES; do
        installed "$p" || m="$m $p"
    done
    echo "$m"
}

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "install.sh: not a Debian-like system: install the equivalents of: $PACKAGES" >&2
    exit 1
fi
need=$(missing)
[ -z "$need" ] && exit 0
[ "${1:-}" = --check ] && exit 1

SUDO=
[ "$(id -u)" -ne 0 ] && SUDO=sudo
echo "install.sh: installing$need" >&2
# shellcheck disable=SC2086  # $need is a list of package names
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need >&2 ||
    { $SUDO apt-get update >&2 &&
      $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $need >&2; }
need=$(missing)
if [ -n "$need" ]; then
    echo "install.sh: still missing:$need" >&2
    exit 1
fi
