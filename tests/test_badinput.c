/* test_badinput.c - the bad-input contract (README, "Bad input"): every
 * public function given every kind of bad input returns the documented
 * errno value or does the documented nothing, and never crashes or hangs.
 * Each check is labelled with its row of the README table.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

static atomic_int calls;

static void count_call(void *arg) {
    (void)arg;
    atomic_fetch_add(&calls, 1);
}

static void count_range(void *arg, size_t lo, size_t hi) {
    (void)arg;
    atomic_fetch_add(&calls, (int)(hi - lo));
}

static void count_task(pool_task *t) {
    (void)t;
    atomic_fetch_add(&calls, 1);
}

static void rows_create_destroy(void) {
    pool_config cfg;
    pool *p = (pool *)&cfg;                        /* must come back NULL */
    CHECK_EQ_I64(pool_create(NULL, NULL), EINVAL); /* row: NULL out-pointer */
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = -1;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL); /* row: num_threads < 0 */
    CHECK(p == NULL);
    cfg.num_threads = 65536;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL); /* row: num_threads > 65535 */
    cfg.num_threads = 0;
    cfg.max_blocking_threads = -1;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL); /* row: max_blocking_threads < 0 */
    cfg.max_blocking_threads = 0;
    cfg.max_spare_threads = -1;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL); /* row: max_spare_threads out of range */
    cfg.max_spare_threads = 65536;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    cfg.max_spare_threads = 0;
    cfg.spin_us = 1000001;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL); /* row: spin_us over 1 s */
    cfg.spin_us = 0;
    cfg.heartbeat_us = 1000001;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL); /* row: heartbeat_us over 1 s */
    cfg.heartbeat_us = POOL_HEARTBEAT_OFF - 1;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    cfg.heartbeat_us = POOL_HEARTBEAT_OFF; /* none: accepted */
    CHECK_EQ_I64(pool_create(&p, &cfg), 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
    cfg.heartbeat_us = 0;
    cfg.spawn_throttle = 65536;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL); /* row: spawn_throttle over 65535 */
    cfg.spawn_throttle = POOL_SPAWN_THROTTLE_OFF - 1;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    cfg.spawn_throttle = 65535; /* the most: accepted */
    CHECK_EQ_I64(pool_create(&p, &cfg), 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
    cfg.spawn_throttle = POOL_SPAWN_THROTTLE_OFF; /* off: accepted */
    CHECK_EQ_I64(pool_create(&p, &cfg), 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
    cfg.spawn_throttle = 0;
    cfg.spawn_throttle_outside = 2;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL); /* row: a field out of range */
    cfg.spawn_throttle_outside = POOL_SPAWN_THROTTLE_OUTSIDE_OFF - 1;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    cfg.spawn_throttle_outside = POOL_SPAWN_THROTTLE_OUTSIDE_OFF; /* off: accepted */
    CHECK_EQ_I64(pool_create(&p, &cfg), 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
    cfg.spawn_throttle_outside = 1; /* on: accepted */
    CHECK_EQ_I64(pool_create(&p, &cfg), 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
    cfg.spawn_throttle_outside = 0;
    cfg.external_slots = 31;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL); /* row: external_slots over 30 */
    cfg.external_slots = POOL_EXTERNAL_SLOTS_NONE - 1;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL); /* ... or below -1 */
    cfg.external_slots = 30;                     /* the most: accepted */
    CHECK_EQ_I64(pool_create(&p, &cfg), 0);
    CHECK_EQ_I64(pool_worker_index_limit(p), pool_num_threads(p) + 256 + 30);
    CHECK_EQ_I64(pool_destroy(p), 0);
    cfg.external_slots = POOL_EXTERNAL_SLOTS_NONE; /* none: accepted */
    CHECK_EQ_I64(pool_create(&p, &cfg), 0);
    CHECK_EQ_I64(pool_worker_index_limit(p), pool_num_threads(p) + 256);
    CHECK_EQ_I64(pool_destroy(p), 0);
    cfg.external_slots = 0;
    cfg.stack_size = 1;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL); /* row: stack_size refused */
    cfg.stack_size =
        SIZE_MAX; /* accepted by pthread_attr_setstacksize, refused by pthread_create */
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    CHECK(p == NULL);
    cfg.stack_size = 0;
    CHECK_EQ_I64(pool_destroy(NULL), EINVAL); /* row: destroy(NULL) */
    CHECK_EQ_I64(pool_destroy_fast(NULL), EINVAL);
}

/* row: destroy from inside a task of the pool, worker or blocking thread */
static pool *deadlock_pool;
static int deadlock_rc[2];

static void destroy_from_worker(void *arg) {
    (void)arg;
    deadlock_rc[0] = pool_destroy(deadlock_pool);
}

static void destroy_from_blocking(pool_blocking_job *job) {
    (void)job;
    deadlock_rc[1] = pool_destroy_fast(deadlock_pool);
}

static void rows_deadlock(void) {
    pool_blocking_job job = POOL_BLOCKING_JOB_INIT(destroy_from_blocking);
    deadlock_pool = test_pool(2);
    pool_call(deadlock_pool, destroy_from_worker, NULL); /* in an external slot */
    CHECK_EQ_I64(deadlock_rc[0], EDEADLK);
    deadlock_rc[0] = -1;
    pool_call_on_worker(deadlock_pool, destroy_from_worker, NULL);
    CHECK(pool_submit_blocking_job(deadlock_pool, &job) == 0);
    CHECK_EQ_I64(pool_wait_blocking_job(&job), 0);
    CHECK_EQ_I64(deadlock_rc[0], EDEADLK);
    CHECK_EQ_I64(deadlock_rc[1], EDEADLK);
    CHECK_EQ_I64(pool_destroy(deadlock_pool), 0); /* and the pool still works */
}

static void rows_fork_join(pool *p) {
    atomic_store(&calls, 0);
    pool_join(p, NULL, NULL, NULL, NULL); /* row: join with NULL functions */
    pool_join(p, count_call, NULL, NULL, NULL);
    pool_join(p, NULL, NULL, count_call, NULL);
    pool_call(p, NULL, NULL); /* row: call with NULL fn */
    pool_call_on_worker(p, NULL, NULL);
    CHECK_EQ_I64(atomic_load(&calls), 2);
    atomic_store(&calls, 0);
    pool_parallel_for(p, 5, 5, 0, count_range, NULL); /* row: empty range */
    pool_parallel_for(p, 6, 5, 0, count_range, NULL); /* row: begin > end */
    pool_parallel_for(p, 0, 100, 0, NULL, NULL);      /* row: NULL body */
    pool_parallel_for(p, 7, 8, 0, count_range, NULL); /* one element */
    CHECK_EQ_I64(atomic_load(&calls), 1);
}

static void rows_scope_and_submit(void) {
    pool *p = test_pool(1);
    test_gate gate = TEST_GATE_INIT; /* holds the only worker: what follows stays queued */
    pool_task t = POOL_TASK_INIT(count_task);
    pool_task u = POOL_TASK_INIT(count_task), no_run = POOL_TASK_INIT(NULL);
    pool_task *with_null[2] = {&u, NULL}, *twice[2] = {&u, &u};
    pool_scope s;
    pool_stats st;

    pool_scope_init(NULL, p);                           /* row: scope_init(NULL): nothing */
    pool_scope_wait(NULL);                              /* row: scope_wait(NULL): nothing */
    CHECK_EQ_I64(pool_scope_wait_status(NULL), EINVAL); /* row: scope_wait_status(NULL) */
    pool_scope_init(&s, p);
    CHECK_EQ_I64(pool_scope_spawn(NULL, &t), EINVAL); /* row: scope_spawn bad args */
    CHECK_EQ_I64(pool_scope_spawn(&s, NULL), EINVAL);
    CHECK_EQ_I64(pool_scope_spawn(&s, &no_run), EINVAL);
    CHECK_EQ_I64(pool_scope_cancel(NULL), EINVAL); /* row: scope_cancel, _on_cancel(NULL) */
    CHECK_EQ_I64(pool_scope_on_cancel(NULL, count_task), EINVAL);
    CHECK_EQ_I64(pool_scope_cancelled(NULL), 0); /* row: scope_cancelled(NULL): 0 */
    /* row: a spawn into a cancelled scope: ECANCELED, not taken, and the
       scope says it is cancelled; its wait ends the cancel */
    CHECK_EQ_I64(pool_scope_cancel(&s), 0);
    CHECK_EQ_I64(pool_scope_spawn(&s, &t), ECANCELED);
    CHECK(pool_scope_cancelled(&s));
    CHECK_EQ_I64(pool_scope_wait_status(&s), ECANCELED);
    CHECK(!pool_scope_cancelled(&s));
    CHECK_EQ_I64(pool_submit(p, NULL), EINVAL); /* row: submit bad args */
    CHECK_EQ_I64(pool_submit(p, &no_run), EINVAL);
    CHECK_EQ_I64(pool_submit_batch(p, NULL, 3), EINVAL);
    CHECK_EQ_I64(pool_submit_batch(p, with_null, 2), EINVAL);
    CHECK_EQ_I64(pool_submit_batch(p, NULL, 0), 0);
    /* row: pool_set_active_threads out of range: EINVAL, unchanged */
    CHECK_EQ_I64(pool_set_active_threads(p, 0), EINVAL);
    CHECK_EQ_I64(pool_set_active_threads(p, pool_num_threads(p) + 1), EINVAL);
    CHECK_EQ_I64(pool_active_threads(p), pool_num_threads(p));
    /* row: a priority that is neither level: EINVAL, not taken */
    CHECK_EQ_I64(pool_submit_priority(p, &t, (pool_priority)2), EINVAL);
    CHECK_EQ_I64(pool_scope_spawn_priority(&s, &t, (pool_priority)-1), EINVAL);
    CHECK_EQ_I64(pool_submit_priority(p, NULL, POOL_PRIORITY_HIGH), EINVAL);
    /* row: a pinned task's worker out of range, or a bad task: EINVAL */
    CHECK_EQ_I64(pool_submit_pinned(p, -1, &t), EINVAL);
    CHECK_EQ_I64(pool_submit_pinned(p, pool_num_threads(p), &t), EINVAL);
    CHECK_EQ_I64(pool_submit_pinned(p, 0, NULL), EINVAL);
    CHECK_EQ_I64(pool_submit_pinned(p, 0, &no_run), EINVAL);

    /* row: a task submitted again while still queued: EBUSY, and it runs once */
    atomic_store(&calls, 0);
    CHECK(pool_submit(p, &gate.task) == 0);
    /* Only once the gate holds the worker: submitted together, both could
       be taken at once from the injector, a stack, and t run first (seen
       under qemu, where a thread takes long to start). */
    test_gate_wait_entered(&gate);
    CHECK(pool_submit(p, &t) == 0);
    CHECK_EQ_I64(pool_submit(p, &t), EBUSY);
    CHECK_EQ_I64(pool_scope_spawn(&s, &t), EBUSY);
    CHECK_EQ_I64(pool_submit_priority(p, &t, POOL_PRIORITY_HIGH), EBUSY);
    CHECK_EQ_I64(pool_submit_pinned(p, 0, &t), EBUSY);
    CHECK_EQ_I64(pool_submit_blocking(p, &t), EBUSY);
    CHECK_EQ_I64(pool_submit_batch(p, twice, 2), EBUSY); /* u twice in one batch */
    CHECK(pool_submit(p, &u) == 0);                      /* and u was left unmarked */
    test_gate_open(&gate);
    pool_scope_wait(&s); /* row: a scope with nothing spawned returns at once */
    pool_scope_wait(&s); /* row: a scope waited twice: the second returns at once */
    while (atomic_load(&calls) < 2) test_sleep_us(100);
    CHECK(pool_submit(p, &t) == 0); /* after it ran, it may be submitted again */
    while (atomic_load(&calls) < 3) test_sleep_us(100);
    test_sleep_us(2000);
    CHECK_EQ_I64(atomic_load(&calls), 3);

    pool_stats_get(p, NULL); /* row: stats_get(NULL out): nothing */
    pool_stats_get(p, &st);
    CHECK_EQ_I64(st.jobs_run, 4);
    CHECK_EQ_I64(pool_worker_index(), -1); /* row: worker_index off the pool */
    CHECK_EQ_I64(pool_destroy(p), 0);
}

static void rows_blocking(void) {
    pool_blocking_job no_run = POOL_BLOCKING_JOB_INIT(NULL), never = POOL_BLOCKING_JOB_INIT(NULL);
    pool_task t = POOL_TASK_INIT(NULL);
    CHECK_EQ_I64(pool_submit_blocking(NULL, NULL), EINVAL); /* row: blocking bad args */
    CHECK_EQ_I64(pool_submit_blocking(NULL, &t), EINVAL);
    CHECK_EQ_I64(pool_submit_blocking_job(NULL, NULL), EINVAL);
    CHECK_EQ_I64(pool_submit_blocking_job(NULL, &no_run), EINVAL);
    CHECK_EQ_I64(pool_wait_blocking_job(NULL), EINVAL);
    CHECK_EQ_I64(pool_wait_blocking_job(&never), EINVAL); /* row: wait, never submitted */
}

static pool_inbox other_threads_box;

static void *run_others_inbox(void *arg) {
    size_t ran = 1;
    (void)arg;
    CHECK_EQ_I64(pool_inbox_run(&other_threads_box, &ran), EPERM); /* row: inbox not the owner's */
    CHECK_EQ_I64(ran, 0);
    CHECK_EQ_I64(pool_inbox_wait(&other_threads_box, 0), EPERM);
    return NULL;
}

static void rows_inbox(void) {
    pool_task t = POOL_TASK_INIT(count_task), no_run = POOL_TASK_INIT(NULL);
    pthread_t other;
    size_t ran = 1;
    CHECK_EQ_I64(pool_inbox_init(NULL), EINVAL); /* row: inbox NULL */
    CHECK_EQ_I64(pool_inbox_post(NULL, &t), EINVAL);
    CHECK_EQ_I64(pool_inbox_run(NULL, &ran), EINVAL);
    CHECK_EQ_I64(ran, 0);
    CHECK_EQ_I64(pool_inbox_wait(NULL, 0), EINVAL);
    CHECK_EQ_I64(pool_inbox_destroy(NULL), EINVAL);
#ifdef _WIN32
    CHECK(pool_inbox_handle(NULL) == 0);
#else
    CHECK(pool_inbox_handle(NULL) == -1);
#endif
    CHECK_EQ_I64(pool_inbox_init(&other_threads_box), 0);
    CHECK_EQ_I64(pool_inbox_post(&other_threads_box, NULL), EINVAL); /* row: inbox bad task */
    CHECK_EQ_I64(pool_inbox_post(&other_threads_box, &no_run), EINVAL);
    CHECK_EQ_I64(pool_inbox_wait(&other_threads_box, -2), EINVAL); /* row: inbox timeout < -1 */
    CHECK_EQ_I64(pool_inbox_post(&other_threads_box, &t), 0);
    CHECK_EQ_I64(pool_inbox_post(&other_threads_box, &t), EBUSY); /* row: inbox posted twice */
    CHECK(pthread_create(&other, NULL, run_others_inbox, NULL) == 0);
    pthread_join(other, NULL);
    CHECK_EQ_I64(pool_inbox_destroy(&other_threads_box), EBUSY); /* row: inbox destroyed full */
    atomic_store(&calls, 0);
    CHECK_EQ_I64(pool_inbox_run(&other_threads_box, &ran), 0);
    CHECK_EQ_I64(ran, 1);
    CHECK_EQ_I64(atomic_load(&calls), 1);
    CHECK_EQ_I64(pool_inbox_destroy(&other_threads_box), 0);
}

static void rows_introspection_and_pinning(void) {
    pool_config cfg;
    pool_worker_stats ws;
    pool *p = (pool *)&cfg;
    int cpu_low = -1, cpu_high = 1024;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_cpus = -1; /* row: CPU list */
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    CHECK(p == NULL);
    cfg.num_cpus = 1;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    cfg.cpus = &cpu_low;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    cfg.cpus = &cpu_high;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    CHECK(p == NULL);
    p = test_pool(2);
    CHECK_EQ_I64(pool_worker_stats_get(p, 0, NULL), EINVAL); /* row: worker_stats_get */
    CHECK_EQ_I64(pool_worker_stats_get(p, -1, &ws), EINVAL);
    CHECK_EQ_I64(pool_worker_stats_get(p, pool_worker_index_limit(p), &ws), EINVAL);
    CHECK_EQ_I64(pool_worker_stats_get(p, 2, &ws), 0); /* a spare's slot, not started */
    CHECK_EQ_I64(ws.started, 0);
    CHECK_EQ_I64(pool_worker_stats_get(p, INT_MAX, &ws), EINVAL);
    CHECK_EQ_I64(pool_stats_print(p, NULL), EINVAL); /* row: stats_print */
    CHECK_EQ_I64(pool_trace_write(p, NULL), EINVAL); /* row: trace_write */
    CHECK_EQ_I64(pool_trace_write(p, "/tmp/never-written.json"), ENOTSUP);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

int main(void) {
    pool *p;
    test_watchdog(60, "test_badinput");
    printf("test_badinput: the bad-input contract\n");
    rows_create_destroy();
    rows_deadlock();
    p = test_pool(2);
    rows_fork_join(p);
    rows_fork_join(NULL); /* row: a NULL pool means the default pool */
    CHECK(pool_num_threads(NULL) >= 1);
    CHECK_EQ_I64(pool_destroy(p), 0);
    rows_scope_and_submit();
    rows_blocking();
    rows_inbox();
    rows_introspection_and_pinning(); /* the fork row: test_fork */
    if (test_failures()) {
        printf("test_badinput: %ld check(s) FAILED\n", test_failures());
        return 1;
    }
    printf("test_badinput: all checks passed\n");
    return 0;
}
