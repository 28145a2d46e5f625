#!/bin/sh
# tests/test_symbols.sh - the implementation exports the public API and
# nothing else (stb convention: private names are pool__ and static).
#
#  1. An implementation TU (POOL_IMPLEMENTATION and nothing else) built as
#     an object: every defined global symbol is a public pool_* name (not
#     pool__*) but for the inline join's one documented symbol,
#     pool__join_current_v3, which must be there; and every function pool.h
#     declares with POOL_DEF is there.
#  2. With POOL_STATIC: the object defines no global symbol at all.
#
# Environment: CC, CFLAGS (default -O2 -g), NM (default nm), BUILD (where
# the objects go; default build/tests/test_symbols.d). Run from the
# repository root; run.sh runs it as part of `make test`.
CC=${CC:-cc}
CFLAGS=${CFLAGS:--O2 -g}
NM=${NM:-nm}
BUILD=${BUILD:-build/tests/test_symbols.d}
mkdir -p "$BUILD" || exit 2
fail=0

printf '#define POOL_IMPLEMENTATION\n#include "pool.h"\n' >"$BUILD/impl.c"
printf '#define POOL_STATIC\n#define POOL_IMPLEMENTATION\n#include "pool.h"\n' >"$BUILD/static.c"

# The public functions: every `POOL_DEF <type> pool_name(` in pool.h.
sed -n 's/^POOL_DEF [^(]*[ *]\(pool_[a-z_]*\)(.*/\1/p' pool.h | sort -u >"$BUILD/api.txt"
if [ "$(wc -l <"$BUILD/api.txt")" -lt 10 ]; then
    echo "could not read the POOL_DEF declarations from pool.h"
    exit 1
fi

# shellcheck disable=SC2086  # CFLAGS is a list of words
if ! $CC $CFLAGS -Wall -Wextra -I. -c -o "$BUILD/impl.o" "$BUILD/impl.c"; then
    echo "the implementation TU does not compile"
    exit 1
fi
$NM -g --defined-only "$BUILD/impl.o" | awk 'NF >= 3 { print $3 }' | sort -u >"$BUILD/exported.txt"
# Not public: anything outside pool_*, and pool__* (private) but the inline join's symbol.
bad=$(grep -v '^pool_[a-z]' "$BUILD/exported.txt" | grep -vx 'pool__join_current_v3')
if ! grep -qx 'pool__join_current_v3' "$BUILD/exported.txt"; then
    echo "the inline join's symbol pool__join_current_v3 is not exported"
    fail=1
fi
if [ -n "$bad" ]; then
    echo "exported but not public:" $bad
    fail=1
fi
missing=$(comm -23 "$BUILD/api.txt" "$BUILD/exported.txt")
if [ -n "$missing" ]; then
    echo "declared POOL_DEF but not exported:" $missing
    fail=1
fi
echo "implementation exports $(wc -l <"$BUILD/exported.txt") symbols; pool.h declares $(wc -l <"$BUILD/api.txt") public functions"

# shellcheck disable=SC2086
if ! $CC $CFLAGS -I. -c -o "$BUILD/static.o" "$BUILD/static.c"; then
    echo "the POOL_STATIC implementation TU does not compile"
    exit 1
fi
exported=$($NM -g --defined-only "$BUILD/static.o" | awk 'NF >= 3 { print $3 }')
if [ -n "$exported" ]; then
    echo "POOL_STATIC exports:" $exported
    fail=1
else
    echo "POOL_STATIC implementation exports nothing"
fi

[ "$fail" -eq 0 ] && echo "symbols: ok" || echo "symbols: FAILED"
exit $fail
