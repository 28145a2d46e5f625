/* bench/nqueens.c -- many small scopes: N-queens by backtracking, one task per legal column.
 *
 *     usage: nqueens [THREADS]      default: 2 threads; BENCH_QUICK=1: N = 8
 *
 * The workload, exactly (to be re-implemented identically in other runtimes):
 *
 *   N = 11. A partial board with queens on rows 0..row-1 is three N-bit masks: `cols`, the
 *   columns taken, and `diag_l` / `diag_r`, the squares of row `row` attacked along the two
 *   diagonals. With mask = (1 << N) - 1:
 *
 *       solve(row, cols, diag_l, diag_r):
 *           if row == N: return 1                              -- a solution
 *           free = ~(cols | diag_l | diag_r) & mask
 *           for each set bit b of free, lowest first:          -- one child per legal column
 *               child = (row + 1, cols | b, ((diag_l | b) << 1) & mask, (diag_r | b) >> 1)
 *           return the sum of solve(child) over the children
 *
 *   starting from solve(0, 0, 0, 0). Parallel version: every call with row < N opens one scope,
 *   spawns one task per child -- the task carries its own copy of the child's four values and
 *   receives the child's result -- waits for the scope, then adds the results. There is no
 *   serial cutoff: the calls with row == N are tasks too, so the number of tasks is the number
 *   of solve calls minus the root, i.e. the number of ways to place 1..N non-attacking queens on
 *   the first rows: 166,925 for N = 11 (N = 8: 2,056).
 *
 *   Checksum: the number of solutions, 2680 for N = 11 (N = 8: 92), and the number of tasks
 *   above; both are checked on every run.
 *
 * Here the tasks are pool_tasks embedded in a struct, one array of up to N per call of solve, on
 * that call's stack: no allocation. The whole recursion starts with pool_call_on_worker from the
 * main thread so that it runs on the pool's workers. Two serial baselines run in the same rounds:
 * the natural code a C programmer writes (a recursive function of the four values that returns the
 * number of solutions below, at -O2; the ratios "x natural" are against it), and the same recursion
 * as the pool's, filling the same child array, calling each child directly instead of spawning it
 * ("plain"): the difference to the plain one is what the scopes cost.
 *
 * Timing as in bench/fib.c: one warm-up round, then RUNS rounds, each running the natural and
 * the plain recursion and the pool version; every timed run comes after a 20 ms pause (so the pool
 * is asleep, not spinning against the plain run) and one untimed run of the same variant (so the
 * timed run finds its workers awake and its caches warm). Reported: median and fastest run.
 *
 * Target (2 cores): pool, 2 threads <= 6 ms.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#include <stddef.h>

#define MAX_N 16
#define FULL_N 11
#define FULL_TASKS 166925u
#define QUICK_N 8
#define QUICK_TASKS 2056u
#define RUNS 9
#define QUICK_RUNS 3
#define SETTLE_NS 20000000u
#define TARGET_NS 6000000u

/* One call of solve: its arguments, and its results once it has run. In the pool version it is
 * also the task that runs it. */
struct queens {
    pool_task task;
    uint32_t row, cols, diag_l, diag_r;
    uint64_t solutions; /* solutions below this partial board */
    uint64_t calls;     /* calls of solve below it, this one included */
};

static uint32_t g_n; /* board size */
static pool *g_pool; /* the pool the scopes spawn into */

/* Fills children[] with the legal placements on the next row and returns how many there are. */
static uint32_t make_children(const struct queens *q, struct queens *children) {
    uint32_t mask = (1u << g_n) - 1;
    uint32_t free = ~(q->cols | q->diag_l | q->diag_r) & mask;
    uint32_t k = 0;

    while (free) {
        uint32_t b = free & (0u - free); /* lowest set bit */
        struct queens *c = &children[k++];
        pool_task blank = POOL_TASK_INIT(NULL);
        free ^= b;
        /* The whole task starts zeroed, not only run (which the pool version sets): the array is
         * on the stack, and pool_scope_spawn refuses with EBUSY a task whose private fields say
         * it is still queued. */
        c->task = blank;
        c->row = q->row + 1;
        c->cols = q->cols | b;
        c->diag_l = ((q->diag_l | b) << 1) & mask;
        c->diag_r = (q->diag_r | b) >> 1;
        c->solutions = 0;
        c->calls = 0;
    }
    return k;
}

static BENCH_NOINLINE void solve_plain(struct queens *q) {
    struct queens children[MAX_N];
    uint32_t k, i;

    q->calls = 1;
    if (q->row == g_n) {
        q->solutions = 1;
        return;
    }
    q->solutions = 0;
    k = make_children(q, children);
    for (i = 0; i < k; i++) solve_plain(&children[i]);
    for (i = 0; i < k; i++) {
        q->solutions += children[i].solutions;
        q->calls += children[i].calls;
    }
}

/* The natural serial code: solutions below a partial board, as a C programmer writes it. */
static uint64_t solve_natural(uint32_t row, uint32_t cols, uint32_t diag_l, uint32_t diag_r) {
    uint32_t mask = (1u << g_n) - 1, free = ~(cols | diag_l | diag_r) & mask;
    uint64_t solutions = 0;

    if (row == g_n) return 1;
    while (free) {
        uint32_t b = free & (0u - free);
        free ^= b;
        solutions +=
            solve_natural(row + 1, cols | b, ((diag_l | b) << 1) & mask, (diag_r | b) >> 1);
    }
    return solutions;
}

static void solve_task(pool_task *t);

static BENCH_NOINLINE void solve_pool(struct queens *q) {
    struct queens children[MAX_N];
    pool_scope scope;
    uint32_t k, i;

    q->calls = 1;
    if (q->row == g_n) {
        q->solutions = 1;
        return;
    }
    q->solutions = 0;
    k = make_children(q, children);
    pool_scope_init(&scope, g_pool);
    for (i = 0; i < k; i++) {
        children[i].task.run = solve_task;
        if (pool_scope_spawn(&scope, &children[i].task) != 0) {
            fprintf(stderr, "nqueens: FAILED: pool_scope_spawn refused a task\n");
            exit(1);
        }
    }
    pool_scope_wait(&scope); /* children[] must outlive its tasks: wait before returning */
    for (i = 0; i < k; i++) {
        q->solutions += children[i].solutions;
        q->calls += children[i].calls;
    }
}

static void solve_task(pool_task *t) {
    solve_pool((struct queens *)(void *)((char *)t - offsetof(struct queens, task)));
}

static void solve_pool_root(void *arg) { solve_pool(arg); }

/* Solutions for N = 0..15 (OEIS A000170). */
static const uint64_t known_solutions[MAX_N] = {1,  1,   0,   0,    2,     10,    4,      40,
                                                92, 352, 724, 2680, 14200, 73712, 365596, 2279184};

enum variant { NATURAL, PLAIN, POOL, NUM_VARIANTS };
static const char *const variant_names[NUM_VARIANTS] = {"natural", "plain", "pool"};

/* One solve(0, 0, 0, 0) of variant v (POOL on p). Returns its wall time; checks the solutions
 * against the known count and, but for the natural variant, which does not count them, the
 * number of calls against expected_calls. */
static uint64_t run_once(pool *p, enum variant v, uint64_t expected_calls) {
    struct queens root;
    uint64_t t0, t1;

    memset(&root, 0, sizeof root);
    g_pool = p;
    t0 = bench_now_ns();
    if (v == POOL) {
        pool_call_on_worker(p, solve_pool_root, &root);
    } else if (v == PLAIN) {
        solve_plain(&root);
    } else {
        root.solutions = solve_natural(0, 0, 0, 0);
        root.calls = expected_calls;
    }
    t1 = bench_now_ns();
    if (root.solutions != known_solutions[g_n] || root.calls != expected_calls) {
        fprintf(stderr,
                "nqueens: FAILED: N=%u %s: %" PRIu64 " solutions (want %" PRIu64 "), %" PRIu64
                " calls (want %" PRIu64 ")\n",
                g_n, variant_names[v], root.solutions, known_solutions[g_n], root.calls,
                expected_calls);
        exit(1);
    }
    return t1 - t0;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? bench_parse_threads(argv[1]) : 2;
    int runs = bench_quick() ? QUICK_RUNS : RUNS;
    uint64_t wall[NUM_VARIANTS][RUNS], calls, natural_median, plain_median, pool_median;
    char label[64];
    pool *p = bench_pool_create("nqueens", threads);
    int r, v;

    g_n = bench_quick() ? QUICK_N : FULL_N;
    /* Every run must make one call per task plus the root. */
    calls = (bench_quick() ? QUICK_TASKS : FULL_TASKS) + 1u;

    for (r = -1; r < runs; r++) { /* round -1: warm-up (it also starts the pool's threads) */
        for (v = 0; v < NUM_VARIANTS; v++) {
            uint64_t w;
            bench_sleep_ns(SETTLE_NS);
            run_once(p, (enum variant)v, calls);
            w = run_once(p, (enum variant)v, calls);
            if (r >= 0) wall[v][r] = w;
        }
    }

    printf("nqueens(%u): %" PRIu64 " solutions, %" PRIu64 " tasks (one per placement, no cutoff), "
           "%d runs each\n",
           g_n, known_solutions[g_n], calls - 1, runs);
    natural_median = bench_report_ms("natural recursion", wall[NATURAL], runs, 0, NULL);
    plain_median = bench_report_ms("plain recursion", wall[PLAIN], runs, natural_median, "natural");
    snprintf(label, sizeof label, "pool_scope, %d thread%s", threads, threads == 1 ? "" : "s");
    pool_median = bench_report_ms(label, wall[POOL], runs, natural_median, "natural");
    printf("%-28s %.2fx plain\n", "", (double)pool_median / (double)plain_median);
    bench_report_target("pool_scope", pool_median, TARGET_NS, threads, 2);
    bench_pool_destroy("nqueens", p);
    return 0;
}
