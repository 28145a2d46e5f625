/* bench/spread.c -- where woken workers run (see "Spreading woken workers" in pool.h).
 *
 * RUNS rounds of {sleep 20 ms, so that both workers fall asleep; fib(30) with a join at every
 * call on a pool of 2 workers, entered with pool_call_on_worker from main}. Each run records the
 * CPU (sched_getcpu) that each worker was on whenever it began a fib(24), and the process's CPU
 * time. A run whose two workers were only ever seen on one and the same CPU counts as "stacked":
 * the kernel ran the second worker on the first one's CPU while the other CPU idled. The natural
 * serial fib(30) runs in the same rounds as the baseline.
 *
 *     usage: spread [-r RUNS]     default: 16 runs; Linux only (elsewhere it says so and exits 0)
 */
#if !defined(__linux__)
#include <stdio.h>
int main(void) {
    printf("spread: skipped: Linux only (sched_getcpu)\n");
    return 0;
}
#else
#define _GNU_SOURCE /* sched_getcpu */
#include <sched.h>
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#include <stdatomic.h>
#include <time.h>

#define MAX_RUNS 256
#define WATCHED_N 24 /* the fib calls that note their CPU */
#define WORKERS 2

static pool *g_pool;
static volatile int g_natural_n;          /* volatile: the serial fib is computed in every round */
static atomic_ulong g_cpus_seen[WORKERS]; /* per worker: a bit per CPU 0-63 it was seen on */

struct fib_arg {
    int n;
    long result;
};

static long fib_natural(int n) { return n < 2 ? n : fib_natural(n - 1) + fib_natural(n - 2); }

static void fib(void *varg) {
    struct fib_arg *f = varg, a, b;
    if (f->n < 2) {
        f->result = f->n;
        return;
    }
    if (f->n == WATCHED_N) {
        int w = pool_worker_index(), cpu = sched_getcpu();
        if (w >= 0 && w < WORKERS && cpu >= 0 && cpu < 64)
            atomic_fetch_or_explicit(&g_cpus_seen[w], 1ul << cpu, memory_order_relaxed);
    }
    a.n = f->n - 1;
    b.n = f->n - 2;
    pool_join(g_pool, fib, &a, fib, &b);
    f->result = a.result + b.result;
}

static uint64_t process_cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv) {
    uint64_t wall[MAX_RUNS], cpu[MAX_RUNS], natural[MAX_RUNS];
    int runs = 16, n = bench_quick() ? 20 : 30, r, stacked = 0, one_worker = 0;
    long expected;
    if (argc == 3 && strcmp(argv[1], "-r") == 0) runs = atoi(argv[2]);
    else if (argc != 1) {
        fprintf(stderr, "usage: spread [-r RUNS]\n");
        return 2;
    }
    if (runs < 1 || runs > MAX_RUNS) runs = runs < 1 ? 1 : MAX_RUNS;
    g_natural_n = n;
    expected = fib_natural(n);
    g_pool = bench_pool_create("spread", WORKERS);
    {
        struct fib_arg warm = {n, 0};
        pool_call_on_worker(g_pool, fib, &warm); /* starts the threads */
    }
    for (r = 0; r < runs; r++) {
        struct fib_arg f = {n, 0};
        struct timespec idle = {0, 20000000};
        uint64_t t0, c0, both;
        int w;
        t0 = bench_now_ns();
        if (fib_natural(g_natural_n) != expected) return 1;
        natural[r] = bench_now_ns() - t0;
        nanosleep(&idle, NULL);
        for (w = 0; w < WORKERS; w++) atomic_store(&g_cpus_seen[w], 0);
        c0 = process_cpu_ns();
        t0 = bench_now_ns();
        pool_call_on_worker(g_pool, fib, &f);
        wall[r] = bench_now_ns() - t0;
        cpu[r] = process_cpu_ns() - c0;
        if (f.result != expected) {
            fprintf(stderr, "spread: fib(%d) = %ld, want %ld\n", n, f.result, expected);
            return 1;
        }
        both = atomic_load(&g_cpus_seen[0]) | atomic_load(&g_cpus_seen[1]);
        if (!atomic_load(&g_cpus_seen[0]) || !atomic_load(&g_cpus_seen[1])) one_worker++;
        else if (!(both & (both - 1))) stacked++;
    }
    printf("fib(%d) on %d workers after 20 ms idle, %d runs (pool_call_on_worker from main)\n", n,
           WORKERS, runs);
    printf("per run, wall ms / process CPU ms:");
    for (r = 0; r < runs; r++) printf(" %.2f/%.2f", bench_ms(wall[r]), bench_ms(cpu[r]));
    printf("\n");
    bench_report_ms("fib, 2 workers", wall, runs, bench_median_u64(natural, (size_t)runs),
                    "natural serial");
    bench_report_ms("natural serial fib", natural, runs, 0, "");
    printf("runs whose two workers were only seen on one CPU: %d of %d (one worker ran every "
           "fib(%d): %d)\n",
           stacked, runs, WATCHED_N, one_worker);
    bench_pool_destroy("spread", g_pool);
    return 0;
}
#endif
