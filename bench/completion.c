/* bench/completion.c -- how soon an event loop learns that a task finished (pool_completion_*).
 *
 *     usage: completion [THREADS]      default: 2 threads; BENCH_QUICK=1: 20 samples
 *
 * The workload, exactly: the main thread waits in poll() on a completion queue's handle, as an
 * event loop would. Each sample: after a 2 ms pause (every worker falls asleep), main notes the
 * time t0, submits one empty task and blocks in poll(); the task notes when it starts (t1) and
 * posts its item. Main notes when poll returns (t2) and drains the item.
 *   wake-up      t1 - t0: the pool's own wake-up latency, submit to task start
 *   completion   t2 - t0: submit to the loop seeing the finished task
 * Reported: the medians and 99th percentiles over SAMPLES samples, and completion / wake-up.
 * Target (issue 16): completion median <= 2x the wake-up median, measured in the same run.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#include <poll.h>
#include <stddef.h>

#define SAMPLES 400
#define QUICK_SAMPLES 20
#define PAUSE_NS 2000000u

struct probe {
    pool_task task;
    pool_completion_item item;
    uint64_t started_ns;
};

static pool_completion queue;

static void probe_run(pool_task *t) {
    struct probe *p = (struct probe *)(void *)t;
    p->started_ns = bench_now_ns();
    pool_completion_post(&queue, &p->item);
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? bench_parse_threads(argv[1]) : 2;
    int samples = bench_quick() ? QUICK_SAMPLES : SAMPLES, i;
    uint64_t wake[SAMPLES], seen[SAMPLES];
    uint64_t wake_median, seen_median;
    char cpu[128];
    pool *p = bench_pool_create("completion", threads);
    struct pollfd pfd;
    int err = pool_completion_init(&queue);
    if (err) {
        fprintf(stderr, "completion: pool_completion_init failed: %s\n", strerror(err));
        return 1;
    }
    pfd.fd = (int)pool_completion_handle(&queue);
    pfd.events = POLLIN;
    for (i = -1; i < samples; i++) { /* sample -1: the warm-up that starts the threads */
        struct probe probe;
        pool_completion_item *it;
        uint64_t t0, t2;
        probe.task = (pool_task)POOL_TASK_INIT(probe_run);
        bench_sleep_ns(PAUSE_NS);
        t0 = bench_now_ns();
        if (pool_submit(p, &probe.task) != 0) {
            fprintf(stderr, "completion: FAILED: submit refused\n");
            return 1;
        }
        while (poll(&pfd, 1, 10000) != 1) { /* a lost notification would stop here */
            fprintf(stderr, "completion: FAILED: no notification in 10 s\n");
            return 1;
        }
        t2 = bench_now_ns();
        it = pool_completion_drain(&queue);
        if (it != &probe.item || it->next) {
            fprintf(stderr, "completion: FAILED: drained the wrong items\n");
            return 1;
        }
        if (i < 0) continue;
        wake[i] = probe.started_ns - t0;
        seen[i] = t2 - t0;
    }
    wake_median = bench_median_u64(wake, (size_t)samples);
    seen_median = bench_median_u64(seen, (size_t)samples);
    bench_cpu_model(cpu, sizeof cpu);
    printf("completion: an empty task submitted after %u ms idle, seen by poll() on the queue's "
           "handle; pool of %d thread%s, %d samples; %s\n",
           PAUSE_NS / 1000000, threads, threads == 1 ? "" : "s", samples, cpu);
    printf("wake-up (submit to task start)   median %8.1f us   p99 %8.1f us\n",
           bench_us(wake_median), bench_us(bench_quantile_u64(wake, (size_t)samples, 0.99)));
    printf("completion (submit to poll)      median %8.1f us   p99 %8.1f us   %.2fx wake-up\n",
           bench_us(seen_median), bench_us(bench_quantile_u64(seen, (size_t)samples, 0.99)),
           (double)seen_median / (double)wake_median);
    printf("target: completion median <= 2x the wake-up median");
    if (bench_quick()) printf(" (not checked: BENCH_QUICK sizes)\n");
    else if (seen_median <= 2 * wake_median) printf(": met\n");
    else printf(": MISSED\n");
    pool_completion_destroy(&queue);
    bench_pool_destroy("completion", p);
    return 0;
}
