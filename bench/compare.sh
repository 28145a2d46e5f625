#!/bin/sh
# bench/compare.sh REV [RUNS] -- `make bench`'s programs built from commit REV and from the working
# tree, run alternately (old, new, old, new, ...) RUNS times each (default 9). For every figure a
# benchmark reports as its median (per workload and thread count), prints the median of those
# figures over the runs, old and new, and the ratio new/old. Interleaving keeps the machine's drift
# out of the ratio; each program already takes its own medians inside a run.
#
#   sh bench/compare.sh 62f117b          # the working tree against 62f117b, 9 runs each
#   BENCHES="fib nqueens" sh bench/compare.sh HEAD 15
#   SAME_BENCH=1 sh bench/compare.sh 62f117b   # both built from the working tree's bench/ sources
#
# SAME_BENCH=1 measures only pool.h's change: REV's pool.h is built with today's benchmark programs
# (one that does not compile against it runs new only), so a change of method in a benchmark
# applies to both.
#
# Needs git, a C compiler and awk. Builds under build/compare/.
cd "$(dirname "$0")/.." || exit 1
REV=${1:?usage: sh bench/compare.sh REV [RUNS]}
RUNS=${2:-9}
CC=${CC:-cc}
# `make bench`'s list, from bench/run.sh; a program that REV lacks runs new only.
BENCHES=${BENCHES:-$(sed -n 's/^BENCHES="\(.*\)"$/\1/p' bench/run.sh)}
OUT=build/compare
rm -rf "$OUT" && mkdir -p "$OUT/old" "$OUT/bin" || exit 1
git archive "$REV" pool.h bench | tar -x -C "$OUT/old" || exit 1
if [ "${SAME_BENCH:-0}" = 1 ]; then
    rm -rf "$OUT/old/bench" && cp -R bench "$OUT/old/bench" || exit 1
fi
for b in $BENCHES; do
    $CC -O2 -pthread -o "$OUT/bin/$b.new" "bench/$b.c" || exit 1
    if [ "${SAME_BENCH:-0}" = 1 ]; then # today's program may use what REV's pool.h lacks
        $CC -O2 -pthread -o "$OUT/bin/$b.old" "$OUT/old/bench/$b.c" 2>/dev/null ||
            echo "bench/compare.sh: $b does not build against $REV's pool.h: new only" >&2
    elif [ -f "$OUT/old/bench/$b.c" ]; then
        $CC -O2 -pthread -o "$OUT/bin/$b.old" "$OUT/old/bench/$b.c" || exit 1
    fi
done

# Each benchmark's median figures as "name<TAB>value" lines.
extract() {
    awk -v bench="$1" '
    function num_after(s, word,    i, rest) {
        i = index(s, word)
        if (!i) return ""
        rest = substr(s, i + length(word))
        if (match(rest, /[0-9]+(\.[0-9]+)?/)) return substr(rest, RSTART, RLENGTH)
        return ""
    }
    function label(s) { sub(/  .*/, "", s); return s }
    function first_num(s) { sub(/^[^ ]([^ ]| [^ ])*  +/, "", s); split(s, f, " "); return f[1] }
    bench == "fib" && /^pool_join, [0-9]+ thread/ { print bench ": " label($0) " (wall ms)\t" first_num($0) }
    bench == "call_tree" && /^pool_call \+ pool_join walk/ { print bench ": " label($0) " (ns)\t" first_num($0) }
    bench == "wake" && /^submit -> / { split(substr($0, 30), f, " "); print bench ": " label($0) " (us)\t" f[2] }
    bench == "idle" && /^[0-9]+ threads \(/ { v = $0; sub(/^[^)]*\)/, "", v); split(v, f, " ")
        print bench ": " $1 " threads, 1st idle second (us/s)\t" f[1] }
    bench == "trickle" && /^  wakeups/ && !seen++ { print bench ": worker CPU per task (us)\t" num_after($0, "worker CPU") }
    bench == "trickle" && /^burst/ { n++; v = num_after($0, "done in"); print bench ": burst " n " (ms)\t" v }
    bench == "blocking" && /^pool\.h blocking/ { print bench ": " label($0) " round trip (us)\t" num_after($0, "round trip median") }
    bench == "sum" && /^tiny loop/ { print bench ": tiny loop parallel_for (ns)\t" num_after($0, "parallel_for") }
    bench == "wait_busy" && /^(call|blocking|spin) / { print bench ": waiting by " $1 " (CPUs busy)\t" $2 }
    bench == "stack" && /^pool_join, taken back/ { print bench ": pool_join level (bytes)\t" num_after($0, "back") }
    bench ~ /^(nqueens|utree|quicksort|sum|submit)$/ && / median / && !/^(plain|direct)/ {
        print bench ": " label($0) " (ms)\t" num_after($0, " median ") }
    '
}

i=0
while [ "$i" -lt "$RUNS" ]; do
    i=$((i + 1))
    for b in $BENCHES; do
        for v in old new; do
            [ -x "$OUT/bin/$b.$v" ] || continue
            "$OUT/bin/$b.$v" >"$OUT/run.txt" 2>&1 || echo "bench/compare.sh: $b ($v) failed in run $i" >&2
            extract "$b" <"$OUT/run.txt" | sed "s/^/$v	/" >>"$OUT/figures.tsv"
        done
    done
    echo "run $i of $RUNS done" >&2
done

echo "bench/compare.sh: $RUNS interleaved runs each; old = $REV ($(git rev-parse --short "$REV"))$([ "${SAME_BENCH:-0}" = 1 ] && echo "'s pool.h with today's bench/"), new = working tree ($(git rev-parse --short HEAD)$(git status --porcelain --untracked-files=no | grep -q . && echo ' + changes'))"
echo "cpu: $(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1), $(nproc 2>/dev/null) CPUs; $($CC --version | head -n 1)"
awk -F'\t' '
function median(list,    c, a, i, j, t) {
    c = split(list, a, " ")
    for (i = 2; i <= c; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
}
{ if (!($2 in order)) { order[$2] = ++names; name[names] = $2 } vals[$1, $2] = vals[$1, $2] " " $3 }
END {
    printf "%-62s %12s %12s %8s\n", "figure (median over runs)", "old", "new", "new/old"
    for (k = 1; k <= names; k++) {
        o = median(vals["old", name[k]]); nw = median(vals["new", name[k]])
        if (vals["old", name[k]] == "") printf "%-62s %12s %12.3f %8s\n", name[k], "-", nw, "-"
        else printf "%-62s %12.3f %12.3f %8.3f\n", name[k], o, nw, (o > 0 ? nw / o : 0)
    }
}' "$OUT/figures.tsv"
