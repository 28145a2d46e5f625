/* bench/peers/dag_pool.c -- the DAG of bench/peers/dag.h as a pool.h graph (pool_graph_*).
 *
 *     cc -O2 -pthread bench/peers/dag_pool.c -o dag-pool-bench
 *     ./dag-pool-bench [THREADS [RUNS [REPS]]]
 *
 * The same arguments, repetitions, checks and output as dag_tbb.cpp (names "pool_..." instead of
 * "tbb_..."), so that bench/peers/dag.sh can put the two side by side. One pool_graph_node per
 * node and one pool_graph_link per edge, built once; a run is pool_graph_run, then
 * pool_graph_wait. A pool of THREADS workers runs every repetition inside pool_call_on_worker, so
 * that THREADS threads work, as in oneTBB's arena of THREADS slots (the waiting worker runs nodes
 * meanwhile, as wait_for_all's caller does).
 */
#define POOL_IMPLEMENTATION
#include "../../pool.h"

#include <string.h>

#include "dag.h"

struct node {
    pool_graph_node node; /* first: a cast recovers the node */
    uint32_t index;
};

static struct dag the_dag;
static struct node nodes[DAG_NODES];
static pool_graph_edge edges[DAG_EDGES];
static pool_graph graph;

static void node_run(pool_graph_node *self) {
    dag_node(&the_dag, ((struct node *)(void *)self)->index);
}

static void build(pool *p) {
    uint32_t i, k, e = 0;
    int err;
    pool_graph_init(&graph, p);
    for (i = 0; i < DAG_NODES; i++) {
        nodes[i].node = (pool_graph_node)POOL_GRAPH_NODE_INIT(node_run);
        nodes[i].index = i;
        if ((err = pool_graph_add(&graph, &nodes[i].node)) != 0) goto failed;
    }
    for (i = DAG_WIDTH; i < DAG_NODES; i++)
        for (k = 0; k < DAG_PREDS; k++) {
            err = pool_graph_link(&graph, &edges[e++], &nodes[the_dag.pred[i][k]].node,
                                  &nodes[i].node);
            if (err) goto failed;
        }
    return;
failed:
    fprintf(stderr, "dag-pool: FAILED: building the graph: %s\n", strerror(err));
    exit(1);
}

struct repetition {
    long runs;
    const char *who;
    int serial;
    uint64_t total_ns;
};

/* `runs` runs (graph or serial), each timed alone and checked after. */
static void repetition(void *arg) {
    struct repetition *r = (struct repetition *)arg;
    long i;
    r->total_ns = 0;
    for (i = 0; i < r->runs; i++) {
        uint64_t t0 = dag_now_ns();
        int err = 0;
        if (r->serial) dag_serial_run(&the_dag);
        else if ((err = pool_graph_run(&graph)) == 0) err = pool_graph_wait(&graph);
        r->total_ns += dag_now_ns() - t0;
        if (err) {
            fprintf(stderr, "dag-pool: FAILED: run %ld: %s\n", i, strerror(err));
            exit(1);
        }
        dag_check("dag-pool", dag_collect(&the_dag), r->who, i);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, long n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    long threads = dag_arg("dag-pool", argc, argv, 1, "THREADS", 2);
    long runs = dag_arg("dag-pool", argc, argv, 2, "RUNS", 10000);
    long reps = dag_arg("dag-pool", argc, argv, 3, "REPS", 5), i;
    double *pool_ns = (double *)calloc((size_t)reps, sizeof(double));
    double *serial_ns = (double *)calloc((size_t)reps, sizeof(double));
    double pool_median, serial_median, pool_min;
    pool_config cfg;
    pool *p;
    struct repetition warm = {0, "pool", 0, 0}, one = {0, "pool", 0, 0};
    if (!pool_ns || !serial_ns) return 1;
    dag_build(&the_dag);
    dag_check("dag-pool", dag_serial(&the_dag), "serial", 0);
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = (int)threads;
    if (pool_create(&p, &cfg) != 0) {
        fprintf(stderr, "dag-pool: pool_create failed\n");
        return 1;
    }
    build(p);
    warm.runs = runs < 1000 ? runs : 1000;
    pool_call_on_worker(p, repetition, &warm);
    one.runs = runs;
    for (i = 0; i < reps; i++) {
        pool_call_on_worker(p, repetition, &one);
        pool_ns[i] = (double)one.total_ns / (double)runs;
    }
    warm.serial = one.serial = 1;
    warm.who = one.who = "serial";
    repetition(&warm);
    for (i = 0; i < reps; i++) {
        repetition(&one);
        serial_ns[i] = (double)one.total_ns / (double)runs;
    }
    pool_min = pool_ns[0];
    for (i = 1; i < reps; i++)
        if (pool_ns[i] < pool_min) pool_min = pool_ns[i];
    pool_median = median(pool_ns, reps);
    serial_median = median(serial_ns, reps);
    printf("threads %ld\nruns %ld\nreps %ld\nnodes %u\nedges %u\n", threads, runs, reps, DAG_NODES,
           DAG_EDGES);
    printf("checksum %#" PRIx64 "\n", (uint64_t)DAG_CHECKSUM);
    printf("pool_ns_per_run %.0f\npool_ns_per_edge %.2f\n", pool_median, pool_median / DAG_EDGES);
    printf("pool_ns_per_run_min %.0f\n", pool_min);
    printf("serial_ns_per_run %.0f\nserial_ns_per_edge %.2f\n", serial_median,
           serial_median / DAG_EDGES);
    pool_destroy(p);
    free(pool_ns);
    free(serial_ns);
    return 0;
}
