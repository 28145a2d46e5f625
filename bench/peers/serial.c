/* bench/peers/serial.c -- the natural serial baselines of fib, utree and sum for
 * bench/peers/scaling.sh: no runtime, no threads, plain code built at -O2.
 *
 *     cc -O2 bench/peers/serial.c -o serial-bench
 *     ./serial-bench WORKLOAD THREADS [SIZE]      (THREADS is ignored: always 1)
 *
 * fib is `long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }`, utree
 * wl_utree_serial, sum a plain loop (wl_sum_range) over wl_fill's array, submit a plain loop
 * that calls the tiny task's body (wl_tiny_run) for each of its 1M tasks: the same sizes, checks
 * and checksums as the runtimes' programs of workloads.h, and the same timing (one untimed
 * warm-up run, then timed runs until WL_MAX_RUNS or WL_BUDGET_NS; their upper median), printed
 * in the same line format with runtime=serial.
 */
#define WL_WORKLOADS_ONLY
#include "workloads.h"

static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    static volatile uint64_t vsize; /* read before every run: no run can be hoisted or merged */
    const char *w = argc > 1 ? argv[1] : "";
    uint64_t size, ns[WL_MAX_RUNS], total = 0, got = 0, want = 0, t;
    uint32_t *a = NULL;
    int runs = -1; /* -1: the warm-up run */
    struct wl_subtree tree;
    char sum[32];
    int kind;

    if ((strcmp(w, "fib") && strcmp(w, "utree") && strcmp(w, "sum") && strcmp(w, "submit")) ||
        argc < 3 || argc > 4) {
        fprintf(stderr, "usage: serial-bench fib|utree|sum|submit THREADS [SIZE]\n");
        return 2;
    }
    kind = strcmp(w, "submit") == 0 ? 't' : *w; /* f, u, s or t */
    size = argc == 4     ? strtoull(argv[3], NULL, 10)
           : kind == 'f' ? 30
           : kind == 'u' ? 34
           : kind == 't' ? 1000000
                         : 100000000;
    if (size == 0 || (kind == 'f' && size > 45) || (kind == 'u' && size > 60))
        return fprintf(stderr, "serial: bad size for %s\n", w), 2;
    if (kind == 'f') {
        want = wl_fib_expected((unsigned)size);
    } else if (kind == 'u') {
        wl_utree_max_depth = (uint32_t)size;
        want = size == 34 ? WL_UTREE_CHECKSUM_34 : 0; /* else the serial walk is the reference */
    } else {
        a = (uint32_t *)malloc((size_t)size * sizeof *a);
        if (!a) return fprintf(stderr, "serial: out of memory\n"), 1;
        want = kind == 't' ? size : wl_fill(a, (size_t)size).sum;
    }
    vsize = size;
    while (runs < WL_MAX_RUNS && (runs < 1 || total < WL_BUDGET_NS)) {
        size_t i;
        if (kind == 't') memset(a, 0, (size_t)size * sizeof *a);
        t = wl_now_ns();
        if (kind == 'f') got = (uint64_t)fib((int)vsize);
        else if (kind == 't')
            for (i = 0; i < (size_t)vsize; i++) wl_tiny_run(a, i);
        else if (kind == 's') got = wl_sum_range(a, 0, (size_t)vsize);
        else {
            wl_utree_serial(WL_UTREE_ROOT + (vsize - size), 0, &tree); /* + 0 */
            got = tree.nodes + tree.work_sum;
        }
        t = wl_now_ns() - t;
        if (kind == 't')
            for (got = 0, i = 0; i < (size_t)size; i++) got += a[i] == 1;
        if (want && got != want) wl_fail("%s: got %" PRIu64 ", want %" PRIu64, w, got, want);
        if (runs >= 0) total += ns[runs] = t;
        runs++;
    }
    qsort(ns, (size_t)runs, sizeof *ns, cmp_u64);
    snprintf(sum, sizeof sum, kind == 'u' ? "%016" PRIx64 : "%" PRIu64, got);
    printf("metric=%s runtime=serial threads=1 size=%" PRIu64 " value=%.4f unit=ms runs=%d "
           "min=%.4f checksum=%s\n",
           w, size, (double)ns[runs / 2] / 1e6, runs, (double)ns[0] / 1e6, sum);
    free(a);
    return 0;
}
