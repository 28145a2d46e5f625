/* test_contract.c - contract bugs an outside test suite found, one part
 * each, every part with the watchdog armed:
 *
 *  - a pool_blocking_job submitted again while still queued is refused
 *    with EBUSY (it used to be linked to itself, run forever, and hang
 *    pool_destroy);
 *  - a blocking job that submits itself again from its own run: its wait
 *    returns after the last run (the old code reset the reference count,
 *    and the wait parked forever);
 *  - a pool with no thread at all: CALL_IN(p, f) where f waits on a scope
 *    whose task was spawned earlier completes, and so does pool_destroy's
 *    drain of a task that waits on work queued before it (a helper used
 *    to move the whole queue into a private list and park on work in it);
 *  - pool_destroy(p) from a task run by a thread that helps because p has
 *    no worker, and from a task that pool_destroy's drain runs: EDEADLK
 *    (the first freed p under the running call, the second freed it twice);
 *  - a thread start that failed once is retried while work waits that no
 *    thread takes, although nothing else is posted and the only worker is
 *    busy (the task used to wait for the busy worker);
 *  - fairness: a task that keeps submitting itself again does not starve
 *    a task posted from outside;
 *  - pool_destroy(B) from a worker of A while B's tasks call into A;
 *  - scopes: a task of s waiting on s (EDEADLK from pool_scope_wait_status,
 *    an immediate return from pool_scope_wait, the real waiter unharmed);
 *    two threads waiting on one scope at once both return when, and only
 *    when, every task has finished; a join half of s's task waiting on s,
 *    on top of s's wait or on another thread (EDEADLK);
 *  - pool_stats_print to a stream whose buffered write fails at the flush
 *    (/dev/full) returns the error.
 *
 * Thread creation goes through pool.h's private POOL__THREAD_CREATE hook:
 * a pool made with NO_THREAD_STACK can start no worker, one made with
 * RETRY_STACK fails the first start of its second worker once, one made
 * with NO_SPARE_STACK starts its first worker and no other, one made with
 * CAPPED_STACK(n) its first n workers and no other (no spare).
 */
#define POOL__THREAD_CREATE test_thread_create
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#ifdef TEST_BASELINE /* against a pool.h without it: the waits that matter */
#define pool_scope_wait_status(s) ((s) ? (pool_scope_wait(s), 0) : EINVAL)
#endif

#define NO_THREAD_STACK ((size_t)1 << 20)
#define RETRY_STACK (((size_t)1 << 20) + 65536)
#define NO_SPARE_STACK (((size_t)1 << 20) + 131072)
#define CAPPED_STACK(n) (((size_t)1 << 21) + (size_t)(n)*65536)

static atomic_int retry_failures; /* failed starts of a RETRY_STACK worker 1 */

static int test_thread_create(pool__thread *t, size_t stack_size, pool__thread_proc fn, void *arg) {
    if (fn == pool__worker_main && stack_size == NO_THREAD_STACK) return EAGAIN;
    if (fn == pool__worker_main && stack_size == NO_SPARE_STACK &&
        ((pool__worker *)arg)->index >= 1)
        return EAGAIN;
    if (fn == pool__worker_main && stack_size > CAPPED_STACK(0) && stack_size <= CAPPED_STACK(16) &&
        ((pool__worker *)arg)->index >= (int)((stack_size - CAPPED_STACK(0)) / 65536))
        return EAGAIN;
    if (fn == pool__worker_main && stack_size == RETRY_STACK && ((pool__worker *)arg)->index == 1 &&
        atomic_fetch_add(&retry_failures, 1) == 0)
        return EAGAIN;
    return pool__thread_create_native(t, stack_size, fn, arg);
}

static pool *pool_with(int threads, size_t stack, int max_blocking) {
    pool_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    cfg.stack_size = stack;
    cfg.max_blocking_threads = max_blocking;
    return test_pool_cfg(&cfg);
}

static void wait_flag(atomic_int *flag, double seconds) {
    double until = test_now() + seconds;
    while (!atomic_load(flag) && test_now() < until) test_sleep_us(200);
}

/* ------------------------------------------------------------------------ */
/* Blocking jobs                                                            */
/* ------------------------------------------------------------------------ */

static atomic_int gate_open, gate_entered;

static void gate_run(pool_task *t) {
    (void)t;
    atomic_store(&gate_entered, 1);
    wait_flag(&gate_open, 10);
}

static atomic_int job_runs;

static void count_job(pool_blocking_job *job) {
    (void)job;
    atomic_fetch_add(&job_runs, 1);
}

static void test_job_queued_twice(void) {
    pool *p = pool_with(1, 0, 1);
    pool_task gate = POOL_TASK_INIT(gate_run);
    pool_blocking_job job = POOL_BLOCKING_JOB_INIT(count_job);
    test_watchdog(30, "test_contract: blocking job submitted twice");
    printf("  a blocking job submitted again while queued: EBUSY\n");
    atomic_store(&gate_open, 0);
    atomic_store(&gate_entered, 0);
    atomic_store(&job_runs, 0);
    CHECK(pool_submit_blocking(p, &gate) == 0); /* holds the only blocking thread */
    wait_flag(&gate_entered, 10);
    CHECK(pool_submit_blocking_job(p, &job) == 0);
    CHECK_EQ_I64(pool_submit_blocking_job(p, &job), EBUSY);
    atomic_store(&gate_open, 1);
    CHECK_EQ_I64(pool_wait_blocking_job(&job), 0);
    CHECK_EQ_I64(atomic_load(&job_runs), 1);
    CHECK(pool_destroy(p) == 0);
}

typedef struct again_job {
    pool_blocking_job job;
    pool *p;
    atomic_int runs;
    int want;
    atomic_int resubmit_failed;
} again_job;

static void again_run(pool_blocking_job *job) {
    again_job *a = (again_job *)(void *)job;
    test_sleep_us(1000);
    if (atomic_fetch_add(&a->runs, 1) + 1 < a->want && pool_submit_blocking_job(a->p, job) != 0)
        atomic_fetch_add(&a->resubmit_failed, 1);
}

static void test_job_resubmits_itself(void) {
    pool *p = pool_with(2, 0, 0);
    again_job a;
    int round;
    test_watchdog(30, "test_contract: blocking job submits itself again");
    printf("  a blocking job that submits itself again from its run: the wait sees the last run\n");
    for (round = 0; round < 2; round++) {
        memset(&a, 0, sizeof a);
        a.job.run = again_run;
        a.p = p;
        a.want = 4;
        CHECK(pool_submit_blocking_job(p, &a.job) == 0);
        if (round == 1) test_sleep_us(20000); /* wait after the runs, not during */
        CHECK_EQ_I64(pool_wait_blocking_job(&a.job), 0);
        CHECK_EQ_I64(atomic_load(&a.runs), 4);
        CHECK_EQ_I64(atomic_load(&a.resubmit_failed), 0);
        CHECK_EQ_I64(pool_wait_blocking_job(&a.job), EINVAL); /* waited for already */
    }
    CHECK(pool_destroy(p) == 0);
}

/* ------------------------------------------------------------------------ */
/* A pool with no thread                                                    */
/* ------------------------------------------------------------------------ */

typedef struct flag_task {
    pool_task task;
    atomic_int ran;
    pool_scope *wait_on; /* if set, its run waits on this scope first */
    pool *destroy;       /* if set, its run calls pool_destroy on it */
    int destroy_rc;
} flag_task;

static void flag_run(pool_task *t) {
    flag_task *f = (flag_task *)(void *)t;
    if (f->wait_on) pool_scope_wait(f->wait_on);
    if (f->destroy) f->destroy_rc = pool_destroy(f->destroy);
    atomic_fetch_add(&f->ran, 1);
}

static void wait_scope(void *arg) { pool_scope_wait((pool_scope *)arg); }

static pool *threadless;
static int destroy_rc;

static void destroy_threadless(void *arg) {
    (void)arg;
    destroy_rc = pool_destroy(threadless);
}

static void test_threadless(void) {
    pool_scope s, s1, s2;
    flag_task t, t1, t2, d;
    test_watchdog(30, "test_contract: a pool with no thread");
    printf(
        "  no thread at all: a call that waits on earlier work, the drain, destroy from a task\n");
    threadless = pool_with(2, NO_THREAD_STACK, 0);

    /* CALL_IN(p, f), f waits on a scope whose task was spawned before. */
    memset(&t, 0, sizeof t);
    t.task.run = flag_run;
    pool_scope_init(&s, threadless);
    CHECK(pool_scope_spawn(&s, &t.task) == 0);
    CALL_IN(threadless, wait_scope, &s);
    CHECK_EQ_I64(atomic_load(&t.ran), 1);

    /* pool_destroy from a task that this thread runs because the pool has
       no worker: EDEADLK, and the pool still works afterwards. */
    destroy_rc = -1;
    CALL_IN(threadless, destroy_threadless, NULL);
    CHECK_EQ_I64(destroy_rc, EDEADLK);

    /* The drain: t1 (spawned last, so taken first) waits on s2, whose task
       t2 was spawned before it; d, drained too, destroys the pool again. */
    memset(&t1, 0, sizeof t1);
    memset(&t2, 0, sizeof t2);
    memset(&d, 0, sizeof d);
    t1.task.run = t2.task.run = d.task.run = flag_run;
    t1.wait_on = &s2;
    d.destroy = threadless;
    d.destroy_rc = -1;
    pool_scope_init(&s1, threadless);
    pool_scope_init(&s2, threadless);
    CHECK(pool_scope_spawn(&s1, &d.task) == 0);
    CHECK(pool_scope_spawn(&s2, &t2.task) == 0);
    CHECK(pool_scope_spawn(&s1, &t1.task) == 0);
    CHECK_EQ_I64(pool_destroy(threadless), 0);
    CHECK_EQ_I64(atomic_load(&t1.ran), 1);
    CHECK_EQ_I64(atomic_load(&t2.ran), 1);
    CHECK_EQ_I64(atomic_load(&d.ran), 1);
    CHECK_EQ_I64(d.destroy_rc, EDEADLK);
}

/* ------------------------------------------------------------------------ */
/* A failed thread start is retried while work waits                        */
/* ------------------------------------------------------------------------ */

static atomic_int long_started, quick_ran, quick_ran_during_long;

static void long_run(pool_task *t) {
    double until = test_now() + (test_under_valgrind() ? 60 : 5);
    (void)t;
    atomic_store(&long_started, 1);
    /* The worker is busy with this task (blocked in it, so that valgrind,
       which runs one thread at a time, schedules the others too). */
    while (!atomic_load(&quick_ran) && test_now() < until) test_sleep_us(500);
    if (atomic_load(&quick_ran)) atomic_store(&quick_ran_during_long, 1);
}

static void quick_run(pool_task *t) {
    (void)t;
    atomic_store(&quick_ran, 1);
}

static void test_retry(void) {
    pool *p = pool_with(2, RETRY_STACK, 0);
    pool_task long_task = POOL_TASK_INIT(long_run), quick = POOL_TASK_INIT(quick_run);
    pool_stats s;
    test_watchdog(120, "test_contract: retry of a failed thread start");
    printf(
        "  the second worker fails to start once; the first is busy: the queued task still runs\n");
    CHECK(pool_submit(p, &long_task) == 0);
    wait_flag(&long_started, 10);
    CHECK(pool_submit(p, &quick) == 0);
    wait_flag(&quick_ran, 10);
    while (atomic_load(&long_started) && !atomic_load(&quick_ran_during_long) &&
           atomic_load(&quick_ran) == 0)
        test_sleep_us(1000);
    pool_stats_get(p, &s);
    CHECK(atomic_load(&retry_failures) >= 1);
    CHECK_MSG(atomic_load(&quick_ran), "the queued task never ran");
    CHECK(pool_destroy(p) == 0);
    CHECK_MSG(atomic_load(&quick_ran_during_long),
              "the queued task waited for the busy worker: the failed start was not retried");
    CHECK(s.threads_failed >= 1);
}

/* ------------------------------------------------------------------------ */
/* Fairness                                                                 */
/* ------------------------------------------------------------------------ */

/* A bound that only a broken rule reaches (the watchdog ends it first). */
#define FAIR_LIMIT 100000000

static atomic_int outside_ran, outside_posted;
static atomic_long self_runs, runs_when_posted, runs_when_ran;
static pool *fair_pool;

static void self_run(pool_task *t) {
    long n = atomic_fetch_add(&self_runs, 1) + 1;
    if (!atomic_load(&outside_ran) && n < FAIR_LIMIT) CHECK(pool_submit(fair_pool, t) == 0);
}

static void outside_run(pool_task *t) {
    (void)t;
    atomic_store(&runs_when_ran, atomic_load(&self_runs));
    atomic_store(&outside_ran, 1);
}

static void test_fairness(void) {
    pool_task self = POOL_TASK_INIT(self_run), outside = POOL_TASK_INIT(outside_run);
    long between;
    test_watchdog(60, "test_contract: fairness");
    printf("  a task resubmitting itself on a 1-thread pool does not starve one posted from "
           "outside\n");
    fair_pool = test_pool(1);
    CHECK(pool_submit(fair_pool, &self) == 0);
    while (atomic_load(&self_runs) < 1000) test_sleep_us(100);
    CHECK(pool_submit(fair_pool, &outside) == 0);
    /* Read after the submit returned: the task was in the injector by
       then, however long this thread was descheduled inside the call. */
    atomic_store(&runs_when_posted, atomic_load(&self_runs));
    atomic_store(&outside_posted, 1);
    while (!atomic_load(&outside_ran) && atomic_load(&self_runs) < FAIR_LIMIT) test_sleep_us(100);
    CHECK_MSG(atomic_load(&outside_ran), "the outside task never ran in %d runs of the other",
              FAIR_LIMIT);
    between = atomic_load(&runs_when_ran) - atomic_load(&runs_when_posted);
    printf("    it ran after %ld runs of the resubmitting task\n", between);
    /* The rule: the injector every 61 tasks (the count read after the
       submit can only make `between` smaller, never hide a starved task). */
    CHECK_MSG(between <= 61 + 8, "%ld runs before the outside task", between);
    CHECK(pool_destroy(fair_pool) == 0);
}

/* ------------------------------------------------------------------------ */
/* pool_destroy(B) from a worker of A while B's tasks call into A           */
/* ------------------------------------------------------------------------ */

static pool *pa, *pb;
static atomic_int destroy_begun, g_runs;

static void b_task_run(pool_task *t) {
    (void)t;
    wait_flag(&destroy_begun, 10);
    test_sleep_us(2000); /* the destroying worker is inside pool_destroy now */
    CALL_IN(pa, test_count, &g_runs);
}

static void destroy_b(void *arg) {
    (void)arg;
    atomic_store(&destroy_begun, 1);
    destroy_rc = pool_destroy(pb);
}

static void test_destroy_other_from_worker(void) {
    pool_task bt[4];
    int i;
    test_watchdog(30, "test_contract: pool_destroy(B) from a worker of A");
    printf("  pool_destroy(B) on A's only worker while B's tasks call into A\n");
    pa = test_pool(1);
    pb = test_pool(1);
    for (i = 0; i < 4; i++) {
        bt[i] = (pool_task)POOL_TASK_INIT(b_task_run);
        CHECK(pool_submit(pb, &bt[i]) == 0);
    }
    destroy_rc = -1;
    CALL_IN(pa, destroy_b, NULL);
    CHECK_EQ_I64(destroy_rc, 0);
    CHECK_EQ_I64(atomic_load(&g_runs), 4);
    CHECK(pool_destroy(pa) == 0);
}

/* ------------------------------------------------------------------------ */
/* Scopes: a task waiting on its own scope, two waiters at once             */
/* ------------------------------------------------------------------------ */

#define SCOPE_TASKS 32

typedef struct scoped {
    pool_task task;
    pool_scope *scope;
    int self_wait;
    int status;
} scoped;

static atomic_int scoped_done;

static void scoped_run(pool_task *t) {
    scoped *s = (scoped *)(void *)t;
    if (s->self_wait) {
        s->status = pool_scope_wait_status(s->scope);
        pool_scope_wait(s->scope); /* returns at once: it cannot wait for itself */
    }
    test_sleep_us(2000);
    atomic_fetch_add(&scoped_done, 1);
}

typedef struct waiter_arg {
    pool_scope *scope;
    int done_seen;
    int status;
} waiter_arg;

static void *scope_waiter(void *arg) {
    waiter_arg *w = (waiter_arg *)arg;
    w->status = pool_scope_wait_status(w->scope);
    w->done_seen = atomic_load(&scoped_done);
    return NULL;
}

static void worker_waiter(void *arg) { scope_waiter(arg); }

static void test_scope_waiters(void) {
    pool *p = test_pool(2);
    pool_scope s;
    scoped tasks[SCOPE_TASKS];
    waiter_arg wa[3];
    pthread_t th[2];
    int i, round;
    test_watchdog(30, "test_contract: scope waiters");
    printf("  a task waiting on its own scope; two and three waiters on one scope at once\n");
    for (round = 0; round < 3; round++) {
        atomic_store(&scoped_done, 0);
        pool_scope_init(&s, p);
        for (i = 0; i < SCOPE_TASKS; i++) {
            memset(&tasks[i], 0, sizeof tasks[i]);
            tasks[i].task.run = scoped_run;
            tasks[i].scope = &s;
            tasks[i].self_wait = round == 0 && i == 0;
            CHECK(pool_scope_spawn(&s, &tasks[i].task) == 0);
        }
        memset(wa, 0, sizeof wa);
        for (i = 0; i < 3; i++) wa[i].scope = &s, wa[i].status = -1;
        if (round == 0) {
            pool_scope_wait(&s);
            CHECK_EQ_I64(atomic_load(&scoped_done), SCOPE_TASKS);
            CHECK_EQ_I64(tasks[0].status, EDEADLK);
            continue;
        }
        for (i = 0; i < 2; i++) pthread_create(&th[i], NULL, scope_waiter, &wa[i]);
        if (round == 2) CALL_IN(p, worker_waiter, &wa[2]); /* a worker waits too */
        for (i = 0; i < 2; i++) pthread_join(th[i], NULL);
        for (i = 0; i < (round == 2 ? 3 : 2); i++) {
            CHECK_EQ_I64(wa[i].status, 0);
            CHECK_EQ_I64(wa[i].done_seen, SCOPE_TASKS);
        }
        /* Reused after its waits: it starts afresh. */
        CHECK_EQ_I64(pool_scope_wait_status(&s), 0);
    }
    CHECK_EQ_I64(pool_scope_wait_status(NULL), EINVAL);
    CHECK(pool_destroy(p) == 0);
}

/* Threads that wait on one scope over and over, as fast as they can. Each
   wait either takes the scope's reference or joins the wait under way; a
   waiter that joined a wait just as its owner re-armed the scope used to
   block in a round that nobody owned, and hang. */
#define LOOP_WAITERS 3
#define LOOP_WAITS 200000

typedef struct loop_waiter {
    pool_scope *scope;
    long waits;
    int failures;
} loop_waiter;

static void *scope_loop_waiter(void *arg) {
    loop_waiter *lw = (loop_waiter *)arg;
    long i;
    for (i = 0; i < lw->waits; i++)
        if (pool_scope_wait_status(lw->scope) != 0) lw->failures++;
    return NULL;
}

/* Runs fn on n threads at once, thread i with args + i * size, and waits
   for all of them. */
#define SCOPE_THREADS_MAX 8
static void run_scope_threads(int n, void *(*fn)(void *), void *args, size_t size) {
    pthread_t th[SCOPE_THREADS_MAX];
    int i;
    CHECK(n <= SCOPE_THREADS_MAX);
    for (i = 0; i < n && i < SCOPE_THREADS_MAX; i++)
        CHECK(pthread_create(&th[i], NULL, fn, (char *)args + (size_t)i * size) == 0);
    while (i-- > 0) pthread_join(th[i], NULL);
}

static void test_scope_waiters_loop(void) {
    pool *p = test_pool(2);
    pool_scope s;
    loop_waiter lw[LOOP_WAITERS];
    long waits = (long)test_scaled(LOOP_WAITS, 1000);
    int i;
    test_watchdog(60, "test_contract: threads waiting on one scope in a loop (a waiter joined a "
                      "wait as its owner re-armed the scope, and blocked in a round nobody owns)");
    printf("  %d threads waiting on one empty scope %ld times each\n", LOOP_WAITERS, waits);
    pool_scope_init(&s, p);
    for (i = 0; i < LOOP_WAITERS; i++) lw[i].scope = &s, lw[i].waits = waits, lw[i].failures = 0;
    run_scope_threads(LOOP_WAITERS, scope_loop_waiter, lw, sizeof lw[0]);
    for (i = 0; i < LOOP_WAITERS; i++) CHECK_EQ_I64(lw[i].failures, 0);
    CHECK(pool_destroy(p) == 0);
}

/* Threads that share one scope, each spawning a task of its own and then
   waiting, over and over: every wait must return only after the waiter's
   own task has finished. A spawn that came after a wait's tasks had all
   finished, but before its owner re-armed the scope, was overwritten by the
   re-arm (the count went negative, and a later wait hung), and a thread
   that spawned then and joined that wait returned before its task ran. */
#define SPAWN_WAITERS 3
#define SPAWN_WAITS 100000

typedef struct spawn_waiter {
    pool_scope *scope;
    long waits;
    int failures, early;
} spawn_waiter;

typedef struct own_task {
    pool_task task;
    atomic_int done;
} own_task;

static void own_task_run(pool_task *t) {
    own_task *o = (own_task *)(void *)((char *)t - offsetof(own_task, task));
    atomic_store_explicit(&o->done, 1, memory_order_release);
}

static void *scope_spawn_waiter(void *arg) {
    spawn_waiter *sw = (spawn_waiter *)arg;
    long i;
    for (i = 0; i < sw->waits; i++) {
        own_task o;
        memset(&o, 0, sizeof o);
        o.task.run = own_task_run;
        if (pool_scope_spawn(sw->scope, &o.task) != 0) {
            sw->failures++;
            continue;
        }
        if (pool_scope_wait_status(sw->scope) != 0) sw->failures++;
        if (!atomic_load_explicit(&o.done, memory_order_acquire)) {
            sw->early++;
            /* o is on this stack: it must outlive its task. */
            while (!atomic_load_explicit(&o.done, memory_order_acquire)) sched_yield();
        }
    }
    return NULL;
}

static void test_scope_spawn_waiters(void) {
    pool *p = test_pool(2);
    pool_scope s;
    spawn_waiter sw[SPAWN_WAITERS];
    long waits = (long)test_scaled(SPAWN_WAITS, 1000);
    int i;
    test_watchdog(90, "test_contract: threads spawning into one scope and waiting on it (a spawn "
                      "between a wait's last task and its re-arm was lost, and a wait hung)");
    printf("  %d threads each spawning a task into one scope and waiting, %ld times\n",
           SPAWN_WAITERS, waits);
    pool_scope_init(&s, p);
    for (i = 0; i < SPAWN_WAITERS; i++)
        sw[i].scope = &s, sw[i].waits = waits, sw[i].failures = sw[i].early = 0;
    run_scope_threads(SPAWN_WAITERS, scope_spawn_waiter, sw, sizeof sw[0]);
    for (i = 0; i < SPAWN_WAITERS; i++) {
        CHECK_EQ_I64(sw[i].failures, 0);
        CHECK_EQ_I64(sw[i].early, 0);
    }
    /* Nothing is left counted: a last wait returns at once, and so does one after a spawn. */
    CHECK_EQ_I64(s.pool__pending, POOL__SCOPE_UNWAITED);
    CHECK(pool_destroy(p) == 0);
}

/* A pool of one thread that can start no spare. Its worker runs A, which
   spawns T into scope S, submits D (detached) and B; then B, whose run
   begins above T and D, waits for S: T lies below the base of B's run, and
   is B's to run (a waiter that left it there parked, and needed a spare).
   Taking T empties the deque below B's base; B then joins f and g, and f
   waits for scope S2, whose task comes from outside: g's half must not be
   handed to the pool where only another thread could take it, or be left
   where B's join cannot take it back. Everything runs on the one worker. */
static pool *below_pool;
static pool_scope below_s, below_s2;
static atomic_int below_t_ran, below_x_ran, below_g_ran, below_b_done, below_want_x,
    below_x_spawned;

static test_counted_task below_task_t = TEST_COUNTED_TASK(&below_t_ran, 0),
                         below_task_x = TEST_COUNTED_TASK(&below_x_ran, 0);
static void below_d(pool_task *t) { (void)t; }
static pool_task below_task_d = POOL_TASK_INIT(below_d);

static void below_f(void *arg) {
    (void)arg;
    atomic_store(&below_want_x, 1);
    while (!atomic_load(&below_x_spawned)) sched_yield();
    pool_scope_wait(&below_s2);
}

static void below_nop(void *arg) { (void)arg; }

static void below_b(pool_task *t) {
    (void)t;
    pool_scope_wait(&below_s);
    pool_join(below_pool, below_f, NULL, test_count, &below_g_ran);
    atomic_store(&below_b_done, 1);
}
static pool_task below_task_b = POOL_TASK_INIT(below_b);

static void below_a(pool_task *t) {
    (void)t;
    CHECK(pool_scope_spawn(&below_s, &below_task_t.task) == 0);
    CHECK(pool_submit(below_pool, &below_task_d) == 0);
    CHECK(pool_submit(below_pool, &below_task_b) == 0);
}
static pool_task below_task_a = POOL_TASK_INIT(below_a);

static void test_waits_below_run_base(void) {
    pool_stats st;
    test_watchdog(30, "test_contract: waits below a run's base on a pool that can start no spare");
    printf("  a scope's tasks and a join's half below a run's base, no spare can start\n");
    below_pool = pool_with(1, NO_SPARE_STACK, 0);
    CALL_IN(below_pool, below_nop, NULL); /* its one worker runs */
    pool_scope_init(&below_s, below_pool);
    pool_scope_init(&below_s2, below_pool);
    CHECK(pool_submit(below_pool, &below_task_a) == 0);
    wait_flag(&below_want_x, 5);
    CHECK(pool_scope_spawn(&below_s2, &below_task_x.task) == 0); /* from outside: injected */
    atomic_store(&below_x_spawned, 1);
    wait_flag(&below_b_done, 5);
    CHECK_MSG(atomic_load(&below_b_done), "B did not finish (T %d, X %d, g %d)",
              atomic_load(&below_t_ran), atomic_load(&below_x_ran), atomic_load(&below_g_ran));
    pool_stats_get(below_pool, &st);
    CHECK_EQ_I64(st.spares_started, 0);
    CHECK(pool_destroy(below_pool) == 0);
}

/* ------------------------------------------------------------------------ */
/* A scope waited for from its own work                                     */
/* ------------------------------------------------------------------------ */

/* Worker W1 runs `root`, which spawns task A into scope S and, once A runs
   on W2, waits for S (thief_join: only after X has run). A forks; its
   first half holds on until the second, X, has started elsewhere. X spawns
   a task into S and waits for S, which would wait for itself: A cannot
   finish before X. No spare can start, so where X runs is certain:
    - on_top_join: W1 takes X back from W2 for its wait (it belongs to S),
      and runs it on top of that wait;
    - thief_join: nobody waits for S yet; X is stolen by an idle W3, and
      would own the wait itself.
   Both must return EDEADLK (a join half knows its joiner's scope), and
   everything must run exactly once. Before, X joined or owned the wait
   for S and hung. (A task of another scope that a task of S waits for,
   waiting for S, deadlocks as it would run serially; that is not caught.) */
enum { ONTOP_JOIN, THIEF_JOIN };

static pool *ontop_pool;
static int ontop_kind;
static pool_scope ontop_s;
static atomic_int ontop_a_ready, ontop_x_ran, ontop_x_status, ontop_c_runs, ontop_root_status;
static atomic_int ontop_root_worker, ontop_x_worker;

static test_counted_task ontop_task_c = TEST_COUNTED_TASK(&ontop_c_runs, 0);

static void ontop_x(void *arg) {
    (void)arg;
    atomic_store(&ontop_x_worker, pool_worker_index());
    atomic_store(&ontop_x_ran, 1);
    CHECK(pool_scope_spawn(&ontop_s, &ontop_task_c.task) == 0);
    atomic_store(&ontop_x_status, pool_scope_wait_status(&ontop_s));
}
/* A's first half: X was pushed before it began. */
static void ontop_g(void *arg) {
    (void)arg;
    atomic_store(&ontop_a_ready, 1);
    wait_flag(&ontop_x_ran, 10);
}

static void ontop_a(pool_task *t) {
    (void)t;
    pool_join(ontop_pool, ontop_g, NULL, ontop_x, NULL);
}
static pool_task ontop_task_a = POOL_TASK_INIT(ontop_a);

static void ontop_root(void *arg) {
    (void)arg;
    atomic_store(&ontop_root_worker, pool_worker_index());
    pool_scope_init(&ontop_s, ontop_pool);
    CHECK(pool_scope_spawn(&ontop_s, &ontop_task_a) == 0);
    wait_flag(&ontop_a_ready, 10); /* W2 took A, and X is queued */
    if (ontop_kind == THIEF_JOIN) wait_flag(&ontop_x_ran, 10);
    atomic_store(&ontop_root_status, pool_scope_wait_status(&ontop_s));
}

static void ontop_case(int kind, const char *what) {
    int round, elsewhere = 0;
    char name[160];
    snprintf(name, sizeof name, "test_contract: a scope waited for from its own work (%s)", what);
    test_watchdog(60, name);
    printf("  a scope waited for from its own work: %s\n", what);
    ontop_kind = kind;
    ontop_pool = pool_with(kind == THIEF_JOIN ? 3 : 2, CAPPED_STACK(kind == THIEF_JOIN ? 3 : 2), 0);
    for (round = 0; round < 10; round++) {
        atomic_store(&ontop_a_ready, 0);
        atomic_store(&ontop_x_ran, 0);
        atomic_store(&ontop_x_status, -1);
        atomic_store(&ontop_root_status, -1);
        atomic_store(&ontop_c_runs, 0);
        CALL_IN(ontop_pool, ontop_root, NULL);
        CHECK_EQ_I64(atomic_load(&ontop_root_status), 0);
        CHECK_EQ_I64(atomic_load(&ontop_x_status), EDEADLK);
        CHECK_EQ_I64(atomic_load(&ontop_c_runs), 1);
        elsewhere += (kind == THIEF_JOIN) ==
                     (atomic_load(&ontop_x_worker) == atomic_load(&ontop_root_worker));
    }
    CHECK_MSG(elsewhere == 0, "X ran %s in %d of 10 rounds",
              kind == THIEF_JOIN ? "on W1" : "off W1", elsewhere);
    CHECK(pool_destroy(ontop_pool) == 0);
}

static void test_on_top_join(void) { ontop_case(ONTOP_JOIN, "a join half, on top of the wait"); }
static void test_thief_join(void) {
    ontop_case(THIEF_JOIN, "a join half, stolen by a third worker");
}

/* ------------------------------------------------------------------------ */
/* pool_stats_print and a write error at the flush                          */
/* ------------------------------------------------------------------------ */

static void test_stats_print_full(void) {
#if defined(__linux__)
    pool *p = test_pool(1);
    FILE *f = fopen("/dev/full", "w");
    test_watchdog(30, "test_contract: pool_stats_print to /dev/full");
    printf("  pool_stats_print to /dev/full: ENOSPC, the failed flush's errno\n");
    if (!f) {
        printf("    (no /dev/full: skipped)\n");
    } else {
        int rc = pool_stats_print(p, f);
        FILE *null = fopen("/dev/null", "w");
        CHECK_MSG(rc == ENOSPC, "pool_stats_print returned %d", rc);
        fclose(f);
        /* Its success leaves errno as it was. */
        CHECK(null != NULL);
        if (null) {
            errno = ENOENT;
            CHECK_EQ_I64(pool_stats_print(p, null), 0);
            CHECK_EQ_I64(errno, ENOENT);
            fclose(null);
        }
    }
    CHECK(pool_destroy(p) == 0);
#else
    printf("  pool_stats_print to /dev/full: skipped (Linux only)\n");
#endif
}

/* With an argument, only the part of that name runs. */
int main(int argc, char **argv) {
    static const test_part parts[] = {
        {"job_queued_twice", test_job_queued_twice},
        {"job_resubmits_itself", test_job_resubmits_itself},
        {"threadless", test_threadless},
        {"retry", test_retry},
        {"fairness", test_fairness},
        {"destroy_other_from_worker", test_destroy_other_from_worker},
        {"scope_waiters", test_scope_waiters},
        {"scope_waiters_loop", test_scope_waiters_loop},
        {"scope_spawn_waiters", test_scope_spawn_waiters},
        {"waits_below_run_base", test_waits_below_run_base},
        {"on_top_join", test_on_top_join},
        {"thief_join", test_thief_join},
        {"stats_print_full", test_stats_print_full},
    };
    test_watchdog(30, "test_contract");
    printf("test_contract: contract bugs found from outside\n");
    test_run_parts(argc, argv, parts, sizeof parts / sizeof parts[0]);
    return test_finish("test_contract");
}
