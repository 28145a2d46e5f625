/* test_destroy.c - pool_destroy and argument validation.
 *
 *  - destroy with pending work: many detached tasks (some sleep a few
 *    microseconds, some submit a child; some at high priority, which has
 *    a queue of its own to close and drain) are submitted and pool_destroy is
 *    called at once; every accepted task (submit returned 0) has run when
 *    destroy returns, and no other result than 0 or ECANCELED appears;
 *  - a task that runs while destroy is in progress: its pool_submit calls
 *    succeed until destroy has begun, then return ECANCELED; what was
 *    accepted still runs; pool_call/pool_join from it still complete;
 *  - pool_destroy from a task of the same pool is EDEADLK (and the pool
 *    keeps working); pool_destroy(NULL) is EINVAL;
 *  - create/destroy cycles, thread start/exit callbacks balanced;
 *  - pool_create validation: NULL out, num_threads -1 and 65536 are
 *    EINVAL; 65535 is accepted (no thread starts before work arrives);
 *    pool_submit of a NULL task or a task without run is EINVAL.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

/* ------------------------------------------------------------------------ */
/* Destroy with pending work                                                */
/* ------------------------------------------------------------------------ */

typedef struct pending {
    pool *p;
    atomic_long ran;
    atomic_long accepted;
    atomic_long bad_rc;
} pending;

typedef struct job {
    pool_task task;
    pending *pd;
    long index;
    struct job *child; /* submitted from inside this job, if not NULL */
} job;

static job *job_of(pool_task *t) { return (job *)((char *)t - offsetof(job, task)); }

static void job_run(pool_task *t) {
    job *j = job_of(t);
    pending *pd = j->pd;
    if (j->index % 64 == 0) test_sleep_us(3);
    if (j->child) {
        /* this may run after destroy began: either outcome is fine, but it
           must be exactly one of the two, and accepted means it runs */
        int rc = pool_submit_priority(pd->p, &j->child->task,
                                      j->index % 20 ? POOL_PRIORITY_NORMAL : POOL_PRIORITY_HIGH);
        if (rc == 0) atomic_fetch_add(&pd->accepted, 1);
        else if (rc != ECANCELED) atomic_fetch_add(&pd->bad_rc, 1);
    }
    atomic_fetch_add(&pd->ran, 1);
}

static void test_pending_work(void) {
    const long n = test_scaled(20000, 2000);
    const int rounds = (int)test_scaled(20, 4);
    job *jobs = (job *)calloc((size_t)n * 2, sizeof *jobs); /* n jobs, n possible children */
    pool_task **batch = (pool_task **)calloc(16, sizeof *batch);
    int r;
    long total_ran = 0, total_accepted = 0;
    double t0 = test_now();
    printf("  destroy right after submitting %ld detached tasks (x%d rounds): every accepted task "
           "runs\n",
           n, rounds);
    for (r = 0; r < rounds; r++) {
        pending pd;
        long i;
        memset(&pd, 0, sizeof pd);
        pd.p = test_pool(2);
        memset(jobs, 0, (size_t)n * 2 * sizeof *jobs);
        for (i = 0; i < 2 * n; i++) {
            jobs[i].task.run = job_run;
            jobs[i].pd = &pd;
            jobs[i].index = i;
            jobs[i].child = i < n && i % 10 == 0 ? &jobs[n + i] : NULL;
        }
        /* single submissions and batches of 16, alternating */
        for (i = 0; i < n;) {
            if ((i / 16) % 2 == 0) { /* every fourth one at high priority */
                int rc = pool_submit_priority(pd.p, &jobs[i].task,
                                              i % 4 ? POOL_PRIORITY_NORMAL : POOL_PRIORITY_HIGH);
                CHECK_EQ_I64(rc, 0);
                if (rc == 0) atomic_fetch_add(&pd.accepted, 1);
                i++;
            } else {
                long k, m = n - i < 16 ? n - i : 16;
                int rc;
                for (k = 0; k < m; k++) batch[k] = &jobs[i + k].task;
                rc = pool_submit_batch(pd.p, batch, (size_t)m);
                CHECK_EQ_I64(rc, 0);
                if (rc == 0) atomic_fetch_add(&pd.accepted, m);
                i += m;
            }
        }
        CHECK_EQ_I64(pool_destroy(pd.p), 0);
        /* after destroy returned nothing may still be running */
        CHECK_EQ_I64(atomic_load(&pd.ran), atomic_load(&pd.accepted));
        CHECK(atomic_load(&pd.accepted) >= n);
        CHECK_EQ_I64(atomic_load(&pd.bad_rc), 0);
        total_ran += atomic_load(&pd.ran);
        total_accepted += atomic_load(&pd.accepted);
    }
    printf("    ran %ld of %ld accepted (%ld children refused), %.2f s\n", total_ran,
           total_accepted, (long)rounds * ((n + 9) / 10) - (total_accepted - (long)rounds * n),
           test_now() - t0);
    free(batch);
    free(jobs);
}

/* ------------------------------------------------------------------------ */
/* A task running while destroy is in progress                              */
/* ------------------------------------------------------------------------ */

#define EXTRAS 100000

typedef struct during {
    pool *p;
    pool_task long_task;
    pool_task extras[EXTRAS];
    atomic_int long_started;
    atomic_long extra_ran, extra_accepted;
    atomic_int saw_canceled, other_rc, ran_out;
    atomic_long inline_ran;
    atomic_int long_finished;
} during;

static during *the_during;

static void extra_run(pool_task *t) {
    (void)t;
    atomic_fetch_add(&the_during->extra_ran, 1);
}

static void inc_inline(void *arg) { atomic_fetch_add((atomic_long *)arg, 1); }

/* Submits extras, 20 us apart, from the moment it starts until the pool
   refuses, which it must do once destroy began (destroy cannot finish
   before this task has). Main calls pool_destroy once 50 were accepted. */
static void long_run(pool_task *t) {
    during *d = the_during;
    double deadline = test_now() + 10.0;
    long k = 0;
    (void)t;
    atomic_store(&d->long_started, 1);
    for (;;) {
        int rc;
        if (k == EXTRAS || test_now() > deadline) {
            atomic_store(&d->ran_out, 1);
            break;
        }
        rc = pool_submit_priority(d->p, &d->extras[k],
                                  k % 2 ? POOL_PRIORITY_NORMAL : POOL_PRIORITY_HIGH);
        if (rc == 0) {
            atomic_fetch_add(&d->extra_accepted, 1);
            k++;
            test_sleep_us(20);
        } else if (rc == ECANCELED) {
            atomic_store(&d->saw_canceled, 1);
            break;
        } else {
            atomic_store(&d->other_rc, rc);
            break;
        }
    }
    /* fork-join still completes during destroy (on this thread if need be) */
    pool_call(d->p, inc_inline, &d->inline_ran);
    pool_join(d->p, inc_inline, &d->inline_ran, inc_inline, &d->inline_ran);
    atomic_store(&d->long_finished, 1);
}

static void test_submit_during_destroy(void) {
    during *d = (during *)calloc(1, sizeof *d);
    long k;
    printf("  a task running during destroy: submit works until destroy began, then ECANCELED\n");
    the_during = d;
    d->p = test_pool(2);
    d->long_task.run = long_run;
    for (k = 0; k < EXTRAS; k++) d->extras[k].run = extra_run;
    CHECK_EQ_I64(pool_submit(d->p, &d->long_task), 0);
    while (atomic_load(&d->extra_accepted) < 50 && !atomic_load(&d->long_finished))
        test_sleep_us(100);
    CHECK_EQ_I64(pool_destroy(d->p), 0);
    printf("    %ld extra tasks accepted before the refusal\n", atomic_load(&d->extra_accepted));
    CHECK_EQ_I64(atomic_load(&d->long_finished), 1);
    CHECK(atomic_load(&d->extra_accepted) >= 50);
    CHECK_EQ_I64(atomic_load(&d->saw_canceled), 1);
    CHECK_EQ_I64(atomic_load(&d->other_rc), 0);
    CHECK_EQ_I64(atomic_load(&d->ran_out), 0);
    CHECK_EQ_I64(atomic_load(&d->extra_ran), atomic_load(&d->extra_accepted));
    CHECK_EQ_I64(atomic_load(&d->inline_ran), 3);
    free(d);
}

/* ------------------------------------------------------------------------ */
/* EDEADLK, EINVAL                                                          */
/* ------------------------------------------------------------------------ */

typedef struct self_destroy {
    pool *p;
    pool_task task;
    atomic_int rc;
    atomic_int done;
} self_destroy;

static void destroy_self_fn(void *arg) {
    self_destroy *s = (self_destroy *)arg;
    atomic_store(&s->rc, pool_destroy(s->p));
}

static void destroy_self_task(pool_task *t) {
    self_destroy *s = (self_destroy *)((char *)t - offsetof(self_destroy, task));
    atomic_store(&s->rc, pool_destroy(s->p));
    atomic_store(&s->done, 1);
}

static void add_one(void *arg) { atomic_fetch_add((atomic_long *)arg, 1); }

static void test_deadlock_and_einval(void) {
    self_destroy s;
    atomic_long count;
    double deadline;
    printf(
        "  pool_destroy from a task of the same pool is EDEADLK; pool_destroy(NULL) is EINVAL\n");
    memset(&s, 0, sizeof s);
    atomic_init(&count, 0);
    s.p = test_pool(2);
    atomic_store(&s.rc, -1);
    pool_call(s.p, destroy_self_fn, &s);
    CHECK_EQ_I64(atomic_load(&s.rc), EDEADLK);
    /* from a detached task as well */
    atomic_store(&s.rc, -1);
    s.task.run = destroy_self_task;
    CHECK_EQ_I64(pool_submit(s.p, &s.task), 0);
    deadline = test_now() + 10;
    while (!atomic_load(&s.done) && test_now() < deadline) test_sleep_us(200);
    CHECK_EQ_I64(atomic_load(&s.rc), EDEADLK);
    /* the pool is intact */
    pool_call(s.p, add_one, &count);
    pool_join(s.p, add_one, &count, add_one, &count);
    CHECK_EQ_I64(atomic_load(&count), 3);
    CHECK_EQ_I64(pool_destroy(s.p), 0);
    CHECK_EQ_I64(pool_destroy(NULL), EINVAL);
}

static void test_validation(void) {
    pool *p = NULL;
    pool_config cfg;
    pool_stats st;
    pool_task no_run;
    printf("  pool_create validation: NULL out, num_threads -1 / 65536 rejected, 65535 accepted;"
           " bad tasks rejected\n");
    memset(&cfg, 0, sizeof cfg);
    CHECK_EQ_I64(pool_create(NULL, NULL), EINVAL);
    CHECK_EQ_I64(pool_create(NULL, &cfg), EINVAL);
    cfg.num_threads = -1;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    cfg.num_threads = 65536;
    CHECK_EQ_I64(pool_create(&p, &cfg), EINVAL);
    cfg.num_threads = 65535;
    p = NULL;
    CHECK_EQ_I64(pool_create(&p, &cfg), 0);
    if (p) {
        CHECK_EQ_I64(pool_num_threads(p), 65535);
        memset(&st, 0, sizeof st);
        pool_stats_get(p, &st);
        CHECK_EQ_I64(st.threads_started, 0); /* lazy: no work, no thread */
        CHECK_EQ_I64(st.num_threads, 65535);
        CHECK_EQ_I64(pool_destroy(p), 0);
    }
    /* cfg NULL: every default */
    p = NULL;
    CHECK_EQ_I64(pool_create(&p, NULL), 0);
    if (p) {
        CHECK(pool_num_threads(p) >= 1);
        CHECK_EQ_I64(pool_submit(p, NULL), EINVAL);
        memset(&no_run, 0, sizeof no_run);
        CHECK_EQ_I64(pool_submit(p, &no_run), EINVAL);
        CHECK_EQ_I64(pool_destroy(p), 0);
    }
}

/* ------------------------------------------------------------------------ */
/* Create/destroy cycles                                                    */
/* ------------------------------------------------------------------------ */

typedef struct lifecycle {
    atomic_int starts, exits;
} lifecycle;

static void on_start(void *user, int index) {
    (void)index;
    atomic_fetch_add(&((lifecycle *)user)->starts, 1);
}

static void on_exit_cb(void *user, int index) {
    (void)index;
    atomic_fetch_add(&((lifecycle *)user)->exits, 1);
}

static void test_cycles(void) {
    const int cycles = (int)test_scaled(300, 30);
    int i;
    lifecycle lc;
    double t0 = test_now();
    printf("  %d create/use/destroy cycles (4 threads), start/exit callbacks balanced\n", cycles);
    atomic_init(&lc.starts, 0);
    atomic_init(&lc.exits, 0);
    for (i = 0; i < cycles; i++) {
        pool *p = NULL;
        pool_config cfg;
        atomic_long count;
        memset(&cfg, 0, sizeof cfg);
        cfg.num_threads = 4;
        cfg.on_thread_start = on_start;
        cfg.on_thread_exit = on_exit_cb;
        cfg.user = &lc;
        atomic_init(&count, 0);
        CHECK(pool_create(&p, &cfg) == 0);
        if (!p) break;
        if (i % 3 != 0) { /* every third pool is never used */
            pool_join(p, add_one, &count, add_one, &count);
            CHECK_EQ_I64(atomic_load(&count), 2);
        }
        CHECK_EQ_I64(pool_destroy(p), 0);
        CHECK_EQ_I64(atomic_load(&lc.starts), atomic_load(&lc.exits));
    }
    printf("    %d threads started and exited, %.2f s\n", atomic_load(&lc.starts), test_now() - t0);
}

int main(void) {
    test_watchdog(120, "test_destroy");
    printf("test_destroy: pool_destroy and validation\n");
    test_validation();
    test_deadlock_and_einval();
    test_pending_work();
    test_submit_during_destroy();
    test_cycles();
    return test_finish("test_destroy");
}
