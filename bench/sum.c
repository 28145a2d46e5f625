/* bench/sum.c -- a flat loop: pool_parallel_for over a big array, and over a tiny one.
 *
 *     usage: sum [THREADS]      default: 2 threads; BENCH_QUICK=1: 1,000,000 elements
 *
 * The workload, exactly (to be re-implemented identically in other runtimes):
 *
 *   Input: N = 100,000,000 uint32 from xorshift32 (Marsaglia 2003) with state x = 2463534242:
 *       for i in 0 .. N-1:  x ^= x << 13;  x ^= x >> 17;  x ^= x << 5;  a[i] = x
 *   generated once (not timed). 400 MB: every run streams it from memory.
 *
 *   Big loop: sum = a[0] + ... + a[N-1] as a uint64 (exact: no overflow below 2^32 elements).
 *   Here pool_parallel_for with grain 0 (adaptive split); each chunk sums its elements into a
 *   local uint64 and adds that to the call's total with one relaxed atomic add. And the same with
 *   pool_parallel_reduce, grain 0: each piece folds into its own partial sum, no atomics.
 *   Checksum: the sum, EXPECTED_SUM below, checked on every run.
 *
 *   Tiny loop: the same sum over a[0 .. 999] (cache-hot), called back to back from the main
 *   thread; reported per call. Checksum: that sum, checked on every call.
 *
 * Baseline: a plain loop on the main thread. Both variants sum with the same out-of-line
 * function, so the inner loop is the same machine code.
 *
 * Timing, big loop: as in bench/fib.c, one warm-up round, then RUNS rounds of {plain, pool},
 * every timed run after a 20 ms pause (so the pool is asleep, not spinning against the plain
 * run) and one untimed run of the same variant (so the pool's workers are awake). Tiny loop:
 * TINY_BLOCKS alternating blocks of each variant, each block after untimed calls, every call
 * timed on its own; the median call is reported (as bench/call_tree.c does).
 *
 * Target (2 cores): big loop, pool, 2 threads <= 36 ms.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#define FULL_N 100000000u
#define QUICK_N 1000000u
#define SEED 2463534242u
#define EXPECTED_SUM UINT64_C(214739865049436510) /* of the full-size array */
#define TINY_N 1000u
#define TINY_CALLS 20000
#define QUICK_TINY_CALLS 400
#define TINY_BLOCKS 20
#define TINY_WARMUP 100
#define RUNS 9
#define QUICK_RUNS 3
#define SETTLE_NS 20000000u
#define TARGET_NS 36000000u

/* The loop both variants run. Out of line, so that it is the same code in both. */
static BENCH_NOINLINE uint64_t sum_range(const uint32_t *a, size_t lo, size_t hi) {
    uint64_t s = 0;
    size_t i;
    for (i = lo; i < hi; i++) s += a[i];
    return s;
}

/* One pool_parallel_for call: its input and its total. */
struct sum_call {
    const uint32_t *a;
    uint64_t total;
};

static void sum_chunk(void *arg, size_t lo, size_t hi) {
    struct sum_call *c = arg;
    /* Relaxed: pool_parallel_for returns after every chunk, and that return orders the adds
     * before the caller's read of total. */
    __atomic_fetch_add(&c->total, sum_range(c->a, lo, hi), __ATOMIC_RELAXED);
}

/* pool_parallel_reduce's fold and combine: a partial sum per piece. */
static void sum_fold(void *arg, void *acc, size_t lo, size_t hi) {
    *(uint64_t *)acc += sum_range((const uint32_t *)arg, lo, hi);
}

static void sum_combine(void *arg, void *acc, const void *later) {
    (void)arg;
    *(uint64_t *)acc += *(const uint64_t *)later;
}

static const uint64_t sum_zero = 0;
static const pool_reducer sum_reducer = {sizeof(uint64_t), &sum_zero, sum_fold, sum_combine};

/* Sums a[0..n) with the pool p or (p == NULL) plainly, through pool_parallel_reduce if `reduce`;
   exits if the sum is not `expected`. */
static uint64_t timed_sum_by(pool *p, int reduce, const uint32_t *a, size_t n, uint64_t expected) {
    struct sum_call call;
    uint64_t t0, t1;

    call.a = a;
    call.total = 0;
    t0 = bench_now_ns();
    if (p && reduce) pool_parallel_reduce(p, 0, n, 0, &sum_reducer, (void *)a, &call.total);
    else if (p) pool_parallel_for(p, 0, n, 0, sum_chunk, &call);
    else call.total = sum_range(a, 0, n);
    t1 = bench_now_ns();
    if (call.total != expected) {
        fprintf(stderr, "sum: FAILED: %s sum of %zu elements is %" PRIu64 ", want %" PRIu64 "\n",
                p ? reduce ? "reduce" : "pool" : "plain", n, call.total, expected);
        exit(1);
    }
    return t1 - t0;
}

static uint64_t timed_sum(pool *p, const uint32_t *a, size_t n, uint64_t expected) {
    return timed_sum_by(p, 0, a, n, expected);
}

/* `calls` back-to-back tiny sums after `warmup` untimed ones; each call's time goes to ns[]. */
static void time_tiny(pool *p, const uint32_t *a, uint64_t expected, uint64_t *ns, int warmup,
                      int calls) {
    int i;
    for (i = -warmup; i < calls; i++) {
        uint64_t w = timed_sum(p, a, TINY_N, expected);
        if (i >= 0) ns[i] = w;
    }
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? bench_parse_threads(argv[1]) : 2;
    int runs = bench_quick() ? QUICK_RUNS : RUNS;
    int tiny_calls = bench_quick() ? QUICK_TINY_CALLS : TINY_CALLS;
    int per_block = tiny_calls / TINY_BLOCKS;
    size_t n = bench_quick() ? QUICK_N : FULL_N, i;
    uint32_t *a = malloc(n * sizeof *a);
    uint64_t *tiny_plain = malloc((size_t)tiny_calls * sizeof *tiny_plain);
    uint64_t *tiny_pool = malloc((size_t)tiny_calls * sizeof *tiny_pool);
    uint64_t plain_ns[RUNS], pool_ns[RUNS], reduce_ns[RUNS], sum = 0, tiny_sum = 0, plain_median;
    uint64_t pool_median;
    uint64_t tiny_plain_median, tiny_pool_median;
    uint32_t x = SEED;
    pool *p = bench_pool_create("sum", threads);
    char label[64];
    int r, v, b;

    if (!a || !tiny_plain || !tiny_pool) {
        fprintf(stderr, "sum: out of memory for %zu elements\n", n);
        return 1;
    }
    for (i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        a[i] = x;
        sum += x;
        if (i < TINY_N) tiny_sum += x;
    }
    if (!bench_quick() && sum != EXPECTED_SUM) {
        fprintf(stderr, "sum: FAILED: the input sums to %" PRIu64 ", want %" PRIu64 "\n", sum,
                EXPECTED_SUM);
        return 1;
    }

    for (r = -1; r < runs; r++) { /* round -1: warm-up (it also starts the pool's threads) */
        for (v = 0; v < 3; v++) { /* plain, parallel_for, parallel_reduce */
            pool *use = v ? p : NULL;
            uint64_t w;
            bench_sleep_ns(SETTLE_NS);
            timed_sum_by(use, v == 2, a, n, sum);
            w = timed_sum_by(use, v == 2, a, n, sum);
            if (r >= 0) (v == 2 ? reduce_ns : v ? pool_ns : plain_ns)[r] = w;
        }
    }
    for (b = 0; b < TINY_BLOCKS; b++) {
        time_tiny(NULL, a, tiny_sum, tiny_plain + b * per_block, TINY_WARMUP, per_block);
        time_tiny(p, a, tiny_sum, tiny_pool + b * per_block, TINY_WARMUP, per_block);
    }
    tiny_calls = TINY_BLOCKS * per_block;

    printf("sum of %zu xorshift32 uint32 = %" PRIu64 ", pool_parallel_for grain 0, %d runs each\n",
           n, sum, runs);
    plain_median = bench_report_ms("plain loop", plain_ns, runs, 0, NULL);
    snprintf(label, sizeof label, "parallel_for, %d thread%s", threads, threads == 1 ? "" : "s");
    pool_median = bench_report_ms(label, pool_ns, runs, plain_median, "plain");
    snprintf(label, sizeof label, "parallel_reduce, %d thread%s", threads, threads == 1 ? "" : "s");
    (void)bench_report_ms(label, reduce_ns, runs, plain_median, "plain");
    printf("%-28s %.1f GB/s plain, %.1f GB/s pool\n", "bandwidth (medians)",
           (double)n * sizeof *a / (double)plain_median,
           (double)n * sizeof *a / (double)pool_median);
    tiny_plain_median = bench_median_u64(tiny_plain, (size_t)tiny_calls);
    tiny_pool_median = bench_median_u64(tiny_pool, (size_t)tiny_calls);
    printf("tiny loop, %u elements, %d back-to-back calls each: plain %" PRIu64 " ns, "
           "parallel_for %" PRIu64 " ns per call (medians), %.1fx plain\n",
           TINY_N, tiny_calls, tiny_plain_median, tiny_pool_median,
           (double)tiny_pool_median / (double)tiny_plain_median);
    bench_report_target("parallel_for", pool_median, TARGET_NS, threads, 2);
    bench_pool_destroy("sum", p);
    free(a);
    free(tiny_plain);
    free(tiny_pool);
    return 0;
}
