/* test_slots.c - external slots: threads outside the pool that do the work.
 *
 * A thread outside every pool that calls pool_call, pool_join,
 * pool_parallel_for or pool_scope_wait takes one of the pool's external
 * slots and runs the work itself, the workers stealing from it (README:
 * "Outside callers"). Each part asserts where the work ran (the thread, its
 * pool_worker_index) and that every task ran exactly once:
 *
 *   caller_runs         pool_call from main runs on main, with a slot's index
 *   stolen_from_slot    a join from main whose first half waits for the
 *                       second: a worker must steal it from the slot (1 and
 *                       2 threads)
 *   busy_workers        every worker blocked in a task: main's pool_call,
 *                       pool_join and pool_scope_wait still finish, on main
 *   promotions_asked    an idle worker's request for promotions reaches the
 *                       slot (white-box)
 *   slot_asks_itself    a caller that takes a slot while the pool wants a
 *                       thread asks itself for promotions (an ask made just
 *                       before passed the slot by), and not while every
 *                       worker is busy (white-box)
 *   leftovers           a detached task and a spawn into an outer scope left
 *                       in the slot when the call returns run, once each
 *   on_worker           pool_call_on_worker runs on a worker thread, from
 *                       main and from inside a slot
 *   nested              inside a slot, a call into the same pool runs in
 *                       place, one into another pool on that pool's worker
 *   many_callers        32 threads calling into a pool with 2 slots: no slot
 *                       has two holders, the rest inject, every result exact
 *   scratch             per-thread scratch sized by pool_worker_index_limit
 *   no_slots            external_slots = POOL_EXTERNAL_SLOTS_NONE: calls run
 *                       on workers, as before slots existed
 *   destroy_waits       pool_destroy on another thread waits for a call under
 *                       way in a slot, and the call completes
 *   take_own_announces  a waiter (a scope wait in a slot, after its yielding
 *                       rounds) that takes its task from the injector gives
 *                       the rest back announced: workers that fell asleep on
 *                       finding the injector empty are woken (white-box)
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

static pool *p;
static int first_slot; /* pool_worker_index of slot 0 */
static pthread_t main_thread;

static int in_a_slot(int index) {
    return index >= first_slot && index < pool_worker_index_limit(p);
}

static pool *pool_of(int threads, int slots) {
    pool_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    cfg.external_slots = slots;
    return test_pool_cfg(&cfg);
}

/* Waits (yielding) until *flag is set; gives up after `seconds` and says so. */
static int wait_flag(atomic_int *flag, double seconds) {
    double until = test_now() + seconds;
    while (!atomic_load(flag)) {
        if (test_now() > until) return 0;
        sched_yield();
    }
    return 1;
}

/* ------------------------------------------------------------------------ */

static int seen_index;
static int seen_on_main;

static void record_where(void *arg) {
    (void)arg;
    seen_index = pool_worker_index();
    seen_on_main = pthread_equal(pthread_self(), main_thread);
}

static void caller_runs(void) {
    pool_stats before, after;
    printf("  caller_runs: pool_call from main runs on main, in a slot\n");
    pool_stats_get(p, &before);
    pool_call(p, record_where, NULL);
    pool_stats_get(p, &after);
    CHECK(seen_on_main);
    CHECK_MSG(in_a_slot(seen_index), "index %d", seen_index);
    CHECK_EQ_I64(pool_worker_index(), -1);
    CHECK_EQ_I64(after.slot_calls - before.slot_calls, 1);
    CHECK_EQ_I64(after.jobs_injected - before.jobs_injected, 0);
}

/* ------------------------------------------------------------------------ */

static atomic_int b_ran, b_on_worker;

static void first_waits_for_second(void *arg) {
    (void)arg;
    CHECK_MSG(wait_flag(&b_ran, 20), "the second half was not stolen from the slot");
}

static void second_half(void *arg) {
    int w = pool_worker_index();
    (void)arg;
    atomic_store(&b_on_worker, w >= 0 && w < pool_num_threads(p));
    atomic_store(&b_ran, 1);
}

static void stolen_from_slot(void) {
    int threads, round;
    pool *saved = p;
    for (threads = 1; threads <= 2; threads++) {
        printf("  stolen_from_slot: %d thread(s), a join from main whose first half waits for the "
               "second\n",
               threads);
        p = pool_of(threads, 0);
        for (round = 0; round < 50; round++) {
            atomic_store(&b_ran, 0);
            atomic_store(&b_on_worker, 0);
            pool_join(p, first_waits_for_second, NULL, second_half, NULL);
            CHECK(atomic_load(&b_ran) == 1 && atomic_load(&b_on_worker) == 1);
            if (round % 10 == 0) test_sleep_us(2000); /* the workers fall asleep */
        }
        CHECK(pool_destroy(p) == 0);
    }
    p = saved;
}

/* ------------------------------------------------------------------------ */

static atomic_int blockers_in, release_blockers;

static void blocker(pool_task *t) {
    (void)t;
    atomic_fetch_add(&blockers_in, 1);
    CHECK_MSG(wait_flag(&release_blockers, 30), "a blocker was never released");
}

typedef struct fib_arg {
    int n;
    long result;
    atomic_int *off_main; /* counts calls that ran on another thread */
} fib_arg;

static void fib(void *arg) {
    fib_arg *f = (fib_arg *)arg, a, b;
    if (!pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(f->off_main, 1);
    if (f->n < 2) {
        f->result = f->n;
        return;
    }
    a.n = f->n - 1, b.n = f->n - 2;
    a.off_main = b.off_main = f->off_main;
    pool_join(p, fib, &a, fib, &b);
    f->result = a.result + b.result;
}

static atomic_int scoped_runs, scoped_on_main;

static void scoped(pool_task *t) {
    (void)t;
    atomic_fetch_add(&scoped_runs, 1);
    if (pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&scoped_on_main, 1);
}

static void busy_workers(void) {
    static pool_task blockers[2], tasks[100];
    pool_scope s;
    atomic_int off_main;
    fib_arg f;
    int i;
    pool *saved = p;
    printf("  busy_workers: both workers blocked; main's call, join and scope wait run on main\n");
    p = pool_of(2, 0);
    atomic_store(&blockers_in, 0);
    atomic_store(&release_blockers, 0);
    for (i = 0; i < 2; i++) {
        blockers[i] = (pool_task)POOL_TASK_INIT(blocker);
        CHECK(pool_submit(p, &blockers[i]) == 0);
    }
    while (atomic_load(&blockers_in) < 2) test_sleep_us(100);
    atomic_store(&off_main, 0);
    f.n = 20, f.result = -1, f.off_main = &off_main;
    pool_call(p, fib, &f);
    CHECK_EQ_I64(f.result, 6765);
    CHECK_EQ_I64(atomic_load(&off_main), 0);
    f.n = 15, f.result = -1;
    pool_join(p, fib, &f, record_where, NULL);
    CHECK_EQ_I64(f.result, 610);
    CHECK(seen_on_main);
    atomic_store(&scoped_runs, 0);
    atomic_store(&scoped_on_main, 0);
    pool_scope_init(&s, p);
    for (i = 0; i < 100; i++) {
        tasks[i] = (pool_task)POOL_TASK_INIT(scoped);
        CHECK(pool_scope_spawn(&s, &tasks[i]) == 0);
    }
    pool_scope_wait(&s);
    CHECK_EQ_I64(atomic_load(&scoped_runs), 100);
    CHECK_EQ_I64(atomic_load(&scoped_on_main), 100);
    atomic_store(&release_blockers, 1);
    CHECK(pool_destroy(p) == 0);
    p = saved;
}

/* ------------------------------------------------------------------------ */

static pool__worker *asking_slot;
static int asked;

static void ask_everyone(void *arg) {
    (void)arg;
    POOL__STORE(&asking_slot->promote_wanted, 0, POOL__RELAXED);
    pool__want_promotions(pool__current(), POOL__ASK_HINT); /* what an idle worker does */
    asked = POOL__LOAD(&asking_slot->promote_wanted, POOL__RELAXED);
}

static void ask_from_a_worker(void *arg) {
    (void)arg;
    asking_slot = pool__current();
    pool_call_on_worker(p, ask_everyone, NULL);
}

static void promotions_asked(void) {
    printf("  promotions_asked: an idle worker's request reaches the slot in use\n");
    asked = 0;
    pool_call(p, ask_from_a_worker, NULL);
    CHECK(asking_slot && pool__is_slot(asking_slot));
    CHECK_EQ_I64(asked, 1);
}

/* ------------------------------------------------------------------------ */

/* Takes a slot of q by hand and says whether it asked itself. */
static int slot_take_asks(pool *q) {
    pool__worker *slot = pool__slot_take(q);
    int asks;
    CHECK(slot != NULL);
    if (!slot) return -1;
    asks = (int)POOL__LOAD(&slot->promote_wanted, POOL__RELAXED);
    POOL__STORE(&slot->promote_wanted, 0, POOL__RELAXED);
    pool__slot_give_back(q, slot);
    return asks;
}

static void slot_asks_itself(void) {
    pool *q = pool_of(2, 0);
    pool_task holders[2];
    double until = test_now() + 10;
    int i;
    printf("  slot_asks_itself: a slot taken while the pool wants a thread asks itself\n");
    /* Fresh, or once idle: a thread to start, or a worker asleep. */
    while (!pool__wants_thread(q) && test_now() < until) test_sleep_us(1000);
    CHECK(pool__wants_thread(q));
    CHECK_EQ_I64(slot_take_asks(q), 1);
    atomic_store(&blockers_in, 0);
    atomic_store(&release_blockers, 0);
    for (i = 0; i < 2; i++) {
        holders[i] = (pool_task)POOL_TASK_INIT(blocker);
        CHECK(pool_submit(q, &holders[i]) == 0);
    }
    while (atomic_load(&blockers_in) < 2) test_sleep_us(100);
    /* Every worker busy, none to start: nobody to ask for. */
    CHECK(!pool__wants_thread(q));
    CHECK_EQ_I64(slot_take_asks(q), 0);
    atomic_store(&release_blockers, 1);
    CHECK(pool_destroy(q) == 0);
}

/* ------------------------------------------------------------------------ */

static atomic_int detached_runs, outer_runs;
static pool_scope outer;

static void detached(pool_task *t) {
    (void)t;
    atomic_fetch_add(&detached_runs, 1);
}

static void outer_task(pool_task *t) {
    (void)t;
    atomic_fetch_add(&outer_runs, 1);
}

static void leave_work_behind(void *arg) {
    pool_task *left = (pool_task *)arg;
    CHECK(pool_submit(p, &left[0]) == 0);
    CHECK(pool_scope_spawn(&outer, &left[1]) == 0);
}

static void leftovers(void) {
    static pool_task left[2];
    int round;
    printf("  leftovers: a detached task and an outer scope's task left in the slot\n");
    for (round = 0; round < 200; round++) {
        atomic_store(&detached_runs, 0);
        atomic_store(&outer_runs, 0);
        left[0] = (pool_task)POOL_TASK_INIT(detached);
        left[1] = (pool_task)POOL_TASK_INIT(outer_task);
        pool_scope_init(&outer, p);
        pool_call(p, leave_work_behind, left);
        pool_scope_wait(&outer);
        CHECK_EQ_I64(atomic_load(&outer_runs), 1);
        CHECK_MSG(wait_flag(&detached_runs, 20), "a detached task left in a slot never ran");
        test_sleep_us(100);
        CHECK_EQ_I64(atomic_load(&detached_runs), 1);
    }
}

/* ------------------------------------------------------------------------ */

static void on_worker_from_slot(void *arg) {
    (void)arg;
    pool_call_on_worker(p, record_where, NULL);
}

static void on_worker(void) {
    printf("  on_worker: pool_call_on_worker runs on a worker thread\n");
    seen_index = -2;
    pool_call_on_worker(p, record_where, NULL);
    CHECK(!seen_on_main);
    CHECK_MSG(seen_index >= 0 && seen_index < pool_num_threads(p), "index %d", seen_index);
    seen_index = -2;
    pool_call(p, on_worker_from_slot, NULL);
    CHECK(!seen_on_main);
    CHECK_MSG(seen_index >= 0 && seen_index < pool_num_threads(p), "index %d", seen_index);
}

/* ------------------------------------------------------------------------ */

static pool *other;
static int outer_index, same_pool_index, other_pool_index;

static void in_other(void *arg) {
    (void)arg;
    other_pool_index = pool_worker_index();
}

static void in_same(void *arg) {
    (void)arg;
    same_pool_index = pool_worker_index();
}

static void call_both(void *arg) {
    (void)arg;
    outer_index = pool_worker_index();
    pool_call(p, in_same, NULL);
    pool_call(other, in_other, NULL);
}

static void nested(void) {
    printf("  nested: in a slot, a call into the same pool and one into another pool\n");
    other = pool_of(2, 0);
    pool_call(p, call_both, NULL);
    CHECK(in_a_slot(outer_index));
    CHECK_EQ_I64(same_pool_index, outer_index);
    CHECK_MSG(other_pool_index >= 0 && other_pool_index < 2, "index %d", other_pool_index);
    CHECK(pool_destroy(other) == 0);
}

/* ------------------------------------------------------------------------ */

#define CALLERS 32
#define SLOTS 2

static pool *crowded;
static atomic_int holders[SLOTS], double_holders, in_slot_calls, off_slot_calls, wrong;

static void crowded_leaf(void *arg) {
    fib_arg *f = (fib_arg *)arg;
    f->result = f->n;
}

static void crowded_call(void *arg) {
    fib_arg *f = (fib_arg *)arg, a, b;
    int w = pool_worker_index(), first = pool_worker_index_limit(crowded) - SLOTS, k = w - first;
    if (k >= 0 && k < SLOTS) {
        if (atomic_fetch_add(&holders[k], 1) != 0) atomic_fetch_add(&double_holders, 1);
        atomic_fetch_add(&in_slot_calls, 1);
    } else {
        atomic_fetch_add(&off_slot_calls, 1);
    }
    a.n = f->n, b.n = f->n + 1;
    pool_join(crowded, crowded_leaf, &a, crowded_leaf, &b);
    f->result = a.result + b.result;
    if (k >= 0 && k < SLOTS) atomic_fetch_sub(&holders[k], 1);
}

static void *caller(void *arg) {
    long i, iterations = (long)(intptr_t)arg;
    for (i = 0; i < iterations; i++) {
        fib_arg f;
        f.n = (int)i, f.result = -1;
        pool_call(crowded, crowded_call, &f);
        if (f.result != 2 * i + 1) atomic_fetch_add(&wrong, 1);
    }
    return NULL;
}

static void many_callers(void) {
    pthread_t t[CALLERS];
    pool_stats st;
    long iterations = test_scaled(2000, 100);
    int i;
    printf("  many_callers: %d threads x %ld calls into a pool with %d slots\n", CALLERS,
           iterations, SLOTS);
    crowded = pool_of(2, SLOTS);
    for (i = 0; i < CALLERS; i++)
        CHECK(pthread_create(&t[i], NULL, caller, (void *)(intptr_t)iterations) == 0);
    for (i = 0; i < CALLERS; i++) pthread_join(t[i], NULL);
    pool_stats_get(crowded, &st);
    CHECK_EQ_I64(atomic_load(&wrong), 0);
    CHECK_EQ_I64(atomic_load(&double_holders), 0);
    CHECK_EQ_I64(atomic_load(&in_slot_calls) + atomic_load(&off_slot_calls), CALLERS * iterations);
    CHECK_EQ_I64((long)st.slot_calls, atomic_load(&in_slot_calls));
    CHECK((long)st.jobs_injected >= atomic_load(&off_slot_calls));
    CHECK(atomic_load(&in_slot_calls) > 0);
    printf("    %d calls in slots, %d injected\n", atomic_load(&in_slot_calls),
           atomic_load(&off_slot_calls));
    CHECK(pool_destroy(crowded) == 0);
}

/* ------------------------------------------------------------------------ */

static int64_t *scratch;

static void add_range(void *arg, size_t lo, size_t hi) {
    (void)arg;
    for (; lo < hi; lo++) scratch[pool_worker_index()] += (int64_t)lo;
}

static void per_thread_scratch(void) {
    int limit = pool_worker_index_limit(p), i;
    int64_t total = 0, n = 1000000;
    printf("  scratch: pool_parallel_for from main into scratch[pool_worker_index()]\n");
    scratch = (int64_t *)calloc((size_t)limit, sizeof *scratch);
    CHECK(scratch != NULL);
    if (!scratch) return;
    pool_parallel_for(p, 0, (size_t)n, 1000, add_range, NULL);
    for (i = 0; i < limit; i++) total += scratch[i];
    CHECK_EQ_I64(total, n * (n - 1) / 2);
    CHECK(scratch[first_slot] > 0 || scratch[first_slot + 1] > 0);
    free(scratch);
}

/* ------------------------------------------------------------------------ */

static void no_slots(void) {
    pool *none = pool_of(2, POOL_EXTERNAL_SLOTS_NONE), *saved = p;
    pool_stats st;
    printf("  no_slots: external_slots = POOL_EXTERNAL_SLOTS_NONE\n");
    p = none;
    CHECK_EQ_I64(pool_worker_index_limit(none), 2 + 256);
    pool_call(none, record_where, NULL);
    CHECK(!seen_on_main);
    CHECK_MSG(seen_index >= 0 && seen_index < 2, "index %d", seen_index);
    pool_stats_get(none, &st);
    CHECK_EQ_I64(st.slot_calls, 0);
    CHECK_EQ_I64(st.jobs_injected, 1);
    p = saved;
    CHECK(pool_destroy(none) == 0);
}

/* ------------------------------------------------------------------------ */

static pool *doomed;
static atomic_int call_started, call_finished;

static void slow_leaf(void *arg) {
    (void)arg;
    test_sleep_us(1000);
}

static void slow_call(void *arg) {
    int i;
    (void)arg;
    atomic_store(&call_started, 1);
    for (i = 0; i < 20; i++) pool_join(doomed, slow_leaf, NULL, slow_leaf, NULL);
    atomic_store(&call_finished, 1);
}

static void *call_doomed(void *arg) {
    (void)arg;
    pool_call(doomed, slow_call, NULL);
    return NULL;
}

static int late_index;

static void record_late(void *arg) {
    (void)arg;
    late_index = pool_worker_index();
}

/* A blocking task of the pool being destroyed calls into it once the
   destroy has closed the slots (white-box): no slot is taken any more. */
static void call_after_close(pool_blocking_job *job) {
    (void)job;
    while (!(POOL__LOAD(&doomed->slots_taken, POOL__ACQUIRE) & POOL__SLOTS_CLOSED))
        test_sleep_us(100);
    pool_call(doomed, record_late, NULL);
}

static void destroy_waits(void) {
    pool_blocking_job late = POOL_BLOCKING_JOB_INIT(call_after_close);
    pthread_t t;
    printf("  destroy_waits: pool_destroy waits for a call under way in a slot\n");
    doomed = pool_of(2, 0);
    atomic_store(&call_started, 0);
    atomic_store(&call_finished, 0);
    late.mandatory = 1;
    late_index = -2;
    CHECK(pool_submit_blocking_job(doomed, &late) == 0);
    CHECK(pthread_create(&t, NULL, call_doomed, NULL) == 0);
    while (!atomic_load(&call_started)) test_sleep_us(100);
    CHECK(pool_destroy(doomed) == 0);
    CHECK_MSG(atomic_load(&call_finished) == 1, "pool_destroy returned while a slot's call ran");
    CHECK_MSG(late_index < 2, "a call during pool_destroy took slot index %d", late_index);
    pthread_join(t, NULL);
}

/* ------------------------------------------------------------------------ */

static atomic_long rest_runs;

static void rest_task(pool_task *t) {
    (void)t;
    atomic_fetch_add(&rest_runs, 1);
}

static void nothing_task(pool_task *t) { (void)t; }

static void nap(pool_task *t) {
    (void)t;
    test_sleep_us(1000);
}

/* White-box: the moment after a waiter's take_own took everything from the
   injector while both workers fell asleep on finding it empty. The tasks
   are put there without an announce, as the waiter's take left them; the
   waiter takes its own and gives the rest back, which must wake them. */
static void take_own_announces(void) {
    static pool_task naps[2], rest_tasks[1000];
    pool_task mine = POOL_TASK_INIT(nothing_task);
    pool__awaited wt;
    pool *sorted = pool_of(2, 0);
    double until;
    int i;
    printf("  take_own_announces: a waiter gives back what it took from the injector\n");
    for (i = 0; i < 2; i++) { /* both workers start, then fall asleep */
        naps[i] = (pool_task)POOL_TASK_INIT(nap);
        CHECK(pool_submit(sorted, &naps[i]) == 0);
    }
    CHECK_MSG(test_wait_awake(sorted, 2, 0, 10), "the two workers were not both asleep in 10 s");
    atomic_store(&rest_runs, 0);
    for (i = 0; i < 1000; i++) {
        rest_tasks[i] = (pool_task)POOL_TASK_INIT(rest_task);
        CHECK(pool__mark_queued(&rest_tasks[i], NULL) == 0); /* as a submission marks it */
        rest_tasks[i].pool__next = i < 999 ? &rest_tasks[i + 1] : &mine;
    }
    CHECK(pool__mark_queued(&mine, NULL) == 0);
    mine.pool__next = NULL;
    pool__injector_repush(&sorted->injector, &rest_tasks[0], &mine);
    memset(&wt, 0, sizeof wt);
    wt.own = &mine;
    CHECK(pool__take_own(sorted, &wt) == &mine);
    for (until = test_now() + 10; atomic_load(&rest_runs) < 1000 && test_now() < until;)
        test_sleep_us(1000);
    CHECK_MSG(atomic_load(&rest_runs) == 1000, "%ld of 1000 tasks given back ran in 10 s",
              (long)atomic_load(&rest_runs));
    CHECK(pool_destroy(sorted) == 0);
}

int main(void) {
    test_watchdog(120, "test_slots");
    main_thread = pthread_self();
    printf("test_slots: outside callers that do the work\n");
    p = pool_of(2, 0);
    first_slot = pool_worker_index_limit(p) - POOL_EXTERNAL_SLOTS_DEFAULT;
    caller_runs();
    stolen_from_slot();
    busy_workers();
    promotions_asked();
    slot_asks_itself();
    leftovers();
    on_worker();
    nested();
    many_callers();
    per_thread_scratch();
    no_slots();
    destroy_waits();
    take_own_announces();
    CHECK(pool_destroy(p) == 0);
    return test_finish("test_slots");
}
