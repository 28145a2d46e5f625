/* bench/utree.c -- an unbalanced tree: fork-join where the work is, not where you expect it.
 *
 *     usage: utree [THREADS]      default: 2 threads; BENCH_QUICK=1: MAX_DEPTH 20
 *
 * The workload, exactly (to be re-implemented identically in other runtimes):
 *
 *   splitmix64(x):  z = x + 0x9e3779b97f4a7c15
 *                   z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
 *                   z = (z ^ (z >> 27)) * 0x94d049bb133111eb
 *                   return z ^ (z >> 31)                       (all arithmetic mod 2^64)
 *
 *   The tree is implicit: a node is an id (uint64) and a depth, the root is id 53 at depth 0.
 *   For a node (id, depth):
 *       h        = splitmix64(id)
 *       children = depth < MAX_DEPTH ? h % 4 : 0               (0..3 children, 1.5 on average)
 *       child i  = (h + 1 + i, depth + 1)  for i = 0 .. children-1
 *       work     = h, then work = splitmix64(work) repeated 21 more times (22 rounds in all)
 *   MAX_DEPTH = 34: 6,341,134 nodes in all, half of them leaves, a third at depth 34. The
 *   shape is lopsided at every level: the root's two subtrees have 614,707 and 5,726,426 nodes,
 *   the eight at depth 3 have 3, 614,701, 1, 1,463,010, 3,692,695, 570,712, 1 and 5 -- so where
 *   the work is cannot be guessed from the top, only found by stealing.
 *
 *   Checksum: (number of nodes + sum of `work` over all nodes) mod 2^64; with the parameters
 *   above it is EXPECTED_CHECKSUM below. Every run is checked against it (BENCH_QUICK: against
 *   the plain walk).
 *
 * Parallel version: a node visits its children [0, children) with pool_join by halving -- a
 * range of one child visits that child, a longer range joins its two halves -- so every child is
 * its own job, which is what par_iter over the children does in Rayon, with children-1 joins per
 * node. The other natural form runs too: one scope per node, each child a spawned task (what an
 * OpenMP program writes with a taskgroup per node), and the same with pool_scope_spawn_copy (each
 * child's arguments copied by the pool: no task struct). The walks start with pool_call_on_worker
 * from the main thread so that they run on the workers. Baseline: the plain recursion, a loop over
 * the children, on the main thread. Beside it, the scope walk's program with no pool under it
 * ("scope shape": task structs filled in, each run called at once through its pointer, no
 * scope), on a worker too: what the program's shape costs before the pool adds anything.
 *
 * Timing: one warm-up round, then RUNS rounds of {plain, pool}, each run after a 20 ms pause (so
 * the pool is asleep, not spinning against the plain run). A run takes a few hundred ms, so there
 * is no untimed run before each one as in bench/fib.c: waking the workers costs microseconds.
 *
 * Target (2 cores): pool, 2 threads <= 0.27 s (the plain walk takes about 0.45 s).
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#define ROOT_ID 53u
#define MAX_CHILDREN 3u
#define FULL_MAX_DEPTH 34u
#define QUICK_MAX_DEPTH 20u
#define WORK_ROUNDS 22
#define EXPECTED_NODES 6341134u
#define EXPECTED_CHECKSUM UINT64_C(0xf54e6cb5a24a3c78)
#define RUNS 9
#define QUICK_RUNS 3
#define SETTLE_NS 20000000u
#define TARGET_NS 270000000u

static uint32_t g_max_depth;
static pool *g_pool;

static inline uint64_t splitmix64(uint64_t x) {
    uint64_t z = x + UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* What a subtree adds to the checksum. */
struct subtree {
    uint64_t nodes;
    uint64_t work_sum;
};

/* The per-node part shared by both walks: returns the node's hash h (its children are h + 1 + i)
 * and its child count, and adds the node itself to *t. */
static inline uint64_t visit_self(uint64_t id, uint32_t depth, uint32_t *children,
                                  struct subtree *t) {
    uint64_t h = splitmix64(id), work = h;
    int r;

    for (r = 1; r < WORK_ROUNDS; r++) work = splitmix64(work);
    *children = depth < g_max_depth ? (uint32_t)(h % (MAX_CHILDREN + 1)) : 0;
    t->nodes = 1;
    t->work_sum = work;
    return h;
}

static BENCH_NOINLINE void walk_plain(uint64_t id, uint32_t depth, struct subtree *t) {
    uint32_t children, i;
    uint64_t h = visit_self(id, depth, &children, t);

    for (i = 0; i < children; i++) {
        struct subtree c;
        walk_plain(h + 1 + i, depth + 1, &c);
        t->nodes += c.nodes;
        t->work_sum += c.work_sum;
    }
}

/* Children first_id .. first_id + count - 1, all at `depth`, and their subtrees' total. */
struct child_range {
    uint64_t first_id;
    uint32_t count, depth;
    struct subtree total;
};

static void walk_pool(uint64_t id, uint32_t depth, struct subtree *t);

static void walk_range(void *arg) {
    struct child_range *r = arg;

    if (r->count == 1) {
        walk_pool(r->first_id, r->depth, &r->total);
    } else {
        struct child_range left, right;
        left.first_id = r->first_id;
        left.count = r->count / 2;
        right.first_id = r->first_id + left.count;
        right.count = r->count - left.count;
        left.depth = right.depth = r->depth;
        pool_join(g_pool, walk_range, &left, walk_range, &right);
        r->total.nodes = left.total.nodes + right.total.nodes;
        r->total.work_sum = left.total.work_sum + right.total.work_sum;
    }
}

static BENCH_NOINLINE void walk_pool(uint64_t id, uint32_t depth, struct subtree *t) {
    struct child_range all;
    uint64_t h = visit_self(id, depth, &all.count, t);

    if (all.count == 0) return;
    all.first_id = h + 1;
    all.depth = depth + 1;
    walk_range(&all);
    t->nodes += all.total.nodes;
    t->work_sum += all.total.work_sum;
}

static void walk_pool_root(void *arg) { walk_pool(ROOT_ID, 0, arg); }

/* A child as a scope task. */
struct scope_child {
    pool_task task; /* first: the task is the child */
    uint64_t id;
    uint32_t depth;
    struct subtree total;
};

static void walk_scope(uint64_t id, uint32_t depth, struct subtree *t);
static void walk_shape(uint64_t id, uint32_t depth, struct subtree *t);

static void scope_child_run(pool_task *task) {
    struct scope_child *c = (struct scope_child *)task;
    walk_scope(c->id, c->depth, &c->total);
}

static void shape_child_run(pool_task *task) {
    struct scope_child *c = (struct scope_child *)task;
    walk_shape(c->id, c->depth, &c->total);
}

/* The scope walk's node; with `pooled` 0, the same program with no pool under it: each child's
 * task struct filled in as for a spawn and its run called at once, and no scope (the floor of
 * this program's shape, as the plain recursion through void * is for fib). Inlined into both
 * walks, so that `pooled` is a constant in each. */
static BENCH_ALWAYS_INLINE void walk_scope_node(uint64_t id, uint32_t depth, struct subtree *t,
                                                int pooled) {
    struct scope_child kids[MAX_CHILDREN];
    pool_scope s;
    uint32_t children, i;
    uint64_t h = visit_self(id, depth, &children, t);

    if (children == 0) return;
    if (pooled) pool_scope_init(&s, g_pool);
    for (i = 0; i < children; i++) {
        kids[i].task = (pool_task)POOL_TASK_INIT(pooled ? scope_child_run : shape_child_run);
        kids[i].id = h + 1 + i;
        kids[i].depth = depth + 1;
        if (!pooled) {
            pool_task *task = &kids[i].task;
            __asm__(""
                    : "+r"(task)); /* an indirect call, as a pool makes, not one gcc sees through */
            task->run(task);
        } else if (pool_scope_spawn(&s, &kids[i].task) != 0) {
            fprintf(stderr, "utree: FAILED: pool_scope_spawn\n");
            exit(1);
        }
    }
    if (pooled) pool_scope_wait(&s);
    for (i = 0; i < children; i++) {
        t->nodes += kids[i].total.nodes;
        t->work_sum += kids[i].total.work_sum;
    }
}

static BENCH_NOINLINE void walk_scope(uint64_t id, uint32_t depth, struct subtree *t) {
    walk_scope_node(id, depth, t, 1);
}

static BENCH_NOINLINE void walk_shape(uint64_t id, uint32_t depth, struct subtree *t) {
    walk_scope_node(id, depth, t, 0);
}

static void walk_scope_root(void *arg) { walk_scope(ROOT_ID, 0, arg); }
static void walk_shape_root(void *arg) { walk_shape(ROOT_ID, 0, arg); }

/* A child as a copied spawn: its arguments, copied by the pool; its total goes to the parent's
 * array. */
struct copy_child {
    uint64_t id;
    uint32_t depth;
    struct subtree *total;
};

static void walk_copy(uint64_t id, uint32_t depth, struct subtree *t);

static void copy_child_run(void *arg) {
    const struct copy_child *c = arg;
    walk_copy(c->id, c->depth, c->total);
}

static BENCH_NOINLINE void walk_copy(uint64_t id, uint32_t depth, struct subtree *t) {
    struct subtree totals[MAX_CHILDREN];
    pool_scope s;
    uint32_t children, i;
    uint64_t h = visit_self(id, depth, &children, t);

    if (children == 0) return;
    pool_scope_init(&s, g_pool);
    for (i = 0; i < children; i++) {
        struct copy_child c;
        c.id = h + 1 + i;
        c.depth = depth + 1;
        c.total = &totals[i];
        if (pool_scope_spawn_copy(&s, copy_child_run, &c, sizeof c) != 0) {
            fprintf(stderr, "utree: FAILED: pool_scope_spawn_copy\n");
            exit(1);
        }
    }
    pool_scope_wait(&s);
    for (i = 0; i < children; i++) {
        t->nodes += totals[i].nodes;
        t->work_sum += totals[i].work_sum;
    }
}

static void walk_copy_root(void *arg) { walk_copy(ROOT_ID, 0, arg); }

enum variant { PLAIN, SHAPE, JOIN, SCOPE, COPY, VARIANTS };
static const char *const variant_names[VARIANTS] = {"plain", "scope shape", "pool_join",
                                                    "pool_scope", "pool_scope_spawn_copy"};

/* One walk from the root, as variant v on the pool p; returns its wall time. Exits if the
 * checksum differs from `expected` (when expected is not 0). */
static uint64_t run_once(enum variant v, pool *p, uint64_t expected, uint64_t *nodes,
                         uint64_t *checksum) {
    struct subtree t;
    uint64_t t0, t1;

    g_pool = p;
    t0 = bench_now_ns();
    if (v == JOIN) pool_call_on_worker(p, walk_pool_root, &t);
    else if (v == SCOPE) pool_call_on_worker(p, walk_scope_root, &t);
    else if (v == COPY) pool_call_on_worker(p, walk_copy_root, &t);
    else if (v == SHAPE) pool_call_on_worker(p, walk_shape_root, &t);
    else walk_plain(ROOT_ID, 0, &t);
    t1 = bench_now_ns();
    *nodes = t.nodes;
    *checksum = t.nodes + t.work_sum;
    if (expected && *checksum != expected) {
        fprintf(stderr,
                "utree: FAILED: %s walk: checksum %016" PRIx64 " (%" PRIu64 " nodes), "
                "want %016" PRIx64 "\n",
                variant_names[v], *checksum, t.nodes, expected);
        exit(1);
    }
    return t1 - t0;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? bench_parse_threads(argv[1]) : 2;
    int runs = bench_quick() ? QUICK_RUNS : RUNS;
    uint64_t ns[VARIANTS][RUNS], expected, nodes, plain_median, pool_median;
    uint64_t pool_cpu_ns = 0, pool_wall_ns = 0;
    pool_stats s0, s1;
    pool *p = bench_pool_create("utree", threads);
    char label[64];
    int r, v;

    g_max_depth = bench_quick() ? QUICK_MAX_DEPTH : FULL_MAX_DEPTH;
    expected = bench_quick() ? 0 : EXPECTED_CHECKSUM;
    run_once(PLAIN, NULL, expected, &nodes, &expected); /* the reference for every later run */

    for (r = -1; r < runs; r++) { /* round -1: warm-up (it also starts the pool's threads) */
        if (r == 0) pool_stats_get(p, &s0);
        for (v = 0; v < VARIANTS; v++) {
            uint64_t w, c, cpu0;
            bench_sleep_ns(SETTLE_NS);
            cpu0 = bench_cpu_ns();
            w = run_once((enum variant)v, p, expected, &nodes, &c);
            if (r >= 0) ns[v][r] = w;
            if (r >= 0 && v == JOIN) {
                pool_cpu_ns += bench_cpu_ns() - cpu0;
                pool_wall_ns += w;
            }
        }
    }
    pool_stats_get(p, &s1);

    printf("utree: %" PRIu64 " nodes (max depth %u, 0..%u children, %d hash rounds each), "
           "checksum %016" PRIx64 ", %d runs each\n",
           nodes, g_max_depth, MAX_CHILDREN, WORK_ROUNDS, expected, runs);
    plain_median = bench_report_ms("plain walk", ns[PLAIN], runs, 0, NULL);
    bench_report_ms("scope shape, no pool", ns[SHAPE], runs, plain_median, "plain");
    snprintf(label, sizeof label, "pool_join, %d thread%s", threads, threads == 1 ? "" : "s");
    pool_median = bench_report_ms(label, ns[JOIN], runs, plain_median, "plain");
    snprintf(label, sizeof label, "pool_scope, %d thread%s", threads, threads == 1 ? "" : "s");
    bench_report_ms(label, ns[SCOPE], runs, plain_median, "plain");
    snprintf(label, sizeof label, "spawn_copy, %d thread%s", threads, threads == 1 ? "" : "s");
    bench_report_ms(label, ns[COPY], runs, plain_median, "plain");
    printf("pool_join runs: %.2f cores busy on average; per run: %.0f joins stolen, %.0f failed "
           "steals, %.1f sleeps\n",
           (double)pool_cpu_ns / (double)pool_wall_ns,
           (double)(s1.jobs_stolen - s0.jobs_stolen) / runs,
           (double)(s1.steals_failed - s0.steals_failed) / runs,
           (double)(s1.sleeps - s0.sleeps) / runs);
    bench_report_target("pool_join", pool_median, TARGET_NS, threads, 2);
    bench_pool_destroy("utree", p);
    return 0;
}
