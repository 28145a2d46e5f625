# bench/peers/fmt.awk - how bench/peers prints a measurement: about three significant digits.
# Used with -f by report.awk's caller (run.sh) and by results_md.sh.
function fmt(v) {
    if (v == "") return "-"
    if (v >= 100) return sprintf("%.0f", v)
    if (v >= 10) return sprintf("%.1f", v)
    if (v >= 1) return sprintf("%.2f", v)
    return sprintf("%.3f", v)
}
