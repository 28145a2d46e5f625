/* test_scope.c - scopes and parallel_for, from workers and from outside.
 *
 * Scopes: 100,000 flat tasks spawned from outside and from a worker; a tree
 * of nested spawns into the same scope; a scope reused after its wait.
 * Every task counts itself once; the counts must be exact.
 * parallel_for: empty, one-element, tiny, odd and large ranges, with grain
 * 0 (adaptive) and explicit grains; each index must be visited exactly
 * once, and the sum of the indices must match.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#include <stdlib.h>

typedef struct flat_task {
    pool_task task;
    atomic_long *counter;
} flat_task;

static void flat_run(pool_task *t) {
    flat_task *f = (flat_task *)(void *)((char *)t - offsetof(flat_task, task));
    atomic_fetch_add(f->counter, 1);
}

static void spawn_flat(pool *p, long n) {
    flat_task *tasks = (flat_task *)calloc((size_t)n, sizeof *tasks);
    atomic_long counter = 0;
    pool_scope s;
    long i;
    pool_scope_init(&s, p);
    for (i = 0; i < n; i++) {
        tasks[i].task = (pool_task)POOL_TASK_INIT(flat_run);
        tasks[i].counter = &counter;
        CHECK(pool_scope_spawn(&s, &tasks[i].task) == 0);
    }
    pool_scope_wait(&s);
    CHECK_EQ_I64(atomic_load(&counter), n);
    /* The scope is re-armed: use it again with the same tasks. */
    atomic_store(&counter, 0);
    for (i = 0; i < n; i++) CHECK(pool_scope_spawn(&s, &tasks[i].task) == 0);
    pool_scope_wait(&s);
    CHECK_EQ_I64(atomic_load(&counter), n);
    free(tasks);
}

typedef struct flat_args {
    pool *p;
    long n;
} flat_args;

static void spawn_flat_on_worker(void *arg) {
    flat_args *a = (flat_args *)arg;
    CHECK(pool_worker_index() >= 0);
    spawn_flat(a->p, a->n);
}

/* Nested: each node spawns its children into the same scope. */
typedef struct tree_node {
    pool_task task;
    pool_scope *scope;
    int depth;
    atomic_long *visited;
} tree_node;

static void tree_run(pool_task *t) {
    tree_node *node = (tree_node *)(void *)((char *)t - offsetof(tree_node, task));
    atomic_fetch_add(node->visited, 1);
    if (node->depth > 0) {
        int i;
        for (i = 0; i < 3; i++) {
            tree_node *child = (tree_node *)malloc(sizeof *child);
            child->task = (pool_task)POOL_TASK_INIT(tree_run);
            child->scope = node->scope;
            child->depth = node->depth - 1;
            child->visited = node->visited;
            CHECK(pool_scope_spawn(node->scope, &child->task) == 0);
        }
    }
    if (node->depth != 9) free(node); /* the root lives on the test's stack */
}

static void spawn_tree(pool *p) {
    atomic_long visited = 0;
    pool_scope s;
    tree_node root;
    long expected = 0, level = 1;
    int d;
    for (d = 0; d <= 9; d++, level *= 3) expected += level; /* 3^0 + ... + 3^9 */
    pool_scope_init(&s, p);
    root.task = (pool_task)POOL_TASK_INIT(tree_run);
    root.scope = &s;
    root.depth = 9;
    root.visited = &visited;
    CHECK(pool_scope_spawn(&s, &root.task) == 0);
    pool_scope_wait(&s);
    CHECK_EQ_I64(atomic_load(&visited), expected);
}

/* parallel_for: mark every index, sum the indices. */
typedef struct range_check {
    unsigned char *hits;
    atomic_ullong sum;
    atomic_long calls;
} range_check;

static void range_body(void *arg, size_t lo, size_t hi) {
    range_check *r = (range_check *)arg;
    unsigned long long local = 0;
    size_t i;
    CHECK(lo < hi);
    for (i = lo; i < hi; i++) {
        r->hits[i]++;
        local += i;
    }
    atomic_fetch_add(&r->sum, local);
    atomic_fetch_add(&r->calls, 1);
}

static void check_range(pool *p, size_t begin, size_t end, size_t grain) {
    range_check r;
    size_t i, bad = 0;
    unsigned long long expected = 0;
    r.hits = (unsigned char *)calloc(end + 1, 1);
    atomic_store(&r.sum, 0);
    atomic_store(&r.calls, 0);
    pool_parallel_for(p, begin, end, grain, range_body, &r);
    for (i = 0; i < end + 1; i++) {
        unsigned want = i >= begin && i < end;
        if (r.hits[i] != want) bad++;
        if (want) expected += i;
    }
    CHECK_MSG(bad == 0, "range [%zu, %zu) grain %zu: %zu indices not visited exactly once", begin,
              end, grain, bad);
    CHECK(atomic_load(&r.sum) == expected);
    if (begin >= end) CHECK_EQ_I64(atomic_load(&r.calls), 0);
    free(r.hits);
}

typedef struct ranges_args {
    pool *p;
    long big;
} ranges_args;

static void check_ranges(void *arg) {
    ranges_args *a = (ranges_args *)arg;
    size_t grains[] = {0, 1, 7, 1000};
    size_t g;
    for (g = 0; g < sizeof grains / sizeof grains[0]; g++) {
        check_range(a->p, 0, 0, grains[g]);
        check_range(a->p, 5, 5, grains[g]);
        check_range(a->p, 9, 3, grains[g]); /* begin > end: empty */
        check_range(a->p, 3, 4, grains[g]);
        check_range(a->p, 0, 3, grains[g]);
        check_range(a->p, 1, 1001, grains[g]);
        check_range(a->p, 17, 12345, grains[g]);
        check_range(a->p, 0, (size_t)a->big, grains[g]);
    }
}

int main(void) {
    int sizes[] = {1, 2, 4, 16};
    size_t s;
    long flat = test_scaled(100000, 2000);
    test_watchdog(240, "test_scope");
    printf("test_scope: scopes and parallel_for\n");
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        pool *p;
        pool_config cfg = {0};
        flat_args fa;
        ranges_args ra;
        cfg.num_threads = sizes[s];
        CHECK(pool_create(&p, &cfg) == 0);
        printf("  %2d threads: %ld flat tasks from outside and from a worker, nested tree, "
               "parallel_for ranges\n",
               sizes[s], flat);
        spawn_flat(p, flat);
        fa.p = p, fa.n = flat;
        pool_call(p, spawn_flat_on_worker, &fa);
        spawn_tree(p);
        ra.p = p, ra.big = test_scaled(3000000, 50000);
        check_ranges(&ra);               /* from outside */
        pool_call(p, check_ranges, &ra); /* from a worker */
        CHECK(pool_destroy(p) == 0);
    }
    CHECK(pool_scope_spawn(NULL, NULL) == EINVAL);
    if (test_failures()) {
        printf("test_scope: %ld check(s) FAILED\n", test_failures());
        return 1;
    }
    printf("test_scope: all checks passed\n");
    return 0;
}
