/* user.c - a user TU of the language matrix: includes pool.h without
 * POOL_IMPLEMENTATION, uses its types, initialisers and version macros,
 * calls the library (in C++ also pool_cpp), and checks the results. The implementation is
 * impl.c's (maybe compiled in the other language: extern "C" linkage). */
#include "pool.h"

#include <errno.h>
#include <stdio.h>

#include "port.h"

#if !defined(POOL_VERSION_MAJOR) || !defined(POOL_VERSION_MINOR) || !defined(POOL_VERSION_PATCH)
#error "pool.h defines no version macros"
#endif

static long ran;

static void count(pool_task *t) {
    (void)t;
    __atomic_fetch_add(&ran, 1, __ATOMIC_RELAXED);
}

static void add_one(void *arg) { ++*(long *)arg; }

static int failed;

static void check(int ok, const char *what, long got) {
    if (!ok) {
        printf("FAILED: %s (got %ld)\n", what, got);
        failed = 1;
    }
}

#ifdef __cplusplus
#include <vector>

/* The C++ interface, instantiated in every C++ mode of the matrix. */
static long cpp_fib(pool *p, int n) {
    long a, b;
    if (n < 2) return n;
    pool_cpp::join(
        p, [&] { a = cpp_fib(p, n - 1); }, [&] { b = cpp_fib(p, n - 2); });
    return a + b;
}

static void check_cpp(void) {
    std::vector<int> v(20000);
    long hits = 0, fib = pool_cpp::call(nullptr, [] { return cpp_fib(nullptr, 20); });
    pool_cpp::parallel_for(nullptr, 0, v.size(), [&](size_t i) { v[i] = (int)(v.size() - i); });
    pool_cpp::sort(nullptr, v.begin(), v.end());
    long sum = pool_cpp::parallel_reduce(
        nullptr, 0, v.size(), 100, 0L,
        [&](size_t lo, size_t hi, long acc) {
            for (size_t i = lo; i < hi; i++) acc += v[i] == (int)i + 1;
            return acc;
        },
        [](long a, long b) { return a + b; });
    {
        pool_cpp::scope s;
        for (int i = 0; i < 10; i++)
            s.spawn([&hits] { __atomic_fetch_add(&hits, 1, __ATOMIC_RELAXED); });
        s.wait();
    }
    check(fib == 6765, "pool_cpp::call + join: fib(20) == 6765", fib);
    check(sum == (long)v.size(), "pool_cpp parallel_for + sort + parallel_reduce", sum);
    check(hits == 10, "pool_cpp::scope ran 10 tasks", hits);
}
#else
static void check_cpp(void) {}
#endif

int main(void) {
    pool_task tasks[3] = {POOL_TASK_INIT(count), POOL_TASK_INIT(count), POOL_TASK_INIT(count)};
    pool_task *batch[3] = {&tasks[0], &tasks[1], &tasks[2]};
    pool_blocking_job job = POOL_BLOCKING_JOB_INIT(NULL);
    pool *p = NULL;
    long x = 0, fib = port_fib(20), sum = port_scope_sum(64);
    check(fib == 6765, "fib(20) == 6765", fib);
    check(sum == 64 * 65 / 2, "scope sum == 2080", sum);
    check_cpp();
    check(pool_submit_blocking_job(NULL, &job) == EINVAL, "a job without run is EINVAL", 0);
    check(pool_create(&p, NULL) == 0, "pool_create", 0);
    if (!p) return 1;
    pool_join(p, add_one, &x, add_one, &x);
    pool_call(p, add_one, &x);
    check(x == 3, "join + call ran 3 functions", x);
    check(pool_submit_batch(p, batch, 3) == 0, "pool_submit_batch", 0);
    check(pool_destroy(p) == 0, "pool_destroy", 0); /* runs what was accepted */
    check(__atomic_load_n(&ran, __ATOMIC_RELAXED) == 3, "3 detached tasks ran", ran);
    printf("pool.h %d.%d.%d: fib(20) = %ld, scope sum = %ld: %s\n", POOL_VERSION_MAJOR,
           POOL_VERSION_MINOR, POOL_VERSION_PATCH, fib, sum, failed ? "FAILED" : "ok");
    return failed;
}
