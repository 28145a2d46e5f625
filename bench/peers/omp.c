/* bench/peers/omp.c -- the eight workloads of bench/peers/workloads.h on OpenMP tasks.
 *
 * Built twice: `gcc -fopenmp` links GNU's libgomp, `clang -fopenmp` LLVM's libomp. Nothing is
 * tuned: OMP_WAIT_POLICY, GOMP_SPINCOUNT, KMP_BLOCKTIME and the rest are the runtime's defaults
 * (bench/peers/run.sh unsets them and records what the runtime reports with OMP_DISPLAY_ENV).
 *
 *     gcc -O3 -fopenmp bench/peers/omp.c -o omp-bench
 *     ./omp-bench WORKLOAD THREADS [SIZE]
 *
 * omp_set_num_threads(THREADS): a team is the main thread plus THREADS - 1 others. The fork-join
 * workloads run in one `parallel` region whose `single` construct starts the recursion; a join is
 * `task` for the first half, the second half inline, `taskwait` (the spec's fib example makes
 * both halves tasks; one inline is the same as every other runtime's join here and cheaper).
 * The loop is `parallel for reduction(+)` with the static schedule. OpenMP has no way to hand a
 * task to a team from a thread outside it, so in the submit and wake workloads the submitting
 * thread is the `master` thread of a parallel region (which is the main thread) and the other
 * threads of the team wait for tasks at the region's closing barrier.
 */
#include <omp.h>

#include "workloads.h"

#ifdef __clang__
static const char *rt_name(void) { return "llvm-omp"; }
#else
static const char *rt_name(void) { return "gnu-omp"; }
#endif

static void rt_init(int threads) {
    omp_set_dynamic(0);
    omp_set_num_threads(threads);
}

static void rt_fini(void) {}

/* ---- fib ---- */

static uint64_t fib(unsigned n) {
    uint64_t a, b;

    if (n < 2) return n;
#pragma omp task shared(a)
    a = fib(n - 1);
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

static uint64_t rt_fib(unsigned n) {
    uint64_t r = 0;
#pragma omp parallel
#pragma omp single
    r = fib(n);
    return r;
}

/* ---- nqueens: one task per legal column, then taskwait ---- */

static void queens(struct wl_queens *q) {
    struct wl_queens children[16];
    uint32_t free, k = 0, i;

    if (wl_queens_leaf(q)) return;
    free = wl_queens_free(q);
    while (free) {
        struct wl_queens *c = &children[k++];
        wl_queens_child(q, &free, c);
#pragma omp task firstprivate(c)
        queens(c);
    }
#pragma omp taskwait
    for (i = 0; i < k; i++) wl_queens_add(q, &children[i]);
}

static void rt_nqueens(struct wl_queens *root) {
#pragma omp parallel
#pragma omp single
    queens(root);
}

/* ---- utree: the child range halved, the left half a task ---- */

static void utree_walk(uint64_t id, uint32_t depth, struct wl_subtree *t);

static void utree_range(struct wl_range *r) {
    struct wl_range left, right;

    if (r->count == 1) {
        utree_walk(r->first_id, r->depth, &r->total);
        return;
    }
    wl_range_split(r, &left, &right);
#pragma omp task shared(left)
    utree_range(&left);
    utree_range(&right);
#pragma omp taskwait
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
#pragma omp parallel
#pragma omp single
    utree_walk(WL_UTREE_ROOT, 0, out);
}

/* ---- quicksort ---- */

static void sort(uint32_t *a, size_t n) {
    size_t k;

    if (n < WL_INSERTION_SORT_BELOW) {
        wl_insertion_sort(a, n);
        return;
    }
    k = wl_partition(a, n);
#pragma omp task
    sort(a, k);
    sort(a + k, n - k);
#pragma omp taskwait
}

static void rt_sort(uint32_t *a, size_t n) {
#pragma omp parallel
#pragma omp single
    sort(a, n);
}

/* ---- sum: parallel for with a reduction ---- */

static uint64_t rt_sum(const uint32_t *a, size_t n) {
    uint64_t s = 0;
    size_t i;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (i = 0; i < n; i++) s += a[i];
    return s;
}

/* ---- submit: n tasks from the master thread, then taskwait ---- */

static void rt_submit(uint32_t *runs, size_t n) {
#pragma omp parallel
#pragma omp master
    {
        size_t i;
        for (i = 0; i < n; i++) {
#pragma omp task firstprivate(i)
            wl_tiny_run(runs, i);
        }
#pragma omp taskwait
    }
}

/* ---- wake: one task per round from the master thread ---- */

static void rt_wake(struct wl_probe *probes, int rounds) {
#pragma omp parallel
#pragma omp master
    {
        int i;
        for (i = 0; i < rounds; i++) {
            if (!wl_wake_gap(probes, i)) {
#pragma omp taskwait
            }
            probes[i].submit_ns = wl_now_ns();
#pragma omp task firstprivate(i)
            wl_probe_run(&probes[i]);
        }
#pragma omp taskwait
    }
}
