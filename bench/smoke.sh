#!/bin/sh
# bench/smoke.sh - builds every benchmark program and runs each once at tiny sizes, warnings as
# errors: a smoke test (CI runs it as `make bench-smoke`). The numbers mean nothing; every
# program still checks its results.
#
#   1. bench/run.sh with BENCH_QUICK=1: every bench/*.c, and issue 5's workloads on pool.h
#      (bench/peers/pool_h.c). Needs only a C compiler. Then bench/cpp.sh -q (the C++
#      interface, where a C++ compiler is installed), and bench/peers/dag.sh at tiny sizes
#      (pool.h's graphs; oneTBB's flow graph beside them where it is installed).
#   2. bench/peers/run.sh with QUICK=1: the same workloads on every runtime, pool.h, pool.h-spin
#      (pool.h with an idle spin budget), GNU and LLVM OpenMP, oneTBB and Rayon, checksums
#      compared. Only when PEERS says so:
#        PEERS=1     always (fails if the peers' packages are missing)
#        PEERS=0     never
#        PEERS=auto  (default) if `bench/peers/install.sh --check` finds every package installed
#   3. bench/peers/scaling.sh: its bundle built and run through its own loader at tiny sizes, 1
#      and 2 threads (one more pass, or one failure, by its exit status). Only with the peers.
#
# The last line is the sum of both parts' "N passed, N failed" (a part that ends without one
# counts as one failure).
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
PEERS=${PEERS:-auto}
WERROR=1
export WERROR

passed=0
failed=0
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT

# Adds the last line of $log, if it is "N passed, N failed", to the totals.
count() {
    c=$(tail -n 1 "$log" | sed -n 's/^\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p')
    [ -n "$c" ] || c="0 1"
    passed=$((passed + ${c% *}))
    failed=$((failed + ${c#* }))
}

echo "=== bench/run.sh, BENCH_QUICK=1"
BENCH_QUICK=1 BENCH_CFLAGS="-Wall -Wextra -Werror" BUILD=$BUILD/bench-smoke sh bench/run.sh 2>&1 |
    tee "$log"
count

echo
echo "=== bench/cpp.sh -q (pool.h's C++ interface; skipped without a C++ compiler)"
if command -v "${CXX:-g++}" >/dev/null 2>&1; then
    if BUILD=$BUILD/bench-smoke sh bench/cpp.sh -q -r 1 1 2; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
else
    echo "skipped: no ${CXX:-g++}"
fi

echo
echo "=== bench/peers/dag.sh, QUICK=1 (oneTBB's side only where it is installed)"
QUICK=1 BUILD=$BUILD/bench-smoke sh bench/peers/dag.sh 2>&1 | tee "$log"
count

if [ "$PEERS" = auto ]; then
    if sh bench/peers/install.sh --check; then
        PEERS=1
    else
        echo "=== bench/peers skipped: their packages are not all installed (bench/peers/install.sh)"
        PEERS=0
    fi
fi
if [ "$PEERS" != 0 ]; then
    echo
    echo "=== bench/peers/run.sh, QUICK=1"
    QUICK=1 BUILD=$BUILD/bench-smoke sh bench/peers/run.sh 2>&1 | tee "$log"
    count
    echo
    echo "=== bench/peers/scaling.sh, tiny sizes"
    bundle=$BUILD/bench-smoke/scaling
    if BUNDLE=$bundle sh bench/peers/scaling.sh build &&
       BUNDLE=$bundle THREADS="1 2" REPS=1 BUDGET_S=120 SIZES="fib=20 utree=16 sum=100000" \
           sh bench/peers/scaling.sh run; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
fi

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
