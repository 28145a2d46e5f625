#!/bin/sh
# bench/peers/dag.sh - the task-graph benchmark: bench/peers/dag.h's 1000-node layered DAG (3600
# edges) run RUNS times per repetition on pool.h's graphs (dag_pool.c) and on oneTBB's flow graph
# (dag_tbb.cpp), the two programs alternating ROUNDS times in one run, so that the machine's
# drift hits both. `make bench-graph` installs the packages (bench/peers/install.sh) and calls it.
#
#   THREADS=2  RUNS=10000  REPS=3  ROUNDS=5   (QUICK=1: RUNS=200 REPS=1 ROUNDS=1, a smoke test)
#   BUILD=build   the programs go to $BUILD/peers
#
# Each program checks every run's checksum against dag.h's and prints the median time per run
# over its REPS repetitions; this prints, per runtime, the median over the ROUNDS of those
# medians, the time per edge, and pool.h's ratio to oneTBB. oneTBB missing: pool.h alone, said
# so. Last line: "N passed, N failed" over the program runs.
cd "$(dirname "$0")/../.." || exit 1
THREADS=${THREADS:-2}
if [ -n "${QUICK:-}" ] && [ "$QUICK" != 0 ]; then
    RUNS=200 REPS=1 ROUNDS=1
fi
RUNS=${RUNS:-10000}
REPS=${REPS:-3}
ROUNDS=${ROUNDS:-5}
B=${BUILD:-build}/peers
mkdir -p "$B" || exit 1
FLAGS="-O2 -Wall -Wextra"
[ "${WERROR:-0}" = 1 ] && FLAGS="$FLAGS -Werror"

passed=0
failed=0
# shellcheck disable=SC2086  # FLAGS is a list of words on purpose
${CC:-cc} $FLAGS -pthread bench/peers/dag_pool.c -o "$B/dag-pool-bench" || {
    echo "dag.sh: building dag_pool.c failed"
    echo "0 passed, 1 failed"
    exit 1
}
runtimes=pool
# shellcheck disable=SC2086
if ${CXX:-g++} $FLAGS bench/peers/dag_tbb.cpp -o "$B/dag-tbb-bench" -ltbb 2>"$B/dag-tbb.log"; then
    runtimes="pool tbb"
else
    echo "dag.sh: oneTBB skipped: dag_tbb.cpp does not build here (bench/peers/install.sh" \
        "installs libtbb-dev; see $B/dag-tbb.log)"
fi

results=$B/dag-results.txt
: >"$results"
round=1
while [ "$round" -le "$ROUNDS" ]; do
    for rt in $runtimes; do
        if out=$("$B/dag-$rt-bench" "$THREADS" "$RUNS" "$REPS"); then
            passed=$((passed + 1))
            echo "$out" | sed -n "s/^\(${rt}_ns_per_run\|serial_ns_per_run\) /$rt \1 /p" >>"$results"
        else
            echo "dag.sh: $rt failed in round $round"
            failed=$((failed + 1))
        fi
    done
    round=$((round + 1))
done

# The median of the values of lines "$1 $2 value".
median() {
    awk -v rt="$1" -v key="$2" '$1 == rt && $2 == key { print $3 }' "$results" | sort -n |
        awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "task graph: $THREADS threads, $RUNS runs x $REPS repetitions per program, $ROUNDS rounds" \
    "alternating; ${cpu:-unknown CPU}"
serial=$(median pool serial_ns_per_run)
for rt in $runtimes; do
    m=$(median "$rt" "${rt}_ns_per_run")
    [ -n "$m" ] || continue
    awk -v rt="$rt" -v m="$m" -v s="$serial" 'BEGIN {
        printf "%-6s %10.1f us per run  %7.2f ns per edge  %6.1fx serial\n", rt, m / 1000, m / 3600, m / s }'
done
if [ -n "$serial" ]; then
    awk -v s="$serial" 'BEGIN { printf "serial %10.1f us per run\n", s / 1000 }'
fi
pool=$(median pool pool_ns_per_run)
tbb=$(median tbb tbb_ns_per_run)
if [ -n "$pool" ] && [ -n "$tbb" ]; then
    awk -v p="$pool" -v t="$tbb" 'BEGIN { printf "pool.h / oneTBB: %.2f (target: below 1)\n", p / t }'
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
