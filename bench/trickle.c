/* bench/trickle.c -- wake-up throttling: work that trickles in should wake one thread, not all.
 *
 *     usage: trickle [THREADS]      default: 16 threads (8x oversubscribed on 2 cores);
 *                                   BENCH_QUICK=1: 100 trickled tasks, bursts of 500
 *
 * The workload, exactly (to be re-implemented identically in other runtimes):
 *
 *   A task with index i computes work = splitmix64 iterated WORK_ROUNDS = 5000 times starting
 *   from i (about 20 us on the 2-core test machine), stores it, counts its own runs, and
 *   decrements a shared atomic count of unfinished tasks; the task that brings it to zero opens a
 *   latch (mutex + condition variable) the main thread waits on. splitmix64 as in bench/utree.c:
 *       z = x + 0x9e3779b97f4a7c15; z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
 *       z = (z ^ (z >> 27)) * 0x94d049bb133111eb; return z ^ (z >> 31)
 *
 *   Warm-up: pool_create starts threads lazily, one per posting that finds no idle thread, and
 *   a detached batch is one posting (plus one when a worker moves it to its deque), so a burst
 *   alone starts only two threads. So the warm-up first forks with pool_join (fib(20), as
 *   bench/idle.c does) until every thread has started (or 5 s have passed: a join starts a
 *   thread only when no thread is idle, which on 2 cores gets rarer as threads are added), then
 *   runs one burst (below), untimed;
 *   then IDLE_NS = 200 ms of nothing, so that every worker is asleep in the kernel.
 *   Trickle: 2000 tasks submitted one at a time with pool_submit from the main thread, which is
 *   not a worker, sleeping 200 us after each submission (the pool goes idle between tasks).
 *   Burst: after IDLE_NS, 10,000 tasks in one pool_submit_batch. BURSTS bursts.
 *   Reported per task, from pool_stats_get deltas: wakeups (a worker woken from the kernel) and
 *   wakeups_wasted (... that went back to sleep without running a task); also the CPU the
 *   process used per task beyond the main thread's own, against the ~20 us the task needs.
 *
 *   Check: every task ran exactly once and stored the right value.
 *
 * No target number. The ideal for the trickle is one wake-up per task and none wasted; the
 * failure it guards against is a pool that wakes all 16 sleepers for every task. Expect two per
 * task, one of them wasted: the worker that wakes for the task wakes one more sleeper to look
 * for work (rayon's rule, pool__leave_idle), and with one task at a time there is none.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#include <pthread.h>
#include <stddef.h>

#define WORK_ROUNDS 5000
#define TRICKLE_TASKS 2000u
#define QUICK_TRICKLE_TASKS 100u
#define TRICKLE_GAP_NS 200000u
#define BURST_TASKS 10000u
#define QUICK_BURST_TASKS 500u
#define BURSTS 5
#define IDLE_NS 200000000u

struct work_task {
    pool_task task;
    uint32_t index;
    uint32_t runs; /* how many times it ran: must be 1 */
    uint64_t work; /* its result */
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int open;
} g_done = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};

static size_t g_unfinished; /* atomic: tasks of this phase not yet run */

static inline uint64_t splitmix64(uint64_t x) {
    uint64_t z = x + UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static BENCH_NOINLINE uint64_t task_work(uint32_t index) {
    uint64_t v = index;
    int r;
    for (r = 0; r < WORK_ROUNDS; r++) v = splitmix64(v);
    return v;
}

static void work_task_run(pool_task *t) {
    struct work_task *w =
        (struct work_task *)(void *)((char *)t - offsetof(struct work_task, task));
    w->work = task_work(w->index);
    w->runs++;
    /* acq_rel: the last task sees every other task's writes; the mutex hands them to main. */
    if (__atomic_sub_fetch(&g_unfinished, 1, __ATOMIC_ACQ_REL) == 0) {
        pthread_mutex_lock(&g_done.lock);
        g_done.open = 1;
        pthread_cond_signal(&g_done.cond);
        pthread_mutex_unlock(&g_done.lock);
    }
}

static void arm(struct work_task *tasks, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        tasks[i].runs = 0;
        tasks[i].work = 0;
    }
    g_unfinished = n;
    g_done.open = 0;
}

static void wait_done(void) {
    pthread_mutex_lock(&g_done.lock);
    while (!g_done.open) pthread_cond_wait(&g_done.cond, &g_done.lock);
    pthread_mutex_unlock(&g_done.lock);
}

/* Exits unless every task ran once and computed the right value (recomputed here). */
static void check(const struct work_task *tasks, size_t n, const char *phase) {
    size_t i;
    for (i = 0; i < n; i++) {
        if (tasks[i].runs != 1 || tasks[i].work != task_work(tasks[i].index)) {
            fprintf(stderr,
                    "trickle: FAILED: %s: task %zu ran %" PRIu32 " times, work %016" PRIx64 "\n",
                    phase, i, tasks[i].runs, tasks[i].work);
            exit(1);
        }
    }
}

static void fail_submit(int err) {
    fprintf(stderr, "trickle: FAILED: submission refused: %s\n", strerror(err));
    exit(1);
}

/* What a phase cost, from counter and clock deltas. */
struct phase_cost {
    pool_stats s0, s1;
    uint64_t wall0, wall1, cpu0, cpu1, main0, main1;
};

static void phase_begin(pool *p, struct phase_cost *c) {
    pool_stats_get(p, &c->s0);
    c->cpu0 = bench_cpu_ns();
    c->main0 = bench_thread_cpu_ns();
    c->wall0 = bench_now_ns();
}

static void phase_end(pool *p, struct phase_cost *c) {
    c->wall1 = bench_now_ns();
    c->main1 = bench_thread_cpu_ns();
    c->cpu1 = bench_cpu_ns();
    pool_stats_get(p, &c->s1);
}

static void phase_report(const struct phase_cost *c, size_t tasks) {
    uint64_t wakeups = c->s1.wakeups - c->s0.wakeups;
    uint64_t wasted = c->s1.wakeups_wasted - c->s0.wakeups_wasted;
    double n = (double)tasks;

    printf("  wakeups %.3f per task (%" PRIu64 " in all), wasted %.3f per task (%" PRIu64 "); "
           "jobs run %" PRIu64 "; worker CPU %.1f us per task\n",
           (double)wakeups / n, wakeups, (double)wasted / n, wasted,
           c->s1.jobs_run - c->s0.jobs_run,
           bench_us((c->cpu1 - c->cpu0) - (c->main1 - c->main0)) / n);
}

/* Forks until every one of p's threads has started (each join may start one), for at most 5 s. */
static void start_all_threads(pool *p) {
    uint64_t deadline = bench_now_ns() + 5000000000u;
    pool_stats s;

    bench_fib_pool_target = p;
    do {
        struct bench_fib root = {20, 0};
        pool_call_on_worker(p, bench_fib_pool, &root);
        if (root.result != 6765) {
            fprintf(stderr, "trickle: FAILED: fib(20) = %" PRIu64 "\n", root.result);
            exit(1);
        }
        pool_stats_get(p, &s);
    } while (s.threads_started < (uint64_t)s.num_threads && bench_now_ns() < deadline);
}

static void burst(pool *p, struct work_task *tasks, pool_task **ptrs, size_t n) {
    int err;
    arm(tasks, n);
    if ((err = pool_submit_batch(p, ptrs, n)) != 0) fail_submit(err);
    wait_done();
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? bench_parse_threads(argv[1]) : 16;
    size_t trickle_n = bench_quick() ? QUICK_TRICKLE_TASKS : TRICKLE_TASKS;
    size_t burst_n = bench_quick() ? QUICK_BURST_TASKS : BURST_TASKS;
    size_t max_n = burst_n > trickle_n ? burst_n : trickle_n, i;
    struct work_task *tasks = malloc(max_n * sizeof *tasks);
    pool_task **ptrs = malloc(max_n * sizeof *ptrs);
    pool *p = bench_pool_create("trickle", threads);
    struct phase_cost cost;
    uint64_t t0, work_ns;
    int b, err;

    if (!tasks || !ptrs) {
        fprintf(stderr, "trickle: out of memory\n");
        return 1;
    }
    for (i = 0; i < max_n; i++) {
        pool_task init = POOL_TASK_INIT(work_task_run);
        tasks[i].task = init;
        tasks[i].index = (uint32_t)i;
        ptrs[i] = &tasks[i].task;
    }
    t0 = bench_thread_cpu_ns();
    for (i = 0; i < 100; i++) bench_do_not_optimize(task_work((uint32_t)i));
    work_ns = (bench_thread_cpu_ns() - t0) / 100;

    start_all_threads(p);
    burst(p, tasks, ptrs, burst_n);
    check(tasks, burst_n, "warm-up burst");

    bench_sleep_ns(IDLE_NS);
    arm(tasks, trickle_n);
    phase_begin(p, &cost);
    for (i = 0; i < trickle_n; i++) {
        if ((err = pool_submit(p, &tasks[i].task)) != 0) fail_submit(err);
        bench_sleep_ns(TRICKLE_GAP_NS);
    }
    wait_done();
    phase_end(p, &cost);
    check(tasks, trickle_n, "trickle");
    printf("pool of %d threads, %" PRIu64 " of them started; a task is %d hash rounds, %.1f us "
           "on the main thread\n",
           threads, cost.s0.threads_started, WORK_ROUNDS, bench_us(work_ns));
    printf("trickle: %zu tasks one at a time, %.0f us sleep between submissions (%.0f us apart "
           "on average)\n",
           trickle_n, bench_us(TRICKLE_GAP_NS),
           bench_us(cost.wall1 - cost.wall0) / (double)trickle_n);
    phase_report(&cost, trickle_n);

    for (b = 0; b < BURSTS; b++) {
        bench_sleep_ns(IDLE_NS);
        phase_begin(p, &cost);
        burst(p, tasks, ptrs, burst_n);
        phase_end(p, &cost);
        check(tasks, burst_n, "burst");
        printf("burst %d: %zu tasks in one pool_submit_batch after %.0f ms idle, done in %.1f ms\n",
               b + 1, burst_n, bench_ms(IDLE_NS), bench_ms(cost.wall1 - cost.wall0));
        phase_report(&cost, burst_n);
    }

    bench_pool_destroy("trickle", p);
    free(tasks);
    free(ptrs);
    return 0;
}
