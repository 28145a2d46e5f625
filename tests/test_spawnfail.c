/* test_spawnfail.c - every accepted piece of work completes, and nothing
 * hangs, when worker threads cannot be created.
 *
 * Thread creation goes through a stand-in (pool.h's private
 * POOL__THREAD_CREATE hook) that fails by a schedule:
 *  - every call from the k-th on fails, for k = 0 (no thread at all), 1, 2
 *    and 3 (a pool of 4 that never gets its last thread);
 *  - only call i fails, for every i in 0..3 (the pool must carry on with
 *    the threads it has and try again later, until it has all 4);
 *  - every other call fails.
 * Under each schedule a fresh pool of 4 runs the whole battery: pool_call
 * and pool_join from outside (fork-join inside, exact result), a scope of
 * flat and nested tasks waited on from outside and from a task, an exact
 * parallel_for sum, detached submissions and batches, a call from a worker
 * of another, healthy pool (which must run the work itself when the
 * failing pool has no thread), and pool_destroy with detached work still
 * queued (refused with EAGAIN when the pool has no thread: nobody would run
 * it before pool_destroy). Every accepted task must have run exactly once,
 * every refused one never, and the pool's counters
 * must match the stand-in's: threads_started plus spares_started (threads
 * that stand in for a waiting worker) is its successes, threads_failed its
 * failures, and threads_started the workers the schedule lets start.
 */
#define POOL__THREAD_CREATE test_thread_create
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

/* ------------------------------------------------------------------------ */
/* The failing thread creation                                              */
/* ------------------------------------------------------------------------ */

/* The healthy pool is told apart by its stack size: only its threads are
   created for real without going through the schedule. */
#define HEALTHY_STACK ((size_t)1 << 20)

enum schedule_kind { FAIL_FROM, FAIL_ONLY, FAIL_ODD };

static struct {
    pthread_mutex_t lock;
    enum schedule_kind kind;
    int index;
    int calls, successes, failures;
} sched = {PTHREAD_MUTEX_INITIALIZER, FAIL_FROM, 0, 0, 0, 0};

static int schedule_fails(int call) {
    switch (sched.kind) {
    case FAIL_FROM:
        return call >= sched.index;
    case FAIL_ONLY:
        return call == sched.index;
    case FAIL_ODD:
        return call % 2 == 1;
    }
    return 1;
}

static int test_thread_create(pool__thread *t, size_t stack_size, pool__thread_proc fn, void *arg) {
    int fail;
    /* The schedule is for workers; a pool's monitor thread starts for real. */
    if (stack_size == HEALTHY_STACK || fn != pool__worker_main)
        return pool__thread_create_native(t, stack_size, fn, arg);
    pthread_mutex_lock(&sched.lock);
    fail = schedule_fails(sched.calls++);
    if (fail) sched.failures++;
    else sched.successes++;
    pthread_mutex_unlock(&sched.lock);
    return fail ? EAGAIN : pool__thread_create_native(t, stack_size, fn, arg);
}

static void schedule_set(enum schedule_kind kind, int index) {
    pthread_mutex_lock(&sched.lock);
    sched.kind = kind, sched.index = index;
    sched.calls = sched.successes = sched.failures = 0;
    pthread_mutex_unlock(&sched.lock);
}

/* ------------------------------------------------------------------------ */
/* The battery                                                              */
/* ------------------------------------------------------------------------ */

static pool *failing; /* the pool under test */

/* Scope tasks: each node spawns `fanout` children until depth 0, and
   counts itself once in its own slot. */
typedef struct node {
    pool_task task;
    pool_scope *scope;
    int depth;
    atomic_int ran;
    struct node *children; /* `fanout` of them */
} node;

#define FANOUT 3
#define DEPTH 5 /* 1 + 3 + ... + 3^5 = 364 nodes */
#define NODES 364

static node nodes[NODES];
static int nodes_used;

static void node_run(pool_task *t) {
    node *n = (node *)((char *)t - offsetof(node, task));
    int i;
    atomic_fetch_add(&n->ran, 1);
    for (i = 0; n->depth > 0 && i < FANOUT; i++)
        CHECK(pool_scope_spawn(n->scope, &n->children[i].task) == 0);
}

/* Lays out the tree breadth-first in nodes[]. */
static node *tree_build(pool_scope *s) {
    int i, next = 1;
    memset(nodes, 0, sizeof nodes);
    nodes[0].depth = DEPTH;
    for (i = 0; i < NODES; i++) {
        nodes[i].task.run = node_run;
        nodes[i].scope = s;
        if (nodes[i].depth > 0) {
            int c;
            nodes[i].children = &nodes[next];
            for (c = 0; c < FANOUT; c++) nodes[next + c].depth = nodes[i].depth - 1;
            next += FANOUT;
        }
    }
    nodes_used = next;
    return &nodes[0];
}

static void tree_check(const char *where) {
    int i, bad = 0;
    CHECK_EQ_I64(nodes_used, NODES);
    for (i = 0; i < NODES; i++) bad += atomic_load(&nodes[i].ran) != 1;
    CHECK_MSG(bad == 0, "%s: %d of %d scope tasks did not run exactly once", where, bad, NODES);
}

static void scope_tree(void) {
    pool_scope s;
    pool_scope_init(&s, failing);
    CHECK(pool_scope_spawn(&s, &tree_build(&s)->task) == 0);
    pool_scope_wait(&s);
}

static void scope_tree_task(void *arg) {
    (void)arg;
    scope_tree();
}

static void sum_body(void *arg, size_t lo, size_t hi) {
    uint64_t local = 0;
    size_t i;
    for (i = lo; i < hi; i++) local += i;
    atomic_fetch_add((_Atomic uint64_t *)arg, local);
}

/* Detached tasks: each counts itself in its own slot. */
#define DETACHED 2000

typedef struct detached {
    pool_task task;
    atomic_int ran;
} detached;

static detached det[DETACHED];

static void detached_run(pool_task *t) {
    atomic_fetch_add(&((detached *)((char *)t - offsetof(detached, task)))->ran, 1);
}

/* With no thread, a detached submission is refused (EAGAIN), untaken;
   otherwise accepted. Sets accepted[i] for what was. */
static int accepted[DETACHED];

/* A submission from inside a pool_call from outside, which runs in an
   external slot: refused the same way (nobody but the caller would run it,
   and not before pool_destroy). */
static pool_task in_slot_task;
static int in_slot_rc;

static void submit_in_slot(void *arg) {
    (void)arg;
    in_slot_rc = pool_submit(failing, &in_slot_task);
}

static void submit_detached(int threads) {
    static pool_task *batch[DETACHED / 2];
    int i, rc, want = threads ? 0 : EAGAIN;
    if (!threads) {
        in_slot_task = (pool_task)POOL_TASK_INIT(detached_run);
        in_slot_rc = -1;
        pool_call(failing, submit_in_slot, NULL);
        CHECK_MSG(in_slot_rc == EAGAIN, "pool_submit in a slot with no thread: %d", in_slot_rc);
    }
    for (i = 0; i < DETACHED; i++) {
        det[i].task = (pool_task)POOL_TASK_INIT(detached_run);
        atomic_store(&det[i].ran, 0);
    }
    for (i = 0; i < DETACHED / 2; i++) {
        rc = pool_submit(failing, &det[i].task);
        CHECK_MSG(rc == want, "pool_submit with %d threads: %d", threads, rc);
        accepted[i] = rc == 0;
    }
    for (i = 0; i < DETACHED / 2; i++) batch[i] = &det[DETACHED / 2 + i].task;
    rc = pool_submit_batch(failing, batch, DETACHED / 2);
    CHECK_MSG(rc == want, "pool_submit_batch with %d threads: %d", threads, rc);
    for (i = DETACHED / 2; i < DETACHED; i++) accepted[i] = rc == 0;
}

static void call_from_other_pool(void *arg) {
    test_fib_arg *f = (test_fib_arg *)arg;
    pool_call(failing, test_fib, f);
}

/* Posts work until the pool has `want` threads and has seen a creation
   fail, or 5 s have passed: a pool starts threads only on demand, and
   retries a failed start only some time after the failure. */
static void work_until_threads(int want) {
    double give_up = test_now() + 5;
    pool_stats st;
    test_fib_arg f;
    for (;;) {
        pool_stats_get(failing, &st);
        if ((st.threads_started >= (uint64_t)want && st.threads_failed > 0) || test_now() > give_up)
            return;
        f.n = 20; /* enough to keep every thread busy, so posts need another */
        pool_call_on_worker(failing, test_fib, &f); /* its posts are a worker's */
        CHECK_EQ_I64(f.result, 6765);
    }
}

/* The pool's counters against the stand-in's, once no thread start is in
   flight any more (one may still be, from a post just before). */
static uint64_t check_counts(const char *label) {
    double give_up = test_now() + 5;
    pool_stats st;
    int successes, failures;
    for (;;) {
        pool_stats_get(failing, &st);
        pthread_mutex_lock(&sched.lock);
        successes = sched.successes, failures = sched.failures;
        pthread_mutex_unlock(&sched.lock);
        if ((st.threads_started + st.spares_started == (uint64_t)successes &&
             st.threads_failed == (uint64_t)failures) ||
            test_now() > give_up)
            break;
        test_sleep_us(1000);
    }
    CHECK_MSG(st.threads_started + st.spares_started == (uint64_t)successes &&
                  st.threads_failed == (uint64_t)failures,
              "%s: stats say %" PRIu64 " workers and %" PRIu64 " spares started, %" PRIu64
              " failed; creation calls: %d ok, %d failed",
              label, st.threads_started, st.spares_started, st.threads_failed, successes, failures);
    CHECK_MSG(failures > 0, "%s: the schedule never made a creation fail", label);
    return st.threads_started;
}

static void battery(pool *healthy, const char *label, int want_threads) {
    pool_config cfg;
    test_fib_arg f;
    _Atomic uint64_t sum = 0;
    uint64_t workers;
    int i, bad = 0;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 4;
    CHECK(pool_create(&failing, &cfg) == 0);
    if (!failing) exit(2);
    test_fib_pool = failing;

    f.n = 18;
    pool_call(failing, test_fib, &f);
    CHECK_MSG(f.result == 2584, "%s: pool_call fib(18) = %ld", label, f.result);
    f.n = 17;
    test_fib(&f); /* pool_join from outside at the top */
    CHECK_MSG(f.result == 1597, "%s: pool_join fib(17) = %ld", label, f.result);

    scope_tree();
    tree_check(label);
    pool_call(failing, scope_tree_task, NULL);
    tree_check(label);

    pool_parallel_for(failing, 0, 100000, 0, sum_body, (void *)&sum);
    CHECK_MSG(atomic_load(&sum) == (uint64_t)100000 * 99999 / 2, "%s: parallel_for sum", label);

    f.n = 16, f.result = 0;
    pool_call(healthy, call_from_other_pool, &f);
    CHECK_MSG(f.result == 987, "%s: cross-pool fib(16) = %ld", label, f.result);

    work_until_threads(want_threads);
    workers = check_counts(label);
    CHECK_MSG(workers == (uint64_t)want_threads, "%s: %" PRIu64 " workers started, expected %d",
              label, workers, want_threads);

    submit_detached(want_threads); /* still queued, or running, when destroy starts */
    CHECK_EQ_I64(pool_destroy(failing), 0);
    for (i = 0; i < DETACHED; i++) bad += atomic_load(&det[i].ran) != accepted[i];
    CHECK_MSG(bad == 0, "%s: %d of %d detached tasks ran other than once if accepted, never if not",
              label, bad, DETACHED);
}

int main(void) {
    pool *healthy = NULL;
    pool_config cfg;
    char label[64];
    int k;
    test_watchdog(180, "test_spawnfail");
    printf("test_spawnfail: thread creation failing by schedule\n");
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    cfg.stack_size = HEALTHY_STACK;
    CHECK(pool_create(&healthy, &cfg) == 0);
    if (!healthy) return 2;

    for (k = 0; k <= 3; k++) {
        snprintf(label, sizeof label, "fail from call %d", k);
        schedule_set(FAIL_FROM, k);
        battery(healthy, label, k);
    }
    /* Calls 0..3 are the ones a pool of 4 makes; after the failure it must
       try again until it has all 4 threads. */
    for (k = 0; k <= 3; k++) {
        snprintf(label, sizeof label, "fail only call %d", k);
        schedule_set(FAIL_ONLY, k);
        battery(healthy, label, 4);
    }
    schedule_set(FAIL_ODD, 0);
    battery(healthy, "fail every other call", 4);

    CHECK_EQ_I64(pool_destroy(healthy), 0);
    if (test_failures()) {
        printf("test_spawnfail: %ld check(s) FAILED\n", test_failures());
        return 1;
    }
    printf("test_spawnfail: all checks passed\n");
    return 0;
}
