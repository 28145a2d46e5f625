#!/bin/sh
# bench/peers/results_md.sh [DIR] - writes bench/RESULTS.md from one run of `make bench-peers`:
# DIR/latest.csv (the table), DIR/latest-meta.txt (what the run was: date, CPU, versions, the
# runtimes' settings) and DIR/ratios.svg (the chart), DIR being bench/results by default.
# `make bench-results` runs it. Every number in RESULTS.md comes from those files; the
# hand-written part is bench/peers/notes.md, copied in as it is (it must not quote numbers, only
# point at the table). Rerun the benchmark and this script to change RESULTS.md; do not edit it.
cd "$(dirname "$0")/../.." || exit 1
dir=${1:-bench/results}
csv=$dir/latest.csv
meta=$dir/latest-meta.txt
md=bench/RESULTS.md
for f in "$csv" "$meta"; do
    [ -s "$f" ] || { echo "results_md.sh: no $f: run make bench-peers first" >&2; exit 1; }
done
if [ "$(sed -n 's/^quick: //p' "$meta")" = 1 ] ||
   [ "$(sed -n 's/^sizes: //p' "$meta")" != default ]; then
    echo "results_md.sh: $dir is not a run at the issue's sizes (QUICK or SIZES was set)" >&2
    exit 1
fi
get() { sed -n "s/^$1: //p" "$meta" | head -n 1; }
# The table's runtimes (the CSV's columns from the 4th up to best_peer): the peers, that is all
# but pool.h and pool.h-spin (pool.h with another setting), as "a, b and c" for the text ...
peers=$(head -n 1 "$csv" | awk -F, '{
    for (i = 4; i <= NF && $i != "best_peer"; i++) if ($i !~ /^pool\.h/) p[++n] = $i
    for (i = 1; i <= n; i++) s = s (i == 1 ? "" : (i == n ? " and " : ", ")) p[i]
    print s
}')
# ... and whether pool.h-spin is one of them.
spin=$(head -n 1 "$csv" | awk -F, '{
    for (i = 4; i <= NF && $i != "best_peer"; i++) if ($i == "pool.h-spin") print 1
}')
# The chart's path relative to bench/, where RESULTS.md is.
case $dir in
bench/*) chart=${dir#bench/}/ratios.svg ;;
/*) chart=$dir/ratios.svg ;;
*) chart=../$dir/ratios.svg ;;
esac

{
    echo "# pool.h against other runtimes"
    echo
    echo "Written by \`bench/peers/results_md.sh\` from one run of \`make bench-peers\`"
    echo "(\`bench/peers/run.sh\`): the table is \`$csv\`, every single measurement"
    echo "\`$dir/latest-runs.csv\`, the run's description \`$meta\`. Nothing here is typed by"
    echo "hand except the notes at the end; to update it, run \`make bench-peers\` and"
    echo "\`make bench-results\` on a quiet machine."
    echo
    echo "## The run"
    echo
    echo "- date: $(get date)"
    echo "- CPU: $(get cpu), $(get cpus) CPUs; $(get os)"
    echo "- threads per runtime: $(get threads); repetitions: $(get reps) (each a fresh process that does one warm-up run, then up to 10 timed runs, and reports their median; the table shows the median over the repetitions)"
    echo "- pool.h commit: $(get commit)"
    echo "- load average (1, 5, 15 min) before: $(get 'load before'); after: $(get 'load after')"
    echo "- compiler flags: $(get flags)"
    for rt in $(get runtimes); do
        echo "- $rt: $(get "$rt")"
    done
    # run.sh unsets every knob it knows and sets one itself, for pool.h-spin (recorded in the
    # meta as "knobs set for the run"; older runs have no such line).
    set_knobs=$(get 'knobs set for the run')
    echo "- runtime settings: every runtime with its defaults ($(get 'knobs unset for the run' | sed 's/^ *//'))${set_knobs:+, except $set_knobs}."
    for rt in gnu-omp llvm-omp; do
        v=$(get "$rt defaults")
        [ -n "$v" ] && echo "  $rt reports: \`$v\`"
    done
    echo
    echo "## Results"
    echo
    echo "Median of each metric; every metric is lower-is-better, the best in bold. *pool.h / best* is pool.h's"
    echo "result divided by the best peer's, the best of $peers: below 1, pool.h is ahead of all of them."
    if [ -n "$spin" ]; then
        echo "*pool.h-spin* is not a peer but pool.h again: $(get 'pool.h-spin'), an idle spin"
        echo "budget (how long an idle worker keeps looking for work before it sleeps; the pool.h"
        echo "column runs with pool.h's default). Its column shows what the spin buys in wake latency"
        echo "(7) and what it costs in CPU while waking and while idle (7, 8). It is never taken as"
        echo "the best peer; *pool.h-spin / best* is its result divided by the same best peer's."
    fi
    echo
    awk -F, "$(cat bench/peers/fmt.awk)"'
        # sr: the column spin_ratio (pool.h-spin / best peer), when the run had pool.h-spin.
        NR == 1 {
            for (i = 4; i <= NF && $i != "best_peer"; i++) { last = i; if ($i == "pool.h-spin") hs = 1 }
            for (i = last + 1; i <= NF; i++) if ($i == "spin_ratio" && hs) sr = i
            printf "| workload | unit |"
            for (i = 4; i <= last; i++) printf " %s |", $i
            printf " best peer | pool.h / best |"
            print sr ? " pool.h-spin / best |" : ""
            printf "|---|---|"
            for (i = 4; i <= last; i++) printf "---:|"
            printf "---|---:|"
            print sr ? "---:|" : ""
            next
        }
        {
            best = ""
            for (i = 4; i <= last; i++) if ($i != "" && (best == "" || $i + 0 < best + 0)) best = $i
            printf "| %s | %s |", $2, $3
            for (i = 4; i <= last; i++) printf " %s |", ($i != "" && $i == best) ? "**" fmt($i) "**" : fmt($i)
            r = $(last + 3)
            printf " %s | %s |", $(last + 1), r == "" ? "-" : (r == "inf" ? "inf" : sprintf("%.2f", r))
            if (sr) printf " %s |", $sr == "" ? "-" : ($sr == "inf" ? "inf" : sprintf("%.2f", $sr))
            printf "\n"
        }' "$csv"
    awk -F, "$(cat bench/peers/fmt.awk)"'
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == "os_floor") c = i; next }
        c && $1 == "wake_median" { med = $c }
        c && $1 == "wake_p99" { p99 = $c }
        c && $1 == "idle" { idle = $c }
        END {
            if (med != "")
                printf "\nFor reference (*os-floor*): the same wake rounds handed to a plain thread blocked on a pthread condition variable, the floor for waking a thread that sleeps on this machine: median %s us, p99 %s us.", fmt(med), fmt(p99)
            if (idle != "")
                printf " The idle measurement in a process that never started a thread: %s ms/s.", fmt(idle)
            if (med != "" || idle != "") printf "\n"
        }' "$csv"
    echo
    if [ -s "$dir/ratios.svg" ]; then
        echo "![pool.h's result divided by each peer's, per workload]($chart)"
        echo
        echo "Each bar is pool.h's result divided by one peer's, on a log scale: below the line,"
        echo "pool.h does better than that peer."
        [ -n "$spin" ] && echo "pool.h-spin has no bars: it is pool.h with another setting, not a peer."
        echo
    fi
    echo "## Issue 5's targets for pool.h"
    echo
    echo "| workload | target | verdict |"
    echo "|---|---|---|"
    awk -F, '
        NR == 1 { for (i = 4; i <= NF; i++) if ($i == "target") t = i; next }
        $t != "" { printf "| %s | %s | %s |\n", $2, $t == "fastest" ? "fastest of all runtimes" : $t, $(t + 1) }' "$csv"
    echo
    echo "## The workloads"
    echo
    echo "Each runtime runs the same algorithm with the same parameters and reports the same"
    echo "checksum; \`bench/peers/run.sh\` fails the run if any two differ. The exact definitions"
    echo "are in \`bench/peers/workloads.h\` (the Rust program repeats them); each runtime's"
    echo "idiom is described at the top of its program: \`pool_h.c\`, \`omp.c\` (built by gcc"
    echo "for GNU OpenMP and by clang for LLVM OpenMP), \`tbb.cpp\`, \`rayon/src/main.rs\`."
    echo
    echo "1. fib: naive recursion, both calls forked at every level, no cutoff."
    echo "2. nqueens: one task per legal column at every row, waiting for all of them."
    echo "3. unbalanced tree: generated from a hash of the node id, a child range halved by the join."
    echo "4. quicksort of xorshift32 numbers, forking both halves, insertion sort below 32."
    echo "5. sum with the runtime's parallel loop."
    echo "6. tiny independent tasks created one by one by the main thread, then one wait for all."
    echo "   In OpenMP the main thread is the \`master\` thread of a parallel region, whose other"
    echo "   threads wait for tasks at the region's closing barrier; in oneTBB it is one of the"
    echo "   arena's threads and helps in \`task_group::wait\`; in pool.h and Rayon it is outside"
    echo "   the pool and blocks in the wait."
    echo "7. wake: 2 ms of sleep, then one task submitted from the main thread; the time until it"
    echo "   starts (median and p99 of 2000 rounds), and the CPU time the other threads burn per"
    echo "   second meanwhile."
    echo "8. idle: the CPU time of the whole process in the first second after a 300 ms burst."
    # The scaling run of bench/peers/scaling.sh, when there is one: its tables as it printed them.
    scaling=$dir/scaling-16core.txt
    if [ -s "$scaling" ]; then
        echo
        echo "## Scaling: 1 to 16 threads"
        echo
        echo "From \`bench/peers/scaling.sh\` (its own run, not the one above; \`$scaling\` has the"
        echo "whole output): fib, the unbalanced tree and the sum on pool.h, oneTBB and Rayon, built"
        echo "on the development machine and run on a borrowed machine with more cores."
        echo
        sed -n 's/^# \(date\|cpu\|nproc\|commit\|reps\): \(.*\)/- \1: \2/p' "$scaling"
        echo
        sed -n '/^### /,$p' "$scaling" | sed 's/^### /### /'
    fi
    if [ -s bench/peers/notes.md ]; then
        echo
        echo "## Notes"
        echo
        cat bench/peers/notes.md
    fi
} >"$md"
echo "wrote $md"
