/* test_take.c - what a worker does with the chain it takes from the
 * injector, checked on its own.
 *
 * Single-threaded and white-box: pools whose worker slots are filled by
 * hand (no thread runs them), and pool.h's own pool__take_injected. A
 * worker keeps the first task to run and moves the rest onto its deque; of
 * a chain longer than POOL__TAKE_CHUNK it keeps that many and gives the
 * rest back to the injector for another worker to take with one exchange.
 * Each case checks exactly where every task went (each exactly once: the
 * task returned, the deque, the injector) and the counts of injected tasks:
 *  - a chain of POOL__TAKE_CHUNK is kept whole;
 *  - one task more, and a long chain, are cut after POOL__TAKE_CHUNK;
 *  - a pool of one thread never splits (nobody else would take the rest);
 *  - what was given back, taken again, is cut again;
 *  - a high-priority task a worker takes, and the tasks a waiter or the
 *    drain takes as its own, are counted as taken, once each;
 *  - work posted meanwhile (the injector not empty) is taken over and goes
 *    back with the rest;
 *  - a look at the injector for fairness (pool__find_work's every
 *    POOL__FAIR_TICKS-th search) by a worker whose deque holds
 *    POOL__FAIR_DEEP tasks already takes POOL__FAIR_TAKE tasks and gives
 *    the rest back; with one task less queued it takes a chunk.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#define MAX_TASKS (1001 + POOL__FAIR_DEEP)

static void nop_task(pool_task *t) { (void)t; }

static pool_task tasks[MAX_TASKS];
static int seen[MAX_TASKS];

static void see(pool_task *t) {
    ptrdiff_t i = t - tasks;
    CHECK(i >= 0 && i < MAX_TASKS);
    if (i >= 0 && i < MAX_TASKS) seen[i]++;
}

/* A pool of n threads whose slots are filled by hand. */
static pool *pool_with_slots(int n) {
    pool_config cfg;
    pool *p;
    int i;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = n;
    if (pool_create(&p, &cfg) != 0) exit(2);
    for (i = 0; i < n; i++)
        if (!(p->workers[i] = pool__worker_new(p, (uint32_t)i))) exit(2);
    POOL__STORE(&p->threads.started, (uint32_t)n, POOL__RELEASE);
    return p;
}

/* Takes the slots back before pool_destroy, which would join their threads. */
static void destroy_with_slots(pool *p, int n) {
    int i;
    POOL__STORE(&p->threads.started, 0, POOL__RELEASE);
    for (i = 0; i < n; i++) {
        pool__worker_free(p, p->workers[i]);
        p->workers[i] = NULL;
    }
    CHECK(pool_destroy(p) == 0);
}

/* Posts tasks[0..n) as one batch, as pool_submit_batch does. */
static void post(pool *p, int n) {
    pool_task *ptrs[MAX_TASKS];
    int i;
    for (i = 0; i < n; i++) {
        tasks[i] = (pool_task)POOL_TASK_INIT(nop_task);
        ptrs[i] = &tasks[i];
    }
    CHECK(pool_submit_batch(p, ptrs, (size_t)n) == 0);
}

/* w takes from the injector: checks that it got a task, that its deque
   holds on_deque tasks (and says *moved of them) and the injector
   in_injector; then takes all of them out and counts them. */
static void take(pool *p, pool__worker *w, int on_deque, int in_injector) {
    uint32_t moved = 0;
    pool_task *t = pool__take_injected(w, &moved, POOL__TAKE_CHUNK), *i;
    int n = 0;
    CHECK(t != NULL);
    if (!t) return;
    see(t);
    CHECK_EQ_I64(pool__deque_len(&w->deque), on_deque);
    CHECK_EQ_I64(moved, on_deque);
    while ((t = pool__deque_pop(&w->deque)) != NULL) see(t);
    for (i = pool__injector_take_all(&p->injector); i; i = i->pool__next, n++) see(i);
    CHECK_EQ_I64(n, in_injector);
}

static void check_each_once(int n) {
    int i, wrong = 0;
    for (i = 0; i < n; i++) wrong += seen[i] != 1;
    CHECK_EQ_I64(wrong, 0);
    memset(seen, 0, sizeof seen);
}

/* A chain of n tasks taken by worker 0 of a pool of `threads`: it keeps
   `kept` (one to run, the rest on its deque) and gives back the rest. */
static void check_take(int threads, int n, int kept) {
    pool *p = pool_with_slots(threads);
    pool_stats s;
    printf("  a pool of %d, a chain of %d: %d kept, %d given back\n", threads, n, kept, n - kept);
    post(p, n);
    take(p, p->workers[0], kept - 1, n - kept);
    check_each_once(n);
    pool_stats_get(p, &s);
    /* Counted as taken: the part given back counts when it is taken again
       (here by the test's own take-all, which counts nothing). */
    CHECK_EQ_I64(s.jobs_injected, kept);
    CHECK_EQ_I64(p->workers[0]->stats.jobs_injected, kept);
    destroy_with_slots(p, threads);
}

/* What was given back is cut again by whoever takes it. */
static void check_chunks(void) {
    pool *p = pool_with_slots(2);
    pool__worker *a = p->workers[0], *b = p->workers[1];
    uint32_t moved = 0;
    pool_task *t;
    pool_stats s;
    printf("  a pool of 2, a chain of 1000: %d kept, %d by the next taker\n", POOL__TAKE_CHUNK,
           POOL__TAKE_CHUNK);
    post(p, 1000);
    t = pool__take_injected(a, &moved, POOL__TAKE_CHUNK);
    CHECK(t != NULL && moved == POOL__TAKE_CHUNK - 1);
    if (t) see(t);
    while ((t = pool__deque_pop(&a->deque)) != NULL) see(t);
    take(p, b, POOL__TAKE_CHUNK - 1, 1000 - 2 * POOL__TAKE_CHUNK);
    check_each_once(1000);
    CHECK_EQ_I64(a->stats.jobs_injected, POOL__TAKE_CHUNK);
    CHECK_EQ_I64(b->stats.jobs_injected, POOL__TAKE_CHUNK);
    pool_stats_get(p, &s);
    CHECK_EQ_I64(s.jobs_injected, 2 * POOL__TAKE_CHUNK); /* the two takes, not the post */
    destroy_with_slots(p, 2);
}

/* What was posted meanwhile goes back with the rest of the chain. */
static void check_give_back_not_empty(void) {
    pool *p = pool_with_slots(2);
    pool_task *chain, *t;
    pool_stats s;
    int n = 0;
    printf("  a pool of 2, a chain of 1000 cut while 1 task waits in the injector\n");
    post(p, 1001);
    chain = pool__injector_take_all(&p->injector);
    CHECK(chain == &tasks[0]);
    /* The last task, posted again on its own: it is the injector's now. */
    for (t = chain; t->pool__next != &tasks[1000]; t = t->pool__next) continue;
    t->pool__next = NULL;
    tasks[1000].pool__next = NULL;
    pool__injector_repush(&p->injector, &tasks[1000], &tasks[1000]);
    pool__split_injected(p->workers[0], chain, POOL__TAKE_CHUNK);
    for (t = chain; t; t = t->pool__next, n++) see(t);
    CHECK_EQ_I64(n, POOL__TAKE_CHUNK);
    for (t = pool__injector_take_all(&p->injector), n = 0; t; t = t->pool__next, n++) see(t);
    CHECK_EQ_I64(n, 1001 - POOL__TAKE_CHUNK);
    check_each_once(1001);
    pool_stats_get(p, &s);
    CHECK_EQ_I64(s.jobs_injected, 0); /* a split and a give-back count nothing */
    destroy_with_slots(p, 2);
}

/* Worker 0 of a pool of 2 has `queued` tasks of its own on its deque
   (tasks[1000..), when 1000 tasks are posted and its next search is a
   fairness look: it runs an injected task, and what it moved onto its
   deque and gave back are checked. */
static void check_fair_look(int queued, int kept) {
    pool *p = pool_with_slots(2);
    pool__worker *w = p->workers[0];
    uint32_t moved = 0;
    pool_task *t, *i;
    pool_stats s;
    int more = 0, n = 0, k;
    printf("  a fairness look with %d queued: %d taken, %d given back\n", queued, kept,
           1000 - kept);
    for (k = 0; k < queued; k++) {
        tasks[1000 + k] = (pool_task)POOL_TASK_INIT(nop_task);
        CHECK(pool__deque_push(&w->deque, &tasks[1000 + k]) == 0);
    }
    post(p, 1000);
    w->ticks = POOL__FAIR_TICKS - 1;
    t = pool__find_work(w, &moved, &more);
    CHECK(t != NULL && t - tasks < 1000);
    if (t) see(t);
    CHECK_EQ_I64(moved, kept - 1);
    CHECK_EQ_I64(pool__deque_len(&w->deque), queued + kept - 1);
    while ((t = pool__deque_pop(&w->deque)) != NULL) see(t);
    for (i = pool__injector_take_all(&p->injector); i; i = i->pool__next, n++) see(i);
    CHECK_EQ_I64(n, 1000 - kept);
    check_each_once(1000 + queued);
    pool_stats_get(p, &s);
    CHECK_EQ_I64(s.jobs_injected, kept);
    CHECK_EQ_I64(w->stats.jobs_injected, kept);
    destroy_with_slots(p, 2);
}

/* The other takers count too, once per task: a worker's take of a
   high-priority task (pool__take_high), and a waiter's or the drain's take
   of its own task (pool__take_own), which gives the rest back uncounted.
   Taken to the last, the count is the number posted. */
static void check_other_takers(void) {
    pool *p = pool_with_slots(2);
    pool__worker *w = p->workers[0];
    pool_stats s;
    pool_task *t;
    int i, n = 0;
    printf("  a pool of 2: 5 tasks and 3 high ones, one taken by a worker, then drained\n");
    post(p, 5);
    for (i = 5; i < 8; i++) {
        tasks[i] = (pool_task)POOL_TASK_INIT(nop_task);
        CHECK(pool_submit_priority(p, &tasks[i], POOL_PRIORITY_HIGH) == 0);
    }
    t = pool__take_high(w);
    CHECK(t != NULL);
    if (t) see(t);
    pool_stats_get(p, &s);
    CHECK_EQ_I64(s.jobs_injected, 1);
    CHECK_EQ_I64(w->stats.jobs_injected, 1);
    t = pool__take_own(p, NULL); /* the drain's take: a high one first, the rest given back */
    CHECK(t != NULL);
    if (t) see(t);
    pool_stats_get(p, &s);
    CHECK_EQ_I64(s.jobs_injected, 2);
    while ((t = pool__take_own(p, NULL)) != NULL) {
        see(t);
        n++;
    }
    CHECK_EQ_I64(n, 6);
    check_each_once(8);
    pool_stats_get(p, &s);
    CHECK_EQ_I64(s.jobs_injected, 8); /* all taken: as many as were posted */
    CHECK_EQ_I64(w->stats.jobs_injected, 1);
    destroy_with_slots(p, 2);
}

int main(void) {
    test_watchdog(30, "test_take");
    printf("test_take: what a worker does with the chain it takes\n");
    check_take(2, POOL__TAKE_CHUNK, POOL__TAKE_CHUNK);
    check_take(2, POOL__TAKE_CHUNK + 1, POOL__TAKE_CHUNK);
    check_take(2, 1001, POOL__TAKE_CHUNK);
    check_take(1, 1001, 1001);
    check_chunks();
    check_give_back_not_empty();
    check_other_takers();
    check_fair_look(POOL__FAIR_DEEP, POOL__FAIR_TAKE);
    check_fair_look(POOL__FAIR_DEEP - 1, POOL__TAKE_CHUNK);
    return test_finish("test_take");
}
