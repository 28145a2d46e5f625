/* bench/peers/dag.h -- the task graph of the DAG benchmark: one fixed layered DAG, its per-node
 * work and a serial reference, shared by the programs that run it on one runtime each (dag_tbb.cpp
 * for oneTBB's flow graph, dag_pool.c for pool.h's graphs), so that all of them run the same graph
 * and can be compared by checksum. C99 with POSIX (clock_gettime) that is also valid C++.
 *
 * The graph: DAG_LAYERS layers of DAG_WIDTH nodes, numbered layer by layer (node i is in layer
 * i / DAG_WIDTH). Every node of layer L > 0 has DAG_PREDS distinct predecessors in layer L - 1,
 * drawn by xorshift32 from DAG_SEED; layer 0 has none. So DAG_EDGES = 3600 edges, and the index
 * order is a topological order. 9 nodes of layers 0..8 have no successor (each is missed by all
 * 100 nodes of the next layer with probability 0.96^100, about 2 %): the graph is drawn, not made
 * regular.
 *
 * The work of node i: value[i] = dag_mix(1 + the sum of its predecessors' values, i), a few
 * nanoseconds, so that the benchmark measures the runtime's cost per node and per edge, yet every
 * node reads what its predecessors wrote (a runtime that runs a node too early computes a wrong
 * value).
 *
 * One run of the graph: every node once, in any order its edges allow, starting from value[] all
 * zero; then dag_collect() folds value[] into the checksum and zeroes it again. The zeroing is
 * why every run must produce DAG_CHECKSUM on its own: a node that did not run leaves a 0, and one
 * that ran before a predecessor read that predecessor's 0 -- the previous run's values, which
 * are the same every run, cannot hide either.
 */
#ifndef DAG_H
#define DAG_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define DAG_LAYERS 10u
#define DAG_WIDTH 100u
#define DAG_PREDS 4u
#define DAG_NODES (DAG_LAYERS * DAG_WIDTH)
#define DAG_EDGES ((DAG_LAYERS - 1u) * DAG_WIDTH * DAG_PREDS)
/* xorshift32's state before the first draw (workloads.h's WL_SEED) */
#define DAG_SEED 2463534242u
#define DAG_NONE UINT32_MAX /* the predecessors of a layer-0 node */

/* What one run must fold to: dag_serial() is checked against it, so that a change to the graph,
 * the work or the checksum shows up as a mismatch rather than as a new number. */
#define DAG_CHECKSUM UINT64_C(0xf063054bf391aa38)

struct dag {
    uint32_t pred[DAG_NODES][DAG_PREDS]; /* node i's predecessors; DAG_NONE in layer 0 */
    uint64_t value[DAG_NODES];           /* what each node computed in the current run */
};

static inline uint32_t dag_xorshift32(uint32_t x) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

/* Draws the graph (the same one on every call) and zeroes the values. */
static inline void dag_build(struct dag *d) {
    uint32_t x = DAG_SEED, i, j, k;

    for (i = 0; i < DAG_NODES; i++) {
        uint32_t first = (i / DAG_WIDTH - 1u) * DAG_WIDTH; /* layer L - 1's first node */

        d->value[i] = 0;
        if (i < DAG_WIDTH) {
            for (k = 0; k < DAG_PREDS; k++) d->pred[i][k] = DAG_NONE;
            continue;
        }
        /* Draw until DAG_PREDS distinct ones: a repeated edge would count twice in the sum but
         * once in a flow graph's predecessor count. */
        for (k = 0; k < DAG_PREDS;) {
            uint32_t p;

            x = dag_xorshift32(x);
            p = first + x % DAG_WIDTH;
            for (j = 0; j < k && d->pred[i][j] != p; j++) {
            }
            if (j == k) d->pred[i][k++] = p;
        }
    }
}

/* A cheap integer hash (splitmix64's finalizer, shortened): bijective in x for a fixed i, so a
 * wrong input gives a wrong value. */
static inline uint64_t dag_mix(uint64_t x, uint32_t i) {
    x ^= (uint64_t)i * UINT64_C(0x9e3779b97f4a7c15);
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    return x ^ (x >> 31);
}

/* The work of node i; its predecessors must have run. The 1 keeps every value non-zero (in
 * practice), so that a node that did not run differs from one that did. */
static inline void dag_node(struct dag *d, uint32_t i) {
    uint64_t s = 1;
    uint32_t k;

    if (i >= DAG_WIDTH)
        for (k = 0; k < DAG_PREDS; k++) s += d->value[d->pred[i][k]];
    d->value[i] = dag_mix(s, i);
}

/* After a run: folds every value into the checksum (FNV-1a's step on 64-bit words, so that any
 * one changed value changes the result) and zeroes the values for the next run. */
static inline uint64_t dag_collect(struct dag *d) {
    uint64_t c = UINT64_C(0xcbf29ce484222325);
    uint32_t i;

    for (i = 0; i < DAG_NODES; i++) {
        c = (c ^ d->value[i]) * UINT64_C(0x100000001b3);
        d->value[i] = 0;
    }
    return c;
}

/* What the programs that run the DAG share: a monotonic clock, their arguments, their check. */
static inline uint64_t dag_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* argv[i] if given, else the environment variable, else the default; at least 1. */
static inline long dag_arg(const char *prog, int argc, char **argv, int i, const char *env,
                           long def) {
    const char *s = i < argc ? argv[i] : getenv(env);
    char *end;
    long v;
    if (!s || !*s) return def;
    v = strtol(s, &end, 10);
    if (*end || v < 1) {
        fprintf(stderr, "%s: %s must be a positive integer, not '%s'\n", prog, env, s);
        exit(2);
    }
    return v;
}

/* Exits with status 1 and a message unless a run's checksum is DAG_CHECKSUM. */
static inline void dag_check(const char *prog, uint64_t got, const char *who, long run) {
    if (got == DAG_CHECKSUM) return;
    fprintf(stderr, "%s: FAILED: %s run %ld: checksum %#" PRIx64 ", want %#" PRIx64 "\n", prog, who,
            run, got, (uint64_t)DAG_CHECKSUM);
    exit(1);
}

/* The serial reference: one run in index order (a topological order). */
static inline void dag_serial_run(struct dag *d) {
    uint32_t i;
    for (i = 0; i < DAG_NODES; i++) dag_node(d, i);
}

/* One serial run and its checksum: DAG_CHECKSUM. */
static inline uint64_t dag_serial(struct dag *d) {
    dag_serial_run(d);
    return dag_collect(d);
}

#endif
