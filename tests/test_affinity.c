/* test_affinity.c - pinning workers to CPUs (pool_config.cpus).
 *
 *  - worker i is pinned to cpus[i % num_cpus]: every task it runs sees
 *    sched_getcpu() equal to that CPU and an affinity mask of exactly it,
 *    and pool_worker_stats_get reports it;
 *  - the list is copied: the caller's array may change after pool_create;
 *  - a CPU the system does not have leaves the worker unpinned (cpu -1
 *    in the stats) and the pool works;
 *  - a negative count, a NULL list with a count, a CPU number below 0 or
 *    above 1023: EINVAL;
 *  - the calling thread's own mask is left alone;
 *  - spreading woken workers (pool__spread, white-box: this thread stands
 *    in for a waking worker of a pool whose workers sleep, and the pool is
 *    told which CPU it runs on): on a CPU that another worker noted, it
 *    moves to a free one of its affinity, which it then has again whole,
 *    and notes it; it stays where nobody else is, where every CPU of its
 *    affinity is noted, where its affinity is one CPU, and in a pool
 *    pinned by config.cpus; parked in a wait it notes -1, and woken from
 *    the park it moves; a caller notes its CPU as it takes an external
 *    slot, -1 while parked, its CPU again after (not moved), and -1 as it
 *    gives the slot back.
 */
#if !defined(__linux__)
#include <stdio.h>
int main(void) {
    printf("test_affinity: skipped: pinning is tested on Linux (sched_getcpu, CPU_SET)\n");
    return 0;
}
#else
#define _GNU_SOURCE /* sched_getcpu, sched_getaffinity */
#include <sched.h>
#include <stdatomic.h>
/* Where pool__spread is told this thread runs; -1: where it does. Atomic:
   a worker that wakes reads it too. */
static atomic_int spread_cpu = -1;
#define POOL__CURRENT_CPU() test_current_cpu()
static int pool__current_cpu(void);
static int test_current_cpu(void) {
    int cpu = atomic_load_explicit(&spread_cpu, memory_order_relaxed);
    return cpu >= 0 ? cpu : pool__current_cpu();
}
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#define THREADS 4
#define TASKS 4000

typedef struct probe {
    pool_task task;
    int worker, cpu, mask_count, mask_cpu;
} probe;

static void probe_run(pool_task *t) {
    probe *pr = (probe *)(void *)t;
    cpu_set_t set;
    int c;
    volatile int spin;
    for (spin = 0; spin < 2000; spin++) continue; /* long enough to be stolen */
    pr->worker = pool_worker_index();
    pr->cpu = sched_getcpu();
    pr->mask_count = -1;
    pr->mask_cpu = -1;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        pr->mask_count = CPU_COUNT(&set);
        for (c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set)) {
                pr->mask_cpu = c;
                break;
            }
    }
}

static probe probes[TASKS];

/* Runs TASKS probes in a scope; returns a bitmask of the workers seen. */
static unsigned run_probes(pool *p) {
    pool_scope s;
    unsigned seen = 0;
    int i;
    pool_scope_init(&s, p);
    for (i = 0; i < TASKS; i++) {
        probes[i].task.run = probe_run;
        probes[i].task.pool__next = NULL;
        probes[i].task.pool__scope = NULL;
        CHECK_EQ_I64(pool_scope_spawn(&s, &probes[i].task), 0);
    }
    pool_scope_wait(&s);
    /* A probe the waiting thread ran itself, in an external slot, has the
       slot's index, above every worker's: not a worker seen. */
    for (i = 0; i < TASKS; i++)
        if (probes[i].worker >= 0 && probes[i].worker < pool_num_threads(p))
            seen |= 1u << probes[i].worker;
    return seen;
}

/* The allowed CPUs, highest first (so that worker 0 is not on CPU 0), at
   most THREADS of them; returns how many. */
static int list_allowed(const cpu_set_t *allowed, int *cpus) {
    int c, n = 0;
    for (c = CPU_SETSIZE - 1; c >= 0 && n < THREADS; c--)
        if (CPU_ISSET(c, allowed)) cpus[n++] = c;
    return n;
}

/* From a task of a pool pinned to one CPU: a pool created there is sized
   by the pinned pool's CPUs, not the task's one, and its threads and the
   pinned pool's blocking threads run on all of them. */
typedef struct inherit_probe {
    int default_threads; /* threads of a pool created in the task */
    int nested_mask;     /* CPUs of a worker of that pool */
    int blocking_mask;   /* CPUs of a blocking thread started from the task */
    pool_blocking_job job;
} inherit_probe;

static int mask_count(void) {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

static void note_mask(void *arg) { *(int *)arg = mask_count(); }

static void blocking_mask(pool_blocking_job *job) {
    inherit_probe *ip = (inherit_probe *)(void *)((char *)job - offsetof(inherit_probe, job));
    ip->blocking_mask = mask_count();
}

static void create_inside(void *arg) {
    inherit_probe *ip = (inherit_probe *)arg;
    pool *inner;
    pool_blocking_job job = POOL_BLOCKING_JOB_INIT(blocking_mask);
    ip->job = job;
    if (pool_create(&inner, NULL) == 0) {
        ip->default_threads = pool_num_threads(inner);
        pool_call(inner, note_mask, &ip->nested_mask);
        pool_destroy(inner);
    }
    if (pool_submit_blocking_job(NULL, &ip->job) == 0) pool_wait_blocking_job(&ip->job);
}

/* Sets this thread's affinity to CPUs a and b (b < 0: a alone); returns
   once it runs on a. */
static void run_on(int a, int b) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(a, &set);
    CHECK(sched_setaffinity(0, sizeof set, &set) == 0);
    CHECK_EQ_I64(sched_getcpu(), a);
    if (b >= 0) CPU_SET(b, &set);
    CHECK(sched_setaffinity(0, sizeof set, &set) == 0);
}

/* Whether this thread's affinity is exactly CPUs a and b (b < 0: a alone). */
static int mask_is(int a, int b) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return CPU_ISSET(a, &set) && (b < 0 || CPU_ISSET(b, &set)) &&
           CPU_COUNT(&set) == (b < 0 ? 1 : 2);
}

/* How many of the first n workers of p say they are awake. */
static int awake_workers(pool *p, int n) {
    int i, awake = 0;
    for (i = 0; i < n; i++) awake += POOL__LOAD(&p->workers[i]->cpu_awake, POOL__RELAXED) >= 0;
    return awake;
}

/* Whether the n workers of p are asleep in the kernel, and each noted -1. */
static int asleep_unnoted(pool *p, int n) { return test_awake(p) == 0 && !awake_workers(p, n); }

/* A pool of `threads` workers, each started and then asleep. */
static pool *sleeping_pool(int threads, int *cpus, int num_cpus) {
    pool_config cfg;
    pool_stats st;
    pool *p;
    double until = test_now() + 20;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    cfg.cpus = cpus;
    cfg.num_cpus = num_cpus;
    CHECK_EQ_I64(pool_create(&p, &cfg), 0);
    do {
        run_probes(p); /* threads start as work comes */
        pool_stats_get(p, &st);
    } while ((int)st.threads_started < threads && test_now() < until);
    CHECK_EQ_I64(st.threads_started, threads);
    /* Asleep twice 20 ms apart: a wake-up already on its way when the
       workers were first seen asleep has arrived by then. */
    do test_sleep_us(20000);
    while (!(asleep_unnoted(p, threads) && (test_sleep_us(20000), asleep_unnoted(p, threads))) &&
           test_now() < until);
    CHECK_EQ_I64(test_awake(p), 0);
    /* A worker notes -1 as it goes to sleep. */
    CHECK_EQ_I64(awake_workers(p, threads), 0);
    return p;
}

/* Claims: worker i of p said it is awake on cpu (-1: asleep). */
static void claim(pool *p, int i, int cpu) {
    POOL__STORE(&p->workers[i]->cpu_awake, cpu, POOL__RELAXED);
}

/* What worker `me` noted. */
static int noted(const pool__worker *me) { return POOL__LOAD(&me->cpu_awake, POOL__RELAXED); }

static void test_spread(const cpu_set_t *allowed) {
    int cpus[THREADS], c0, c1, tries, landed = 0;
    pool *p;
    pool__worker *me, *slot;
    if (list_allowed(allowed, cpus) < 2) {
        printf("spread: skipped: needs 2 CPUs\n");
        return;
    }
    c0 = cpus[0], c1 = cpus[1];
    p = sleeping_pool(3, NULL, 0);
    me = p->workers[1]; /* this thread wakes as worker 1 */
    claim(p, 0, c0);
    /* On worker 0's CPU: moves to the free one, its affinity whole again.
       Where it runs just after is the kernel's to change, so it must have
       run there once in a few tries. */
    for (tries = 0; tries < 5; tries++) {
        run_on(c0, c1);
        spread_cpu = c0;
        pool__spread(me);
        landed += sched_getcpu() == c1;
        CHECK(mask_is(c0, c1));
        CHECK_EQ_I64(noted(me), c1);
    }
    CHECK(landed > 0);
    /* Nobody else on its CPU: stays. */
    spread_cpu = c1;
    pool__spread(me);
    CHECK_EQ_I64(noted(me), c1);
    CHECK(mask_is(c0, c1));
    /* Every CPU of its affinity noted: stays, no narrower. */
    claim(p, 0, c1);
    claim(p, 2, c0);
    pool__spread(me);
    CHECK_EQ_I64(noted(me), c1);
    CHECK(mask_is(c0, c1));
    /* An affinity of one CPU (a pin of the user's): stays. */
    claim(p, 2, -1);
    run_on(c1, -1);
    pool__spread(me);
    CHECK_EQ_I64(noted(me), c1);
    CHECK(mask_is(c1, -1));
    run_on(c0, c1);
    /* Parked in a wait: -1 (its stand-in may have the CPU); woken from
       the park on a noted CPU: moves. */
    spread_cpu = c0;
    claim(p, 0, c0);
    pool__park_begin(me);
    CHECK_EQ_I64(noted(me), -1);
    pool__park_end(me);
    CHECK_EQ_I64(noted(me), c1);
    CHECK(mask_is(c0, c1));
    /* A caller in an external slot notes its CPU, -1 while parked, its CPU
       again after (never moved: its thread is the user's), and -1 as it
       leaves. */
    slot = pool__slot_take(p);
    CHECK(slot != NULL);
    if (slot) {
        CHECK_EQ_I64(noted(slot), c0);
        pool__park_begin(slot);
        CHECK_EQ_I64(noted(slot), -1);
        pool__park_end(slot);
        CHECK_EQ_I64(noted(slot), c0);
        pool__slot_give_back(p, slot);
        CHECK_EQ_I64(noted(slot), -1);
    }
    claim(p, 0, -1);
    claim(p, 1, -1);
    spread_cpu = -1;
    CHECK_EQ_I64(pool_destroy(p), 0);
    /* A pool pinned by config.cpus: stays. */
    spread_cpu = -1;
    p = sleeping_pool(2, cpus, 2);
    me = p->workers[1];
    claim(p, 0, c0);
    run_on(c0, c1);
    spread_cpu = c0;
    pool__spread(me);
    CHECK_EQ_I64(noted(me), c0);
    CHECK(mask_is(c0, c1));
    claim(p, 0, -1);
    claim(p, 1, -1);
    CHECK_EQ_I64(pool_destroy(p), 0);
    spread_cpu = -1;
    CHECK(sched_setaffinity(0, sizeof *allowed, allowed) == 0);
    printf("spread: a worker told it woke on CPU %d moved to CPU %d (seen there %d of 5 times)\n",
           c0, c1, landed);
}

int main(void) {
    cpu_set_t allowed, after;
    int cpus[THREADS], n_allowed, i;
    pool_config cfg;
    pool_worker_stats ws;
    pool *p;
    unsigned seen;
    test_watchdog(120, "test_affinity");
    CHECK(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
    n_allowed = list_allowed(&allowed, cpus);

    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = THREADS;
    cfg.cpus = cpus;
    cfg.num_cpus = n_allowed;
    CHECK_EQ_I64(pool_create(&p, &cfg), 0);
    for (i = 0; i < n_allowed; i++) cpus[i] = -7; /* copied: this must not matter */
    seen = run_probes(p);
    list_allowed(&allowed, cpus);
    CHECK(seen != 0);
    for (i = 0; i < TASKS; i++) {
        int want;
        /* Ran on this thread, helping in its scope wait (as no pool's
           worker, or in an external slot): not pinned. */
        if (probes[i].worker < 0 || probes[i].worker >= THREADS) continue;
        want = cpus[probes[i].worker % n_allowed];
        CHECK_EQ_I64(probes[i].cpu, want);
        CHECK_EQ_I64(probes[i].mask_count, 1);
        CHECK_EQ_I64(probes[i].mask_cpu, want);
    }
    /* A worker that ran a probe pinned itself first; one that did not may
       not have got that far yet. */
    for (i = 0; i < THREADS; i++) {
        CHECK_EQ_I64(pool_worker_stats_get(p, i, &ws), 0);
        if (seen & (1u << i)) CHECK_EQ_I64(ws.cpu, cpus[i % n_allowed]);
        else CHECK(ws.cpu == -1 || ws.cpu == cpus[i % n_allowed]);
    }
    printf("pinned to %d CPU(s); workers seen: 0x%x\n", n_allowed, seen);
    CHECK_EQ_I64(pool_destroy(p), 0);

    /* The caller's own mask is untouched. */
    CHECK(sched_getaffinity(0, sizeof after, &after) == 0);
    CHECK(CPU_EQUAL(&after, &allowed));

    /* A CPU this machine does not have (unless it has 1024): unpinned. */
    if (!CPU_ISSET(1023, &allowed)) {
        int missing = 1023;
        cfg.cpus = &missing;
        cfg.num_cpus = 1;
        CHECK_EQ_I64(pool_create(&p, &cfg), 0);
        run_probes(p);
        for (i = 0; i < TASKS; i++)
            if (probes[i].worker >= 0) CHECK_EQ_I64(probes[i].mask_count, CPU_COUNT(&allowed));
        for (i = 0; i < THREADS; i++) {
            CHECK_EQ_I64(pool_worker_stats_get(p, i, &ws), 0);
            CHECK_EQ_I64(ws.cpu, -1);
        }
        CHECK_EQ_I64(pool_destroy(p), 0);
    }

    /* Pins do not leak into the threads a pinned worker starts. */
    {
        int one = cpus[0], missing[2];
        inherit_probe ip;
        memset(&ip, 0, sizeof ip);
        unsetenv("POOL_NUM_THREADS");
        cfg.cpus = &one;
        cfg.num_cpus = 1;
        cfg.num_threads = 1;
        CHECK_EQ_I64(pool_create(&p, &cfg), 0);
        pool_call(p, create_inside, &ip);
        CHECK_EQ_I64(ip.default_threads, CPU_COUNT(&allowed));
        CHECK_EQ_I64(ip.nested_mask, CPU_COUNT(&allowed));
        CHECK_EQ_I64(ip.blocking_mask, CPU_COUNT(&allowed));
        /* The pinned pool's own blocking threads are not pinned either. */
        memset(&ip, 0, sizeof ip);
        ip.job.run = blocking_mask;
        CHECK_EQ_I64(pool_submit_blocking_job(p, &ip.job), 0);
        CHECK_EQ_I64(pool_wait_blocking_job(&ip.job), 0);
        CHECK_EQ_I64(ip.blocking_mask, CPU_COUNT(&allowed));
        CHECK_EQ_I64(pool_destroy(p), 0);
        /* A worker whose pin fails runs on all CPUs, whoever started it. */
        missing[0] = cpus[0], missing[1] = 1023;
        cfg.cpus = missing;
        cfg.num_cpus = 2;
        cfg.num_threads = 2;
        if (!CPU_ISSET(1023, &allowed)) {
            CHECK_EQ_I64(pool_create(&p, &cfg), 0);
            run_probes(p);
            for (i = 0; i < TASKS; i++)
                if (probes[i].worker == 1) CHECK_EQ_I64(probes[i].mask_count, CPU_COUNT(&allowed));
            CHECK_EQ_I64(pool_destroy(p), 0);
        }
        cfg.num_threads = THREADS;
    }

    /* Bad lists. */
    {
        int bad_low = -1, bad_high = 1024;
        cfg.cpus = cpus;
        cfg.num_cpus = -1;
        CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
        cfg.cpus = NULL;
        cfg.num_cpus = 1;
        CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
        cfg.cpus = &bad_low;
        CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
        cfg.cpus = &bad_high;
        CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
        CHECK(p == NULL);
        /* A list with a count of 0 is no pinning. */
        cfg.cpus = &bad_low;
        cfg.num_cpus = 0;
        CHECK_EQ_I64(pool_create(&p, &cfg), 0);
        run_probes(p);
        for (i = 0; i < THREADS; i++) {
            CHECK_EQ_I64(pool_worker_stats_get(p, i, &ws), 0);
            CHECK_EQ_I64(ws.cpu, -1);
        }
        CHECK_EQ_I64(pool_destroy(p), 0);
    }
    test_spread(&allowed);
    return test_finish("test_affinity");
}
#endif
