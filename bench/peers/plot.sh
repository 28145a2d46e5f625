#!/bin/sh
# bench/peers/plot.sh DIR - draws DIR/ratios.png and DIR/ratios.svg from DIR/latest.csv and
# DIR/latest-meta.txt (written by bench/peers/run.sh, which calls this): for every metric, one bar
# per peer, the height pool.h's result divided by that peer's, on a log scale around 1 (every
# metric is lower-is-better, so a bar below the line is a workload where pool.h does better).
# A ratio that cannot be drawn (the peer measured 0) is left out and named under the chart.
# pool.h-spin (pool.h with an idle spin budget, see run.sh) is not a peer and gets no bar: the
# chart is pool.h's default against the other runtimes; RESULTS.md's table has pool.h-spin.
dir=${1:-bench/results}
csv=$dir/latest.csv
meta=$dir/latest-meta.txt
[ -s "$csv" ] || { echo "plot.sh: no $csv" >&2; exit 1; }
command -v gnuplot >/dev/null 2>&1 || { echo "plot.sh: gnuplot is not installed" >&2; exit 1; }

dat=$dir/ratios.tmp   # .gitignore keeps bench/results/*.tmp out of git
gp=$dir/ratios.gp.tmp

# ratios.tmp: a header (metric, then each peer), then one row per metric: log10(pool.h / peer),
# or "?" where there is none. Also prints "lo hi skipped" on stdout.
range=$(awk -F, -v dat="$dat" '
    function short(m) {
        if (m == "wake_median") return "7 wake median"
        if (m == "wake_p99") return "7 wake p99"
        if (m == "wake_cpu") return "7 CPU while waking"
        if (m == "idle") return "8 idle CPU"
        n = split("fib nqueens utree quicksort sum submit", w, " ")
        for (i = 1; i <= n; i++) if (w[i] == m) return i " " m
        return m
    }
    NR == 1 {
        for (i = 4; i <= NF && $i != "best_peer"; i++) {
            if ($i == "pool.h") pc = i
            else if ($i !~ /^pool\.h/) peer[++np] = i
        }
        printf "metric" > dat
        for (j = 1; j <= np; j++) printf "\t%s", $peer[j] >> dat
        printf "\n" >> dat
        lo = 0; hi = 0; skipped = ""
        next
    }
    {
        printf "\"%s\"", short($1) >> dat
        for (j = 1; j <= np; j++) {
            p = $pc; q = $peer[j]
            if (p != "" && q != "" && p > 0 && q > 0) {
                v = log(p / q) / log(10)
                if (v < lo) lo = v
                if (v > hi) hi = v
                printf "\t%.5f", v >> dat
            } else {
                printf "\t?" >> dat
                skipped = skipped " " $1 "/" $peer[j]
            }
        }
        printf "\n" >> dat
    }
    END { printf "%s %s %s\n", lo, hi, skipped }' "$csv")
lo=$(echo "$range" | cut -d' ' -f1)
hi=$(echo "$range" | cut -d' ' -f2)
skipped=$(echo "$range" | cut -d' ' -f3-)
npeers=$(head -n 1 "$dat" | awk -F'\t' '{ print NF - 1 }')

get() { sed -n "s/^$1: //p" "$meta" 2>/dev/null | head -n 1; }
title="pool.h's result divided by each peer's, $(get threads) threads: below 1, pool.h does better"
subtitle="$(get date), $(get cpu) ($(get cpus) CPUs), median of $(get reps) runs; lower is better in every workload"
[ "$(get quick)" = 1 ] && subtitle="$subtitle; QUICK=1: tiny sizes, meaningless"
[ -n "$(get sizes)" ] && [ "$(get sizes)" != default ] && subtitle="$subtitle; sizes: $(get sizes)"
[ -n "$skipped" ] && subtitle="$subtitle; not drawn (peer measured 0):$skipped"

# y axis: log10 of the ratio, labelled with the ratio; a little room above and below.
tics=$(awk -v lo="$lo" -v hi="$hi" 'BEGIN {
    n = split("0.001 0.003 0.01 0.03 0.1 0.3 1 3 10 30 100 300 1000", t, " ")
    s = ""
    for (i = 1; i <= n; i++) {
        v = log(t[i]) / log(10)
        if (v >= lo - 0.6 && v <= hi + 0.6) s = s (s == "" ? "" : ", ") "\"" t[i] "\" " v
    }
    print s
}')
ymin=$(awk -v v="$lo" 'BEGIN { printf "%.3f", (v < -0.2 ? v : -0.2) - 0.15 }')
ymax=$(awk -v v="$hi" 'BEGIN { printf "%.3f", (v > 0.2 ? v : 0.2) + 0.15 }')

cat >"$gp" <<EOF
set datafile separator "\t"
set datafile missing "?"
set title "$title\n{/*0.8 $subtitle}"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set yrange [$ymin:$ymax]
set ytics ($tics)
set grid ytics lc rgb "#dddddd"
set ylabel "pool.h / peer (log scale)"
set xtics rotate by 25 right nomirror
set key outside right top
set arrow from graph 0, first 0 to graph 1, first 0 nohead lw 2 lc rgb "black"
set bmargin 6
plot for [i=2:$((npeers + 1))] "$dat" using i:xtic(1) title columnheader(i)
EOF

gnuplot -e "set terminal pngcairo size 1280,720 font 'sans,11'; set output '$dir/ratios.png'" "$gp" &&
gnuplot -e "set terminal svg size 1280,720 font 'sans,11' background rgb 'white'; set output '$dir/ratios.svg'" "$gp"
rc=$?
rm -f "$dat" "$gp"
exit $rc
