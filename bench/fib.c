/* bench/fib.c -- the cost of one pool_join.
 *
 * fib(n) by naive recursion, forking at every call with n >= 2 (no serial cutoff), so the run is
 * almost nothing but joins. Two serial baselines run in the same rounds: the natural code a C
 * programmer writes (`long fib(int n)` at -O2, which the ratios "x serial" are against), and the
 * very same recursion as the pool's, through a `void *` argument without the pool ("plain"): the
 * difference to the plain one divided by the number of joins is what one pool_join costs.
 *
 *     usage: fib [-n N] [-r RUNS] [-o OFFSET] [THREADS...]   defaults: -n 30 -r 9, threads 1 2
 *
 * -o fixes the root's stack offset (bytes) for every run instead of spreading the runs over 4 KiB.
 *
 * Every variant is timed RUNS times, interleaved, and the median is reported. Each run starts the
 * pool's recursion at another stack offset (bench_call_shifted in bench.h says why).
 * Each THREADS value gets its own explicit pool (pool_config.num_threads); the recursion is
 * started with pool_call_on_worker so that it runs entirely on the pool's workers (pool_call from
 * main would run the root in an external slot, on main, beside THREADS workers).
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"
#define WL_WORKLOADS_ONLY /* wl_fib_expected, shared with bench/peers */
#include "peers/workloads.h"

#include <errno.h>

#define WARMUP_ROUNDS 1
#define MAX_RUNS 64
#define SETTLE_NS 20000000u /* 20 ms between runs: the previous pool's workers go back to sleep */
#define MAX_POOLS 16

/* noinline keeps gcc from inlining the recursion into itself a few levels deep, which would
 * remove calls from the plain version that the pool version still pays for. `objdump -d` on the
 * binary shows two `call fib_plain` in fib_plain. */
static BENCH_NOINLINE void fib_plain(void *varg) {
    struct bench_fib *f = varg;
    struct bench_fib a, b;

    if (f->n < 2) {
        f->result = f->n;
        return;
    }
    a.n = f->n - 1;
    b.n = f->n - 2;
    fib_plain(&a);
    fib_plain(&b);
    f->result = a.result + b.result;
}

/* The natural serial code: what a C programmer writes, compiled as it is (gcc -O2 turns part of
 * the recursion into a loop; the pool's fork cannot, and that difference is part of the cost). */
static long fib_natural(int n) { return n < 2 ? n : fib_natural(n - 1) + fib_natural(n - 2); }

/* Number of calls with n >= 2 in the recursion tree of fib(n): each does exactly one join. */
static uint64_t fib_joins(unsigned n) {
    uint64_t prev = 0, cur = 0; /* joins(0) = joins(1) = 0 */
    unsigned i;
    for (i = 2; i <= n; i++) {
        uint64_t next = 1 + cur + prev;
        prev = cur;
        cur = next;
    }
    return n < 2 ? 0 : cur;
}

/* The variants, in the order each round runs them. */
enum { NATURAL, PLAIN, FIRST_POOL };

/* Keeps gcc from computing fib_natural(n) at compile time. */
static volatile unsigned natural_n;

/* One fib(n) from the top; returns its wall time and stores its process CPU time in *cpu_ns.
 * p == NULL means a serial variant on the calling thread (`natural` picks which). Exits if the
 * result is wrong. */
/* -o: the one stack offset of every run; -1: spread (bench_stack_offset). */
static long fixed_offset = -1;

static uint64_t run_once(pool *p, int natural, unsigned n, int run, uint64_t *cpu_ns) {
    struct bench_fib root;
    struct bench_shifted_call shifted;
    uint64_t w0, c0, w1, c1;

    root.n = n;
    root.result = 0;
    natural_n = n;
    bench_fib_pool_target = p;
    shifted.fn = bench_fib_pool;
    shifted.arg = &root;
    shifted.offset = fixed_offset >= 0 ? (size_t)fixed_offset : bench_stack_offset(run);
    w0 = bench_now_ns();
    c0 = bench_cpu_ns();
    if (p)
        pool_call_on_worker(p, bench_call_shifted,
                            &shifted); /* the whole recursion runs on p's workers */
    else if (natural) root.result = (uint64_t)fib_natural((int)natural_n);
    else fib_plain(&root);
    c1 = bench_cpu_ns();
    w1 = bench_now_ns();
    bench_do_not_optimize(root.result);
    if (root.result != wl_fib_expected(n)) {
        fprintf(stderr, "fib: FAILED: fib(%u) returned %" PRIu64 ", expected %" PRIu64 " (%s)\n", n,
                root.result, wl_fib_expected(n),
                p         ? "pool"
                : natural ? "natural"
                          : "plain");
        exit(1);
    }
    *cpu_ns = c1 - c0;
    return w1 - w0;
}

static void usage(void) {
    fprintf(stderr,
            "usage: fib [-n N] [-r RUNS] [-o OFFSET] [THREADS...]   (N <= 60, 1 <= RUNS <= %d, "
            "0 <= OFFSET <= 65536, at most %d THREADS)\n",
            MAX_RUNS, MAX_POOLS);
    exit(2);
}

int main(int argc, char **argv) {
    unsigned n = bench_quick() ? 20 : 30;
    int runs = bench_quick() ? 3 : 9;
    int threads[MAX_POOLS];
    pool *pools[MAX_POOLS];
    pool_stats before[MAX_POOLS], after[MAX_POOLS];
    /* [variant][run]; NATURAL, PLAIN, then variant FIRST_POOL + i is pools[i] */
    static uint64_t wall[FIRST_POOL + MAX_POOLS][MAX_RUNS], cpu[FIRST_POOL + MAX_POOLS][MAX_RUNS];
    int num_pools = 0;
    uint64_t joins, plain_wall, natural_wall;
    int i, r;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            n = (unsigned)strtoul(argv[++i], NULL, 10);
            if (n > 60) /* fib(60) would take hours at one join per call */
                usage();
        } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
            if (runs < 1 || runs > MAX_RUNS) usage();
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            fixed_offset = atol(argv[++i]);
            if (fixed_offset < 0 || fixed_offset > 65536) usage();
        } else if (argv[i][0] == '-' || num_pools == MAX_POOLS) {
            usage();
        } else {
            threads[num_pools++] = bench_parse_threads(argv[i]);
        }
    }
    if (num_pools == 0) {
        threads[0] = 1;
        threads[1] = 2;
        num_pools = 2;
    }

    for (i = 0; i < num_pools; i++) {
        pool_config cfg;
        int err;

        memset(&cfg, 0, sizeof cfg);
        cfg.num_threads = threads[i];
        err = pool_create(&pools[i], &cfg);
        if (err) {
            fprintf(stderr, "fib: pool_create(num_threads=%d) failed: %s\n", threads[i],
                    strerror(err));
            return 1;
        }
    }

    /* Rounds are interleaved (natural, plain, pool 1, pool 2, ..., natural, plain, ...) so that
     * anything else the machine does meanwhile -- frequency changes, another process -- hits every
     * variant alike rather than only the one that happened to be running. Before each timed run: a
     * pause, so the workers of the pool that ran last spin down and go to sleep instead of
     * competing for the CPUs, then one untimed run of the same variant, so the timed run finds its
     * own workers awake and its caches warm. This measures a busy pool's join; waking an idle pool
     * is bench/wake.c. The first round is warm-up only: it also starts the pools' threads
     * (pool_create is lazy). */
    for (r = -WARMUP_ROUNDS; r < runs; r++) {
        int v;
        if (r == 0)
            for (i = 0; i < num_pools; i++) pool_stats_get(pools[i], &before[i]);
        for (v = 0; v < FIRST_POOL + num_pools; v++) {
            pool *p = v < FIRST_POOL ? NULL : pools[v - FIRST_POOL];
            uint64_t c, w;
            bench_sleep_ns(SETTLE_NS);
            run_once(p, v == NATURAL, n, r, &c);
            w = run_once(p, v == NATURAL, n, r, &c);
            if (r >= 0) {
                wall[v][r] = w;
                cpu[v][r] = c;
            }
        }
    }
    for (i = 0; i < num_pools; i++) pool_stats_get(pools[i], &after[i]);

    joins = fib_joins(n);
    /* bench_median_u64 sorts, so [v][0] is the fastest run from here on. */
    natural_wall = bench_median_u64(wall[NATURAL], (size_t)runs);
    plain_wall = bench_median_u64(wall[PLAIN], (size_t)runs);
    printf("fib(%u) = %" PRIu64 ": %" PRIu64 " calls, %" PRIu64
           " joins (one per call with n >= 2), "
           "no cutoff\nmedian of %d interleaved runs, each right after an untimed run of the same "
           "variant;\ncpu = process CPU time, all threads; best = fastest run (least disturbed by "
           "the rest of the machine)\n\n",
           n, wl_fib_expected(n), 2 * joins + 1, joins, runs);
    printf("%-22s %10s %10s %10s %9s %9s %9s %9s\n", "variant", "wall ms", "cpu ms", "ns/join",
           "x serial", "x plain", "best ms", "x (best)");
    printf("%-22s %10.2f %10.2f %10s %9.2f %9s %9.2f %9.2f\n", "natural serial",
           bench_ms(natural_wall), bench_ms(bench_median_u64(cpu[NATURAL], (size_t)runs)), "-", 1.0,
           "-", bench_ms(wall[NATURAL][0]), 1.0);
    printf("%-22s %10.2f %10.2f %10s %9.2f %9.2f %9.2f %9.2f\n", "plain recursion",
           bench_ms(plain_wall), bench_ms(bench_median_u64(cpu[PLAIN], (size_t)runs)), "-",
           (double)plain_wall / (double)natural_wall, 1.0, bench_ms(wall[PLAIN][0]),
           (double)wall[PLAIN][0] / (double)wall[NATURAL][0]);

    for (i = 0; i < num_pools; i++) {
        uint64_t w = bench_median_u64(wall[FIRST_POOL + i], (size_t)runs);
        uint64_t c = bench_median_u64(cpu[FIRST_POOL + i], (size_t)runs);
        char label[64];
        int err;

        snprintf(label, sizeof label, "pool_join, %d thread%s", threads[i],
                 threads[i] == 1 ? "" : "s");
        /* Wall-clock overhead per join. With more than one thread the work is shared, so this is
         * the net cost after the speed-up, and can be negative. */
        printf("%-22s %10.2f %10.2f %10.1f %9.2f %9.2f %9.2f %9.2f\n", label, bench_ms(w),
               bench_ms(c), ((double)w - (double)plain_wall) / (double)joins,
               (double)w / (double)natural_wall, (double)w / (double)plain_wall,
               bench_ms(wall[FIRST_POOL + i][0]),
               (double)wall[FIRST_POOL + i][0] / (double)wall[NATURAL][0]);
        /* The counters cover the untimed runs too: 2 runs per round. */
        printf("%-22s per run: stolen %.1f, failed steals %.1f, sleeps %.1f, wakeups %.1f; "
               "threads started %" PRIu64 "\n",
               "", (double)(after[i].jobs_stolen - before[i].jobs_stolen) / (2.0 * runs),
               (double)(after[i].steals_failed - before[i].steals_failed) / (2.0 * runs),
               (double)(after[i].sleeps - before[i].sleeps) / (2.0 * runs),
               (double)(after[i].wakeups - before[i].wakeups) / (2.0 * runs),
               after[i].threads_started);
        err = pool_destroy(pools[i]);
        if (err) {
            fprintf(stderr, "fib: pool_destroy failed: %s\n", strerror(err));
            return 1;
        }
    }
    printf("\ntargets (issue 14, 2 cores): 1 thread <= 3x serial, 2 threads <= 1.5x serial\n");
    return 0;
}
