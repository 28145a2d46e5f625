/* test_lazy.c - lazy joins: which halves are pushed, when, and where to.
 *
 * White-box (pool.h's internals are visible: POOL_IMPLEMENTATION here).
 *  - one_thread: fib through pool_join on a pool of one thread pushes no
 *    half but each task's outermost one: no promotion, one task run from a
 *    queue (the call), the result exact; the worker asked itself for a
 *    promotion as it started (an ask made just before its start passed it
 *    by), and the first nested join cleared the ask;
 *  - promote_oldest: on a worker whose deque is empty, a join that finds
 *    promote_wanted set promotes every half still lazy, its own too, oldest
 *    first (not one already pushed), clears the word, and counts them; with
 *    the deque not empty it promotes nothing (the deque's order); a join's
 *    end that finds the word set promotes the halves of the joins around
 *    it, and their ends take them back;
 *  - hand_made (workers set up by hand, no thread): a task taken from a
 *    queue starts with an empty list of lazy joins, and the list it
 *    interrupted is back after it; a fruitless search sets promote_wanted
 *    on every other worker, not on itself, and a join's waiter on its
 *    thief only; with an eager join's half pushed inside a lazy join, a
 *    promotion takes the lazy halves newer than it, and the older lazy one
 *    once it has ended; a worker that falls asleep asks every other once it
 *    counts as asleep; a promotion with nothing lazy to hand over, or one
 *    that counted on an awake worker and woke nobody, leaves the ask
 *    standing while there is a sleeper or a thread that can be started,
 *    and only then (not while a failed start waits for its retry);
 *  - idle_takes: a chain of joins with short busy leaves on two workers:
 *    every leaf runs exactly once, halves are promoted, and the other
 *    worker steals them;
 *  - heartbeat: with the other worker busy, so that nobody asks and no
 *    thread is wanted, a worker's joins promote halves with a heartbeat
 *    and none without one; the monitor stops beating once every worker is
 *    idle, and beats again when one is busy;
 *  - heartbeat_resume: a stopped heartbeat resumes when a worker leaves
 *    idle, and when a worker's park (a call into another pool) ends.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

static void wait_flag(atomic_int *flag, double seconds) {
    double until = test_now() + seconds;
    while (!atomic_load(flag) && test_now() < until) test_sleep_us(100);
}

/* ------------------------------------------------------------------------ */
/* One thread                                                               */
/* ------------------------------------------------------------------------ */

/* A worker asks itself as it starts (an ask made a moment before its start
   passed it by): its first task finds promote_wanted set, and the first
   nested join (the outermost one reads nothing) clears it without
   promoting anything on a pool that wants no thread. The task is fib. */
static atomic_int st_asked_at_start, st_asked_after_join;

static void starts_asking_task(void *arg) {
    pool__worker *w = pool__current();
    test_fib_arg *f = (test_fib_arg *)arg;
    atomic_store(&st_asked_at_start, (int)POOL__LOAD(&w->promote_wanted, POOL__RELAXED));
    test_fib(f);
    atomic_store(&st_asked_after_join, (int)POOL__LOAD(&w->promote_wanted, POOL__RELAXED));
}

static void test_one_thread(void) {
    pool_config cfg;
    pool *p;
    pool_stats st;
    test_fib_arg f;
    test_watchdog(60, "test_lazy: one thread");
    printf("  one thread: no promotion, one task from a queue; a new worker asks itself\n");
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 1;
    cfg.heartbeat_us = POOL_HEARTBEAT_OFF; /* a beat would ask again ($POOL_HEARTBEAT_US) */
    p = test_pool_cfg(&cfg);
    test_fib_pool = p;
    f.n = 22;
    f.result = 0;
    pool_call_on_worker(p, starts_asking_task, &f);
    CHECK_EQ_I64(f.result, 17711);
    CHECK_EQ_I64(atomic_load(&st_asked_at_start), 1);
    CHECK_EQ_I64(atomic_load(&st_asked_after_join), 0);
    pool_stats_get(p, &st);
    CHECK_EQ_I64(st.joins_promoted, 0);
    CHECK_EQ_I64(st.jobs_run, 1);
    CHECK(pool_destroy(p) == 0);
}

/* ------------------------------------------------------------------------ */
/* Which half is promoted                                                   */
/* ------------------------------------------------------------------------ */

/* The root runs on W1 and joins (l1_a, l1_b): the outermost join, whose
   half is pushed at once; W2 steals l1_b and holds on in it, so that W1's
   deque is empty and nobody else takes what W1 promotes. l1_a joins
   (l2_a, l2_b), lazily; l2_a sets W1's promote_wanted and joins (l3_a,
   l3_b): that join must promote l2's half, then its own, in that order.
   l3_a pushes a scope task and sets promote_wanted again: the join of
   (l4_a, l4_b) must promote nothing, the deque not being empty. Then l1_a
   joins (m1_a, m1_b), lazily; m1_a joins (m2_a, m2_b), and m2_a sets
   promote_wanted as it returns: the end of m2's join must promote m1's
   half, and the end of m1's must take it back from the deque. */
static pool *lz_pool;
static atomic_int lz_b_started, lz_release, lz_runs[10], lz_failed;
static pool_scope lz_scope;
static pool__lazy_join *lz_l2, *lz_m1;

static void lz_count(int i) { atomic_fetch_add(&lz_runs[i], 1); }

/* Whether f's half was pushed: it is on w's list of promoted frames. */
static int pushed(pool__worker *w, const pool__lazy_join *f) {
    const pool__lazy_join *g;
    for (g = w->join.promoted; g; g = g->promoted_before)
        if (g == f) return 1;
    return 0;
}

/* A second half that only counts its run: arg is its index in lz_runs. */
static void lz_half(void *arg) { lz_count((int)(intptr_t)arg); }

static void lz_scope_task(pool_task *t) {
    (void)t;
    lz_count(7);
}
static pool_task lz_task = POOL_TASK_INIT(lz_scope_task);

static void lz_l4_a(void *arg) {
    pool__worker *w = pool__current();
    (void)arg;
    lz_count(5);
    CHECK_EQ_I64(w->stats.joins_promoted, 2);
    CHECK(!pushed(w, w->join.newest)); /* l4 */
    CHECK_EQ_I64(POOL__LOAD(&w->promote_wanted, POOL__RELAXED), 0);
    CHECK_EQ_I64(pool__deque_len(&w->deque), 3);
}

static void lz_l3_a(void *arg) {
    pool__worker *w = pool__current();
    pool__deque_buffer *b = w->deque.buffer;
    int64_t top = POOL__LOAD(&w->deque.top, POOL__RELAXED);
    (void)arg;
    lz_count(2);
    /* l2's half, then l3's, were promoted. */
    CHECK_EQ_I64(w->stats.joins_promoted, 2);
    CHECK_EQ_I64(pool__deque_len(&w->deque), 2);
    CHECK(POOL__LOAD(&b->slots[top & b->mask], POOL__RELAXED) == &lz_l2->job.task);
    CHECK(POOL__LOAD(&b->slots[(top + 1) & b->mask], POOL__RELAXED) == &w->join.newest->job.task);
    CHECK(pushed(w, lz_l2));
    CHECK(pushed(w, w->join.newest)); /* l3 */
    CHECK(w->join.newest->older == lz_l2);
    CHECK(w->join.promoted == w->join.newest);
    CHECK_EQ_I64(POOL__LOAD(&w->promote_wanted, POOL__RELAXED), 0);
    /* A deque that is not empty: nothing is promoted. */
    CHECK(pool_scope_spawn(&lz_scope, &lz_task) == 0);
    POOL__STORE(&w->promote_wanted, 1, POOL__RELAXED);
    pool_join(lz_pool, lz_l4_a, NULL, lz_half, (void *)(intptr_t)6);
    pool_scope_wait(&lz_scope);
    CHECK(w->join.promoted == w->join.newest); /* l3's own frame */
}

static void lz_l2_a(void *arg) {
    pool__worker *w = pool__current();
    (void)arg;
    lz_count(1);
    lz_l2 = w->join.newest;
    CHECK(!pushed(w, lz_l2));
    CHECK_EQ_I64(pool__deque_len(&w->deque), 0);
    POOL__STORE(&w->promote_wanted, 1, POOL__RELAXED);
    pool_join(lz_pool, lz_l3_a, NULL, lz_half, (void *)(intptr_t)3);
    CHECK(w->join.promoted == lz_l2); /* l3's join ended: back to l2 */
}

static void lz_m2_a(void *arg) {
    (void)arg;
    POOL__STORE(&pool__current()->promote_wanted, 1, POOL__RELAXED); /* seen at m2's end */
}

static void lz_m2_b(void *arg) { /* after m2's end, which promoted m1's half */
    pool__worker *w = pool__current();
    (void)arg;
    lz_count(8);
    CHECK(pushed(w, lz_m1));
    CHECK(w->join.newest == lz_m1);
    CHECK_EQ_I64(pool__deque_len(&w->deque), 1);
    CHECK_EQ_I64(w->stats.joins_promoted, 3);
}

static void lz_m1_a(void *arg) {
    pool__worker *w = pool__current();
    (void)arg;
    lz_m1 = w->join.newest;
    CHECK(!pushed(w, lz_m1));
    pool_join(lz_pool, lz_m2_a, NULL, lz_m2_b, NULL);
}

static void lz_l1_a(void *arg) {
    pool__worker *w = pool__current();
    (void)arg;
    wait_flag(&lz_b_started, 10);
    if (!atomic_load(&lz_b_started)) { /* nobody stole the outermost half */
        atomic_store(&lz_failed, 1);
        return;
    }
    pool_scope_init(&lz_scope, lz_pool);
    /* W2 is busy in l1_b, and its earlier idle searches may have asked. */
    POOL__STORE(&w->promote_wanted, 0, POOL__RELAXED);
    pool_join(lz_pool, lz_l2_a, NULL, lz_half, (void *)(intptr_t)4);
    CHECK(w->join.promoted == w->join.newest); /* l1's frame again */
    CHECK_EQ_I64(POOL__LOAD(&w->promote_wanted, POOL__RELAXED), 0);
    pool_join(lz_pool, lz_m1_a, NULL, lz_half, (void *)(intptr_t)9);
    CHECK_EQ_I64(w->stats.joins_promoted, 3);
    CHECK_EQ_I64(pool__deque_len(&w->deque), 0); /* m1's half was taken back */
    CHECK(w->join.promoted == w->join.newest);
    atomic_store(&lz_release, 1);
}
static void lz_l1_b(void *arg) {
    (void)arg;
    CHECK(pool__current()->join.newest == NULL); /* a task from a queue: an empty list */
    atomic_store(&lz_b_started, 1);
    wait_flag(&lz_release, 10);
}

/* Zeroes the stack below the caller's frame, where the joins' frames will
   be: a frame's link to newer frames is written by the promotion that
   walks the list, and a link left from an earlier run at the same address
   must not make a promotion that skipped it look right. */
static void lz_scrub_stack(void) {
    volatile char below[16384];
    size_t i;
    for (i = 0; i < sizeof below; i++) below[i] = 0;
}

static void lz_joins(void) { pool_join(lz_pool, lz_l1_a, NULL, lz_l1_b, NULL); }

/* The joins are called through a volatile pointer, so that no compiler
   puts the outermost frame into lz_root's own, above the scrubbed part. */
static void lz_root(void *arg) {
    void (*volatile joins)(void) = lz_joins;
    (void)arg;
    lz_scrub_stack();
    joins();
}

static void test_promote_oldest(void) {
    int i;
    test_watchdog(60, "test_lazy: promote the oldest lazy half");
    printf("  a join that is asked promotes the oldest lazy half, onto an empty deque only\n");
    lz_pool = test_pool(2);
    pool_call_on_worker(lz_pool, lz_root, NULL);
    CHECK_MSG(!atomic_load(&lz_failed), "the outermost half was not stolen within 10 s");
    for (i = 1; i < 10; i++) CHECK_EQ_I64(atomic_load(&lz_runs[i]), 1);
    CHECK(pool_destroy(lz_pool) == 0);
}

/* ------------------------------------------------------------------------ */
/* Hand-made workers: a task's fresh list, and the requests                 */
/* ------------------------------------------------------------------------ */

static pool__lazy_join *seen_list, *seen_promoted;
static void record_list(pool_task *t) {
    (void)t;
    seen_list = pool__current()->join.newest;
    seen_promoted = pool__current()->join.promoted;
}
/* Inside a bigger object: gcc's bounds check would take pool__execute's
   look at a join half's fields, behind its test of `run`, for an access
   outside a lone task. */
static struct {
    pool_task task;
    char room[sizeof(pool__call_job)];
} record = {POOL_TASK_INIT(record_list), {0}};

static void nop_fn(void *arg) { (void)arg; }

/* Frames f[0..3] on x: f[0] pushed (the outermost), f[1] lazy, f[2] an eager
   join's half, pushed, f[3] lazy. */
static void eager_inside_lazy(pool__worker *x) {
    pool__lazy_join f[4];
    pool__deque_buffer *b = x->deque.buffer;
    int i;
    memset(f, 0, sizeof f);
    for (i = 0; i < 4; i++) {
        f[i].job.fn = nop_fn;
        f[i].older = i ? &f[i - 1] : NULL;
        x->join.newest = &f[i];
        if (i == 0 || i == 2) CHECK(pool__lazy_push(x, &f[i]) == 0);
    }
    /* Both pushed halves were taken (stolen): the deque is empty. */
    CHECK(pool__deque_pop(&x->deque) == &f[2].job.task);
    CHECK(pool__deque_pop(&x->deque) == &f[0].job.task);
    pool__promote(x);
    CHECK_EQ_I64(pool__deque_len(&x->deque), 1);
    CHECK(POOL__LOAD(&b->slots[POOL__LOAD(&x->deque.top, POOL__RELAXED) & b->mask],
                     POOL__RELAXED) == &f[3].job.task);
    CHECK(pushed(x, &f[3]) && !pushed(x, &f[1]));
    CHECK(x->join.promoted == &f[3] && f[3].promoted_before == &f[2]);
    /* f[3] and f[2] end, as their joins would end them. */
    CHECK(pool__deque_pop(&x->deque) == &f[3].job.task);
    x->join.promoted = f[3].promoted_before, x->join.newest = &f[2];
    x->join.promoted = f[2].promoted_before, x->join.newest = &f[1];
    CHECK(x->join.promoted == &f[0]);
    pool__promote(x);
    CHECK(pushed(x, &f[1]));
    CHECK(pool__deque_pop(&x->deque) == &f[1].job.task);
    CHECK_EQ_I64(x->stats.joins_promoted, 2);
    x->join.newest = x->join.promoted = NULL;
}

/* v falls asleep on its own thread, as an idle worker does. */
static void *sleep_on_thread(void *arg) {
    pool__worker *v = (pool__worker *)arg;
    pool__idle idle;
    memset(&idle, 0, sizeof idle);
    POOL__FETCH_ADD(&v->join.home->counters, POOL__ONE_INACTIVE, POOL__RELAXED); /* idle */
    idle.jec = pool__jec_announce_sleepy(v->join.home);
    pool__sleep(v, &idle);
    POOL__FETCH_SUB(&v->join.home->counters, POOL__ONE_INACTIVE, POOL__RELAXED);
    return NULL;
}

static void clear_asks(pool__worker *x, pool__worker *v, pool__worker *u) {
    POOL__STORE(&x->promote_wanted, 0, POOL__RELAXED);
    POOL__STORE(&v->promote_wanted, 0, POOL__RELAXED);
    POOL__STORE(&u->promote_wanted, 0, POOL__RELAXED);
}

/* x promotes a lazy half while v sleeps and another worker is counted
   awake and idle: the post counts on that worker and wakes nobody, so the
   ask stands (v still sleeps, the pool still wants a thread). */
static void promoted_to_an_awake_worker(pool *p, pool__worker *x, pool__worker *v) {
    pool__lazy_join f[2];
    memset(f, 0, sizeof f);
    f[0].job.fn = f[1].job.fn = nop_fn;
    f[1].older = &f[0];
    pool__set_current(x);
    x->join.newest = &f[0];
    CHECK(pool__lazy_push(x, &f[0]) == 0);               /* the outermost half, pushed ... */
    CHECK(pool__deque_pop(&x->deque) == &f[0].job.task); /* ... and stolen */
    x->join.newest = &f[1];                              /* f[1] is lazy */
    POOL__FETCH_ADD(&p->counters, POOL__ONE_INACTIVE, POOL__RELAXED); /* an awake idle worker */
    pool__promote(x);
    CHECK(pushed(x, &f[1]));
    CHECK_EQ_I64(POOL__LOAD(&v->core_latch, POOL__ACQUIRE), POOL__CORE_SLEEPING);
    CHECK_EQ_I64(POOL__LOAD(&x->promote_wanted, POOL__RELAXED), 1);
    POOL__FETCH_SUB(&p->counters, POOL__ONE_INACTIVE, POOL__RELAXED);
    CHECK(pool__deque_pop(&x->deque) == &f[1].job.task);
    x->join.newest = x->join.promoted = NULL;
    pool__set_current(NULL);
}

/* A worker that falls asleep asks every other worker once it counts as
   asleep, and a promotion that finds nothing lazy to hand over leaves the
   ask standing while the pool has a sleeper, and only then. */
static void sleeper_asks(pool *p, pool__worker *x, pool__worker *v, pool__worker *u) {
    pthread_t t;
    double until;
    clear_asks(x, v, u);
    if (pthread_create(&t, NULL, sleep_on_thread, v) != 0) exit(2);
    until = test_now() + 10;
    while ((POOL__LOAD(&v->core_latch, POOL__ACQUIRE) != POOL__CORE_SLEEPING ||
            !POOL__LOAD(&x->promote_wanted, POOL__RELAXED) ||
            !POOL__LOAD(&u->promote_wanted, POOL__RELAXED)) &&
           test_now() < until)
        test_sleep_us(100);
    CHECK_EQ_I64(POOL__LOAD(&v->core_latch, POOL__ACQUIRE), POOL__CORE_SLEEPING);
    CHECK_EQ_I64(POOL__LOAD(&x->promote_wanted, POOL__RELAXED), 1);
    CHECK_EQ_I64(POOL__LOAD(&u->promote_wanted, POOL__RELAXED), 1);
    CHECK_EQ_I64(POOL__LOAD(&v->promote_wanted, POOL__RELAXED), 0);
    /* x has nothing lazy and an empty deque: the ask stays for its next join. */
    pool__promote(x);
    CHECK_EQ_I64(POOL__LOAD(&x->promote_wanted, POOL__RELAXED), 1);
    promoted_to_an_awake_worker(p, x, v);
    CHECK(pool__wake_sleeper(p, v));
    pthread_join(t, NULL);
    CHECK_EQ_I64(pool__sleeping_of(POOL__LOAD(&p->counters, POOL__RELAXED)), 0);
    /* Nobody asleep, every thread wanted started: the ask is consumed. */
    pool__promote(x);
    CHECK_EQ_I64(POOL__LOAD(&x->promote_wanted, POOL__RELAXED), 0);
    /* A thread wanted that is not started: the ask stands while a start
       can succeed, not while a failed one waits for its retry. */
    POOL__FETCH_ADD(&p->threads.parked, 1, POOL__RELAXED);
    CHECK(pool__threads_wanted(p, POOL__RELAXED) > 3);
    pool__promote(x);
    CHECK_EQ_I64(POOL__LOAD(&x->promote_wanted, POOL__RELAXED), 1);
    POOL__STORE(&p->spawn_retry_ns, pool__now_ns() + POOL__SPAWN_RETRY_NS, POOL__RELAXED);
    pool__promote(x);
    CHECK_EQ_I64(POOL__LOAD(&x->promote_wanted, POOL__RELAXED), 0);
    POOL__STORE(&p->spawn_retry_ns, 0, POOL__RELAXED);
    POOL__FETCH_SUB(&p->threads.parked, 1, POOL__RELAXED);
    clear_asks(x, v, u);
}

static void test_hand_made(void) {
    pool *p;
    pool__worker *x, *v, *u;
    pool__lazy_join outer;
    pool__call_job half;
    pool__awaited wt;
    pool_config cfg;
    test_watchdog(30, "test_lazy: hand-made workers");
    printf("  a task starts with an empty list; who asks whom; an eager half inside a lazy join;\n"
           "  a sleeper asks every other worker\n");
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 3;
    if (pool_create(&p, &cfg) != 0) exit(2);
    /* Three worker slots filled by hand; no thread runs them. */
    x = pool__worker_new(p, 0);
    v = pool__worker_new(p, 1);
    u = pool__worker_new(p, 2);
    if (!x || !v || !u) exit(2);
    p->workers[0] = x, p->workers[1] = v, p->workers[2] = u;
    POOL__STORE(&p->threads.started, 3, POOL__RELEASE);

    memset(&outer, 0, sizeof outer);
    x->join.newest = x->join.promoted = &outer;
    pool__set_current(x);
    seen_list = seen_promoted = &outer;
    CHECK(pool__mark_queued(&record.task, NULL) == 0); /* as a submission marks it */
    pool__execute(x, &record.task, 1);
    CHECK(seen_list == NULL && seen_promoted == NULL);
    CHECK(x->join.newest == &outer && x->join.promoted == &outer);
    x->join.newest = x->join.promoted = NULL;
    pool__set_current(NULL);

    /* A join's waiter asks its half's thief, v, only. */
    pool__call_job_init(&half, nop_fn, NULL);
    half.thief = 2;
    memset(&wt, 0, sizeof wt);
    wt.runner = p;
    wt.thief = &half.thief;
    pool__want_help(x, &wt);
    CHECK_EQ_I64(POOL__LOAD(&v->promote_wanted, POOL__RELAXED), 1);
    CHECK_EQ_I64(POOL__LOAD(&u->promote_wanted, POOL__RELAXED), 0);
    CHECK_EQ_I64(POOL__LOAD(&x->promote_wanted, POOL__RELAXED), 0);
    /* A fruitless search asks every other worker. */
    pool__want_promotions(x, POOL__ASK_HINT);
    CHECK_EQ_I64(POOL__LOAD(&u->promote_wanted, POOL__RELAXED), 1);
    CHECK_EQ_I64(POOL__LOAD(&x->promote_wanted, POOL__RELAXED), 0);

    pool__set_current(x);
    eager_inside_lazy(x);
    pool__set_current(NULL);

    sleeper_asks(p, x, v, u);

    /* Take the slots back before pool_destroy, which would join their threads. */
    POOL__STORE(&p->threads.started, 0, POOL__RELEASE);
    pool__worker_free(p, x);
    pool__worker_free(p, v);
    pool__worker_free(p, u);
    p->workers[0] = p->workers[1] = p->workers[2] = NULL;
    CHECK(pool_destroy(p) == 0);
}

/* ------------------------------------------------------------------------ */
/* Idle workers take promoted halves                                        */
/* ------------------------------------------------------------------------ */

/* A chain: each level joins (the next level, a short busy leaf). The
   outermost leaf is pushed at once and stolen; from then on the other
   worker, done with a leaf, finds nothing queued and asks, and only a
   promotion of a leaf still lazy on the chain's worker gives it more. */
#define IDLE_CHAIN 2048

static pool *idle_pool;
static atomic_long idle_leaves;

static void idle_leaf(void *arg) {
    double until = test_now() + 2e-6; /* short and busy, with no join in it */
    (void)arg;
    while (test_now() < until) continue;
    atomic_fetch_add(&idle_leaves, 1);
}

static void idle_chain(void *arg) {
    long depth = (long)(intptr_t)arg;
    if (depth == 0) {
        idle_leaf(NULL);
        return;
    }
    pool_join(idle_pool, idle_chain, (void *)(intptr_t)(depth - 1), idle_leaf, NULL);
}

static void test_idle_takes(void) {
    pool_stats st;
    pool_config cfg;
    int attempt;
    test_watchdog(120, "test_lazy: idle workers take promoted halves");
    printf("  two workers, a chain of joins: halves are promoted and stolen, leaves run once\n");
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    cfg.stack_size = (size_t)8 << 20; /* the chain is 2048 joins deep (musl's default: 128 KiB) */
    idle_pool = test_pool_cfg(&cfg);
    for (attempt = 0; attempt < 5; attempt++) {
        atomic_store(&idle_leaves, 0);
        pool_call_on_worker(idle_pool, idle_chain, (void *)(intptr_t)IDLE_CHAIN);
        CHECK_EQ_I64(atomic_load(&idle_leaves), IDLE_CHAIN + 1);
        pool_stats_get(idle_pool, &st);
        if (st.joins_promoted > 0 && st.jobs_stolen > 1) break;
    }
    if (test_under_valgrind()) /* one thread at a time: the other may never run meanwhile */
        printf("    promotions not checked under valgrind (%llu promoted, %llu stolen)\n",
               (unsigned long long)st.joins_promoted, (unsigned long long)st.jobs_stolen);
    else
        CHECK_MSG(st.joins_promoted > 0 && st.jobs_stolen > 1,
                  "after %d calls: %llu promoted, %llu stolen", attempt,
                  (unsigned long long)st.joins_promoted, (unsigned long long)st.jobs_stolen);
    CHECK(pool_destroy(idle_pool) == 0);
}

/* ------------------------------------------------------------------------ */
/* The heartbeat                                                            */
/* ------------------------------------------------------------------------ */

/* The root on W1 joins (hb_a, hb_b); W2 steals hb_b and spins in it, busy,
   until hb_a has done its lazy joins: with a heartbeat until one of them
   promotes (HB_GIVE_UP_S at most: a fixed window could pass while W1 or
   the monitor waited for the CPU), without one for HB_MS (none must). */
#define HB_MS 30
#define HB_GIVE_UP_S 5

static pool *hb_pool;
static atomic_int hb_b_started, hb_release;
static uint64_t hb_promoted;
static int hb_until_promoted; /* 1: join until a promotion; 0: for HB_MS */

static void hb_b(void *arg) {
    (void)arg;
    atomic_store(&hb_b_started, 1);
    while (!atomic_load(&hb_release)) continue; /* busy: it asks nobody */
}

static void hb_a(void *arg) {
    pool__worker *w = pool__current();
    double until;
    uint64_t before;
    (void)arg;
    wait_flag(&hb_b_started, 10);
    /* W2 may have asked before it took hb_b; from now on it is busy. */
    POOL__STORE(&w->promote_wanted, 0, POOL__RELAXED);
    before = w->stats.joins_promoted;
    until = test_now() + (hb_until_promoted ? HB_GIVE_UP_S : HB_MS * 1e-3);
    while (test_now() < until && !(hb_until_promoted && w->stats.joins_promoted > before)) {
        test_fib_arg f;
        f.n = 12;
        test_fib(&f);
        CHECK_EQ_I64(f.result, 144);
    }
    hb_promoted = w->stats.joins_promoted - before;
    atomic_store(&hb_release, 1);
}

static void hb_root(void *arg) {
    (void)arg;
    pool_join(hb_pool, hb_a, NULL, hb_b, NULL);
}

static pool *hb_new(unsigned heartbeat_us) {
    pool_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    cfg.heartbeat_us = heartbeat_us;
    return test_pool_cfg(&cfg);
}

/* The halves the root's worker promoted in one call: until the first
   promotion, or for HB_MS (see above). */
static uint64_t hb_call(pool *p, int until_promoted) {
    hb_pool = test_fib_pool = p;
    hb_until_promoted = until_promoted;
    atomic_store(&hb_b_started, 0);
    atomic_store(&hb_release, 0);
    pool_call_on_worker(hb_pool, hb_root, NULL);
    CHECK_MSG(atomic_load(&hb_b_started), "the outermost half was not stolen within 10 s");
    return hb_promoted;
}

/* Waits up to `seconds` for the monitor's heart_idle to become `idle`. */
static int heart_idle_becomes(pool *p, uint32_t idle, double seconds) {
    double until = test_now() + seconds;
    while (POOL__LOAD(&p->monitor.heart_idle, POOL__RELAXED) != idle && test_now() < until)
        test_sleep_us(1000);
    return POOL__LOAD(&p->monitor.heart_idle, POOL__RELAXED) == idle;
}

static void test_heartbeat(void) {
    uint64_t first, again, without;
    pool *p = hb_new(100);
    test_watchdog(60, "test_lazy: heartbeat");
    printf("  nobody asks: a heartbeat promotes, none without; the monitor stops when idle\n");
    first = hb_call(p, 1);
    /* Every worker idle: the heartbeat stops; a busy worker resumes it. */
    CHECK_MSG(heart_idle_becomes(p, 1, 10), "the heartbeat did not stop in an idle pool");
    again = hb_call(p, 1);
    CHECK_MSG(heart_idle_becomes(p, 1, 10), "the heartbeat did not stop again");
    CHECK(pool_destroy(p) == 0);
    p = hb_new(POOL_HEARTBEAT_OFF);
    without = hb_call(p, 0);
    CHECK(pool_destroy(p) == 0);
    printf("    joins while the other worker spins: %llu, then %llu after an idle spell, halves "
           "promoted with a 100 us heartbeat (until the first); %llu in %d ms without\n",
           (unsigned long long)first, (unsigned long long)again, (unsigned long long)without,
           HB_MS);
    if (test_under_valgrind()) /* one thread at a time: the monitor may not run meanwhile */
        printf("    (promotions not checked under valgrind)\n");
    else CHECK(first > 0 && again > 0);
    CHECK_EQ_I64(without, 0);
}

/* The pool's heartbeat has stopped (every worker idle, or busy ones parked)
   when the task starts, and again while it is parked in a call into q: each
   time a worker becoming busy must resume it. */
static pool *hr_pool, *hr_other;

static int heart_is(pool *p, uint32_t idle, double seconds) {
    double until = test_now() + seconds;
    while (POOL__LOAD(&p->monitor.heart_idle, POOL__SEQ_CST) != idle && test_now() < until)
        test_sleep_us(50);
    return POOL__LOAD(&p->monitor.heart_idle, POOL__SEQ_CST) == idle;
}

static void hr_parked(void *arg) { /* on q, while hr_pool's worker is parked in the call */
    (void)arg;
    CHECK_MSG(heart_is(hr_pool, 1, 10), "the heartbeat did not stop with its busy worker parked");
}

static void hr_task(void *arg) {
    (void)arg;
    CHECK_MSG(heart_is(hr_pool, 0, 10), "leaving idle did not resume the heartbeat");
    pool_call_on_worker(hr_other, hr_parked, NULL);
    CHECK_MSG(heart_is(hr_pool, 0, 10), "the end of a park did not resume the heartbeat");
}

static void test_heartbeat_resume(void) {
    pool_config cfg;
    int round;
    test_watchdog(60, "test_lazy: heartbeat resume");
    printf("  a stopped heartbeat resumes when a worker leaves idle, and when a park ends\n");
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    cfg.heartbeat_us = 20;
    hr_pool = test_pool_cfg(&cfg);
    cfg.heartbeat_us = POOL_HEARTBEAT_OFF;
    hr_other = test_pool_cfg(&cfg);
    pool_call_on_worker(hr_pool, nop_fn, NULL); /* starts a worker, and with it the monitor */
    for (round = 0; round < 20; round++) {
        CHECK_MSG(heart_is(hr_pool, 1, 10), "the heartbeat did not stop in an idle pool");
        pool_call_on_worker(hr_pool, hr_task, NULL);
    }
    CHECK(pool_destroy(hr_pool) == 0);
    CHECK(pool_destroy(hr_other) == 0);
}

int main(int argc, char **argv) {
    static const test_part parts[] = {
        {"one_thread", test_one_thread}, {"promote_oldest", test_promote_oldest},
        {"hand_made", test_hand_made},   {"idle_takes", test_idle_takes},
        {"heartbeat", test_heartbeat},   {"heartbeat_resume", test_heartbeat_resume},
    };
    test_watchdog(30, "test_lazy");
    printf("test_lazy: lazy joins\n");
    test_run_parts(argc, argv, parts, sizeof parts / sizeof parts[0]);
    return test_finish("test_lazy");
}
