/* test_fork.c - fork() while pools run.
 *
 * In the child of a fork:
 *  - the default pool is a new one, created on first use, and works
 *    (a fresh pool: its counters saw only the child's call);
 *  - an explicit pool inherited from the parent refuses work without
 *    hanging: pool_submit, pool_submit_batch, pool_scope_spawn,
 *    pool_submit_blocking(_job) and pool_destroy return ECHILD; waiting
 *    for a blocking job submitted before the fork returns ECHILD;
 *    pool_join, pool_call and pool_parallel_for run the work on the
 *    calling thread with the right result; pool_scope_wait returns, and
 *    pool_graph_wait for a run that a thread of the parent was waiting
 *    for (it claimed the run's wait) returns ECHILD, after which the run
 *    has ended (a second wait returns 0) and pool_graph_run returns
 *    ECHILD;
 *  - a fork from inside a task: the child's thread is no worker, and
 *    the default pool works there too.
 * In the parent, nothing changed: the blocking job pending across the
 * fork completes, and the pool is destroyed normally.
 * Stress: 40 forks while two threads keep both pools busy; every child
 * must use the default pool and exit within 30 s (the atfork handlers
 * keep the child from inheriting a lock another thread held).
 *
 * ThreadSanitizer cannot start threads in the child of a threaded
 * process, so under it the children skip what starts threads.
 */
#if defined(_WIN32)
#include <stdio.h>
int main(void) {
    printf("test_fork: skipped: Windows has no fork()\n");
    return 0;
}
#else
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#include <signal.h>
#include <sys/wait.h>

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

static pool *explicit_pool;
static int pipe_fd[2];

/* Waits for pid for at most `seconds`; returns its exit status, or -1 on
   a timeout (after killing it) or abnormal exit. */
static int wait_child(pid_t pid, int seconds) {
    int status, waited;
    for (waited = 0; waited < seconds * 1000; waited++) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        if (r < 0) return -1;
        test_sleep_us(1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    fprintf(stderr, "child %d did not finish within %d s\n", (int)pid, seconds);
    return -1;
}

static void noop_task(pool_task *t) { (void)t; }

static void block_on_pipe(pool_blocking_job *job) {
    char c;
    (void)job;
    while (read(pipe_fd[0], &c, 1) < 0 && errno == EINTR) continue;
}

/* A graph whose run is under way at the fork, held by its only node, and
   claimed by a thread of the parent that waits for it. */
static pool_graph held_graph;
static int graph_pipe[2];
static atomic_int gate_index = -2; /* where the gate node runs, once it does */

static void gate_on_pipe(pool_graph_node *self) {
    char c;
    (void)self;
    atomic_store(&gate_index, pool_worker_index());
    while (read(graph_pipe[0], &c, 1) < 0 && errno == EINTR) continue;
}

static void *wait_for_held_graph(void *arg) {
    *(int *)arg = pool_graph_wait(&held_graph);
    return NULL;
}

static void sum_body(void *arg, size_t lo, size_t hi) {
    size_t *sum = (size_t *)arg;
    for (; lo < hi; lo++) *sum += lo;
}

/* What the child checks; returns the number of failed checks. */
static int child_checks(pool_blocking_job *pending) {
    pool_task t = POOL_TASK_INIT(noop_task), *batch[1];
    pool_blocking_job job = POOL_BLOCKING_JOB_INIT(block_on_pipe);
    pool_scope s;
    test_fib_arg fib = {20, 0};
    size_t sum = 0;
    pool_stats st;
    batch[0] = &t;
    CHECK_EQ_I64(pool_worker_index(), -1);
    CHECK_EQ_I64(pool_submit(explicit_pool, &t), ECHILD);
    CHECK_EQ_I64(pool_submit_batch(explicit_pool, batch, 1), ECHILD);
    CHECK_EQ_I64(pool_submit_blocking(explicit_pool, &t), ECHILD);
    CHECK_EQ_I64(pool_submit_blocking_job(explicit_pool, &job), ECHILD);
    CHECK_EQ_I64(pool_wait_blocking_job(pending), ECHILD);
    pool_scope_init(&s, explicit_pool);
    CHECK_EQ_I64(pool_scope_spawn(&s, &t), ECHILD);
    pool_scope_wait(&s);
    CHECK_EQ_I64(pool_graph_wait(&held_graph), ECHILD);
    CHECK_EQ_I64(pool_graph_wait(&held_graph), 0);
    CHECK_EQ_I64(pool_graph_run(&held_graph), ECHILD);
    test_fib_pool = explicit_pool;
    pool_call(explicit_pool, test_fib, &fib);
    CHECK_EQ_I64(fib.result, 6765);
    pool_parallel_for(explicit_pool, 0, 100000, 0, sum_body, &sum);
    CHECK_EQ_I64(sum, (size_t)100000 * 99999 / 2);
    CHECK_EQ_I64(pool_destroy(explicit_pool), ECHILD);
    pool_stats_get(explicit_pool, &st);
    CHECK(st.threads_started >= 1);
    if (!UNDER_TSAN) {
        int i;
        /* The default pool is the child's own, new one. */
        fib.n = 20, fib.result = 0;
        test_fib_pool = NULL;
        pool_call(NULL, test_fib, &fib);
        CHECK_EQ_I64(fib.result, 6765);
        pool_stats_get(NULL, &st);
        CHECK_EQ_I64(st.slot_calls, 1); /* the call ran here, in an external slot */
        CHECK(st.threads_started >= 1);
        /* Its workers fall asleep and are woken again, on the same wait
           words (or, with POOL_NO_FUTEX, buckets) the parent's use. */
        for (i = 0; i < 40; i++) {
            fib.n = 12, fib.result = 0;
            pool_call(NULL, test_fib, &fib);
            CHECK_EQ_I64(fib.result, 144);
            if (i % 8 == 0) test_sleep_us(3000);
        }
    }
    return (int)test_failures();
}

/* A task that forks: the child is no worker and can use the default pool. */
static atomic_int forked_from_task_status = -2;

static void fork_in_task(void *arg) {
    pid_t pid;
    (void)arg;
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        test_fib_arg fib = {15, 0};
        int bad = pool_worker_index() != -1;
        if (!UNDER_TSAN) {
            test_fib_pool = NULL;
            pool_call(NULL, test_fib, &fib);
            bad |= fib.result != 610;
        }
        _exit(bad);
    }
    atomic_store(&forked_from_task_status, pid > 0 ? wait_child(pid, 30) : -1);
}

static atomic_int stop_stress;

/* Keeps p busy with calls and scopes from outside. test_fib_pool is NULL
   here, so the joins inside run on the default pool. */
static void *stress_main(void *arg) {
    pool *p = (pool *)arg;
    pool_task tasks[8];
    int i;
    while (!atomic_load(&stop_stress)) {
        test_fib_arg fib = {12, 0};
        pool_scope s;
        pool_call(p, test_fib, &fib);
        pool_scope_init(&s, p);
        for (i = 0; i < 8; i++) {
            pool_task t = POOL_TASK_INIT(noop_task);
            tasks[i] = t;
            pool_scope_spawn(&s, &tasks[i]);
        }
        pool_scope_wait(&s);
    }
    return NULL;
}

int main(void) {
    pool_blocking_job pending = POOL_BLOCKING_JOB_INIT(block_on_pipe);
    pool_graph_node gate = POOL_GRAPH_NODE_INIT(gate_on_pipe);
    pthread_t graph_waiter;
    int graph_waited = -1;
    test_fib_arg fib = {18, 0};
    pthread_t stress[2];
    pid_t pid;
    int i, rc, in_slot;
    test_watchdog(240, "test_fork");
    if (strstr(test_runner(), "qemu")) {
        /* qemu-user aborts in the child of a threaded process's fork. */
        printf("test_fork: skipped under %s, which cannot fork threads\n", test_runner());
        return 0;
    }
    CHECK(pipe(pipe_fd) == 0);
    explicit_pool = test_pool(4);

    /* Both pools have running threads, and a blocking job waits. */
    test_fib_pool = explicit_pool;
    pool_call(explicit_pool, test_fib, &fib);
    CHECK_EQ_I64(fib.result, 2584);
    test_fib_pool = NULL;
    fib.result = 0;
    pool_call(NULL, test_fib, &fib);
    CHECK_EQ_I64(fib.result, 2584);
    CHECK_EQ_I64(pool_submit_blocking_job(explicit_pool, &pending), 0);
    CHECK(pipe(graph_pipe) == 0);
    pool_graph_init(&held_graph, explicit_pool);
    CHECK_EQ_I64(pool_graph_add(&held_graph, &gate), 0);
    CHECK_EQ_I64(pool_graph_run(&held_graph), 0);
    CHECK(pthread_create(&graph_waiter, NULL, wait_for_held_graph, &graph_waited) == 0);
    /* White-box: the waiter claimed the run's wait. */
    while ((__atomic_load_n(&held_graph.pool__run, __ATOMIC_ACQUIRE) & POOL__GRAPH_STATE) !=
           POOL__GRAPH_CLAIMED)
        test_sleep_us(1000);
    /* Every worker asleep in the kernel at the fork (white-box), but the
       one that runs the graph's node, unless the claimant runs it in its
       external slot. */
    while (atomic_load(&gate_index) == -2) test_sleep_us(1000);
    in_slot = atomic_load(&gate_index) >= (int)explicit_pool->max_workers; /* slots come after */
    CHECK(test_wait_awake(explicit_pool, 1, !in_slot, 10));
    CHECK(test_wait_awake(POOL__LOAD(&pool__default_pool, POOL__ACQUIRE), 1, 0, 10));

    fflush(NULL);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(child_checks(&pending) ? 1 : 0);
    rc = wait_child(pid, 60);
    CHECK_MSG(rc == 0, "child checks: exit status %d", rc);

    /* The parent's job is still pending, and completes; so does the run. */
    CHECK(write(pipe_fd[1], "x", 1) == 1);
    CHECK_EQ_I64(pool_wait_blocking_job(&pending), 0);
    CHECK(write(graph_pipe[1], "x", 1) == 1);
    pthread_join(graph_waiter, NULL);
    CHECK_EQ_I64(graph_waited, 0);

    /* A fork from inside a task. */
    pool_call(explicit_pool, fork_in_task, NULL);
    CHECK_EQ_I64(atomic_load(&forked_from_task_status), 0);

    /* Forks while other threads keep both pools busy. Not under
       AddressSanitizer: its allocator's lock, taken by a busy thread at
       the fork, can stay locked in the child (the child then hangs in
       ASan's malloc, not in pool.h). */
    if (UNDER_ASAN) {
        printf("test_fork: forks under load skipped under AddressSanitizer\n");
        CHECK_EQ_I64(pool_destroy(explicit_pool), 0);
        return test_finish("test_fork");
    }
    for (i = 0; i < 2; i++)
        CHECK(pthread_create(&stress[i], NULL, stress_main, i ? explicit_pool : NULL) == 0);
    for (i = 0; i < 40; i++) {
        fflush(NULL);
        pid = fork();
        if (pid == 0) {
            test_fib_arg f = {10, 0};
            if (!UNDER_TSAN) {
                test_fib_pool = NULL;
                pool_call(NULL, test_fib, &f);
                _exit(f.result == 55 ? 0 : 1);
            }
            _exit(0);
        }
        rc = pid > 0 ? wait_child(pid, 30) : -1;
        CHECK_MSG(rc == 0, "fork %d: child exit status %d", i, rc);
        test_watchdog(240, "test_fork");
    }
    atomic_store(&stop_stress, 1);
    for (i = 0; i < 2; i++) pthread_join(stress[i], NULL);

    CHECK_EQ_I64(pool_destroy(explicit_pool), 0);
    return test_finish("test_fork");
}
#endif
