#!/bin/sh
# bench/stats_cost.sh -- what the workers' statistics counters cost on the fork-join hot path.
#
# Builds bench/fib.c twice, as is and with -DPOOL_NO_STATS (which compiles the counters out), and
# runs the two binaries alternately ROUNDS times (each invocation: the median of its own 9
# interleaved runs against plain recursion). Prints, per thread count, the median over the rounds
# of each build's time and the ratio with/without. `make bench-stats` calls this.
#
#   CC      compiler (default: cc)
#   ROUNDS  alternations (default: 5)
#   N       fib(N) (default: 30)
cd "$(dirname "$0")/.." || exit 1
CC=${CC:-cc}
ROUNDS=${ROUNDS:-5}
N=${N:-30}
OUT=${BUILD:-build/bench}
mkdir -p "$OUT" || exit 1
case $OUT in /*) ;; *) OUT=./$OUT ;; esac
$CC -O2 -pthread -o "$OUT/fib_stats" bench/fib.c || exit 1
$CC -O2 -pthread -DPOOL_NO_STATS -o "$OUT/fib_nostats" bench/fib.c || exit 1

log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
round=1
while [ "$round" -le "$ROUNDS" ]; do
    for variant in stats nostats; do
        # "pool_join, 1 thread   <wall ms> ..." -> "variant threads wall_ms"
        "$OUT/fib_$variant" -n "$N" 1 2 | awk -v v="$variant" \
            '/^pool_join,/ { print v, $2, $4 }' >>"$log" || exit 1
    done
    round=$((round + 1))
done

echo "fib($N), pool_join at every call; median over $ROUNDS alternating rounds of each build's"
echo "median of 9 runs. $(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1), $(nproc 2>/dev/null) CPUs"
printf '%-10s %16s %16s %10s\n' threads "counters (ms)" "POOL_NO_STATS" ratio
for t in 1 2; do
    with=$(awk -v t="$t" '$1 == "stats" && $2 == t { print $3 }' "$log" | sort -n |
        awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    without=$(awk -v t="$t" '$1 == "nostats" && $2 == t { print $3 }' "$log" | sort -n |
        awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    printf '%-10s %16s %16s %10s\n' "$t" "$with" "$without" \
        "$(awk -v a="$with" -v b="$without" 'BEGIN { printf "%.3f", a / b }')"
done
