/* bench/wait_busy.c -- does a pool keep its CPUs busy while one of its workers waits?
 *
 * Pool A has 2 threads, pool B 1. A task on A queues TASKS tasks of 1 ms of computation on A (its
 * own deque), then waits up to 300 ms in pool_call into B (B's task sleeps until A's tasks are done
 * or 300 ms have passed). How many CPUs the process keeps busy from the queueing until the tasks
 * are done, process CPU time over wall time, is the figure: 2.0 is both of A's CPUs at work. Three
 * variants of the waiting task:
 *   call      pool_call into B (a cross-pool wait)
 *   blocking  pool_wait_blocking_job on a job of A's blocking pool that sleeps the same way
 *   spin      no wait: the task spins for as long as the call would have taken (the reference:
 *             the waiting worker's CPU used, its queued tasks taken by the other worker)
 * Medians of RUNS runs each, interleaved. A worker that runs the queued tasks itself while it waits
 * would also keep 2 CPUs busy, but on top of its wait (see README, "Waiting"): the figure says
 * nothing about that, test_waiting does.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#define TASKS_FULL 400
#define TASKS_QUICK 40
#define RUNS_FULL 9
#define RUNS_QUICK 3

enum variant { V_CALL, V_BLOCKING, V_SPIN, VARIANTS };
static const char *const variant_names[VARIANTS] = {"call", "blocking", "spin"};

static pool *pool_a, *pool_b;
static int tasks;
static volatile int done_tasks; /* atomic through __atomic builtins */
static uint64_t deadline_ns;

static void spin_ns(uint64_t ns) {
    uint64_t until = bench_now_ns() + ns;
    while (bench_now_ns() < until) continue;
}

static void one_ms(pool_task *t) {
    (void)t;
    spin_ns(1000000);
    __atomic_fetch_add(&done_tasks, 1, __ATOMIC_RELEASE);
}

/* Until A's tasks are done or the deadline passed, sleeping. */
static void wait_for_tasks(void) {
    while (__atomic_load_n(&done_tasks, __ATOMIC_ACQUIRE) < tasks && bench_now_ns() < deadline_ns)
        bench_sleep_ns(200000);
}

static void b_task(void *arg) {
    (void)arg;
    wait_for_tasks();
}

static void blocking_run(pool_blocking_job *job) {
    (void)job;
    wait_for_tasks();
}

static pool_task *queued;

static void waiting_task(void *arg) {
    enum variant v = *(enum variant *)arg;
    int i;
    for (i = 0; i < tasks; i++) {
        queued[i] = (pool_task)POOL_TASK_INIT(one_ms);
        if (pool_submit(pool_a, &queued[i]) != 0) {
            fprintf(stderr, "wait_busy: pool_submit failed\n");
            exit(1);
        }
    }
    if (v == V_CALL) {
        pool_call(pool_b, b_task, NULL);
    } else if (v == V_BLOCKING) {
        pool_blocking_job job = POOL_BLOCKING_JOB_INIT(blocking_run);
        if (pool_submit_blocking_job(pool_a, &job) == 0) pool_wait_blocking_job(&job);
    } else {
        while (__atomic_load_n(&done_tasks, __ATOMIC_ACQUIRE) < tasks &&
               bench_now_ns() < deadline_ns)
            spin_ns(100000);
    }
}

/* CPUs busy, in thousandths, from the start until every queued task ran. */
static uint64_t one_run(enum variant v) {
    uint64_t cpu0, wall0, wall;
    done_tasks = 0;
    bench_sleep_ns(20000000); /* everybody asleep */
    cpu0 = bench_cpu_ns();
    wall0 = bench_now_ns();
    deadline_ns = wall0 + 300000000;
    pool_call_on_worker(pool_a, waiting_task, &v);
    while (__atomic_load_n(&done_tasks, __ATOMIC_ACQUIRE) < tasks) bench_sleep_ns(100000);
    wall = bench_now_ns() - wall0;
    return (bench_cpu_ns() - cpu0) * 1000 / wall;
}

int main(void) {
    uint64_t busy[VARIANTS][RUNS_FULL];
    int runs = bench_quick() ? RUNS_QUICK : RUNS_FULL, r, v;
    pool_stats s;
    tasks = bench_quick() ? TASKS_QUICK : TASKS_FULL;
    queued = (pool_task *)calloc((size_t)tasks, sizeof *queued);
    pool_a = bench_pool_create("wait_busy", 2);
    pool_b = bench_pool_create("wait_busy", 1);
    if (!queued) return 1;
    printf("a worker of a 2-thread pool queues %d tasks of 1 ms on its pool, then waits (up to 300 "
           "ms)\n"
           "until they are done; CPUs busy = process CPU time / wall time until then; %d runs "
           "each\n\n",
           tasks, runs);
    for (r = 0; r < runs; r++)
        for (v = 0; v < VARIANTS; v++) busy[v][r] = one_run((enum variant)v);
    printf("%-12s %14s %10s %10s\n", "waiting by", "CPUs busy", "min", "max");
    for (v = 0; v < VARIANTS; v++) {
        uint64_t med = bench_median_u64(busy[v], (size_t)runs);
        printf("%-12s %14.2f %10.2f %10.2f\n", variant_names[v], med / 1000.0, busy[v][0] / 1000.0,
               busy[v][runs - 1] / 1000.0);
    }
    pool_stats_get(pool_a, &s);
#if POOL_VERSION_MAJOR > 0 || POOL_VERSION_MINOR >= 3 /* the statistics came with 0.3 */
    printf(
        "\npool A: %llu parked waits, %llu spare threads started, deepest nesting of waits %llu\n",
        (unsigned long long)s.waits_parked, (unsigned long long)s.spares_started,
        (unsigned long long)s.wait_depth_max);
#endif
    bench_pool_destroy("wait_busy", pool_a);
    bench_pool_destroy("wait_busy", pool_b);
    free(queued);
    return 0;
}
