/* bench/peers/workloads.h -- the eight workloads of issue 5, shared by the C and C++ programs
 * that run them on one runtime each (pool_h.c, omp.c built by gcc and by clang, tbb.cpp). The
 * Rust program (rayon/src/main.rs) re-implements this file line by line; bench/peers/run.sh runs
 * them all and compares their checksums, so a difference in meaning shows up as a mismatch.
 *
 * A program includes this header once (after pool.h, for pool_h.c: pool.h may set feature-test
 * macros, which only work before the first system header) and defines the rt_* functions
 * declared below. This header defines main():
 *
 *     PROGRAM WORKLOAD THREADS [SIZE]
 *
 * runs WORKLOAD on a runtime set up for THREADS threads and prints one line per metric:
 *
 *     metric=fib runtime=pool.h threads=2 size=30 value=5.912 unit=ms runs=10 min=5.801
 * checksum=832040
 *
 * value is the median of `runs` timed runs, which follow one untimed warm-up run in the same
 * process; timed runs repeat until WL_MAX_RUNS or until they add up to WL_BUDGET_NS. Every run is
 * checked (exit status 1 and a message on stderr if one is wrong). The driver takes the median of
 * these values over its repetitions.
 *
 * The workloads, exactly (SIZE is the number in parentheses; the default is the size):
 *
 *  fib (30)        fib(n) by naive recursion, both calls forked at every n >= 2, no cutoff: the
 *                  runtime's join. Checksum: fib(n) (832040).
 *  nqueens (11)    N-queens by backtracking on bit masks (wl_queens_* below). Every call with
 *                  row < N makes one task per legal column and waits for all of them (no cutoff:
 *                  the calls at row == N are tasks too). Checksum: solutions/calls (2680/166926).
 *  utree (34)      an implicit unbalanced tree, SIZE its maximum depth (wl_utree_* below;
 *                  6,341,134 nodes at 34). A node visits its children by halving the child range
 *                  with the runtime's join, so every child is its own task. Checksum: nodes + sum
 *                  of every node's work hash, mod 2^64.
 *  quicksort (10000000)  SIZE xorshift32 numbers (wl_fill), sorted by median-of-three Hoare
 *                  quicksort forking both halves with the runtime's join, insertion sort below 32.
 *                  Checked sorted and a permutation; checksum sum((i + 1) * a[i]) mod 2^64.
 *  sum (100000000) the sum of SIZE xorshift32 numbers with the runtime's parallel loop.
 *                  Checksum: the sum.
 *  submit (1000000) SIZE tiny independent tasks created one by one by the main thread (the
 *                  thread that called main(); in OpenMP the `master` thread of a parallel region,
 *                  which is that thread), then a wait for all of them. Task i adds 1 to runs[i];
 *                  every runs[i] must be 1 afterwards. Checksum: SIZE.
 *  wake (2000)     SIZE rounds of {sleep 2 ms, so the runtime goes idle; from the main thread
 *                  record the time and submit one task; the task records when it starts}. The
 *                  next round's sleep follows the submission at once; after it the previous task
 *                  must have run (if not, the main thread waits for it: with the runtime's wait
 *                  where it has one, OpenMP's taskwait and TBB's task_group::wait, which may run
 *                  the task on the main thread itself; else, pool.h and Rayon, by yielding until
 *                  a worker has run it). Metrics: median and p99
 *                  of start - submit in microseconds, and the CPU time that every thread except
 *                  the main one burned per second of the rounds (a spinning runtime shows here).
 *                  Checksum: the number of rounds whose task ran.
 *  floor (2000)    not a workload: the wake rounds handed to one plain thread blocked on a
 *                  pthread condition variable (a futex on Linux) -- the operating system's floor
 *                  for waking a sleeping thread, which any runtime whose threads sleep pays.
 *                  Metrics floor_median, floor_p99, floor_cpu, runtime "os-floor"; run.sh runs it
 *                  with the pool.h program.
 *  idlefloor (1000) not a workload either: idle's SIZE ms of sleep in a process whose runtime
 *                  never ran (no thread started): what measuring costs. Metric floor_idle, runtime
 *                  "os-floor".
 *  idle (1000)     a burst of fib(24) from the main thread, repeated for 300 ms (30 ms when SIZE
 *                  is below 1000), then SIZE ms of sleep in the main thread: metric the CPU time
 *                  of the whole process during the sleep, in milliseconds per second. Checksum:
 *                  fib(24) (46368).
 *
 * Times are CLOCK_MONOTONIC, which all threads share; CPU times CLOCK_PROCESS_CPUTIME_ID (every
 * thread of the process) and CLOCK_THREAD_CPUTIME_ID.
 *
 * The C here must also be valid C++ (tbb.cpp includes it), hence the casts on malloc.
 */
#ifndef WORKLOADS_H
#define WORKLOADS_H

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__) || defined(__clang__)
#define WL_NOINLINE __attribute__((noinline))
#define WL_MAYBE_UNUSED __attribute__((unused))
#else
#define WL_NOINLINE
#define WL_MAYBE_UNUSED
#endif

#define WL_MAX_RUNS 10
#define WL_BUDGET_NS 500000000u     /* timed runs stop once they add up to 0.5 s */
#define WL_WAKE_GAP_NS 2000000u     /* wake: 2 ms of sleep before each submission */
#define WL_IDLE_BURST_NS 300000000u /* idle: 300 ms of fib(24) before the idle period */
#define WL_IDLE_BURST_FIB 24u
#define WL_INSERTION_SORT_BELOW 32u
#define WL_SEED 2463534242u /* xorshift32's state before the first number */
#define WL_UTREE_ROOT 53u
#define WL_UTREE_MAX_CHILDREN 3u
#define WL_UTREE_WORK_ROUNDS 22

/* Known checksums at the default sizes (also printed by bench/utree.c, quicksort.c, sum.c). */
#define WL_UTREE_CHECKSUM_34 UINT64_C(0xf54e6cb5a24a3c78)
#define WL_QUICKSORT_CHECKSUM_10M UINT64_C(0x6232d0320638d099)
#define WL_SUM_100M UINT64_C(214739865049436510)

/* ---- what each runtime's program defines --------------------------------------------------- */

/* A pool.h benchmark under bench/ that only wants the workloads' definitions (input, checks,
 * serial pieces) defines WL_WORKLOADS_ONLY first: then there is no harness and no rt_*. */
#ifdef WL_WORKLOADS_ONLY
#define WL_WHO() "bench"
#else
#define WL_WHO() rt_name()

struct wl_queens;
struct wl_subtree;
struct wl_probe;

static const char *rt_name(void); /* as printed: "pool.h", "tbb", ... */
static void rt_init(int threads); /* set the runtime up for `threads` threads */
static void rt_fini(void);
static uint64_t rt_fib(unsigned n);                       /* fib(n) forking at every call */
static void rt_nqueens(struct wl_queens *root);           /* solve the root, one task per child */
static void rt_utree(struct wl_subtree *out);             /* walk the tree from the root */
static void rt_sort(uint32_t *a, size_t n);               /* quicksort, join on both halves */
static uint64_t rt_sum(const uint32_t *a, size_t n);      /* with the runtime's parallel loop */
static void rt_submit(uint32_t *runs, size_t n);          /* n tasks from this thread: task i does
                                                             wl_tiny_run(runs, i); wait for all */
static void rt_wake(struct wl_probe *probes, int rounds); /* the wake rounds: see wl_wake_* */
#endif

/* ---- clocks ---------------------------------------------------------------------------------- */

static inline uint64_t wl_clock_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t wl_now_ns(void) { return wl_clock_ns(CLOCK_MONOTONIC); }
static inline uint64_t wl_cpu_ns(void) { return wl_clock_ns(CLOCK_PROCESS_CPUTIME_ID); }
static inline uint64_t wl_thread_cpu_ns(void) { return wl_clock_ns(CLOCK_THREAD_CPUTIME_ID); }

static inline void wl_sleep_ns(uint64_t ns) {
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static WL_MAYBE_UNUSED void wl_fail(const char *fmt, const char *what, uint64_t got,
                                    uint64_t want) {
    fprintf(stderr, "%s: FAILED: ", WL_WHO());
    fprintf(stderr, fmt, what, got, want);
    fputc('\n', stderr);
    exit(1);
}

/* ---- fib ---------------------------------------------------------------------------------------
 */

static WL_MAYBE_UNUSED uint64_t wl_fib_expected(unsigned n) {
    uint64_t a = 0, b = 1;
    while (n--) {
        uint64_t t = a + b;
        a = b;
        b = t;
    }
    return a;
}

/* ---- nqueens -----------------------------------------------------------------------------------
 */

/* A partial board with queens on rows 0..row-1: the columns taken, and the squares of row `row`
 * attacked along the two diagonals, as N-bit masks. After the solve: the solutions below it and
 * the number of solve calls below it, itself included. */
struct wl_queens {
    uint32_t row, cols, diag_l, diag_r;
    uint64_t solutions, calls;
};

static WL_MAYBE_UNUSED uint32_t wl_queens_n; /* board size */

/* Starts solve(q): returns 1 if q is a full board (then q is solved: 1 solution, 1 call);
 * otherwise sets q up to receive its children's results and returns 0. */
static inline int wl_queens_leaf(struct wl_queens *q) {
    q->calls = 1;
    q->solutions = q->row == wl_queens_n;
    return q->row == wl_queens_n;
}

/* The legal columns of row q->row, as a mask. */
static inline uint32_t wl_queens_free(const struct wl_queens *q) {
    return ~(q->cols | q->diag_l | q->diag_r) & ((1u << wl_queens_n) - 1);
}

/* Takes the lowest legal column out of *free and makes it the child c of q. */
static inline void wl_queens_child(const struct wl_queens *q, uint32_t *free, struct wl_queens *c) {
    uint32_t mask = (1u << wl_queens_n) - 1;
    uint32_t b = *free & (0u - *free);
    *free ^= b;
    c->row = q->row + 1;
    c->cols = q->cols | b;
    c->diag_l = ((q->diag_l | b) << 1) & mask;
    c->diag_r = (q->diag_r | b) >> 1;
    c->solutions = 0;
    c->calls = 0;
}

static inline void wl_queens_add(struct wl_queens *q, const struct wl_queens *child) {
    q->solutions += child->solutions;
    q->calls += child->calls;
}

static WL_MAYBE_UNUSED void wl_queens_serial(struct wl_queens *q) {
    struct wl_queens c;
    uint32_t free;

    if (wl_queens_leaf(q)) return;
    free = wl_queens_free(q);
    while (free) {
        wl_queens_child(q, &free, &c);
        wl_queens_serial(&c);
        wl_queens_add(q, &c);
    }
}

/* Solutions for N = 0..15 (OEIS A000170): the serial count is checked against it. */
static WL_MAYBE_UNUSED const uint64_t wl_queens_known[16] = {
    1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184};

/* ---- utree -------------------------------------------------------------------------------------
 */

static inline uint64_t wl_splitmix64(uint64_t x) {
    uint64_t z = x + UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

struct wl_subtree {
    uint64_t nodes, work_sum;
};

static WL_MAYBE_UNUSED uint32_t wl_utree_max_depth;

/* Visits node (id, depth): sets *t to the node alone, *children to its child count, and returns
 * h, its hash: the children are the nodes (h + 1 + i, depth + 1), i < *children. */
static inline uint64_t wl_utree_visit(uint64_t id, uint32_t depth, uint32_t *children,
                                      struct wl_subtree *t) {
    uint64_t h = wl_splitmix64(id), work = h;
    int r;

    for (r = 1; r < WL_UTREE_WORK_ROUNDS; r++) work = wl_splitmix64(work);
    *children = depth < wl_utree_max_depth ? (uint32_t)(h % (WL_UTREE_MAX_CHILDREN + 1)) : 0;
    t->nodes = 1;
    t->work_sum = work;
    return h;
}

/* Children first_id .. first_id + count - 1, all at `depth`, and their subtrees' total. A range
 * of one child visits it; a longer one is split in two halves, run with the runtime's join. */
struct wl_range {
    uint64_t first_id;
    uint32_t count, depth;
    struct wl_subtree total;
};

static inline void wl_range_split(const struct wl_range *r, struct wl_range *left,
                                  struct wl_range *right) {
    left->first_id = r->first_id;
    left->count = r->count / 2;
    right->first_id = r->first_id + left->count;
    right->count = r->count - left->count;
    left->depth = right->depth = r->depth;
}

static inline void wl_subtree_add(struct wl_subtree *t, const struct wl_subtree *u) {
    t->nodes += u->nodes;
    t->work_sum += u->work_sum;
}

static WL_MAYBE_UNUSED void wl_utree_serial(uint64_t id, uint32_t depth, struct wl_subtree *t) {
    uint32_t children, i;
    uint64_t h = wl_utree_visit(id, depth, &children, t);

    for (i = 0; i < children; i++) {
        struct wl_subtree c;
        wl_utree_serial(h + 1 + i, depth + 1, &c);
        wl_subtree_add(t, &c);
    }
}

/* ---- quicksort and sum input -------------------------------------------------------------------
 */

struct wl_sums {
    uint64_t sum;
    uint32_t xor_;
};

/* Fills a[0..n) from xorshift32 (Marsaglia 2003) seeded with WL_SEED; returns their sum and xor. */
static WL_MAYBE_UNUSED struct wl_sums wl_fill(uint32_t *a, size_t n) {
    struct wl_sums s = {0, 0};
    uint32_t x = WL_SEED;
    size_t i;

    for (i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        a[i] = x;
        s.sum += x;
        s.xor_ ^= x;
    }
    return s;
}

static inline void wl_swap(uint32_t *x, uint32_t *y) {
    uint32_t t = *x;
    *x = *y;
    *y = t;
}

static inline void wl_insertion_sort(uint32_t *a, size_t n) {
    size_t i, j;
    for (i = 1; i < n; i++) {
        uint32_t v = a[i];
        for (j = i; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Median-of-three Hoare partition of a[0..n), n >= 3. Returns k, 0 < k < n, with
 * a[0..k) <= a[k..n). */
static inline size_t wl_partition(uint32_t *a, size_t n) {
    size_t mid = (n - 1) / 2, i = 0, j = n - 1;
    uint32_t pivot;

    if (a[mid] < a[0]) wl_swap(&a[mid], &a[0]);
    if (a[n - 1] < a[0]) wl_swap(&a[n - 1], &a[0]);
    if (a[n - 1] < a[mid]) wl_swap(&a[n - 1], &a[mid]);
    pivot = a[mid];
    for (;;) {
        while (a[i] < pivot) i++;
        while (a[j] > pivot) j--;
        if (i >= j) return j + 1;
        wl_swap(&a[i++], &a[j--]);
    }
}

/* Exits unless a[0..n) is non-decreasing with the input's sum and xor; returns
 * sum((i + 1) * a[i]) mod 2^64. */
static WL_MAYBE_UNUSED uint64_t wl_check_sorted(const uint32_t *a, size_t n, struct wl_sums in) {
    struct wl_sums out = {0, 0};
    uint64_t checksum = 0;
    size_t i;

    for (i = 0; i < n; i++) {
        if (i > 0 && a[i - 1] > a[i])
            wl_fail("%s: a[%" PRIu64 "] > a[%" PRIu64 "]", "quicksort", i - 1, i);
        out.sum += a[i];
        out.xor_ ^= a[i];
        checksum += (uint64_t)(i + 1) * a[i];
    }
    if (out.sum != in.sum || out.xor_ != in.xor_)
        wl_fail("%s: the elements changed: sum %" PRIu64 ", want %" PRIu64, "quicksort", out.sum,
                in.sum);
    return checksum;
}

/* The loop of the sum workload, for runtimes that call a function per chunk (OpenMP's
 * `parallel for` has the same loop in its body instead). */
static WL_NOINLINE WL_MAYBE_UNUSED uint64_t wl_sum_range(const uint32_t *a, size_t lo, size_t hi) {
    uint64_t s = 0;
    size_t i;
    for (i = lo; i < hi; i++) s += a[i];
    return s;
}

/* The body of the submit workload's task i (serial.c calls it in a plain loop). */
static inline void wl_tiny_run(uint32_t *runs, size_t i) { runs[i]++; }

#ifndef WL_WORKLOADS_ONLY
/* ---- submit and wake ---------------------------------------------------------------------------
 */

/* One wake round: submit_ns is set by the main thread just before it submits; the task sets
 * start_ns first thing, then done. */
struct wl_probe {
    uint64_t submit_ns, start_ns;
    uint32_t done;
};

static inline void wl_probe_run(struct wl_probe *p) {
    p->start_ns = wl_now_ns();
    __atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
}

static inline int wl_probe_done(const struct wl_probe *p) {
    return __atomic_load_n(&p->done, __ATOMIC_ACQUIRE) != 0;
}

/* Every runtime's round i starts with this: sleep 2 ms; returns whether round i - 1's task has
 * run (if not, the runtime waits for it before it submits round i's). */
static inline int wl_wake_gap(const struct wl_probe *probes, int i) {
    wl_sleep_ns(WL_WAKE_GAP_NS);
    return i == 0 || wl_probe_done(&probes[i - 1]);
}

/* ---- the harness -------------------------------------------------------------------------------
 */

static int wl_threads;
static uint64_t wl_size;

static int wl_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts v and returns its q-quantile by nearest rank (q = 0.5: the upper median). */
static uint64_t wl_quantile(uint64_t *v, size_t n, double q) {
    size_t rank = (size_t)(q * (double)n);
    qsort(v, n, sizeof *v, wl_cmp_u64);
    return v[rank < n ? rank : n - 1];
}

static const char *wl_runtime; /* as printed: rt_name(), or "os-floor" */

static void wl_print(const char *metric, double value, const char *unit, int runs, double min,
                     const char *checksum) {
    printf("metric=%s runtime=%s threads=%d size=%" PRIu64 " value=%.4f unit=%s runs=%d min=%.4f "
           "checksum=%s\n",
           metric, wl_runtime, wl_threads, wl_size, value, unit, runs, min, checksum);
    fflush(stdout);
}

/* The state of one workload between its runs. */
struct wl_job {
    unsigned which;
    uint32_t *a; /* quicksort, sum: the array; submit: the run counts */
    size_t n;
    struct wl_sums input; /* quicksort: the input's sums; sum: the expected sum */
    char checksum[64];
};

enum {
    WL_FIB,
    WL_NQUEENS,
    WL_UTREE,
    WL_QUICKSORT,
    WL_SUM,
    WL_SUBMIT,
    WL_WAKE,
    WL_IDLE,
    WL_FLOOR,
    WL_IDLEFLOOR,
    WL_COUNT
};
static const char *const wl_names[WL_COUNT] = {
    "fib", "nqueens", "utree", "quicksort", "sum", "submit", "wake", "idle", "floor", "idlefloor"};
static const uint64_t wl_default_size[WL_COUNT] = {30,      11,   34,   10000000, 100000000,
                                                   1000000, 2000, 1000, 2000,     1000};

/* Untimed preparation of one run. */
static void wl_prepare(struct wl_job *j) {
    if (j->which == WL_QUICKSORT) j->input = wl_fill(j->a, j->n);
    else if (j->which == WL_SUBMIT) memset(j->a, 0, j->n * sizeof *j->a);
}

/* One timed run of a fork-join, loop or submit workload; checks it and sets j->checksum. */
static uint64_t wl_run_once(struct wl_job *j) {
    uint64_t t0, t1, got, want;
    char buf[64];
    size_t i;

    wl_prepare(j);
    t0 = wl_now_ns();
    switch (j->which) {
    case WL_FIB:
        got = rt_fib((unsigned)wl_size);
        t1 = wl_now_ns();
        want = wl_fib_expected((unsigned)wl_size);
        if (got != want) wl_fail("%s = %" PRIu64 ", want %" PRIu64, "fib", got, want);
        snprintf(buf, sizeof buf, "%" PRIu64, got);
        break;
    case WL_NQUEENS: {
        struct wl_queens root, ref;
        memset(&root, 0, sizeof root);
        rt_nqueens(&root);
        t1 = wl_now_ns();
        memset(&ref, 0, sizeof ref);
        wl_queens_serial(&ref);
        if (ref.solutions != wl_queens_known[wl_queens_n])
            wl_fail("%s: the serial count is %" PRIu64 ", want %" PRIu64, "nqueens", ref.solutions,
                    wl_queens_known[wl_queens_n]);
        if (root.solutions != ref.solutions)
            wl_fail("%s: %" PRIu64 " solutions, want %" PRIu64, "nqueens", root.solutions,
                    ref.solutions);
        if (root.calls != ref.calls)
            wl_fail("%s: %" PRIu64 " calls, want %" PRIu64, "nqueens", root.calls, ref.calls);
        snprintf(buf, sizeof buf, "%" PRIu64 "/%" PRIu64, root.solutions, root.calls);
        break;
    }
    case WL_UTREE: {
        struct wl_subtree t, ref;
        rt_utree(&t);
        t1 = wl_now_ns();
        got = t.nodes + t.work_sum;
        if (wl_utree_max_depth == 34) {
            want = WL_UTREE_CHECKSUM_34;
        } else {
            wl_utree_serial(WL_UTREE_ROOT, 0, &ref);
            want = ref.nodes + ref.work_sum;
        }
        if (got != want)
            wl_fail("%s: checksum %016" PRIx64 ", want %016" PRIx64, "utree", got, want);
        snprintf(buf, sizeof buf, "%016" PRIx64, got);
        break;
    }
    case WL_QUICKSORT:
        rt_sort(j->a, j->n);
        t1 = wl_now_ns();
        got = wl_check_sorted(j->a, j->n, j->input);
        if (j->n == 10000000 && got != WL_QUICKSORT_CHECKSUM_10M)
            wl_fail("%s: checksum %016" PRIx64 ", want %016" PRIx64, "quicksort", got,
                    WL_QUICKSORT_CHECKSUM_10M);
        snprintf(buf, sizeof buf, "%016" PRIx64, got);
        break;
    case WL_SUM:
        got = rt_sum(j->a, j->n);
        t1 = wl_now_ns();
        if (got != j->input.sum)
            wl_fail("%s = %" PRIu64 ", want %" PRIu64, "sum", got, j->input.sum);
        snprintf(buf, sizeof buf, "%" PRIu64, got);
        break;
    case WL_SUBMIT:
        rt_submit(j->a, j->n);
        t1 = wl_now_ns();
        for (i = 0; i < j->n; i++)
            if (j->a[i] != 1)
                wl_fail("%s: task %" PRIu64 " ran %" PRIu64 " times", "submit", i, j->a[i]);
        snprintf(buf, sizeof buf, "%" PRIu64, (uint64_t)j->n);
        break;
    default:
        abort();
    }
    memcpy(j->checksum, buf, sizeof buf);
    return t1 - t0;
}

static void wl_timed(struct wl_job *j) {
    uint64_t ns[WL_MAX_RUNS], total = 0, min, median;
    int runs = 0;

    wl_run_once(j); /* warm-up: starts the threads, faults memory in */
    while (runs < WL_MAX_RUNS && (runs == 0 || total < WL_BUDGET_NS)) {
        ns[runs] = wl_run_once(j);
        total += ns[runs++];
    }
    median = wl_quantile(ns, (size_t)runs, 0.5);
    min = ns[0];
    wl_print(wl_names[j->which], (double)median / 1e6, "ms", runs, (double)min / 1e6, j->checksum);
}

/* The floor: a helper thread that sleeps on a condition variable until the main thread hands it a
 * probe. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct wl_probe *probe;
    int quit;
} wl_floor_state = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0};

static void *wl_floor_thread(void *arg) {
    (void)arg;
    pthread_mutex_lock(&wl_floor_state.lock);
    for (;;) {
        while (!wl_floor_state.probe && !wl_floor_state.quit)
            pthread_cond_wait(&wl_floor_state.cond, &wl_floor_state.lock);
        if (!wl_floor_state.probe) break;
        wl_probe_run(wl_floor_state.probe);
        wl_floor_state.probe = NULL;
    }
    pthread_mutex_unlock(&wl_floor_state.lock);
    return NULL;
}

/* wake's rounds, handed to wl_floor_thread. */
static void wl_floor_rounds(struct wl_probe *probes, int rounds) {
    int i;
    for (i = 0; i < rounds; i++) {
        if (!wl_wake_gap(probes, i))
            while (!wl_probe_done(&probes[i - 1])) sched_yield();
        probes[i].submit_ns = wl_now_ns();
        pthread_mutex_lock(&wl_floor_state.lock);
        wl_floor_state.probe = &probes[i];
        pthread_mutex_unlock(&wl_floor_state.lock);
        pthread_cond_signal(&wl_floor_state.cond);
    }
    while (rounds > 0 && !wl_probe_done(&probes[rounds - 1])) sched_yield();
}

/* The wake workload, or with `floor` set the same rounds on wl_floor_thread. */
static void wl_wake(int rounds, int floor) {
    void (*run_rounds)(struct wl_probe *, int) = floor ? wl_floor_rounds : rt_wake;
    const char *prefix = floor ? "floor" : "wake";
    char metric[32];
    pthread_t helper;
    struct wl_probe *probes = (struct wl_probe *)calloc((size_t)rounds, sizeof *probes);
    uint64_t *lat = (uint64_t *)malloc((size_t)rounds * sizeof *lat);
    uint64_t c0, c1, m0, m1, w0, w1, median, p99;
    char buf[32];
    int i, warm = rounds < 20 ? rounds : 20;
    double other_cpu_ms_per_s;

    if (!probes || !lat) {
        fprintf(stderr, "%s: out of memory\n", rt_name());
        exit(1);
    }
    if (floor && pthread_create(&helper, NULL, wl_floor_thread, NULL) != 0) {
        fprintf(stderr, "%s: pthread_create failed\n", rt_name());
        exit(1);
    }
    run_rounds(probes, warm); /* warm-up rounds: they start the runtime's threads */
    memset(probes, 0, (size_t)rounds * sizeof *probes);
    c0 = wl_cpu_ns();
    m0 = wl_thread_cpu_ns();
    w0 = wl_now_ns();
    run_rounds(probes, rounds);
    w1 = wl_now_ns();
    m1 = wl_thread_cpu_ns();
    c1 = wl_cpu_ns();
    for (i = 0; i < rounds; i++) {
        if (!wl_probe_done(&probes[i]) || probes[i].start_ns < probes[i].submit_ns)
            wl_fail("%s: round %" PRIu64 " did not run (start - submit: %" PRIu64 ")", "wake",
                    (uint64_t)i, probes[i].start_ns - probes[i].submit_ns);
        lat[i] = probes[i].start_ns - probes[i].submit_ns;
    }
    /* What every thread but this one burned, per second of the rounds. */
    other_cpu_ms_per_s = ((double)(c1 - c0) - (double)(m1 - m0)) / 1e6 / ((double)(w1 - w0) / 1e9);
    median = wl_quantile(lat, (size_t)rounds, 0.5);
    p99 = wl_quantile(lat, (size_t)rounds, 0.99);
    snprintf(buf, sizeof buf, "%d", rounds);
    snprintf(metric, sizeof metric, "%s_median", prefix);
    wl_print(metric, (double)median / 1e3, "us", rounds, (double)lat[0] / 1e3, buf);
    snprintf(metric, sizeof metric, "%s_p99", prefix);
    wl_print(metric, (double)p99 / 1e3, "us", rounds, (double)lat[0] / 1e3, buf);
    snprintf(metric, sizeof metric, "%s_cpu", prefix);
    wl_print(metric, other_cpu_ms_per_s, "ms/s", 1, other_cpu_ms_per_s, buf);
    if (floor) {
        pthread_mutex_lock(&wl_floor_state.lock);
        wl_floor_state.quit = 1;
        pthread_mutex_unlock(&wl_floor_state.lock);
        pthread_cond_signal(&wl_floor_state.cond);
        pthread_join(helper, NULL);
    }
    free(probes);
    free(lat);
}

/* idle, or with `floor` set only its sleep, the runtime untouched. */
static void wl_idle(uint64_t idle_ms, int floor) {
    uint64_t burst_ns = idle_ms >= 1000 ? WL_IDLE_BURST_NS : WL_IDLE_BURST_NS / 10;
    uint64_t start = wl_now_ns(), want = wl_fib_expected(WL_IDLE_BURST_FIB), got, c0, c1, w0, w1;
    char buf[32];
    double ms_per_s;

    do {
        got = floor ? want : rt_fib(WL_IDLE_BURST_FIB);
        if (got != want) wl_fail("%s: burst fib = %" PRIu64 ", want %" PRIu64, "idle", got, want);
    } while (!floor && wl_now_ns() - start < burst_ns);
    c0 = wl_cpu_ns();
    w0 = wl_now_ns();
    wl_sleep_ns(idle_ms * 1000000u);
    c1 = wl_cpu_ns();
    w1 = wl_now_ns();
    ms_per_s = (double)(c1 - c0) / 1e6 / ((double)(w1 - w0) / 1e9);
    snprintf(buf, sizeof buf, "%" PRIu64, got);
    wl_print(floor ? "floor_idle" : "idle", ms_per_s, "ms/s", 1, ms_per_s, buf);
}

static void wl_usage(void) {
    unsigned i;
    fprintf(stderr,
            "usage: %s-bench WORKLOAD THREADS [SIZE]\nworkloads (default size):", rt_name());
    for (i = 0; i < WL_COUNT; i++)
        fprintf(stderr, " %s (%" PRIu64 ")", wl_names[i], wl_default_size[i]);
    fprintf(stderr, "\n");
    exit(2);
}

int main(int argc, char **argv) {
    struct wl_job j;
    char *end;
    long t;
    unsigned which;

    if (argc < 3 || argc > 4) wl_usage();
    for (which = 0; which < WL_COUNT && strcmp(argv[1], wl_names[which]) != 0; which++) {
    }
    t = strtol(argv[2], &end, 10);
    if (which == WL_COUNT || *end || t < 1 || t > 4096) wl_usage();
    wl_threads = (int)t;
    wl_size = wl_default_size[which];
    if (argc == 4) {
        wl_size = strtoull(argv[3], &end, 10);
        if (*end || wl_size == 0) wl_usage();
    }
    if ((which == WL_FIB && wl_size > 45) || (which == WL_NQUEENS && wl_size > 15) ||
        (which == WL_UTREE && wl_size > 60) ||
        ((which == WL_WAKE || which == WL_FLOOR) && wl_size > 1000000)) {
        fprintf(stderr, "%s: size %" PRIu64 " too large for %s\n", rt_name(), wl_size,
                wl_names[which]);
        return 2;
    }

    memset(&j, 0, sizeof j);
    j.which = which;
    wl_queens_n = (uint32_t)wl_size;
    wl_utree_max_depth = (uint32_t)wl_size;
    if (which == WL_QUICKSORT || which == WL_SUM || which == WL_SUBMIT) {
        j.n = (size_t)wl_size;
        j.a = (uint32_t *)malloc(j.n * sizeof *j.a);
        if (!j.a) {
            fprintf(stderr, "%s: out of memory for %" PRIu64 " elements\n", rt_name(), wl_size);
            return 1;
        }
        if (which == WL_SUM) {
            j.input = wl_fill(j.a, j.n);
            if (j.n == 100000000 && j.input.sum != WL_SUM_100M)
                wl_fail("%s: the input sums to %" PRIu64 ", want %" PRIu64, "sum", j.input.sum,
                        WL_SUM_100M);
        }
    }

    wl_runtime = which == WL_FLOOR || which == WL_IDLEFLOOR ? "os-floor" : rt_name();
    rt_init(wl_threads);
    if (which == WL_WAKE || which == WL_FLOOR) wl_wake((int)wl_size, which == WL_FLOOR);
    else if (which == WL_IDLE || which == WL_IDLEFLOOR) wl_idle(wl_size, which == WL_IDLEFLOOR);
    else wl_timed(&j);
    rt_fini();
    free(j.a);
    return 0;
}

#endif /* WL_WORKLOADS_ONLY */
#endif /* WORKLOADS_H */
