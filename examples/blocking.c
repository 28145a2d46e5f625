/* examples/blocking.c -- blocking work next to fork-join work.
 *
 * Build and run from the repository root:
 *     cc -O2 -pthread examples/blocking.c && ./a.out
 *
 * A pool's workers are meant for computing: one of them blocked in read(), sleep() or a lock is
 * a core lost for everybody. Blocking work goes to the pool's blocking threads instead, with
 * pool_submit_blocking (fire and forget) or pool_submit_blocking_job (can be waited for, and
 * skipped by a fast shutdown). Blocking threads start on demand, up to max_blocking_threads,
 * and exit after blocking_keep_alive_ms without work.
 *
 * The program "fetches" 24 records (each fetch sleeps 20 ms, standing in for I/O) on at most 8
 * blocking threads, while a fork-join computation runs on the workers. A worker task then waits
 * for the fetches: while it waits it keeps running fork-join work. Finally a fast shutdown shows
 * what happens to queued jobs: optional ones are cancelled (and told so), mandatory ones run.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define RECORDS 24

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A fetch: the job is embedded in the record it fills. It must stay valid until
 * pool_wait_blocking_job has returned for it (or, if nobody waits, until pool_destroy returns). */
struct record {
    pool_blocking_job job;
    int id;
    long value;
};

static void fetch(pool_blocking_job *job) {
    struct record *r = (struct record *)((char *)job - offsetof(struct record, job));
    sleep_ms(20); /* the "I/O" */
    r->value = (long)r->id * r->id;
}

/* Fork-join work for the workers meanwhile. */
static void count_primes(void *arg, size_t lo, size_t hi) {
    long found = 0;
    size_t n, d;
    for (n = lo; n < hi; n++) {
        int prime = n >= 2;
        for (d = 2; d * d <= n && prime; d++) prime = n % d != 0;
        found += prime;
    }
    atomic_fetch_add((atomic_long *)arg, found);
}

struct fetch_all {
    pool *p;
    struct record *records;
    long sum;
    int failed;
};

/* Runs on a worker: submits every fetch, computes, then waits for each fetch. */
static void fetch_and_compute(void *arg) {
    struct fetch_all *f = arg;
    atomic_long primes = 0;
    int i;
    for (i = 0; i < RECORDS; i++) {
        f->records[i].job = (pool_blocking_job)POOL_BLOCKING_JOB_INIT(fetch);
        f->records[i].id = i;
        if (pool_submit_blocking_job(f->p, &f->records[i].job) != 0) {
            fetch(&f->records[i].job);    /* could not be handed over: do it here */
            f->records[i].job.run = NULL; /* nothing to wait for */
        }
    }
    pool_parallel_for(f->p, 0, 200000, 0, count_primes, &primes);
    for (i = 0; i < RECORDS; i++) {
        /* A worker that waits runs other fork-join work meanwhile. */
        if (f->records[i].job.run && pool_wait_blocking_job(&f->records[i].job) != 0) f->failed++;
        f->sum += f->records[i].value;
    }
    printf("primes below 200000: %ld (computed while the fetches were under way)\n",
           (long)atomic_load(&primes));
    f->failed += atomic_load(&primes) != 17984;
}

/* Fire and forget: an audit line "written" on a blocking thread (the sleep stands in for a slow
 * disk). Nobody waits for it; pool_destroy runs it before it returns. */
struct audit {
    pool_task task;
    long sum;
    char line[64]; /* what was written */
};

static void audit_run(pool_task *t) {
    struct audit *a = (struct audit *)((char *)t - offsetof(struct audit, task));
    sleep_ms(5);
    snprintf(a->line, sizeof a->line, "%d records fetched, sum %ld", RECORDS, a->sum);
}

/* Jobs for the shutdown demo. */
struct chore {
    pool_blocking_job job;
    const char *name;
    int ran, cancelled;
};

static void chore_run(pool_blocking_job *job) {
    struct chore *c = (struct chore *)((char *)job - offsetof(struct chore, job));
    sleep_ms(10);
    c->ran = 1;
}

static void chore_cancel(pool_blocking_job *job) {
    ((struct chore *)((char *)job - offsetof(struct chore, job)))->cancelled = 1;
}

int main(void) {
    static struct record records[RECORDS];
    struct chore chores[4] = {
        {POOL_BLOCKING_JOB_INIT(chore_run), "compress old logs", 0, 0},
        {POOL_BLOCKING_JOB_INIT(chore_run), "flush the journal", 0, 0},
        {POOL_BLOCKING_JOB_INIT(chore_run), "refresh a cache", 0, 0},
        {POOL_BLOCKING_JOB_INIT(chore_run), "write the checkpoint", 0, 0},
    };
    struct fetch_all f = {NULL, records, 0, 0};
    struct audit audit = {POOL_TASK_INIT(audit_run), 0, ""};
    pool_config cfg;
    pool_stats st;
    double t0;
    long want = 0;
    int i, rc, bad = 0;

    memset(&cfg, 0, sizeof cfg);
    cfg.max_blocking_threads = 8;      /* at most 8 fetches at once */
    cfg.blocking_keep_alive_ms = 1000; /* idle blocking threads leave after 1 s */
    if ((rc = pool_create(&f.p, &cfg)) != 0) {
        fprintf(stderr, "pool_create: %s\n", strerror(rc));
        return 1;
    }

    t0 = now_ms();
    pool_call(f.p, fetch_and_compute, &f);
    for (i = 0; i < RECORDS; i++) want += (long)i * i;
    pool_stats_get(f.p, &st);
    printf("%d fetches of 20 ms on %llu blocking threads: %.0f ms, sum %ld (%s)\n", RECORDS,
           (unsigned long long)st.blocking_threads, now_ms() - t0, f.sum,
           f.sum == want ? "correct" : "WRONG");
    bad += f.sum != want || f.failed;

    audit.sum = f.sum;
    if (pool_submit_blocking(f.p, &audit.task) != 0) audit_run(&audit.task); /* not taken */
    pool_destroy(f.p); /* runs whatever is still queued (the audit), then joins every thread */
    printf("audit line written before pool_destroy returned: \"%s\"\n", audit.line);
    bad += audit.line[0] == 0;

    /* Fast shutdown: four chores queue behind one blocking thread. pool_destroy_fast lets the
     * running one finish, runs the queued mandatory ones and cancels the rest. */
    cfg.max_blocking_threads = 1;
    if ((rc = pool_create(&f.p, &cfg)) != 0) {
        fprintf(stderr, "pool_create: %s\n", strerror(rc));
        return 1;
    }
    for (i = 0; i < 4; i++) {
        chores[i].job.on_cancel = chore_cancel;
        chores[i].job.mandatory = i % 2 == 1;
        if (pool_submit_blocking_job(f.p, &chores[i].job) != 0) chores[i].job.run = NULL;
    }
    printf("fast shutdown with 4 chores queued on 1 blocking thread:\n");
    pool_destroy_fast(f.p);
    for (i = 0; i < 4; i++) {
        /* The status stays in the job: waiting after the pool is gone is fine. */
        rc = chores[i].job.run ? pool_wait_blocking_job(&chores[i].job) : EAGAIN;
        printf("  %-22s %-9s -> %s\n", chores[i].name,
               chores[i].job.mandatory ? "mandatory" : "optional",
               rc == 0           ? "ran"
               : rc == ECANCELED ? "cancelled"
                                 : "not submitted");
        bad += chores[i].job.mandatory && rc != 0;
        bad += rc == ECANCELED && !chores[i].cancelled;
    }
    return bad != 0;
}
