/* test_waiting.c - what a thread does while it waits: the waiting rule.
 *
 * A worker that waits (a stolen join half, a scope, a call into another
 * pool, a blocking job) may only run work that belongs to what it waits
 * for; everything else is left to the pool's other threads, and a worker
 * that parks is replaced by a spare thread so that the pool keeps its
 * CPUs busy. Each part below is a scenario that broke under the old rule
 * (a waiter ran whatever it found):
 *
 *  1. nesting: a join tree of depth 14 on pool A whose 16384 leaves each
 *     wait (pool_call into pool B, or a short blocking job) on workers with
 *     a 256 KiB stack and 1 KiB of locals per leaf. Under the old rule
 *     thousands of leaves nested their waits on one stack and overflowed
 *     it. The deepest nesting of waits on any thread (pool_stats'
 *     wait_depth_max) must stay within the tree's depth plus a constant.
 *  2. deadlock through a blocking job: F runs on worker X because blocking
 *     job J called CALL_IN(A, F); F's join half is stolen; task W waits
 *     for J. Under the old rule X picked up W while waiting for the half:
 *     W waits for J, J for F, F lies under W on X's stack.
 *  3. the same cycle with fork-join alone: F is called by a task T of a
 *     scope of pool B, and W waits for that scope.
 *  4. a pool keeps its CPUs busy: one worker of a 2-thread pool waits in a
 *     call into another pool while its own pool has queued work; the
 *     queued tasks must run on two threads other than the waiter (the
 *     other worker and a spare) while it waits, never on the waiter's
 *     stack.
 *  5. pools calling into each other in a cycle (A -> B -> A), with
 *     blocking-job waits in between, at 2 and at 16 threads per pool.
 *  6. the only worker of a pool parks while another thread is starting a
 *     thread of that pool (it holds the spawn lock): the parker's spare
 *     still starts, and runs the task the parker left queued.
 *
 * Every part is guarded by the watchdog. With -DTEST_BASELINE the checks
 * of statistics that an older pool.h lacks are left out, so that the
 * scenarios themselves can be run against it.
 */
/* Part 6 waits until a thread of pool_a is about to block on the spawn
   lock that the test holds. */
#ifndef TEST_BASELINE
#include <stdatomic.h>
struct pool;
static struct pool *pool_a;
static atomic_int spawn_lock_waiters;
#define POOL__SPAWN_LOCK_WAITING(p) \
    ((p) == pool_a ? (void)atomic_fetch_add(&spawn_lock_waiters, 1) : (void)0)
#endif
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#ifdef TEST_BASELINE
static pool *pool_a;
#endif
static pool *pool_b;

/* ------------------------------------------------------------------------ */
/* 1. Nesting                                                               */
/* ------------------------------------------------------------------------ */

#define TREE_DEPTH 14
/* A wait for each level of the tree, the leaf's own wait, and the outside
   call that starts the tree: anything above this means waits nest by the
   amount of work, not by the program's nesting. */
#define DEPTH_BOUND (TREE_DEPTH + 3)

enum leaf_kind { LEAF_CALL, LEAF_BLOCKING };

typedef struct node {
    int depth;
    enum leaf_kind kind;
    atomic_long *leaves;
} node;

static void tiny(void *arg) { atomic_fetch_add((atomic_long *)arg, 1); }

static void blocking_tiny(pool_blocking_job *job) { (void)job; }

static void tree(void *arg) {
    node *n = (node *)arg;
    if (n->depth == 0) {
        /* 1 KiB of locals per leaf frame, as the reported crash had. */
        volatile char pad[1024];
        atomic_long inner;
        memset((char *)pad, n->depth, sizeof pad);
        atomic_init(&inner, 0);
        if (n->kind == LEAF_CALL) {
            CALL_IN(pool_b, tiny, &inner);
        } else {
            pool_blocking_job job = POOL_BLOCKING_JOB_INIT(blocking_tiny);
            if (pool_submit_blocking_job(pool_a, &job) == 0) {
                if (pool_wait_blocking_job(&job) == 0) atomic_fetch_add(&inner, 1);
            }
        }
        if (atomic_load(&inner) == 1 && pad[0] == 0) atomic_fetch_add(n->leaves, 1);
        return;
    }
    {
        node left = *n, right = *n;
        left.depth = right.depth = n->depth - 1;
        pool_join(pool_a, tree, &left, tree, &right);
    }
}

static pool *pool_with_stack(int threads, size_t stack) {
    pool_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    cfg.stack_size = stack;
    return test_pool_cfg(&cfg);
}

static void test_nesting(enum leaf_kind kind, int threads, int depth) {
    atomic_long leaves;
    node root;
    char name[128];
    snprintf(name, sizeof name, "test_waiting: %d-leaf tree, leaves %s, %d threads", 1 << depth,
             kind == LEAF_CALL ? "call into another pool" : "wait for a blocking job", threads);
    test_watchdog(120, name);
    printf("  %s\n", name + 14);
    pool_a = pool_with_stack(threads, (size_t)256 << 10);
    pool_b = test_pool(threads);
    atomic_init(&leaves, 0);
    root.depth = depth, root.kind = kind, root.leaves = &leaves;
    CALL_IN(pool_a, tree, &root);
    CHECK_EQ_I64(atomic_load(&leaves), (int64_t)1 << depth);
#ifndef TEST_BASELINE
    {
        pool_stats s;
        pool_stats_get(pool_a, &s);
        printf("    deepest nesting of waits on a thread: %llu (bound %d); %llu parked waits, "
               "%llu spare threads\n",
               (unsigned long long)s.wait_depth_max, DEPTH_BOUND,
               (unsigned long long)s.waits_parked, (unsigned long long)s.spares_started);
        CHECK_MSG(s.wait_depth_max <= DEPTH_BOUND, "%llu waits nested on one thread",
                  (unsigned long long)s.wait_depth_max);
        CHECK(s.wait_depth_max >= 1);
    }
#endif
    CHECK(pool_destroy(pool_a) == 0);
    CHECK(pool_destroy(pool_b) == 0);
}

/* ------------------------------------------------------------------------ */
/* 2 and 3. Cycles through a wait that runs unrelated work                  */
/* ------------------------------------------------------------------------ */

/* The join half that gets stolen waits until W has started (or a long
   time has passed: then W never started while F was pending, which is
   fine too). F's first half returns once W is queued, so that F's worker
   finds W queued when it starts waiting for the stolen half. */
static atomic_int half_started, half_may_end, half_gave_up, w_queued, w_started, w_done;

/* Whether the flag was set within the time. */
static int wait_flag(atomic_int *flag, double seconds) {
    double until = test_now() + seconds;
    while (!atomic_load(flag) && test_now() < until) test_sleep_us(200);
    return atomic_load(flag);
}

static void f_first(void *arg) {
    (void)arg;
    wait_flag(&half_started, 10); /* the second half has been stolen */
    wait_flag(&w_queued, 10);
}

static void f_second(void *arg) {
    (void)arg;
    atomic_store(&half_started, 1);
    if (!wait_flag(&half_may_end, 10)) atomic_store(&half_gave_up, 1);
}

/* F: a join whose second half is stolen by the other worker. */
static void f_join(void *arg) {
    (void)arg;
    pool_join(pool_a, f_first, NULL, f_second, NULL);
}

static pool_blocking_job job_j;

static void j_run(pool_blocking_job *job) {
    (void)job;
    CALL_IN(pool_a, f_join, NULL);
}

typedef struct w_task {
    pool_task task;
    pool_scope *scope; /* scenario 3: the scope W waits for; else it waits for J */
} w_task;

static void w_run(pool_task *t) {
    w_task *w = (w_task *)(void *)t;
    atomic_store(&w_started, 1);
    atomic_store(&half_may_end, 1);
    if (w->scope) pool_scope_wait(w->scope);
    else CHECK(pool_wait_blocking_job(&job_j) == 0);
    atomic_store(&w_done, 1);
}

static void cycle_reset(void) {
    atomic_store(&half_started, 0);
    atomic_store(&half_may_end, 0);
    atomic_store(&w_queued, 0);
    atomic_store(&w_started, 0);
    atomic_store(&w_done, 0);
    atomic_store(&half_gave_up, 0);
}

/* Scenario 2: W waits for the blocking job J that called F. */
static void test_cycle_blocking_job(void) {
    w_task w;
    test_watchdog(60, "test_waiting: W waits for the blocking job whose call it sits on");
    printf("  a task waits for the blocking job that called the join it would sit on\n");
    cycle_reset();
    pool_a = test_pool(2);
    memset(&job_j, 0, sizeof job_j);
    job_j.run = j_run;
    CHECK(pool_submit_blocking_job(pool_a, &job_j) == 0);
    wait_flag(&half_started, 10);
    CHECK(atomic_load(&half_started));
    memset(&w, 0, sizeof w);
    w.task.run = w_run;
    CHECK(pool_submit(pool_a, &w.task) == 0);
    atomic_store(&w_queued, 1); /* F's first half returns, and its worker starts waiting */
    while (!atomic_load(&w_done)) test_sleep_us(1000);
    CHECK(atomic_load(&w_started));
    /* W started while F's half was still pending: no thread was left
       without work to take it, nor did W wait for the half to give up. */
    CHECK_MSG(!atomic_load(&half_gave_up), "W did not start while the join half waited for it");
    CHECK(pool_destroy(pool_a) == 0);
}

/* Scenario 3: T, a task of a scope of B, calls F on A; W waits for the scope. */
typedef struct t_task {
    pool_task task;
} t_task;

static void t_run(pool_task *t) {
    (void)t;
    CALL_IN(pool_a, f_join, NULL);
}

static void test_cycle_scope(void) {
    pool_scope scope;
    t_task t;
    w_task w;
    test_watchdog(60, "test_waiting: W waits for a scope of B whose task called F on A");
    printf("  a task waits for another pool's scope whose task called the join it would sit on\n");
    cycle_reset();
    pool_a = test_pool(2);
    pool_b = test_pool(1);
    pool_scope_init(&scope, pool_b);
    memset(&t, 0, sizeof t);
    t.task.run = t_run;
    CHECK(pool_scope_spawn(&scope, &t.task) == 0);
    wait_flag(&half_started, 10);
    CHECK(atomic_load(&half_started));
    memset(&w, 0, sizeof w);
    w.task.run = w_run;
    w.scope = &scope; /* W is the scope's only waiter */
    CHECK(pool_submit(pool_a, &w.task) == 0);
    atomic_store(&w_queued, 1);
    while (!atomic_load(&w_done)) test_sleep_us(1000);
    CHECK(atomic_load(&w_started));
    CHECK_MSG(!atomic_load(&half_gave_up), "W did not start while the join half waited for it");
    CHECK(pool_destroy(pool_a) == 0);
    CHECK(pool_destroy(pool_b) == 0);
}

/* ------------------------------------------------------------------------ */
/* 4. A waiting worker's pool keeps running its queued work                 */
/* ------------------------------------------------------------------------ */

#define BUSY_TASKS 400

static atomic_int busy_waiting;    /* the waiter is inside its call into B */
static atomic_int busy_done_early; /* tasks finished while it waited */
static atomic_int busy_ran_by_waiter;
static atomic_int busy_total;
static atomic_long busy_threads[64]; /* tasks each thread ran during the wait */
static atomic_int busy_distinct;     /* threads that ran one during the wait */
static atomic_int busy_held;         /* a task held until a second thread ran one */
static int busy_waiter_index;

typedef struct busy_task {
    pool_task task;
} busy_task;

static void spin_us(long us) {
    double until = test_now() + (double)us * 1e-6;
    while (test_now() < until) continue;
}

/* The first task run during the wait holds its thread until another
   thread has run one too (10 s at the most): else a thread that started
   late (the spare, on a slow machine) could find every task run before
   it, and the check that two threads ran them would fail for nothing. */
static void busy_run(pool_task *t) {
    int me = pool_worker_index();
    (void)t;
    spin_us(1000);
    if (atomic_load(&busy_waiting)) {
        atomic_fetch_add(&busy_done_early, 1);
        if (me == busy_waiter_index) atomic_fetch_add(&busy_ran_by_waiter, 1);
        if (me >= 0 && me < 64 && atomic_fetch_add(&busy_threads[me], 1) == 0)
            atomic_fetch_add(&busy_distinct, 1);
        if (atomic_exchange(&busy_held, 1) == 0) {
            double until = test_now() + 10;
            while (atomic_load(&busy_distinct) < 2 && test_now() < until) test_sleep_us(1000);
        }
    }
    atomic_fetch_add(&busy_total, 1);
}

/* B's job: returns once the queued tasks of A are done, or after 10 s at
   the most (a pool that ran none of them during the wait then fails the
   checks, not the watchdog). */
static void b_long(void *arg) {
    double until = test_now() + 10;
    (void)arg;
    while (atomic_load(&busy_total) < BUSY_TASKS && test_now() < until) test_sleep_us(1000);
}

static busy_task busy[BUSY_TASKS];

/* Runs on a worker of A: queues the tasks on its own deque, then waits in
   a call into B. */
static void busy_waiter(void *arg) {
    int i;
    (void)arg;
    busy_waiter_index = pool_worker_index();
    for (i = 0; i < BUSY_TASKS; i++) {
        memset(&busy[i], 0, sizeof busy[i]);
        busy[i].task.run = busy_run;
        CHECK(pool_submit(pool_a, &busy[i].task) == 0);
    }
    atomic_store(&busy_waiting, 1);
    CALL_IN(pool_b, b_long, NULL);
    atomic_store(&busy_waiting, 0);
}

static void test_busy_while_waiting(void) {
    int i, threads = 0;
    test_watchdog(60, "test_waiting: a worker waits while its pool has queued work");
    printf(
        "  a worker of a 2-thread pool waits in another pool while its own has %d tasks queued\n",
        BUSY_TASKS);
    pool_a = test_pool(2);
    pool_b = test_pool(1);
    for (i = 0; i < 64; i++) atomic_init(&busy_threads[i], 0);
    atomic_store(&busy_distinct, 0);
    atomic_store(&busy_held, 0);
    CALL_IN(pool_a, busy_waiter, NULL);
    while (atomic_load(&busy_total) < BUSY_TASKS) test_sleep_us(1000);
    for (i = 0; i < 64; i++) threads += atomic_load(&busy_threads[i]) > 0;
    printf("    %d of %d tasks ran while the worker waited, on %d threads; %d on the waiter\n",
           atomic_load(&busy_done_early), BUSY_TASKS, threads, atomic_load(&busy_ran_by_waiter));
    /* Never on the waiter's own stack, and on two threads besides it
       (valgrind runs one thread at a time: there, only the first). */
    CHECK_EQ_I64(atomic_load(&busy_ran_by_waiter), 0);
    if (!test_under_valgrind()) CHECK(threads >= 2);
#ifndef TEST_BASELINE
    {
        pool_stats s;
        pool_stats_get(pool_a, &s);
        /* Under valgrind the other worker may run all the tasks before the
           waiter is scheduled again, and its call then ends unparked. */
        if (!test_under_valgrind()) CHECK(s.waits_parked >= 1);
#ifndef CALLERS_IN_SLOTS /* a slot's holder is no CPU of the pool's: no spare stands in */
        if (!test_under_valgrind()) CHECK(s.spares_started >= 1);
#endif
        CHECK(s.num_threads == 2);
        CHECK(pool_worker_index_limit(pool_a) > 2);
    }
#endif
    CHECK(pool_destroy(pool_a) == 0);
    CHECK(pool_destroy(pool_b) == 0);
}

/* ------------------------------------------------------------------------ */
/* 6. A spare for a worker that parks while a thread start is under way     */
/* ------------------------------------------------------------------------ */

/* The only worker of A queues a task on its own deque and parks in a call
   into B whose function waits for that very task. Only a spare thread can
   run it. The test holds A's spawn lock (white-box) while the worker
   parks, as a poster starting a thread at that moment would: the parker
   must wait for the lock and then start its spare, not give up because
   somebody else was busy starting one. The call into B gives up after
   5 s, and the task's not having run by then fails the test. */
static atomic_int spare_task_ran, spare_task_ran_in_wait;
static pool_task spare_task;

static void spare_task_run(pool_task *t) {
    (void)t;
    atomic_store(&spare_task_ran, 1);
}

static void b_waits_for_spare_task(void *arg) {
    double until = test_now() + 5.0;
    (void)arg;
    while (!atomic_load(&spare_task_ran) && test_now() < until) test_sleep_us(1000);
    atomic_store(&spare_task_ran_in_wait, atomic_load(&spare_task_ran));
}

static void park_with_task_queued(void *arg) {
    (void)arg;
    memset(&spare_task, 0, sizeof spare_task);
    spare_task.run = spare_task_run;
    CHECK(pool_submit(pool_a, &spare_task) == 0);
    CALL_IN(pool_b, b_waits_for_spare_task, NULL);
}

static void *call_park_with_task_queued(void *arg) {
    (void)arg;
    CALL_IN(pool_a, park_with_task_queued, NULL);
    return NULL;
}

static void nop(void *arg) { (void)arg; }

#ifndef TEST_BASELINE
/* Whether a thread of pool_a came to block on its spawn lock within the
   time. */
static int wait_spawn_lock_waiter(double seconds) {
    double until = test_now() + seconds;
    for (;;) {
        if (atomic_load(&spawn_lock_waiters) || test_now() >= until)
            return atomic_load(&spawn_lock_waiters) != 0;
        test_sleep_us(1000);
    }
}
#endif

static void test_spare_while_spawn_locked(void) {
    pthread_t th;
    test_watchdog(60, "test_waiting: a spare for a worker that parks while a start is under way");
    printf("  a worker parks while another thread holds the spawn lock: its spare still starts\n");
    pool_a = test_pool(1);
    pool_b = test_pool(1);
    CALL_IN(pool_a, nop, NULL); /* A's worker is running */
    atomic_store(&spare_task_ran, 0);
    atomic_store(&spare_task_ran_in_wait, 0);
#ifndef TEST_BASELINE
    atomic_store(&spawn_lock_waiters, 0);
#endif
    pool__mutex_lock(&pool_a->spawn_lock);
    CHECK(pthread_create(&th, NULL, call_park_with_task_queued, NULL) == 0);
    /* The worker parks meanwhile: it has counted the park, and then waits
       for the lock to start its spare. */
#ifdef TEST_BASELINE
    test_sleep_us(200000);
#else
    CHECK_MSG(wait_spawn_lock_waiter(10), "A's worker did not wait for the spawn lock within 10 s");
#endif
    pool__mutex_unlock(&pool_a->spawn_lock);
    pthread_join(th, NULL);
    CHECK_MSG(atomic_load(&spare_task_ran_in_wait),
              "the task queued by the parked worker did not run while it waited");
    CHECK(pool_destroy(pool_a) == 0);
    CHECK(pool_destroy(pool_b) == 0);
}

/* The holder of the spawn lock read the parked count before a park and
   starts nothing; a poster that finds the lock held meanwhile, for work
   that needs the parked worker's spare, leaves word, and the holder looks
   again after its unlock and starts the spare. White-box: the test is the
   holder (it takes the lock and hands it back through the same unlock the
   pool uses) and fakes the park. */
static void test_spare_after_spawn_unlock(void) {
    uint32_t started;
    test_watchdog(60, "test_waiting: a spare asked for while the spawn lock was held");
    printf("  a poster finds the spawn lock held: the holder starts the spare after its unlock\n");
    pool_a = test_pool(1);
    CALL_IN(pool_a, nop, NULL); /* A's worker is running */
    pool__mutex_lock(&pool_a->spawn_lock);
    started = pool_a->threads.started; /* what the holder saw: nothing to start */
    CHECK_EQ_I64(started, 1);
    POOL__FETCH_ADD(&pool_a->threads.parked, 1, POOL__SEQ_CST); /* a park after the holder's look */
    CHECK_EQ_I64(pool__spawn(pool_a, POOL__LOCK_TRY, POOL__SPARES),
                 1);                                      /* a poster: the lock is held */
    CHECK_EQ_I64(pool__spawn_unlock(pool_a, started), 2); /* the holder starts the spare */
    CHECK_EQ_I64(POOL__LOAD(&pool_a->threads.started, POOL__ACQUIRE), 2);
    CHECK_EQ_I64(POOL__LOAD(&pool_a->spawn_again, POOL__RELAXED), 0);
    POOL__FETCH_SUB(&pool_a->threads.parked, 1, POOL__SEQ_CST);
    CHECK(pool_destroy(pool_a) == 0);
}

/* ------------------------------------------------------------------------ */
/* 5. Cycles between pools, with blocking waits in between                  */
/* ------------------------------------------------------------------------ */

typedef struct cyc {
    pool *here, *there;
    int depth;
    long leaves;
} cyc;

static void cyc_task(void *arg);

static void cyc_blocking(pool_blocking_job *job) { (void)job; }

static void cyc_task(void *arg) {
    cyc *c = (cyc *)arg, a, b;
    pool_blocking_job job = POOL_BLOCKING_JOB_INIT(cyc_blocking);
    if (c->depth == 0) {
        c->leaves = 1;
        return;
    }
    a.here = b.here = c->there;
    a.there = b.there = c->here;
    a.depth = b.depth = c->depth - 1;
    a.leaves = b.leaves = 0;
    /* A blocking wait on this worker, then the two children on the other
       pool: one through a join, one through a call. */
    if (pool_submit_blocking_job(c->here, &job) == 0) CHECK(pool_wait_blocking_job(&job) == 0);
    pool_join(c->there, cyc_task, &a, cyc_task, &b);
    CALL_IN(c->there, cyc_task, &b);
    c->leaves = a.leaves + b.leaves;
}

typedef struct cyc_starter {
    cyc root;
    int repeats;
    long wrong;
} cyc_starter;

static void *cyc_main(void *arg) {
    cyc_starter *s = (cyc_starter *)arg;
    int r;
    for (r = 0; r < s->repeats; r++) {
        cyc t = s->root;
        CALL_IN(t.here, cyc_task, &t);
        if (t.leaves != (1L << t.depth)) s->wrong++;
    }
    return NULL;
}

static void test_cycles(int threads, int depth, int repeats) {
    cyc_starter s[4];
    pthread_t th[4];
    char name[96];
    int i;
    snprintf(name, sizeof name, "test_waiting: cycles A->B->A, %d threads each", threads);
    test_watchdog(120, name);
    printf("  pools of %d threads calling into each other in cycles, depth %d, 4 outside threads\n",
           threads, depth);
    pool_a = test_pool(threads);
    pool_b = test_pool(threads);
    for (i = 0; i < 4; i++) {
        memset(&s[i], 0, sizeof s[i]);
        s[i].root.here = i % 2 ? pool_b : pool_a;
        s[i].root.there = i % 2 ? pool_a : pool_b;
        s[i].root.depth = depth;
        s[i].repeats = repeats;
        pthread_create(&th[i], NULL, cyc_main, &s[i]);
    }
    for (i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_I64(s[i].wrong, 0);
    }
    CHECK(pool_destroy(pool_a) == 0);
    CHECK(pool_destroy(pool_b) == 0);
}

static int tree_depth(void) { return test_scale() < 0.1 ? 8 : TREE_DEPTH; }
static void nesting_call(void) { test_nesting(LEAF_CALL, 2, tree_depth()); }
static void nesting_blocking(void) { test_nesting(LEAF_BLOCKING, 2, tree_depth()); }
static void nesting_call16(void) { test_nesting(LEAF_CALL, 16, tree_depth()); }
static void cycles2(void) { test_cycles(2, 6, (int)test_scaled(10, 2)); }
static void cycles16(void) { test_cycles(16, 6, (int)test_scaled(10, 2)); }

/* With an argument, only the part of that name runs. */
int main(int argc, char **argv) {
    static const test_part parts[] = {
        {"nesting_call", nesting_call},
        {"nesting_blocking", nesting_blocking},
        {"nesting_call16", nesting_call16},
        {"cycle_blocking_job", test_cycle_blocking_job},
        {"cycle_scope", test_cycle_scope},
        {"busy_while_waiting", test_busy_while_waiting},
        {"spare_while_spawn_locked", test_spare_while_spawn_locked},
        {"spare_after_spawn_unlock", test_spare_after_spawn_unlock},
        {"cycles2", cycles2},
        {"cycles16", cycles16},
    };
    printf("test_waiting: the waiting rule\n");
    test_run_parts(argc, argv, parts, sizeof parts / sizeof parts[0]);
    return test_finish("test_waiting");
}
