/* test_resize.c - changing the number of active workers of a running pool
 * (pool_set_active_threads, pool_active_threads, pool_config.active_threads).
 *
 * Tasks record the worker they start on, so which workers took work after
 * a change is exact once the workers above the count have stopped
 * (pool_stats.threads_retired says when). The parts:
 *   lower      4 workers lowered to 1: once the other three have stopped,
 *              2000 tasks from outside all start on worker 0; raised to 4
 *              again, four tasks that wait for each other (a barrier of 4)
 *              finish, so four workers run at once.
 *   busy       lowered to 1 and raised again, many times, while tasks
 *              spawn children into a scope onto their own deques: every
 *              task runs exactly once, the waits return.
 *   joins      fib(24) through pool_join while another thread changes the
 *              count at random: the result is exact.
 *   spare      1 active worker of 4 parks in a call into another pool that
 *              waits for a second task of the first pool: a stopped worker
 *              must stand in for the parked one and run it.
 *   initial    pool_config.active_threads 2 of 4: only workers 0 and 1
 *              take work until it is raised.
 *   destroy    a pool destroyed while workers are stopped: it returns, and
 *              runs what was queued; a change of the count from a task
 *              running while its pool is destroyed is refused (ECANCELED).
 *   errors     EINVAL for 0, a negative count and one above num_threads,
 *              at create and at run time.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#include <stdlib.h>

typedef struct where_task {
    pool_task task;
    atomic_int runs;
    int worker; /* where it started */
} where_task;

static void where_run(pool_task *t) {
    where_task *k = (where_task *)(void *)t;
    k->worker = pool_worker_index();
    atomic_fetch_add(&k->runs, 1);
}

static where_task *where_tasks(long n) {
    where_task *k = (where_task *)calloc((size_t)n, sizeof *k);
    long i;
    if (!k) exit(2);
    for (i = 0; i < n; i++) k[i].task.run = where_run;
    return k;
}

static long total_runs(where_task *k, long n) {
    long i, sum = 0;
    for (i = 0; i < n; i++) sum += atomic_load(&k[i].runs);
    return sum;
}

/* Waits until `n` workers have stopped above the active count. */
static void wait_retired(pool *p, uint64_t n) {
    pool_stats st;
    for (;;) {
        pool_stats_get(p, &st);
        if (st.threads_retired == n) return;
        test_sleep_us(200);
    }
}

/* Starts every worker of p: n detached tasks that wait for each other on a
   barrier. Detached, so that only workers run them: tasks spawned into a
   scope from here would be this thread's to run too while it waits in
   the scope (in an external slot), and with one of them on this thread
   the barrier fills with a worker fewer, which then never starts (and the
   retired count that the parts wait for is never reached). A task may be
   freed once its run has begun, so the array goes once every run has. */
static atomic_int barrier_in, barrier_out;
static int barrier_size;

static void barrier_run(pool_task *t) {
    (void)t;
    atomic_fetch_add(&barrier_in, 1);
    while (atomic_load(&barrier_in) < barrier_size) test_sleep_us(50);
    atomic_fetch_add(&barrier_out, 1);
}

static void run_barrier(pool *p, int n) {
    pool_task *tasks = (pool_task *)calloc((size_t)n, sizeof *tasks);
    int i;
    if (!tasks) exit(2);
    atomic_store(&barrier_in, 0);
    atomic_store(&barrier_out, 0);
    barrier_size = n;
    for (i = 0; i < n; i++) {
        tasks[i].run = barrier_run;
        CHECK_EQ_I64(pool_submit(p, &tasks[i]), 0);
    }
    while (atomic_load(&barrier_out) < n) test_sleep_us(100);
    free(tasks);
}

/* ---- lower ---- */

#define LOWER_TASKS 2000

static void part_lower(void) {
    pool_config cfg;
    pool *p;
    where_task *k = where_tasks(LOWER_TASKS);
    long i;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 4;
    cfg.external_slots = POOL_EXTERNAL_SLOTS_NONE; /* the barrier's waiter only blocks */
    p = test_pool_cfg(&cfg);
    test_watchdog(60, "test_resize lower: workers above a lowered count did not stop, or raised "
                      "ones did not come back");
    printf("  lower: 4 workers lowered to 1, then raised to 4\n");
    run_barrier(p, 4); /* every worker started */
    CHECK_EQ_I64(pool_active_threads(p), 4);
    CHECK_EQ_I64(pool_set_active_threads(p, 1), 0);
    CHECK_EQ_I64(pool_active_threads(p), 1);
    wait_retired(p, 3);
    for (i = 0; i < LOWER_TASKS; i++) CHECK_EQ_I64(pool_submit(p, &k[i].task), 0);
    while (total_runs(k, LOWER_TASKS) < LOWER_TASKS) test_sleep_us(200);
    for (i = 0; i < LOWER_TASKS; i++) {
        CHECK_EQ_I64(atomic_load(&k[i].runs), 1);
        CHECK_EQ_I64(k[i].worker, 0);
    }
    CHECK_EQ_I64(pool_set_active_threads(p, 4), 0);
    run_barrier(p, 4); /* hangs (watchdog) unless four workers take work again */
    wait_retired(p, 0);
    free(k);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- busy ---- */

#define BUSY_PARENTS 200
#define BUSY_CHILDREN 20

typedef struct parent_task {
    pool_task task;
    pool_scope *scope;
    where_task children[BUSY_CHILDREN];
} parent_task;

static void parent_run(pool_task *t) {
    parent_task *pt = (parent_task *)(void *)t;
    int i;
    for (i = 0; i < BUSY_CHILDREN; i++) { /* from a worker: onto its own deque */
        CHECK_EQ_I64(pool_scope_spawn(pt->scope, &pt->children[i].task), 0);
        if (i % 4 == 0) test_sleep_us(10);
    }
}

static pool *busy_pool;
static atomic_int busy_stop;

static void *flipper(void *arg) {
    uint64_t rng = 0xF1F0ull;
    (void)arg;
    while (!atomic_load(&busy_stop)) {
        CHECK_EQ_I64(pool_set_active_threads(busy_pool, (int)(test_rand(&rng) % 4) + 1), 0);
        test_sleep_us((long)(test_rand(&rng) % 300));
    }
    return NULL;
}

static void part_busy(void) {
    parent_task *parents = (parent_task *)calloc(BUSY_PARENTS, sizeof *parents);
    pthread_t th;
    int round, i, j;
    if (!parents) exit(2);
    busy_pool = test_pool(4);
    printf("  busy: the count changed at random while tasks spawn onto their deques\n");
    atomic_store(&busy_stop, 0);
    CHECK_EQ_I64(pthread_create(&th, NULL, flipper, NULL), 0);
    for (round = 0; round < (int)test_scaled(20, 4); round++) {
        pool_scope s;
        test_watchdog(60, "test_resize busy: a task stranded on a stopped worker's deque");
        pool_scope_init(&s, busy_pool);
        for (i = 0; i < BUSY_PARENTS; i++) {
            parents[i].task.run = parent_run;
            parents[i].scope = &s;
            for (j = 0; j < BUSY_CHILDREN; j++) {
                parents[i].children[j].task.run = where_run;
                atomic_store(&parents[i].children[j].runs, 0);
            }
            CHECK_EQ_I64(pool_scope_spawn(&s, &parents[i].task), 0);
        }
        pool_scope_wait(&s);
        for (i = 0; i < BUSY_PARENTS; i++)
            for (j = 0; j < BUSY_CHILDREN; j++)
                CHECK_EQ_I64(atomic_load(&parents[i].children[j].runs), 1);
    }
    atomic_store(&busy_stop, 1);
    pthread_join(th, NULL);
    free(parents);
    CHECK_EQ_I64(pool_destroy(busy_pool), 0);
}

/* ---- joins ---- */

static void part_joins(void) {
    pthread_t th;
    int round;
    test_fib_pool = busy_pool = test_pool(4);
    printf("  joins: fib(24) through pool_join while the count changes\n");
    atomic_store(&busy_stop, 0);
    CHECK_EQ_I64(pthread_create(&th, NULL, flipper, NULL), 0);
    for (round = 0; round < (int)test_scaled(30, 5); round++) {
        test_fib_arg f = {24, 0};
        test_watchdog(60, "test_resize joins: a join did not complete while the count changed");
        pool_call(busy_pool, test_fib, &f);
        CHECK_EQ_I64(f.result, 46368);
    }
    atomic_store(&busy_stop, 1);
    pthread_join(th, NULL);
    CHECK_EQ_I64(pool_destroy(busy_pool), 0);
}

/* ---- spare ---- */

static pool *spare_home, *spare_other;
static atomic_int first_started, second_ran;

static void wait_for_second(void *arg) { /* on spare_other, for a task of spare_home */
    (void)arg;
    while (!atomic_load(&second_ran)) test_sleep_us(100);
}

static void first_run(pool_task *t) {
    (void)t;
    atomic_store(&first_started, 1);
    pool_call(spare_other, wait_for_second, NULL); /* parks spare_home's active worker */
}

static void second_run(pool_task *t) {
    (void)t;
    atomic_store(&second_ran, 1);
}

static void part_spare(void) {
    pool_task first = POOL_TASK_INIT(first_run), second = POOL_TASK_INIT(second_run);
    spare_home = test_pool(4);
    spare_other = test_pool(1);
    test_watchdog(30, "test_resize spare: the one active worker parked in a wait, and no stopped "
                      "worker stood in for it");
    printf("  spare: the one active worker parks; a stopped worker stands in\n");
    run_barrier(spare_home, 4);
    CHECK_EQ_I64(pool_set_active_threads(spare_home, 1), 0);
    wait_retired(spare_home, 3);
    atomic_store(&first_started, 0);
    atomic_store(&second_ran, 0);
    CHECK_EQ_I64(pool_submit(spare_home, &first), 0);
    while (!atomic_load(&first_started)) test_sleep_us(100); /* not taken together with it */
    CHECK_EQ_I64(pool_submit(spare_home, &second), 0);
    while (!atomic_load(&second_ran)) test_sleep_us(100);
    CHECK_EQ_I64(pool_destroy(spare_home), 0);
    CHECK_EQ_I64(pool_destroy(spare_other), 0);
}

/* ---- initial ---- */

static void part_initial(void) {
    pool_config cfg;
    pool *p;
    where_task *k = where_tasks(500);
    long i;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 4;
    cfg.active_threads = 2;
    p = test_pool_cfg(&cfg);
    test_watchdog(30, "test_resize initial");
    printf("  initial: active_threads 2 of 4\n");
    CHECK_EQ_I64(pool_active_threads(p), 2);
    CHECK_EQ_I64(pool_num_threads(p), 4);
    for (i = 0; i < 500; i++) CHECK_EQ_I64(pool_submit(p, &k[i].task), 0);
    while (total_runs(k, 500) < 500) test_sleep_us(200);
    for (i = 0; i < 500; i++) CHECK(k[i].worker == 0 || k[i].worker == 1);
    CHECK_EQ_I64(pool_set_active_threads(p, 4), 0);
    run_barrier(p, 4);
    free(k);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- destroy ---- */

static pool *dying;
static atomic_int doomed_started, doomed_rc;

static void doomed_run(pool_task *t) { /* runs while its pool is destroyed */
    static where_task probe;           /* static: it may still be queued when this returns */
    (void)t;
    probe.task.run = where_run;
    atomic_store(&doomed_started, 1);
    while (pool_submit(dying, &probe.task) != ECANCELED) test_sleep_us(100); /* destroy began */
    atomic_store(&doomed_rc, pool_set_active_threads(dying, 1));
}

static void part_destroy(void) {
    pool *p = test_pool(4);
    where_task *k = where_tasks(100);
    long i;
    test_watchdog(30, "test_resize destroy: destroy of a pool with stopped workers hangs");
    printf("  destroy: a pool with stopped workers\n");
    run_barrier(p, 4);
    CHECK_EQ_I64(pool_set_active_threads(p, 1), 0);
    wait_retired(p, 3);
    for (i = 0; i < 100; i++) CHECK_EQ_I64(pool_submit(p, &k[i].task), 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
    CHECK_EQ_I64(total_runs(k, 100), 100);
    free(k);
    /* a change once the destroy has begun: refused */
    {
        pool_task doomed = POOL_TASK_INIT(doomed_run);
        dying = test_pool(2);
        CHECK_EQ_I64(pool_submit(dying, &doomed), 0);
        while (!atomic_load(&doomed_started)) test_sleep_us(100);
        CHECK_EQ_I64(pool_destroy(dying), 0);
        CHECK_EQ_I64(atomic_load(&doomed_rc), ECANCELED);
    }
}

/* ---- errors ---- */

static void part_errors(void) {
    pool_config cfg;
    pool *p = NULL;
    test_watchdog(30, "test_resize errors");
    printf("  errors: EINVAL\n");
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    cfg.active_threads = 3;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    cfg.active_threads = -1;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    cfg.active_threads = 0;
    p = test_pool_cfg(&cfg);
    CHECK_EQ_I64(pool_active_threads(p), 2);
    CHECK_EQ_I64(pool_set_active_threads(p, 0), EINVAL);
    CHECK_EQ_I64(pool_set_active_threads(p, -1), EINVAL);
    CHECK_EQ_I64(pool_set_active_threads(p, 3), EINVAL);
    CHECK_EQ_I64(pool_active_threads(p), 2);
    CHECK_EQ_I64(pool_set_active_threads(p, 2), 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

static const test_part parts[] = {
    {"lower", part_lower},   {"busy", part_busy},       {"joins", part_joins},
    {"spare", part_spare},   {"initial", part_initial}, {"destroy", part_destroy},
    {"errors", part_errors},
};

int main(int argc, char **argv) {
    test_run_parts(argc, argv, parts, sizeof parts / sizeof parts[0]);
    return test_finish("test_resize");
}
