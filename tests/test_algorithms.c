/* test_algorithms.c - pool_parallel_reduce, pool_qsort, pool_broadcast,
 * pool_join_n.
 *
 * The pool allocates through a wrapper here that can refuse every request
 * of at least a given size, so that the paths taken when memory runs out
 * (a reduce that folds a piece whole, a sort without scratch) run too.
 * The parts:
 *   reduce_sum    the sum of begin .. end-1 for many ranges, grains and
 *                 pool sizes (1, 2, 4, 16 threads): exact.
 *   reduce_order  a partial result that records the range it covers and
 *                 fails if two are combined out of order, overlap or leave
 *                 a gap: every element is folded once, in range order.
 *   reduce_bits   a floating-point sum with a grain gives the same bits on
 *                 1, 2, 4 and 16 threads and run after run; it equals the
 *                 same halving done serially.
 *   reduce_big    a 512-byte partial result (a histogram): allocated at each
 *                 split, and with every such allocation refused, folded
 *                 whole: the same histogram either way.
 *   sort          pool_qsort against the expected order for 0 to 20,000
 *                 elements of 1, 4, 8, 12, 40 and 100 bytes, and 2^19 of 12
 *                 and 2^17 of 40 (above 32
 *                 sorted through pointers), random, sorted, reversed, equal,
 *                 few distinct and sawtooth inputs, on 1, 2, 4 and 16
 *                 threads: in order, and every element (each carries its
 *                 index) present once with its bytes intact.
 *   sort_inplace  the same with the scratch refused: the quicksort, on the
 *                 inputs that defeat a median of three, must finish (the
 *                 heapsort past the depth limit) and sort; a comparator
 *                 that finds an element after itself must not take it
 *                 outside the array (ASan sees that).
 *   sort_outside  pool_qsort from a task of the pool, from a worker of
 *                 another pool (pool_call_on_worker: not a slot) and on
 *                 the default pool (NULL); cmp is
 *                 called on more than one thread when the pool has 2 and
 *                 the sort is long (each comparison notes its thread).
 *   broadcast     fn runs once on each worker, with its index, on pools of
 *                 1, 4, 16 and 40 threads (above 32 the tasks are
 *                 allocated), with the active count lowered to 1, from a
 *                 worker of another pool, and from a blocking task of the
 *                 pool (no worker: no EDEADLK).
 *   join_n        0 to 41 forks, every other call with NULL entries: each
 *                 non-NULL entry runs once with its own argument, from
 *                 outside, from a task, on 1 to 16 threads and the default
 *                 pool; a NULL array does nothing.
 *   errors        EINVAL for each bad argument; EDEADLK for a broadcast
 *                 from a task of the pool (pool_call and a scope task);
 *                 the identity copied for an empty range.
 */
#include <stdatomic.h>
#include <stdlib.h>

static void *test_malloc(size_t size);
#define POOL_MALLOC(size, user) ((void)(user), test_malloc(size))
#define POOL_FREE(ptr, user) ((void)(user), free(ptr))
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#include <string.h>

static atomic_size_t refuse_from; /* 0: refuse nothing */

static void *test_malloc(size_t size) {
    size_t limit = atomic_load(&refuse_from);
    return limit && size >= limit ? NULL : malloc(size);
}

static const int thread_counts[] = {1, 2, 4, 16};
#define NUM_COUNTS (int)(sizeof thread_counts / sizeof thread_counts[0])

/* ---- reduce_sum ---- */

static void sum_fold(void *arg, void *acc, size_t lo, size_t hi) {
    unsigned long long *s = (unsigned long long *)acc;
    (void)arg;
    for (; lo < hi; lo++) *s += lo;
}

static void sum_combine(void *arg, void *acc, const void *later) {
    (void)arg;
    *(unsigned long long *)acc += *(const unsigned long long *)later;
}

static unsigned long long sum_below(size_t n) {
    return n ? (unsigned long long)n * (n - 1) / 2 : 0;
}

static void part_reduce_sum(void) {
    static const size_t ends[] = {0, 1, 2, 3, 100, 1000, 65537, 1000000};
    static const size_t grains[] = {0, 1, 7, 1000};
    static const unsigned long long zero = 0;
    pool_reducer r = {sizeof(unsigned long long), &zero, sum_fold, sum_combine};
    int c;
    size_t e, g;
    test_watchdog(120, "test_algorithms reduce_sum");
    printf("  reduce_sum: exact sums over ranges, grains and pool sizes\n");
    for (c = 0; c < NUM_COUNTS; c++) {
        pool *p = test_pool(thread_counts[c]);
        for (e = 0; e < sizeof ends / sizeof ends[0]; e++)
            for (g = 0; g < sizeof grains / sizeof grains[0]; g++) {
                size_t begin = ends[e] > 10 ? 10 : 0;
                unsigned long long got = 12345;
                if (grains[g] == 1 && ends[e] > 100000)
                    continue; /* a million joins: slow under valgrind */
                CHECK_EQ_I64(pool_parallel_reduce(p, begin, ends[e], grains[g], &r, NULL, &got), 0);
                CHECK_MSG(got == sum_below(ends[e]) - sum_below(begin),
                          "%d threads, [%zu, %zu) grain %zu: %llu", thread_counts[c], begin,
                          ends[e], grains[g], got);
            }
        CHECK_EQ_I64(pool_destroy(p), 0);
    }
}

/* ---- reduce_order ---- */

typedef struct span {
    size_t lo, hi; /* covered: [lo, hi); empty when lo == hi == 0 and !used */
    int used, bad;
} span;

static atomic_long folds_done;

static void span_fold(void *arg, void *acc, size_t lo, size_t hi) {
    span *s = (span *)acc;
    (void)arg;
    atomic_fetch_add(&folds_done, (long)(hi - lo));
    if (!s->used) s->lo = lo, s->hi = hi, s->used = 1;
    else if (s->hi != lo) s->bad = 1;
    else s->hi = hi;
}

static void span_combine(void *arg, void *acc, const void *later_) {
    span *s = (span *)acc;
    const span *later = (const span *)later_;
    (void)arg;
    if (later->bad) s->bad = 1;
    if (!later->used) return;
    if (!s->used) *s = *later;
    else if (s->hi != later->lo) s->bad = 1;
    else s->hi = later->hi;
}

static void part_reduce_order(void) {
    static const span empty = {0, 0, 0, 0};
    pool_reducer r = {sizeof(span), &empty, span_fold, span_combine};
    int c;
    size_t g;
    test_watchdog(60, "test_algorithms reduce_order");
    printf("  reduce_order: partial results combined in range order, no gap, no overlap\n");
    for (c = 0; c < NUM_COUNTS; c++) {
        pool *p = test_pool(thread_counts[c]);
        for (g = 0; g < 4; g++) {
            size_t grain = g == 0 ? 0 : g == 1 ? 1 : g == 2 ? 3 : 500;
            span got;
            atomic_store(&folds_done, 0);
            CHECK_EQ_I64(pool_parallel_reduce(p, 5, 100005, grain, &r, NULL, &got), 0);
            CHECK_MSG(got.used && !got.bad && got.lo == 5 && got.hi == 100005,
                      "%d threads, grain %zu: [%zu, %zu) bad %d", thread_counts[c], grain, got.lo,
                      got.hi, got.bad);
            CHECK_EQ_I64(atomic_load(&folds_done), 100000);
        }
        CHECK_EQ_I64(pool_destroy(p), 0);
    }
}

/* ---- reduce_bits ---- */

static void float_fold(void *arg, void *acc, size_t lo, size_t hi) {
    double *s = (double *)acc;
    (void)arg;
    for (; lo < hi; lo++) *s += 1.0 / (double)(lo + 1);
}

static void float_combine(void *arg, void *acc, const void *later) {
    (void)arg;
    *(double *)acc += *(const double *)later;
}

/* The reduce's tree, serially: halve while longer than grain. */
static double float_tree(size_t lo, size_t hi, size_t grain) {
    double left = 0, right = 0;
    size_t mid;
    if (hi - lo <= grain) {
        float_fold(NULL, &left, lo, hi);
        return left;
    }
    mid = lo + (hi - lo) / 2;
    left = float_tree(lo, mid, grain);
    right = float_tree(mid, hi, grain);
    return left + right;
}

static void part_reduce_bits(void) {
    static const double zero = 0;
    pool_reducer r = {sizeof(double), &zero, float_fold, float_combine};
    double want = float_tree(0, 1000003, 999), got;
    int c, round;
    test_watchdog(60, "test_algorithms reduce_bits");
    printf("  reduce_bits: a floating-point sum with a grain is the same on every thread count\n");
    for (c = 0; c < NUM_COUNTS; c++) {
        pool *p = test_pool(thread_counts[c]);
        for (round = 0; round < 5; round++) {
            CHECK_EQ_I64(pool_parallel_reduce(p, 0, 1000003, 999, &r, NULL, &got), 0);
            CHECK_MSG(memcmp(&got, &want, sizeof got) == 0, "%d threads: %.17g, serially %.17g",
                      thread_counts[c], got, want);
        }
        CHECK_EQ_I64(pool_destroy(p), 0);
    }
}

/* ---- reduce_big ---- */

#define BINS 128 /* 512 bytes of partial result: above the 128 kept on the stack */

typedef struct histogram {
    unsigned bin[BINS];
} histogram;

static void hist_fold(void *arg, void *acc, size_t lo, size_t hi) {
    histogram *h = (histogram *)acc;
    (void)arg;
    for (; lo < hi; lo++) h->bin[(lo * 2654435761u) % BINS]++;
}

static void hist_combine(void *arg, void *acc, const void *later) {
    histogram *h = (histogram *)acc;
    const histogram *l = (const histogram *)later;
    int i;
    (void)arg;
    for (i = 0; i < BINS; i++) h->bin[i] += l->bin[i];
}

static void part_reduce_big(void) {
    static const histogram zero;
    pool_reducer r = {sizeof(histogram), &zero, hist_fold, hist_combine};
    histogram want = zero, got;
    pool *p = test_pool(4);
    int refuse;
    test_watchdog(60, "test_algorithms reduce_big");
    printf("  reduce_big: a 512-byte partial result, allocated or (refused) folded whole\n");
    hist_fold(NULL, &want, 0, 300000);
    for (refuse = 0; refuse < 2; refuse++) {
        atomic_store(&refuse_from, refuse ? sizeof(histogram) : 0);
        CHECK_EQ_I64(pool_parallel_reduce(p, 0, 300000, 1000, &r, NULL, &got), 0);
        CHECK_MSG(memcmp(&got, &want, sizeof got) == 0, "histogram differs (allocation %s)",
                  refuse ? "refused" : "allowed");
    }
    atomic_store(&refuse_from, 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- sort ---- */

/* An element: a key in its first bytes (one byte for size 1), its index
   after it where it fits, and filler derived from both. */
static size_t elem_size;
static unsigned elem_key_bytes;

static unsigned key_of(const unsigned char *e) {
    unsigned k = 0, i;
    for (i = 0; i < elem_key_bytes; i++) k = k << 8 | e[i];
    return k;
}

static int cmp_elem(const void *a, const void *b) {
    unsigned x = key_of((const unsigned char *)a), y = key_of((const unsigned char *)b);
    return (x > y) - (x < y);
}

enum { IN_RANDOM, IN_SORTED, IN_REVERSED, IN_EQUAL, IN_FEW, IN_SAWTOOTH, IN_KINDS };
static const char *const in_name[IN_KINDS] = {"random", "sorted", "reversed",
                                              "equal",  "few",    "sawtooth"};

static unsigned key_for(int kind, size_t i, size_t n, unsigned *rng) {
    unsigned mask = elem_key_bytes >= 4 ? 0xffffffffu : (1u << (8 * elem_key_bytes)) - 1;
    switch (kind) {
    case IN_RANDOM:
        *rng ^= *rng << 13, *rng ^= *rng >> 17, *rng ^= *rng << 5;
        return *rng & mask;
    case IN_SORTED:
        return (unsigned)i & mask;
    case IN_REVERSED:
        return (unsigned)(n - i) & mask;
    case IN_EQUAL:
        return 7 & mask;
    case IN_FEW:
        return (unsigned)(i * 2654435761u % 5) & mask;
    default:
        return (unsigned)(i % 1000) & mask;
    }
}

/* Key, then index (where it fits), then filler made of the index. */
static void put(unsigned char *e, unsigned key, size_t index) {
    size_t i;
    for (i = 0; i < elem_key_bytes; i++)
        e[i] = (unsigned char)(key >> (8 * (elem_key_bytes - 1 - i)));
    for (; i < elem_size; i++) e[i] = (unsigned char)(index * 31 + i);
    if (elem_size >= elem_key_bytes + sizeof(size_t))
        memcpy(e + elem_key_bytes, &index, sizeof index);
}

/* The element's index, where it carries one, else (size_t)-1. */
static size_t index_of(const unsigned char *e) {
    size_t index;
    if (elem_size < elem_key_bytes + sizeof(size_t)) return (size_t)-1;
    memcpy(&index, e + elem_key_bytes, sizeof index);
    return index;
}

/* Sorts one input and checks it: the keys in the order qsort gives them
   and, where elements carry their index, each index once with the bytes
   that element had. Returns 0 on a mismatch. */
static int sort_and_check(pool *p, int kind, size_t n, size_t size) {
    unsigned char *v = (unsigned char *)malloc(n * size + 1);
    unsigned char *want = (unsigned char *)malloc(n * size + 1);
    unsigned char *seen = (unsigned char *)calloc(n + 1, 1);
    unsigned *keys = (unsigned *)malloc((n + 1) * sizeof *keys);
    unsigned char expect[128];
    unsigned rng = 2463534242u;
    size_t i;
    int ok = 1;
    if (!v || !want || !seen || !keys) exit(2);
    elem_size = size;
    elem_key_bytes = size < 4 ? (unsigned)size : 4;
    for (i = 0; i < n; i++) put(v + i * size, keys[i] = key_for(kind, i, n, &rng), i);
    memcpy(want, v, n * size);
    qsort(want, n, size, cmp_elem); /* the keys in order (equal keys in any order) */
    CHECK_EQ_I64(pool_qsort(p, v, n, size, cmp_elem), 0);
    for (i = 0; i < n && ok; i++) {
        const unsigned char *e = v + i * size;
        size_t index = index_of(e);
        if (key_of(e) != key_of(want + i * size)) ok = 0;
        if (ok && index != (size_t)-1) {
            if (index >= n || seen[index]++) break;
            put(expect, keys[index], index);
            ok = memcmp(e, expect, size) == 0;
        }
    }
    ok = ok && i == n;
    CHECK_MSG(ok, "%s input of %zu elements of %zu bytes: element %zu wrong", in_name[kind], n,
              size, i ? i - 1 : 0);
    free(v), free(want), free(seen), free(keys);
    return ok;
}

static int cmp_u32(const void *a, const void *b) {
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

static const size_t sort_sizes[] = {1, 4, 8, 12, 40, 100};
#define NUM_SIZES (int)(sizeof sort_sizes / sizeof sort_sizes[0])

/* Every input kind and element size at n elements; stops at the first
   failure (one message, not thousands). */
static int sort_all(pool *p, size_t n) {
    int kind, z;
    for (z = 0; z < NUM_SIZES; z++)
        for (kind = 0; kind < IN_KINDS; kind++)
            if (!sort_and_check(p, kind, n, sort_sizes[z])) return 0;
    return 1;
}

static void part_sort(void) {
    static const size_t lengths[] = {0, 1, 2, 3, 5, 17, 1000, 2049};
    int c;
    size_t l;
    test_watchdog(240, "test_algorithms sort");
    printf("  sort: every length, element size and input kind, 1 to 16 threads\n");
    for (c = 0; c < NUM_COUNTS; c++) {
        pool *p = test_pool(thread_counts[c]);
        int ok = 1;
        for (l = 0; ok && l < sizeof lengths / sizeof lengths[0]; l++) ok = sort_all(p, lengths[l]);
        /* Long enough for the merges to split (above 8192 elements). */
        if (ok) ok = sort_all(p, test_scaled(20000, 9000));
        if (ok) ok = sort_and_check(p, IN_RANDOM, test_scaled(1 << 19, 1 << 14), 12);
        if (ok) (void)sort_and_check(p, IN_RANDOM, test_scaled(1 << 17, 1 << 14), 40);
        CHECK_EQ_I64(pool_destroy(p), 0);
    }
}

/* ---- sort_inplace ---- */

/* A permutation that sends a median of three down its worst path: each
   partition peels off a few elements (Musser's median-of-3 killer). */
static void median_killer(unsigned *key, size_t n) {
    size_t k = n / 2, i;
    for (i = 1; i <= k; i++) {
        if (i % 2) {
            key[i - 1] = (unsigned)i;
            key[i] = (unsigned)(k + i);
        }
        key[k + i - 1] = (unsigned)(2 * i);
    }
}

/* A comparator that finds an element after itself (>= where > belongs):
   no order is promised, but the sort must stay inside the array (the
   partition's scan stopped only at a pivot not after itself) and keep
   every element. */
static int cmp_not_strict(const void *a, const void *b) {
    return *(const unsigned *)a >= *(const unsigned *)b;
}

static void sort_bad_cmp(pool *p) {
    size_t n = 5000, i;
    unsigned *key = (unsigned *)malloc(n * sizeof *key), rng = 2463534242u;
    unsigned long long sum = 0, sum_after = 0;
    if (!key) exit(2);
    for (i = 0; i < n; i++) sum += key[i] = key_for(IN_RANDOM, i, n, &rng) % 7;
    CHECK_EQ_I64(pool_qsort(p, key, n, sizeof *key, cmp_not_strict), 0);
    for (i = 0; i < n; i++) sum_after += key[i];
    CHECK_MSG(sum_after == sum, "a non-strict comparator lost elements: sum %llu, was %llu",
              sum_after, sum);
    free(key);
}

static void part_sort_inplace(void) {
    int c, kind;
    test_watchdog(240, "test_algorithms sort_inplace");
    printf("  sort_inplace: no scratch: the quicksort, heapsort past its depth limit\n");
    for (c = 0; c < NUM_COUNTS; c++) {
        pool *p = test_pool(thread_counts[c]);
        int ok;
        /* Refuses the scratch of every sort below (20,000 bytes and up),
           not the pool's own allocations, all far smaller. */
        atomic_store(&refuse_from, 20000);
        ok = sort_all(p, 20000);
        for (kind = 0; ok && kind < IN_KINDS; kind++) ok = sort_and_check(p, kind, 100003, 4);
        if (ok) {
            size_t n = 100000, i;
            unsigned *key = (unsigned *)malloc(n * sizeof *key);
            if (!key) exit(2);
            median_killer(key, n);
            CHECK_EQ_I64(pool_qsort(p, key, n, sizeof *key, cmp_u32), 0);
            for (i = 0; i < n; i++)
                if (key[i] != i + 1) break;
            CHECK_MSG(i == n, "median-of-3 killer: element %zu is %u", i, i < n ? key[i] : 0);
            free(key);
        }
        if (ok) sort_bad_cmp(p);
        atomic_store(&refuse_from, 0);
        CHECK_EQ_I64(pool_destroy(p), 0);
    }
}

/* ---- sort_outside ---- */

#define MAX_SEEN_THREADS 64
static pool *sort_pool;
static atomic_int sort_threads_seen[MAX_SEEN_THREADS + 1];

/* Notes the thread (its worker index in sort_pool, or the last slot for
   any other) of each comparison. */
static int cmp_noting(const void *a, const void *b) {
    int w = pool_worker_index();
    atomic_store_explicit(&sort_threads_seen[w >= 0 && w < MAX_SEEN_THREADS ? w : MAX_SEEN_THREADS],
                          1, memory_order_relaxed);
    return cmp_u32(a, b);
}

static int threads_seen(void) {
    int i, n = 0;
    for (i = 0; i <= MAX_SEEN_THREADS; i++) n += atomic_exchange(&sort_threads_seen[i], 0);
    return n;
}

/* Sorts 2^20 random keys with cmp_noting on p; 1 if sorted. */
static int sort_noting(pool *p) {
    size_t n = 1 << 20, i;
    unsigned *key = (unsigned *)malloc(n * sizeof *key), rng = 2463534242u;
    int ok = 1;
    if (!key) exit(2);
    for (i = 0; i < n; i++) key[i] = key_for(IN_RANDOM, i, n, &rng);
    CHECK_EQ_I64(pool_qsort(p, key, n, sizeof *key, cmp_noting), 0);
    for (i = 1; i < n; i++) ok &= key[i - 1] <= key[i];
    free(key);
    return ok;
}

static atomic_int task_sort_ok;

static void sort_from_task(void *arg) { atomic_store(&task_sort_ok, sort_noting((pool *)arg)); }

static void part_sort_outside(void) {
    pool *other = test_pool(1);
    int tries;
    elem_key_bytes = 4;
    sort_pool = test_pool(2);
    test_watchdog(120, "test_algorithms sort_outside");
    printf(
        "  sort_outside: from a task, from another pool, on the default pool; cmp on 2 threads\n");
    pool_call(sort_pool, sort_from_task, sort_pool);
    CHECK(atomic_load(&task_sort_ok));
    atomic_store(&task_sort_ok, 0);
    pool_call_on_worker(other, sort_from_task, sort_pool); /* on a worker of another pool */
    CHECK(atomic_load(&task_sort_ok));
    CHECK(sort_noting(NULL));
    /* A long sort on 2 threads compares on both; a thread that is slow to
       wake may miss one sort, so a few tries. */
    (void)threads_seen();
    for (tries = 0; tries < 20; tries++) {
        CHECK(sort_noting(sort_pool));
        if (threads_seen() >= 2) break;
    }
    CHECK_MSG(tries < 20, "20 sorts of 2^20 keys on 2 threads compared on one thread only");
    CHECK_EQ_I64(pool_destroy(sort_pool), 0);
    CHECK_EQ_I64(pool_destroy(other), 0);
}

/* ---- broadcast ---- */

#define MAX_WORKERS 40
static atomic_int ran_on[MAX_WORKERS];
static atomic_int ran_wrong;

static void note_worker(void *arg, int worker) {
    if (arg != (void *)ran_on || worker < 0 || worker >= MAX_WORKERS ||
        pool_worker_index() != worker)
        atomic_fetch_add(&ran_wrong, 1);
    else atomic_fetch_add(&ran_on[worker], 1);
}

/* Broadcasts on p of n threads and checks that each worker ran it once. */
static void broadcast_once(pool *p, int n, const char *what) {
    int i, wrong = 0;
    for (i = 0; i < MAX_WORKERS; i++) atomic_store(&ran_on[i], 0);
    atomic_store(&ran_wrong, 0);
    CHECK_EQ_I64(pool_broadcast(p, note_worker, ran_on), 0);
    for (i = 0; i < MAX_WORKERS; i++)
        if (atomic_load(&ran_on[i]) != (i < n)) wrong++;
    CHECK_MSG(!wrong && !atomic_load(&ran_wrong), "%s, %d threads: %d workers ran it wrongly", what,
              n, wrong + atomic_load(&ran_wrong));
}

static pool *broadcast_target;
static int broadcast_threads;

static void broadcast_from_task(void *arg) {
    (void)arg;
    broadcast_once(broadcast_target, broadcast_threads, "from another pool");
}

/* A blocking task of the pool runs on no worker, so it may broadcast. */
static void broadcast_from_blocking(pool_blocking_job *job) {
    (void)job;
    broadcast_once(broadcast_target, broadcast_threads, "from a blocking task of the pool");
}

static void part_broadcast(void) {
    static const int sizes[] = {1, 4, 16, MAX_WORKERS};
    pool *other = test_pool(2);
    int i;
    test_watchdog(60, "test_algorithms broadcast");
    printf("  broadcast: once on each worker, 1 to 40 threads, active count lowered, from another "
           "pool, from a blocking task\n");
    for (i = 0; i < 4; i++) {
        pool *p = test_pool(sizes[i]);
        broadcast_once(p, sizes[i], "fresh pool");
        broadcast_once(p, sizes[i], "again");
        CHECK_EQ_I64(pool_set_active_threads(p, 1), 0);
        broadcast_once(p, sizes[i], "active count 1");
        broadcast_target = p, broadcast_threads = sizes[i];
        pool_call_on_worker(other, broadcast_from_task, NULL); /* on a worker of another pool */
        {
            pool_blocking_job job = POOL_BLOCKING_JOB_INIT(broadcast_from_blocking);
            CHECK_EQ_I64(pool_submit_blocking_job(p, &job), 0);
            CHECK_EQ_I64(pool_wait_blocking_job(&job), 0);
        }
        CHECK_EQ_I64(pool_destroy(p), 0);
    }
    CHECK_EQ_I64(pool_destroy(other), 0);
}

/* ---- join_n ---- */

#define FORKS 41
static atomic_int fork_runs[FORKS];

static void fork_note(void *arg) { atomic_fetch_add(&fork_runs[*(const int *)arg], 1); }

static int fork_index[FORKS];

/* Forks n entries (every third one NULL when `holes`) and checks that
   each non-NULL one ran once with its own argument, and nothing else. */
static void join_n_once(pool *p, size_t n, int holes) {
    pool_fork forks[FORKS];
    size_t i;
    int wrong = 0;
    for (i = 0; i < FORKS; i++) atomic_store(&fork_runs[i], 0);
    for (i = 0; i < n; i++) {
        forks[i].fn = holes && i % 3 == 1 ? NULL : fork_note;
        forks[i].arg = &fork_index[i];
    }
    pool_join_n(p, forks, n);
    for (i = 0; i < FORKS; i++)
        if (atomic_load(&fork_runs[i]) != (i < n && !(holes && i % 3 == 1))) wrong++;
    CHECK_MSG(!wrong, "pool_join_n of %zu%s: %d entries ran other than once", n,
              holes ? " with NULL entries" : "", wrong);
}

static pool *join_n_pool;

static void join_n_from_task(void *arg) {
    size_t n;
    (void)arg;
    for (n = 0; n <= FORKS; n++) join_n_once(join_n_pool, n, (int)(n & 1));
}

static void part_join_n(void) {
    int c, i;
    size_t n;
    test_watchdog(60, "test_algorithms join_n");
    printf("  join_n: 0 to 41 forks, some NULL, each runs once, from outside and from a task\n");
    for (i = 0; i < FORKS; i++) fork_index[i] = i;
    for (c = 0; c < NUM_COUNTS; c++) {
        join_n_pool = test_pool(thread_counts[c]);
        for (n = 0; n <= FORKS; n++) join_n_once(join_n_pool, n, (int)(n & 1));
        pool_call(join_n_pool, join_n_from_task, NULL);
        CHECK_EQ_I64(pool_destroy(join_n_pool), 0);
    }
    join_n_once(NULL, 7, 0); /* the default pool */
    pool_join_n(NULL, NULL, 3);
    pool_join_n(NULL, NULL, 0);
}

/* ---- errors ---- */

static pool *errors_pool;
static atomic_int broadcast_rc;

static void broadcast_inside(void *arg) {
    (void)arg;
    atomic_store(&broadcast_rc, pool_broadcast(errors_pool, note_worker, ran_on));
}

static void broadcast_inside_task(pool_task *t) {
    (void)t;
    broadcast_inside(NULL);
}

static void part_errors(void) {
    static const unsigned long long zero = 0;
    pool_reducer good = {sizeof zero, &zero, sum_fold, sum_combine}, bad;
    unsigned long long out = 99;
    unsigned v[3] = {3, 1, 2};
    pool_scope scope;
    pool_task task = POOL_TASK_INIT(broadcast_inside_task);
    test_watchdog(30, "test_algorithms errors");
    printf("  errors: EINVAL, EDEADLK, the identity for an empty range\n");
    errors_pool = test_pool(2);
    CHECK_EQ_I64(pool_parallel_reduce(errors_pool, 0, 10, 0, NULL, NULL, &out), EINVAL);
    CHECK_EQ_I64(pool_parallel_reduce(errors_pool, 0, 10, 0, &good, NULL, NULL), EINVAL);
    bad = good, bad.size = 0;
    CHECK_EQ_I64(pool_parallel_reduce(errors_pool, 0, 10, 0, &bad, NULL, &out), EINVAL);
    bad = good, bad.identity = NULL;
    CHECK_EQ_I64(pool_parallel_reduce(errors_pool, 0, 10, 0, &bad, NULL, &out), EINVAL);
    bad = good, bad.fold = NULL;
    CHECK_EQ_I64(pool_parallel_reduce(errors_pool, 0, 10, 0, &bad, NULL, &out), EINVAL);
    bad = good, bad.combine = NULL;
    CHECK_EQ_I64(pool_parallel_reduce(errors_pool, 0, 10, 0, &bad, NULL, &out), EINVAL);
    CHECK_EQ_I64(out, 99); /* untouched by a refused call */
    CHECK_EQ_I64(pool_parallel_reduce(errors_pool, 5, 5, 0, &good, NULL, &out), 0);
    CHECK_EQ_I64(out, 0);
    CHECK_EQ_I64(pool_parallel_reduce(errors_pool, 6, 5, 0, &good, NULL, &out), 0);
    CHECK_EQ_I64(out, 0);

    CHECK_EQ_I64(pool_qsort(errors_pool, v, 3, sizeof v[0], NULL), EINVAL);
    CHECK_EQ_I64(pool_qsort(errors_pool, NULL, 3, sizeof v[0], cmp_u32), EINVAL);
    CHECK_EQ_I64(pool_qsort(errors_pool, v, 3, 0, cmp_u32), EINVAL);
    CHECK_EQ_I64(pool_qsort(errors_pool, v, (size_t)-1 / 2, 4, cmp_u32), EINVAL);
    CHECK(v[0] == 3 && v[1] == 1 && v[2] == 2); /* untouched */
    CHECK_EQ_I64(pool_qsort(errors_pool, NULL, 0, 4, cmp_u32), 0);
    CHECK_EQ_I64(pool_qsort(errors_pool, NULL, 1, 4, cmp_u32), 0);
    CHECK_EQ_I64(pool_qsort(errors_pool, v, 3, sizeof v[0], cmp_u32), 0);
    CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3);

    CHECK_EQ_I64(pool_broadcast(errors_pool, NULL, NULL), EINVAL);
    atomic_store(&broadcast_rc, -1);
    pool_call(errors_pool, broadcast_inside, NULL);
    CHECK_EQ_I64(atomic_load(&broadcast_rc), EDEADLK);
    atomic_store(&broadcast_rc, -1);
    pool_scope_init(&scope, errors_pool);
    CHECK_EQ_I64(pool_scope_spawn(&scope, &task), 0);
    pool_scope_wait(&scope);
    CHECK_EQ_I64(atomic_load(&broadcast_rc), EDEADLK);
    CHECK_EQ_I64(pool_destroy(errors_pool), 0);
}

static const test_part parts[] = {
    {"reduce_sum", part_reduce_sum},
    {"reduce_order", part_reduce_order},
    {"reduce_bits", part_reduce_bits},
    {"reduce_big", part_reduce_big},
    {"sort", part_sort},
    {"sort_inplace", part_sort_inplace},
    {"sort_outside", part_sort_outside},
    {"broadcast", part_broadcast},
    {"join_n", part_join_n},
    {"errors", part_errors},
};

int main(int argc, char **argv) {
    test_run_parts(argc, argv, parts, sizeof parts / sizeof parts[0]);
    return test_finish("test_algorithms");
}
