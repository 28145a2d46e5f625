/* bench/cancel.c -- how soon a cancelled scope's wait returns (pool_scope_cancel).
 *
 *     usage: cancel [THREADS]      default: 2 threads; BENCH_QUICK=1: 10,000 tasks, 3 runs
 *
 * The workload, exactly:
 *
 *   N = 100,000 tasks of 10 us each (a spin on the clock), preallocated, spawned into one scope
 *   (not timed), from one of two places:
 *     - outside: the main thread, which then waits on the scope in an external slot;
 *     - worker:  a task on a worker (pool_call_on_worker), which then waits on the scope.
 *   A second thread sleeps 2 ms (the pool is busy with the tasks by then), calls
 *   pool_scope_cancel, and notes the time. Timed: from the start of that call until the wait
 *   returns to its caller. The skipped tasks go through an on_cancel that counts them.
 *   Check, every run: the wait says ECANCELED, and every task ran or was skipped, exactly once
 *   in all (ran + skipped == N, each task's own count 1).
 *
 * Reported: the median and the worst of RUNS runs, per variant, with the tasks skipped.
 * Target (issue 16, 2 threads): the wait returns within 1 ms of the cancel.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#include <pthread.h>
#include <stddef.h>

#define FULL_TASKS 100000u
#define QUICK_TASKS 10000u
#define TASK_NS 10000u
#define CANCEL_AFTER_NS 2000000u
#define RUNS 11
#define QUICK_RUNS 3
#define TARGET_NS 1000000u

enum variant { OUTSIDE, WORKER, NUM_VARIANTS };
static const char *const variant_names[NUM_VARIANTS] = {"wait from outside", "wait on a worker"};

struct spin_task {
    pool_task task;
    unsigned ran, skipped; /* each written by the one thread that took the task */
};

static struct spin_task *tasks;
static size_t num_tasks;
static pool_scope scope;
static uint64_t cancel_start_ns;
static int wait_status;

static void spin_run(pool_task *t) {
    uint64_t end = bench_now_ns() + TASK_NS;
    ((struct spin_task *)(void *)t)->ran++;
    while (bench_now_ns() < end) continue;
}

/* The on_cancel: as little as a user's would do, so that the figure is the pool's. */
static void spin_skip(pool_task *t) { ((struct spin_task *)(void *)t)->skipped++; }

static void *canceller(void *arg) {
    (void)arg;
    bench_sleep_ns(CANCEL_AFTER_NS);
    cancel_start_ns = bench_now_ns();
    pool_scope_cancel(&scope);
    return NULL;
}

/* Spawns every task into the scope and waits; the canceller runs meanwhile. */
static void spawn_and_wait(void *arg) {
    pool *p = (pool *)arg;
    size_t i;
    pool_scope_init(&scope, p);
    pool_scope_on_cancel(&scope, spin_skip);
    for (i = 0; i < num_tasks; i++) {
        int err = pool_scope_spawn(&scope, &tasks[i].task);
        if (err == ECANCELED) spin_skip(&tasks[i].task); /* the cancel came first */
        else if (err) {
            fprintf(stderr, "cancel: FAILED: spawn refused: %s\n", strerror(err));
            exit(1);
        }
    }
    wait_status = pool_scope_wait_status(&scope);
}

static uint64_t one_run(pool *p, enum variant v, size_t *skipped_out) {
    pthread_t th;
    uint64_t end;
    size_t i, ran = 0, skipped = 0;
    for (i = 0; i < num_tasks; i++) {
        tasks[i].task = (pool_task)POOL_TASK_INIT(spin_run);
        tasks[i].ran = tasks[i].skipped = 0;
    }
    if (pthread_create(&th, NULL, canceller, NULL) != 0) {
        fprintf(stderr, "cancel: cannot start the cancelling thread\n");
        exit(1);
    }
    if (v == OUTSIDE) spawn_and_wait(p);
    else pool_call_on_worker(p, spawn_and_wait, p);
    end = bench_now_ns();
    pthread_join(th, NULL);
    for (i = 0; i < num_tasks; i++) {
        if (tasks[i].ran + tasks[i].skipped != 1) {
            fprintf(stderr, "cancel: FAILED: task %zu ran %u and was skipped %u times\n", i,
                    tasks[i].ran, tasks[i].skipped);
            exit(1);
        }
        ran += tasks[i].ran;
        skipped += tasks[i].skipped;
    }
    if (wait_status != ECANCELED || ran + skipped != num_tasks) {
        fprintf(stderr, "cancel: FAILED: status %d, %zu ran + %zu skipped != %zu\n", wait_status,
                ran, skipped, num_tasks);
        exit(1);
    }
    *skipped_out = skipped;
    return end > cancel_start_ns ? end - cancel_start_ns : 0;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? bench_parse_threads(argv[1]) : 2;
    int runs = bench_quick() ? QUICK_RUNS : RUNS, r, v;
    uint64_t latency[NUM_VARIANTS][RUNS];
    size_t skips[NUM_VARIANTS][RUNS], skipped_now;
    char cpu[128];
    pool *p = bench_pool_create("cancel", threads);
    num_tasks = bench_quick() ? QUICK_TASKS : FULL_TASKS;
    tasks = (struct spin_task *)calloc(num_tasks, sizeof *tasks);
    if (!tasks) {
        fprintf(stderr, "cancel: out of memory for %zu tasks\n", num_tasks);
        return 1;
    }
    (void)one_run(p, OUTSIDE, &skipped_now); /* warm-up: starts the threads */
    for (r = 0; r < runs; r++)
        for (v = 0; v < NUM_VARIANTS; v++)
            latency[v][r] = one_run(p, (enum variant)v, &skips[v][r]);
    bench_cpu_model(cpu, sizeof cpu);
    printf("cancel: %zu queued tasks of %u us, cancelled %u ms in, pool of %d thread%s, %d runs; "
           "%s\n",
           num_tasks, TASK_NS / 1000, CANCEL_AFTER_NS / 1000000, threads, threads == 1 ? "" : "s",
           runs, cpu);
    for (v = 0; v < NUM_VARIANTS; v++) {
        uint64_t median = bench_median_u64(latency[v], (size_t)runs); /* sorts */
        printf("%-28s cancel to return: median %8.1f us   worst %8.1f us   (%zu skipped in the "
               "last run)\n",
               variant_names[v], bench_us(median), bench_us(latency[v][runs - 1]),
               skips[v][runs - 1]);
        bench_report_target(variant_names[v], median, TARGET_NS, threads, 2);
    }
    free(tasks);
    bench_pool_destroy("cancel", p);
    return 0;
}
