#!/bin/sh
# tests/readme.sh - every ```c block of README.md is a whole program: build
# each one exactly as a reader would (pool.h next to it, -pthread) and run
# it. Run from the repository root (make readme).
#
#   CC, BUILD   compiler (default cc) and where the programs go
#               (default build/readme)
#
# Prints "PASS README.md:LINE" or "FAIL ..." per block, then
# "N passed, N failed". Exits non-zero if any block failed.
CC=${CC:-cc}
BUILD=${BUILD:-build/readme}
if [ ! -f README.md ] || [ ! -f pool.h ]; then
    echo "readme.sh: run me from the repository root" >&2
    echo "0 passed, 1 failed"
    exit 2
fi
mkdir -p "$BUILD" || exit 2
rm -f "$BUILD"/snippet_*.c

# One file per block, named after the README line where the block starts.
awk -v dir="$BUILD" '
    /^```c[ \t]*$/ { inside = 1; file = sprintf("%s/snippet_%04d.c", dir, NR + 1); next }
    /^```/ && inside { inside = 0; close(file); next }
    inside { print > file }
' README.md

if command -v timeout >/dev/null 2>&1; then TIMEOUT="timeout 60"; else TIMEOUT=; fi
passed=0
failed=0
for src in "$BUILD"/snippet_*.c; do
    [ -f "$src" ] || continue
    line=$(basename "$src" .c | sed 's/^snippet_0*//')
    bin="$BUILD/$(basename "$src" .c)"
    log="$bin.log"
    # shellcheck disable=SC2086
    if ! $CC -O1 -Wall -Wextra -Werror -pthread -I. -o "$bin" "$src" >"$log" 2>&1; then
        echo "FAIL README.md:$line (compile error, see $log)"
        sed 's/^/    | /' "$log" | tail -n 20 >&2
        failed=$((failed + 1))
        continue
    fi
    if (cd "$BUILD" && $TIMEOUT "./$(basename "$bin")") >>"$log" 2>&1; then
        echo "PASS README.md:$line"
        passed=$((passed + 1))
    else
        echo "FAIL README.md:$line (exit status $?, see $log)"
        tail -n 20 "$log" | sed 's/^/    | /' >&2
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
