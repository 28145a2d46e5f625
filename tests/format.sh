#!/bin/sh
# tests/format.sh [check|apply] - every C and C++ file of the project in the
# one style of .clang-format, with Debian's clang-format (installed from its
# package if missing; the style is settled for version 14, bookworm's).
#
#   sh tests/format.sh check   # lists each file that differs; fails if any does
#   sh tests/format.sh apply   # rewrites them in place
#
# `make format-check` (part of `make check`) and `make format` call it.
# Prints "N passed, N failed" (one per file) for CI.
cd "$(dirname "$0")/.." || exit 2
mode=${1:-check}
sh tests/need.sh clang-format clang-format || {
    echo "format.sh: clang-format could not be installed: skipped"
    exit 0
}
files=$(git ls-files '*.c' '*.h' '*.cpp' 2>/dev/null)
[ -n "$files" ] || files=$(find . -path ./build -prune -o \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) -print)
pass=0
fail=0
for f in $files; do
    if [ "$mode" = apply ]; then
        clang-format -i --style=file "$f" || exit 1
        continue
    fi
    if clang-format --style=file "$f" | cmp -s - "$f"; then
        pass=$((pass + 1))
    else
        echo "FAIL $f: not in the style of .clang-format (sh tests/format.sh apply)"
        fail=$((fail + 1))
    fi
done
[ "$mode" = apply ] && exit 0
echo "clang-format $(clang-format --version | sed 's/.*version \([0-9.]*\).*/\1/'): $pass files in style"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
