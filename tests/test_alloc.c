/* test_alloc.c - no allocation on the hot paths.
 *
 * The program replaces malloc, calloc, realloc and the aligned allocators
 * for the whole process (glibc lets an executable interpose them; the
 * replacements count, then call glibc's own). After a warm-up that starts
 * every worker, it runs each hot path many times, from outside the pool
 * and from workers:
 *   pool_join, pool_call (outside and nested in a worker), scope spawn and
 *   wait (flat and nested), pool_submit, pool_submit_batch, and
 *   pool_parallel_for (automatic and fixed grain),
 * and checks that the process made exactly zero allocations meanwhile
 * (but for those of a spare thread, if a parked worker had one started:
 * a thread start, not a hot path), and that every task ran (exact counts
 * and sums).
 *
 * Batches submitted from a worker stay below the initial deque capacity
 * (256): growing a deque allocates by design, once, and which worker runs
 * a given batch is up to the scheduler.
 *
 * Sanitizers and valgrind replace malloc themselves, so under them (and off
 * glibc) the workload still runs and is checked, but allocations are not
 * counted.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TEST_SANITIZED 1
#endif

#if defined(__GLIBC__) && !defined(TEST_SANITIZED)
#define COUNTING_ALLOCATIONS 1

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *ptr);

static atomic_int counting;
static atomic_long allocations;

static void count_one(void) {
    if (atomic_load_explicit(&counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void *malloc(size_t size) {
    count_one();
    return __libc_malloc(size);
}
void *calloc(size_t n, size_t size) {
    count_one();
    return __libc_calloc(n, size);
}
void *realloc(void *ptr, size_t size) {
    count_one();
    return __libc_realloc(ptr, size);
}
void *memalign(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}
void *aligned_alloc(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}
int posix_memalign(void **out, size_t alignment, size_t size) {
    void *ptr;
    count_one();
    ptr = __libc_memalign(alignment, size);
    if (!ptr) return ENOMEM;
    *out = ptr;
    return 0;
}
void free(void *ptr) { __libc_free(ptr); }

static void counting_start(void) {
    atomic_store(&allocations, 0);
    atomic_store(&counting, 1);
}

static long counting_stop(void) {
    atomic_store(&counting, 0);
    return atomic_load(&allocations);
}
#endif

static pool *p;

/* A thread start: the worker, its deque, and what pthread_create may take. */
#define THREAD_START_ALLOCATIONS 4

/* ------------------------------------------------------------------------ */
/* Workloads                                                                */
/* ------------------------------------------------------------------------ */

/* pool_call from a worker: the nested call runs inline. */
static void nested_call(void *arg) { pool_call(p, test_fib, arg); }

static void sum_body(void *arg, size_t lo, size_t hi) {
    uint64_t local = 0;
    size_t i;
    for (i = lo; i < hi; i++) local += i;
    atomic_fetch_add((_Atomic uint64_t *)arg, local);
}

static void parallel_sum_from_worker(void *arg) {
    pool_parallel_for(p, 0, 20000, 0, sum_body, arg);
}

/* Scope tasks: a node counts itself and spawns `fanout` leaves. */
#define LEAVES 8
#define NODES 16

typedef struct node {
    pool_task task;
    pool_scope *scope;
    atomic_long *ran;
    struct node *leaves; /* LEAVES of them, or NULL for a leaf */
} node;

static void node_run(pool_task *t) {
    node *n = (node *)((char *)t - offsetof(node, task));
    int i;
    atomic_fetch_add(n->ran, 1);
    for (i = 0; n->leaves && i < LEAVES; i++) pool_scope_spawn(n->scope, &n->leaves[i].task);
}

/* One scope: NODES nodes, each with LEAVES leaves spawned from inside. */
static void scope_round(void *arg) {
    static _Thread_local node tree[NODES][1 + LEAVES];
    atomic_long *ran = (atomic_long *)arg;
    pool_scope s;
    int i, j;
    pool_scope_init(&s, p);
    for (i = 0; i < NODES; i++) {
        for (j = 0; j <= LEAVES; j++) {
            tree[i][j].task = (pool_task)POOL_TASK_INIT(node_run);
            tree[i][j].scope = &s;
            tree[i][j].ran = ran;
            tree[i][j].leaves = j == 0 ? &tree[i][1] : NULL;
        }
        pool_scope_spawn(&s, &tree[i][0].task);
    }
    pool_scope_wait(&s);
}

/* Detached tasks, counted when they run. */
#define DETACHED 200 /* below the initial deque capacity, see above */

static atomic_long detached_ran;

static void detached_run(pool_task *t) {
    (void)t;
    atomic_fetch_add(&detached_ran, 1);
}

typedef struct detached_set {
    pool_task tasks[DETACHED];
    pool_task *batch[DETACHED];
} detached_set;

static void detached_submit(detached_set *d) {
    int i;
    for (i = 0; i < DETACHED; i++) {
        d->tasks[i] = (pool_task)POOL_TASK_INIT(detached_run);
        d->batch[i] = &d->tasks[i];
    }
    for (i = 0; i < DETACHED / 2; i++) CHECK(pool_submit(p, &d->tasks[i]) == 0);
    CHECK(pool_submit_batch(p, d->batch + DETACHED / 2, DETACHED / 2) == 0);
}

static void detached_submit_from_worker(void *arg) { detached_submit((detached_set *)arg); }

/* Polls: a wait that blocks on anything would need its own primitive. */
static void detached_wait(long expected) {
    while (atomic_load(&detached_ran) < expected) test_sleep_us(20);
}

/* One pass over every hot path, each result checked. */
static void hot_paths(void) {
    static detached_set outside_set, worker_set;
    _Atomic uint64_t sum;
    atomic_long ran;
    test_fib_arg f;
    long before;

    f.n = 20;
    pool_call(p, test_fib, &f);
    CHECK_EQ_I64(f.result, 6765);
    f.n = 19;
    test_fib(&f); /* pool_join from outside */
    CHECK_EQ_I64(f.result, 4181);
    f.n = 18;
    pool_call(p, nested_call, &f);
    CHECK_EQ_I64(f.result, 2584);

    atomic_store(&ran, 0);
    scope_round(&ran);               /* from outside */
    pool_call(p, scope_round, &ran); /* from a worker */
    CHECK_EQ_I64(atomic_load(&ran), 2 * NODES * (1 + LEAVES));

    atomic_store(&sum, 0);
    pool_parallel_for(p, 0, 100000, 0, sum_body, (void *)&sum);
    pool_parallel_for(p, 0, 100000, 1000, sum_body, (void *)&sum);
    pool_call(p, parallel_sum_from_worker, (void *)&sum);
    CHECK(atomic_load(&sum) == (uint64_t)2 * 100000 * 99999 / 2 + (uint64_t)20000 * 19999 / 2);

    before = atomic_load(&detached_ran);
    detached_submit(&outside_set);
    detached_wait(before + DETACHED);
    pool_call(p, detached_submit_from_worker, &worker_set);
    detached_wait(before + 2 * DETACHED);
    CHECK_EQ_I64(atomic_load(&detached_ran), before + 2 * DETACHED);
}

int main(void) {
    pool_config cfg;
    pool_stats st;
    int round, rounds = (int)test_scaled(200, 20);
    test_watchdog(120, "test_alloc");
    printf("test_alloc: the hot paths allocate nothing\n");

    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 4;
    CHECK(pool_create(&p, &cfg) == 0);
    if (!p) return 2;
    test_fib_pool = p;

    /* Warm-up: until every worker has started. */
    do {
        hot_paths();
        pool_stats_get(p, &st);
    } while (st.threads_started < 4);
    hot_paths();

#ifdef COUNTING_ALLOCATIONS
    if (test_under_valgrind()) {
        for (round = 0; round < rounds; round++) hot_paths();
        printf("  allocations not counted (valgrind replaces malloc); the workload ran and was "
               "checked\n");
    } else {
        long n;
        void *volatile probe;
        /* The counter itself must work, or a zero below proves nothing. */
        counting_start();
        probe = malloc(24);
        free(probe);
        n = counting_stop();
        CHECK_MSG(n == 1, "the allocation counter saw %ld allocations for 1", n);

        /* A worker that parks in a wait may have the pool start a spare
           thread (pool_stats.spares_started), which allocates its worker
           and deque like any thread start: those are not hot paths, and
           each is allowed THREAD_START_ALLOCATIONS (pthread_create may
           allocate too). Anything else must allocate nothing. */
        uint64_t threads_before, threads_added;
        pool_stats_get(p, &st);
        threads_before = st.threads_started + st.spares_started;
        counting_start();
        for (round = 0; round < rounds; round++) hot_paths();
        n = counting_stop();
        pool_stats_get(p, &st);
        threads_added = st.threads_started + st.spares_started - threads_before;
        CHECK_MSG(n <= (long)threads_added * THREAD_START_ALLOCATIONS,
                  "%ld allocations in %d rounds of the hot paths, %llu threads started", n, rounds,
                  (unsigned long long)threads_added);
        printf("  %d rounds of every hot path: %ld allocations, %llu spare threads started\n",
               rounds, n, (unsigned long long)threads_added);
    }
#else
    for (round = 0; round < rounds; round++) hot_paths();
    printf(
        "  allocations not counted (sanitizer or not glibc); the workload ran and was checked\n");
#endif

    CHECK_EQ_I64(pool_destroy(p), 0);
    if (test_failures()) {
        printf("test_alloc: %ld check(s) FAILED\n", test_failures());
        return 1;
    }
    printf("test_alloc: all checks passed\n");
    return 0;
}
