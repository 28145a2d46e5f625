/* bench/qsort.c -- pool_qsort against the C library's qsort, and against itself on one thread.
 *
 *     usage: qsort [THREADS...]   default: 2 threads; BENCH_QUICK=1: 1/100 of the sizes, 3 runs
 *
 * Several thread counts (qsort 2 4 8 16) measure one pool of each in the same rounds.
 *
 * The workloads, exactly:
 *   u32       N = 10,000,000 uint32 from xorshift32 (state 2463534242: x ^= x << 13;
 *             x ^= x >> 17; x ^= x << 5), compared by value;
 *   rec64     N = 1,000,000 records of 64 bytes: a uint64 key from xorshift64 (state
 *             88172645463325252: x ^= x << 13; x ^= x >> 7; x ^= x << 17) and 56 bytes that
 *             are a function of the key; compared by key.
 * Each is regenerated before every timed sort (not timed) and sorted three ways:
 *   qsort     the C library's qsort (glibc's is a mergesort, through pointers for records over
 *             32 bytes), on the main thread: the baseline, the call a C programmer writes;
 *   pool-1    pool_qsort on a pool of 1 thread;
 *   pool-T    pool_qsort on a pool of T threads, for each T given.
 * Both pools have no external slots, so main blocks while the pool's own threads sort: pool-1 is
 * one thread at work, pool-T is THREADS (a caller in a slot would add itself).
 * The comparison functions count nothing and are the same for the three. Checks: after every
 * sort the output is in order and its checksum (sum and xor of the keys, and for rec64 each
 * record's payload still matching its key) equals the input's.
 *
 * Timing: one warm-up round, then RUNS rounds of {qsort, pool-1, pool-T...}, interleaved; before
 * each timed sort a 20 ms pause lets the pools fall asleep. Reported: the median of each, and
 * the ratios qsort / pool-T, qsort / pool-1 and pool-1 / pool-T (above 1: pool-T is faster).
 *
 * Targets (issue 17, 2 threads on the 2-core machine): qsort / pool-2 >= 1.8 on both workloads,
 * pool-1 / pool-2 >= 1.6, qsort / pool-1 >= 1.0.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#define RUNS 7
#define QUICK_RUNS 3
#define U32_N 10000000u
#define REC_N 1000000u

typedef struct rec64 {
    uint64_t key;
    uint64_t payload[7];
} rec64;

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_rec(const void *a, const void *b) {
    uint64_t x = ((const rec64 *)a)->key, y = ((const rec64 *)b)->key;
    return (x > y) - (x < y);
}

static void fill_u32(uint32_t *v, size_t n) {
    uint32_t x = 2463534242u;
    size_t i;
    for (i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        v[i] = x;
    }
}

static void fill_rec(rec64 *v, size_t n) {
    uint64_t x = 88172645463325252ull;
    size_t i, j;
    for (i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v[i].key = x;
        for (j = 0; j < 7; j++) v[i].payload[j] = x * (j + 3);
    }
}

/* Sum and xor of the keys: any permutation keeps both. */
typedef struct check {
    uint64_t sum, xor_;
} check;

static check check_u32(const uint32_t *v, size_t n) {
    check c = {0, 0};
    size_t i;
    for (i = 0; i < n; i++) c.sum += v[i], c.xor_ ^= v[i];
    return c;
}

static check check_rec(const rec64 *v, size_t n) {
    check c = {0, 0};
    size_t i, j;
    for (i = 0; i < n; i++) {
        c.sum += v[i].key, c.xor_ ^= v[i].key;
        for (j = 0; j < 7; j++)
            if (v[i].payload[j] != v[i].key * (j + 3)) c.xor_ = ~c.xor_; /* a torn record */
    }
    return c;
}

static int sorted_u32(const uint32_t *v, size_t n) {
    size_t i;
    for (i = 1; i < n; i++)
        if (v[i - 1] > v[i]) return 0;
    return 1;
}

static int sorted_rec(const rec64 *v, size_t n) {
    size_t i;
    for (i = 1; i < n; i++)
        if (v[i - 1].key > v[i].key) return 0;
    return 1;
}

#define MAX_COUNTS 8
enum { WAY_QSORT, WAY_POOL1, WAY_POOLT }; /* pool-T ways follow, one per thread count */
#define MAX_WAYS (WAY_POOLT + MAX_COUNTS)

static pool *pools[MAX_WAYS];
static int way_threads[MAX_WAYS];
static int ways;

/* One timed sort of the workload `rec` (0: u32) the way `way`; returns ns, exits on a bad result.
 */
static uint64_t sort_once(int rec, int way, void *v, size_t n) {
    size_t size = rec ? sizeof(rec64) : sizeof(uint32_t);
    int (*cmp)(const void *, const void *) = rec ? cmp_rec : cmp_u32;
    check before, after;
    uint64_t t0, t1;
    if (rec) fill_rec((rec64 *)v, n);
    else fill_u32((uint32_t *)v, n);
    before = rec ? check_rec((const rec64 *)v, n) : check_u32((const uint32_t *)v, n);
    bench_sleep_ns(20000000u);
    t0 = bench_now_ns();
    if (way == WAY_QSORT) {
        qsort(v, n, size, cmp);
    } else if (pool_qsort(pools[way], v, n, size, cmp) != 0) {
        fprintf(stderr, "qsort: pool_qsort failed\n");
        exit(1);
    }
    t1 = bench_now_ns();
    after = rec ? check_rec((const rec64 *)v, n) : check_u32((const uint32_t *)v, n);
    if (!(rec ? sorted_rec((const rec64 *)v, n) : sorted_u32((const uint32_t *)v, n)) ||
        after.sum != before.sum || after.xor_ != before.xor_) {
        fprintf(stderr, "qsort: way %d sorted %s wrongly\n", way, rec ? "rec64" : "u32");
        exit(1);
    }
    return t1 - t0;
}

static void workload(int rec, size_t n, int runs) {
    size_t size = rec ? sizeof(rec64) : sizeof(uint32_t);
    void *v = malloc(n * size);
    uint64_t ns[MAX_WAYS][RUNS], med[MAX_WAYS];
    int r, way;
    if (!v) exit(2);
    for (way = 0; way < ways; way++) (void)sort_once(rec, way, v, n); /* warm-up */
    for (r = 0; r < runs; r++)
        for (way = 0; way < ways; way++) ns[way][r] = sort_once(rec, way, v, n);
    for (way = 0; way < ways; way++) med[way] = bench_quantile_u64(ns[way], (size_t)runs, 0.5);
    printf("%s, n = %zu, medians of %d:\n", rec ? "rec64" : "u32", n, runs);
    printf("  qsort    %8.1f ms\n", med[WAY_QSORT] / 1e6);
    printf("  pool-1   %8.1f ms   qsort/pool-1 %.2fx\n", med[WAY_POOL1] / 1e6,
           (double)med[WAY_QSORT] / med[WAY_POOL1]);
    for (way = WAY_POOLT; way < ways; way++)
        printf("  pool-%-3d %8.1f ms   qsort/pool-%d %.2fx   pool-1/pool-%d %.2fx\n",
               way_threads[way], med[way] / 1e6, way_threads[way],
               (double)med[WAY_QSORT] / med[way], way_threads[way],
               (double)med[WAY_POOL1] / med[way]);
    free(v);
}

int main(int argc, char **argv) {
    int quick = getenv("BENCH_QUICK") != NULL;
    int runs = quick ? QUICK_RUNS : RUNS, i;
    pool_config cfg = {0};
    /* No external slots: main blocks and the pool's threads alone sort, so a pool of T threads
       sorts on T threads (in a slot, main would make it T + 1). */
    cfg.external_slots = POOL_EXTERNAL_SLOTS_NONE;
    way_threads[WAY_POOL1] = 1;
    ways = WAY_POOLT;
    for (i = 1; i < argc && ways < MAX_WAYS; i++) way_threads[ways++] = atoi(argv[i]);
    if (ways == WAY_POOLT) way_threads[ways++] = 2;
    for (i = WAY_POOL1; i < ways; i++) {
        cfg.num_threads = way_threads[i] > 0 ? way_threads[i] : 1;
        if (pool_create(&pools[i], &cfg) != 0) return 2;
    }
    workload(0, quick ? U32_N / 100 : U32_N, runs);
    workload(1, quick ? REC_N / 100 : REC_N, runs);
    for (i = WAY_POOL1; i < ways; i++) pool_destroy(pools[i]);
    return 0;
}
