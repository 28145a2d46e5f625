/* bench/call_tree.c -- the cost of entering the pool from outside for a small job.
 *
 * A complete binary tree of 1023 nodes (10 levels, 511 inner nodes) is summed recursively with
 * pool_join at every inner node. The main thread, which is not a worker, starts each walk with
 * pool_call and waits for it; 20,000 walks run back to back (in blocks of 1,000). Two baselines
 * are called back to back from the main thread: the natural serial walk a C programmer writes
 * (`sum(n) = value + sum(left) + sum(right)` at -O2), and the same walk shaped like the pool's
 * (a `void *` argument, both calls real: "plain"). Each call is timed on its own and the median is
 * reported, so a few slow calls (a preemption) do not move it.
 *
 *     usage: call_tree [THREADS]      default: 2 threads
 *
 * Target (issue 14): pool <= 4x the natural serial walk. Rayon's published figure is about 28x.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#include <errno.h>

#define LEVELS 10
#define NODES ((1u << LEVELS) - 1) /* 1023 */
#define WARMUP_CALLS 100           /* untimed calls before each block */
#define BLOCKS 20

struct node {
    struct node *left, *right; /* both NULL in a leaf */
    uint64_t value;
};

struct sum_arg {
    const struct node *node;
    uint64_t sum;
};

static pool *g_pool;

/* Same shape as sum_pool below, minus the pool: two direct calls instead of one pool_join. The sum
 * is stored after both calls, so neither is a tail call the compiler could turn into a loop. */
static BENCH_NOINLINE void sum_plain(void *varg) {
    struct sum_arg *s = varg;
    const struct node *n = s->node;
    struct sum_arg l, r;

    if (!n->left) {
        s->sum = n->value;
        return;
    }
    l.node = n->left;
    r.node = n->right;
    sum_plain(&l);
    sum_plain(&r);
    s->sum = n->value + l.sum + r.sum;
}

/* The natural serial walk. */
static uint64_t sum_natural(const struct node *n) {
    return n->left ? n->value + sum_natural(n->left) + sum_natural(n->right) : n->value;
}

static BENCH_NOINLINE void sum_pool(void *varg) {
    struct sum_arg *s = varg;
    const struct node *n = s->node;
    struct sum_arg l, r;

    if (!n->left) {
        s->sum = n->value;
        return;
    }
    l.node = n->left;
    r.node = n->right;
    pool_join(g_pool, sum_pool, &l, sum_pool, &r);
    s->sum = n->value + l.sum + r.sum;
}

enum variant { NATURAL, PLAIN, POOL };
static const char *const variant_names[] = {"natural", "plain", "pool"};

/* Runs `warmup` untimed walks, then `calls` timed back-to-back walks, storing each duration in
 * ns[]. Every sum is checked. */
static void time_walks(enum variant v, const struct node *root, uint64_t expected, uint64_t *ns,
                       int warmup, int calls) {
    int i;
    for (i = -warmup; i < calls; i++) {
        struct sum_arg arg;
        uint64_t t0, t1;

        arg.node = root;
        arg.sum = 0;
        t0 = bench_now_ns();
        if (v == POOL) pool_call(g_pool, sum_pool, &arg);
        else if (v == PLAIN) sum_plain(&arg);
        else arg.sum = sum_natural(root);
        t1 = bench_now_ns();
        if (arg.sum != expected) {
            fprintf(stderr,
                    "call_tree: FAILED: %s walk returned %" PRIu64 ", expected %" PRIu64 "\n",
                    variant_names[v], arg.sum, expected);
            exit(1);
        }
        if (i >= 0) ns[i] = t1 - t0;
    }
}

int main(int argc, char **argv) {
    int calls = bench_quick() ? 200 : 20000;
    int per_block = calls / BLOCKS;
    int threads = argc > 1 ? bench_parse_threads(argv[1]) : 2;
    struct node *nodes = malloc(NODES * sizeof *nodes);
    uint64_t *natural_ns = malloc((size_t)calls * sizeof *natural_ns);
    uint64_t *plain_ns = malloc((size_t)calls * sizeof *plain_ns);
    uint64_t *pool_ns = malloc((size_t)calls * sizeof *pool_ns);
    uint64_t expected = 0, x = 0x9E3779B97F4A7C15u;
    uint64_t natural_med, natural_p99, plain_med, plain_p99, pool_med, pool_p99, pool_cpu = 0,
                                                                                 pool_wall = 0;
    uint64_t injected = 0, stolen = 0, steals_failed = 0, sleeps = 0, wakeups = 0;
    pool_config cfg;
    unsigned i;
    int b, err;

    if (!nodes || !natural_ns || !plain_ns || !pool_ns) {
        fprintf(stderr, "call_tree: out of memory\n");
        return 1;
    }
    /* Heap layout: node i has children 2i+1 and 2i+2. Values from xorshift64, fixed seed. */
    for (i = 0; i < NODES; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        nodes[i].value = x >> 32;
        nodes[i].left = 2 * i + 1 < NODES ? &nodes[2 * i + 1] : NULL;
        nodes[i].right = 2 * i + 2 < NODES ? &nodes[2 * i + 2] : NULL;
        expected += nodes[i].value;
    }

    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    err = pool_create(&g_pool, &cfg);
    if (err) {
        fprintf(stderr, "call_tree: pool_create failed: %s\n", strerror(err));
        return 1;
    }

    /* BLOCKS alternating blocks of each variant, so that anything else the machine does meanwhile
     * hits both alike. Each block starts with untimed walks: for the pool they wake its workers
     * (and start them the first time: pool_create is lazy), so that the timed walks run back to
     * back on a busy pool, which is what this measures; waking an idle pool is bench/wake.c. */
    for (b = 0; b < BLOCKS; b++) {
        pool_stats s0, s1;
        uint64_t c0, w0;

        time_walks(NATURAL, nodes, expected, natural_ns + b * per_block, WARMUP_CALLS, per_block);
        time_walks(PLAIN, nodes, expected, plain_ns + b * per_block, WARMUP_CALLS, per_block);

        time_walks(POOL, nodes, expected, pool_ns, WARMUP_CALLS, 0);
        pool_stats_get(g_pool, &s0);
        c0 = bench_cpu_ns();
        w0 = bench_now_ns();
        time_walks(POOL, nodes, expected, pool_ns + b * per_block, 0, per_block);
        pool_wall += bench_now_ns() - w0;
        pool_cpu += bench_cpu_ns() - c0;
        pool_stats_get(g_pool, &s1);
        injected += s1.jobs_injected - s0.jobs_injected;
        stolen += s1.jobs_stolen - s0.jobs_stolen;
        steals_failed += s1.steals_failed - s0.steals_failed;
        sleeps += s1.sleeps - s0.sleeps;
        wakeups += s1.wakeups - s0.wakeups;
    }
    calls = BLOCKS * per_block;

    natural_med = bench_median_u64(natural_ns, (size_t)calls);
    natural_p99 = bench_quantile_u64(natural_ns, (size_t)calls, 0.99);
    plain_med = bench_median_u64(plain_ns, (size_t)calls);
    plain_p99 = bench_quantile_u64(plain_ns, (size_t)calls, 0.99);
    pool_med = bench_median_u64(pool_ns, (size_t)calls);
    pool_p99 = bench_quantile_u64(pool_ns, (size_t)calls, 0.99);

    printf("sum of a %u-node tree (%u joins per walk), %d back-to-back calls of each variant in %d "
           "alternating blocks,\neach block after %d untimed calls; pool of %d threads\n\n",
           NODES, NODES / 2, calls, BLOCKS, WARMUP_CALLS, threads);
    /* The arrays are sorted now: [0] is the fastest call. */
    printf("%-34s %12s %12s %12s\n", "variant", "median ns", "p99 ns", "best ns");
    printf("%-34s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", "natural serial walk", natural_med,
           natural_p99, natural_ns[0]);
    printf("%-34s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", "plain walk", plain_med, plain_p99,
           plain_ns[0]);
    printf("%-34s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", "pool_call + pool_join walk",
           pool_med, pool_p99, pool_ns[0]);
    printf(
        "ratio pool / natural serial (medians): %.2fx   (target <= 4x: %s); pool / plain: %.2fx\n",
        (double)pool_med / (double)natural_med, pool_med <= 4 * natural_med ? "met" : "MISSED",
        (double)pool_med / (double)plain_med);
    printf("process CPU during the timed pool calls: %.2f cores busy on average\n",
           (double)pool_cpu / (double)pool_wall);
    printf("stats per timed pool call: injected %.2f, stolen %.2f, failed steals %.2f, "
           "sleeps %.3f, wakeups %.3f\n",
           (double)injected / calls, (double)stolen / calls, (double)steals_failed / calls,
           (double)sleeps / calls, (double)wakeups / calls);

    err = pool_destroy(g_pool);
    if (err) {
        fprintf(stderr, "call_tree: pool_destroy failed: %s\n", strerror(err));
        return 1;
    }
    free(nodes);
    free(natural_ns);
    free(plain_ns);
    free(pool_ns);
    return 0;
}
