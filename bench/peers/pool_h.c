/* bench/peers/pool_h.c -- the eight workloads of bench/peers/workloads.h on pool.h.
 *
 *     cc -O3 -pthread bench/peers/pool_h.c -o pool_h-bench
 *     ./pool_h-bench WORKLOAD THREADS [SIZE]
 *
 * One pool with num_threads = THREADS and no external slots (POOL_EXTERNAL_SLOTS_NONE), so that
 * THREADS threads do the work, as in the other runtimes: with a slot, the main thread would work
 * beside THREADS workers. The main thread is not a worker: fork-join work enters
 * the pool with pool_call (the main thread blocks until it is done), the loop with
 * pool_parallel_for from the main thread, the submit workload's tasks with pool_scope_spawn from
 * the main thread into one scope and pool_scope_wait, and the wake rounds' tasks with
 * pool_submit (detached; the task itself says that it ran).
 *
 * Tasks are intrusive: the submit workload's 1M pool_tasks are one array, allocated by the
 * (untimed) warm-up run and reused, nqueens's live on the stack of the call that spawns them.
 */
#define POOL_IMPLEMENTATION
#include "../../pool.h"
#include "workloads.h"

#include <stddef.h>

static pool *g_pool;
struct tiny_task;

static const char *rt_name(void) { return "pool.h"; }

static void rt_init(int threads) {
    pool_config cfg;
    int err;

    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    cfg.external_slots = POOL_EXTERNAL_SLOTS_NONE;
    err = pool_create(&g_pool, &cfg);
    if (err) {
        fprintf(stderr, "pool.h: pool_create failed: %s\n", strerror(err));
        exit(1);
    }
}

static struct tiny_task *g_tiny;

static void rt_fini(void) {
    int err = pool_destroy(g_pool);
    free(g_tiny);
    if (err) {
        fprintf(stderr, "pool.h: pool_destroy failed: %s\n", strerror(err));
        exit(1);
    }
}

/* ---- fib: pool_join at every call ---- */

struct fib_arg {
    unsigned n;
    uint64_t result;
};

static void fib(void *varg) {
    struct fib_arg *f = (struct fib_arg *)varg;
    struct fib_arg a, b;

    if (f->n < 2) {
        f->result = f->n;
        return;
    }
    a.n = f->n - 1;
    b.n = f->n - 2;
    pool_join(g_pool, fib, &a, fib, &b);
    f->result = a.result + b.result;
}

static uint64_t rt_fib(unsigned n) {
    struct fib_arg root;
    root.n = n;
    root.result = 0;
    pool_call(g_pool, fib, &root);
    return root.result;
}

/* ---- nqueens: one scope per call, one pool_task per legal column ---- */

struct queens_task {
    pool_task task;
    struct wl_queens q;
};

static void queens(struct wl_queens *q);

static void queens_run(pool_task *t) {
    queens(&((struct queens_task *)(void *)((char *)t - offsetof(struct queens_task, task)))->q);
}

static void queens(struct wl_queens *q) {
    struct queens_task children[16];
    pool_scope scope;
    uint32_t free, k = 0, i;

    if (wl_queens_leaf(q)) return;
    free = wl_queens_free(q);
    pool_scope_init(&scope, g_pool);
    while (free) {
        struct queens_task *c = &children[k++];
        pool_task init = POOL_TASK_INIT(queens_run);
        c->task = init;
        wl_queens_child(q, &free, &c->q);
        if (pool_scope_spawn(&scope, &c->task) != 0) {
            fprintf(stderr, "pool.h: FAILED: pool_scope_spawn refused a task\n");
            exit(1);
        }
    }
    pool_scope_wait(&scope);
    for (i = 0; i < k; i++) wl_queens_add(q, &children[i].q);
}

static void queens_root(void *arg) { queens((struct wl_queens *)arg); }

static void rt_nqueens(struct wl_queens *root) { pool_call(g_pool, queens_root, root); }

/* ---- utree: the child range halved with pool_join ---- */

static void utree_walk(uint64_t id, uint32_t depth, struct wl_subtree *t);

static void utree_range(void *arg) {
    struct wl_range *r = (struct wl_range *)arg;
    struct wl_range left, right;

    if (r->count == 1) {
        utree_walk(r->first_id, r->depth, &r->total);
        return;
    }
    wl_range_split(r, &left, &right);
    pool_join(g_pool, utree_range, &left, utree_range, &right);
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

static void utree_root(void *arg) { utree_walk(WL_UTREE_ROOT, 0, (struct wl_subtree *)arg); }

static void rt_utree(struct wl_subtree *out) { pool_call(g_pool, utree_root, out); }

/* ---- quicksort: pool_join on both halves ---- */

struct sort_arg {
    uint32_t *a;
    size_t n;
};

static void sort(void *arg) {
    struct sort_arg *r = (struct sort_arg *)arg;
    struct sort_arg left, right;
    size_t k;

    if (r->n < WL_INSERTION_SORT_BELOW) {
        wl_insertion_sort(r->a, r->n);
        return;
    }
    k = wl_partition(r->a, r->n);
    left.a = r->a;
    left.n = k;
    right.a = r->a + k;
    right.n = r->n - k;
    pool_join(g_pool, sort, &left, sort, &right);
}

static void rt_sort(uint32_t *a, size_t n) {
    struct sort_arg all;
    all.a = a;
    all.n = n;
    pool_call(g_pool, sort, &all);
}

/* ---- sum: pool_parallel_for, grain 0 (adaptive) ---- */

struct sum_arg {
    const uint32_t *a;
    uint64_t total;
};

static void sum_chunk(void *arg, size_t lo, size_t hi) {
    struct sum_arg *s = (struct sum_arg *)arg;
    /* Relaxed: pool_parallel_for's return orders every chunk before the caller's read. */
    __atomic_fetch_add(&s->total, wl_sum_range(s->a, lo, hi), __ATOMIC_RELAXED);
}

static uint64_t rt_sum(const uint32_t *a, size_t n) {
    struct sum_arg s;
    s.a = a;
    s.total = 0;
    pool_parallel_for(g_pool, 0, n, 0, sum_chunk, &s);
    return s.total;
}

/* ---- submit: one scope, n pool_scope_spawn from the main thread, pool_scope_wait ---- */

struct tiny_task {
    pool_task task;
    uint32_t *runs;
    size_t i;
};

static size_t g_tiny_n;

static void tiny_run(pool_task *t) {
    struct tiny_task *tt =
        (struct tiny_task *)(void *)((char *)t - offsetof(struct tiny_task, task));
    wl_tiny_run(tt->runs, tt->i);
}

static void rt_submit(uint32_t *runs, size_t n) {
    pool_scope scope;
    size_t i;

    if (g_tiny_n < n) { /* the warm-up run allocates, the timed runs reuse */
        free(g_tiny);
        g_tiny = (struct tiny_task *)malloc(n * sizeof *g_tiny);
        if (!g_tiny) {
            fprintf(stderr, "pool.h: out of memory for %zu tasks\n", n);
            exit(1);
        }
        g_tiny_n = n;
    }
    pool_scope_init(&scope, g_pool);
    for (i = 0; i < n; i++) {
        struct tiny_task *t = &g_tiny[i];
        pool_task init = POOL_TASK_INIT(tiny_run);
        t->task = init;
        t->runs = runs;
        t->i = i;
        if (pool_scope_spawn(&scope, &t->task) != 0) {
            fprintf(stderr, "pool.h: FAILED: pool_scope_spawn refused task %zu\n", i);
            exit(1);
        }
    }
    pool_scope_wait(&scope);
}

/* ---- wake: pool_submit of a detached task from the main thread ---- */

struct probe_task {
    pool_task task;
    struct wl_probe *probe;
};

static void probe_run(pool_task *t) {
    wl_probe_run(
        ((struct probe_task *)(void *)((char *)t - offsetof(struct probe_task, task)))->probe);
}

static void rt_wake(struct wl_probe *probes, int rounds) {
    struct probe_task *tasks = (struct probe_task *)calloc((size_t)rounds, sizeof *tasks);
    int i, err;

    if (!tasks) {
        fprintf(stderr, "pool.h: out of memory\n");
        exit(1);
    }
    for (i = 0; i < rounds; i++) {
        pool_task init = POOL_TASK_INIT(probe_run);
        tasks[i].task = init;
        tasks[i].probe = &probes[i];
    }
    for (i = 0; i < rounds; i++) {
        if (!wl_wake_gap(probes, i))
            while (!wl_probe_done(&probes[i - 1])) /* a detached task: nothing to wait on */
                sched_yield();
        probes[i].submit_ns = wl_now_ns();
        err = pool_submit(g_pool, &tasks[i].task);
        if (err) {
            fprintf(stderr, "pool.h: FAILED: pool_submit: %s\n", strerror(err));
            exit(1);
        }
    }
    while (rounds > 0 && !wl_probe_done(&probes[rounds - 1])) sched_yield();
    free(tasks);
}
