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
#else
#define BENCH_NOINLINE
#endif

/* Monotonic wall clock in nanoseconds. CLOCK_MONOTONIC is system-wide, so timestamps taken on
 * different threads can be subtracted (bench/wake.c relies on that). */
static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time consumed by every thread of this process, in nanoseconds. A spinning worker shows up
 * here even when the wall clock says nothing is happening. */
static inline uint64_t bench_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time consumed by the calling thread only, in nanoseconds. */
static inline uint64_t bench_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleep for ns nanoseconds, resuming after signal interruptions. */
static inline void bench_sleep_ns(uint64_t ns)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Make the compiler believe v is used, so the computation producing it cannot be deleted. Costs
 * nothing at run time: the asm is empty, it only pins v in a register. */
static inline void bench_do_not_optimize(uint64_t v)
{
#if defined(__GNUC__) || defined(__clang__)
    __asm__ volatile("" : : "r"(v) : "memory");
#else
    static volatile uint64_t bench_sink;
    bench_sink = v;
#endif
}

static inline int bench_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place (n >= 1) and returns the q-quantile by nearest rank: q = 0.5 is the median
 * (the upper median for even n), q = 0.99 the p99. */
static inline uint64_t bench_quantile_u64(uint64_t *v, size_t n, double q)
{
    size_t rank;
    qsort(v, n, sizeof *v, bench_cmp_u64);
    rank = (size_t)(q * (double)n);
    return v[rank < n ? rank : n - 1];
}

static inline uint64_t bench_median_u64(uint64_t *v, size_t n)
{
    return bench_quantile_u64(v, n, 0.5);
}

/* The CPU model as /proc/cpuinfo names it ("unknown" elsewhere). x86 says "model name"; some ARM
 * kernels only say "Hardware" or "Model". */
static inline void bench_cpu_model(char *buf, size_t size)
{
    static const char *const keys[] = { "model name", "Hardware", "Model", "cpu model" };
    char line[512];
    size_t k;
    FILE *f = fopen("/proc/cpuinfo", "r");

    snprintf(buf, size, "unknown");
    if (!f)
        return;
    for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        rewind(f);
        while (fgets(line, sizeof line, f)) {
            const char *colon = strchr(line, ':');
            size_t len = strlen(keys[k]);
            if (colon && strncmp(line, keys[k], len) == 0 &&
                (line[len] == ' ' || line[len] == '\t' || line[len] == ':')) {
                colon++;
                while (*colon == ' ' || *colon == '\t')
                    colon++;
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
static inline int bench_quick(void)
{
    const char *s = getenv("BENCH_QUICK");
    return s && *s && strcmp(s, "0") != 0;
}

/* Parses a thread count from argv; exits with a message if it is not an integer in [1, 65535]. */
static inline int bench_parse_threads(const char *s)
{
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

#endif /* BENCH_H */
