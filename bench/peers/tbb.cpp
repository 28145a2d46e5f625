/* bench/peers/tbb.cpp -- the eight workloads of bench/peers/workloads.h on oneTBB.
 *
 *     g++ -O3 bench/peers/tbb.cpp -ltbb -o tbb-bench
 *     ./tbb-bench WORKLOAD THREADS [SIZE]
 *
 * A task_arena of THREADS slots (and a global_control allowing THREADS, so that THREADS may
 * exceed the CPU count); every workload runs inside arena.execute. In TBB the calling thread is
 * one of the arena's threads: it works on the fork-join workloads beside THREADS - 1 workers, and
 * in the submit workload it creates the tasks and then helps in task_group::wait, as TBB means it
 * to. Joins are parallel_invoke, the nqueens tasks and the submitted ones task_group::run, the
 * loop parallel_reduce with the default (auto) partitioner.
 */
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <functional>

#include "workloads.h"

static tbb::global_control *g_control;
static tbb::task_arena *g_arena;

static const char *rt_name(void) { return "tbb"; }

static void rt_init(int threads) {
    g_control =
        new tbb::global_control(tbb::global_control::max_allowed_parallelism, (size_t)threads);
    g_arena = new tbb::task_arena(threads);
    g_arena->initialize();
}

static void rt_fini(void) {
    delete g_arena;
    delete g_control;
}

/* ---- fib ---- */

static uint64_t fib(unsigned n) {
    uint64_t a, b;

    if (n < 2) return n;
    tbb::parallel_invoke([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
    return a + b;
}

static uint64_t rt_fib(unsigned n) {
    uint64_t r = 0;
    g_arena->execute([&] { r = fib(n); });
    return r;
}

/* ---- nqueens: a task_group per call, one run per legal column ---- */

static void queens(struct wl_queens *q) {
    struct wl_queens children[16];
    tbb::task_group g;
    uint32_t free, k = 0, i;

    if (wl_queens_leaf(q)) return;
    free = wl_queens_free(q);
    while (free) {
        struct wl_queens *c = &children[k++];
        wl_queens_child(q, &free, c);
        g.run([c] { queens(c); });
    }
    g.wait();
    for (i = 0; i < k; i++) wl_queens_add(q, &children[i]);
}

static void rt_nqueens(struct wl_queens *root) {
    g_arena->execute([&] { queens(root); });
}

/* ---- utree: the child range halved with parallel_invoke ---- */

static void utree_walk(uint64_t id, uint32_t depth, struct wl_subtree *t);

static void utree_range(struct wl_range *r) {
    struct wl_range left, right;

    if (r->count == 1) {
        utree_walk(r->first_id, r->depth, &r->total);
        return;
    }
    wl_range_split(r, &left, &right);
    tbb::parallel_invoke([&] { utree_range(&left); }, [&] { utree_range(&right); });
    r->total = left.total;
    wl_subtree_add(&r->total, &right.total);
}

static void utree_walk(uint64_t id, uint32_t depth, struct wl_subtree *t) {
    struct wl_range all;
    uint64_t h = wl_utree_visit(id, depth, &all.count, t);

    if (all.count == 0) return;
    all.first_id = h + 1;
    all.depth = depth + 1;
    utree_range(&all);
    wl_subtree_add(t, &all.total);
}

static void rt_utree(struct wl_subtree *out) {
    g_arena->execute([&] { utree_walk(WL_UTREE_ROOT, 0, out); });
}

/* ---- quicksort ---- */

static void sort(uint32_t *a, size_t n) {
    size_t k;

    if (n < WL_INSERTION_SORT_BELOW) {
        wl_insertion_sort(a, n);
        return;
    }
    k = wl_partition(a, n);
    tbb::parallel_invoke([=] { sort(a, k); }, [=] { sort(a + k, n - k); });
}

static void rt_sort(uint32_t *a, size_t n) {
    g_arena->execute([&] { sort(a, n); });
}

/* ---- sum: parallel_reduce ---- */

static uint64_t rt_sum(const uint32_t *a, size_t n) {
    uint64_t s = 0;
    g_arena->execute([&] {
        s = tbb::parallel_reduce(
            tbb::blocked_range<size_t>(0, n), (uint64_t)0,
            [a](const tbb::blocked_range<size_t> &r, uint64_t acc) {
                return acc + wl_sum_range(a, r.begin(), r.end());
            },
            std::plus<uint64_t>());
    });
    return s;
}

/* ---- submit: task_group::run n times from the main thread, then wait ---- */

static void rt_submit(uint32_t *runs, size_t n) {
    g_arena->execute([&] {
        tbb::task_group g;
        for (size_t i = 0; i < n; i++) g.run([runs, i] { wl_tiny_run(runs, i); });
        g.wait();
    });
}

/* ---- wake: task_group::run of one task per round from the main thread ---- */

static void rt_wake(struct wl_probe *probes, int rounds) {
    g_arena->execute([&] {
        tbb::task_group g;
        for (int i = 0; i < rounds; i++) {
            if (!wl_wake_gap(probes, i)) g.wait();
            probes[i].submit_ns = wl_now_ns();
            struct wl_probe *p = &probes[i];
            g.run([p] { wl_probe_run(p); });
        }
        g.wait();
    });
}
