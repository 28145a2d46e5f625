/* test.h - the tiny harness shared by the pool.h tests.
 *
 * Include it *after* pool.h: pool.h (with POOL_IMPLEMENTATION) must be the
 * first header of a test program so that the feature-test macros it may
 * define take effect. A test of something other than pool.h (the trace
 * tools) may include it alone: test_pool and test_fib are then left out.
 *
 *   CHECK(cond)            on failure prints file:line and the expression,
 *                          counts the failure, and carries on.
 *   CHECK_EQ_I64(a, b)     the same, printing both values.
 *   test_watchdog(s, name) (re)arms the watchdog: if it is not re-armed or
 *                          the program has not exited within s seconds,
 *                          it prints "WATCHDOG: <name> stalled after s s"
 *                          and exits with status 3. Every test arms it, so
 *                          a deadlock or lost wake-up fails instead of
 *                          hanging the run.
 *   test_watchdog_dump(fn) fn is called (on the watchdog thread) before a
 *                          stall is reported, to print the pool's state.
 *   test_under_valgrind()  whether valgrind runs the program.
 *   test_scale()           the factor in $POOL_TEST_SCALE (default 1.0);
 *                          run.sh sets it below 1 under sanitizers.
 *   test_scaled(n, min)    n * test_scale(), but at least min.
 *   test_pool(threads)     a new pool of that many workers, or exit(2).
 *   test_fib(arg)          fib through pool_join on test_fib_pool.
 *   test_threads_named(n)  how many threads of the process are named n.
 *   test_finish(name)      prints the verdict; returns the exit status.
 *
 * Everything is static: each test program is a single translation unit.
 */
#ifndef POOL_TEST_H
#define POOL_TEST_H

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Helpers a given test program may not use. */
#define TEST__UNUSED __attribute__((unused))

/* ------------------------------------------------------------------------ */
/* Checks                                                                   */
/* ------------------------------------------------------------------------ */

static atomic_long test__failures;
static atomic_long test__printed; /* cap the output when a loop fails a lot */

#define TEST__MAX_PRINTED 50

TEST__UNUSED static void test__fail(const char *file, int line, const char *expr, const char *detail) {
    atomic_fetch_add(&test__failures, 1);
    if (atomic_fetch_add(&test__printed, 1) < TEST__MAX_PRINTED) {
        fflush(stdout); /* keep the log in order when both go to one file */
        fprintf(stderr, "%s:%d: CHECK failed: %s%s%s\n", file, line, expr,
                detail ? "  " : "", detail ? detail : "");
        fflush(stderr);
    }
}

#define CHECK(cond)                                           \
    do {                                                      \
        if (!(cond)) test__fail(__FILE__, __LINE__, #cond, NULL); \
    } while (0)

#define CHECK_EQ_I64(a, b)                                                        \
    do {                                                                          \
        int64_t test__a = (int64_t)(a), test__b = (int64_t)(b);                   \
        if (test__a != test__b) {                                                 \
            char test__d[96];                                                     \
            snprintf(test__d, sizeof test__d, "(%" PRId64 " != %" PRId64 ")",     \
                     test__a, test__b);                                           \
            test__fail(__FILE__, __LINE__, #a " == " #b, test__d);                \
        }                                                                         \
    } while (0)

/* Like CHECK, with a printf-style explanation. */
#define CHECK_MSG(cond, ...)                                         \
    do {                                                             \
        if (!(cond)) {                                               \
            char test__d[256];                                       \
            snprintf(test__d, sizeof test__d, __VA_ARGS__);          \
            test__fail(__FILE__, __LINE__, #cond, test__d);          \
        }                                                            \
    } while (0)

TEST__UNUSED static long test_failures(void) { return atomic_load(&test__failures); }

/* ------------------------------------------------------------------------ */
/* Time                                                                     */
/* ------------------------------------------------------------------------ */

TEST__UNUSED static double test_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sleeps in the kernel (nanosleep), restarting after signals. */
TEST__UNUSED static void test_sleep_us(long us) {
    struct timespec ts;
    ts.tv_sec = us / 1000000;
    ts.tv_nsec = (us % 1000000) * 1000;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Process CPU time (all threads), in seconds. */
TEST__UNUSED static double test_cpu_time(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------ */
/* Watchdog                                                                 */
/*                                                                          */
/* A detached thread waiting on a condition variable with a CLOCK_MONOTONIC */
/* deadline, rather than alarm(): a thread needs no async-signal safety,    */
/* does not interrupt the sleeps the tests themselves make, and behaves the */
/* same under ThreadSanitizer (which defers signal delivery). While armed   */
/* and not expired it sleeps in the kernel, so it does not disturb the      */
/* idle-CPU measurement in test_wakeup.                                     */
/* ------------------------------------------------------------------------ */

static pthread_mutex_t test__wd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t test__wd_cond;
static struct timespec test__wd_deadline;
static char test__wd_name[128];
static int test__wd_seconds;
static int test__wd_started;
static void (*test__wd_dump)(void); /* called when the watchdog fires */

static void *test__watchdog_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&test__wd_lock);
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > test__wd_deadline.tv_sec ||
            (now.tv_sec == test__wd_deadline.tv_sec && now.tv_nsec >= test__wd_deadline.tv_nsec)) {
            char msg[256];
            int len = snprintf(msg, sizeof msg, "WATCHDOG: %s stalled after %d s\n",
                               test__wd_name, test__wd_seconds);
            if (len > (int)sizeof msg - 1) len = (int)sizeof msg - 1;
            fflush(stdout);
            if (write(2, msg, (size_t)len) < 0) {
            }
            if (test__wd_dump) test__wd_dump();
            _exit(3); /* the stalled threads hold locks: do not run atexit */
        }
        pthread_cond_timedwait(&test__wd_cond, &test__wd_lock, &test__wd_deadline);
    }
    return NULL;
}

TEST__UNUSED static void test_watchdog(int seconds, const char *name) {
    struct timespec now;
    pthread_mutex_lock(&test__wd_lock);
    if (!test__wd_started) {
        pthread_condattr_t attr;
        pthread_t thread;
        pthread_attr_t tattr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&test__wd_cond, &attr);
        pthread_condattr_destroy(&attr);
        pthread_attr_init(&tattr);
        pthread_attr_setdetachstate(&tattr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&thread, &tattr, test__watchdog_main, NULL) != 0) {
            fprintf(stderr, "cannot start the watchdog thread\n");
            exit(2);
        }
        pthread_attr_destroy(&tattr);
        test__wd_started = 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    test__wd_deadline = now;
    test__wd_deadline.tv_sec += seconds;
    test__wd_seconds = seconds;
    snprintf(test__wd_name, sizeof test__wd_name, "%s", name);
    pthread_cond_signal(&test__wd_cond);
    pthread_mutex_unlock(&test__wd_lock);
}

/* ------------------------------------------------------------------------ */
/* Threads                                                                  */
/* ------------------------------------------------------------------------ */

/* How many threads of this process are named `name` (Linux: /proc). */
TEST__UNUSED static int test_threads_named(const char *name) {
    DIR *dir = opendir("/proc/self/task");
    struct dirent *e;
    int count = 0;
    if (!dir) return -1;
    while ((e = readdir(dir)) != NULL) {
        char path[300], comm[32] = {0};
        FILE *f;
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        if ((f = fopen(path, "r")) == NULL) continue;
        if (fgets(comm, sizeof comm, f)) {
            comm[strcspn(comm, "\n")] = 0;
            count += strcmp(comm, name) == 0;
        }
        fclose(f);
    }
    closedir(dir);
    return count;
}

/* ------------------------------------------------------------------------ */
/* A shared fork-join workload                                              */
/* ------------------------------------------------------------------------ */

#ifdef POOL_H

/* A pool with exactly `threads` workers (0: the default count); exits the
   test if it cannot be created. */
TEST__UNUSED static pool *test_pool(int threads) {
    pool *p = NULL;
    pool_config cfg;
    int rc;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    if ((rc = pool_create(&p, &cfg)) != 0) {
        fprintf(stderr, "pool_create(num_threads=%d) failed: %d\n", threads, rc);
        exit(2);
    }
    return p;
}

/* fib(n) through pool_join on test_fib_pool, with no cutoff. */
typedef struct test_fib_arg {
    long n, result;
} test_fib_arg;

static pool *test_fib_pool;

TEST__UNUSED static void test_fib(void *arg) {
    test_fib_arg *f = (test_fib_arg *)arg, a, b;
    if (f->n < 2) {
        f->result = f->n;
        return;
    }
    a.n = f->n - 1, b.n = f->n - 2;
    pool_join(test_fib_pool, test_fib, &a, test_fib, &b);
    f->result = a.result + b.result;
}
#endif /* POOL_H */

TEST__UNUSED static void test_watchdog_dump(void (*fn)(void)) {
    pthread_mutex_lock(&test__wd_lock);
    test__wd_dump = fn;
    pthread_mutex_unlock(&test__wd_lock);
}

/* Whether the program runs under valgrind, which preloads its own malloc
   and runs one thread at a time. */
TEST__UNUSED static int test_under_valgrind(void) {
    const char *preload = getenv("LD_PRELOAD");
    return preload && strstr(preload, "vgpreload") != NULL;
}

/* ------------------------------------------------------------------------ */
/* Scale and randomness                                                     */
/* ------------------------------------------------------------------------ */

TEST__UNUSED static double test_scale(void) {
    const char *s = getenv("POOL_TEST_SCALE");
    double v = s ? atof(s) : 1.0;
    return v > 0 ? v : 1.0;
}

TEST__UNUSED static long test_scaled(long n, long min) {
    long v = (long)((double)n * test_scale());
    return v < min ? min : v;
}

/* xorshift64*: a per-thread generator, no shared state. */
TEST__UNUSED static uint64_t test_rand(uint64_t *state) {
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* ------------------------------------------------------------------------ */
/* Verdict                                                                  */
/* ------------------------------------------------------------------------ */

TEST__UNUSED static int test_finish(const char *name) {
    long failures = test_failures();
    if (failures) {
        printf("%s: %ld check(s) FAILED\n", name, failures);
        fflush(stdout);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    fflush(stdout);
    return 0;
}

#endif /* POOL_TEST_H */
