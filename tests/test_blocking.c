/* test_blocking.c - the blocking pool.
 *
 *  - cap: 160 tasks that each sleep 10 ms with max_blocking_threads 16 run
 *    at most 16 at once, reach 16 (each task holds its thread until 16
 *    run), start exactly 16 threads, and take at least 100 ms;
 *  - keep-alive: once idle for blocking_keep_alive_ms, the threads exit:
 *    the metrics and /proc/self/task both fall to zero;
 *  - pool_destroy with queued tasks runs every one of them;
 *  - pool_destroy_fast skips exactly the queued jobs not marked mandatory
 *    (on_cancel once, run never, their waiters get ECANCELED, including a
 *    waiter that was already blocked: an outside thread, a worker of the
 *    pool, a worker of another pool) and runs every mandatory job and
 *    every plain task;
 *  - waiting for one job from an outside thread, from a worker (which
 *    runs fork-join work meanwhile: with one worker, the job itself waits
 *    for detached tasks that only that worker can run), and after the job
 *    finished;
 *  - thread creation failing: with no thread EAGAIN and the task is not
 *    taken; with one thread the rest queue behind it and all run; only the
 *    k-th creation failing, for each k;
 *  - submissions during destroy: accepted until destroy begins, then
 *    ECANCELED, and every accepted one runs; EDEADLK for pool_destroy from
 *    a blocking task; EINVAL for bad arguments.
 */
#define POOL__THREAD_CREATE test_thread_create
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

static atomic_int creation_fails;          /* nonzero: every thread creation fails */
static atomic_int blocking_creations;      /* blocking-thread creations so far */
static atomic_int blocking_fail_only = -1; /* >= 0: that blocking creation fails */

static pool__thread_result POOL__THREAD_CALL pool__blocking_main(void *arg);

static int test_thread_create(pool__thread *t, size_t stack_size, pool__thread_proc fn, void *arg) {
    if (atomic_load(&creation_fails)) return EAGAIN;
    if (fn == pool__blocking_main &&
        atomic_fetch_add(&blocking_creations, 1) == atomic_load(&blocking_fail_only))
        return EAGAIN;
    return pool__thread_create_native(t, stack_size, fn, arg);
}

static pool *make_pool(int threads, int max_blocking, unsigned keep_alive_ms, const char *name) {
    pool *p = NULL;
    pool_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    cfg.max_blocking_threads = max_blocking;
    cfg.blocking_keep_alive_ms = keep_alive_ms;
    cfg.name = name;
    CHECK(pool_create(&p, &cfg) == 0);
    if (!p) exit(2);
    return p;
}

static pool_stats stats_of(pool *p) {
    pool_stats st;
    pool_stats_get(p, &st);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Cap and keep-alive                                                       */
/* ------------------------------------------------------------------------ */

typedef struct sleeper {
    pool_task task;
    atomic_int *running, *max_running, *ran;
    atomic_int *hold; /* if set: wait until *hold is nonzero (10 s at most) */
    long sleep_us;
} sleeper;

static void sleeper_run(pool_task *t) {
    sleeper *s = (sleeper *)((char *)t - offsetof(sleeper, task));
    int now = atomic_fetch_add(s->running, 1) + 1, seen = atomic_load(s->max_running);
    while (now > seen && !atomic_compare_exchange_weak(s->max_running, &seen, now)) continue;
    if (s->hold) {
        double give_up = test_now() + 10;
        while (!atomic_load(s->hold) && test_now() < give_up) test_sleep_us(100);
    }
    test_sleep_us(s->sleep_us);
    atomic_fetch_sub(s->running, 1);
    atomic_fetch_add(s->ran, 1);
}

#define CAP_TASKS 160
#define CAP 16
/* Long enough that the threads are still there when the test looks just
   after the run, even if it waited for the CPU meanwhile. */
#define CAP_KEEP_ALIVE_MS 1000

static void check_cap_and_keep_alive(void) {
    static sleeper tasks[CAP_TASKS];
    atomic_int running = 0, max_running = 0, ran = 0, go = 0;
    pool *p = make_pool(2, CAP, CAP_KEEP_ALIVE_MS, "cap");
    pool_stats st;
    double start, elapsed, give_up;
    int i, queued_seen = 0;
    start = test_now();
    /* Every task holds its thread until `go`: the first CAP hold all CAP
       threads at once however slowly the threads start (a 10 ms task could
       end before the 16th thread ran), and the rest stay queued until the
       stats below are read. No thread is idle before `go`, so none can time
       out and be replaced, and none is idle after it before the queue is
       empty: the keep-alive matters only once all have run. */
    for (i = 0; i < CAP_TASKS; i++) {
        tasks[i].task = (pool_task)POOL_TASK_INIT(sleeper_run);
        tasks[i].running = &running, tasks[i].max_running = &max_running, tasks[i].ran = &ran;
        tasks[i].hold = &go;
        tasks[i].sleep_us = 10000;
        CHECK(pool_submit_blocking(p, &tasks[i].task) == 0);
    }
    give_up = test_now() + 5;
    while (atomic_load(&running) < CAP && test_now() < give_up) test_sleep_us(100);
    st = stats_of(p);
    queued_seen = (int)st.blocking_queue_depth;
    CHECK_MSG(st.blocking_threads <= CAP, "%" PRIu64 " blocking threads", st.blocking_threads);
    CHECK_MSG(test_threads_named("cap-blk") > 0, "no thread named cap-blk while the pool is busy");
    atomic_store(&go, 1);
    while (atomic_load(&ran) < CAP_TASKS) test_sleep_us(1000);
    elapsed = test_now() - start;
    /* CAP at once proves the tasks ran side by side: no upper bound on the
       time, which only a loaded machine would break. */
    CHECK_MSG(atomic_load(&max_running) == CAP, "at most %d ran at once, cap %d",
              atomic_load(&max_running), CAP);
    CHECK_MSG(elapsed >= 0.099, "160 x 10 ms on 16 threads took %.0f ms", elapsed * 1e3);
    CHECK_MSG(queued_seen > 0, "no task was ever seen queued behind the cap");
    printf("  160 x 10 ms, cap 16: %.0f ms, at most %d at once\n", elapsed * 1e3,
           atomic_load(&max_running));

    /* The pool counts a task after its run returns, so just after the last
       one said it ran the count may still be one short. */
    give_up = test_now() + 5;
    for (st = stats_of(p); st.blocking_tasks_run < CAP_TASKS && test_now() < give_up;
         st = stats_of(p))
        test_sleep_us(1000);
    CHECK_EQ_I64(st.blocking_tasks_run, CAP_TASKS);
    /* Every submit came while each thread held a task: none was idle, so
       none could time out and be replaced (before the hold, valgrind, which
       runs one thread at a time, once started 17). */
    CHECK_EQ_I64(st.blocking_threads_started, CAP);
    CHECK_MSG(test_threads_named("cap-blk") > 0, "no thread named cap-blk while the pool is warm");

    /* Keep-alive is 1 s: well within 10 s every thread must be gone. */
    give_up = test_now() + 10;
    do {
        test_sleep_us(10000);
        st = stats_of(p);
    } while ((st.blocking_threads > 0 || test_threads_named("cap-blk") > 0) &&
             test_now() < give_up);
    CHECK_EQ_I64(st.blocking_threads, 0);
    CHECK_EQ_I64(st.blocking_idle_threads, 0);
    CHECK_EQ_I64(test_threads_named("cap-blk"), 0);

    /* And the pool starts them again on demand. */
    atomic_store(&ran, 0);
    tasks[0].sleep_us = 0;
    CHECK(pool_submit_blocking(p, &tasks[0].task) == 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
    CHECK_EQ_I64(atomic_load(&ran), 1);
}

/* ------------------------------------------------------------------------ */
/* Shutdown: everything, or the mandatory part                              */
/* ------------------------------------------------------------------------ */

static void check_destroy_runs_queued(void) {
    static sleeper tasks[50];
    atomic_int running = 0, max_running = 0, ran = 0;
    pool *p = make_pool(1, 2, 0, "drain");
    int i;
    for (i = 0; i < 50; i++) {
        tasks[i].task = (pool_task)POOL_TASK_INIT(sleeper_run);
        tasks[i].running = &running, tasks[i].max_running = &max_running, tasks[i].ran = &ran;
        tasks[i].sleep_us = 1000;
        CHECK(pool_submit_blocking(p, &tasks[i].task) == 0);
    }
    CHECK(stats_of(p).blocking_queue_depth > 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
    CHECK_EQ_I64(atomic_load(&ran), 50);
}

/* A job that holds the only blocking thread until the gate opens. */
static atomic_int gate_open, gate_entered;

typedef struct counted_job {
    pool_blocking_job job;
    atomic_int ran, cancelled;
    int wait_for_gate;
} counted_job;

static counted_job *counted_of(pool_blocking_job *j) {
    return (counted_job *)((char *)j - offsetof(counted_job, job));
}

static void counted_run(pool_blocking_job *j) {
    counted_job *c = counted_of(j);
    if (c->wait_for_gate) atomic_store(&gate_entered, 1);
    while (c->wait_for_gate && !atomic_load(&gate_open)) test_sleep_us(200);
    atomic_fetch_add(&c->ran, 1);
}

static void counted_cancel(pool_blocking_job *j) { atomic_fetch_add(&counted_of(j)->cancelled, 1); }

static atomic_int plain_ran;

static void plain_run(pool_task *t) {
    (void)t;
    atomic_fetch_add(&plain_ran, 1);
}

typedef struct waiter_arg {
    pool *p;
    pool_blocking_job *job;
    int rc;
} waiter_arg;

static void *outside_waiter(void *arg) {
    waiter_arg *w = (waiter_arg *)arg;
    w->rc = pool_wait_blocking_job(w->job);
    return NULL;
}

/* A detached task on a worker: pool_destroy may run while the pool's own
   tasks still wait (an outside thread inside pool_call could not). */
typedef struct worker_waiter {
    pool_task task;
    waiter_arg arg;
} worker_waiter;

static void worker_waiter_run(pool_task *t) {
    worker_waiter *w = (worker_waiter *)((char *)t - offsetof(worker_waiter, task));
    w->arg.rc = pool_wait_blocking_job(w->arg.job);
}

#define FAST_JOBS 40

static counted_job fast_jobs[FAST_JOBS];

/* Opens the gate once pool_destroy_fast has skipped every optional job: it
   calls their on_cancel before it waits for the blocking thread, so the
   gate job holds that thread until the skips are done, however late the
   destroy comes (a timer let a slow destroy find the gate open and the
   optional jobs run). After 10 s it opens anyway, so that a destroy that
   skips nothing fails the checks instead of hanging. */
static void *open_gate_when_skipped(void *arg) {
    double give_up = test_now() + 10;
    int i, optional = 0, cancelled;
    (void)arg;
    for (i = 0; i < FAST_JOBS; i++) optional += !fast_jobs[i].job.mandatory;
    do {
        test_sleep_us(200);
        for (i = 0, cancelled = 0; i < FAST_JOBS; i++)
            if (!fast_jobs[i].job.mandatory) cancelled += atomic_load(&fast_jobs[i].cancelled);
    } while (cancelled < optional && test_now() < give_up);
    atomic_store(&gate_open, 1);
    return NULL;
}

static void check_destroy_fast(void) {
    counted_job *jobs = fast_jobs;
    static counted_job gate;
    pool_task plain[5];
    pool *p = make_pool(2, 1, 0, "fast");
    waiter_arg outside = {NULL, NULL, -1};
    worker_waiter worker = {POOL_TASK_INIT(worker_waiter_run), {NULL, NULL, -1}};
    worker_waiter other = {POOL_TASK_INIT(worker_waiter_run), {NULL, NULL, -1}};
    pool *q = make_pool(1, 1, 0, "other"); /* its worker waits for one of p's jobs */
    pthread_t outside_thread, opener;
    pool_stats st;
    int i, skipped = 0;
    atomic_store(&gate_open, 0);
    atomic_store(&gate_entered, 0);
    atomic_store(&plain_ran, 0);
    memset(&gate, 0, sizeof gate);
    gate.job = (pool_blocking_job)POOL_BLOCKING_JOB_INIT(counted_run);
    gate.wait_for_gate = 1;
    CHECK(pool_submit_blocking_job(p, &gate.job) == 0);
    for (i = 0; i < FAST_JOBS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].job = (pool_blocking_job)POOL_BLOCKING_JOB_INIT(counted_run);
        jobs[i].job.on_cancel = counted_cancel;
        jobs[i].job.mandatory = i % 3 == 0;
        CHECK(pool_submit_blocking_job(p, &jobs[i].job) == 0);
        if (i < 5) {
            plain[i] = (pool_task)POOL_TASK_INIT(plain_run);
            CHECK(pool_submit_blocking(p, &plain[i]) == 0);
        }
    }
    /* Two waiters already blocked on jobs that will be skipped. */
    outside.p = worker.arg.p = p;
    outside.job = &jobs[1].job;
    worker.arg.job = &jobs[2].job;
    other.arg.p = q;
    other.arg.job = &jobs[4].job;
    CHECK(pthread_create(&outside_thread, NULL, outside_waiter, &outside) == 0);
    CHECK(pool_submit(p, &worker.task) == 0);
    CHECK(pool_submit(q, &other.task) == 0);
    test_sleep_us(20000);
    CHECK(pthread_create(&opener, NULL, open_gate_when_skipped, NULL) == 0);

    /* The gate job holds the thread, so exactly the rest is queued. */
    while (!atomic_load(&gate_entered)) test_sleep_us(100);
    st = stats_of(p);
    CHECK_EQ_I64(st.blocking_queue_depth, FAST_JOBS + 5);
    CHECK_EQ_I64(pool_destroy_fast(p), 0);
    pthread_join(opener, NULL);
    pthread_join(outside_thread, NULL);

    CHECK_EQ_I64(atomic_load(&gate.ran), 1);
    CHECK_EQ_I64(atomic_load(&plain_ran), 5);
    CHECK_EQ_I64(pool_wait_blocking_job(&gate.job), 0);
    for (i = 0; i < FAST_JOBS; i++) {
        int mandatory = i % 3 == 0;
        CHECK_MSG(atomic_load(&jobs[i].ran) == mandatory &&
                      atomic_load(&jobs[i].cancelled) == !mandatory,
                  "job %d (%s): ran %d, cancelled %d", i, mandatory ? "mandatory" : "optional",
                  atomic_load(&jobs[i].ran), atomic_load(&jobs[i].cancelled));
        skipped += !mandatory;
        if (i != 1 && i != 2 && i != 4)
            CHECK_EQ_I64(pool_wait_blocking_job(&jobs[i].job), mandatory ? 0 : ECANCELED);
    }
    CHECK_EQ_I64(outside.rc, ECANCELED);
    CHECK_EQ_I64(worker.arg.rc, ECANCELED);
    CHECK_EQ_I64(pool_destroy(q), 0); /* runs until its waiting task is done */
    CHECK_EQ_I64(other.arg.rc, ECANCELED);
    CHECK_EQ_I64(pool_wait_blocking_job(&jobs[0].job), EINVAL); /* waited for already */
    printf("  pool_destroy_fast: %d optional jobs skipped and reported, %d mandatory ran\n",
           skipped, FAST_JOBS - skipped);
}

/* ------------------------------------------------------------------------ */
/* Waiting for one job                                                      */
/* ------------------------------------------------------------------------ */

#define HELPERS 20

static atomic_int helpers_ran;

static void helper_run(pool_task *t) {
    (void)t;
    atomic_fetch_add(&helpers_ran, 1);
}

/* Finishes only once every helper task has run, or after 10 s. */
static void wait_for_helpers(pool_blocking_job *j) {
    double give_up = test_now() + 10;
    while (atomic_load(&helpers_ran) < HELPERS && test_now() < give_up) test_sleep_us(200);
    atomic_fetch_add(&counted_of(j)->ran, 1);
}

typedef struct worker_wait {
    pool *p;
    counted_job job;
    int rc, helpers_when_done;
} worker_wait;

static atomic_int waiter_started;

static void wait_on_worker(void *arg) {
    worker_wait *ww = (worker_wait *)arg;
    atomic_store(&waiter_started, 1);
    CHECK(pool_submit_blocking_job(ww->p, &ww->job.job) == 0);
    ww->rc = pool_wait_blocking_job(&ww->job.job);
    ww->helpers_when_done = atomic_load(&helpers_ran);
}

static void *run_wait_on_worker(void *arg) {
    pool_call_on_worker(((worker_wait *)arg)->p, wait_on_worker, arg);
    return NULL;
}

static void check_waits(void) {
    static pool_task helpers[HELPERS];
    pool *p = make_pool(1, 4, 0, "wait");
    worker_wait ww;
    counted_job quick;
    pthread_t t;
    int i;

    /* From outside: a quick job, waited for while running and after. */
    for (i = 0; i < 100; i++) {
        memset(&quick, 0, sizeof quick);
        quick.job = (pool_blocking_job)POOL_BLOCKING_JOB_INIT(counted_run);
        CHECK(pool_submit_blocking_job(p, &quick.job) == 0);
        if (i % 2) test_sleep_us(100);
        CHECK_EQ_I64(pool_wait_blocking_job(&quick.job), 0);
        CHECK_EQ_I64(atomic_load(&quick.ran), 1);
    }

    /* From the pool's only worker: the job waits for helper tasks, and the
       worker waits for the job, so the job finishes only if another thread
       stands in for the worker while it waits. The helpers are submitted
       once the worker has begun, so that it cannot run them first. */
    memset(&ww, 0, sizeof ww);
    ww.p = p;
    ww.job.job = (pool_blocking_job)POOL_BLOCKING_JOB_INIT(wait_for_helpers);
    atomic_store(&helpers_ran, 0);
    atomic_store(&waiter_started, 0);
    CHECK(pthread_create(&t, NULL, run_wait_on_worker, &ww) == 0);
    while (!atomic_load(&waiter_started)) test_sleep_us(1000);
    for (i = 0; i < HELPERS; i++) {
        helpers[i] = (pool_task)POOL_TASK_INIT(helper_run);
        CHECK(pool_submit(p, &helpers[i]) == 0);
    }
    pthread_join(t, NULL);
    CHECK_EQ_I64(ww.rc, 0);
    CHECK_EQ_I64(atomic_load(&ww.job.ran), 1);
    CHECK_MSG(ww.helpers_when_done == HELPERS, "%d of %d tasks ran while the worker waited",
              ww.helpers_when_done, HELPERS);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ------------------------------------------------------------------------ */
/* Thread creation failing                                                  */
/* ------------------------------------------------------------------------ */

static void check_spawn_failure(void) {
    static sleeper tasks[8];
    atomic_int running = 0, max_running = 0, ran = 0;
    counted_job job;
    pool *p = make_pool(1, 4, 0, "nospawn");
    pool_stats st;
    int i;
    for (i = 0; i < 8; i++) {
        tasks[i].task = (pool_task)POOL_TASK_INIT(sleeper_run);
        tasks[i].running = &running, tasks[i].max_running = &max_running, tasks[i].ran = &ran;
        tasks[i].sleep_us = 2000;
    }
    memset(&job, 0, sizeof job);
    job.job = (pool_blocking_job)POOL_BLOCKING_JOB_INIT(counted_run);

    /* No thread, none can start: EAGAIN, and the task is not taken. */
    atomic_store(&creation_fails, 1);
    CHECK_EQ_I64(pool_submit_blocking(p, &tasks[0].task), EAGAIN);
    CHECK_EQ_I64(pool_submit_blocking_job(p, &job.job), EAGAIN);
    CHECK_EQ_I64(pool_wait_blocking_job(&job.job), EINVAL); /* it was never taken */
    test_sleep_us(10000);
    CHECK_EQ_I64(atomic_load(&ran), 0);
    CHECK_EQ_I64(atomic_load(&job.ran), 0);

    /* One thread, then failures: everything queues behind it and runs. */
    atomic_store(&creation_fails, 0);
    CHECK(pool_submit_blocking(p, &tasks[0].task) == 0);
    atomic_store(&creation_fails, 1);
    for (i = 1; i < 8; i++) CHECK(pool_submit_blocking(p, &tasks[i].task) == 0);
    CHECK(pool_submit_blocking_job(p, &job.job) == 0);
    CHECK_EQ_I64(pool_wait_blocking_job(&job.job), 0);
    st = stats_of(p);
    CHECK_EQ_I64(st.blocking_threads_started, 1);
    CHECK(st.blocking_threads_failed >= 3);
    CHECK_EQ_I64(pool_destroy(p), 0);
    atomic_store(&creation_fails, 0);
    CHECK_EQ_I64(atomic_load(&ran), 8);
    CHECK_EQ_I64(atomic_load(&max_running), 1);
}

/* Only the k-th blocking-thread creation fails, for every k a run makes:
   a submit gets EAGAIN (untaken) exactly when no thread existed, and every
   accepted task runs once. */
static void check_spawn_failure_each_index(void) {
    static sleeper tasks[12];
    int k, i, refused_total = 0;
    for (k = 0; k < 6; k++) {
        atomic_int running = 0, max_running = 0, ran = 0;
        pool *p = make_pool(1, 4, 0, "each");
        int accepted = 0, rc;
        atomic_store(&blocking_creations, 0);
        atomic_store(&blocking_fail_only, k);
        for (i = 0; i < 12; i++) {
            int had_thread = stats_of(p).blocking_threads > 0;
            tasks[i].task = (pool_task)POOL_TASK_INIT(sleeper_run);
            tasks[i].running = &running, tasks[i].max_running = &max_running, tasks[i].ran = &ran;
            tasks[i].sleep_us = 1000;
            rc = pool_submit_blocking(p, &tasks[i].task);
            CHECK_MSG(rc == 0 || (rc == EAGAIN && !had_thread), "k=%d task %d: %d", k, i, rc);
            accepted += rc == 0;
            refused_total += rc == EAGAIN;
        }
        CHECK_EQ_I64(pool_destroy(p), 0);
        CHECK_MSG(atomic_load(&ran) == accepted, "k=%d: %d of %d accepted tasks ran", k,
                  atomic_load(&ran), accepted);
        CHECK(atomic_load(&max_running) <= 4);
    }
    atomic_store(&blocking_fail_only, -1);
    CHECK_MSG(refused_total >= 1, "the first creation failing never refused a submit");
}

/* ------------------------------------------------------------------------ */
/* Submissions during destroy, and bad arguments                            */
/* ------------------------------------------------------------------------ */

#define LATE_MAX 100000

typedef struct late {
    pool *p;
    pool_task task;
    pool_task extra[LATE_MAX];
    atomic_int extra_ran;
    atomic_int submitting; /* 1 once a submit was accepted, or the loop ended */
    int accepted, final_rc, destroy_rc;
} late;

static late during;

static void extra_run(pool_task *t) {
    (void)t;
    atomic_fetch_add(&during.extra_ran, 1);
}

/* Submits until the pool refuses; runs while pool_destroy waits for it. */
static void late_run(pool_task *t) {
    int rc = 0;
    (void)t;
    during.destroy_rc = pool_destroy(during.p); /* from a blocking task */
    while (during.accepted < LATE_MAX) {
        during.extra[during.accepted] = (pool_task)POOL_TASK_INIT(extra_run);
        rc = pool_submit_blocking(during.p, &during.extra[during.accepted]);
        if (rc != 0) break;
        during.accepted++;
        atomic_store(&during.submitting, 1);
        test_sleep_us(50);
    }
    during.final_rc = rc;
    atomic_store(&during.submitting, 1);
}

static void check_during_destroy_and_errors(void) {
    pool *p = make_pool(1, 4, 0, "late");
    pool_blocking_job bad = POOL_BLOCKING_JOB_INIT(NULL);
    pool_task no_run = POOL_TASK_INIT(NULL);
    memset(&during, 0, sizeof during);
    during.p = p;
    during.task = (pool_task)POOL_TASK_INIT(late_run);
    CHECK(pool_submit_blocking(p, &during.task) == 0);
    /* Destroy only once the task has had a submit accepted: a fixed sleep
       let a descheduled task see the destroy first and accept none. A task
       whose first submit is refused ends its loop, and so its wait too. */
    while (!atomic_load(&during.submitting)) test_sleep_us(100);
    CHECK_EQ_I64(pool_destroy(p), 0);
    CHECK_EQ_I64(during.destroy_rc, EDEADLK);
    CHECK_EQ_I64(during.final_rc, ECANCELED);
    CHECK(during.accepted > 0);
    CHECK_EQ_I64(atomic_load(&during.extra_ran), during.accepted);

    CHECK_EQ_I64(pool_submit_blocking(NULL, NULL), EINVAL);
    CHECK_EQ_I64(pool_submit_blocking(NULL, &no_run), EINVAL);
    CHECK_EQ_I64(pool_submit_blocking_job(NULL, NULL), EINVAL);
    CHECK_EQ_I64(pool_submit_blocking_job(NULL, &bad), EINVAL);
    CHECK_EQ_I64(pool_wait_blocking_job(NULL), EINVAL);
    CHECK_EQ_I64(pool_wait_blocking_job(&bad), EINVAL);
    CHECK_EQ_I64(pool_destroy_fast(NULL), EINVAL);
}

int main(void) {
    test_watchdog(120, "test_blocking");
    printf("test_blocking: the blocking pool\n");
    check_cap_and_keep_alive();
    check_destroy_runs_queued();
    check_destroy_fast();
    check_waits();
    check_spawn_failure();
    check_spawn_failure_each_index();
    check_during_destroy_and_errors();
    if (test_failures()) {
        printf("test_blocking: %ld check(s) FAILED\n", test_failures());
        return 1;
    }
    printf("test_blocking: all checks passed\n");
    return 0;
}
