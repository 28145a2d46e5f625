/* bench/cpp.cpp -- pool.h's C++ interface (pool_cpp) against the natural serial code, and its
 * sort against oneTBB's parallel_sort and GNU's __gnu_parallel::sort, in one run.
 *
 *     g++ -O2 -pthread -fopenmp bench/cpp.cpp [-DBENCH_TBB -ltbb] -o cpp-bench
 *     ./cpp-bench [-r RUNS] [-q] [THREADS...]      defaults: -r 7, threads 1 2
 *
 * Workloads, each timed RUNS times, interleaved, medians reported:
 *   fib      fib(30) forking at every call with n >= 2: pool_cpp::join of two lambdas, C's
 *            pool_join, and the natural `long fib(int)` at -O2 (the baseline of "x serial").
 *            The pool variants start on a worker (pool_call_on_worker), so that the joins are
 *            the inline ones of a worker of the pool.
 *   tree     the sum of a complete binary tree of 2^20 - 1 heap-allocated nodes, a join at every
 *            node, against the natural recursive sum.
 *   sort     10M uniformly random uint32 (-q: 100k): pool_cpp::sort, tbb::parallel_sort in a
 *            task_arena of THREADS (with -DBENCH_TBB), __gnu_parallel::sort with THREADS OpenMP
 *            threads (with -fopenmp), against std::sort on one thread.
 *   orders   1M uint32 (-q: 10k) already sorted, reversed, in an organ pipe, a sawtooth
 *            (i % 1000), sorted with every 1000th key misplaced, and alternating between
 *            rising and falling keys: pool_cpp::sort against std::sort on one thread.
 * Every variant's result is checked; a wrong one exits 1.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#include <parallel/algorithm>
#endif
#ifdef BENCH_TBB
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/task_arena.h>
#endif

static double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void fail(const char *what) {
    std::fprintf(stderr, "cpp-bench: wrong result: %s\n", what);
    std::exit(1);
}

/* ---- fib ---- */

static volatile int fib_n = 30; /* volatile: no fib computed at compile time */

static long fib_natural(int n) { return n < 2 ? n : fib_natural(n - 1) + fib_natural(n - 2); }

static long fib_cpp(pool *p, int n) {
    if (n < 2) return n;
    long a, b;
    pool_cpp::join(
        p, [&] { a = fib_cpp(p, n - 1); }, [&] { b = fib_cpp(p, n - 2); });
    return a + b;
}

struct fib_c_arg {
    pool *p;
    int n;
    long result;
};

static void fib_c(void *varg) {
    fib_c_arg *f = static_cast<fib_c_arg *>(varg);
    if (f->n < 2) {
        f->result = f->n;
        return;
    }
    fib_c_arg a = {f->p, f->n - 1, 0}, b = {f->p, f->n - 2, 0};
    pool_join(f->p, fib_c, &a, fib_c, &b);
    f->result = a.result + b.result;
}

/* Runs f on a worker of p and returns the seconds it took. */
template <class F> static double on_worker(pool *p, F f) {
    struct box {
        F *fn;
        static void run(void *arg) { (*static_cast<box *>(arg)->fn)(); }
    } b = {&f};
    double t0 = now_s();
    pool_call_on_worker(p, &box::run, &b);
    return now_s() - t0;
}

/* ---- tree ---- */

struct node {
    long value;
    node *left, *right;
};

static node *tree_build(int depth, long *next) {
    if (depth == 0) return nullptr;
    node *t = new node;
    t->value = (*next)++;
    t->left = tree_build(depth - 1, next);
    t->right = tree_build(depth - 1, next);
    return t;
}

static void tree_free(node *t) {
    if (!t) return;
    tree_free(t->left);
    tree_free(t->right);
    delete t;
}

static long tree_natural(const node *t) {
    return t ? t->value + tree_natural(t->left) + tree_natural(t->right) : 0;
}

static long tree_cpp(pool *p, const node *t) {
    if (!t) return 0;
    long a, b;
    pool_cpp::join(
        p, [&] { a = tree_cpp(p, t->left); }, [&] { b = tree_cpp(p, t->right); });
    return t->value + a + b;
}

/* ---- orders ---- */

/* Keys in the orders that wear a quicksort down, by name: the input of
   the "orders" workload. */
static const char *const order_names[] = {"sorted",   "reversed", "organ-pipe",
                                          "sawtooth", "outliers", "alternating"};

static std::vector<uint32_t> order_keys(int order, size_t n) {
    std::vector<uint32_t> v(n);
    for (size_t i = 0; i < n; i++) {
        uint32_t up = (uint32_t)i, down = (uint32_t)(n - i);
        switch (order) {
        case 0:
            v[i] = up;
            break;
        case 1:
            v[i] = down;
            break;
        case 2:
            v[i] = i < n / 2 ? up : down;
            break;
        case 3:
            v[i] = up % 1000;
            break;
        case 4:
            v[i] = i % 1000 ? up : down;
            break; /* sorted, every 1000th key misplaced */
        default:
            v[i] = i & 1 ? up : down;
            break;
        }
    }
    return v;
}

/* ---- main ---- */

int main(int argc, char **argv) {
    int runs = 7, quick = 0;
    std::vector<int> threads;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "-r") && i + 1 < argc) runs = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "-q")) quick = 1;
        else if (std::atoi(argv[i]) > 0) threads.push_back(std::atoi(argv[i]));
        else {
            std::fprintf(stderr, "usage: cpp-bench [-r RUNS] [-q] [THREADS...]\n");
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    if (threads.empty()) threads = {1, 2};
    if (quick) fib_n = 20;
    const int tree_depth = quick ? 12 : 20;
    const size_t sort_n = quick ? 100000 : 10000000;
    const size_t order_n = quick ? 10000 : 1000000;
    std::vector<std::vector<uint32_t>> orders;
    for (size_t o = 0; o < sizeof order_names / sizeof *order_names; o++)
        orders.push_back(order_keys((int)o, order_n));

    std::vector<pool *> pools;
    for (int t : threads) {
        pool_config cfg = {};
        cfg.num_threads = t;
        pool *p;
        if (pool_create(&p, &cfg) != 0) return 1;
        pools.push_back(p);
    }

    long next = 1;
    node *tree = tree_build(tree_depth, &next);
    long tree_expected = (next - 1) * next / 2;
    long fib_expected = fib_natural(fib_n);

    std::vector<uint32_t> input(sort_n), sorted, work;
    uint64_t x = 88172645463325252ull;
    for (auto &e : input) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        e = (uint32_t)x;
    }
    sorted = input;
    std::sort(sorted.begin(), sorted.end());

    /* [variant] -> times */
    std::vector<std::string> names;
    std::vector<std::vector<double>> times;
    auto record = [&](const std::string &name, double t) {
        size_t i = std::find(names.begin(), names.end(), name) - names.begin();
        if (i == names.size()) {
            names.push_back(name);
            times.emplace_back();
        }
        times[i].push_back(t);
    };

    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        if (fib_natural(fib_n) != fib_expected) fail("fib natural");
        record("fib natural", now_s() - t0);
        t0 = now_s();
        if (tree_natural(tree) != tree_expected) fail("tree natural");
        record("tree natural", now_s() - t0);
        work = input;
        t0 = now_s();
        std::sort(work.begin(), work.end());
        record("sort std::sort", now_s() - t0);
        if (work != sorted) fail("std::sort");

        for (size_t k = 0; k < pools.size(); k++) {
            pool *p = pools[k];
            std::string at = " " + std::to_string(threads[k]) + "t";
            long got = 0;
            record("fib pool_cpp::join" + at, on_worker(p, [&] { got = fib_cpp(p, fib_n); }));
            if (got != fib_expected) fail("fib pool_cpp::join");
            fib_c_arg c = {p, fib_n, 0};
            record("fib C pool_join" + at, on_worker(p, [&] { fib_c(&c); }));
            if (c.result != fib_expected) fail("fib C pool_join");
            record("tree pool_cpp::join" + at, on_worker(p, [&] { got = tree_cpp(p, tree); }));
            if (got != tree_expected) fail("tree pool_cpp::join");

            work = input;
            t0 = now_s();
            pool_cpp::sort(p, work.begin(), work.end());
            record("sort pool_cpp::sort" + at, now_s() - t0);
            if (work != sorted) fail("pool_cpp::sort");
#ifdef BENCH_TBB
            {
                tbb::global_control control(tbb::global_control::max_allowed_parallelism,
                                            (size_t)threads[k]);
                tbb::task_arena arena(threads[k]);
                work = input;
                t0 = now_s();
                arena.execute([&] { tbb::parallel_sort(work.begin(), work.end()); });
                record("sort tbb::parallel_sort" + at, now_s() - t0);
                if (work != sorted) fail("tbb::parallel_sort");
            }
#endif
#ifdef _OPENMP
            omp_set_num_threads(threads[k]);
            work = input;
            t0 = now_s();
            __gnu_parallel::sort(work.begin(), work.end());
            record("sort __gnu_parallel::sort" + at, now_s() - t0);
            if (work != sorted) fail("__gnu_parallel::sort");
#endif
        }

        for (size_t o = 0; o < orders.size(); o++) {
            std::vector<uint32_t> want = orders[o];
            std::sort(want.begin(), want.end());
            work = orders[o];
            t0 = now_s();
            std::sort(work.begin(), work.end());
            record(std::string(order_names[o]) + " std::sort", now_s() - t0);
            for (size_t k = 0; k < pools.size(); k++) {
                work = orders[o];
                t0 = now_s();
                pool_cpp::sort(pools[k], work.begin(), work.end());
                record(std::string(order_names[o]) + " pool_cpp::sort " +
                           std::to_string(threads[k]) + "t",
                       now_s() - t0);
                if (work != want) fail("pool_cpp::sort of ordered keys");
            }
        }
    }

    std::printf("pool.h C++ interface, medians of %d interleaved runs (ms); ratios against the "
                "serial baseline of the same workload, measured in the same runs\n",
                runs);
    for (size_t i = 0; i < names.size(); i++) {
        const std::string &n = names[i];
        std::string workload = n.substr(0, n.find(' '));
        size_t b = std::find(names.begin(), names.end(), workload + " natural") - names.begin();
        if (b == names.size())
            b = std::find(names.begin(), names.end(), workload + " std::sort") - names.begin();
        double m = median(times[i]), mb = median(times[b]);
        std::printf("  %-34s %10.3f ms  %6.2fx serial\n", n.c_str(), m * 1e3, m / mb);
    }
    tree_free(tree);
    for (pool *p : pools) pool_destroy(p);
    return 0;
}
