/* test_allocfail.c - allocation failing at each allocation.
 *
 * The pool allocates through POOL_MALLOC / POOL_FREE, which this test
 * routes to a counting allocator that fails by a schedule: only the k-th
 * allocation, or every allocation from the k-th on, for every k from 0 to
 * one past the number a full run makes. Each run creates a pool of 4 and
 * runs fork-join from outside, a scope of 1000 tasks spawned by a task (its
 * deque must grow past 256, or the spawns go elsewhere), a batch of 1000
 * detached tasks submitted by a task, and an exact parallel_for sum, then
 * destroys the pool. Every run must end one of two ways: pool_create
 * returns ENOMEM, or all the work completes exactly once (except a batch
 * refused with EAGAIN, untaken, when no thread could start). Either way every
 * allocation is freed by the end, and nothing hangs (watchdog).
 * With every allocation failing, the default pool cannot be created: a
 * scope of it runs each spawn at once on the spawner, but refuses (EBUSY,
 * not run) a task still queued elsewhere, here in an inbox.
 */
#include <stdatomic.h>
#include <stdlib.h>

static void *test_malloc(size_t size);
static void test_free(void *ptr);
#define POOL_MALLOC(size, user) ((void)(user), test_malloc(size))
#define POOL_FREE(ptr, user) ((void)(user), test_free(ptr))
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

/* ------------------------------------------------------------------------ */
/* The failing allocator                                                    */
/* ------------------------------------------------------------------------ */

static atomic_long calls, live;
static long fail_at = -1; /* set between runs, while no pool exists */
static int fail_from;     /* 1: every call from fail_at on fails */

static void *test_malloc(size_t size) {
    long call = atomic_fetch_add(&calls, 1);
    void *ptr;
    if (fail_at >= 0 && (call == fail_at || (fail_from && call > fail_at))) return NULL;
    ptr = malloc(size);
    if (ptr) atomic_fetch_add(&live, 1);
    return ptr;
}

static void test_free(void *ptr) {
    if (ptr) atomic_fetch_sub(&live, 1);
    free(ptr);
}

/* ------------------------------------------------------------------------ */
/* The workload                                                             */
/* ------------------------------------------------------------------------ */

static pool *p;

#define MANY 1000

static atomic_int ran[2][MANY];
static pool_task tasks[2][MANY];
static pool_task *batch[MANY];

static int batch_rc;

static void scope_task(pool_task *t) { atomic_fetch_add(&ran[0][t - tasks[0]], 1); }
static void detached_task(pool_task *t) { atomic_fetch_add(&ran[1][t - tasks[1]], 1); }

/* On a worker: a scope of MANY and a batch of MANY, both past one deque. */
static void spawn_many(void *arg) {
    pool_scope s;
    int i;
    (void)arg;
    pool_scope_init(&s, p);
    for (i = 0; i < MANY; i++) {
        tasks[0][i] = (pool_task)POOL_TASK_INIT(scope_task);
        CHECK(pool_scope_spawn(&s, &tasks[0][i]) == 0);
    }
    pool_scope_wait(&s);
    for (i = 0; i < MANY; i++) {
        tasks[1][i] = (pool_task)POOL_TASK_INIT(detached_task);
        batch[i] = &tasks[1][i];
    }
    /* EAGAIN (untaken) only if no thread could start: then this runs on
       the outside thread that called pool_call (in an external slot, or
       as no pool's worker when the slots could not be made), not on a
       worker. */
    batch_rc = pool_submit_batch(p, batch, MANY);
    {
        pool_stats st;
        pool_stats_get(p, &st);
        int index = pool_worker_index();
        CHECK(batch_rc == 0 || (batch_rc == EAGAIN && st.threads_started == 0 &&
                                (index < 0 || index >= pool_num_threads(p) + 256)));
    }
}

static void sum_body(void *arg, size_t lo, size_t hi) {
    uint64_t local = 0;
    size_t i;
    for (i = lo; i < hi; i++) local += i;
    atomic_fetch_add((_Atomic uint64_t *)arg, local);
}

/* One run; returns 1 if the pool was created. */
static int run_once(const char *label) {
    pool_config cfg;
    test_fib_arg f;
    _Atomic uint64_t sum = 0;
    int i, k, rc, bad = 0;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 4;
    memset(ran, 0, sizeof ran);
    rc = pool_create(&p, &cfg);
    test_fib_pool = p;
    if (rc != 0) {
        CHECK_MSG(rc == ENOMEM && p == NULL, "%s: pool_create returned %d", label, rc);
        CHECK_MSG(atomic_load(&live) == 0, "%s: %ld blocks leaked by a failed pool_create", label,
                  (long)atomic_load(&live));
        return 0;
    }
    f.n = 18;
    pool_call(p, test_fib, &f);
    CHECK_MSG(f.result == 2584, "%s: fib(18) = %ld", label, f.result);
    pool_call(p, spawn_many, NULL);
    pool_parallel_for(p, 0, 50000, 0, sum_body, (void *)&sum);
    CHECK_MSG(atomic_load(&sum) == (uint64_t)50000 * 49999 / 2, "%s: parallel_for sum", label);
    CHECK_MSG(pool_destroy(p) == 0, "%s: pool_destroy failed", label);
    for (k = 0; k < 2; k++)
        for (i = 0; i < MANY; i++) bad += atomic_load(&ran[k][i]) != (k == 1 && batch_rc ? 0 : 1);
    CHECK_MSG(bad == 0, "%s: %d tasks did not run exactly once", label, bad);
    CHECK_MSG(atomic_load(&live) == 0, "%s: %ld blocks leaked", label, (long)atomic_load(&live));
    return 1;
}

static atomic_int no_pool_runs;
static void no_pool_task(pool_task *t) {
    (void)t;
    atomic_fetch_add(&no_pool_runs, 1);
}

static void no_default_pool(void) {
    pool_task t = POOL_TASK_INIT(no_pool_task);
    pool_inbox box;
    pool_scope s;
    size_t ran = 0;
    fail_at = 0, fail_from = 1; /* every allocation fails */
    pool_scope_init(&s, NULL);
    CHECK_EQ_I64(pool_scope_spawn(&s, &t), 0); /* run at once */
    CHECK_EQ_I64(atomic_load(&no_pool_runs), 1);
    CHECK_EQ_I64(pool_inbox_init(&box), 0);
    CHECK_EQ_I64(pool_inbox_post(&box, &t), 0);
    CHECK_EQ_I64(pool_scope_spawn(&s, &t), EBUSY); /* queued in the inbox */
    CHECK_EQ_I64(atomic_load(&no_pool_runs), 1);
    CHECK_EQ_I64(pool_scope_wait_status(&s), 0);
    CHECK_EQ_I64(pool_inbox_run(&box, &ran), 0);
    CHECK_EQ_I64(ran, 1);
    CHECK_EQ_I64(atomic_load(&no_pool_runs), 2);
    CHECK_EQ_I64(pool_inbox_destroy(&box), 0);
    CHECK_EQ_I64(atomic_load(&live), 0);
    fail_at = -1, fail_from = 0;
}

int main(void) {
    long total, k;
    int created = 0, refused = 0;
    char label[64];
    test_watchdog(240, "test_allocfail");
    printf("test_allocfail: allocation failing at each allocation\n");

    fail_at = -1;
    atomic_store(&calls, 0);
    CHECK(run_once("no failure"));
    total = atomic_load(&calls);
    printf("  a full run makes %ld allocations\n", total);

    for (fail_from = 0; fail_from <= 1; fail_from++) {
        for (k = 0; k <= total; k++) {
            snprintf(label, sizeof label, "fail %s allocation %ld", fail_from ? "from" : "only", k);
            fail_at = k;
            atomic_store(&calls, 0);
            if (run_once(label)) created++;
            else refused++;
            test_watchdog(240, label);
        }
    }
    printf("  %d runs: pool_create refused %d cleanly, %d completed all work\n", created + refused,
           refused, created);
    no_default_pool();
    if (test_failures()) {
        printf("test_allocfail: %ld check(s) FAILED\n", test_failures());
        return 1;
    }
    printf("test_allocfail: all checks passed\n");
    return 0;
}
