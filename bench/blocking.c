/* bench/blocking.c -- the blocking pool's round trip.
 *
 * From the main (non-worker) thread: pool_submit_blocking_job of a job that only records when it
 * started, then pool_wait_blocking_job. A blocking thread is started and idle beforehand (the
 * warm-up rounds start it), so every round is: queue + signal an idle thread, the thread wakes and
 * runs the job, the waiter sees it done. Reported: the median and p99 of the round trip and of the
 * start latency, over ROUNDS rounds, in two settings:
 *   back to back  the next round starts as soon as the last returned;
 *   after 1 ms    the main thread sleeps 1 ms first, so the blocking thread is surely asleep.
 * For scale, the same with a plain thread blocked on a pthread condition variable (what any
 * blocking pool must at least pay).
 *
 *     usage: blocking [ROUNDS]      default: 20000 (200 with BENCH_QUICK=1)
 *
 * Target (issue 4): round trip median <= 10 us on this machine (Volt reports 13.9 us, Tokio 6.2
 * us).
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "bench.h"

#include <pthread.h>

struct stamp_job {
    pool_blocking_job job;
    uint64_t started_ns;
};

static void stamp_run(pool_blocking_job *j) {
    ((struct stamp_job *)((char *)j - offsetof(struct stamp_job, job)))->started_ns =
        bench_now_ns();
}

/* One round on the pool; stores the start latency and the round trip. */
static void pool_round(pool *p, uint64_t *start_ns, uint64_t *trip_ns) {
    struct stamp_job s;
    uint64_t t0, t1;
    int rc;

    s.job = (pool_blocking_job)POOL_BLOCKING_JOB_INIT(stamp_run);
    s.started_ns = 0;
    t0 = bench_now_ns();
    rc = pool_submit_blocking_job(p, &s.job);
    if (rc == 0) rc = pool_wait_blocking_job(&s.job);
    t1 = bench_now_ns();
    if (rc != 0 || s.started_ns < t0 || s.started_ns > t1) {
        fprintf(stderr,
                "blocking: FAILED: rc %d, started %" PRIu64 " outside %" PRIu64 "..%" PRIu64 "\n",
                rc, s.started_ns, t0, t1);
        exit(1);
    }
    *start_ns = s.started_ns - t0;
    *trip_ns = t1 - t0;
}

/* The floor: one thread blocked on a condvar, handed one job at a time, answering on another. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t request, reply;
    int pending, done, quit;
    uint64_t started_ns;
} floor_state = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0};

static void *floor_thread(void *arg) {
    (void)arg;
    pthread_mutex_lock(&floor_state.lock);
    for (;;) {
        while (!floor_state.pending && !floor_state.quit)
            pthread_cond_wait(&floor_state.request, &floor_state.lock);
        if (floor_state.quit) break;
        floor_state.pending = 0;
        floor_state.started_ns = bench_now_ns();
        floor_state.done = 1;
        pthread_cond_signal(&floor_state.reply);
    }
    pthread_mutex_unlock(&floor_state.lock);
    return NULL;
}

static void floor_round(uint64_t *start_ns, uint64_t *trip_ns) {
    uint64_t t0 = bench_now_ns(), t1;
    pthread_mutex_lock(&floor_state.lock);
    floor_state.pending = 1;
    floor_state.done = 0;
    pthread_cond_signal(&floor_state.request);
    while (!floor_state.done) pthread_cond_wait(&floor_state.reply, &floor_state.lock);
    t1 = bench_now_ns();
    *start_ns = floor_state.started_ns - t0;
    pthread_mutex_unlock(&floor_state.lock);
    *trip_ns = t1 - t0;
}

static void report(const char *label, uint64_t *start, uint64_t *trip, int rounds) {
    uint64_t s50 = bench_quantile_u64(start, (size_t)rounds, 0.5);
    uint64_t s99 = bench_quantile_u64(start, (size_t)rounds, 0.99);
    uint64_t t50 = bench_quantile_u64(trip, (size_t)rounds, 0.5);
    uint64_t t99 = bench_quantile_u64(trip, (size_t)rounds, 0.99);
    printf("%-34s round trip median %6.1f us  p99 %6.1f us   start median %6.1f us  p99 %6.1f us\n",
           label, bench_us(t50), bench_us(t99), bench_us(s50), bench_us(s99));
}

int main(int argc, char **argv) {
    int rounds = bench_quick() ? 200 : 20000, gap, i;
    uint64_t *start, *trip;
    pthread_t floor_tid;
    pool *p;
    pool_stats st;

    if (argc > 1) rounds = bench_parse_threads(argv[1]);
    start = malloc(sizeof *start * (size_t)rounds);
    trip = malloc(sizeof *trip * (size_t)rounds);
    if (!start || !trip || pthread_create(&floor_tid, NULL, floor_thread, NULL) != 0) {
        fprintf(stderr, "blocking: out of memory or threads\n");
        return 1;
    }
    p = bench_pool_create("blocking", 2);
    for (i = 0; i < 100; i++) { /* warm-up: the blocking thread starts */
        pool_round(p, &start[0], &trip[0]);
        floor_round(&start[0], &trip[0]);
    }

    for (gap = 0; gap <= 1; gap++) {
        int n = gap ? (rounds / 10 > 10 ? rounds / 10 : 10) : rounds;
        char label[64];
        for (i = 0; i < n; i++) {
            if (gap) bench_sleep_ns(1000000);
            pool_round(p, &start[i], &trip[i]);
        }
        snprintf(label, sizeof label, "pool.h blocking, %s",
                 gap ? "after 1 ms idle" : "back to back");
        report(label, start, trip, n);
        for (i = 0; i < n; i++) {
            if (gap) bench_sleep_ns(1000000);
            floor_round(&start[i], &trip[i]);
        }
        snprintf(label, sizeof label, "condvar floor, %s",
                 gap ? "after 1 ms idle" : "back to back");
        report(label, start, trip, n);
    }

    pool_stats_get(p, &st);
    printf("blocking threads started: %" PRIu64 ", tasks run: %" PRIu64 "\n",
           st.blocking_threads_started, st.blocking_tasks_run);
    printf("target: round trip median <= 10 us\n");
    bench_pool_destroy("blocking", p);
    pthread_mutex_lock(&floor_state.lock);
    floor_state.quit = 1;
    pthread_cond_signal(&floor_state.request);
    pthread_mutex_unlock(&floor_state.lock);
    pthread_join(floor_tid, NULL);
    free(start);
    free(trip);
    return 0;
}
