/* bench/submit.c -- detached tasks from outside the pool: pool_submit and pool_submit_batch.
 *
 *     usage: submit [THREADS]      default: 2 threads; BENCH_QUICK=1: 10,000 tasks
 *
 * The workload, exactly (to be re-implemented identically in other runtimes):
 *
 *   N = 1,000,000 tasks, preallocated in one array (not timed). Task i adds 1 to its own run
 *   count runs[i], then decrements a shared atomic count of unfinished tasks (initially N); the
 *   task that brings it to zero opens a latch (a mutex + condition variable) that the main
 *   thread waits on. Timed: from the first submission until the main thread has seen the latch
 *   open. Three variants:
 *     - pool_submit: the main thread, which is not a worker, submits the tasks one by one;
 *     - pool_submit_batch: the same in batches of 1024 (the last one shorter);
 *     - direct calls (the baseline): the main thread calls the N task functions itself.
 *   Check, every run: runs[i] == 1 for every i -- every task ran exactly once.
 *
 * Timing as in bench/fib.c: one warm-up round, then RUNS rounds of the three variants, every
 * timed run after a 20 ms pause (so the pool is asleep, not spinning against the baseline) and
 * one untimed run of the same variant (so the timed run finds the workers awake).
 *
 * Target (2 cores): 1M tasks, 2 threads <= 40 ms, with either pool_submit or pool_submit_batch.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#include <pthread.h>
#include <stddef.h>

#define FULL_TASKS 1000000u
#define QUICK_TASKS 10000u
#define BATCH 1024u
#define RUNS 9
#define QUICK_RUNS 3
#define SETTLE_NS 20000000u
#define TARGET_NS 40000000u

enum variant { DIRECT, SUBMIT, SUBMIT_BATCH, NUM_VARIANTS };
static const char *const variant_names[NUM_VARIANTS] = {"direct calls", "pool_submit",
                                                        "pool_submit_batch(1024)"};

struct counted_task {
    pool_task task;
    uint32_t runs; /* how many times the task ran: must be 1 after each round */
};

/* A one-shot latch the main thread blocks on. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int open;
} g_done = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static size_t g_unfinished; /* atomic: tasks of this round not yet run */

static void counted_task_run(pool_task *t) {
    struct counted_task *c =
        (struct counted_task *)(void *)((char *)t - offsetof(struct counted_task, task));
    c->runs++;
    /* acq_rel: the last task sees every other task's runs++, and the main thread sees them all
     * through the mutex. */
    if (__atomic_sub_fetch(&g_unfinished, 1, __ATOMIC_ACQ_REL) == 0) {
        pthread_mutex_lock(&g_done.lock);
        g_done.open = 1;
        pthread_cond_signal(&g_done.cond);
        pthread_mutex_unlock(&g_done.lock);
    }
}

static void fail_submit(int err) {
    fprintf(stderr, "submit: FAILED: submission refused: %s\n", strerror(err));
    exit(1);
}

/* One round of variant v over the n tasks; returns its wall time. Exits if a task did not run
 * exactly once. */
static uint64_t run_once(pool *p, enum variant v, struct counted_task *tasks, pool_task **ptrs,
                         size_t n) {
    uint64_t t0, t1;
    size_t i;
    int err;

    for (i = 0; i < n; i++) tasks[i].runs = 0;
    g_unfinished = n;
    g_done.open = 0;

    t0 = bench_now_ns();
    switch (v) {
    case DIRECT:
        for (i = 0; i < n; i++) counted_task_run(&tasks[i].task);
        break;
    case SUBMIT:
        for (i = 0; i < n; i++)
            if ((err = pool_submit(p, &tasks[i].task)) != 0) fail_submit(err);
        break;
    case SUBMIT_BATCH:
        for (i = 0; i < n; i += BATCH)
            if ((err = pool_submit_batch(p, ptrs + i, n - i < BATCH ? n - i : BATCH)) != 0)
                fail_submit(err);
        break;
    default:
        break;
    }
    pthread_mutex_lock(&g_done.lock);
    while (!g_done.open) pthread_cond_wait(&g_done.cond, &g_done.lock);
    pthread_mutex_unlock(&g_done.lock);
    t1 = bench_now_ns();

    for (i = 0; i < n; i++) {
        if (tasks[i].runs != 1) {
            fprintf(stderr, "submit: FAILED: %s: task %zu ran %" PRIu32 " times\n",
                    variant_names[v], i, tasks[i].runs);
            exit(1);
        }
    }
    return t1 - t0;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? bench_parse_threads(argv[1]) : 2;
    int runs = bench_quick() ? QUICK_RUNS : RUNS;
    size_t n = bench_quick() ? QUICK_TASKS : FULL_TASKS, i;
    struct counted_task *tasks = malloc(n * sizeof *tasks);
    pool_task **ptrs = malloc(n * sizeof *ptrs);
    static uint64_t wall[NUM_VARIANTS][RUNS];
    uint64_t median[NUM_VARIANTS];
    pool_stats totals[NUM_VARIANTS], s0, s1; /* counters summed over the timed runs */
    pool *p = bench_pool_create("submit", threads);
    int r, v;

    if (!tasks || !ptrs) {
        fprintf(stderr, "submit: out of memory for %zu tasks\n", n);
        return 1;
    }
    memset(totals, 0, sizeof totals);
    for (i = 0; i < n; i++) {
        pool_task init = POOL_TASK_INIT(counted_task_run);
        tasks[i].task = init;
        ptrs[i] = &tasks[i].task;
    }

    for (r = -1; r < runs; r++) { /* round -1: warm-up (it also starts the pool's threads) */
        for (v = 0; v < NUM_VARIANTS; v++) {
            uint64_t w;
            bench_sleep_ns(SETTLE_NS);
            run_once(p, (enum variant)v, tasks, ptrs, n);
            pool_stats_get(p, &s0);
            w = run_once(p, (enum variant)v, tasks, ptrs, n);
            pool_stats_get(p, &s1);
            if (r < 0) continue;
            wall[v][r] = w;
            totals[v].jobs_stolen += s1.jobs_stolen - s0.jobs_stolen;
            totals[v].sleeps += s1.sleeps - s0.sleeps;
            totals[v].wakeups += s1.wakeups - s0.wakeups;
        }
    }

    printf("%zu tiny detached tasks from the main thread, pool of %d thread%s, %d runs each\n", n,
           threads, threads == 1 ? "" : "s", runs);
    for (v = 0; v < NUM_VARIANTS; v++) {
        median[v] = bench_report_ms(variant_names[v], wall[v], runs,
                                    v == DIRECT ? 0 : median[DIRECT], "direct");
        if (v != DIRECT)
            printf("%-28s %.1f ns per task; per run: %.1f wakeups, %.1f sleeps, %.0f stolen\n", "",
                   (double)median[v] / (double)n, (double)totals[v].wakeups / runs,
                   (double)totals[v].sleeps / runs, (double)totals[v].jobs_stolen / runs);
    }
    bench_report_target(variant_names[SUBMIT], median[SUBMIT], TARGET_NS, threads, 2);
    bench_report_target(variant_names[SUBMIT_BATCH], median[SUBMIT_BATCH], TARGET_NS, threads, 2);
    bench_pool_destroy("submit", p);
    free(tasks);
    free(ptrs);
    return 0;
}
