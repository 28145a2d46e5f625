/* test_join.c - fork-join on pools of 1, 2, 4 and 16 threads.
 *
 * For each size: fib(27) by recursive pool_join (a join at every level,
 * cut off only at n < 2), started both with pool_call and with a
 * pool_join from outside the pool, checked against the serial value.
 * Every task checks pool_worker_index() is in [0, n); outside it is -1.
 * pool_call runs its function exactly once, on a worker; pool_num_threads;
 * pool_stats_get after the work; on_thread_start/on_thread_exit.
 * The forms of a call in C, where pool_join is also a macro (see pool_join):
 * compound-literal arguments, a NULL half, (pool_join)(...), a pointer to
 * the function, NULL for the default pool, another pool than the worker's:
 * each runs both halves exactly once, on workers and from outside.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

typedef struct ctx {
    pool *p;
    int threads;
    int index_limit;       /* pool_worker_index_limit */
    atomic_long bad_index; /* tasks that saw a worker index outside [0, index_limit) */
    atomic_long tasks;     /* fib calls */
    atomic_int seen[16];   /* worker indices seen running tasks */
    atomic_int starts, exits;
    atomic_int start_index_bad, start_seen[16];
} ctx;

typedef struct fib_arg {
    ctx *c;
    int n;
    long result;
} fib_arg;

static long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

static void note_worker(ctx *c) {
    int w = pool_worker_index();
    if (w < 0 || w >= c->index_limit) {
        if (atomic_fetch_add(&c->bad_index, 1) == 0)
            fprintf(stderr, "    task saw pool_worker_index() = %d, limit %d\n", w, c->index_limit);
    } else if (w < 16) {
        atomic_store_explicit(&c->seen[w], 1, memory_order_relaxed);
    }
}

static void fib_task(void *arg) {
    fib_arg *f = (fib_arg *)arg;
    fib_arg a, b;
    note_worker(f->c);
    atomic_fetch_add_explicit(&f->c->tasks, 1, memory_order_relaxed);
    if (f->n < 2) {
        f->result = f->n;
        return;
    }
    a.c = b.c = f->c;
    a.n = f->n - 1;
    b.n = f->n - 2;
    a.result = b.result = -1;
    pool_join(f->c->p, fib_task, &a, fib_task, &b);
    f->result = a.result + b.result;
}

static void on_start(void *user, int index) {
    ctx *c = (ctx *)user;
    atomic_fetch_add(&c->starts, 1);
    if (index < 0 || index >= c->threads + 256) atomic_fetch_add(&c->start_index_bad, 1);
    else if (index < 16 && atomic_exchange(&c->start_seen[index], 1) != 0)
        atomic_fetch_add(&c->start_index_bad, 1); /* the same index twice */
}

static void on_exit_cb(void *user, int index) {
    ctx *c = (ctx *)user;
    (void)index;
    atomic_fetch_add(&c->exits, 1);
}

typedef struct call_arg {
    ctx *c;
    atomic_int runs;
    int index;
} call_arg;

static void call_fn(void *arg) {
    call_arg *ca = (call_arg *)arg;
    note_worker(ca->c);
    ca->index = pool_worker_index();
    atomic_fetch_add(&ca->runs, 1);
}

static void check_pool(int threads, int n) {
    static ctx c; /* big enough to keep off the stack; reset below */
    pool_config cfg;
    pool_stats st;
    fib_arg root, a, b;
    call_arg ca;
    long expect = fib_serial(n), expect_tasks = 0;
    double t0 = test_now(), t_call, t_join;
    int k, seen = 0;

    memset(&c, 0, sizeof c);
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    cfg.on_thread_start = on_start;
    cfg.on_thread_exit = on_exit_cb;
    cfg.user = &c;
    cfg.name = "test-join";
    c.threads = threads;
    /* Spares standing in for parked workers have indices above num_threads,
       and the external slots of outside callers above the spares'. */
    c.index_limit = threads + 256 + POOL_EXTERNAL_SLOTS_DEFAULT;
    { /* fib(n) makes this many calls: calls(n) = 1 + calls(n-1) + calls(n-2) */
        long c0 = 1, c1 = 1, i;
        for (i = 2; i <= n; i++) {
            long c2 = 1 + c1 + c0;
            c0 = c1;
            c1 = c2;
        }
        expect_tasks = n < 1 ? 1 : c1;
    }

    printf("  %d thread(s): fib(%d) = %ld via pool_call and via pool_join from outside\n", threads,
           n, expect);
    CHECK(pool_create(&c.p, &cfg) == 0);
    if (!c.p) return;
    CHECK_EQ_I64(pool_num_threads(c.p), threads);
    CHECK_EQ_I64(pool_worker_index_limit(c.p), c.index_limit);

    /* pool_call: the function runs once, on this thread in an external slot */
    memset(&ca, 0, sizeof ca);
    ca.c = &c;
    ca.index = -2;
    pool_call(c.p, call_fn, &ca);
    CHECK_EQ_I64(atomic_load(&ca.runs), 1);
    CHECK(ca.index >= threads + 256 && ca.index < c.index_limit);
    CHECK_EQ_I64(pool_worker_index(), -1);

    /* fib through pool_call */
    root.c = &c;
    root.n = n;
    root.result = -1;
    pool_call(c.p, fib_task, &root);
    CHECK_EQ_I64(root.result, expect);
    CHECK_EQ_I64(atomic_load(&c.tasks), expect_tasks);
    t_call = test_now() - t0;

    /* fib through a pool_join from outside the pool */
    t0 = test_now();
    atomic_store(&c.tasks, 0);
    a.c = b.c = &c;
    a.n = n - 1;
    b.n = n - 2;
    a.result = b.result = -1;
    pool_join(c.p, fib_task, &a, fib_task, &b);
    CHECK_EQ_I64(a.result + b.result, expect);
    CHECK_EQ_I64(atomic_load(&c.tasks), expect_tasks - 1);
    t_join = test_now() - t0;
    CHECK_EQ_I64(pool_worker_index(), -1);

    CHECK_EQ_I64(atomic_load(&c.bad_index), 0);
    for (k = 0; k < threads && k < 16; k++) seen += atomic_load(&c.seen[k]);

    pool_stats_get(c.p, &st);
    printf("    call %.3f s, join %.3f s; workers seen %d; stats: run %" PRIu64 " stolen %" PRIu64
           " failed steals %" PRIu64 " injected %" PRIu64 " sleeps %" PRIu64 " wakeups %" PRIu64
           " started %" PRIu64 "\n",
           t_call, t_join, seen, st.jobs_run, st.jobs_stolen, st.steals_failed, st.jobs_injected,
           st.sleeps, st.wakeups, st.threads_started);
    CHECK(st.jobs_run > 0);
    CHECK(st.jobs_stolen <= st.jobs_run);
    CHECK_EQ_I64(st.slot_calls, 3); /* pool_call twice and the outside join, all in slots */
    CHECK(st.threads_started >= 1 && st.threads_started <= (uint64_t)threads);
    CHECK_EQ_I64(st.threads_failed, 0);
    CHECK_EQ_I64(st.num_threads, threads);
    pool_stats_get(c.p, NULL); /* a NULL out-pointer is ignored, not a crash */

    CHECK(pool_destroy(c.p) == 0);
    /* A started thread calls on_thread_start on its own, a little later:
       compare once destroy has joined them all. */
    CHECK_EQ_I64(atomic_load(&c.starts), st.threads_started + st.spares_started);
    CHECK_EQ_I64(atomic_load(&c.exits), atomic_load(&c.starts));
    CHECK_EQ_I64(atomic_load(&c.start_index_bad), 0);
    /* One thread: worker 0's hook ran if it started (the calls run in a
       slot on this thread, and may have needed no worker at all). */
    if (threads == 1) CHECK_EQ_I64(atomic_load(&c.start_seen[0]), st.threads_started);
}

/* A C99 build without POOL_DEBUG has the macro; the forms below then
   take its inline path where the caller is a worker of the pool. */
#if !defined(POOL_DEBUG) && !defined(POOL_NO_INLINE_JOIN) && !defined(pool_join)
#error "test_join: pool_join is not a macro in this C99 build"
#endif

typedef struct bump {
    atomic_int *count;
    int by;
} bump;

static void bump_run(void *arg) {
    const bump *b = (const bump *)arg;
    atomic_fetch_add(b->count, b->by);
}

typedef struct forms_arg {
    pool *p;     /* the pool joined on */
    pool *other; /* a pool the caller is not a worker of */
} forms_arg;

/* Every form once; the halves add 1 and 100 (or 1000 and 10000) to a
   count that must end at their sum. */
static void join_forms(void *arg) {
    forms_arg *f = (forms_arg *)arg;
    void (*fn)(pool *, pool_fn, void *, pool_fn, void *) = pool_join;
    atomic_int n;
    atomic_init(&n, 0);
    pool_join(f->p, bump_run, &(bump){&n, 1}, bump_run, &(bump){&n, 100});
    CHECK_EQ_I64(atomic_load(&n), 101);
    pool_join(f->p, bump_run, &(bump){&n, 1000}, NULL, NULL);
    pool_join(f->p, NULL, NULL, bump_run, &(bump){&n, 10000});
    CHECK_EQ_I64(atomic_load(&n), 11101);
    atomic_store(&n, 0);
    (pool_join)(f->p, bump_run, &(bump){&n, 1}, bump_run, &(bump){&n, 100});
    fn(f->p, bump_run, &(bump){&n, 1000}, bump_run, &(bump){&n, 10000});
    CHECK_EQ_I64(atomic_load(&n), 11101);
    atomic_store(&n, 0);
    pool_join(NULL, bump_run, &(bump){&n, 1}, bump_run, &(bump){&n, 100});
    if (f->other) pool_join(f->other, bump_run, &(bump){&n, 1000}, bump_run, &(bump){&n, 10000});
    CHECK_EQ_I64(atomic_load(&n), f->other ? 11101 : 101);
}

static void check_forms(void) {
    pool *p, *other;
    pool_config cfg = {0};
    forms_arg f;
    cfg.num_threads = 2;
    CHECK_EQ_I64(pool_create(&p, &cfg), 0);
    CHECK_EQ_I64(pool_create(&other, &cfg), 0);
    f.p = p, f.other = other;
    pool_call_on_worker(p, join_forms, &f); /* inline, on a worker */
    join_forms(&f);                         /* the function, from outside */
    f.p = NULL, f.other = p;
    pool_call_on_worker(NULL, join_forms, &f); /* the default pool's worker */
    pool_destroy(other);
    pool_destroy(p);
}

static void *outside_thread(void *arg) {
    *(int *)arg = pool_worker_index();
    return NULL;
}

int main(void) {
    static const int sizes[] = {1, 2, 4, 16};
    /* fib(27) at full scale; smaller under sanitizers (each step down is
       about 1.6 times less work) */
    int n = 27, k;
    double s = test_scale();
    while (s < 0.99 && n > 15) {
        s *= 1.618;
        n--;
    }
    test_watchdog(240, "test_join");
    printf("test_join: fork-join (pool.h %d.%d.%d)\n", POOL_VERSION_MAJOR, POOL_VERSION_MINOR,
           POOL_VERSION_PATCH);
    CHECK_EQ_I64(pool_worker_index(), -1);
    {
        pthread_t t;
        int index = -2;
        pthread_create(&t, NULL, outside_thread, &index);
        pthread_join(t, NULL);
        CHECK_EQ_I64(index, -1);
    }
    test_watchdog(60, "test_join (the forms of a call)");
    check_forms();
    for (k = 0; k < 4; k++) {
        char name[64];
        snprintf(name, sizeof name, "test_join (%d threads)", sizes[k]);
        test_watchdog(120, name);
        check_pool(sizes[k], n);
    }
    return test_finish("test_join");
}
