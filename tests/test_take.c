/* test_take.c - what a worker does with the chain it takes from the
 * injector, checked on its own.
 *
 * Single-threaded and white-box: pools whose worker slots are filled by
 * hand (no thread runs them), and pool.h's own pool__take_injected. A
 * worker keeps the first task to run and moves the rest onto its deque; a
 * chain of POOL__SPLIT_MIN tasks or more it halves first, giving the second
 * half back to the injector for another worker to take with one exchange.
 * Each case checks exactly where every task went (each exactly once: the
 * task returned, the deque, the injector) and the counts of injected tasks:
 *  - a chain one short of the limit is not split;
 *  - a chain at the limit, and a long odd one, are halved (the worker keeps
 *    the smaller half of an odd chain);
 *  - a pool of one thread never splits (nobody else would take the half);
 *  - what was given back, taken again, is halved again.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#define MAX_TASKS 1001

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
    POOL__STORE(&p->threads_started, (uint32_t)n, POOL__RELEASE);
    return p;
}

/* Takes the slots back before pool_destroy, which would join their threads. */
static void destroy_with_slots(pool *p, int n) {
    int i;
    POOL__STORE(&p->threads_started, 0, POOL__RELEASE);
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
    pool_task *t = pool__take_injected(w, &moved), *i;
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
    CHECK_EQ_I64(s.jobs_injected, n); /* posted once, whatever was given back */
    CHECK_EQ_I64(p->workers[0]->stats.jobs_injected, kept);
    destroy_with_slots(p, threads);
}

/* What was given back is halved again by whoever takes it. */
static void check_halving(void) {
    pool *p = pool_with_slots(2);
    pool__worker *a = p->workers[0], *b = p->workers[1];
    uint32_t moved = 0;
    pool_task *t;
    printf("  a pool of 2, a chain of 1000: 500 kept, 250 and 250 by the next taker\n");
    post(p, 1000);
    t = pool__take_injected(a, &moved);
    CHECK(t != NULL && moved == 499);
    if (t) see(t);
    while ((t = pool__deque_pop(&a->deque)) != NULL) see(t);
    take(p, b, 249, 250);
    check_each_once(1000);
    CHECK_EQ_I64(a->stats.jobs_injected, 500);
    CHECK_EQ_I64(b->stats.jobs_injected, 250);
    destroy_with_slots(p, 2);
}

int main(void) {
    test_watchdog(30, "test_take");
    printf("test_take: what a worker does with the chain it takes\n");
    check_take(2, POOL__SPLIT_MIN - 1, POOL__SPLIT_MIN - 1);
    check_take(2, POOL__SPLIT_MIN, POOL__SPLIT_MIN / 2);
    check_take(2, 1001, 500);
    check_take(1, 1001, 1001);
    check_halving();
    return test_finish("test_take");
}
