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
 *   test_now(), test_sleep_us(us), test_cpu_time()
 *                          monotonic seconds, a sleep in the kernel, the
 *                          process's CPU seconds (all threads).
 *   test_cond_init(c), test_deadline_after(s)
 *                          a condvar and an absolute deadline `s` seconds
 *                          from now on the clock its timed wait uses.
 *   test_setenv(n, v)      setenv, also on Windows.
 *   test_thread_name(out)  the calling thread's name ("" if unknown).
 *   test_thread_stack_size()  the calling thread's stack size in bytes,
 *                          0 if the platform cannot tell.
 *   test_under_valgrind()  whether valgrind runs the program.
 *   test_runner()          the emulator running the program ("" if none).
 *   test_temp_dir(o, n, s) a new empty directory for the test's files.
 *   test_scale()           the factor in $POOL_TEST_SCALE (default 1.0);
 *                          run.sh sets it below 1 under sanitizers.
 *   test_scaled(n, min)    n * test_scale(), but at least min.
 *   test_pool(threads)     a new pool of that many workers, or exit(2).
 *   test_pool_cfg(cfg)     a new pool with that configuration, or exit(2).
 *   test_pool_without_slots(threads)
 *                          a pool without external slots: an outside
 *                          caller's pool_call runs on a worker.
 *   test_fib(arg)          fib through pool_join on test_fib_pool.
 *   test_count(arg)        a pool_fn adding 1 to the atomic_int at arg.
 *   test_counted_task      a pool_task counting its runs in *runs after
 *                          sleeping sleep_us (TEST_COUNTED_TASK(r, us)).
 *   test_gate              a pool_task that holds its worker until
 *                          test_gate_open (TEST_GATE_INIT), so that what is
 *                          submitted after it stays queued;
 *                          test_gate_wait_entered(g) waits until it runs.
 *   CALL_IN(p, fn, arg)    how a scenario enters its pool from outside:
 *                          pool_call_on_worker, on a worker, as white-box
 *                          checks assume; tests/test_waiting_slots.sh
 *                          builds scenarios again with -DCALL_IN=pool_call
 *                          -DCALLERS_IN_SLOTS, their callers then working
 *                          in external slots.
 *   test_awake(p)          white-box: how many threads p has started
 *                          that are neither asleep in the kernel nor
 *                          retired;
 *   test_wait_awake(p, started, awake, s)
 *                          waits up to s seconds until p has started at
 *                          least `started` threads and `awake` of them
 *                          are awake, so that a test reaches the sleeping
 *                          case it covers instead of sleeping and hoping.
 *   test_threads_named(n)  how many threads of the process are named n.
 *   test_finish(name)      prints the verdict; returns the exit status.
 *   test_run_parts(argc, argv, parts, n)
 *                          runs every part of a test program, or with
 *                          arguments only the parts of those names, in
 *                          that order (to show one scenario failing on
 *                          its own); a name that no part has fails.
 *
 * Everything is static: each test program is a single translation unit.
 *
 * Platforms: Linux (glibc, musl) and Windows (mingw-w64, run under wine or
 * on Windows). The tests use POSIX threads, mutexes, condvars and
 * barriers, which mingw-w64 provides (winpthreads, linked statically with
 * -static); what winpthreads lacks or does differently (clocks, thread
 * names and stacks, setenv) goes through the helpers above, which use the
 * Win32 API under _WIN32.
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
#if defined(_WIN32)
#include <windows.h>
#include <tlhelp32.h>
#elif defined(__linux__)
#include <sys/prctl.h>
#endif

/* Helpers a given test program may not use. */
#define TEST__UNUSED __attribute__((unused))

/* ------------------------------------------------------------------------ */
/* Checks                                                                   */
/* ------------------------------------------------------------------------ */

static atomic_long test__failures;
static atomic_long test__printed; /* cap the output when a loop fails a lot */

#define TEST__MAX_PRINTED 50

TEST__UNUSED static void test__fail(const char *file, int line, const char *expr,
                                    const char *detail) {
    atomic_fetch_add(&test__failures, 1);
    if (atomic_fetch_add(&test__printed, 1) < TEST__MAX_PRINTED) {
        fflush(stdout); /* keep the log in order when both go to one file */
        fprintf(stderr, "%s:%d: CHECK failed: %s%s%s\n", file, line, expr, detail ? "  " : "",
                detail ? detail : "");
        fflush(stderr);
    }
}

#define CHECK(cond) \
    do { \
        if (!(cond)) test__fail(__FILE__, __LINE__, #cond, NULL); \
    } while (0)

#define CHECK_EQ_I64(a, b) \
    do { \
        int64_t test__a = (int64_t)(a), test__b = (int64_t)(b); \
        if (test__a != test__b) { \
            char test__d[96]; \
            snprintf(test__d, sizeof test__d, "(%" PRId64 " != %" PRId64 ")", test__a, test__b); \
            test__fail(__FILE__, __LINE__, #a " == " #b, test__d); \
        } \
    } while (0)

/* Like CHECK, with a printf-style explanation. */
#define CHECK_MSG(cond, ...) \
    do { \
        if (!(cond)) { \
            char test__d[256]; \
            snprintf(test__d, sizeof test__d, __VA_ARGS__); \
            test__fail(__FILE__, __LINE__, #cond, test__d); \
        } \
    } while (0)

TEST__UNUSED static long test_failures(void) { return atomic_load(&test__failures); }

/* ------------------------------------------------------------------------ */
/* Time                                                                     */
/* ------------------------------------------------------------------------ */

#if defined(_WIN32)
TEST__UNUSED static double test_now(void) {
    LARGE_INTEGER now, freq;
    QueryPerformanceCounter(&now);
    QueryPerformanceFrequency(&freq);
    return (double)now.QuadPart / (double)freq.QuadPart;
}

/* Windows sleeps in milliseconds: round up, never sleep less. */
TEST__UNUSED static void test_sleep_us(long us) { Sleep((DWORD)((us + 999) / 1000)); }

TEST__UNUSED static double test_cpu_time(void) {
    FILETIME created, exited, kernel, user;
    ULARGE_INTEGER k, u;
    if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user)) return 0;
    k.LowPart = kernel.dwLowDateTime, k.HighPart = kernel.dwHighDateTime;
    u.LowPart = user.dwLowDateTime, u.HighPart = user.dwHighDateTime;
    return (double)(k.QuadPart + u.QuadPart) * 1e-7; /* 100 ns units */
}
#else
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
#endif

/* Condition variables time out on CLOCK_MONOTONIC where pthreads lets us
   choose; winpthreads and macOS time out on the wall clock only. */
#if defined(_WIN32) || defined(__APPLE__)
#define TEST__COND_CLOCK CLOCK_REALTIME
#else
#define TEST__COND_CLOCK CLOCK_MONOTONIC
#endif

TEST__UNUSED static int test_cond_init(pthread_cond_t *cond) {
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);
    if (rc) return rc;
#if !defined(_WIN32) && !defined(__APPLE__)
    rc = pthread_condattr_setclock(&attr, TEST__COND_CLOCK);
#endif
    if (!rc) rc = pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
    return rc;
}

/* The absolute time `seconds` from now, for pthread_cond_timedwait on a
   condvar made by test_cond_init. */
TEST__UNUSED static struct timespec test_deadline_after(int seconds) {
    struct timespec ts;
    clock_gettime(TEST__COND_CLOCK, &ts);
    ts.tv_sec += seconds;
    return ts;
}

/* ------------------------------------------------------------------------ */
/* Watchdog                                                                 */
/*                                                                          */
/* A detached thread waiting on a condition variable with a deadline       */
/* (CLOCK_MONOTONIC where possible), rather than alarm(): a thread needs no */
/* async-signal safety (nor signals, which Windows lacks),                  */
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
        clock_gettime(TEST__COND_CLOCK, &now);
        if (now.tv_sec > test__wd_deadline.tv_sec ||
            (now.tv_sec == test__wd_deadline.tv_sec && now.tv_nsec >= test__wd_deadline.tv_nsec)) {
            char msg[256];
            int len = snprintf(msg, sizeof msg, "WATCHDOG: %s stalled after %d s\n", test__wd_name,
                               test__wd_seconds);
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
    pthread_mutex_lock(&test__wd_lock);
    if (!test__wd_started) {
        pthread_t thread;
        pthread_attr_t tattr;
        test_cond_init(&test__wd_cond);
        pthread_attr_init(&tattr);
        pthread_attr_setdetachstate(&tattr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&thread, &tattr, test__watchdog_main, NULL) != 0) {
            fprintf(stderr, "cannot start the watchdog thread\n");
            exit(2);
        }
        pthread_attr_destroy(&tattr);
        test__wd_started = 1;
    }
    test__wd_deadline = test_deadline_after(seconds);
    test__wd_seconds = seconds;
    snprintf(test__wd_name, sizeof test__wd_name, "%s", name);
    pthread_cond_signal(&test__wd_cond);
    pthread_mutex_unlock(&test__wd_lock);
}

/* ------------------------------------------------------------------------ */
/* Threads                                                                  */
/* ------------------------------------------------------------------------ */

#if defined(_WIN32)
/* GetThreadDescription (Windows 10 1607, and wine), looked up at run time. */
typedef HRESULT(WINAPI *test__get_desc_fn)(HANDLE, PWSTR *);

static test__get_desc_fn test__get_desc(void) {
    HMODULE k32 = GetModuleHandleA("kernel32.dll");
    return k32 ? (test__get_desc_fn)(void (*)(void))GetProcAddress(k32, "GetThreadDescription")
               : NULL;
}

/* The description of thread h in out[size], "" if it has none. */
static void test__thread_desc(HANDLE h, char *out, int size) {
    test__get_desc_fn get = test__get_desc();
    PWSTR desc = NULL;
    out[0] = 0;
    if (get && SUCCEEDED(get(h, &desc)) && desc) {
        if (!WideCharToMultiByte(CP_UTF8, 0, desc, -1, out, size, NULL, NULL)) out[0] = 0;
        LocalFree(desc);
    }
}

/* How many threads of this process are named `name` (Windows: a thread
   snapshot and each thread's description). */
TEST__UNUSED static int test_threads_named(const char *name) {
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
    THREADENTRY32 te;
    DWORD pid = GetCurrentProcessId();
    int count = 0;
    if (snap == INVALID_HANDLE_VALUE || !test__get_desc()) return -1;
    te.dwSize = sizeof te;
    if (Thread32First(snap, &te)) {
        do {
            HANDLE h;
            char desc[64];
            if (te.th32OwnerProcessID != pid) continue;
            h = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, te.th32ThreadID);
            if (!h) continue;
            test__thread_desc(h, desc, (int)sizeof desc);
            count += strcmp(desc, name) == 0;
            CloseHandle(h);
        } while (Thread32Next(snap, &te));
    }
    CloseHandle(snap);
    return count;
}

TEST__UNUSED static void test_thread_name(char out[16]) {
    char desc[64];
    test__thread_desc(GetCurrentThread(), desc, (int)sizeof desc);
    snprintf(out, 16, "%s", desc);
}

/* The reserved size of the calling thread's stack. */
TEST__UNUSED static size_t test_thread_stack_size(void) {
    ULONG_PTR low, high;
    GetCurrentThreadStackLimits(&low, &high);
    return (size_t)(high - low);
}

TEST__UNUSED static int test_setenv(const char *name, const char *value) {
    return _putenv_s(name, value) == 0 ? 0 : -1;
}
#else
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

TEST__UNUSED static void test_thread_name(char out[16]) {
    memset(out, 0, 16);
#if defined(__linux__)
    prctl(PR_GET_NAME, out, 0, 0, 0);
#endif
}

/* pthread_getattr_np needs _GNU_SOURCE, defined by the test before any
   header; without it the size is unknown (0). */
TEST__UNUSED static size_t test_thread_stack_size(void) {
    size_t stack = 0;
#if defined(__linux__) && defined(_GNU_SOURCE)
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstacksize(&attr, &stack);
        pthread_attr_destroy(&attr);
    }
#endif
    return stack;
}

TEST__UNUSED static int test_setenv(const char *name, const char *value) {
    return setenv(name, value, 1);
}
#endif

/* ------------------------------------------------------------------------ */
/* A shared fork-join workload                                              */
/* ------------------------------------------------------------------------ */

#ifdef POOL_H

/* A pool with exactly `threads` workers (0: the default count); exits the
   test if it cannot be created. */
TEST__UNUSED static pool *test_pool_cfg(const pool_config *cfg) {
    pool *p = NULL;
    int rc;
    if ((rc = pool_create(&p, cfg)) != 0) {
        fprintf(stderr, "pool_create(num_threads=%d, stack_size=%zu) failed: %d\n",
                cfg->num_threads, cfg->stack_size, rc);
        exit(2);
    }
    return p;
}

TEST__UNUSED static pool *test_pool(int threads) {
    pool_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    return test_pool_cfg(&cfg);
}

/* A pool of `threads` workers and no external slots: an outside caller's
   pool_call then runs on a worker, and its waits only block. */
TEST__UNUSED static pool *test_pool_without_slots(int threads) {
    pool_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    cfg.external_slots = POOL_EXTERNAL_SLOTS_NONE;
    return test_pool_cfg(&cfg);
}

#ifdef POOL_IMPLEMENTATION
/* How many threads p has started that are neither asleep in the kernel
   (core latch SLEEPING), where only work posted from now on or
   pool_destroy wakes them, nor retired (spares whose park ended). */
TEST__UNUSED static uint32_t test_awake(pool *p) {
    /* Acquire: pairs with the release of the count that publishes a worker. */
    uint32_t i, started = POOL__LOAD(&p->threads.started, POOL__ACQUIRE);
    uint32_t asleep = POOL__LOAD(&p->retired, POOL__RELAXED);
    for (i = 0; i < started; i++)
        asleep += POOL__LOAD(&p->workers[i]->core_latch, POOL__RELAXED) == POOL__CORE_SLEEPING;
    return asleep < started ? started - asleep : 0;
}

/* Waits up to `seconds` until p has started at least `started` threads, of
   which exactly `awake` are awake; returns whether that came. */
TEST__UNUSED static int test_wait_awake(pool *p, uint32_t started, uint32_t awake, double seconds) {
    double until = test_now() + seconds;
    for (;;) {
        int now =
            POOL__LOAD(&p->threads.started, POOL__ACQUIRE) >= started && test_awake(p) == awake;
        if (now || test_now() >= until) return now;
        test_sleep_us(500);
    }
}
#endif

/* How a scenario enters its pool from outside (see the top). */
#ifndef CALL_IN
#define CALL_IN pool_call_on_worker
#endif

/* A pool_fn that counts its calls in the atomic_int its argument points to. */
TEST__UNUSED static void test_count(void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

/* A pool_task that sleeps sleep_us, then counts its run in *runs. */
typedef struct test_counted_task {
    pool_task task;
    atomic_int *runs;
    long sleep_us;
} test_counted_task;

TEST__UNUSED static void test_counted_run(pool_task *t) {
    test_counted_task *c = (test_counted_task *)(void *)t;
    if (c->sleep_us > 0) test_sleep_us(c->sleep_us);
    atomic_fetch_add(c->runs, 1);
}

/* clang-format off: an initialiser, not a block */
#define TEST_COUNTED_TASK(runs, sleep_us) \
    { POOL_TASK_INIT(test_counted_run), (runs), (sleep_us) }
/* clang-format on */

/* A task that holds the worker running it until it is opened. */
typedef struct test_gate {
    pool_task task;
    atomic_int entered, open;
} test_gate;

TEST__UNUSED static void test_gate_run(pool_task *t) {
    test_gate *g = (test_gate *)(void *)t;
    atomic_store(&g->entered, 1);
    while (!atomic_load(&g->open)) test_sleep_us(100);
}

/* clang-format off: an initialiser, not a block */
#define TEST_GATE_INIT \
    { POOL_TASK_INIT(test_gate_run), 0, 0 }
/* clang-format on */

TEST__UNUSED static void test_gate_wait_entered(test_gate *g) {
    while (!atomic_load(&g->entered)) test_sleep_us(100);
}

TEST__UNUSED static void test_gate_open(test_gate *g) { atomic_store(&g->open, 1); }

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

typedef struct test_part {
    const char *name;
    void (*fn)(void);
} test_part;

TEST__UNUSED static void test_run_parts(int argc, char **argv, const test_part *parts, size_t n) {
    size_t i;
    int a;
    if (argc < 2) {
        for (i = 0; i < n; i++) parts[i].fn();
        return;
    }
    for (a = 1; a < argc; a++) {
        for (i = 0; i < n && strcmp(argv[a], parts[i].name) != 0; i++) continue;
        CHECK_MSG(i < n, "no part named %s", argv[a]); /* a typo fails */
        if (i < n) parts[i].fn();
    }
}

TEST__UNUSED static void test_watchdog_dump(void (*fn)(void)) {
    pthread_mutex_lock(&test__wd_lock);
    test__wd_dump = fn;
    pthread_mutex_unlock(&test__wd_lock);
}

/* Creates a new, empty directory for the test's files: "<tmp>/<name>.X"
   with X unique. Returns 0, or -1 with a message. */
TEST__UNUSED static int test_temp_dir(char *out, size_t size, const char *name) {
#if defined(_WIN32)
    char tmp[MAX_PATH];
    DWORD len = GetTempPathA(sizeof tmp, tmp);
    if (len == 0 || len >= sizeof tmp) return -1;
    snprintf(out, size, "%s%s.%lu.%lu", tmp, name, (unsigned long)GetCurrentProcessId(),
             (unsigned long)GetTickCount());
    if (!CreateDirectoryA(out, NULL)) {
        fprintf(stderr, "cannot create %s\n", out);
        return -1;
    }
    return 0;
#else
    snprintf(out, size, "/tmp/%s.XXXXXX", name);
    if (!mkdtemp(out)) {
        fprintf(stderr, "mkdtemp %s: %s\n", out, strerror(errno));
        return -1;
    }
    return 0;
#endif
}

/* The command that runs the test program for a cross build (run.sh's
   TEST_RUNNER: "taskset -c 0 qemu-aarch64", wine), "" when run natively. */
TEST__UNUSED static const char *test_runner(void) {
    const char *runner = getenv("POOL_TEST_RUNNER");
    return runner ? runner : "";
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
