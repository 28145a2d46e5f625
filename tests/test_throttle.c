/* test_throttle.c - the spawn throttle: which spawns run at once.
 *
 * A busy worker whose deque holds spawn_throttle tasks (8 on these pools)
 * runs a spawn at once, but only a spawn from the task body that made the
 * scope, and only while no thread of the pool is idle or still to reach
 * its loop (pool_scope_spawn). Every case runs inside pool_call on a pool
 * of one thread (two where the case says so), so the deque holds exactly
 * what the case pushed, and checks
 * exactly which tasks ran before their spawn returned (pool_stats'
 * spawns_inline counts them), that each task ran once, and that the
 * scopes' waits cover everything:
 *  - from_origin: of 100 tasks spawned by the body that made the scope,
 *    the first 8 are queued and the other 92 run at once, in order;
 *  - respawn: a task of the scope that spawns into it again, 2000 times in
 *    a chain, is queued each time (at once, the chain would recurse 2000
 *    deep); only the task spawned by the scope's body ran at once;
 *  - outer_scope: a task run at once into an inner scope that spawns into
 *    the outer scope queues that spawn; the spawned task sees the effect
 *    its spawner made after the spawn (at once, it would run before it);
 *  - own_scope: a task run at once that waits for its own scope gets
 *    EDEADLK, as a queued one does, and so does a task run at once inside
 *    it that waits for that scope;
 *  - other_thread: a scope made outside the pool, or on a worker of
 *    another pool, never runs a spawn at once;
 *  - idle_worker: while a worker of the pool counts as idle (the sleep
 *    counters, changed by hand for the case), every spawn is queued;
 *  - unstarted_thread: on a pool of 2 threads whose second thread cannot
 *    start (thread creation fails for it), every spawn is queued, and so
 *    while the second thread is started but held in its on_thread_start
 *    hook, before its worker loop;
 *  - throttle_off: a pool with spawn_throttle POOL_SPAWN_THROTTLE_OFF
 *    queues every spawn, and one with spawn_throttle 2 runs the third
 *    at once; a wait on another thread that saw a task run at once start
 *    returns only after its end;
 *  - waits_race: threads outside the pool wait for a scope over and over
 *    while its origin runs short spawns at once (20000, and on until the
 *    waiters have waited 5000 times): each wait returns
 *    only after the end of every run it saw start, and afterwards the
 *    scope's count holds nothing but its reference (each stand-in a
 *    waiter counted for a run was counted done exactly once); run with
 *    the asymmetric fences and again with the seq_cst pairing;
 *  - late_record: a waiter held after its stand-in's count until the run
 *    has ended, so that its record comes after the origin's look: it
 *    takes its stand-in back, and its wait returns;
 *  - stand_ins: the stand-ins' bookkeeping step by step, each race of
 *    waits_race made to happen in order: a stand-in the origin takes at
 *    its run's end, one its waiter takes back after missing that look,
 *    one a waiter of a later run takes over, and the stand-in of a later
 *    run that a waiter of an earlier one must leave alone, whether it
 *    takes its own back or comes too late to record one; after each
 *    step the scope's count and record are exactly what they must be.
 * Each case fails with its condition planted away: see README.md's
 * "How pool.h is tested".
 */
#define POOL__THREAD_CREATE test_thread_create
#define POOL__STAND_IN_COUNTED(s) stand_in_counted(s)
struct pool_scope;
static void stand_in_counted(struct pool_scope *s);
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

/* The pool of unstarted_thread is told apart by its stack size: its first
   worker starts, its second never does. Every other thread starts. */
#define STARVED_STACK ((size_t)3 << 20)
static atomic_int starved_workers;

static int test_thread_create(pool__thread *t, size_t stack_size, pool__thread_proc fn, void *arg) {
    if (stack_size == STARVED_STACK && fn == pool__worker_main &&
        atomic_fetch_add(&starved_workers, 1) > 0)
        return EAGAIN;
    return pool__thread_create_native(t, stack_size, fn, arg);
}

#define QUEUED POOL_SPAWN_THROTTLE_DEFAULT

static pool *p;

typedef struct mark_task {
    pool_task task;
    atomic_int runs;
} mark_task;

static void mark_run(pool_task *t) {
    mark_task *m = (mark_task *)(void *)((char *)t - offsetof(mark_task, task));
    atomic_fetch_add(&m->runs, 1);
}

/* Spawns n counting tasks into s. */
static void spawn_marks(pool_scope *s, mark_task *tasks, int n) {
    int i;
    for (i = 0; i < n; i++) {
        tasks[i].task = (pool_task)POOL_TASK_INIT(mark_run);
        atomic_init(&tasks[i].runs, 0);
        CHECK(pool_scope_spawn(s, &tasks[i].task) == 0);
    }
}

/* Each of the n tasks ran exactly once. */
static void check_marks(mark_task *tasks, int n) {
    int i;
    for (i = 0; i < n; i++) CHECK_EQ_I64(atomic_load(&tasks[i].runs), 1);
}

static uint64_t inline_count(void) {
    pool_stats s;
    pool_stats_get(p, &s);
    return s.spawns_inline;
}

/* ---- from_origin ---- */

#define FLAT 100

static void from_origin(void *arg) {
    mark_task tasks[FLAT];
    pool_scope s;
    int i;
    (void)arg;
    pool_scope_init(&s, p);
    for (i = 0; i < FLAT; i++) {
        tasks[i].task = (pool_task)POOL_TASK_INIT(mark_run);
        atomic_init(&tasks[i].runs, 0);
        CHECK(pool_scope_spawn(&s, &tasks[i].task) == 0);
        /* Queued while the deque is short, run at once after. */
        CHECK_EQ_I64(atomic_load(&tasks[i].runs), i < QUEUED ? 0 : 1);
    }
    pool_scope_wait(&s);
    check_marks(tasks, FLAT);
}

/* ---- respawn ---- */

#define CHAIN 2000

typedef struct chain_task {
    pool_task task;
    pool_scope *scope;
    int left;
    int runs;
} chain_task;

static void chain_run(pool_task *t) {
    chain_task *c = (chain_task *)(void *)((char *)t - offsetof(chain_task, task));
    c->runs++;
    if (c->left-- > 0) {
        int before = c->runs;
        CHECK(pool_scope_spawn(c->scope, &c->task) == 0);
        CHECK_EQ_I64(c->runs, before); /* queued: it has not run yet */
    }
}

static void respawn(void *arg) {
    mark_task fill[QUEUED];
    chain_task c;
    pool_scope s;
    uint64_t before = inline_count();
    (void)arg;
    pool_scope_init(&s, p);
    spawn_marks(&s, fill, QUEUED);
    c.task = (pool_task)POOL_TASK_INIT(chain_run);
    c.scope = &s;
    c.left = CHAIN;
    c.runs = 0;
    CHECK(pool_scope_spawn(&s, &c.task) == 0);
    CHECK_EQ_I64(c.runs, 1); /* the scope's body spawned it: at once */
    pool_scope_wait(&s);
    CHECK_EQ_I64(c.runs, CHAIN + 1);
    check_marks(fill, QUEUED);
    CHECK_EQ_I64(inline_count() - before, 1);
}

/* ---- outer_scope ---- */

typedef struct outer_case {
    pool_task inner_task, outer_task;
    pool_scope *outer;
    int spawner_done;  /* set by the inner task after its spawn returned */
    int seen_by_outer; /* what the outer task saw of it: 1 */
    int outer_runs;
} outer_case;

static void outer_run(pool_task *t) {
    outer_case *o = (outer_case *)(void *)((char *)t - offsetof(outer_case, outer_task));
    o->outer_runs++;
    o->seen_by_outer = o->spawner_done;
}

static void inner_run(pool_task *t) {
    outer_case *o = (outer_case *)(void *)((char *)t - offsetof(outer_case, inner_task));
    CHECK(pool_scope_spawn(o->outer, &o->outer_task) == 0);
    CHECK_EQ_I64(o->outer_runs, 0); /* queued: its spawner goes on first */
    o->spawner_done = 1;
}

static void outer_scope(void *arg) {
    mark_task fill[QUEUED];
    outer_case o;
    pool_scope outer, inner;
    (void)arg;
    memset(&o, 0, sizeof o);
    pool_scope_init(&outer, p);
    spawn_marks(&outer, fill, QUEUED);
    o.inner_task = (pool_task)POOL_TASK_INIT(inner_run);
    o.outer_task = (pool_task)POOL_TASK_INIT(outer_run);
    o.outer = &outer;
    pool_scope_init(&inner, p);
    CHECK(pool_scope_spawn(&inner, &o.inner_task) == 0);
    CHECK_EQ_I64(o.spawner_done, 1); /* the inner task ran at once */
    pool_scope_wait(&inner);
    pool_scope_wait(&outer);
    CHECK_EQ_I64(o.outer_runs, 1);
    CHECK_EQ_I64(o.seen_by_outer, 1);
}

/* ---- own_scope ---- */

typedef struct self_wait {
    pool_task task;
    pool_scope *scope;
    int rc;
    int runs;
} self_wait;

static void self_wait_run(pool_task *t) {
    self_wait *sw = (self_wait *)(void *)((char *)t - offsetof(self_wait, task));
    sw->runs++;
    sw->rc = pool_scope_wait_status(sw->scope);
}

static void own_scope(void *arg) {
    mark_task fill[QUEUED];
    self_wait sw;
    pool_scope s;
    (void)arg;
    pool_scope_init(&s, p);
    spawn_marks(&s, fill, QUEUED);
    sw.task = (pool_task)POOL_TASK_INIT(self_wait_run);
    sw.scope = &s;
    sw.rc = -1;
    sw.runs = 0;
    CHECK(pool_scope_spawn(&s, &sw.task) == 0);
    CHECK_EQ_I64(sw.runs, 1);
    CHECK_EQ_I64(sw.rc, EDEADLK);
    pool_scope_wait(&s);
    check_marks(fill, QUEUED);
}

/* A task of s run at once whose own task, of an inner scope and run at
   once too, waits for s: it would wait for the run it is inside of. */
typedef struct nested_wait {
    pool_task task;
    self_wait inner;
} nested_wait;

static void nested_wait_run(pool_task *t) {
    nested_wait *nw = (nested_wait *)(void *)((char *)t - offsetof(nested_wait, task));
    pool_scope inner;
    pool_scope_init(&inner, p);
    CHECK(pool_scope_spawn(&inner, &nw->inner.task) == 0);
    CHECK_EQ_I64(nw->inner.runs, 1); /* at once */
    pool_scope_wait(&inner);
}

static void own_scope_nested(void *arg) {
    mark_task fill[QUEUED];
    nested_wait nw;
    pool_scope s;
    uint64_t before = inline_count();
    (void)arg;
    pool_scope_init(&s, p);
    spawn_marks(&s, fill, QUEUED);
    nw.task = (pool_task)POOL_TASK_INIT(nested_wait_run);
    nw.inner.task = (pool_task)POOL_TASK_INIT(self_wait_run);
    nw.inner.scope = &s;
    nw.inner.rc = -1;
    nw.inner.runs = 0;
    CHECK(pool_scope_spawn(&s, &nw.task) == 0);
    CHECK_EQ_I64(inline_count() - before, 2);
    CHECK_EQ_I64(nw.inner.rc, EDEADLK);
    pool_scope_wait(&s);
    check_marks(fill, QUEUED);
}

/* ---- other_thread ---- */

static pool *q; /* another pool of one thread */

static uint64_t inline_count_of(pool *of) {
    pool_stats s;
    pool_stats_get(of, &s);
    return s.spawns_inline;
}

/* Spawns QUEUED + 4 tasks into s from a worker of p (s made elsewhere):
   none runs at once. */
static void spawn_queued(void *arg) {
    pool_scope *s = (pool_scope *)arg;
    mark_task tasks[QUEUED + 4];
    uint64_t before = inline_count();
    int i;
    for (i = 0; i < QUEUED + 4; i++) {
        tasks[i].task = (pool_task)POOL_TASK_INIT(mark_run);
        atomic_init(&tasks[i].runs, 0);
        CHECK(pool_scope_spawn(s, &tasks[i].task) == 0);
        CHECK_EQ_I64(atomic_load(&tasks[i].runs), 0);
    }
    CHECK_EQ_I64(inline_count(), before);
    pool_scope_wait(s);
    check_marks(tasks, QUEUED + 4);
}

/* On q's worker, with QUEUED tasks on its deque: a scope of p made and
   spawned into by this body. Its tasks are p's: none runs here at once. */
static void made_on_other_pool(void *arg) {
    mark_task fill[QUEUED], tasks[QUEUED + 4];
    pool_scope own, s;
    uint64_t before_p = inline_count_of(p), before_q = inline_count_of(q);
    (void)arg;
    pool_scope_init(&own, q);
    spawn_marks(&own, fill, QUEUED);
    pool_scope_init(&s, p);
    spawn_marks(&s, tasks, QUEUED + 4);
    pool_scope_wait(&s);
    pool_scope_wait(&own);
    CHECK_EQ_I64(inline_count_of(p), before_p);
    CHECK_EQ_I64(inline_count_of(q), before_q);
    check_marks(tasks, QUEUED + 4);
    check_marks(fill, QUEUED);
}

static void other_thread(void) {
    pool_config cfg;
    pool_scope s;
    pool_scope_init(&s, p); /* outside every pool */
    pool_call_on_worker(p, spawn_queued, &s);
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 1;
    q = test_pool_cfg(&cfg);
    pool_call_on_worker(q, made_on_other_pool, NULL);
    CHECK(pool_destroy(q) == 0);
}

/* ---- idle_worker ---- */

static void idle_worker(void *arg) {
    mark_task fill[QUEUED], tasks[4], last;
    pool_scope s;
    /* One inactive worker more, as if one searched for work. */
    const uint64_t one_idle = (uint64_t)1 << 16;
    int i;
    (void)arg;
    pool_scope_init(&s, p);
    spawn_marks(&s, fill, QUEUED);
    __atomic_fetch_add(&p->counters, one_idle, __ATOMIC_SEQ_CST);
    spawn_marks(&s, tasks, 4);
    for (i = 0; i < 4; i++) CHECK_EQ_I64(atomic_load(&tasks[i].runs), 0);
    __atomic_fetch_sub(&p->counters, one_idle, __ATOMIC_SEQ_CST);
    spawn_marks(&s, &last, 1);
    CHECK_EQ_I64(atomic_load(&last.runs), 1);
    pool_scope_wait(&s);
    check_marks(fill, QUEUED);
    check_marks(tasks, 4);
}

/* ---- unstarted_thread ---- */

static pool *starved; /* 2 threads, the second of which never starts */

/* On a worker of `starved`: QUEUED spawns, `between` (if any), then 4
   more, all queued; the pool has started `started` threads by then. */
static void spawn_starved_checked(int started, void (*between)(void)) {
    mark_task fill[QUEUED], tasks[4];
    pool_scope s;
    pool_stats st;
    int i;
    pool_scope_init(&s, starved);
    spawn_marks(&s, fill, QUEUED);
    if (between) between();
    spawn_marks(&s, tasks, 4);
    for (i = 0; i < 4; i++) CHECK_EQ_I64(atomic_load(&tasks[i].runs), 0);
    pool_stats_get(starved, &st);
    CHECK_EQ_I64(st.threads_started, started); /* the case held */
    CHECK_EQ_I64(st.spawns_inline, 0);
    pool_scope_wait(&s);
    check_marks(fill, QUEUED);
    check_marks(tasks, 4);
}

static void spawn_starved(void *arg) {
    (void)arg;
    spawn_starved_checked(1, NULL);
}

/* The second thread of `starved`, held in its start hook until released. */
static atomic_int hold_second = 1, second_held;

static void hold_start(void *user, int worker_index) {
    (void)user;
    if (worker_index != 1) return;
    atomic_store(&second_held, 1);
    while (atomic_load(&hold_second)) test_sleep_us(1000);
}

/* The queued tasks started the second thread: wait until it is held. */
static void until_second_held(void) {
    double deadline = test_now() + 10;
    while (!atomic_load(&second_held) && test_now() < deadline) test_sleep_us(1000);
    CHECK(atomic_load(&second_held));
}

static void spawn_while_held(void *arg) {
    (void)arg;
    spawn_starved_checked(2, until_second_held);
    atomic_store(&hold_second, 0);
}

static void unstarted_thread(void) {
    pool_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    cfg.stack_size = STARVED_STACK;
    starved = test_pool_cfg(&cfg);
    pool_call_on_worker(starved, spawn_starved, NULL);
    CHECK(pool_destroy(starved) == 0);
    cfg.stack_size = 0;
    cfg.on_thread_start = hold_start;
    starved = test_pool_cfg(&cfg);
    pool_call_on_worker(starved, spawn_while_held, NULL);
    CHECK(pool_destroy(starved) == 0);
}

/* ---- throttle_off ---- */

static pool *configured; /* a pool of one thread with spawn_throttle set */

static void spawn_three(void *arg) {
    mark_task tasks[3];
    pool_scope s;
    int *ran_at_once = (int *)arg;
    pool_scope_init(&s, configured);
    spawn_marks(&s, tasks, 3);
    *ran_at_once = atomic_load(&tasks[2].runs);
    CHECK_EQ_I64(atomic_load(&tasks[0].runs), 0);
    CHECK_EQ_I64(atomic_load(&tasks[1].runs), 0);
    pool_scope_wait(&s);
    check_marks(tasks, 3);
}

/* A task run at once that a thread outside the pool sees start: that
   thread's wait on its scope returns after the task's end. */
static pool_scope slow_scope; /* static: the outside waiter may outlive the call */
static atomic_int slow_started, slow_finished;

static void slow_run(pool_task *t) {
    (void)t;
    atomic_store(&slow_started, 1);
    test_sleep_us(100000);
    atomic_store(&slow_finished, 1);
}

static void spawn_slow(void *arg) {
    mark_task fill[2];
    pool_task slow = POOL_TASK_INIT(slow_run);
    pool_scope fill_scope;
    (void)arg;
    pool_scope_init(&fill_scope, configured);
    spawn_marks(&fill_scope, fill, 2); /* the deque now holds the throttle's 2 */
    pool_scope_init(&slow_scope, configured);
    CHECK(pool_scope_spawn(&slow_scope, &slow) == 0);
    CHECK_EQ_I64(atomic_load(&slow_finished), 1); /* it ran at once */
    pool_scope_wait(&fill_scope);
    check_marks(fill, 2);
}

static void *wait_slow_scope(void *arg) {
    (void)arg;
    while (!atomic_load(&slow_started)) test_sleep_us(100);
    pool_scope_wait(&slow_scope);
    CHECK_MSG(atomic_load(&slow_finished) == 1, "a wait returned while a task it saw start ran");
    return NULL;
}

static void throttle_off(void) {
    pool_config cfg;
    pthread_t waiter;
    int ran_at_once = -1;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 1;
    cfg.spawn_throttle = POOL_SPAWN_THROTTLE_OFF;
    configured = test_pool_cfg(&cfg);
    pool_call_on_worker(configured, spawn_three, &ran_at_once);
    CHECK_EQ_I64(ran_at_once, 0);
    CHECK(pool_destroy(configured) == 0);
    cfg.spawn_throttle = 2;
    configured = test_pool_cfg(&cfg);
    pool_call_on_worker(configured, spawn_three, &ran_at_once);
    CHECK_EQ_I64(ran_at_once, 1);
    CHECK(pthread_create(&waiter, NULL, wait_slow_scope, NULL) == 0);
    pool_call_on_worker(configured, spawn_slow, NULL);
    CHECK(pthread_join(waiter, NULL) == 0);
    CHECK(pool_destroy(configured) == 0);
}

/* ---- waits_race ---- */

#define RACE_RUNS 20000
#define RACE_WAITERS 3
#define RACE_WAITS 5000

static pool_scope race_scope;
static atomic_int race_ready, race_over, race_started, race_finished, race_waits;
static int race_runs;     /* spawns the origin made */
static int race_recorded; /* long runs that saw a waiter's stand-in recorded */

/* Most runs are short, so that waiters see runs end while they look
   (they take their stand-ins back); every fourth lasts until a waiter has
   recorded a stand-in for it (or 2 ms), which the origin then takes at its
   end. */
static void race_run(pool_task *t) {
    double until = test_now() + 0.002;
    (void)t;
    if (atomic_fetch_add(&race_started, 1) % 4 == 0) {
        /* Relaxed: this thread wrote the run's number. */
        uint64_t mine = POOL__OWED(POOL__LOAD(&race_scope.pool__inline_runs, POOL__RELAXED), 0);
        while ((POOL__LOAD(&race_scope.pool__inline_owed, POOL__RELAXED) & ~(uint64_t)0xffff) !=
                   mine &&
               test_now() < until)
            continue;
        if ((POOL__LOAD(&race_scope.pool__inline_owed, POOL__RELAXED) & ~(uint64_t)0xffff) == mine)
            race_recorded++;
    }
    atomic_fetch_add(&race_finished, 1);
}

static void race_origin(void *arg) {
    mark_task fill[QUEUED];
    pool_scope fill_scope;
    pool_task run = POOL_TASK_INIT(race_run);
    int i;
    (void)arg;
    pool_scope_init(&fill_scope, configured);
    spawn_marks(&fill_scope, fill, QUEUED); /* the deque now holds the throttle's */
    pool_scope_init(&race_scope, configured);
    atomic_store(&race_ready, 1);
    /* Until the waiters have waited often enough (the watchdog ends a test
       whose waits never return). */
    for (i = 0; i < RACE_RUNS || atomic_load(&race_waits) < RACE_WAITS; i++)
        CHECK(pool_scope_spawn(&race_scope, &run) == 0);
    race_runs = i;
    atomic_store(&race_over, 1);
    pool_scope_wait(&fill_scope);
    check_marks(fill, QUEUED);
}

static void *race_waiter(void *arg) {
    (void)arg;
    while (!atomic_load(&race_ready)) test_sleep_us(100);
    while (!atomic_load(&race_over)) {
        int started = atomic_load(&race_started);
        CHECK(pool_scope_wait_status(&race_scope) == 0);
        CHECK_MSG(atomic_load(&race_finished) >= started,
                  "a wait returned while a task it saw start ran");
        atomic_fetch_add(&race_waits, 1);
    }
    return NULL;
}

/* Runs case(), then again with the seq_cst pairing in place of the
   asymmetric fences (where they are in use); either is correct at any
   time, as both sides then pay for a full fence. */
static void in_both_fence_modes(void (*case_fn)(void)) {
    int asymmetric = pool__fence_is_asymmetric();
    case_fn();
    POOL__STORE(&pool__fence_asymmetric, 0, POOL__RELAXED);
    case_fn();
    POOL__STORE(&pool__fence_asymmetric, asymmetric, POOL__RELAXED);
}

static void waits_race(void) {
    pool_config cfg;
    pthread_t waiters[RACE_WAITERS];
    uint64_t inline_before;
    int i;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 1;
    configured = test_pool_cfg(&cfg);
    atomic_store(&race_ready, 0);
    atomic_store(&race_over, 0);
    atomic_store(&race_started, 0);
    atomic_store(&race_finished, 0);
    atomic_store(&race_waits, 0);
    race_recorded = 0;
    inline_before = inline_count_of(configured);
    for (i = 0; i < RACE_WAITERS; i++)
        CHECK(pthread_create(&waiters[i], NULL, race_waiter, NULL) == 0);
    pool_call_on_worker(configured, race_origin, NULL);
    for (i = 0; i < RACE_WAITERS; i++) CHECK(pthread_join(waiters[i], NULL) == 0);
    pool_scope_wait(&race_scope);
    CHECK_EQ_I64(atomic_load(&race_finished), race_runs);
    CHECK_EQ_I64(inline_count_of(configured) - inline_before, race_runs);
    CHECK(race_scope.pool__pending == POOL__SCOPE_UNWAITED);
    CHECK_EQ_I64(race_scope.pool__inline_owed, 0);
    CHECK(race_recorded > 0);
    printf("    %s fences: %d waits, %d runs, %d of them long with a stand-in recorded\n",
           pool__fence_is_asymmetric() ? "asymmetric" : "seq_cst", atomic_load(&race_waits),
           race_runs, race_recorded);
    CHECK(pool_destroy(configured) == 0);
}

/* ---- late_record ---- */

static pool_scope late_scope;
static atomic_int late_running, late_counted, late_returned;

/* The hook in pool__scope_wait_inline: for late_scope, signals the count
   and holds the waiter until the spawn has returned (the origin has
   looked for records at the run's end). */
static void stand_in_counted(struct pool_scope *s) {
    if (s != &late_scope) return;
    atomic_store(&late_counted, 1);
    while (!atomic_load(&late_returned)) test_sleep_us(100);
}

static void late_run(pool_task *t) {
    (void)t;
    atomic_store(&late_running, 1);
    while (!atomic_load(&late_counted)) test_sleep_us(100);
}

static void late_origin(void *arg) {
    mark_task fill[QUEUED];
    pool_scope fill_scope;
    pool_task run = POOL_TASK_INIT(late_run);
    (void)arg;
    pool_scope_init(&fill_scope, configured);
    spawn_marks(&fill_scope, fill, QUEUED);
    pool_scope_init(&late_scope, configured); /* this body is its origin */
    CHECK(pool_scope_spawn(&late_scope, &run) == 0);
    atomic_store(&late_returned, 1);
    pool_scope_wait(&fill_scope);
    check_marks(fill, QUEUED);
}

static void *late_waiter(void *arg) {
    (void)arg;
    while (!atomic_load(&late_running)) test_sleep_us(100);
    CHECK(pool_scope_wait_status(&late_scope) == 0); /* the watchdog ends a wait that hangs */
    return NULL;
}

static void late_record(void) {
    pool_config cfg;
    pthread_t waiter;
    uint64_t inline_before;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 1;
    configured = test_pool_cfg(&cfg);
    atomic_store(&late_running, 0);
    atomic_store(&late_counted, 0);
    atomic_store(&late_returned, 0);
    inline_before = inline_count_of(configured);
    CHECK(pthread_create(&waiter, NULL, late_waiter, NULL) == 0);
    pool_call_on_worker(configured, late_origin, NULL);
    CHECK(pthread_join(waiter, NULL) == 0);
    CHECK_EQ_I64(inline_count_of(configured) - inline_before, 1);
    CHECK(late_scope.pool__pending == POOL__SCOPE_UNWAITED);
    CHECK_EQ_I64(late_scope.pool__inline_owed, 0);
    CHECK(pool_destroy(configured) == 0);
}

/* ---- stand_ins ---- */

/* s's count (its reference aside) and its record of stand-ins. */
static void check_owed(pool_scope *s, size_t pending, uint64_t run, uint32_t n) {
    CHECK_EQ_I64(s->pool__pending, POOL__SCOPE_UNWAITED + pending);
    CHECK_EQ_I64(s->pool__inline_owed, n ? POOL__OWED(run, n) : 0);
}

/* The origin's side: run `run` (odd) begins, then ends. */
static void origin_runs(pool_scope *s, uint64_t run) {
    s->pool__inline_runs = run - 1;
    pool__scope_inline_end(s, pool__scope_inline_begin(s));
    CHECK_EQ_I64(s->pool__inline_runs, run + 1);
}

/* A waiter's side up to its second look: its stand-in counted and recorded. */
static void waiter_records(pool_scope *s, uint64_t run) {
    pool__scope_count_spawns(s, 1);
    CHECK(pool__scope_owe(s, run) == 0);
}

static void stand_ins(void) {
    pool_scope s;
    pool_scope_init(&s, p);
    /* Taken by the origin: run 1 still going at the waiter's second look. */
    waiter_records(&s, 1);
    waiter_records(&s, 1);
    check_owed(&s, 2, 1, 2);
    origin_runs(&s, 1);
    check_owed(&s, 0, 0, 0);
    /* Taken back: run 3 ended before the record, and the origin's look
       (run 5's end here) came before it too. */
    waiter_records(&s, 3);
    check_owed(&s, 1, 3, 1);
    pool__scope_owe_back(&s, 3);
    check_owed(&s, 0, 0, 0);
    /* Taken over: a waiter of run 7 finds run 5's stand-ins, whose waiters
       have not taken them back yet; they then find none of their run. */
    waiter_records(&s, 5);
    waiter_records(&s, 5);
    waiter_records(&s, 7);
    check_owed(&s, 1, 7, 1);
    pool__scope_owe_back(&s, 5);
    check_owed(&s, 1, 7, 1);
    origin_runs(&s, 7);
    check_owed(&s, 0, 0, 0);
    /* Left alone: the origin took run 9's stand-in at its end; a waiter of
       run 11 records; run 9's waiter, late, must not take run 11's. */
    waiter_records(&s, 9);
    origin_runs(&s, 9);
    waiter_records(&s, 11);
    pool__scope_owe_back(&s, 9);
    check_owed(&s, 1, 11, 1);
    pool__scope_owe_back(&s, 11); /* run 11 ended unseen: its waiter takes it back */
    check_owed(&s, 0, 0, 0);
    /* Too late to record: a waiter that first looked during run 13 meets
       run 15's record; run 13 has ended, and run 15's stand-in stays. */
    waiter_records(&s, 15);
    pool__scope_count_spawns(&s, 1);
    CHECK(pool__scope_owe(&s, 13) == 1);
    pool__scope_task_done(&s);
    check_owed(&s, 1, 15, 1);
    origin_runs(&s, 15);
    check_owed(&s, 0, 0, 0);
    /* Runs far apart: a record of run 2^32 + 17 is later than run 17's
       waiter (a 32-bit run number would take it for run 17 itself), and
       one of run 19 earlier than a waiter of run 2^40 + 19's. */
    waiter_records(&s, ((uint64_t)1 << 32) + 17);
    pool__scope_count_spawns(&s, 1);
    CHECK(pool__scope_owe(&s, 17) == 1);
    pool__scope_task_done(&s);
    check_owed(&s, 1, ((uint64_t)1 << 32) + 17, 1);
    origin_runs(&s, ((uint64_t)1 << 32) + 17);
    waiter_records(&s, 19);
    waiter_records(&s, ((uint64_t)1 << 40) + 19);
    check_owed(&s, 1, ((uint64_t)1 << 40) + 19, 1);
    origin_runs(&s, ((uint64_t)1 << 40) + 19);
    check_owed(&s, 0, 0, 0);
    pool_scope_wait(&s);
}

int main(void) {
    pool_config cfg;
    uint64_t before;
    test_watchdog(120, "test_throttle");
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 1;
    p = test_pool_cfg(&cfg);
    printf("test_throttle: the spawn throttle\n");

    printf("  from_origin: %d spawns from the scope's body, the first %d queued\n", FLAT, QUEUED);
    before = inline_count();
    pool_call_on_worker(p, from_origin, NULL);
    CHECK_EQ_I64(inline_count() - before, FLAT - QUEUED);

    printf("  respawn: a chain of %d tasks spawning into their own scope\n", CHAIN);
    pool_call_on_worker(p, respawn, NULL);

    printf("  outer_scope: a task run at once spawns into the outer scope\n");
    before = inline_count();
    pool_call_on_worker(p, outer_scope, NULL);
    CHECK_EQ_I64(inline_count() - before, 1);

    printf("  own_scope: a task run at once waits for its own scope\n");
    pool_call_on_worker(p, own_scope, NULL);
    pool_call_on_worker(p, own_scope_nested, NULL);

    printf("  other_thread: scopes made outside the pool and on another pool's worker\n");
    other_thread();

    printf("  idle_worker: with a worker idle, spawns are queued\n");
    pool_call_on_worker(p, idle_worker, NULL);

    printf("  unstarted_thread: with a thread of the pool not started, spawns are queued\n");
    unstarted_thread();

    printf("  throttle_off: spawn_throttle off and 2\n");
    throttle_off();

    printf("  waits_race: %d waiters outside the pool, spawns run at once\n", RACE_WAITERS);
    in_both_fence_modes(waits_race);

    printf("  late_record: a waiter records its stand-in after the origin's look\n");
    in_both_fence_modes(late_record);

    printf("  stand_ins: the stand-ins' bookkeeping, race by race\n");
    stand_ins();

    CHECK(pool_destroy(p) == 0);
    return test_finish("test_throttle");
}
