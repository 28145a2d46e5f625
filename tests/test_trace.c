/* test_trace.c - POOL_TRACE: the file pool_trace_write writes for a real
 * run is a valid Chrome trace (examples/tools/trace_json.h checks every event, the
 * order of each lane and the nesting of its spans), its lanes are named
 * as documented, and what it records agrees with the pool's own counters:
 * per worker, as many job spans as jobs run, steals as jobs stolen,
 * sleeps as sleeps and wake-ups; as many tasks injected as the pool
 * counted. A run too long for the rings loses its oldest events and
 * still gives a valid trace. Its trace written to a full disk (Linux's
 * /dev/full) fails with ENOSPC, the errno of the write that failed, not
 * EIO, though the stream's buffer fills and fails long before the close.
 */
#define POOL_TRACE
#define POOL_IMPLEMENTATION
#include "../pool.h"
#include "../examples/tools/trace_json.h"
#include "test.h"

static char err[512];

/* Per lane, what the counters can be compared with. */
#define MAX_LANES 1024 /* worker and spare lanes: below pool_worker_index_limit */

struct tally {
    long wakeups[MAX_LANES]; /* sleep spans that ended, per worker lane */
};

static int tally_event(void *ctx, const struct trace_event *ev) {
    struct tally *t = (struct tally *)ctx;
    if (ev->ph == 'E' && !ev->unclosed && !ev->orphan && strcmp(ev->name, "sleep") == 0 &&
        ev->tid >= 0 && ev->tid < MAX_LANES)
        t->wakeups[ev->tid]++;
    return 0;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = (char *)malloc((size_t)n + 1);
    if (buf) buf[ *len = fread(buf, 1, (size_t)n, f)] = 0;
    fclose(f);
    return buf;
}

/* ---- a workload with every kind of event ---- */

static atomic_int tasks_done;

static void count_task(pool_task *t) {
    (void)t;
    atomic_fetch_add(&tasks_done, 1);
}

static void blocking_run(pool_blocking_job *job) {
    (void)job;
    test_sleep_us(1000);
}

static void workload(pool *p) {
    static pool_task scoped[50], batch[64];
    pool_task *ptrs[64];
    pool_scope scope;
    pool_blocking_job job = POOL_BLOCKING_JOB_INIT(blocking_run);
    test_fib_arg f = {20, 0};
    int i;
    test_fib_pool = p;
    pool_call(p, test_fib, &f); /* joins, steals, an inject from outside */
    CHECK_EQ_I64(f.result, 6765);
    /* The workers asleep, so that the spawns and then the batch wake them. */
    CHECK_MSG(test_wait_awake(p, 1, 0, 10), "the workers were not asleep in 10 s");
    pool_scope_init(&scope, p);
    for (i = 0; i < 50; i++) {
        scoped[i] = (pool_task)POOL_TASK_INIT(count_task);
        CHECK(pool_scope_spawn(&scope, &scoped[i]) == 0);
    }
    pool_scope_wait(&scope);
    CHECK_MSG(test_wait_awake(p, 1, 0, 10), "the workers were not asleep in 10 s");
    for (i = 0; i < 64; i++) batch[i] = (pool_task)POOL_TASK_INIT(count_task), ptrs[i] = &batch[i];
    CHECK(pool_submit_batch(p, ptrs, 64) == 0);
    while (atomic_load(&tasks_done) < 114) test_sleep_us(100);
    CHECK(pool_submit_blocking_job(p, &job) == 0);
    CHECK(pool_wait_blocking_job(&job) == 0);
}

/* Whether every worker of p that has started has gone to sleep at least
   once, and so has a lane: one started at the end of the work (a spare, or
   a thread started for a batch) may not have run yet on a busy machine. */
static int started_workers_slept(pool *p) {
    pool_worker_stats ws;
    int w, limit = pool_worker_index_limit(p);
    for (w = 0; w < limit; w++) {
        if (pool_worker_stats_get(p, w, &ws) != 0 || !ws.started) break;
        if (ws.sleeps == 0) return 0;
    }
    return 1;
}

/* Writes p's trace while p is quiescent (its counters the same before and
   after, every started worker asleep at least once), and reads it back. */
static char *trace_of(pool *p, const char *path, size_t *len, pool_stats *st) {
    pool_stats again;
    int tries;
    for (tries = 0; tries < 250; tries++) {
        test_sleep_us(20000); /* every worker asleep */
        if (!started_workers_slept(p)) continue;
        pool_stats_get(p, st);
        CHECK_EQ_I64(pool_trace_write(p, path), 0);
        pool_stats_get(p, &again);
        if (memcmp(st, &again, sizeof again) == 0) break;
    }
    CHECK(tries < 250);
    return slurp(path, len);
}

static void test_real_run(const char *path) {
    /* Before the pool: its trace's time starts at pool_create. */
    double start = test_now();
    pool *p = test_pool(2);
    struct trace_summary s;
    struct tally t;
    pool_stats st;
    pool_worker_stats ws;
    const struct trace_lane *l;
    size_t len = 0;
    char *json;
    int w, limit = pool_worker_index_limit(p);
    long injected = 0, wakeups = 0;

    workload(p);
    json = trace_of(p, path, &len, &st);
    CHECK(json != NULL);
    if (!json) return;
    memset(&t, 0, sizeof t);
    CHECK_MSG(trace_walk(json, len, 0, tally_event, &t, &s, err, sizeof err) == 0, "%.200s", err);
    trace_summary_print(&s, stdout);
    CHECK_EQ_I64(s.total.orphan_ends, 0); /* nothing overflowed */
    CHECK(s.ts_min >= 0 && s.ts_max <= (test_now() - start) * 1e6);
    /* The workers, and any spare a parked worker had started. */
    CHECK(limit <= MAX_LANES);
    for (w = 0; w < limit; w++) {
        char name[24];
        CHECK(pool_worker_stats_get(p, w, &ws) == 0);
        if (!ws.started) break;
        snprintf(name, sizeof name, "pool-%d", w);
        l = trace_lane_find(&s, 1, w);
        CHECK_MSG(l != NULL, "no lane for worker %d", w);
        if (!l) continue;
        CHECK_MSG(strcmp(l->name, name) == 0, "worker %d is \"%s\"", w, l->name);
        CHECK_EQ_I64(l->jobs, ws.jobs_run);
        CHECK_EQ_I64(l->steals, ws.jobs_stolen);
        CHECK_EQ_I64(l->sleeps, ws.sleeps);
        CHECK_EQ_I64(t.wakeups[w], ws.wakeups);
        wakeups += t.wakeups[w];
        CHECK(l->open_at_end <= 1); /* asleep, at most */
    }
    CHECK_MSG(wakeups >= 2, "%ld wake-ups: the spawns and the batch each wake a sleeper", wakeups);
    for (w = 0; w < s.num_lanes; w++) {
        l = &s.lanes[w];
        injected += l->injected_tasks;
        if (l->tid >= 100000 && l->tid < 200000)
            CHECK_MSG(strcmp(l->name, "pool-blk-0") == 0, "%s", l->name); /* one blocking thread */
        if (l->tid >= 200000) CHECK_MSG(strncmp(l->name, "outside-", 8) == 0, "%s", l->name);
        CHECK_MSG(l->tid >= 0 &&
                      (l->tid < limit || l->tid == 100000 || (l->tid >= 200000 && l->tid < 200064)),
                  "tid %lld", (long long)l->tid);
    }
    CHECK_EQ_I64(injected, st.jobs_injected);
    CHECK(injected >= 50 + 64); /* the spawns and the batch; the call ran in a slot */
    /* The call from outside, and the scope's wait, in external slot 0. */
    l = trace_lane_find(&s, 1, limit - POOL_EXTERNAL_SLOTS_DEFAULT);
    CHECK_MSG(l != NULL, "no lane for external slot 0");
    if (l) {
        CHECK_MSG(strcmp(l->name, "pool-slot-0") == 0, "%s", l->name);
        CHECK(l->jobs >= 1);
    }
    CHECK_EQ_I64(s.total.blocking, 1);
    trace_summary_free(&s);
    free(json);

    CHECK_EQ_I64(pool_trace_write(p, NULL), EINVAL);
    CHECK_EQ_I64(pool_trace_write(p, "/nonexistent-dir/trace.json"), ENOENT);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* More events than a ring holds: the oldest go, the file stays valid. */
#define OVERFLOW_TASKS 150000 /* 2 events each: more than 2 rings hold */
static pool_task overflow_tasks[OVERFLOW_TASKS];

/* p's trace, `len` bytes, written to a full disk. */
static void check_full_disk(pool *p, size_t len) {
#if defined(__linux__)
    if (access("/dev/full", W_OK) != 0) {
        printf("no /dev/full: the full-disk write skipped\n");
        return;
    }
    CHECK(len > 1000000); /* many times a stream's buffer */
    CHECK_EQ_I64(pool_trace_write(p, "/dev/full"), ENOSPC);
#else
    (void)p, (void)len;
    printf("the full-disk write skipped (Linux only)\n");
#endif
}

static void test_overflow(const char *path) {
    pool *p = test_pool(2);
    struct trace_summary s;
    pool_scope scope;
    pool_stats st;
    size_t len = 0;
    char *json;
    int k;
    long most = 0;
    pool_scope_init(&scope, p);
    for (k = 0; k < OVERFLOW_TASKS; k++) {
        overflow_tasks[k] = (pool_task)POOL_TASK_INIT(count_task);
        CHECK_EQ_I64(pool_scope_spawn(&scope, &overflow_tasks[k]), 0);
    }
    pool_scope_wait(&scope);
    json = trace_of(p, path, &len, &st);
    if (!json) return;
    CHECK_MSG(trace_check(json, len, &s, err, sizeof err) == 0, "%.200s", err);
    trace_summary_print(&s, stdout);
    for (k = 0; k < s.num_lanes; k++) {
        CHECK(s.lanes[k].events <= POOL_TRACE_EVENTS);
        if (s.lanes[k].events > most) most = s.lanes[k].events;
    }
    /* A full ring, written whole but for its oldest slot, which the
       writer may be reusing at that moment (pool__trace_copy_lane). */
    CHECK_EQ_I64(most, POOL_TRACE_EVENTS - 1);
    CHECK(s.total.jobs < (long)st.jobs_run);
    trace_summary_free(&s);
    free(json);
    check_full_disk(p, len);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

int main(void) {
    char dir[256], path[300];
    test_watchdog(120, "test_trace");
    if (test_temp_dir(dir, sizeof dir, "test_trace") != 0) return 2;
    snprintf(path, sizeof path, "%s/trace.json", dir);
    test_real_run(path);
    test_overflow(path);
    remove(path);
    rmdir(dir);
    return test_finish("test_trace");
}
