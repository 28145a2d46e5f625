/* bench/stack.c -- how much of a thread's stack one level of pool_join takes.
 *
 * A chain of nested joins, DEPTH levels deep, on a 1-thread pool: each level joins a call to the
 * next level with an empty second half, which the worker takes back inline (nothing steals). The
 * address of a local at the deepest level, subtracted from the one at the top, divided by DEPTH,
 * is the stack per level: the join's own frames plus the level function's. The same chain made of
 * plain calls gives the level function's frame alone, and the difference is what pool_join adds.
 * Deterministic for a given compiler and flags, so one run is enough. README quotes the figure.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#define DEPTH 10000

typedef struct level {
    int left;
    uintptr_t *deepest;
} level;

static pool *g_pool;

static void nothing(void *arg) { (void)arg; }

static BENCH_NOINLINE void joined(void *arg) {
    level *l = (level *)arg, next;
    if (l->left == 0) {
        *l->deepest = (uintptr_t)&next;
        return;
    }
    next.left = l->left - 1;
    next.deepest = l->deepest;
    pool_join(g_pool, joined, &next, nothing, NULL);
}

static BENCH_NOINLINE void plain(void *arg) {
    level *l = (level *)arg, next;
    if (l->left == 0) {
        *l->deepest = (uintptr_t)&next;
        return;
    }
    next.left = l->left - 1;
    next.deepest = l->deepest;
    plain(&next);
    __asm__ __volatile__("" ::: "memory"); /* no tail call: a real frame per level */
}

typedef struct chain {
    void (*fn)(void *);
    uintptr_t top, deepest;
} chain;

static void run_chain(void *arg) {
    chain *c = (chain *)arg;
    level root;
    root.left = DEPTH;
    root.deepest = &c->deepest;
    c->top = (uintptr_t)&root;
    c->fn(&root);
}

static double per_level(void (*fn)(void *)) {
    chain c;
    c.fn = fn;
    c.top = c.deepest = 0;
    pool_call_on_worker(g_pool, run_chain, &c); /* on the worker, whose stack is the pool's */
    return (double)(c.top - c.deepest) / DEPTH;
}

int main(void) {
    pool_config cfg;
    double with_join, without;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 1;
    cfg.stack_size = (size_t)64 << 20;
    if (pool_create(&g_pool, &cfg) != 0) return 1;
    with_join = per_level(joined);
    without = per_level(plain);
    printf("stack per level of a %d-deep chain, on a worker (x86-64 and others: the stack grows "
           "down)\n",
           DEPTH);
    printf("plain calls                %8.1f bytes per level\n", without);
    printf("pool_join, taken back      %8.1f bytes per level\n", with_join);
    printf("what pool_join adds        %8.1f bytes per level\n", with_join - without);
    pool_destroy(g_pool);
    return with_join > without && without > 0 ? 0 : 1;
}
