/* bench/resize.c -- how soon workers above a lowered active count stop starting work
 * (pool_set_active_threads).
 *
 *     usage: resize [THREADS]      default: 8 threads; BENCH_QUICK=1: 3 rounds
 *
 * The workload, exactly:
 *
 *   Load: 4 x THREADS tasks of 50 us each (a spin on the clock), submitted from outside; each
 *   submits itself again when it ends (from its worker: onto that worker's deque), until the
 *   measurement is over. Each task notes, when it starts, the time in its worker's slot.
 *   A round: the active count is set to THREADS, 20 ms pass (every worker busy), then it is
 *   set to 1 at time T. Timed, per round:
 *     - last start: the latest time a task started on a worker other than 0, minus T,
 *       read 20 ms after T (0 if none started after T): how long workers above the count went
 *       on starting new work;
 *     - all stopped: from T until pool_stats says THREADS - 1 workers have stopped.
 *   Check, every run: every load task ran, and no task starts on a worker other than 0 in the
 *   second half of the 20 ms after T.
 *
 * Reported: the median and worst of ROUNDS rounds of each figure.
 * Target (issue 16): within 1 ms (or the end of the task it runs, 50 us here) no worker above
 * a lowered count starts new work.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#define TASK_NS 50000u
#define SETTLE_NS 20000000u
#define ROUNDS 21
#define QUICK_ROUNDS 3
#define MAX_THREADS 256
#define TARGET_NS 1000000u

struct load_task {
    pool_task task;
    uint64_t runs; /* written by the one thread that runs it at a time */
};

static pool *the_pool;
static struct load_task *load;
static int load_count;
static int load_stop; /* set by main (relaxed: a flag, nothing is published with it) */
static uint64_t last_start[MAX_THREADS]; /* per worker: its latest task start (relaxed) */

static void load_run(pool_task *t) {
    uint64_t now = bench_now_ns(), end = now + TASK_NS;
    int w = pool_worker_index();
    if (w >= 0 && w < MAX_THREADS) __atomic_store_n(&last_start[w], now, __ATOMIC_RELAXED);
    ((struct load_task *)(void *)t)->runs++;
    while (bench_now_ns() < end) continue;
    if (!__atomic_load_n(&load_stop, __ATOMIC_RELAXED) && pool_submit(the_pool, t) != 0) {
        fprintf(stderr, "resize: FAILED: a load task could not submit itself again\n");
        exit(1);
    }
}

static uint64_t latest_start_above_0(int threads) {
    uint64_t latest = 0;
    int w;
    for (w = 1; w < threads + 8 && w < MAX_THREADS; w++) { /* spares too */
        uint64_t s = __atomic_load_n(&last_start[w], __ATOMIC_RELAXED);
        if (s > latest) latest = s;
    }
    return latest;
}

static void set_active(int n) {
    int err = pool_set_active_threads(the_pool, n);
    if (err) {
        fprintf(stderr, "resize: FAILED: pool_set_active_threads(%d): %s\n", n, strerror(err));
        exit(1);
    }
}

/* One round; returns the last start after the lowering in *last, the time until every
   worker above 0 stopped in *stopped. */
static void one_round(int threads, uint64_t *last, uint64_t *stopped) {
    uint64_t t0, latest, half;
    pool_stats st;
    set_active(threads);
    bench_sleep_ns(SETTLE_NS);
    t0 = bench_now_ns();
    set_active(1);
    *stopped = 0;
    for (;;) {
        uint64_t now = bench_now_ns();
        pool_stats_get(the_pool, &st);
        if (st.threads_retired >= (uint64_t)(threads - 1)) {
            *stopped = now - t0;
            break;
        }
        if (now - t0 > SETTLE_NS) {
            fprintf(stderr, "resize: FAILED: %llu of %d workers stopped after 20 ms\n",
                    (unsigned long long)st.threads_retired, threads - 1);
            exit(1);
        }
        bench_sleep_ns(20000);
    }
    half = t0 + SETTLE_NS / 2;
    if (bench_now_ns() < half) bench_sleep_ns(half - bench_now_ns());
    latest = latest_start_above_0(threads);
    bench_sleep_ns(SETTLE_NS / 2);
    if (latest_start_above_0(threads) != latest) {
        fprintf(stderr, "resize: FAILED: a worker above the count started a task 10 ms after\n");
        exit(1);
    }
    *last = latest > t0 ? latest - t0 : 0;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? bench_parse_threads(argv[1]) : 8;
    int rounds = bench_quick() ? QUICK_ROUNDS : ROUNDS, r, i;
    uint64_t last[ROUNDS], stopped[ROUNDS], load_runs = 0;
    char cpu[128];
    if (threads < 2 || threads > MAX_THREADS - 8) {
        fprintf(stderr, "resize: needs 2 to %d threads\n", MAX_THREADS - 8);
        return 1;
    }
    the_pool = bench_pool_create("resize", threads);
    load_count = 4 * threads;
    load = (struct load_task *)calloc((size_t)load_count, sizeof *load);
    if (!load) return 1;
    for (i = 0; i < load_count; i++) {
        load[i].task = (pool_task)POOL_TASK_INIT(load_run);
        if (pool_submit(the_pool, &load[i].task) != 0) {
            fprintf(stderr, "resize: FAILED: the load was refused\n");
            return 1;
        }
    }
    for (r = 0; r < rounds; r++) one_round(threads, &last[r], &stopped[r]);
    __atomic_store_n(&load_stop, 1, __ATOMIC_RELAXED);
    set_active(threads);
    bench_pool_destroy("resize", the_pool); /* runs what is queued: the load ends */
    for (i = 0; i < load_count; i++) {
        if (!load[i].runs) {
            fprintf(stderr, "resize: FAILED: load task %d never ran\n", i);
            return 1;
        }
        load_runs += load[i].runs;
    }
    bench_cpu_model(cpu, sizeof cpu);
    printf("resize: %d rounds of lowering %d busy workers to 1 (tasks of %u us, %llu runs); %s\n",
           rounds, threads, TASK_NS / 1000, (unsigned long long)load_runs, cpu);
    {
        uint64_t last_median = bench_median_u64(last, (size_t)rounds); /* sorts */
        uint64_t stopped_median = bench_median_u64(stopped, (size_t)rounds);
        printf("last start above the count after the lowering: median %8.1f us   worst %8.1f us\n",
               bench_us(last_median), bench_us(last[rounds - 1]));
        printf("until every worker above it stopped:          median %8.1f us   worst %8.1f us\n",
               bench_us(stopped_median), bench_us(stopped[rounds - 1]));
        bench_report_target("last start above a lowered count", last[rounds - 1], TARGET_NS,
                            threads, threads);
    }
    free(load);
    return 0;
}
