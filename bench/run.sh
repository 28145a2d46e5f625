#!/bin/sh
# bench/run.sh -- build every pool.h benchmark and run them one after another.
# `make bench` calls this. Needs only a C compiler; run it from anywhere.
#
#   CC            compiler (default: cc)
#   BENCH_CFLAGS  extra flags appended after -O2 -pthread (for example -march=native)
#   BENCH_QUICK=1 tiny sizes: a smoke test of every benchmark, numbers meaningless
#   BUILD         where the binaries go (default: build/bench)
#
# Each benchmark verifies its own result and exits non-zero on a mismatch; this script runs all
# of them regardless and exits non-zero if any failed.

cd "$(dirname "$0")/.." || exit 1

CC=${CC:-cc}
OUT=${BUILD:-build/bench}   # `make bench` passes BUILD=build/bench
BENCHES="fib spread call_tree wake idle nqueens utree quicksort qsort sum submit trickle blocking wait_busy cancel priority resize completion pinned stack"
mkdir -p "$OUT" || exit 1
case $OUT in /*) ;; *) OUT=./$OUT ;; esac   # so that "$OUT/fib" runs the file, not a PATH search

for b in $BENCHES; do
    # shellcheck disable=SC2086  # BENCH_CFLAGS is a list of words on purpose
    if ! $CC -O2 -pthread ${BENCH_CFLAGS:-} -o "$OUT/$b" "bench/$b.c"; then
        echo "bench/run.sh: building bench/$b.c failed" >&2
        exit 1
    fi
done

cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
ncpu=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null)
rev=$(git rev-parse --short HEAD 2>/dev/null)

echo "pool.h benchmarks"
echo "  date      $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "  machine   $(uname -srm)"
echo "  cpu       ${cpu:-unknown}, ${ncpu:-?} CPUs usable"
echo "  compiler  $($CC --version 2>/dev/null | head -n 1)"
echo "  flags     -O2 -pthread ${BENCH_CFLAGS:-}"
echo "  load      $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null) (1/5/15-min load average; anything else running skews the numbers)"
echo "  commit    ${rev:-none}$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' (with uncommitted changes)')"
[ -n "${BENCH_QUICK:-}" ] && echo "  BENCH_QUICK=$BENCH_QUICK: smoke-test sizes, the numbers mean nothing"

failed=""
for b in $BENCHES; do
    echo
    echo "== $b =================================================================="
    start=$(date +%s)
    "$OUT/$b"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "!! $b FAILED with exit status $rc"
        failed="$failed $b"
    fi
    echo "   ($b took $(( $(date +%s) - start )) s)"
done

# The eight workloads of issue 5 on pool.h alone, as one table (`make bench-peers` runs the same
# programs on pool.h and four other runtimes side by side). Needs only the C compiler.
echo
echo "== issue 5's eight workloads, pool.h alone (bench/peers/run.sh) ========================"
start=$(date +%s)
log=$OUT/peers.log
RUNTIMES=pool.h QUICK=${BENCH_QUICK:-} REPS=${BENCH_QUICK:+1} BUILD=$OUT sh bench/peers/run.sh 2>&1 |
    tee "$log"
# Its last line counts its program runs ("N passed, N failed"); anything else is a failure.
counts=$(tail -n 1 "$log" | sed -n 's/^\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p')
[ -n "$counts" ] || counts="0 1"
peers_passed=${counts% *}
peers_failed=${counts#* }
echo "   (took $(( $(date +%s) - start )) s)"

# Each benchmark above counts as one check, each of the peers' program runs as one.
bench_failed=$(echo "$failed" | wc -w)
npassed=$(( $(echo "$BENCHES" | wc -w) - bench_failed + peers_passed ))
nfailed=$((bench_failed + peers_failed))
[ "$peers_failed" -ne 0 ] && failed="$failed peers"
echo
if [ -n "$failed" ]; then
    echo "FAILED:$failed"
else
    echo "all benchmarks passed their checks"
fi
echo "$npassed passed, $nfailed failed"
[ -z "$failed" ]
