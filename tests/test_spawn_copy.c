/* test_spawn_copy.c - pool_scope_spawn_copy: spawns whose argument block the
 * pool copies into cells of its own.
 *
 * The pool allocates through a wrapper here that counts the slabs of cells
 * it allocates and can refuse them. The parts:
 *   tree      a ternary tree of 29,524 nodes, each node a copied spawn of a
 *             16-byte block, walked from outside and from a task on pools of
 *             1, 2, 4 and 16 threads: every node runs exactly once (a count
 *             per node) with its own block, although the spawner changes its
 *             local copy right after each spawn.
 *   cells     200 rounds of that walk on 4 threads: the slabs allocated stay
 *             within the bound the design gives (each thread's cache holds
 *             at most two slabs' worth, the shared list takes the rest), so
 *             cells are reused, not allocated per task: 5.9 million tasks
 *             must not take more than a few dozen slabs.
 *   outside   four threads outside the pool spawn 20,000 copies each into
 *             one scope while the workers run them: cells flow from the
 *             shared list to the workers' caches and back; each ran once.
 *   blocks    the copy itself for every size up to POOL_SPAWN_COPY_MAX from
 *             16 source offsets, against memcpy, nothing written around it;
 *             then blocks of 0, 1, 2, 17 and POOL_SPAWN_COPY_MAX bytes from an
 *             odd address: they arrive intact, aligned for any type, queued
 *             and run at once by the throttle (on a copy of their own: a run
 *             that writes its copy leaves the spawner's block as it was).
 *   cancel    copied spawns queued behind a gate, the scope cancelled: none
 *             runs, s's on_cancel is never called with one (it is the user's
 *             function, for the user's tasks), a spawn after the cancel is
 *             refused with ECANCELED, and the cells come back: 10 rounds
 *             take little more than one round's slabs.
 *   errors    EINVAL for a NULL scope or fn, a size above the maximum, a
 *             NULL block with a size; ENOMEM when no cell is free and the
 *             slab is refused (nothing ran), but not for a spawn run at once,
 *             which needs no cell.
 */
#include <stdatomic.h>
#include <stdlib.h>

static void *test_malloc(size_t size);
#define POOL_MALLOC(size, user) ((void)(user), test_malloc(size))
#define POOL_FREE(ptr, user) ((void)(user), free(ptr))
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#include <string.h>

static atomic_long slabs_allocated;
static atomic_int refuse_slabs;

static void *test_malloc(size_t size) {
    if (size == pool__aligned_request(sizeof(pool__copy_slab))) {
        if (atomic_load(&refuse_slabs)) return NULL;
        atomic_fetch_add(&slabs_allocated, 1);
    }
    return malloc(size);
}

static const int thread_counts[] = {1, 2, 4, 16};

/* ---- tree ---- */

#define DEPTH 9                 /* levels below the root */
#define NODES ((59049 - 1) / 2) /* (3^(DEPTH+1) - 1) / 2 */

static atomic_int visits[NODES];

typedef struct node_arg {
    pool_scope *scope;
    int id;    /* 0 .. NODES-1, breadth first: children 3id+1 .. 3id+3 */
    int depth; /* levels below it */
} node_arg;

static void visit(void *arg) {
    node_arg n = *(const node_arg *)arg, child;
    int i;
    atomic_fetch_add_explicit(&visits[n.id], 1, memory_order_relaxed);
    if (!n.depth) return;
    child.scope = n.scope;
    child.depth = n.depth - 1;
    for (i = 1; i <= 3; i++) {
        child.id = 3 * n.id + i;
        CHECK_EQ_I64(pool_scope_spawn_copy(n.scope, visit, &child, sizeof child), 0);
        child.id = -1; /* the copy is the task's: this must not reach it */
    }
}

static void walk(void *arg) {
    pool_scope s;
    node_arg root;
    pool_scope_init(&s, (pool *)arg);
    root.scope = &s, root.id = 0, root.depth = DEPTH;
    CHECK_EQ_I64(pool_scope_spawn_copy(&s, visit, &root, sizeof root), 0);
    root.id = -1;
    pool_scope_wait(&s);
}

/* Walks the tree on p from outside (or from a task) and checks every node
   ran once; returns 0 on a mismatch. */
static int walk_and_check(pool *p, int from_task) {
    int i, wrong = 0;
    for (i = 0; i < NODES; i++) atomic_store(&visits[i], 0);
    if (from_task) pool_call(p, walk, p);
    else walk(p);
    for (i = 0; i < NODES; i++) wrong += atomic_load(&visits[i]) != 1;
    CHECK_MSG(!wrong, "%d of %d nodes ran other than once (%s)", wrong, NODES,
              from_task ? "from a task" : "from outside");
    return !wrong;
}

static void part_tree(void) {
    int c;
    test_watchdog(120, "test_spawn_copy tree");
    printf("  tree: %d copied spawns from outside and from a task, 1 to 16 threads\n", NODES);
    for (c = 0; c < 4; c++) {
        pool *p = test_pool(thread_counts[c]);
        if (walk_and_check(p, 0)) walk_and_check(p, 1);
        CHECK_EQ_I64(pool_destroy(p), 0);
    }
}

/* ---- cells ---- */

static void part_cells(void) {
    pool *p = test_pool(4);
    int rounds = (int)test_scaled(200, 10), r;
    long slabs, bound;
    test_watchdog(240, "test_spawn_copy cells");
    printf("  cells: %d walks on 4 threads reuse their cells\n", rounds);
    atomic_store(&slabs_allocated, 0);
    for (r = 0; r < rounds; r++)
        if (!walk_and_check(p, r & 1)) break;
    slabs = atomic_load(&slabs_allocated);
    /* Cells live at once: at most the whole tree. Hoarded: two slabs in each
       cache (4 workers, 4 slots, spares; 16 is generous), one more slab
       each while a hand-over is under way. */
    bound = (NODES + POOL__COPY_SLAB - 1) / POOL__COPY_SLAB + 16 * 3;
    CHECK_MSG(slabs > 0, "no slab was counted: the wrapper no longer recognises them");
    CHECK_MSG(slabs <= bound, "%ld slabs for %d rounds of %d tasks (bound %ld)", slabs, rounds,
              NODES, bound);
    printf("    %ld slabs of %d cells for %ld tasks\n", slabs, POOL__COPY_SLAB,
           (long)rounds * NODES);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- outside ---- */

#define OUTSIDE_THREADS 4
#define OUTSIDE_SPAWNS 20000

static atomic_int outside_runs[OUTSIDE_THREADS * OUTSIDE_SPAWNS];
static pool_scope outside_scope;

static void outside_task(void *arg) {
    atomic_fetch_add_explicit(&outside_runs[*(const int *)arg], 1, memory_order_relaxed);
}

static void *outside_spawner(void *arg) {
    int base = (int)(intptr_t)arg * OUTSIDE_SPAWNS, i,
        spawns = (int)test_scaled(OUTSIDE_SPAWNS, 500);
    for (i = 0; i < spawns; i++) {
        int id = base + i;
        CHECK_EQ_I64(pool_scope_spawn_copy(&outside_scope, outside_task, &id, sizeof id), 0);
    }
    return NULL;
}

static void part_outside(void) {
    pool *p = test_pool(2);
    pthread_t threads[OUTSIDE_THREADS];
    int i, t, wrong = 0, spawns = (int)test_scaled(OUTSIDE_SPAWNS, 500);
    test_watchdog(120, "test_spawn_copy outside");
    printf("  outside: %d threads outside the pool spawn %d copies each into one scope\n",
           OUTSIDE_THREADS, spawns);
    pool_scope_init(&outside_scope, p);
    for (t = 0; t < OUTSIDE_THREADS; t++)
        if (pthread_create(&threads[t], NULL, outside_spawner, (void *)(intptr_t)t) != 0) exit(2);
    for (t = 0; t < OUTSIDE_THREADS; t++) pthread_join(threads[t], NULL);
    pool_scope_wait(&outside_scope);
    for (t = 0; t < OUTSIDE_THREADS; t++)
        for (i = 0; i < OUTSIDE_SPAWNS; i++)
            wrong += atomic_load(&outside_runs[t * OUTSIDE_SPAWNS + i]) != (i < spawns);
    CHECK_MSG(!wrong, "%d copied spawns ran other than once", wrong);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- blocks ---- */

static atomic_int block_wrong, block_runs;

/* The alignment the copy promises: the strictest of the types it names
   (sizeof(long double) is 12 on i386, its alignment 4). */
struct align_probe_ld {
    char c;
    long double x;
};
struct align_probe_ll {
    char c;
    long long x;
};
#define ALIGN_LD offsetof(struct align_probe_ld, x)
#define ALIGN_LL offsetof(struct align_probe_ll, x)
#define ALIGN_ANY (ALIGN_LD > ALIGN_LL ? ALIGN_LD : ALIGN_LL)

/* A block of 2 bytes or more: 0xA5, its size, then i * 7 at each i. */
static void check_block(void *arg) {
    const unsigned char *b = (const unsigned char *)arg;
    size_t size = b[1], i;
    if ((uintptr_t)arg % ALIGN_ANY != 0 || b[0] != 0xA5) atomic_fetch_add(&block_wrong, 1);
    for (i = 2; i < size; i++)
        if (b[i] != (unsigned char)(i * 7)) atomic_fetch_add(&block_wrong, 1);
    memset(arg, 0x5A, size); /* the copy is fn's to write */
    atomic_fetch_add(&block_runs, 1);
}

/* A block of 0 or 1 bytes: nothing to read back (1 byte: not enough for
   the header), only the pointer's alignment. */
static void check_small_block(void *arg) {
    if ((uintptr_t)arg % ALIGN_ANY != 0) atomic_fetch_add(&block_wrong, 1);
    atomic_fetch_add(&block_runs, 1);
}

static const size_t block_sizes[] = {0, 1, 2, 17, POOL_SPAWN_COPY_MAX};
#define BLOCK_SIZES (sizeof block_sizes / sizeof block_sizes[0])

/* Spawns a block of each size into s; the runs check them (and write
   their copies), the spawner checks that its block was left alone. */
static void spawn_blocks(pool_scope *s) {
    size_t k, i;
    for (k = 0; k < BLOCK_SIZES; k++) {
        size_t size = block_sizes[k];
        union {
            unsigned char bytes[POOL_SPAWN_COPY_MAX + 1];
            uint64_t align;
        } words;
        unsigned char *block = words.bytes + 1; /* 1 off alignment */
        for (i = 0; i < POOL_SPAWN_COPY_MAX; i++) block[i] = (unsigned char)(i * 7);
        if (size >= 2) block[0] = 0xA5, block[1] = (unsigned char)size;
        CHECK_EQ_I64(pool_scope_spawn_copy(s, size >= 2 ? check_block : check_small_block,
                                           size ? block : NULL, size),
                     0);
        CHECK_EQ_I64(block[0], size >= 2 ? 0xA5 : 0);
        CHECK_EQ_I64(block[POOL_SPAWN_COPY_MAX - 1],
                     (unsigned char)((POOL_SPAWN_COPY_MAX - 1) * 7));
        memset(block, 0, POOL_SPAWN_COPY_MAX); /* the copy must not follow */
    }
}

static void no_op(void *arg) { (void)arg; }

/* On p's only worker: as many queued spawns as the throttle lets through,
   then the blocks, which it runs at once. */
static void spawn_blocks_at_once(void *arg) {
    pool_scope s;
    int i;
    pool_scope_init(&s, (pool *)arg);
    for (i = 0; i < POOL_SPAWN_THROTTLE_DEFAULT; i++)
        CHECK_EQ_I64(pool_scope_spawn_copy(&s, no_op, NULL, 0), 0);
    spawn_blocks(&s);
    pool_scope_wait(&s);
}

/* pool__copy_block (which reads and writes in words of its own) against
   memcpy: every size, 16 source offsets, guard bytes after the copy. */
static void check_copy_exhaustively(void) {
    union {
        unsigned char bytes[POOL_SPAWN_COPY_MAX + 32];
        uint64_t align;
    } from;
    pool__copy_args to[2]; /* the second one catches a write past the first */
    size_t size, offset, i;
    long wrong = 0;
    for (i = 0; i < sizeof from.bytes; i++) from.bytes[i] = (unsigned char)(i * 13 + 5);
    for (size = 0; size <= POOL_SPAWN_COPY_MAX; size++)
        for (offset = 0; offset < 16; offset++) {
            memset(to, 0xEE, sizeof to);
            pool__copy_block(to[0].bytes, from.bytes + offset, size);
            wrong += memcmp(to[0].bytes, from.bytes + offset, size) != 0;
            for (i = size; i < sizeof to; i++) wrong += ((unsigned char *)to)[i] != 0xEE;
        }
    CHECK_EQ_I64(wrong, 0);
}

static void part_blocks(void) {
    pool *p = test_pool(2), *one = test_pool(1);
    pool_stats before, after;
    pool_scope s;
    test_watchdog(30, "test_spawn_copy blocks");
    printf("  blocks: 0 to %d bytes arrive intact and aligned, queued and at once\n",
           POOL_SPAWN_COPY_MAX);
    check_copy_exhaustively();
    pool_scope_init(&s, p);
    spawn_blocks(&s); /* from outside: queued */
    pool_scope_wait(&s);
    CHECK_EQ_I64(atomic_load(&block_runs), (long)BLOCK_SIZES);
    pool_stats_get(one, &before);
    pool_call_on_worker(one, spawn_blocks_at_once, one);
    pool_stats_get(one, &after);
    CHECK_EQ_I64(after.spawns_inline - before.spawns_inline, (long)BLOCK_SIZES);
    CHECK_EQ_I64(atomic_load(&block_runs), 2 * (long)BLOCK_SIZES);
    CHECK_EQ_I64(atomic_load(&block_wrong), 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
    CHECK_EQ_I64(pool_destroy(one), 0);
}

/* ---- cancel ---- */

static atomic_int cancel_ran, on_cancel_calls;

static void cancel_task(void *arg) {
    (void)arg;
    atomic_fetch_add(&cancel_ran, 1);
}

static void count_on_cancel(pool_task *t) {
    (void)t;
    atomic_fetch_add(&on_cancel_calls, 1);
}

#define CANCEL_ROUNDS 10
#define CANCEL_SPAWNS 1000

static void part_cancel(void) {
    pool *p = test_pool(1);
    int round, i, dummy = 0;
    test_watchdog(60, "test_spawn_copy cancel");
    printf("  cancel: copied spawns skipped by a cancel, on_cancel not called, cells back\n");
    atomic_store(&slabs_allocated, 0);
    for (round = 0; round < CANCEL_ROUNDS; round++) {
        test_gate gate = TEST_GATE_INIT;
        pool_scope s;
        atomic_store(&cancel_ran, 0);
        CHECK_EQ_I64(pool_submit(p, &gate.task), 0);
        test_gate_wait_entered(&gate);
        pool_scope_init(&s, p);
        CHECK_EQ_I64(pool_scope_on_cancel(&s, count_on_cancel), 0);
        for (i = 0; i < CANCEL_SPAWNS; i++)
            CHECK_EQ_I64(pool_scope_spawn_copy(&s, cancel_task, &dummy, sizeof dummy), 0);
        CHECK_EQ_I64(pool_scope_cancel(&s), 0);
        CHECK_EQ_I64(pool_scope_spawn_copy(&s, cancel_task, &dummy, sizeof dummy), ECANCELED);
        test_gate_open(&gate);
        CHECK_EQ_I64(pool_scope_wait_status(&s), ECANCELED);
        CHECK_EQ_I64(atomic_load(&cancel_ran), 0);
        CHECK_EQ_I64(atomic_load(&on_cancel_calls), 0);
    }
    /* The skipped cells are freed into the caches of the threads that
       skipped them (the worker, main's slot), which keep at most two slabs'
       worth each and hand the rest to the shared list: one round's cells,
       plus what up to 5 caches may hoard (3 slabs each, see part cells).
       Cells never freed would take a round's worth every round. */
    CHECK_MSG(atomic_load(&slabs_allocated) <=
                  (CANCEL_SPAWNS + POOL__COPY_SLAB - 1) / POOL__COPY_SLAB + 5 * 3,
              "%ld slabs for %d rounds of %d skipped spawns", atomic_load(&slabs_allocated),
              CANCEL_ROUNDS, CANCEL_SPAWNS);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- errors ---- */

static atomic_int error_runs;

static void error_task(void *arg) {
    (void)arg;
    atomic_fetch_add(&error_runs, 1);
}

static pool_task queued_tasks[POOL_SPAWN_THROTTLE_DEFAULT];

static void no_task(pool_task *t) { (void)t; }

/* On p's only worker, which has no cell yet: plain spawns up to the
   throttle, then a copied one with slabs refused, which runs at once. */
static void spawn_without_cell(void *arg) {
    pool_scope s;
    int i;
    pool_scope_init(&s, (pool *)arg);
    for (i = 0; i < POOL_SPAWN_THROTTLE_DEFAULT; i++) {
        queued_tasks[i] = (pool_task)POOL_TASK_INIT(no_task);
        CHECK_EQ_I64(pool_scope_spawn(&s, &queued_tasks[i]), 0);
    }
    atomic_store(&refuse_slabs, 1);
    CHECK_EQ_I64(pool_scope_spawn_copy(&s, error_task, &i, sizeof i), 0);
    atomic_store(&refuse_slabs, 0);
    pool_scope_wait(&s);
}

static void part_errors(void) {
    unsigned char block[POOL_SPAWN_COPY_MAX + 1] = {0};
    pool *p = test_pool(2);
    pool_scope s;
    test_watchdog(30, "test_spawn_copy errors");
    printf("  errors: EINVAL, ENOMEM\n");
    pool_scope_init(&s, p);
    CHECK_EQ_I64(pool_scope_spawn_copy(NULL, error_task, block, 1), EINVAL);
    CHECK_EQ_I64(pool_scope_spawn_copy(&s, NULL, block, 1), EINVAL);
    CHECK_EQ_I64(pool_scope_spawn_copy(&s, error_task, block, sizeof block), EINVAL);
    CHECK_EQ_I64(pool_scope_spawn_copy(&s, error_task, NULL, 1), EINVAL);
    atomic_store(&refuse_slabs, 1); /* a fresh pool has no cell: main takes from the shared list */
    CHECK_EQ_I64(pool_scope_spawn_copy(&s, error_task, block, 1), ENOMEM);
    atomic_store(&refuse_slabs, 0);
    CHECK_EQ_I64(pool_scope_spawn_copy(&s, error_task, block, 1), 0);
    pool_scope_wait(&s);
    CHECK_EQ_I64(atomic_load(&error_runs), 1);
    CHECK_EQ_I64(pool_destroy(p), 0);
    p = test_pool(1);
    pool_call_on_worker(p, spawn_without_cell, p);
    CHECK_EQ_I64(atomic_load(&error_runs), 2);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

static const test_part parts[] = {
    {"tree", part_tree},     {"cells", part_cells},   {"outside", part_outside},
    {"blocks", part_blocks}, {"cancel", part_cancel}, {"errors", part_errors},
};

int main(int argc, char **argv) {
    test_run_parts(argc, argv, parts, sizeof parts / sizeof parts[0]);
    return test_finish("test_spawn_copy");
}
