/* test_graph.c - task graphs (pool_graph_*).
 *
 *   layered   a 1000-node DAG of 10 layers, 4 distinct predecessors per
 *             node, run 200 times from outside, from a worker, and waited
 *             for from another thread: every node runs exactly once per
 *             run, never before a predecessor has finished (a sequence
 *             number taken at each node's start and end), and each node's
 *             value, computed from its predecessors', matches the serial
 *             answer.
 *   shapes    an empty graph, a single node, a chain, a fan-out and a
 *             fan-in.
 *   cycles    a self-edge and a 3-cycle behind a root: ELOOP, nothing
 *             runs, and the graph stays refused until it changes.
 *   errors    EINVAL and EBUSY: NULLs, a node of another graph, a node
 *             added twice, an edge linked twice, a run before the last
 *             one's wait, add and link while running, a node that the
 *             graph's second pool_graph_init forgot (no node of it: it
 *             can be neither linked nor added again); EDEADLK: a wait from
 *             inside a node.
 *   cancel    a node cancels its run: its successors and every node not
 *             started do not run, the wait says ECANCELED, and the next
 *             run runs every node.
 *   waiters   two threads wait for each run; the one that returns first
 *             starts the next run at once: the other's return must not end
 *             that run (a second run would then be accepted while the first
 *             is under way, and nodes run twice or not at all).
 *   overtaken the other way round: main is the first waiter of each run
 *             and starts the next as soon as it is back; the second
 *             waiter, blocked meanwhile, must return when its own run
 *             ended (not wait for the next, whose gate it would open), and
 *             with that run's outcome (every third run is cancelled). In
 *             odd rounds it looks only once the next run has started.
 *   late      a second waiter of each run stays blocked while main ends
 *             that run and makes up to four more, cancelled or not: it
 *             must then say its own run's outcome (ECANCELED after later
 *             runs were cancelled too, 0 after they were).
 *   refused   a waiter blocked on a run that is refused (a cycle), 32
 *             runs after a cancelled one whose outcome bit it shares,
 *             says 0.
 *   starting  a thread that saw a run's first node start waits for the
 *             run before pool_graph_run has published it (a test hook
 *             holds the publication until it blocks): it must wait for
 *             the whole run, whose second node waits for the publication;
 *             in even rounds it is the run's only waiter. Half the runs
 *             are made on the caller, as with no pool (white-box), where
 *             the first node is held until that thread waits. The first
 *             node's wait for its own graph is refused (EDEADLK).
 */
#include <sched.h>
#include <stdatomic.h>

/* The overtaken part opens its gate once the second waiter has counted
   itself blocked until main ends the run (a test hook in pool_graph_wait),
   and in odd rounds holds that waiter until main has started the next
   run. */
static atomic_int overtaken_closed, overtaken_go, overtaken_next;
static _Atomic(const void *) overtaken_graph_at;

/* The starting part holds each run's publication until a thread that saw
   its first node start has blocked in pool_graph_wait (or returned). */
static atomic_int starting_blocked, starting_returned;
static _Atomic(const void *) starting_graph_at;

/* The late part holds its second waiter, blocked, until main lets it go. */
static atomic_int late_blocked, late_released;
static _Atomic(const void *) late_graph_at;

/* The refused part holds a refusal until a waiter has blocked on the run. */
static atomic_int refused_blocked;
static _Atomic(const void *) refused_graph_at;

static void graph_wait_blocking(const void *g) {
    int round = atomic_load(&overtaken_go);
    if (g == atomic_load(&late_graph_at)) {
        atomic_store(&late_blocked, 1);
        while (!atomic_load(&late_released)) sched_yield();
    }
    if (g == atomic_load(&starting_graph_at)) atomic_store(&starting_blocked, 1);
    if (g == atomic_load(&refused_graph_at)) atomic_store(&refused_blocked, 1);
    if (g != atomic_load(&overtaken_graph_at)) return;
    atomic_store(&overtaken_closed, 0);
    if (round % 2)
        while (atomic_load(&overtaken_next) < round) sched_yield();
}
#define POOL__GRAPH_WAIT_BLOCKING(g) graph_wait_blocking(g)

static void graph_publishing(const void *g) {
    if (g != atomic_load(&starting_graph_at)) return;
    while (!atomic_load(&starting_blocked) && !atomic_load(&starting_returned)) sched_yield();
}
#define POOL__GRAPH_PUBLISHING(g) graph_publishing(g)

static void graph_refusing(const void *g) {
    if (g != atomic_load(&refused_graph_at)) return;
    while (!atomic_load(&refused_blocked)) sched_yield();
}
#define POOL__GRAPH_REFUSING(g) graph_refusing(g)

#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#include <stdlib.h>

#define LAYERS 10
#define WIDTH 100
#define NODES (LAYERS * WIDTH)
#define PREDS 4

typedef struct dag_node {
    pool_graph_node node;
    int id;
    int preds[PREDS]; /* layer > 0 only */
    uint64_t value;
    atomic_long started, finished, runs; /* sequence numbers, and runs in this round */
} dag_node;

static dag_node dag[NODES];
static pool_graph_edge dag_edges[NODES * PREDS];
static uint64_t dag_expected[NODES];
static atomic_long sequence;
static pool_graph dag_graph;

static uint64_t mix(uint64_t x) {
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    return x ^ (x >> 29);
}

static void dag_run(pool_graph_node *self) {
    dag_node *d = (dag_node *)(void *)self;
    uint64_t sum = (uint64_t)d->id;
    int k;
    atomic_store(&d->started, atomic_fetch_add(&sequence, 1));
    if (d->id >= WIDTH)
        for (k = 0; k < PREDS; k++) sum += dag[d->preds[k]].value; /* finished: see the edges */
    d->value = mix(sum);
    atomic_fetch_add(&d->runs, 1);
    atomic_store(&d->finished, atomic_fetch_add(&sequence, 1));
}

static void dag_build(pool *p) {
    uint64_t rng = 12345;
    int i, k, e = 0;
    pool_graph_init(&dag_graph, p);
    for (i = 0; i < NODES; i++) {
        dag[i].node = (pool_graph_node)POOL_GRAPH_NODE_INIT(dag_run);
        dag[i].id = i;
        CHECK_EQ_I64(pool_graph_add(&dag_graph, &dag[i].node), 0);
    }
    for (i = WIDTH; i < NODES; i++) {
        int layer_start = (i / WIDTH - 1) * WIDTH;
        for (k = 0; k < PREDS; k++) {
            int pred, j, fresh;
            do { /* distinct predecessors */
                pred = layer_start + (int)(test_rand(&rng) % WIDTH);
                fresh = 1;
                for (j = 0; j < k; j++) fresh &= dag[i].preds[j] != pred;
            } while (!fresh);
            dag[i].preds[k] = pred;
            CHECK_EQ_I64(
                pool_graph_link(&dag_graph, &dag_edges[e++], &dag[pred].node, &dag[i].node), 0);
        }
    }
    for (i = 0; i < NODES; i++) { /* the serial answer, in index order: a topological one */
        uint64_t sum = (uint64_t)i;
        if (i >= WIDTH)
            for (k = 0; k < PREDS; k++) sum += dag_expected[dag[i].preds[k]];
        dag_expected[i] = mix(sum);
    }
}

static void dag_reset(void) {
    int i;
    for (i = 0; i < NODES; i++) {
        atomic_store(&dag[i].runs, 0);
        dag[i].value = 0;
    }
}

/* Every node ran once, after its predecessors, with the serial value. */
static void dag_check(const char *how, long round) {
    int i, k, bad = 0;
    for (i = 0; i < NODES && bad < 5; i++) {
        if (atomic_load(&dag[i].runs) != 1 || dag[i].value != dag_expected[i]) {
            CHECK_MSG(0, "%s, run %ld: node %d ran %ld times, value %s", how, round, i,
                      atomic_load(&dag[i].runs),
                      dag[i].value == dag_expected[i] ? "right" : "wrong");
            bad++;
        }
        if (i >= WIDTH)
            for (k = 0; k < PREDS; k++)
                if (atomic_load(&dag[dag[i].preds[k]].finished) > atomic_load(&dag[i].started)) {
                    CHECK_MSG(0, "%s, run %ld: node %d started before predecessor %d finished", how,
                              round, i, dag[i].preds[k]);
                    bad++;
                }
    }
}

static void dag_round(void *arg) {
    long round = *(long *)arg;
    dag_reset();
    CHECK_EQ_I64(pool_graph_run(&dag_graph), 0);
    CHECK_EQ_I64(pool_graph_wait(&dag_graph), 0);
    dag_check("on a worker", round);
}

static void *dag_waiter(void *arg) {
    (void)arg;
    CHECK_EQ_I64(pool_graph_wait(&dag_graph), 0);
    return NULL;
}

static void part_layered(void) {
    pool *p = test_pool(2);
    long rounds = (long)test_scaled(200, 10), r;
    test_watchdog(120, "test_graph layered: runs of a 1000-node DAG");
    printf("  layered: a %d-node DAG (%d layers, %d predecessors each), %ld runs each from "
           "outside, a worker, and waited for on another thread\n",
           NODES, LAYERS, PREDS, rounds);
    dag_build(p);
    for (r = 0; r < rounds; r++) {
        pthread_t th;
        dag_reset();
        CHECK_EQ_I64(pool_graph_run(&dag_graph), 0);
        CHECK_EQ_I64(pool_graph_wait(&dag_graph), 0);
        dag_check("from outside", r);
        pool_call_on_worker(p, dag_round, &r);
        dag_reset();
        CHECK_EQ_I64(pool_graph_run(&dag_graph), 0);
        CHECK(pthread_create(&th, NULL, dag_waiter, NULL) == 0);
        pthread_join(th, NULL);
        dag_check("waited on another thread", r);
    }
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- shapes, cycles, errors, cancel: small graphs of counted nodes ---- */

typedef struct small_node {
    pool_graph_node node;
    atomic_int runs;
} small_node;

static void small_run(pool_graph_node *self) { atomic_fetch_add(&((small_node *)self)->runs, 1); }

/* A graph of n counted nodes, none linked. */
static void small_graph(pool_graph *g, pool *p, small_node *nodes, int n) {
    int i;
    pool_graph_init(g, p);
    for (i = 0; i < n; i++) {
        nodes[i].node = (pool_graph_node)POOL_GRAPH_NODE_INIT(small_run);
        atomic_store(&nodes[i].runs, 0);
        CHECK_EQ_I64(pool_graph_add(g, &nodes[i].node), 0);
    }
}

static long small_runs(const small_node *nodes, int n) {
    long total = 0;
    int i;
    for (i = 0; i < n; i++) total += atomic_load(&nodes[i].runs);
    return total;
}

static void part_shapes(void) {
    pool *p = test_pool(2);
    pool_graph g;
    small_node n[64];
    pool_graph_edge e[128];
    int i;
    test_watchdog(30, "test_graph shapes");
    printf("  shapes: empty, one node, a chain, a fan-out, a fan-in\n");
    pool_graph_init(&g, p);
    CHECK_EQ_I64(pool_graph_run(&g), 0); /* empty */
    CHECK_EQ_I64(pool_graph_wait(&g), 0);
    small_graph(&g, p, n, 1);
    CHECK_EQ_I64(pool_graph_run(&g), 0);
    CHECK_EQ_I64(pool_graph_wait(&g), 0);
    CHECK_EQ_I64(small_runs(n, 1), 1);
    memset(e, 0, sizeof e);
    small_graph(&g, p, n, 64); /* a chain */
    for (i = 1; i < 64; i++)
        CHECK_EQ_I64(pool_graph_link(&g, &e[i], &n[i - 1].node, &n[i].node), 0);
    CHECK_EQ_I64(pool_graph_run(&g), 0);
    CHECK_EQ_I64(pool_graph_wait(&g), 0);
    CHECK_EQ_I64(small_runs(n, 64), 64);
    memset(e, 0, sizeof e);
    small_graph(&g, p, n, 64); /* node 0 before nodes 1-62, all of them before node 63 */
    for (i = 1; i < 63; i++) {
        CHECK_EQ_I64(pool_graph_link(&g, &e[2 * i], &n[0].node, &n[i].node), 0);
        CHECK_EQ_I64(pool_graph_link(&g, &e[2 * i + 1], &n[i].node, &n[63].node), 0);
    }
    for (i = 0; i < 3; i++) { /* again, unchanged: no check */
        CHECK_EQ_I64(pool_graph_run(&g), 0);
        CHECK_EQ_I64(pool_graph_wait(&g), 0);
    }
    CHECK_EQ_I64(small_runs(n, 64), 3 * 64);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

static void part_cycles(void) {
    pool *p = test_pool(2);
    pool_graph g;
    small_node n[4];
    pool_graph_edge e[4];
    test_watchdog(30, "test_graph cycles");
    printf("  cycles: a self-edge, a 3-cycle behind a root\n");
    memset(e, 0, sizeof e);
    small_graph(&g, p, n, 1);
    CHECK_EQ_I64(pool_graph_link(&g, &e[0], &n[0].node, &n[0].node), 0);
    CHECK_EQ_I64(pool_graph_run(&g), ELOOP);
    CHECK_EQ_I64(pool_graph_run(&g), ELOOP); /* still, until it changes */
    CHECK_EQ_I64(pool_graph_wait(&g), 0);    /* nothing to wait for */
    CHECK_EQ_I64(small_runs(n, 1), 0);
    memset(e, 0, sizeof e);
    small_graph(&g, p, n, 4); /* 0 -> 1 -> 2 -> 3 -> 1 */
    CHECK_EQ_I64(pool_graph_link(&g, &e[0], &n[0].node, &n[1].node), 0);
    CHECK_EQ_I64(pool_graph_link(&g, &e[1], &n[1].node, &n[2].node), 0);
    CHECK_EQ_I64(pool_graph_link(&g, &e[2], &n[2].node, &n[3].node), 0);
    CHECK_EQ_I64(pool_graph_link(&g, &e[3], &n[3].node, &n[1].node), 0);
    CHECK_EQ_I64(pool_graph_run(&g), ELOOP);
    CHECK_EQ_I64(small_runs(n, 4), 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- errors ---- */

static test_gate *errors_gate;
static pool_graph *errors_graph;
static atomic_int errors_deadlk;

static void gate_node(pool_graph_node *self) {
    (void)self;
    test_gate_run(&errors_gate->task);
}

static void waits_for_own_graph(pool_graph_node *self) {
    (void)self;
    atomic_store(&errors_deadlk, pool_graph_wait(errors_graph));
}

static void part_errors(void) {
    pool *p = test_pool(2);
    pool_graph g, other;
    small_node n[3], x, fresh;
    pool_graph_node gate = POOL_GRAPH_NODE_INIT(gate_node), late = POOL_GRAPH_NODE_INIT(small_run);
    pool_graph_node self_waiter = POOL_GRAPH_NODE_INIT(waits_for_own_graph);
    pool_graph_node no_run = POOL_GRAPH_NODE_INIT(NULL);
    pool_graph_edge e[3], spare;
    test_gate held = TEST_GATE_INIT;
    test_watchdog(30, "test_graph errors");
    printf("  errors: bad arguments, a node or edge used twice, changes while running, a wait "
           "from a node\n");
    memset(e, 0, sizeof e);
    memset(&spare, 0, sizeof spare);
    small_graph(&g, p, n, 3);
    small_graph(&other, p, &x, 1);
    pool_graph_init(NULL, p);
    CHECK_EQ_I64(pool_graph_add(NULL, &late), EINVAL);
    CHECK_EQ_I64(pool_graph_add(&g, NULL), EINVAL);
    CHECK_EQ_I64(pool_graph_add(&g, &no_run), EINVAL);
    CHECK_EQ_I64(pool_graph_add(&g, &n[0].node), EBUSY);     /* added twice */
    CHECK_EQ_I64(pool_graph_add(&other, &n[0].node), EBUSY); /* in another graph */
    CHECK_EQ_I64(pool_graph_link(NULL, &e[0], &n[0].node, &n[1].node), EINVAL);
    CHECK_EQ_I64(pool_graph_link(&g, NULL, &n[0].node, &n[1].node), EINVAL);
    CHECK_EQ_I64(pool_graph_link(&g, &e[0], NULL, &n[1].node), EINVAL);
    CHECK_EQ_I64(pool_graph_link(&g, &e[0], &n[0].node, NULL), EINVAL);
    CHECK_EQ_I64(pool_graph_link(&g, &e[0], &n[0].node, &x.node), EINVAL); /* another graph's */
    CHECK_EQ_I64(pool_graph_link(&g, &e[0], &n[0].node, &n[1].node), 0);
    CHECK_EQ_I64(pool_graph_link(&g, &e[0], &n[1].node, &n[2].node), EBUSY); /* edge in use */
    CHECK_EQ_I64(pool_graph_run(NULL), EINVAL);
    CHECK_EQ_I64(pool_graph_wait(NULL), EINVAL);
    CHECK_EQ_I64(pool_graph_cancel(NULL), EINVAL);
    CHECK_EQ_I64(pool_graph_cancelled(NULL), 0);
    /* While running: a node holds the run until the gate opens. */
    errors_gate = &held;
    CHECK_EQ_I64(pool_graph_add(&g, &gate), 0);
    CHECK_EQ_I64(pool_graph_run(&g), 0);
    test_gate_wait_entered(&held);
    CHECK_EQ_I64(pool_graph_run(&g), EBUSY);
    CHECK_EQ_I64(pool_graph_add(&g, &late), EBUSY);
    CHECK_EQ_I64(pool_graph_link(&g, &spare, &n[1].node, &n[2].node), EBUSY);
    test_gate_open(&held);
    CHECK_EQ_I64(pool_graph_wait(&g), 0);
    CHECK_EQ_I64(small_runs(n, 3), 3);
    CHECK_EQ_I64(pool_graph_link(&g, &spare, &n[1].node, &n[2].node), 0); /* after the wait */
    /* A wait from inside a node of the graph would wait for itself. */
    errors_graph = &other;
    CHECK_EQ_I64(pool_graph_add(&other, &self_waiter), 0);
    atomic_store(&errors_deadlk, -1);
    CHECK_EQ_I64(pool_graph_run(&other), 0);
    CHECK_EQ_I64(pool_graph_wait(&other), 0);
    CHECK_EQ_I64(atomic_load(&errors_deadlk), EDEADLK);
    /* Initialised again, other forgets x: linked to a new node, x would
       hold it back for ever, as a predecessor that never runs. */
    memset(e, 0, sizeof e);
    small_graph(&other, p, &fresh, 1);
    CHECK_EQ_I64(pool_graph_link(&other, &e[0], &x.node, &fresh.node), EINVAL);
    CHECK_EQ_I64(pool_graph_link(&other, &e[0], &fresh.node, &x.node), EINVAL);
    CHECK_EQ_I64(pool_graph_add(&other, &x.node), EBUSY);
    CHECK_EQ_I64(pool_graph_run(&other), 0);
    CHECK_EQ_I64(pool_graph_wait(&other), 0);
    CHECK_EQ_I64(small_runs(&fresh, 1), 1);
    CHECK_EQ_I64(small_runs(&x, 1), 1); /* its one run in other's first graph */
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- cancel ---- */

#define CANCEL_CHAIN 50

static pool_graph cancel_graph;
static small_node cancel_nodes[CANCEL_CHAIN];
static pool_graph_edge cancel_edges[CANCEL_CHAIN];
static int cancel_at;

static void cancelling_run(pool_graph_node *self) {
    small_run(self);
    if ((small_node *)self == &cancel_nodes[cancel_at]) {
        CHECK_EQ_I64(pool_graph_cancel(&cancel_graph), 0);
        CHECK(pool_graph_cancelled(&cancel_graph));
    }
}

static void part_cancel(void) {
    pool *p = test_pool(2);
    int i;
    test_watchdog(30, "test_graph cancel");
    printf("  cancel: node %d of a %d-node chain cancels the run\n", CANCEL_CHAIN / 2,
           CANCEL_CHAIN);
    memset(cancel_edges, 0, sizeof cancel_edges);
    small_graph(&cancel_graph, p, cancel_nodes, CANCEL_CHAIN);
    for (i = 0; i < CANCEL_CHAIN; i++) cancel_nodes[i].node.run = cancelling_run;
    for (i = 1; i < CANCEL_CHAIN; i++)
        CHECK_EQ_I64(pool_graph_link(&cancel_graph, &cancel_edges[i], &cancel_nodes[i - 1].node,
                                     &cancel_nodes[i].node),
                     0);
    cancel_at = CANCEL_CHAIN / 2;
    CHECK_EQ_I64(pool_graph_run(&cancel_graph), 0);
    CHECK_EQ_I64(pool_graph_wait(&cancel_graph), ECANCELED);
    CHECK_EQ_I64(small_runs(cancel_nodes, CANCEL_CHAIN), CANCEL_CHAIN / 2 + 1);
    CHECK(!pool_graph_cancelled(&cancel_graph));
    cancel_at = CANCEL_CHAIN; /* none: the next run is whole */
    for (i = 0; i < CANCEL_CHAIN; i++) atomic_store(&cancel_nodes[i].runs, 0);
    CHECK_EQ_I64(pool_graph_run(&cancel_graph), 0);
    CHECK_EQ_I64(pool_graph_wait(&cancel_graph), 0);
    CHECK_EQ_I64(small_runs(cancel_nodes, CANCEL_CHAIN), CANCEL_CHAIN);
    /* A cancel with no run under way cancels the next run. */
    for (i = 0; i < CANCEL_CHAIN; i++) atomic_store(&cancel_nodes[i].runs, 0);
    CHECK_EQ_I64(pool_graph_cancel(&cancel_graph), 0);
    CHECK_EQ_I64(pool_graph_run(&cancel_graph), 0);
    CHECK_EQ_I64(pool_graph_wait(&cancel_graph), ECANCELED);
    CHECK_EQ_I64(small_runs(cancel_nodes, CANCEL_CHAIN), 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- waiters ---- */

#define WAITERS_NODES 200

/* A graph of WAITERS_NODES counted nodes, each after `gate`. */
static void gated_graph(pool_graph *g, pool *p, small_node *nodes, pool_graph_edge *edges,
                        pool_graph_node *gate, void (*gate_run)(pool_graph_node *)) {
    int i;
    memset(edges, 0, WAITERS_NODES * sizeof *edges);
    small_graph(g, p, nodes, WAITERS_NODES);
    *gate = (pool_graph_node)POOL_GRAPH_NODE_INIT(gate_run);
    CHECK_EQ_I64(pool_graph_add(g, gate), 0);
    for (i = 0; i < WAITERS_NODES; i++)
        CHECK_EQ_I64(pool_graph_link(g, &edges[i], gate, &nodes[i].node), 0);
}

static pool_graph waiters_graph;
static small_node waiters_nodes[WAITERS_NODES];
static pool_graph_edge waiters_edges[WAITERS_NODES];
static pool_graph_node waiters_gate;
static atomic_int waiters_closed, waiters_go, waiters_done, waiters_status;

static void waiters_gate_run(pool_graph_node *self) {
    (void)self;
    while (atomic_load(&waiters_closed)) sched_yield();
}

static void *second_waiter(void *arg) {
    long rounds = *(long *)arg, r;
    for (r = 1; r <= rounds; r++) {
        while (atomic_load(&waiters_go) < r) sched_yield();
        atomic_store(&waiters_status, pool_graph_wait(&waiters_graph));
        atomic_store(&waiters_done, (int)r);
    }
    return NULL;
}

/* Each round, the second waiter owns the wait for the run (white-box: the
   latch's OWNED bit, set before it blocks; the gate holds the run open)
   and main joins it: both are told the run ended, and whichever comes
   back first, the run ends once (a second end would end the next run). */
static void part_waiters(void) {
    pool *p = test_pool(2);
    long rounds = (long)test_scaled(300, 20), r;
    pthread_t th;
    test_watchdog(60, "test_graph waiters: two threads waiting for each run");
    printf("  waiters: two threads wait for each of %ld runs; the first back starts the next\n",
           rounds);
    gated_graph(&waiters_graph, p, waiters_nodes, waiters_edges, &waiters_gate, waiters_gate_run);
    atomic_store(&waiters_go, 0);
    atomic_store(&waiters_done, 0);
    atomic_store(&waiters_closed, 1);
    CHECK(pthread_create(&th, NULL, second_waiter, &rounds) == 0);
    CHECK_EQ_I64(pool_graph_run(&waiters_graph), 0);
    for (r = 1; r <= rounds; r++) {
        atomic_store(&waiters_go, (int)r);
        while (!(__atomic_load_n(&waiters_graph.pool__scope.pool__done.state, __ATOMIC_ACQUIRE) &
                 POOL__LATCH_OWNED))
            test_sleep_us(50);
        atomic_store(&waiters_closed, 0);
        CHECK_EQ_I64(pool_graph_wait(&waiters_graph), 0);
        atomic_store(&waiters_closed, 1);
        if (r < rounds) /* the next run, held by the gate */
            CHECK_EQ_I64(pool_graph_run(&waiters_graph), 0);
        while (atomic_load(&waiters_done) < r) test_sleep_us(50);
        CHECK_EQ_I64(atomic_load(&waiters_status), 0);
        if (r < rounds) /* its return did not end the next run */
            CHECK_EQ_I64(pool_graph_run(&waiters_graph), EBUSY);
    }
    pthread_join(th, NULL);
    CHECK_EQ_I64(small_runs(waiters_nodes, WAITERS_NODES), rounds * WAITERS_NODES);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- overtaken ---- */

static pool_graph overtaken_graph;
static small_node overtaken_nodes[WAITERS_NODES];
static pool_graph_edge overtaken_edges[WAITERS_NODES];
static pool_graph_node overtaken_gate;
static atomic_int overtaken_done, overtaken_status;

static int overtaken_cancels(long round) { return round % 3 == 0; }

/* Held until the second waiter blocks; cancels every third run, so that
   none of its successors starts. */
static void overtaken_gate_run(pool_graph_node *self) {
    (void)self;
    while (atomic_load(&overtaken_closed)) sched_yield();
    if (overtaken_cancels(atomic_load(&overtaken_go))) pool_graph_cancel(&overtaken_graph);
}

static void *overtaken_second(void *arg) {
    long rounds = *(long *)arg, r;
    for (r = 1; r <= rounds; r++) {
        while (atomic_load(&overtaken_go) < r) sched_yield();
        /* White-box: main, the first waiter, owns the wait of the scope. */
        while (!(__atomic_load_n(&overtaken_graph.pool__scope.pool__done.state, __ATOMIC_ACQUIRE) &
                 POOL__LATCH_OWNED))
            sched_yield();
        atomic_store(&overtaken_status, pool_graph_wait(&overtaken_graph));
        atomic_store(&overtaken_done, (int)r);
    }
    return NULL;
}

static void part_overtaken(void) {
    pool *p = test_pool(2);
    long rounds = (long)test_scaled(300, 20), r, ran = 0;
    pthread_t th;
    int i;
    test_watchdog(60, "test_graph overtaken: the second waiter of a run held by the next run");
    printf("  overtaken: main waits first for each of %ld runs and starts the next at once\n",
           rounds);
    gated_graph(&overtaken_graph, p, overtaken_nodes, overtaken_edges, &overtaken_gate,
                overtaken_gate_run);
    atomic_store(&overtaken_go, 0);
    atomic_store(&overtaken_next, 0);
    atomic_store(&overtaken_done, 0);
    atomic_store(&overtaken_closed, 1);
    atomic_store(&overtaken_graph_at, &overtaken_graph);
    CHECK(pthread_create(&th, NULL, overtaken_second, &rounds) == 0);
    CHECK_EQ_I64(pool_graph_run(&overtaken_graph), 0);
    for (r = 1; r <= rounds; r++) {
        int expected = overtaken_cancels(r) ? ECANCELED : 0;
        atomic_store(&overtaken_go, (int)r);
        CHECK_EQ_I64(pool_graph_wait(&overtaken_graph), expected);
        atomic_store(&overtaken_closed, 1);
        ran += !expected;
        if (r < rounds) /* the next run, held by the gate until the next round */
            CHECK_EQ_I64(pool_graph_run(&overtaken_graph), 0);
        atomic_store(&overtaken_next, (int)r);
        while (atomic_load(&overtaken_done) < r) test_sleep_us(50);
        CHECK_EQ_I64(atomic_load(&overtaken_status), expected);
        if (r < rounds) /* its return did not end the next run */
            CHECK_EQ_I64(pool_graph_run(&overtaken_graph), EBUSY);
    }
    pthread_join(th, NULL);
    atomic_store(&overtaken_graph_at, NULL);
    for (i = 0; i < WAITERS_NODES; i++) CHECK_EQ_I64(atomic_load(&overtaken_nodes[i].runs), ran);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- late ---- */

static pool_graph late_graph;
static small_node late_nodes[WAITERS_NODES];
static pool_graph_edge late_edges[WAITERS_NODES];
static pool_graph_node late_gate;
static atomic_int late_hold, late_cancel, late_go, late_done, late_status;

/* Held, in a round's first run, until the second waiter blocks; cancels
   the run when main says so. */
static void late_gate_run(pool_graph_node *self) {
    (void)self;
    if (atomic_load(&late_hold))
        while (!atomic_load(&late_blocked)) sched_yield();
    if (atomic_load(&late_cancel)) pool_graph_cancel(&late_graph);
}

static void *late_second(void *arg) {
    long rounds = *(long *)arg, r;
    for (r = 1; r <= rounds; r++) {
        while (atomic_load(&late_go) < r) sched_yield();
        /* White-box: main, the first waiter, has claimed the run. */
        while ((__atomic_load_n(&late_graph.pool__run, __ATOMIC_ACQUIRE) & POOL__GRAPH_STATE) !=
               POOL__GRAPH_CLAIMED)
            sched_yield();
        atomic_store(&late_status, pool_graph_wait(&late_graph));
        atomic_store(&late_done, (int)r);
    }
    return NULL;
}

/* Starts a run of the late graph, which its gate cancels or not, and holds
   until the second waiter blocks or not. */
static void late_run(int cancel, int hold) {
    atomic_store(&late_cancel, cancel);
    atomic_store(&late_hold, hold);
    CHECK_EQ_I64(pool_graph_run(&late_graph), 0);
}

static void part_late(void) {
    /* Per round: whether its run is cancelled, then the later runs'. */
    static const char *const patterns[] = {"1100", "011", "1", "10101", "0", "01111"};
    const int num_patterns = (int)(sizeof patterns / sizeof patterns[0]);
    pool *p = test_pool(2);
    long rounds = (long)test_scaled(60, 12), r, ran = 0;
    pthread_t th;
    int i;
    test_watchdog(60, "test_graph late: a blocked waiter held while later runs end");
    printf("  late: %ld runs, each with a waiter held blocked while up to 4 more run\n", rounds);
    gated_graph(&late_graph, p, late_nodes, late_edges, &late_gate, late_gate_run);
    atomic_store(&late_go, 0);
    atomic_store(&late_done, 0);
    atomic_store(&late_graph_at, &late_graph);
    CHECK(pthread_create(&th, NULL, late_second, &rounds) == 0);
    for (r = 1; r <= rounds; r++) {
        const char *pattern = patterns[r % num_patterns];
        int expected = pattern[0] == '1' ? ECANCELED : 0;
        size_t k;
        for (k = 0; pattern[k]; k++) ran += pattern[k] == '0';
        atomic_store(&late_blocked, 0);
        atomic_store(&late_released, 0);
        late_run(expected != 0, 1);
        atomic_store(&late_go, (int)r);
        CHECK_EQ_I64(pool_graph_wait(&late_graph), expected);
        for (k = 1; pattern[k]; k++) {
            late_run(pattern[k] == '1', 0);
            CHECK_EQ_I64(pool_graph_wait(&late_graph), pattern[k] == '1' ? ECANCELED : 0);
        }
        atomic_store(&late_released, 1);
        while (atomic_load(&late_done) < r) test_sleep_us(50);
        CHECK_MSG(atomic_load(&late_status) == expected,
                  "round %ld (%s): the held waiter said %d for its run, not %d", r, pattern,
                  atomic_load(&late_status), expected);
    }
    pthread_join(th, NULL);
    atomic_store(&late_graph_at, NULL);
    for (i = 0; i < WAITERS_NODES; i++) CHECK_EQ_I64(atomic_load(&late_nodes[i].runs), ran);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- refused ---- */

static pool_graph refused_graph;
static small_node refused_nodes[4];
static pool_graph_edge refused_edges[2];

/* Waits for the refused graph's run once it is being started. */
static void *refused_waiter(void *arg) {
    /* White-box: the run is STARTING. */
    while ((__atomic_load_n(&refused_graph.pool__run, __ATOMIC_ACQUIRE) & POOL__GRAPH_STATE) !=
           POOL__GRAPH_STARTING)
        sched_yield();
    *(int *)arg = pool_graph_wait(&refused_graph);
    return NULL;
}

static void part_refused(void) {
    pool *p = test_pool(2);
    pthread_t th;
    int i, waited = -1;
    test_watchdog(60, "test_graph refused: a waiter blocked on a run that is refused");
    printf("  refused: a waiter blocked on a run refused 32 runs after a cancelled one\n");
    small_graph(&refused_graph, p, refused_nodes, 4);
    CHECK_EQ_I64(pool_graph_cancel(&refused_graph), 0); /* generation 0: cancelled */
    CHECK_EQ_I64(pool_graph_run(&refused_graph), 0);
    CHECK_EQ_I64(pool_graph_wait(&refused_graph), ECANCELED);
    for (i = 1; i < 32; i++) { /* generations 1 to 31 */
        CHECK_EQ_I64(pool_graph_run(&refused_graph), 0);
        CHECK_EQ_I64(pool_graph_wait(&refused_graph), 0);
    }
    CHECK_EQ_I64(small_runs(refused_nodes, 4), 4 * 31);
    /* A cycle: generation 32, whose outcome shares generation 0's bit, is
       refused while the waiter is blocked on it. */
    CHECK_EQ_I64(pool_graph_link(&refused_graph, &refused_edges[0], &refused_nodes[2].node,
                                 &refused_nodes[3].node),
                 0);
    CHECK_EQ_I64(pool_graph_link(&refused_graph, &refused_edges[1], &refused_nodes[3].node,
                                 &refused_nodes[2].node),
                 0);
    atomic_store(&refused_blocked, 0);
    atomic_store(&refused_graph_at, &refused_graph);
    CHECK(pthread_create(&th, NULL, refused_waiter, &waited) == 0);
    CHECK_EQ_I64(pool_graph_run(&refused_graph), ELOOP);
    pthread_join(th, NULL);
    atomic_store(&refused_graph_at, NULL);
    CHECK_MSG(waited == 0, "the waiter of a refused run said %d", waited);
    CHECK_EQ_I64(small_runs(refused_nodes, 4), 4 * 31);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- starting ---- */

static pool_graph starting_graph;
static small_node starting_last;
static atomic_int starting_first_ran, starting_published, starting_status, starting_seen;
static atomic_int starting_here, starting_own_wait;

/* Waits for its own graph (refused), then lets the observer go. A run
   made here, with no pool, is held as the publication hook would hold it. */
static void starting_first_run(pool_graph_node *self) {
    (void)self;
    atomic_store(&starting_own_wait, pool_graph_wait(&starting_graph));
    atomic_store(&starting_first_ran, 1);
    if (atomic_load(&starting_here))
        while (!atomic_load(&starting_blocked) && !atomic_load(&starting_returned)) sched_yield();
}

static void starting_last_run(pool_graph_node *self) {
    while (!atomic_load(&starting_published)) sched_yield();
    small_run(self);
}

/* Waits for the run whose first node it saw start; says what it saw of
   the last node when the wait returned. */
static void *starting_observer(void *arg) {
    (void)arg;
    while (!atomic_load(&starting_first_ran)) sched_yield();
    atomic_store(&starting_status, pool_graph_wait(&starting_graph));
    atomic_store(&starting_seen, atomic_load(&starting_last.runs));
    atomic_store(&starting_returned, 1);
    return NULL;
}

static void part_starting(void) {
    pool *p = test_pool(2);
    long rounds = (long)test_scaled(100, 10), r;
    pool_graph_node first = POOL_GRAPH_NODE_INIT(starting_first_run);
    pool_graph_edge edge;
    pthread_t th;
    test_watchdog(60, "test_graph starting: a wait for a run not yet published");
    printf("  starting: %ld waits for a run seen to start before it was published\n", rounds);
    memset(&edge, 0, sizeof edge);
    pool_graph_init(&starting_graph, p);
    starting_last.node = (pool_graph_node)POOL_GRAPH_NODE_INIT(starting_last_run);
    atomic_store(&starting_last.runs, 0);
    CHECK_EQ_I64(pool_graph_add(&starting_graph, &first), 0);
    CHECK_EQ_I64(pool_graph_add(&starting_graph, &starting_last.node), 0);
    CHECK_EQ_I64(pool_graph_link(&starting_graph, &edge, &first, &starting_last.node), 0);
    atomic_store(&starting_graph_at, &starting_graph);
    for (r = 1; r <= rounds; r++) {
        int here = r % 4 >= 2; /* the run made on the caller, as with no pool */
        atomic_store(&starting_first_ran, 0);
        atomic_store(&starting_published, here);
        atomic_store(&starting_blocked, 0);
        atomic_store(&starting_returned, 0);
        atomic_store(&starting_own_wait, -1);
        atomic_store(&starting_here, here);
        starting_graph.pool__scope.pool__pool = here ? NULL : p; /* white-box */
        CHECK(pthread_create(&th, NULL, starting_observer, NULL) == 0);
        CHECK_EQ_I64(pool_graph_run(&starting_graph), 0);
        atomic_store(&starting_published, 1);
        if (r % 2) /* else the observer alone waits: the publication must wake it */
            CHECK_EQ_I64(pool_graph_wait(&starting_graph), 0);
        pthread_join(th, NULL);
        CHECK_EQ_I64(atomic_load(&starting_status), 0);
        CHECK_EQ_I64(atomic_load(&starting_seen), r); /* it waited for the last node */
        CHECK_EQ_I64(atomic_load(&starting_blocked), 1);
        CHECK_EQ_I64(atomic_load(&starting_own_wait), EDEADLK);
    }
    starting_graph.pool__scope.pool__pool = p;
    atomic_store(&starting_graph_at, NULL);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

static const test_part parts[] = {
    {"layered", part_layered},     {"shapes", part_shapes}, {"cycles", part_cycles},
    {"errors", part_errors},       {"cancel", part_cancel}, {"waiters", part_waiters},
    {"overtaken", part_overtaken}, {"late", part_late},     {"refused", part_refused},
    {"starting", part_starting},
};

int main(int argc, char **argv) {
    test_run_parts(argc, argv, parts, sizeof parts / sizeof parts[0]);
    return test_finish("test_graph");
}
