/* bench/peers/dag_tbb.cpp -- the DAG of bench/peers/dag.h on oneTBB's flow graph.
 *
 *     g++ -O3 -Wall -Wextra bench/peers/dag_tbb.cpp -o dag-tbb-bench -ltbb
 *     ./dag-tbb-bench [THREADS [RUNS [REPS]]]
 *
 * THREADS (default 2), RUNS (10000) and REPS (5) come from the arguments, else from the
 * environment variables of the same names, else the defaults.
 *
 * One continue_node<continue_msg> per node and one make_edge per edge, plus a broadcast_node that
 * starts layer 0; the graph is built once. A run is try_put on the start node, then wait_for_all.
 * As in tbb.cpp: a task_arena of THREADS slots and a global_control allowing THREADS; the graph is
 * built and run inside arena.execute, so the graph belongs to that arena, and the calling thread
 * works in wait_for_all beside THREADS - 1 workers.
 *
 * A repetition: RUNS runs, each timed alone (try_put to the end of wait_for_all) and followed by
 * its check against dag.h's DAG_CHECKSUM, untimed (exit status 1 on a mismatch). After one untimed
 * warm-up repetition of at most 1000 runs, REPS repetitions; then the same for dag.h's serial
 * reference on this thread. Prints the medians over the repetitions of the time per run, and per
 * edge (the time per run / DAG_EDGES), one "name value" per line.
 */
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <vector>

#include "dag.h"

using node_t = tbb::flow::continue_node<tbb::flow::continue_msg>;

/* `runs` runs of `one` (a run without its check); returns their total time in ns. */
template <class Run>
static uint64_t repetition(struct dag *d, long runs, const char *who, Run one) {
    uint64_t total = 0;

    for (long r = 0; r < runs; r++) {
        uint64_t t0 = dag_now_ns();
        one();
        total += dag_now_ns() - t0;
        dag_check("dag-tbb", dag_collect(d), who, r);
    }
    return total;
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    long threads = dag_arg("dag-tbb", argc, argv, 1, "THREADS", 2);
    long runs = dag_arg("dag-tbb", argc, argv, 2, "RUNS", 10000);
    long reps = dag_arg("dag-tbb", argc, argv, 3, "REPS", 5);
    std::unique_ptr<struct dag> d(new struct dag);
    std::vector<double> tbb_ns, serial_ns;

    dag_build(d.get());
    dag_check("dag-tbb", dag_serial(d.get()), "serial", 0);

    tbb::global_control control(tbb::global_control::max_allowed_parallelism, (size_t)threads);
    tbb::task_arena arena((int)threads);
    arena.execute([&] {
        tbb::flow::graph g;
        tbb::flow::broadcast_node<tbb::flow::continue_msg> start(g);
        std::vector<std::unique_ptr<node_t>> nodes;
        struct dag *dp = d.get();

        for (uint32_t i = 0; i < DAG_NODES; i++) {
            nodes.emplace_back(new node_t(g, [dp, i](const tbb::flow::continue_msg &) {
                dag_node(dp, i);
                return tbb::flow::continue_msg();
            }));
            if (i < DAG_WIDTH) tbb::flow::make_edge(start, *nodes[i]);
            else
                for (uint32_t k = 0; k < DAG_PREDS; k++)
                    tbb::flow::make_edge(*nodes[dp->pred[i][k]], *nodes[i]);
        }

        auto run = [&] {
            start.try_put(tbb::flow::continue_msg());
            g.wait_for_all();
        };
        repetition(dp, std::min(runs, 1000L), "tbb", run);
        for (long r = 0; r < reps; r++)
            tbb_ns.push_back((double)repetition(dp, runs, "tbb", run) / (double)runs);
    });

    repetition(d.get(), std::min(runs, 1000L), "serial", [&] { dag_serial_run(d.get()); });
    for (long r = 0; r < reps; r++)
        serial_ns.push_back(
            (double)repetition(d.get(), runs, "serial", [&] { dag_serial_run(d.get()); }) /
            (double)runs);

    double tbb = median(tbb_ns), serial = median(serial_ns);
    printf("threads %ld\nruns %ld\nreps %ld\nnodes %u\nedges %u\n", threads, runs, reps, DAG_NODES,
           DAG_EDGES);
    printf("checksum %#" PRIx64 "\n", (uint64_t)DAG_CHECKSUM);
    printf("tbb_ns_per_run %.0f\ntbb_ns_per_edge %.2f\n", tbb, tbb / DAG_EDGES);
    printf("tbb_ns_per_run_min %.0f\n", *std::min_element(tbb_ns.begin(), tbb_ns.end()));
    printf("serial_ns_per_run %.0f\nserial_ns_per_edge %.2f\n", serial, serial / DAG_EDGES);
    return 0;
}
