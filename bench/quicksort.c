/* bench/quicksort.c -- divide and conquer over memory: quicksort forking both halves.
 *
 *     usage: quicksort [THREADS]      default: 2 threads; BENCH_QUICK=1: 100,000 elements
 *
 * The workload, exactly (to be re-implemented identically in other runtimes):
 *
 *   Input: N = 10,000,000 uint32 from xorshift32 (Marsaglia 2003) with state x = 2463534242:
 *       for i in 0 .. N-1:  x ^= x << 13;  x ^= x >> 17;  x ^= x << 5;  a[i] = x
 *   regenerated before every run (not timed).
 *
 *   sort(a, n):
 *       if n < 32: insertion sort (the usual one: a[i] moves left past every larger element)
 *       else:
 *           median of three: with mid = (n - 1) / 2, swap so that a[0] <= a[mid] <= a[n-1]:
 *               if a[mid] < a[0]: swap(a[mid], a[0])
 *               if a[n-1] < a[0]: swap(a[n-1], a[0])
 *               if a[n-1] < a[mid]: swap(a[n-1], a[mid])
 *           Hoare partition around pivot = a[mid]: i = 0, j = n - 1; loop:
 *               while a[i] < pivot: i++
 *               while a[j] > pivot: j--
 *               if i >= j: k = j + 1, stop
 *               swap(a[i], a[j]); i++; j--
 *           sort(a, k) and sort(a + k, n - k), in parallel: here one pool_join per call, no
 *           other cutoff than the insertion sort.
 *
 *   Checks: the output is non-decreasing, its sum and xor equal the input's, and
 *   checksum = sum over i of (i + 1) * a[i] (mod 2^64) of the sorted array equals
 *   WL_QUICKSORT_CHECKSUM_10M in bench/peers/workloads.h (a property of the sorted output alone,
 *   so any correct sort gives it). The input, the partition and the checks are that file's.
 *
 * The parallel sort starts with pool_call_on_worker from the main thread, so it runs on the
 * workers. The baseline is the same recursion with two direct calls instead of pool_join, on the
 * main thread.
 *
 * Timing: one warm-up round, then RUNS rounds of {plain, pool}; before each run the input is
 * regenerated, then a 20 ms pause lets the pool fall asleep (so it does not spin against the
 * plain sort). No untimed run before each timed one as in bench/fib.c: a run takes most of a
 * second, waking the workers costs microseconds.
 *
 * Target (2 cores): pool, 2 threads <= 0.73 s.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"
#define WL_WORKLOADS_ONLY /* the input, partition and checks shared with bench/peers */
#include "peers/workloads.h"

#define FULL_N 10000000u
#define QUICK_N 100000u
#define RUNS 9
#define QUICK_RUNS 3
#define SETTLE_NS 20000000u
#define TARGET_NS 730000000u

static pool *g_pool;

struct sort_range {
    uint32_t *a;
    size_t n;
};

static BENCH_NOINLINE void sort_plain(void *arg) {
    struct sort_range *r = arg;
    struct sort_range left, right;
    size_t k;

    if (r->n < WL_INSERTION_SORT_BELOW) {
        wl_insertion_sort(r->a, r->n);
        return;
    }
    k = wl_partition(r->a, r->n);
    left.a = r->a;
    left.n = k;
    right.a = r->a + k;
    right.n = r->n - k;
    sort_plain(&left);
    sort_plain(&right);
}

static BENCH_NOINLINE void sort_pool(void *arg) {
    struct sort_range *r = arg;
    struct sort_range left, right;
    size_t k;

    if (r->n < WL_INSERTION_SORT_BELOW) {
        wl_insertion_sort(r->a, r->n);
        return;
    }
    k = wl_partition(r->a, r->n);
    left.a = r->a;
    left.n = k;
    right.a = r->a + k;
    right.n = r->n - k;
    pool_join(g_pool, sort_pool, &left, sort_pool, &right);
}

/* Regenerates the input, pauses, sorts it (timed) with the pool p or (p == NULL) plain, checks the
 * result; returns the wall time and stores the weighted checksum in *checksum. */
static uint64_t run_once(pool *p, uint32_t *a, size_t n, uint64_t *checksum) {
    struct wl_sums in = wl_fill(a, n);
    struct sort_range all;
    uint64_t t0, t1;

    all.a = a;
    all.n = n;
    g_pool = p;
    bench_sleep_ns(SETTLE_NS);
    t0 = bench_now_ns();
    if (p) pool_call_on_worker(p, sort_pool, &all);
    else sort_plain(&all);
    t1 = bench_now_ns();
    *checksum = wl_check_sorted(a, n, in);
    return t1 - t0;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? bench_parse_threads(argv[1]) : 2;
    int runs = bench_quick() ? QUICK_RUNS : RUNS;
    size_t n = bench_quick() ? QUICK_N : FULL_N;
    uint32_t *a = malloc(n * sizeof *a);
    uint64_t plain_ns[RUNS], pool_ns[RUNS], expected, checksum, plain_median, pool_median;
    pool *p = bench_pool_create("quicksort", threads);
    char label[64];
    int r, v;

    if (!a) {
        fprintf(stderr, "quicksort: out of memory for %zu elements\n", n);
        return 1;
    }
    /* Round -1 is the warm-up: it faults the array in and starts the pool's threads. Its plain
     * run gives the reference checksum, itself checked against the constant at full size. */
    run_once(NULL, a, n, &expected);
    if (!bench_quick() && expected != WL_QUICKSORT_CHECKSUM_10M) {
        fprintf(stderr, "quicksort: FAILED: checksum %016" PRIx64 ", want %016" PRIx64 "\n",
                expected, WL_QUICKSORT_CHECKSUM_10M);
        return 1;
    }
    for (r = -1; r < runs; r++) {
        for (v = 0; v < 2; v++) {
            uint64_t w = run_once(v ? p : NULL, a, n, &checksum);
            if (checksum != expected) {
                fprintf(stderr,
                        "quicksort: FAILED: %s: checksum %016" PRIx64 ", want %016" PRIx64 "\n",
                        v ? "pool" : "plain", checksum, expected);
                return 1;
            }
            if (r >= 0) (v ? pool_ns : plain_ns)[r] = w;
        }
    }

    printf("quicksort of %zu xorshift32 uint32, pool_join per partition, insertion sort below %u, "
           "checksum %016" PRIx64 ", %d runs each\n",
           n, WL_INSERTION_SORT_BELOW, expected, runs);
    plain_median = bench_report_ms("plain recursion", plain_ns, runs, 0, NULL);
    snprintf(label, sizeof label, "pool_join, %d thread%s", threads, threads == 1 ? "" : "s");
    pool_median = bench_report_ms(label, pool_ns, runs, plain_median, "plain");
    bench_report_target("pool_join", pool_median, TARGET_NS, threads, 2);
    bench_pool_destroy("quicksort", p);
    free(a);
    return 0;
}
