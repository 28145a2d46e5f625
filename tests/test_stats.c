/* test_stats.c - per-worker statistics and pool_stats_print.
 *
 *  - after a quiescent workload the per-worker counters add up exactly to
 *    pool_stats_get's totals, field by field;
 *  - tasks posted from outside are counted as they are taken, both in the
 *    pool's count (pool_stats.jobs_injected) and in the taker's
 *    (pool_worker_stats.jobs_injected): both equal the number posted;
 *  - jobs_run counts every detached task exactly once;
 *  - workers not started yet report started == 0 and zero counters;
 *  - bad arguments: EINVAL, with *out still cleared;
 *  - pool_stats_print prints the totals and one row per started worker
 *    with the same numbers.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#define THREADS 4

static atomic_long ran;

static void count_task(pool_task *t) {
    (void)t;
    atomic_fetch_add(&ran, 1);
}

/* The workers' counters summed, from a moment when the totals did not
   change while they were read (workers may still be falling asleep). */
static void sum_workers(pool *p, pool_stats *s, pool_worker_stats *sum) {
    pool_stats again;
    pool_worker_stats w;
    int i, tries;
    for (tries = 0; tries < 1000; tries++) {
        memset(sum, 0, sizeof *sum);
        pool_stats_get(p, s);
        /* Every slot: the workers, then the spares (standing in for
           workers parked in a wait), started in order. */
        for (i = 0; i < pool_worker_index_limit(p); i++) {
            CHECK_EQ_I64(pool_worker_stats_get(p, i, &w), 0);
            CHECK_EQ_I64(w.started, (uint64_t)i < s->threads_started + s->spares_started);
            CHECK_EQ_I64(w.cpu, -1);
            sum->jobs_run += w.jobs_run;
            sum->jobs_stolen += w.jobs_stolen;
            sum->steals_failed += w.steals_failed;
            sum->jobs_injected += w.jobs_injected;
            sum->sleeps += w.sleeps;
            sum->wakeups += w.wakeups;
            sum->wakeups_wasted += w.wakeups_wasted;
            sum->waits_parked += w.waits_parked;
            if (w.wait_depth_max > sum->wait_depth_max) sum->wait_depth_max = w.wait_depth_max;
        }
        pool_stats_get(p, &again);
        if (memcmp(s, &again, sizeof again) == 0) return;
        test_sleep_us(1000);
    }
    CHECK_MSG(0, "the counters never stood still");
}

static void check_sums(pool *p) {
    pool_stats s;
    pool_worker_stats sum;
    sum_workers(p, &s, &sum);
    CHECK_EQ_I64(sum.jobs_run, s.jobs_run);
    CHECK_EQ_I64(sum.jobs_stolen, s.jobs_stolen);
    CHECK_EQ_I64(sum.steals_failed, s.steals_failed);
    CHECK_EQ_I64(sum.sleeps, s.sleeps);
    CHECK_EQ_I64(sum.wakeups, s.wakeups);
    CHECK_EQ_I64(sum.wakeups_wasted, s.wakeups_wasted);
    CHECK_EQ_I64(sum.waits_parked, s.waits_parked);
    /* The totals' maximum also counts outside threads' waits. */
    CHECK(sum.wait_depth_max <= s.wait_depth_max);
    /* Every task injected here was taken by a worker (none ran on a
       helping outside thread: the pool had threads). */
    CHECK_EQ_I64(sum.jobs_injected, s.jobs_injected);
}

/* Waits until the pool has run `n` tasks in all, or the watchdog fires. */
static void wait_ran(long n) {
    while (atomic_load(&ran) < n) test_sleep_us(100);
}

static void check_contains(const char *text, const char *line) {
    CHECK_MSG(strstr(text, line) != NULL, "'%.100s' not printed", line);
}

static void check_print(pool *p) {
    char text[8192], line[512];
    FILE *f = tmpfile();
    pool_stats s;
    pool_worker_stats w;
    int rows = 0, i;
    size_t len;
    CHECK(f != NULL);
    if (!f) return;
    CHECK_EQ_I64(pool_stats_print(p, f), 0);
    pool_stats_get(p, &s);
    rewind(f);
    len = fread(text, 1, sizeof text - 1, f);
    text[len] = 0;
    fclose(f);
    snprintf(line, sizeof line, "%llu run, %llu stolen", (unsigned long long)s.jobs_run,
             (unsigned long long)s.jobs_stolen);
    check_contains(text, line);
    snprintf(line, sizeof line, "%llu/%d threads started", (unsigned long long)s.threads_started,
             THREADS);
    check_contains(text, line);
    snprintf(line, sizeof line, "%llu calls in external slots", (unsigned long long)s.slot_calls);
    check_contains(text, line);
    for (i = 0; i < pool_worker_index_limit(p); i++) {
        CHECK_EQ_I64(pool_worker_stats_get(p, i, &w), 0);
        if (!w.started) continue;
        snprintf(line, sizeof line, "  %6d %12llu %12llu", i, (unsigned long long)w.jobs_run,
                 (unsigned long long)w.jobs_stolen);
        check_contains(text, line);
        rows++;
    }
    CHECK_EQ_I64(rows, s.threads_started + s.spares_started);
}

int main(void) {
    enum { TASKS = 20000, BATCH = 100 };
    static pool_task tasks[TASKS];
    pool_task *batch[BATCH];
    pool_worker_stats w;
    pool_stats s;
    pool *p = test_pool(THREADS);
    test_fib_arg fib = {22, 0};
    int i, j;
    test_watchdog(120, "test_stats");

    /* Nothing started yet. */
    CHECK_EQ_I64(pool_worker_stats_get(p, 0, &w), 0);
    CHECK_EQ_I64(w.started, 0);
    CHECK_EQ_I64(w.jobs_run, 0);
    CHECK_EQ_I64(w.cpu, -1);

    /* Bad arguments. */
    w.jobs_run = 99;
    CHECK_EQ_I64(pool_worker_stats_get(p, -1, &w), EINVAL);
    CHECK_EQ_I64(w.jobs_run, 0);
    CHECK_EQ_I64(pool_worker_stats_get(p, pool_worker_index_limit(p), &w), EINVAL);
    CHECK_EQ_I64(pool_worker_stats_get(p, 0, NULL), EINVAL);
    CHECK_EQ_I64(pool_stats_print(p, NULL), EINVAL);

    /* Fork-join from outside, then detached tasks from outside in batches. */
    test_fib_pool = p;
    pool_call(p, test_fib, &fib);
    CHECK_EQ_I64(fib.result, 17711);
    for (i = 0; i < TASKS; i += BATCH) {
        for (j = 0; j < BATCH; j++) {
            tasks[i + j].run = count_task;
            batch[j] = &tasks[i + j];
        }
        CHECK_EQ_I64(pool_submit_batch(p, batch, BATCH), 0);
    }
    wait_ran(TASKS);
    /* The last task has run; one more pool_call round trip, and a pause
       for workers to finish counting, makes the pool quiescent. */
    fib.n = 2;
    pool_call(p, test_fib, &fib);
    test_sleep_us(20000);
    pool_stats_get(p, &s);
    CHECK(s.threads_started >= 1);
    /* 20000 tasks injected; the two pool_call jobs ran in external slots. */
    CHECK_EQ_I64(s.jobs_injected, TASKS);
    CHECK_EQ_I64(s.slot_calls, 2);
    CHECK(s.jobs_run >= TASKS + 2);
    check_sums(p);
    check_print(p);
    pool_stats_print(p, stdout);

    /* The default pool answers too. */
    CHECK_EQ_I64(pool_worker_stats_get(NULL, 0, &w), 0);
    CHECK_EQ_I64(pool_stats_print(NULL, stdout), 0);

    CHECK_EQ_I64(pool_destroy(p), 0);
    return test_finish("test_stats");
}
