/* test_threads.c - thread settings and the default pool.
 *
 *  - name: workers are named "<prefix>-<index>" ("pool-<index>" by
 *    default), a long prefix is cut so the name fits Linux's 15 characters;
 *  - on_thread_start / on_thread_exit run on the worker thread itself,
 *    with its index and the configured user pointer, start before the
 *    worker runs any task, each exactly once per started thread;
 *  - stack_size: a worker's stack is at least the size asked for; a size
 *    the system refuses makes pool_create fail with EINVAL;
 *  - lazy start: a new pool has no thread; one pool_call starts exactly
 *    one; a batch of sleeping tasks from outside starts every thread (each
 *    worker that steals and leaves work behind starts the next);
 *  - the default pool: 16 threads released at once all make their first
 *    call with a NULL pool; exactly one default pool is created (one set
 *    of "pool-N" threads, and its counters saw all 16 calls).
 */
#define _GNU_SOURCE /* pthread_getattr_np, in test_thread_stack_size */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#define MAX_WORKERS 8

/* ------------------------------------------------------------------------ */
/* Names and hooks                                                          */
/* ------------------------------------------------------------------------ */

typedef struct hook_log {
    atomic_int started[MAX_WORKERS], exited[MAX_WORKERS];
    pthread_t thread[MAX_WORKERS];
    char name[MAX_WORKERS][16];
    atomic_int wrong_thread, wrong_index;
} hook_log;

static void on_start(void *user, int index) {
    hook_log *log = (hook_log *)user;
    if (index < 0 || index >= MAX_WORKERS || pool_worker_index() != index) {
        atomic_fetch_add(&log->wrong_index, 1);
        return;
    }
    log->thread[index] = pthread_self();
    test_thread_name(log->name[index]);
    atomic_fetch_add(&log->started[index], 1);
}

static void on_exit_hook(void *user, int index) {
    hook_log *log = (hook_log *)user;
    if (index < 0 || index >= MAX_WORKERS || pool_worker_index() != index) {
        atomic_fetch_add(&log->wrong_index, 1);
        return;
    }
    if (!pthread_equal(log->thread[index], pthread_self())) atomic_fetch_add(&log->wrong_thread, 1);
    atomic_fetch_add(&log->exited[index], 1);
}

/* A task that checks it runs on a worker whose start hook has run. */
typedef struct probe {
    hook_log *log;
    atomic_int ran, before_start;
    size_t min_stack;
    atomic_int small_stack;
} probe;

static void probe_run(void *arg) {
    probe *pr = (probe *)arg;
    int index = pool_worker_index();
    size_t stack;
    if (index < 0 || atomic_load(&pr->log->started[index]) != 1)
        atomic_fetch_add(&pr->before_start, 1);
    /* 0: the platform cannot tell */
    if (pr->min_stack && (stack = test_thread_stack_size()) != 0 && stack < pr->min_stack)
        atomic_fetch_add(&pr->small_stack, 1);
    atomic_fetch_add(&pr->ran, 1);
}

/* Fans out into a binary tree of joins with a probe at every leaf, so
   that every worker gets work, and so starts. */
typedef struct fan {
    pool *p;
    probe *pr;
    int depth;
} fan;

static void fan_out(void *arg) {
    fan *f = (fan *)arg, a, b;
    if (f->depth == 0) {
        probe_run(f->pr);
        return;
    }
    a = b = *f;
    a.depth = b.depth = f->depth - 1;
    pool_join(f->p, fan_out, &a, fan_out, &b);
}

#define FAN_DEPTH 8 /* 256 probes per round */

static void check_pool_threads(const char *prefix, const char *expected_prefix, size_t stack) {
    static hook_log log;
    probe pr;
    pool_config cfg;
    pool *p = NULL;
    pool_stats st;
    fan root;
    int i, n = 4, rounds = 0;
    memset(&log, 0, sizeof log);
    memset(&pr, 0, sizeof pr);
    pr.log = &log;
    pr.min_stack = stack;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = n;
    cfg.name = prefix;
    cfg.stack_size = stack;
    cfg.on_thread_start = on_start;
    cfg.on_thread_exit = on_exit_hook;
    cfg.user = &log;
    CHECK(pool_create(&p, &cfg) == 0);
    if (!p) exit(2);
    root.p = p, root.pr = &pr, root.depth = FAN_DEPTH;
    /* Work until every worker has started (lazily, on demand). */
    do {
        pool_call_on_worker(p, fan_out, &root); /* the workers' stacks and hooks */
        rounds++;
        pool_stats_get(p, &st);
    } while (st.threads_started < (uint64_t)n && rounds < 2000);
    CHECK_MSG(st.threads_started == (uint64_t)n, "only %" PRIu64 " of %d workers started",
              st.threads_started, n);
    CHECK_EQ_I64(pool_destroy(p), 0);

    CHECK_EQ_I64(atomic_load(&log.wrong_index), 0);
    CHECK_EQ_I64(atomic_load(&log.wrong_thread), 0);
    CHECK_EQ_I64(atomic_load(&pr.before_start), 0);
    CHECK_EQ_I64(atomic_load(&pr.small_stack), 0);
    CHECK_EQ_I64(atomic_load(&pr.ran), (1 << FAN_DEPTH) * rounds);
    for (i = 0; i < n; i++) {
        char want[32];
        snprintf(want, sizeof want, "%s-%d", expected_prefix, i);
        CHECK_EQ_I64(atomic_load(&log.started[i]), 1);
        CHECK_EQ_I64(atomic_load(&log.exited[i]), 1);
        CHECK_MSG(strcmp(log.name[i], want) == 0, "worker %d is named \"%s\", expected \"%s\"", i,
                  log.name[i], want);
    }
}

static void check_bad_stack(void) {
    pool_config cfg;
    pool *p = (pool *)&cfg; /* must be reset to NULL on failure */
    memset(&cfg, 0, sizeof cfg);
    cfg.stack_size = 1; /* below PTHREAD_STACK_MIN */
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    CHECK(p == NULL);
}

/* ------------------------------------------------------------------------ */
/* Lazy start                                                               */
/* ------------------------------------------------------------------------ */

#define LAZY_THREADS 8
#define LAZY_TASKS 64

static atomic_int lazy_ran;

static void nothing(void *arg) { (void)arg; }

static void check_lazy_start(void) {
    static test_counted_task tasks[LAZY_TASKS];
    pool_task *batch[LAZY_TASKS];
    pool_config cfg;
    pool *p = NULL;
    pool_stats st;
    int i;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = LAZY_THREADS;
    CHECK(pool_create(&p, &cfg) == 0);
    if (!p) exit(2);
    CHECK_EQ_I64((pool_stats_get(p, &st), st.threads_started), 0);
    pool_call_on_worker(p, nothing, NULL);
    CHECK_EQ_I64((pool_stats_get(p, &st), st.threads_started), 1);
    for (i = 0; i < LAZY_TASKS; i++) {
        tasks[i] = (test_counted_task)TEST_COUNTED_TASK(&lazy_ran, 5000);
        batch[i] = &tasks[i].task;
    }
    CHECK(pool_submit_batch(p, batch, LAZY_TASKS) == 0);
    while (atomic_load(&lazy_ran) < LAZY_TASKS) test_sleep_us(1000);
    pool_stats_get(p, &st);
    CHECK_MSG(st.threads_started == LAZY_THREADS,
              "a batch of %d sleeping tasks started %" PRIu64 " of %d threads", LAZY_TASKS,
              st.threads_started, LAZY_THREADS);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ------------------------------------------------------------------------ */
/* The default pool, raced                                                  */
/* ------------------------------------------------------------------------ */

#define RACERS 16
#define DEFAULT_THREADS 3

static pthread_barrier_t start_line;
static atomic_int default_ran, default_threads_seen;

static void default_task(void *arg) {
    (void)arg;
    if (pool_worker_index() >= 0) atomic_fetch_add(&default_ran, 1);
}

static void *racer(void *arg) {
    (void)arg;
    pthread_barrier_wait(&start_line);
    pool_call_on_worker(NULL, default_task, NULL);
    if (pool_num_threads(NULL) == DEFAULT_THREADS) atomic_fetch_add(&default_threads_seen, 1);
    return NULL;
}

static void check_default_pool_race(void) {
    pthread_t t[RACERS];
    pool_stats st;
    int i, named;
    char env[8];
    snprintf(env, sizeof env, "%d", DEFAULT_THREADS);
    test_setenv("POOL_NUM_THREADS", env);
    pthread_barrier_init(&start_line, NULL, RACERS);
    for (i = 0; i < RACERS; i++) CHECK(pthread_create(&t[i], NULL, racer, NULL) == 0);
    for (i = 0; i < RACERS; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start_line);

    CHECK_EQ_I64(atomic_load(&default_ran), RACERS);
    CHECK_EQ_I64(atomic_load(&default_threads_seen), RACERS);
    pool_stats_get(NULL, &st);
    /* Two default pools would have split the 16 calls between them. */
    CHECK_EQ_I64(st.jobs_injected, RACERS);
    CHECK_EQ_I64(st.num_threads, DEFAULT_THREADS);
    /* A thread that worker 0 has just started (another worker, a spare,
       the monitor) carries its creator's name until it names itself: a
       second default pool's worker 0 would stay. */
    for (i = 0; i < 2000 && (named = test_threads_named("pool-0")) != 1; i++) test_sleep_us(1000);
    CHECK_MSG(named == 1, "%d threads are named pool-0", named);
    CHECK_EQ_I64(pool_destroy(NULL), EINVAL);
}

int main(void) {
    test_watchdog(120, "test_threads");
    printf("test_threads: names, hooks, stack size, the default pool\n");
    check_pool_threads(NULL, "pool", 0);
    check_pool_threads("calc", "calc", (size_t)16 << 20);
    check_pool_threads("averyveryverylongprefix", "averyvery", 0);
    check_bad_stack();
    check_lazy_start();
    check_default_pool_race();
    if (test_failures()) {
        printf("test_threads: %ld check(s) FAILED\n", test_failures());
        return 1;
    }
    printf("test_threads: all checks passed\n");
    return 0;
}
