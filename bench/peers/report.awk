# bench/peers/report.awk - the table of a bench/peers/run.sh run.
#
#   awk -v runtimes="pool.h gnu-omp ..." -v out=DIR -f bench/peers/fmt.awk -f bench/peers/report.awk RUNS
#
# RUNS has one line per metric per program run: "rep=R metric=M runtime=X ... value=V unit=U
# checksum=C". Prints the table (median over the repetitions of each metric on each runtime,
# pool.h's ratio to the best peer, and the issue's targets for pool.h), writes DIR/latest.csv
# (the table) and DIR/latest-runs.csv (every value), and exits 1 if two runs of one workload
# disagree on its checksum or a runtime has no value for a metric.
#
# The wake rows also get, in the CSV's last column os_floor, the median of the same metric
# measured on a plain thread blocked on a condition variable (runtime "os-floor", metrics
# floor_*), and the idle row the CPU time of the same sleep in a process that never started a
# thread (floor_idle); the table prints them as a note.
#
# Every metric is lower-is-better, so ratio = pool.h / best peer: below 1, pool.h is faster.
#
# pool.h-spin (the pool.h program with an idle spin budget, see run.sh) is pool.h with another
# setting, not a peer: it is never the best peer, and ratio stays pool.h's. Its own ratio to the
# same best peer goes into the CSV's column spin_ratio (after os_floor, so that the columns
# before it keep their places; empty without pool.h-spin), and into the printed table.

# The median of vals[key, 1..n] (upper median for even n, as the programs take theirs).
function median(key, n,    i, j, t, a) {
    for (i = 1; i <= n; i++) a[i] = vals[key, i] + 0
    for (i = 2; i <= n; i++) {
        t = a[i]
        for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
        a[j + 1] = t
    }
    return a[int(n / 2) + 1]
}

# The table's name for metric m (no commas: it goes into a CSV field).
function label(m, size) {
    if (m == "fib") return "1 fib(" size ") join per call"
    if (m == "nqueens") return "2 nqueens(" size ") task per column"
    if (m == "utree") return "3 unbalanced tree depth " size
    if (m == "quicksort") return "4 quicksort of " size " u32"
    if (m == "sum") return "5 sum of " size " u32"
    if (m == "submit") return "6 " size " tasks from main"
    if (m == "wake_median") return "7 wake latency median"
    if (m == "wake_p99") return "7 wake latency p99"
    if (m == "wake_cpu") return "7 CPU of others while waking"
    if (m == "idle") return "8 idle CPU after a burst"
    return m
}

# The issue's target for pool.h on metric m: "fastest" or a bound in the metric's unit.
function target(m) {
    if (m == "wake_median") return 3
    if (m == "wake_p99") return 10
    if (m == "idle") return 0.2
    if (m == "wake_cpu") return ""
    return "fastest"
}

BEGIN {
    nrt = split(runtimes, rt, " ")
    nm = split("fib nqueens utree quicksort sum submit wake_median wake_p99 wake_cpu idle", metrics, " ")
    bad = 0
    print "rep,metric,runtime,threads,size,value,unit,runs,min,checksum" > (out "/latest-runs.csv")
}

{
    delete f
    for (i = 1; i <= NF; i++) {
        eq = index($i, "=")
        f[substr($i, 1, eq - 1)] = substr($i, eq + 1)
    }
    m = f["metric"]; r = f["runtime"]
    k = m SUBSEP r
    vals[k, ++count[k]] = f["value"]
    unit[m] = f["unit"]; size[m] = f["size"]; threads = f["threads"]
    if (!(m in checksum)) {
        checksum[m] = f["checksum"]; checksum_from[m] = r " rep " f["rep"]
    } else if (checksum[m] != f["checksum"]) {
        printf "!! checksum mismatch for %s: %s says %s, %s says %s\n", m, checksum_from[m],
            checksum[m], r " rep " f["rep"], f["checksum"]
        bad = 1
    }
    printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", f["rep"], m, r, f["threads"], f["size"], f["value"],
        f["unit"], f["runs"], f["min"], f["checksum"] >> (out "/latest-runs.csv")
}

END {
    have_pool = 0; npeers = 0
    # pool.h-spin is pool.h with another setting, not a peer.
    for (j = 1; j <= nrt; j++) if (rt[j] == "pool.h") have_pool = 1; else if (rt[j] !~ /^pool\.h/) npeers++
    compare = have_pool && npeers > 0
    have_spin = 0
    for (j = 1; j <= nrt; j++) if (rt[j] == "pool.h-spin") have_spin = 1
    # Printed column widths: 9, or the runtime's name where it is longer (pool.h-spin).
    for (j = 1; j <= nrt; j++) wd[j] = length(rt[j]) > 9 ? length(rt[j]) : 9

    csv = out "/latest.csv"
    printf "metric,label,unit" > csv
    for (j = 1; j <= nrt; j++) printf ",%s", rt[j] >> csv
    print ",best_peer,best_peer_value,ratio,target,verdict,os_floor,spin_ratio" >> csv

    printf "\n%-34s %-5s", "workload (" threads " threads)", "unit"
    for (j = 1; j <= nrt; j++) printf " %" wd[j] "s", rt[j]
    if (compare) printf "  %-9s %7s", "best peer", "pool.h/best"
    if (compare && have_spin) printf " %16s", "pool.h-spin/best"
    printf "\n"

    for (i = 1; i <= nm; i++) {
        m = metrics[i]
        if (!(m in unit)) continue
        best = ""; bestrt = ""; pv = ""; sv = ""
        for (j = 1; j <= nrt; j++) {
            k = m SUBSEP rt[j]
            med[j] = count[k] ? median(k, count[k]) : ""
            if (med[j] == "") {
                printf "!! %s: no value from %s\n", m, rt[j]
                bad = 1
            }
            if (rt[j] == "pool.h") pv = med[j]
            else if (rt[j] == "pool.h-spin") sv = med[j]
            else if (rt[j] !~ /^pool\.h/ && med[j] != "" && (best == "" || med[j] < best)) { best = med[j]; bestrt = rt[j] }
        }
        ratio = ""
        if (compare && pv != "" && best != "")
            ratio = best > 0 ? sprintf("%.3f", pv / best) : (pv > 0 ? "inf" : "1.000")
        sratio = ""
        if (compare && have_spin && sv != "" && best != "")
            sratio = best > 0 ? sprintf("%.3f", sv / best) : (sv > 0 ? "inf" : "1.000")

        t = target(m); verdict = ""
        if (have_pool && pv != "" && t == "fastest" && ratio != "")
            verdict = ratio == "inf" || ratio >= 1 ? sprintf("missed: %s%% slower than %s", \
                ratio == "inf" ? "inf" : sprintf("%.0f", (ratio - 1) * 100), bestrt) : "met"
        else if (have_pool && pv != "" && t != "" && t != "fastest")
            verdict = pv <= t ? "met" : sprintf("missed by %.0f%%", (pv / t - 1) * 100)

        printf "%-34s %-5s", label(m, size[m]), unit[m]
        for (j = 1; j <= nrt; j++) printf " %" wd[j] "s", fmt(med[j])
        if (compare) printf "  %-9s %7s", bestrt, ratio == "" ? "-" : (ratio == "inf" ? "inf" : sprintf("%.2f", ratio))
        if (compare && have_spin) printf " %16s", sratio == "" ? "-" : (sratio == "inf" ? "inf" : sprintf("%.2f", sratio))
        printf "\n"

        printf "%s,%s,%s", m, label(m, size[m]), unit[m] >> csv
        for (j = 1; j <= nrt; j++) printf ",%s", med[j] == "" ? "" : sprintf("%.6g", med[j]) >> csv
        fl = ""
        if (m ~ /^wake_/ || m == "idle") {
            k = (m == "idle" ? "floor_idle" : "floor_" substr(m, 6)) SUBSEP "os-floor"
            if (count[k]) fl = median(k, count[k])
            floor_of[m] = fl
        }
        printf ",%s,%s,%s,%s,%s,%s,%s\n", bestrt, best == "" ? "" : sprintf("%.6g", best), ratio,
            t == "fastest" ? "fastest" : (t == "" ? "" : "<= " t " " unit[m]), verdict,
            fl == "" ? "" : sprintf("%.6g", fl), sratio >> csv
        verdicts[i] = verdict; targets[i] = t
    }

    if (floor_of["wake_median"] != "")
        printf "\nos-floor (wake's rounds on a plain thread blocked on a condition variable): median %s us, p99 %s us\n",
            fmt(floor_of["wake_median"]), fmt(floor_of["wake_p99"])
    if (floor_of["idle"] != "")
        printf "os-floor (idle's sleep in a process that never started a thread): %s ms/s\n", fmt(floor_of["idle"])
    if (have_pool) {
        printf "\npool.h against the targets of issue 5 (set for 2 threads on 2 cores):\n"
        for (i = 1; i <= nm; i++) {
            m = metrics[i]
            if (!(m in unit) || targets[i] == "") continue
            printf "  %-34s %-22s %s\n", label(m, size[m]),
                targets[i] == "fastest" ? "fastest of all" : "<= " targets[i] " " unit[m],
                verdicts[i] == "" ? "(no peer to compare)" : verdicts[i]
        }
    }
    printf "\ntable: %s; every run: %s/latest-runs.csv\n", csv, out
    exit bad
}
