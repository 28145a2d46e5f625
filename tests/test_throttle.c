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
 *    it that waits for that scope, also when the deque holds only another
 *    scope's tasks (s counts none: own_scope_alone);
 *  - other_thread: a scope made outside the pool, spawned into from a
 *    worker, or made on a worker of another pool, never runs a spawn at
 *    once;
 *  - outside_*: a thread outside every pool, in a scope it made, on a
 *    pool with spawn_throttle_outside set and its worker held:
 *    outside_origin: the first 9 spawns (8 beyond the one thread) are
 *    queued, the other 91 run at once on that thread, in no slot;
 *    outside_respawn: a task run so that spawns into its own scope queues
 *    the spawn, and its wait for the scope gets EDEADLK;
 *    outside_inner_scope: a task run so that makes a scope is its origin
 *    (its spawns past 9 run at once), and its wait runs the queued ones
 *    while the worker is held; outside_copy: a copied spawn run so sees
 *    its copy; outside_waiter: another outside thread that waits for the
 *    scope while a spawn runs at once on its origin waits for the run's
 *    end and gets 0; outside_setting: without the setting (or with
 *    $POOL_SPAWN_THROTTLE_OUTSIDE unset or not 1, or the setting off)
 *    every spawn from main is queued; outside_destroy: pool_destroy and
 *    pool_broadcast from a task run at once get EDEADLK; outside_helping:
 *    on a pool that starts no thread and has no slots, main's wait runs
 *    the queued tasks, and a spawn from one of them into the scope is
 *    queued, not run at once; outside_call: a pool_call_on_worker from a
 *    task run at once whose function waits for the task's scope gets
 *    EDEADLK; outside_closing: once pool_destroy has closed the pool, a
 *    spawn past the threshold is refused (ECANCELED) and not run;
 *    outside_other_thread: another thread's
 *    spawns into the scope are all queued;
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
   worker starts, its second never does; outside_helping's pool starts
   none. Every other thread starts. */
#define STARVED_STACK ((size_t)3 << 20)
#define THREADLESS_STACK ((size_t)5 << 20)
static atomic_int starved_workers;

static int test_thread_create(pool__thread *t, size_t stack_size, pool__thread_proc fn, void *arg) {
    if (stack_size == STARVED_STACK && fn == pool__worker_main &&
        atomic_fetch_add(&starved_workers, 1) > 0)
        return EAGAIN;
    if (stack_size == THREADLESS_STACK && fn == pool__worker_main) return EAGAIN;
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

/* Spawns into s, from its origin with the deque full, a task that waits
   for s: it runs at once and its wait gets EDEADLK. */
static void spawn_self_wait(pool_scope *s) {
    self_wait sw;
    sw.task = (pool_task)POOL_TASK_INIT(self_wait_run);
    sw.scope = s;
    sw.rc = -1;
    sw.runs = 0;
    CHECK(pool_scope_spawn(s, &sw.task) == 0);
    CHECK_EQ_I64(sw.runs, 1);
    CHECK_EQ_I64(sw.rc, EDEADLK);
}

static void own_scope(void *arg) {
    mark_task fill[QUEUED];
    pool_scope s;
    (void)arg;
    pool_scope_init(&s, p);
    spawn_marks(&s, fill, QUEUED);
    spawn_self_wait(&s);
    pool_scope_wait(&s);
    check_marks(fill, QUEUED);
}

/* The same with the deque filled by another scope's tasks: s counts no
   task, and only its odd run number tells the wait that it would wait for
   the run it is inside of. */
static void own_scope_alone(void *arg) {
    mark_task fill[QUEUED];
    pool_scope other, s;
    (void)arg;
    pool_scope_init(&other, p);
    spawn_marks(&other, fill, QUEUED);
    pool_scope_init(&s, p);
    spawn_self_wait(&s);
    CHECK(pool_scope_wait_status(&s) == 0);
    pool_scope_wait(&other);
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
static pool_scope waited_scope; /* outside_waiter's */
static atomic_int waiter_counted;

/* The hook in pool__scope_wait_inline: for late_scope, signals the count
   and holds the waiter until the spawn has returned (the origin has
   looked for records at the run's end). */
static void stand_in_counted(struct pool_scope *s) {
    if (s == &waited_scope) atomic_store(&waiter_counted, 1); /* see outside_waiter */
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

/* ---- outside: the throttle for a thread outside every pool ---- */

/* The first QUEUED + 1 spawns of a scope made on main wait for the worker,
   which a gate holds; from then on each runs at once, on main. */
#define OUTSIDE_QUEUED (QUEUED + 1)

#define OUTSIDE_GATES 16
static test_gate outside_gates[OUTSIDE_GATES], *outside_gate = outside_gates;

/* A fresh gate each time: the last one's run may not have seen its open. */
static void outside_hold_worker(void) {
    test_gate *g = &outside_gates[outside_gate - outside_gates + 1];
    if (g == outside_gates + OUTSIDE_GATES) {
        fprintf(stderr, "test_throttle: more than %d gates\n", OUTSIDE_GATES - 1);
        exit(2);
    }
    *g = (test_gate)TEST_GATE_INIT;
    CHECK(pool_submit(p, &g->task) == 0);
    test_gate_wait_entered(g);
    outside_gate = g;
}

typedef struct where_task {
    pool_task task;
    atomic_int runs;
    int index;                /* pool_worker_index() where it ran */
    pool_scope *respawn_into; /* if set: spawns `child` into it, queued */
    mark_task child;
    int wait_status; /* if respawn_into: its wait from inside the task */
} where_task;

static void where_run(pool_task *t) {
    where_task *w = (where_task *)(void *)((char *)t - offsetof(where_task, task));
    w->index = pool_worker_index();
    if (w->respawn_into) {
        w->child.task = (pool_task)POOL_TASK_INIT(mark_run);
        atomic_init(&w->child.runs, 0);
        CHECK(pool_scope_spawn(w->respawn_into, &w->child.task) == 0);
        CHECK_EQ_I64(atomic_load(&w->child.runs), 0); /* a spawn from a task: queued */
        w->wait_status = pool_scope_wait_status(w->respawn_into);
    }
    atomic_fetch_add(&w->runs, 1);
}

static void spawn_where(pool_scope *s, where_task *w, pool_scope *respawn_into) {
    memset(w, 0, sizeof *w);
    w->task = (pool_task)POOL_TASK_INIT(where_run);
    w->index = -2;
    w->respawn_into = respawn_into;
    CHECK(pool_scope_spawn(s, &w->task) == 0);
}

static void outside_origin(void) {
    static where_task tasks[FLAT];
    pool_scope s;
    uint64_t before = inline_count();
    int i;
    outside_hold_worker();
    pool_scope_init(&s, p);
    for (i = 0; i < FLAT; i++) {
        spawn_where(&s, &tasks[i], NULL);
        CHECK_EQ_I64(atomic_load(&tasks[i].runs), i < OUTSIDE_QUEUED ? 0 : 1);
        if (i >= OUTSIDE_QUEUED) CHECK_EQ_I64(tasks[i].index, -1); /* on main, in no slot */
    }
    test_gate_open(outside_gate);
    pool_scope_wait(&s);
    for (i = 0; i < FLAT; i++) CHECK_EQ_I64(atomic_load(&tasks[i].runs), 1);
    CHECK_EQ_I64(inline_count() - before, FLAT - OUTSIDE_QUEUED);
}

/* Holds the worker, makes s on this thread and fills it up to the
   threshold: its next spawn from here runs at once. */
static where_task outside_fill_tasks[OUTSIDE_QUEUED];

static void outside_fill(pool_scope *s) {
    int i;
    outside_hold_worker();
    pool_scope_init(s, p);
    for (i = 0; i < OUTSIDE_QUEUED; i++) spawn_where(s, &outside_fill_tasks[i], NULL);
}

/* Lets the worker go, waits for s: every task of the fill ran once. */
static void outside_finish(pool_scope *s) {
    int i;
    test_gate_open(outside_gate);
    pool_scope_wait(s);
    for (i = 0; i < OUTSIDE_QUEUED; i++) CHECK_EQ_I64(atomic_load(&outside_fill_tasks[i].runs), 1);
}

/* A task run at once on main spawns into its own scope (queued) and waits
   for it (EDEADLK, as on a worker). */
static void outside_respawn(void) {
    static where_task respawner;
    pool_scope s;
    outside_fill(&s);
    spawn_where(&s, &respawner, &s);
    CHECK_EQ_I64(atomic_load(&respawner.runs), 1);
    CHECK_EQ_I64(respawner.wait_status, EDEADLK);
    outside_finish(&s);
    CHECK_EQ_I64(atomic_load(&respawner.child.runs), 1);
}

/* A task run at once on main makes a scope of its own: its body is that
   scope's origin, so its spawns run at once past the threshold too, and
   its wait (in a slot: main is outside the pool) runs the queued ones
   while the worker is still held. */
static void inner_body(pool_task *t) {
    static where_task inner[FLAT];
    pool_scope s;
    int i;
    (void)t;
    pool_scope_init(&s, p);
    for (i = 0; i < FLAT; i++) {
        spawn_where(&s, &inner[i], NULL);
        CHECK_EQ_I64(atomic_load(&inner[i].runs), i < OUTSIDE_QUEUED ? 0 : 1);
    }
    pool_scope_wait(&s);
    for (i = 0; i < FLAT; i++) CHECK_EQ_I64(atomic_load(&inner[i].runs), 1);
}

static void outside_inner_scope(void) {
    pool_task body = POOL_TASK_INIT(inner_body);
    pool_scope s;
    outside_fill(&s);
    CHECK(pool_scope_spawn(&s, &body) == 0); /* runs at once, and returns */
    outside_finish(&s);
}

/* A copied spawn run at once gets its copy. */
typedef struct copied_arg {
    int value;
    atomic_int *seen;
} copied_arg;

static void copied_run(void *arg) {
    copied_arg *a = (copied_arg *)arg;
    atomic_store(a->seen, a->value);
}

static void outside_copy(void) {
    atomic_int seen;
    copied_arg a;
    pool_scope s;
    atomic_init(&seen, 0);
    outside_fill(&s);
    a.value = 42, a.seen = &seen;
    CHECK(pool_scope_spawn_copy(&s, copied_run, &a, sizeof a) == 0);
    CHECK_EQ_I64(atomic_load(&seen), 42); /* ran before the spawn returned */
    outside_finish(&s);
}

/* Another thread outside the pool waits for main's scope while main runs a
   spawn at once: the run holds on until the waiter has counted its
   stand-in, and the wait returns 0 after the run's end. */
static atomic_int at_once_started, at_once_finished, waiter_saw_finished;
static int waiter_status = -1;

static void slow_at_once(pool_task *t) {
    double until = test_now() + 10;
    (void)t;
    atomic_store(&at_once_started, 1);
    while (!atomic_load(&waiter_counted) && test_now() < until) test_sleep_us(100);
    test_sleep_us(1000);
    atomic_store(&at_once_finished, 1);
}

static void *wait_for_main_scope(void *arg) {
    (void)arg;
    while (!atomic_load(&at_once_started)) test_sleep_us(100);
    waiter_status = pool_scope_wait_status(&waited_scope);
    atomic_store(&waiter_saw_finished, atomic_load(&at_once_finished));
    return NULL;
}

static void outside_waiter(void) {
    pool_task slow = POOL_TASK_INIT(slow_at_once);
    pthread_t waiter;
    outside_fill(&waited_scope);
    CHECK(pthread_create(&waiter, NULL, wait_for_main_scope, NULL) == 0);
    CHECK(pool_scope_spawn(&waited_scope, &slow) == 0); /* at once */
    CHECK_EQ_I64(atomic_load(&at_once_finished), 1);
    test_gate_open(outside_gate);
    pthread_join(waiter, NULL);
    CHECK_EQ_I64(waiter_status, 0);
    CHECK_EQ_I64(atomic_load(&waiter_saw_finished), 1);
    outside_finish(&waited_scope);
}

/* spawn_throttle_outside: off by default, on with the environment's 1,
   off when set off whatever the environment says: with the worker held,
   100 spawns from main run at once past the first 9 only when on. */
static void outside_setting(int field, const char *env, int on) {
    static where_task tasks[FLAT];
    pool *saved = p;
    pool_config cfg;
    pool_scope s;
    int i, at_once = 0;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 1;
    cfg.spawn_throttle_outside = field;
    if (env) test_setenv("POOL_SPAWN_THROTTLE_OUTSIDE", env);
    p = test_pool_cfg(&cfg);
    test_setenv("POOL_SPAWN_THROTTLE_OUTSIDE", ""); /* unset again */
    outside_hold_worker();
    pool_scope_init(&s, p);
    for (i = 0; i < FLAT; i++) {
        spawn_where(&s, &tasks[i], NULL);
        at_once += atomic_load(&tasks[i].runs);
    }
    CHECK_MSG(at_once == (on ? FLAT - OUTSIDE_QUEUED : 0), "field %d, env %s: %d of %d at once",
              field, env ? env : "unset", at_once, FLAT);
    test_gate_open(outside_gate);
    pool_scope_wait(&s);
    for (i = 0; i < FLAT; i++) CHECK_EQ_I64(atomic_load(&tasks[i].runs), 1);
    CHECK(pool_destroy(p) == 0);
    p = saved;
}

/* pool_destroy and pool_broadcast from a task run at once on main are
   refused: it is a task of the pool. */
static void nothing_on_worker(void *arg, int worker) {
    (void)arg;
    (void)worker;
}

static int destroy_status, broadcast_status;

static void destroy_from_task(pool_task *t) {
    (void)t;
    destroy_status = pool_destroy(p);
    broadcast_status = pool_broadcast(p, nothing_on_worker, NULL);
}

static void outside_destroy(void) {
    pool_task task = POOL_TASK_INIT(destroy_from_task);
    pool_scope s;
    outside_fill(&s);
    destroy_status = broadcast_status = -1;
    CHECK(pool_scope_spawn(&s, &task) == 0); /* at once */
    CHECK_EQ_I64(destroy_status, EDEADLK);
    CHECK_EQ_I64(broadcast_status, EDEADLK);
    outside_finish(&s);
}

/* A pool whose worker cannot start and that has no slots: main's wait runs
   the scope's queued tasks itself, each a body of its own, so that a spawn
   from one of them into the scope is queued, not run at once. */
static pool_scope helped_scope;
static mark_task helped_child;
static atomic_int helped_child_at_once = -1;

static void respawn_once(pool_task *t) {
    (void)t;
    helped_child.task = (pool_task)POOL_TASK_INIT(mark_run);
    atomic_init(&helped_child.runs, 0);
    CHECK(pool_scope_spawn(&helped_scope, &helped_child.task) == 0);
    atomic_store(&helped_child_at_once, atomic_load(&helped_child.runs));
}

static void outside_helping(void) {
    static mark_task fill[OUTSIDE_QUEUED - 1];
    pool_task respawner = POOL_TASK_INIT(respawn_once);
    pool *saved = p;
    pool_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 1;
    cfg.stack_size = THREADLESS_STACK;
    cfg.external_slots = POOL_EXTERNAL_SLOTS_NONE;
    cfg.spawn_throttle_outside = 1;
    p = test_pool_cfg(&cfg);
    pool_scope_init(&helped_scope, p);
    /* All queued (one short of the threshold); the wait takes the newest,
       the respawner, first, with all 9 unfinished. */
    spawn_marks(&helped_scope, fill, OUTSIDE_QUEUED - 1);
    CHECK(pool_scope_spawn(&helped_scope, &respawner) == 0);
    CHECK_EQ_I64(atomic_load(&helped_child_at_once), -1);
    pool_scope_wait(&helped_scope); /* runs them all here */
    CHECK_EQ_I64(atomic_load(&helped_child_at_once), 0);
    CHECK_EQ_I64(atomic_load(&helped_child.runs), 1);
    check_marks(fill, OUTSIDE_QUEUED - 1);
    CHECK(pool_destroy(p) == 0);
    p = saved;
}

/* A call from a task run at once on main, run on the worker, is part of
   that task: its wait for the task's scope is refused, not deadlocked. */
static pool_scope *call_scope;
static int call_wait_status = -1;

static void wait_in_call(void *arg) {
    (void)arg;
    call_wait_status = pool_scope_wait_status(call_scope);
}

static void call_from_task(pool_task *t) {
    (void)t;
    test_gate_open(outside_gate); /* the worker is free for the call */
    pool_call_on_worker(p, wait_in_call, NULL);
}

static void outside_call(void) {
    pool_task task = POOL_TASK_INIT(call_from_task);
    pool_scope s;
    outside_fill(&s);
    call_scope = &s;
    call_wait_status = -1;
    CHECK(pool_scope_spawn(&s, &task) == 0); /* at once */
    CHECK_EQ_I64(call_wait_status, EDEADLK);
    outside_finish(&s);
}

/* Once pool_destroy has begun, a spawn from outside that the throttle
   would have run at once is refused (ECANCELED) and not run: the destroy
   does not wait for a run at once. */
static pool *closing_pool;

static void *destroy_closing_pool(void *arg) {
    (void)arg;
    CHECK(pool_destroy(closing_pool) == 0);
    return NULL;
}

static void outside_closing(void) {
    static mark_task late;
    pool *saved = p;
    pool_config cfg;
    pool_scope s;
    pthread_t destroyer;
    double until = test_now() + 10;
    int i;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 1;
    cfg.spawn_throttle_outside = 1;
    p = closing_pool = test_pool_cfg(&cfg);
    outside_fill(&s);
    CHECK(pthread_create(&destroyer, NULL, destroy_closing_pool, NULL) == 0);
    /* White-box: until the destroy has closed the injector. */
    while (!(__atomic_load_n(&closing_pool->injector.head, __ATOMIC_ACQUIRE) &
             POOL__INJECTOR_CLOSED) &&
           test_now() < until)
        test_sleep_us(100);
    late.task = (pool_task)POOL_TASK_INIT(mark_run);
    atomic_init(&late.runs, 0);
    CHECK_EQ_I64(pool_scope_spawn(&s, &late.task), ECANCELED);
    CHECK_EQ_I64(atomic_load(&late.runs), 0);
    test_gate_open(outside_gate);
    pthread_join(destroyer, NULL);
    for (i = 0; i < OUTSIDE_QUEUED; i++) CHECK_EQ_I64(atomic_load(&outside_fill_tasks[i].runs), 1);
    CHECK_EQ_I64(atomic_load(&late.runs), 0);
    p = saved;
}

/* A scope made on main, spawned into from another plain thread: queued. */
static pool_scope foreign_scope;
static where_task foreign_tasks[FLAT];

static void *spawn_foreign(void *arg) {
    int i;
    (void)arg;
    for (i = 0; i < FLAT; i++) {
        spawn_where(&foreign_scope, &foreign_tasks[i], NULL);
        CHECK_EQ_I64(atomic_load(&foreign_tasks[i].runs), 0);
    }
    return NULL;
}

static void outside_other_thread(void) {
    pthread_t other;
    int i;
    outside_hold_worker();
    pool_scope_init(&foreign_scope, p);
    CHECK(pthread_create(&other, NULL, spawn_foreign, NULL) == 0);
    pthread_join(other, NULL);
    test_gate_open(outside_gate);
    pool_scope_wait(&foreign_scope);
    for (i = 0; i < FLAT; i++) CHECK_EQ_I64(atomic_load(&foreign_tasks[i].runs), 1);
}

/* The parts, each a case the top of the file describes. */

static void part_from_origin(void) {
    uint64_t before = inline_count();
    printf("  from_origin: %d spawns from the scope's body, the first %d queued\n", FLAT, QUEUED);
    pool_call_on_worker(p, from_origin, NULL);
    CHECK_EQ_I64(inline_count() - before, FLAT - QUEUED);
}

static void part_respawn(void) {
    printf("  respawn: a chain of %d tasks spawning into their own scope\n", CHAIN);
    pool_call_on_worker(p, respawn, NULL);
}

static void part_outer_scope(void) {
    uint64_t before = inline_count();
    printf("  outer_scope: a task run at once spawns into the outer scope\n");
    pool_call_on_worker(p, outer_scope, NULL);
    CHECK_EQ_I64(inline_count() - before, 1);
}

static void part_own_scope(void) {
    printf("  own_scope: a task run at once waits for its own scope\n");
    pool_call_on_worker(p, own_scope, NULL);
    pool_call_on_worker(p, own_scope_nested, NULL);
    pool_call_on_worker(p, own_scope_alone, NULL);
}

static void part_other_thread(void) {
    printf("  other_thread: scopes made outside the pool and on another pool's worker\n");
    other_thread();
}

static void part_idle_worker(void) {
    printf("  idle_worker: with a worker idle, spawns are queued\n");
    pool_call_on_worker(p, idle_worker, NULL);
}

static void part_unstarted_thread(void) {
    printf("  unstarted_thread: with a thread of the pool not started, spawns are queued\n");
    unstarted_thread();
}

static void part_throttle_off(void) {
    printf("  throttle_off: spawn_throttle off and 2\n");
    throttle_off();
}

static void part_outside_origin(void) {
    printf("  outside_origin: %d spawns from main, the first %d queued\n", FLAT, OUTSIDE_QUEUED);
    outside_origin();
}

static void part_outside_respawn(void) {
    printf("  outside_respawn: a task run at once on main spawns into its scope\n");
    outside_respawn();
}

static void part_outside_inner_scope(void) {
    printf("  outside_inner_scope: a task run at once on main makes a scope\n");
    outside_inner_scope();
}

static void part_outside_copy(void) {
    printf("  outside_copy: a copied spawn run at once on main\n");
    outside_copy();
}

static void part_outside_waiter(void) {
    printf("  outside_waiter: another thread waits while main runs a spawn at once\n");
    outside_waiter();
}

static void part_outside_setting(void) {
    printf("  outside_setting: spawn_throttle_outside and $POOL_SPAWN_THROTTLE_OUTSIDE\n");
    outside_setting(0, NULL, 0);
    outside_setting(0, "1", 1);
    outside_setting(0, "yes", 0);
    outside_setting(POOL_SPAWN_THROTTLE_OUTSIDE_OFF, "1", 0);
}

static void part_outside_destroy(void) {
    printf("  outside_destroy: pool_destroy and pool_broadcast from a task run at once\n");
    outside_destroy();
}

static void part_outside_helping(void) {
    printf("  outside_helping: main's wait runs the queued tasks of a pool without threads\n");
    outside_helping();
}

static void part_outside_call(void) {
    printf("  outside_call: a call from a task run at once waits for its scope\n");
    outside_call();
}

static void part_outside_closing(void) {
    printf("  outside_closing: a spawn from main once pool_destroy has begun\n");
    outside_closing();
}

static void part_outside_other_thread(void) {
    printf("  outside_other_thread: main's scope, spawned into from another thread\n");
    outside_other_thread();
}

static void part_waits_race(void) {
    printf("  waits_race: %d waiters outside the pool, spawns run at once\n", RACE_WAITERS);
    in_both_fence_modes(waits_race);
}

static void part_late_record(void) {
    printf("  late_record: a waiter records its stand-in after the origin's look\n");
    in_both_fence_modes(late_record);
}

static void part_stand_ins(void) {
    printf("  stand_ins: the stand-ins' bookkeeping, race by race\n");
    stand_ins();
}

static const test_part parts[] = {
    {"from_origin", part_from_origin},
    {"respawn", part_respawn},
    {"outer_scope", part_outer_scope},
    {"own_scope", part_own_scope},
    {"other_thread", part_other_thread},
    {"idle_worker", part_idle_worker},
    {"unstarted_thread", part_unstarted_thread},
    {"throttle_off", part_throttle_off},
    {"outside_origin", part_outside_origin},
    {"outside_respawn", part_outside_respawn},
    {"outside_inner_scope", part_outside_inner_scope},
    {"outside_copy", part_outside_copy},
    {"outside_waiter", part_outside_waiter},
    {"outside_setting", part_outside_setting},
    {"outside_destroy", part_outside_destroy},
    {"outside_helping", part_outside_helping},
    {"outside_call", part_outside_call},
    {"outside_closing", part_outside_closing},
    {"outside_other_thread", part_outside_other_thread},
    {"waits_race", part_waits_race},
    {"late_record", part_late_record},
    {"stand_ins", part_stand_ins},
};

/* Runs part i under a watchdog of its own, so that a stall names it. */
static void run_part(size_t i) {
    char name[64];
    snprintf(name, sizeof name, "test_throttle %s", parts[i].name);
    test_watchdog(120, name);
    parts[i].fn();
}

/* Runs every part, or with arguments only the parts of those names (as
   test_run_parts does). */
int main(int argc, char **argv) {
    pool_config cfg;
    size_t i;
    int a;
    test_setenv("POOL_SPAWN_THROTTLE_OUTSIDE", ""); /* the parts set it themselves */
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 1;
    cfg.spawn_throttle_outside = 1; /* for the outside_* parts */
    p = test_pool_cfg(&cfg);
    printf("test_throttle: the spawn throttle\n");
    for (i = 0; argc < 2 && i < sizeof parts / sizeof parts[0]; i++) run_part(i);
    for (a = 1; a < argc; a++) {
        for (i = 0; i < sizeof parts / sizeof parts[0] && strcmp(argv[a], parts[i].name) != 0; i++)
            continue;
        CHECK_MSG(i < sizeof parts / sizeof parts[0], "no part named %s", argv[a]);
        if (i < sizeof parts / sizeof parts[0]) run_part(i);
    }
    test_watchdog(60, "test_throttle: pool_destroy");
    CHECK(pool_destroy(p) == 0);
    return test_finish("test_throttle");
}
