/* test_wakeup.c - lost wake-ups and idle CPU.
 *
 * Soak, on pools of 2 and 16 threads: thousands of cycles of
 *   { sleep 1-3 ms (nanosleep) so the workers go to sleep in the kernel;
 *     then post work from outside: pool_call, pool_submit (at either
 *     priority), a batch of pool_submit, or pool_join, and wait for it }.
 * A lost wake-up leaves a submitted task unrun: the wait for it times out
 * after 10 s and the test fails at once (pool_call/pool_join hangs are
 * caught by the watchdog), instead of hanging the run.
 *
 * Racy soak: the same (pool_submit, every other one at high priority) with
 * gaps of 0-400 us, spinning or sleeping, so that
 * work arrives at every point of a worker's way to sleep (searching,
 * yielding, announcing it is sleepy, registering, blocking): the window
 * where a wake-up gets lost.
 *
 * Parallel progress: two tasks where the first waits for the second. Once
 * both are queued, a sleeping worker must be woken to run the second while
 * the first occupies its worker, whether they were posted from outside
 * (one worker may take both from the injector) or the first posts the
 * second to its own deque.
 *
 * Idle CPU: after the work, the process must burn almost no CPU while the
 * pool is idle: < 20 ms over 1 s (the target is < 1 ms).
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

/* ------------------------------------------------------------------------ */
/* Completion: a counter an outside thread can wait on with a timeout       */
/* ------------------------------------------------------------------------ */

typedef struct completion {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    long done;
} completion;

static completion comp;

static void completion_init(completion *c) {
    pthread_mutex_init(&c->lock, NULL);
    test_cond_init(&c->cond);
    c->done = 0;
}

static void completion_add(completion *c) {
    pthread_mutex_lock(&c->lock);
    c->done++;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

/* Each phase counts its completions from zero. */
static void completion_reset(completion *c) {
    pthread_mutex_lock(&c->lock);
    c->done = 0;
    pthread_mutex_unlock(&c->lock);
}

/* Waits until done >= target, at most `seconds`. Returns 1 if reached. */
static int completion_wait(completion *c, long target, int seconds) {
    struct timespec deadline = test_deadline_after(seconds);
    int ok;
    pthread_mutex_lock(&c->lock);
    while (c->done < target) {
        if (pthread_cond_timedwait(&c->cond, &c->lock, &deadline) == ETIMEDOUT) break;
    }
    ok = c->done >= target;
    pthread_mutex_unlock(&c->lock);
    return ok;
}

static void fail_now(const char *what, const char *pool_name, long cycle) {
    fflush(stdout); /* what came before first, in a shared log */
    fprintf(stderr, "FAIL: %s pool, cycle %ld: %s\n", pool_name, cycle, what);
    fflush(stderr);
    _exit(1); /* the pool holds a lost task: do not try to destroy it */
}

/* ------------------------------------------------------------------------ */
/* Soak                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct counted {
    pool_task task;
    atomic_long *ran;
} counted;

static void counted_run(pool_task *t) {
    counted *c = (counted *)((char *)t - offsetof(counted, task));
    atomic_fetch_add(c->ran, 1);
    completion_add(&comp);
}

static void inc(void *arg) { atomic_fetch_add((atomic_long *)arg, 1); }

static void soak(pool *p, const char *pool_name, long cycles) {
    static counted tasks[4];
    pool_task *batch[4];
    atomic_long ran;
    long expect_ran = 0, waited = 0, i;
    uint64_t rng = 0xC0FFEE;
    double t0 = test_now();
    char wd[96];
    int k;
    atomic_init(&ran, 0);
    completion_reset(&comp);
    for (k = 0; k < 4; k++) {
        tasks[k].task.run = counted_run;
        tasks[k].ran = &ran;
        batch[k] = &tasks[k].task;
    }
    printf("  %s pool: %ld cycles of {sleep 1-3 ms; pool_call | pool_submit | batch | pool_join}\n",
           pool_name, cycles);
    snprintf(wd, sizeof wd, "test_wakeup soak (%s pool)", pool_name);
    for (i = 0; i < cycles; i++) {
        test_watchdog(30, wd);
        test_sleep_us(1000 + (long)(test_rand(&rng) % 2000));
        switch (i % 4) {
        case 0:
            pool_call(p, inc, &ran);
            expect_ran += 1;
            break;
        case 1: /* every other time at high priority: its injector has the same pair */
            CHECK_EQ_I64(pool_submit_priority(p, &tasks[0].task,
                                              i & 4 ? POOL_PRIORITY_HIGH : POOL_PRIORITY_NORMAL),
                         0);
            expect_ran += 1;
            if (!completion_wait(&comp, ++waited, 10))
                fail_now("pool_submit task not run after 10 s (lost wake-up)", pool_name, i);
            break;
        case 2:
            CHECK_EQ_I64(pool_submit_batch(p, batch, 4), 0);
            expect_ran += 4;
            waited += 4;
            if (!completion_wait(&comp, waited, 10))
                fail_now("pool_submit_batch tasks not all run after 10 s (lost wake-up)", pool_name,
                         i);
            break;
        default:
            pool_join(p, inc, &ran, inc, &ran);
            expect_ran += 2;
            break;
        }
        if (atomic_load(&ran) != expect_ran) {
            CHECK_EQ_I64(atomic_load(&ran), expect_ran);
            break;
        }
    }
    printf("    %.2f s\n", test_now() - t0);
}

static void spin_us(long us) {
    double end = test_now() + (double)us * 1e-6;
    while (test_now() < end) {
    }
}

static void racy_soak(pool *p, const char *pool_name, long cycles) {
    static counted task;
    atomic_long ran;
    long i;
    uint64_t rng = 0xFACE;
    double t0 = test_now();
    char wd[96];
    atomic_init(&ran, 0);
    completion_reset(&comp);
    task.task.run = counted_run;
    task.ran = &ran;
    printf("  %s pool: %ld cycles of {gap of 0-400 us; pool_submit and wait}\n", pool_name, cycles);
    snprintf(wd, sizeof wd, "test_wakeup racy soak (%s pool)", pool_name);
    for (i = 0; i < cycles; i++) {
        long gap = (long)(test_rand(&rng) % 400);
        if (i % 1024 == 0) test_watchdog(30, wd);
        if (gap < 100) spin_us(gap); /* the worker is still searching or yielding */
        else test_sleep_us(gap);
        CHECK_EQ_I64(
            pool_submit_priority(p, &task.task, i & 1 ? POOL_PRIORITY_HIGH : POOL_PRIORITY_NORMAL),
            0);
        if (!completion_wait(&comp, i + 1, 10))
            fail_now("pool_submit task not run after 10 s (lost wake-up)", pool_name, i);
    }
    CHECK_EQ_I64(atomic_load(&ran), cycles);
    printf("    %.2f s\n", test_now() - t0);
}

/* ------------------------------------------------------------------------ */
/* Parallel progress                                                        */
/* ------------------------------------------------------------------------ */

typedef struct pair {
    pool *p;
    pool_task first, second;
    atomic_int second_ran;
    atomic_int first_timed_out;
    int post_second_from_first; /* else both come from outside */
} pair;

static pair the_pair;

static void second_run(pool_task *t) {
    (void)t;
    atomic_store(&the_pair.second_ran, 1);
    completion_add(&comp);
}

/* Occupies its worker until the second task has run (at most 5 s). */
static void first_run(pool_task *t) {
    double deadline = test_now() + 5.0;
    (void)t;
    if (the_pair.post_second_from_first) CHECK_EQ_I64(pool_submit(the_pair.p, &the_pair.second), 0);
    while (!atomic_load(&the_pair.second_ran)) {
        if (test_now() > deadline) {
            atomic_store(&the_pair.first_timed_out, 1);
            break;
        }
        test_sleep_us(20);
    }
    completion_add(&comp);
}

static void parallel_progress(pool *p, const char *pool_name, long cycles, int from_inside) {
    long i, waited = 0, timeouts = 0;
    uint64_t rng = 0xBEEF;
    char wd[128];
    printf(
        "  %s pool: %ld cycles, a task waits for a second one %s; a sleeping worker must take it\n",
        pool_name, cycles,
        from_inside ? "that it submits itself" : "submitted with it from outside");
    snprintf(wd, sizeof wd, "test_wakeup parallel progress (%s pool)", pool_name);
    memset(&the_pair, 0, sizeof the_pair);
    completion_reset(&comp);
    the_pair.p = p;
    the_pair.first.run = first_run;
    the_pair.second.run = second_run;
    the_pair.post_second_from_first = from_inside;
    for (i = 0; i < cycles; i++) {
        pool_task *batch[2];
        test_watchdog(30, wd);
        test_sleep_us(1000 + (long)(test_rand(&rng) % 2000));
        atomic_store(&the_pair.second_ran, 0);
        atomic_store(&the_pair.first_timed_out, 0);
        batch[0] = &the_pair.first;
        batch[1] = &the_pair.second;
        if (from_inside) CHECK_EQ_I64(pool_submit(p, &the_pair.first), 0);
        else CHECK_EQ_I64(pool_submit_batch(p, batch, 2), 0);
        waited += 2;
        if (!completion_wait(&comp, waited, 15))
            fail_now("pair of tasks not run after 15 s", pool_name, i);
        if (atomic_load(&the_pair.first_timed_out)) timeouts++;
    }
    if (timeouts)
        fprintf(stderr,
                "    %ld of %ld cycles: the second task did not start within 5 s while the first"
                " held a worker (no sleeping worker was woken for it)\n",
                timeouts, cycles);
    CHECK_EQ_I64(timeouts, 0);
}

/* ------------------------------------------------------------------------ */
/* Idle CPU                                                                 */
/* ------------------------------------------------------------------------ */

static void idle_cpu(pool *p, const char *pool_name) {
    double cpu0, cpu1, ms;
    pool_stats st;
    /* some work right before, so that the workers are awake and must find
       their own way back to sleep */
    atomic_long n;
    int k;
    atomic_init(&n, 0);
    for (k = 0; k < 100; k++) pool_join(p, inc, &n, inc, &n);
    CHECK_EQ_I64(atomic_load(&n), 200);
    test_watchdog(30, "test_wakeup idle CPU");
    cpu0 = test_cpu_time();
    test_sleep_us(1000000);
    cpu1 = test_cpu_time();
    ms = (cpu1 - cpu0) * 1000.0;
    pool_stats_get(p, &st);
    printf("  %s pool: idle for 1 s after work: %.3f ms of process CPU time (limit 20 ms, target < "
           "1 ms);"
           " sleeps %" PRIu64 ", wakeups %" PRIu64 "\n",
           pool_name, ms, st.sleeps, st.wakeups);
    CHECK_MSG(ms < 20.0, "idle pool burned %.3f ms CPU in 1 s", ms);
}

static void run_pool(int threads, long cycles) {
    pool *p = NULL;
    pool_config cfg;
    char name[32];
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    snprintf(name, sizeof name, "%d-thread", threads);
    CHECK(pool_create(&p, &cfg) == 0);
    if (!p) return;
    soak(p, name, cycles);
    racy_soak(p, name, cycles * 4);
    parallel_progress(p, name, cycles / 10, 0);
    parallel_progress(p, name, cycles / 10, 1);
    idle_cpu(p, name);
    test_watchdog(60, "test_wakeup destroy");
    CHECK_EQ_I64(pool_destroy(p), 0);
}

int main(void) {
    long cycles = test_scaled(3000, 300);
    completion_init(&comp);
    test_watchdog(30, "test_wakeup");
    printf("test_wakeup: lost wake-ups and idle CPU\n");
    run_pool(2, cycles);
    run_pool(16, cycles);
    return test_finish("test_wakeup");
}
