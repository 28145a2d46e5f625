#!/bin/sh
# tests/readme.sh - every ```c and ```cpp block of README.md is a whole
# program: build each one exactly as a reader would (pool.h next to it,
# -pthread) and run it. Run from the repository root (make readme).
#
#   ```c     built with CC; a block that includes <mpi.h> is built with
#            mpicc and run under `mpirun -np 2 --oversubscribe`
#   ```cpp   built with CXX as C++11
#
#   CC, CXX, BUILD   compilers (default cc, c++) and where the programs go
#                    (default build/readme)
#
# A block whose compiler is missing (no C++ compiler, no MPI after
# tests/need.sh tried to install it) is skipped with a message, and counts
# neither way. Prints "PASS README.md:LINE", "SKIP ..." or "FAIL ..." per
# block, then "N passed, N failed". Exits non-zero if any block failed.
CC=${CC:-cc}
CXX=${CXX:-c++}
BUILD=${BUILD:-build/readme}
if [ ! -f README.md ] || [ ! -f pool.h ]; then
    echo "readme.sh: run me from the repository root" >&2
    echo "0 passed, 1 failed"
    exit 2
fi
mkdir -p "$BUILD" || exit 2
rm -f "$BUILD"/snippet_*.c "$BUILD"/snippet_*.cpp

# One file per block, named after the README line where the block starts.
awk -v dir="$BUILD" '
    /^```(c|cpp)[ \t]*$/ {
        inside = 1
        ext = ($0 ~ /^```cpp/) ? "cpp" : "c"
        file = sprintf("%s/snippet_%04d.%s", dir, NR + 1, ext)
        next
    }
    /^```/ && inside { inside = 0; close(file); next }
    inside { print > file }
' README.md

if command -v timeout >/dev/null 2>&1; then TIMEOUT="timeout 60"; else TIMEOUT=; fi
# Open MPI refuses to start as root without these; CI containers run as root.
if [ "$(id -u)" -eq 0 ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
passed=0
failed=0
skipped=0
for src in "$BUILD"/snippet_*.c "$BUILD"/snippet_*.cpp; do
    [ -f "$src" ] || continue
    name=$(basename "$src")
    line=$(echo "$name" | sed 's/^snippet_0*//; s/\..*$//')
    bin="$BUILD/${name%.*}"
    log="$bin.log"
    run="./$(basename "$bin")"
    case "$src" in
    *.cpp)
        if ! command -v "$CXX" >/dev/null 2>&1; then
            echo "SKIP README.md:$line (C++: no $CXX)"
            skipped=$((skipped + 1))
            continue
        fi
        set -- "$CXX" -std=c++11 -O1 -Wall -Wextra -Werror -pthread -I. -o "$bin" "$src"
        ;;
    *)
        if grep -q '^#include <mpi.h>' "$src"; then
            if ! sh tests/need.sh mpicc libopenmpi-dev mpirun openmpi-bin >"$log" 2>&1; then
                echo "SKIP README.md:$line (MPI: mpicc and mpirun missing, Debian's libopenmpi-dev and openmpi-bin could not be installed)"
                skipped=$((skipped + 1))
                continue
            fi
            set -- mpicc -O1 -Wall -Wextra -Werror -pthread -I. -o "$bin" "$src"
            run="mpirun -np 2 --oversubscribe $run"
        else
            set -- "$CC" -O1 -Wall -Wextra -Werror -pthread -I. -o "$bin" "$src"
        fi
        ;;
    esac
    if ! "$@" >"$log" 2>&1; then
        echo "FAIL README.md:$line (compile error, see $log)"
        sed 's/^/    | /' "$log" | tail -n 20 >&2
        failed=$((failed + 1))
        continue
    fi
    # shellcheck disable=SC2086  # $run is a command and its arguments
    if (cd "$BUILD" && $TIMEOUT $run) >>"$log" 2>&1; then
        echo "PASS README.md:$line"
        passed=$((passed + 1))
    else
        echo "FAIL README.md:$line (exit status $?, see $log)"
        tail -n 20 "$log" | sed 's/^/    | /' >&2
        failed=$((failed + 1))
    fi
done
[ "$skipped" -eq 0 ] || echo "($skipped skipped: their compiler is missing)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
