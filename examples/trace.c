/* examples/trace.c -- record what a pool does, and look at it.
 *
 * Build and run from the repository root:
 *     cc -O2 -pthread examples/trace.c && ./a.out            writes trace.json
 *     ./a.out build/trace.json                               or anywhere else
 * Open the file in https://ui.perfetto.dev (or chrome://tracing), or draw it:
 *     cc -O2 -o trace2svg examples/tools/trace2svg.c && ./trace2svg trace.json trace.svg
 * (`make trace-svg` does all of this into build/.)
 *
 * With POOL_TRACE defined where the implementation is compiled, every thread that works in a pool
 * records timestamped events in a ring of its own: each job it runs (begin and end), each steal,
 * each time it sleeps in the kernel and wakes, each wake-up it sends, each batch of tasks posted
 * from outside the pool, each blocking task. Recording costs a clock read and a few stores per
 * event; without POOL_TRACE there is no code at all, and pool_trace_write returns ENOTSUP.
 * pool_trace_write(p, path) writes the last POOL_TRACE_EVENTS events of every thread (65536
 * unless defined otherwise) as Chrome trace events, one lane per thread: workers "pool-0",
 * "pool-1", ..., blocking threads "pool-blk-0", ..., and the threads outside the pool that posted
 * work, "outside-0", ...
 *
 * The program runs a little of everything, with pauses in between long enough for the workers
 * to fall asleep, so that the trace shows how a pool wakes up, spreads work and goes back to
 * sleep:
 *   1. fork-join: fib through pool_join, called from main() (outside the pool);
 *   2. a scope of tasks that spawn tasks, waited for from main();
 *   3. three bursts of 64 detached tasks submitted from main(), 5 ms apart;
 *   4. two blocking jobs (sleeping 3 ms each, standing in for I/O) while a worker runs a
 *      parallel loop, then waits for the jobs.
 */
#define POOL_TRACE          /* record events: before the implementation is compiled */
#define POOL_IMPLEMENTATION /* in exactly one .c file of a program */
#include "../pool.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* About `us` microseconds of computation (no sleeping: a worker is a CPU). */
static unsigned long spin_us(long us) {
    struct timespec t0, t1;
    unsigned long x = 1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int i = 0; i < 200; i++) x = x * 6364136223846793005ul + 1442695040888963407ul;
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while ((t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000 < us);
    return x;
}

/* ---- 1. fork-join ---- */

struct fib {
    pool *pool;
    int n;
    long result;
};

static long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

static void fib(void *arg) {
    struct fib *f = arg;
    if (f->n < 20) { /* below this, a join costs more than it saves */
        f->result = fib_serial(f->n);
        return;
    }
    struct fib a = {f->pool, f->n - 1, 0}, b = {f->pool, f->n - 2, 0};
    pool_join(f->pool, fib, &a, fib, &b);
    f->result = a.result + b.result;
}

/* ---- 2. a scope: each task does some work and spawns up to two more ---- */

#define SCOPE_TASKS 200

struct node {
    pool_task task;
    struct tree *tree;
    int depth;
};

struct tree {
    pool_scope scope;
    struct node nodes[SCOPE_TASKS];
    atomic_int used;
    atomic_ulong sink;
};

static void node_run(pool_task *t) {
    struct node *n = (struct node *)((char *)t - offsetof(struct node, task));
    struct tree *tr = n->tree;
    atomic_fetch_add(&tr->sink, spin_us(20 + 10 * n->depth));
    for (int i = 0; i < 2 && n->depth < 7; i++) {
        int k = atomic_fetch_add(&tr->used, 1);
        if (k >= SCOPE_TASKS) return;
        tr->nodes[k] = (struct node){POOL_TASK_INIT(node_run), tr, n->depth + 1};
        if (pool_scope_spawn(&tr->scope, &tr->nodes[k].task) != 0)
            node_run(&tr->nodes[k].task); /* not taken: run it here */
    }
}

/* ---- 3. detached tasks ---- */

#define BURST 64

static atomic_int bursts_done;

static void burst_run(pool_task *t) {
    (void)t;
    spin_us(30);
    atomic_fetch_add(&bursts_done, 1);
}

/* ---- 4. blocking jobs next to a parallel loop ---- */

static void fetch(pool_blocking_job *job) {
    (void)job;
    sleep_us(3000); /* the "I/O" */
}

static void sum_range(void *arg, size_t lo, size_t hi) {
    unsigned long s = 0;
    for (size_t i = lo; i < hi; i++) s += i * i;
    atomic_fetch_add((atomic_ulong *)arg, s);
}

struct io_and_compute {
    pool *pool;
    pool_blocking_job jobs[2];
    atomic_ulong sum;
    int failed;
};

static void io_and_compute(void *arg) {
    struct io_and_compute *w = arg;
    for (int i = 0; i < 2; i++) {
        w->jobs[i] = (pool_blocking_job)POOL_BLOCKING_JOB_INIT(fetch);
        if (pool_submit_blocking_job(w->pool, &w->jobs[i]) != 0) {
            fetch(&w->jobs[i]);
            w->jobs[i].run = NULL; /* nothing to wait for */
        }
    }
    pool_parallel_for(w->pool, 0, 20000000, 0, sum_range, &w->sum);
    for (int i = 0; i < 2; i++) /* a worker that waits keeps running other work */
        if (w->jobs[i].run && pool_wait_blocking_job(&w->jobs[i]) != 0) w->failed = 1;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "trace.json";
    static struct tree tree;
    static pool_task bursts[3][BURST];
    struct io_and_compute io = {0};
    pool_config cfg = {0};
    pool *p;
    int rc, bad = 0;

    cfg.name = "pool"; /* lanes "pool-0", "pool-1", ... and "pool-blk-0", ... */
    cfg.max_blocking_threads = 2;
    if ((rc = pool_create(&p, &cfg)) != 0) {
        fprintf(stderr, "pool_create: %s\n", strerror(rc));
        return 1;
    }

    /* 1. fork-join from outside: main() posts one job and waits; the workers split it. */
    struct fib f = {p, 30, 0};
    pool_call(p, fib, &f);
    bad += f.result != 832040;
    sleep_us(5000); /* long enough for every worker to go to sleep */

    /* 2. a scope from outside: 1 task to begin with, 200 in the end. */
    pool_scope_init(&tree.scope, p);
    tree.nodes[0] = (struct node){POOL_TASK_INIT(node_run), &tree, 0};
    atomic_store(&tree.used, 1);
    if (pool_scope_spawn(&tree.scope, &tree.nodes[0].task) != 0) node_run(&tree.nodes[0].task);
    pool_scope_wait(&tree.scope);
    sleep_us(5000);

    /* 3. bursts of detached tasks: nobody waits for them, so main() counts them done. */
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < BURST; i++) {
            bursts[k][i] = (pool_task)POOL_TASK_INIT(burst_run);
            if (pool_submit(p, &bursts[k][i]) != 0) burst_run(&bursts[k][i]);
        }
        while (atomic_load(&bursts_done) < (k + 1) * BURST) sleep_us(100);
        sleep_us(5000);
    }

    /* 4. blocking jobs and a parallel loop, from a worker. */
    io.pool = p;
    pool_call(p, io_and_compute, &io);
    bad += io.failed;
    sleep_us(2000);

    rc = pool_trace_write(p, path);
    if (rc == ENOTSUP) fprintf(stderr, "pool_trace_write: built without POOL_TRACE\n");
    else if (rc != 0) fprintf(stderr, "pool_trace_write(%s): %s\n", path, strerror(rc));
    else printf("wrote %s: open it in https://ui.perfetto.dev or chrome://tracing\n", path);
    pool_stats_print(p, stdout);
    pool_destroy(p);
    return bad || rc != 0;
}
