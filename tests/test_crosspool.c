/* test_crosspool.c - pools calling into each other.
 *
 * A task on pool A calls pool_join and pool_call on pool B, whose tasks
 * call back into A, and so on, several levels deep. The pools are tiny (1
 * and 2 threads), so a worker that blocked while waiting on the other pool
 * instead of running its own pool's work would deadlock: the watchdog
 * turns that into a failure. Two outside threads start trees on A and on B
 * at the same time. Every tree must count exactly 3^depth leaves.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

typedef struct tree {
    pool *here, *there;
    int depth;
    long leaves;
    atomic_long *bad_index;
} tree;

static void tree_task(void *arg);

static void make_child(tree *child, const tree *parent) {
    child->here = parent->there;
    child->there = parent->here;
    child->depth = parent->depth - 1;
    child->leaves = -1;
    child->bad_index = parent->bad_index;
}

/* Runs on `here`; its three children run on `there`: two through
   pool_join, one through pool_call. */
static void tree_task(void *arg) {
    tree *t = (tree *)arg, a, b, c;
    int w = pool_worker_index();
    /* A spare that stands in for a parked worker has an index of its own
       above the workers'. */
    if (w < 0 || w >= pool_worker_index_limit(t->here)) atomic_fetch_add(t->bad_index, 1);
    if (t->depth == 0) {
        t->leaves = 1;
        return;
    }
    make_child(&a, t);
    make_child(&b, t);
    make_child(&c, t);
    pool_join(t->there, tree_task, &a, tree_task, &b);
    pool_call(t->there, tree_task, &c);
    t->leaves = a.leaves + b.leaves + c.leaves;
}

typedef struct starter {
    tree root;
    int repeats;
    long wrong;
} starter;

static void *starter_main(void *arg) {
    starter *s = (starter *)arg;
    int r;
    for (r = 0; r < s->repeats; r++) {
        tree t = s->root;
        long expect = 1;
        int d;
        for (d = 0; d < t.depth; d++) expect *= 3;
        pool_call(t.here, tree_task, &t);
        if (t.leaves != expect) {
            if (s->wrong++ == 0)
                fprintf(stderr, "    tree counted %ld leaves, not %ld\n", t.leaves, expect);
        }
    }
    return NULL;
}

static void test_pair(int a_threads, int b_threads, int depth, int repeats) {
    pool *a = test_pool(a_threads), *b = test_pool(b_threads);
    atomic_long bad_index;
    starter sa, sb;
    pthread_t ta, tb;
    char name[96];
    double t0 = test_now();
    if (!a || !b) return;
    snprintf(name, sizeof name, "test_crosspool (A %d threads, B %d threads)", a_threads,
             b_threads);
    test_watchdog(60, name);
    atomic_init(&bad_index, 0);
    printf("  A: %d thread(s), B: %d thread(s): trees of depth %d started on A and on B at once, "
           "%d times each\n",
           a_threads, b_threads, depth, repeats);
    memset(&sa, 0, sizeof sa);
    sa.root.here = a;
    sa.root.there = b;
    sa.root.depth = depth;
    sa.root.bad_index = &bad_index;
    sa.repeats = repeats;
    sb = sa;
    sb.root.here = b;
    sb.root.there = a;
    pthread_create(&ta, NULL, starter_main, &sa);
    pthread_create(&tb, NULL, starter_main, &sb);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    printf("    %.2f s\n", test_now() - t0);
    CHECK_EQ_I64(sa.wrong, 0);
    CHECK_EQ_I64(sb.wrong, 0);
    CHECK_EQ_I64(atomic_load(&bad_index), 0);
    CHECK(pool_destroy(a) == 0);
    CHECK(pool_destroy(b) == 0);
}

/* A join on B from A's task whose halves each call back into A and then B
   again: the same worker of A is waiting at several levels at once. */
static void test_single_outside(void) {
    pool *a = test_pool(1), *b = test_pool(1);
    atomic_long bad_index;
    tree t;
    if (!a || !b) return;
    test_watchdog(60, "test_crosspool (single tree, 1+1 threads, depth 8)");
    printf("  A: 1 thread, B: 1 thread: one tree of depth 8 from outside\n");
    atomic_init(&bad_index, 0);
    memset(&t, 0, sizeof t);
    t.here = a;
    t.there = b;
    t.depth = 8;
    t.bad_index = &bad_index;
    pool_call(a, tree_task, &t);
    CHECK_EQ_I64(t.leaves, 6561);
    CHECK_EQ_I64(atomic_load(&bad_index), 0);
    CHECK(pool_destroy(a) == 0);
    CHECK(pool_destroy(b) == 0);
}

int main(void) {
    int repeats = (int)test_scaled(20, 2);
    test_watchdog(60, "test_crosspool");
    printf("test_crosspool: pools calling into each other\n");
    test_single_outside();
    test_pair(1, 1, 5, repeats);
    test_pair(1, 2, 5, repeats);
    test_pair(2, 1, 5, repeats);
    test_pair(2, 2, 6, repeats);
    return test_finish("test_crosspool");
}
