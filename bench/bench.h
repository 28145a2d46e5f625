/* bench/bench.h -- small helpers shared by the pool.h benchmarks.
 *
 * Include it after "../pool.h": pool.h may set feature-test macros (_GNU_SOURCE and friends), and
 * those only work if they come before the first system header.
 *
 * Everything here is static so each benchmark stays one self-contained translation unit.
 */
#ifndef BENCH_H
#define BENCH_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__) || defined(__clang__)
#define BENCH_NOINLINE __attribute__((noinline))
#define BENCH_ALWAYS_INLINE inline __attribute__((always_inline))
#define BENCH_MAYBE_UNUSED __attribute__((unused))
#else
#define BENCH_NOINLINE
#define BENCH_ALWAYS_INLINE inline
#define BENCH_MAYBE_UNUSED
#endif

/* Monotonic wall clock in nanoseconds. CLOCK_MONOTONIC is system-wide, so timestamps taken on
 * different threads can be subtracted (bench/wake.c relies on that). */
static inline uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time consumed by every thread of this process, in nanoseconds. A spinning worker shows up
 * here even when the wall clock says nothing is happening. */
static inline uint64_t bench_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time consumed by the calling thread only, in nanoseconds. */
static inline uint64_t bench_thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleep for ns nanoseconds, resuming after signal interruptions. */
static inline void bench_sleep_ns(uint64_t ns) {
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Make the compiler believe v is used, so the computation producing it cannot be deleted. Costs
 * nothing at run time: the asm is empty, it only pins v in a register. */
static inline void bench_do_not_optimize(uint64_t v) {
#if defined(__GNUC__) || defined(__clang__)
    __asm__ volatile("" : : "r"(v) : "memory");
#else
    static volatile uint64_t bench_sink;
    bench_sink = v;
#endif
}

static inline int bench_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place (n >= 1) and returns the q-quantile by nearest rank: q = 0.5 is the median
 * (the upper median for even n), q = 0.99 the p99. */
static inline uint64_t bench_quantile_u64(uint64_t *v, size_t n, double q) {
    size_t rank;
    qsort(v, n, sizeof *v, bench_cmp_u64);
    rank = (size_t)(q * (double)n);
    return v[rank < n ? rank : n - 1];
}

static inline uint64_t bench_median_u64(uint64_t *v, size_t n) {
    return bench_quantile_u64(v, n, 0.5);
}

/* The CPU model as /proc/cpuinfo names it ("unknown" elsewhere). x86 says "model name"; some ARM
 * kernels only say "Hardware" or "Model". */
static inline void bench_cpu_model(char *buf, size_t size) {
    static const char *const keys[] = {"model name", "Hardware", "Model", "cpu model"};
    char line[512];
    size_t k;
    FILE *f = fopen("/proc/cpuinfo", "r");

    snprintf(buf, size, "unknown");
    if (!f) return;
    for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        rewind(f);
        while (fgets(line, sizeof line, f)) {
            const char *colon = strchr(line, ':');
            size_t len = strlen(keys[k]);
            if (colon && strncmp(line, keys[k], len) == 0 &&
                (line[len] == ' ' || line[len] == '\t' || line[len] == ':')) {
                colon++;
                while (*colon == ' ' || *colon == '\t') colon++;
                snprintf(buf, size, "%s", colon);
                buf[strcspn(buf, "\n")] = '\0';
                fclose(f);
                return;
            }
        }
    }
    fclose(f);
}

/* BENCH_QUICK=1 in the environment shrinks every benchmark to a smoke test (CI uses it): the
 * numbers are then meaningless, but every code path and every checksum still runs. */
static inline int bench_quick(void) {
    const char *s = getenv("BENCH_QUICK");
    return s && *s && strcmp(s, "0") != 0;
}

/* Parses a thread count from argv; exits with a message if it is not an integer in [1, 65535]. */
static inline int bench_parse_threads(const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 1 || v > 65535) {
        fprintf(stderr, "bad thread count '%s' (want 1..65535)\n", s);
        exit(2);
    }
    return (int)v;
}

static inline double bench_ms(uint64_t ns) { return (double)ns / 1e6; }
static inline double bench_us(uint64_t ns) { return (double)ns / 1e3; }

/* The rest needs pool.h, which every benchmark includes first. */

/* Creates a pool with exactly `threads` workers; exits with a message naming the benchmark if
 * pool_create fails. Threads still start lazily: a benchmark's warm-up round starts them. */
static inline pool *bench_pool_create(const char *bench, int threads) {
    pool *p;
    pool_config cfg;
    int err;

    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    err = pool_create(&p, &cfg);
    if (err) {
        fprintf(stderr, "%s: pool_create(num_threads=%d) failed: %s\n", bench, threads,
                strerror(err));
        exit(1);
    }
    return p;
}

static inline void bench_pool_destroy(const char *bench, pool *p) {
    int err = pool_destroy(p);
    if (err) {
        fprintf(stderr, "%s: pool_destroy failed: %s\n", bench, strerror(err));
        exit(1);
    }
}

/* Prints one line "label  median X ms  min Y ms" for the runs in wall_ns[0..runs), which it sorts,
 * then "  Z.ZZx baseline_name" (median / baseline_ns) when baseline_ns is not 0. Returns the
 * median. */
static inline uint64_t bench_report_ms(const char *label, uint64_t *wall_ns, int runs,
                                       uint64_t baseline_ns, const char *baseline_name) {
    uint64_t median = bench_median_u64(wall_ns, (size_t)runs);
    printf("%-28s median %9.3f ms   min %9.3f ms", label, bench_ms(median), bench_ms(wall_ns[0]));
    if (baseline_ns) printf("   %.2fx %s", (double)median / (double)baseline_ns, baseline_name);
    printf("\n");
    return median;
}

/* Prints how the median of `what` compares with its target, which is set for `target_threads`. */
static inline void bench_report_target(const char *what, uint64_t median_ns, uint64_t target_ns,
                                       int threads, int target_threads) {
    printf("target for %s: <= %g ms on %d threads", what, bench_ms(target_ns), target_threads);
    if (bench_quick()) printf(" (not checked: BENCH_QUICK sizes)\n");
    else if (threads != target_threads) printf(" (not checked with %d)\n", threads);
    else if (median_ns <= target_ns) printf(": met\n");
    else printf(": MISSED by %.0f%%\n", 100.0 * ((double)median_ns / (double)target_ns - 1.0));
}

/* fib through pool_join: the fork-join workload several benchmarks share. The pool is a global
 * rather than a field of the argument, so that the frame is as big as bench/fib.c's plain
 * version's, whose shape this is (see there). */
struct bench_fib {
    unsigned n;
    uint64_t result;
};

static pool *bench_fib_pool_target;

static BENCH_NOINLINE BENCH_MAYBE_UNUSED void bench_fib_pool(void *varg) {
    struct bench_fib *f = varg;
    struct bench_fib a, b;

    if (f->n < 2) {
        f->result = f->n;
        return;
    }
    a.n = f->n - 1;
    b.n = f->n - 2;
    pool_join(bench_fib_pool_target, bench_fib_pool, &a, bench_fib_pool, &b);
    f->result = a.result + b.result;
}

/* Where a deep recursion's stack frames lie matters to a join's cost: on the AMD EPYC of this
 * project, bench/fib's pool_join on 1 thread took 13.4-14.4 ms at most offsets of its root frame
 * and 15.3-16.7 ms at a few (64 offsets 16 bytes apart, one build; bench/results/stack-offset.txt):
 * the processor predicts which loads depend on which earlier stores from the low bits of their
 * addresses, so a stack frame that lands at the same offset within 4 KiB as the worker's deque
 * fields can stall the join's loads. Any change that moves a frame by 16 bytes (a field added to
 * a worker struct, a different inlining) moves the benchmark between the two. So the recursion's
 * root is moved down the stack by a different offset in each run, and the median is taken over
 * layouts, not of one layout's luck. */
#define BENCH_STACK_OFFSET_STEP 272u /* 17 * 16: nine runs spread over 4 KiB in 16-byte steps */

static BENCH_MAYBE_UNUSED size_t bench_stack_offset(int run) {
    return (size_t)((unsigned)run * BENCH_STACK_OFFSET_STEP % 4096u);
}

struct bench_shifted_call {
    void (*fn)(void *arg);
    void *arg;
    size_t offset; /* bytes of stack left unused below the caller's frame */
};

/* Runs s->fn(s->arg) with its stack frame s->offset bytes lower than it would be: pass it to
 * pool_call to move a recursion's root on a worker. */
static BENCH_NOINLINE BENCH_MAYBE_UNUSED void bench_call_shifted(void *varg) {
    struct bench_shifted_call *s = varg;
    char pad[s->offset + 1]; /* a VLA, kept because its address escapes below */
    pad[0] = 0;
    s->fn(s->arg);
    bench_do_not_optimize((uint64_t)(uintptr_t)pad);
}

#endif /* BENCH_H */
