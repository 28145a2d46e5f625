/* test_outside.c - many outside threads calling into one pool at once,
 * and the process-wide default pool (NULL).
 *
 * 8 plain pthreads each make many pool_call and pool_join calls (plus small
 * recursive fibs) into the same 2-thread pool at the same time; every
 * result is exact and every task runs on a worker. Then the same against
 * the default pool, whose size comes from $POOL_NUM_THREADS (set to 3
 * here before its first use), as does a pool created with num_threads 0.
 *
 * Lazy start: many rounds of a fresh pool (no thread started yet) hit by 8
 * outside threads at the same instant, each with one pool_join or
 * pool_call: the work must still run on the pool's workers.
 *
 * Streams: outside threads post tiny tasks one by one as fast as they can
 * (pool_scope_spawn into a scope of their own, then pool_submit of detached
 * ones), which makes workers pause between takes (see "Streams from
 * outside" in pool.h), mixed with rounds that submit one task and wait for
 * it before the next; pools of 1 and 2 workers. Every task runs exactly
 * once, and every wait returns (the watchdog fails a pause that never
 * ends: with one worker, nobody else would take the stream).
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include <sched.h>

#include "test.h"

#define OUTSIDE_THREADS 8

typedef struct shared {
    pool *p;         /* may be NULL: the default pool */
    int index_limit; /* pool_worker_index_limit, for the worker index check */
    long iterations; /* per outside thread */
    atomic_long bad_index;
    atomic_long wrong; /* wrong results seen by the outside threads */
    atomic_long runs;  /* task bodies run, over all threads */
} shared;

typedef struct task_arg {
    shared *s;
    long value;
} task_arg;

static void check_worker(shared *s) {
    int w = pool_worker_index();
    if (w < 0 || w >= s->index_limit) {
        if (atomic_fetch_add(&s->bad_index, 1) == 0)
            fprintf(stderr, "    task saw pool_worker_index() = %d, limit %d\n", w, s->index_limit);
    }
}

static void add_one(void *arg) {
    task_arg *t = (task_arg *)arg;
    check_worker(t->s);
    t->value += 1;
    atomic_fetch_add_explicit(&t->s->runs, 1, memory_order_relaxed);
}

static void times_three(void *arg) {
    task_arg *t = (task_arg *)arg;
    check_worker(t->s);
    t->value *= 3;
    atomic_fetch_add_explicit(&t->s->runs, 1, memory_order_relaxed);
}

typedef struct fib_arg {
    shared *s;
    int n;
    long result;
} fib_arg;

static void fib_task(void *arg) {
    fib_arg *f = (fib_arg *)arg, a, b;
    check_worker(f->s);
    if (f->n < 2) {
        f->result = f->n;
        return;
    }
    a.s = b.s = f->s;
    a.n = f->n - 1;
    b.n = f->n - 2;
    pool_join(f->s->p, fib_task, &a, fib_task, &b);
    f->result = a.result + b.result;
}

static void *outside_main(void *arg) {
    shared *s = (shared *)arg;
    long i;
    if (pool_worker_index() != -1) atomic_fetch_add(&s->bad_index, 1);
    for (i = 0; i < s->iterations; i++) {
        task_arg x, y;
        x.s = y.s = s;
        x.value = i;
        y.value = i + 7;
        switch (i % 3) {
        case 0:
            pool_call(s->p, add_one, &x);
            if (x.value != i + 1) atomic_fetch_add(&s->wrong, 1);
            break;
        case 1:
            pool_join(s->p, add_one, &x, times_three, &y);
            if (x.value != i + 1 || y.value != 3 * (i + 7)) atomic_fetch_add(&s->wrong, 1);
            break;
        default: {
            fib_arg f;
            f.s = s;
            f.n = 10 + (int)(i % 5); /* fib(10..14) = 55, 89, 144, 233, 377 */
            f.result = -1;
            pool_call(s->p, fib_task, &f);
            {
                static const long expect[] = {55, 89, 144, 233, 377};
                if (f.result != expect[i % 5]) atomic_fetch_add(&s->wrong, 1);
            }
            break;
        }
        }
    }
    return NULL;
}

/* Returns the number of simple task runs expected: add_one/times_three. */
static long run_outside_threads(shared *s) {
    pthread_t threads[OUTSIDE_THREADS];
    long expect_runs = 0, i;
    int k;
    for (k = 0; k < OUTSIDE_THREADS; k++) {
        if (pthread_create(&threads[k], NULL, outside_main, s) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(2);
        }
    }
    for (k = 0; k < OUTSIDE_THREADS; k++) pthread_join(threads[k], NULL);
    for (i = 0; i < s->iterations; i++) expect_runs += i % 3 == 0 ? 1 : i % 3 == 1 ? 2 : 0;
    return expect_runs * OUTSIDE_THREADS;
}

static void test_shared_pool(void) {
    static shared s;
    pool_config cfg;
    long expect_runs;
    double t0 = test_now();
    memset(&s, 0, sizeof s);
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    CHECK(pool_create(&s.p, &cfg) == 0);
    if (!s.p) return;
    s.index_limit = pool_worker_index_limit(s.p);
    s.iterations = test_scaled(6000, 300);
    printf("  %d outside threads x %ld calls (pool_call, pool_join, fib) into one 2-thread pool\n",
           OUTSIDE_THREADS, s.iterations);
    expect_runs = run_outside_threads(&s);
    printf("    %.2f s\n", test_now() - t0);
    CHECK_EQ_I64(atomic_load(&s.wrong), 0);
    CHECK_EQ_I64(atomic_load(&s.bad_index), 0);
    CHECK_EQ_I64(atomic_load(&s.runs), expect_runs);
    CHECK(pool_destroy(s.p) == 0);
}

typedef struct lazy {
    shared *s;
    pthread_barrier_t *go;
    int k;
} lazy;

static void *lazy_main(void *arg) {
    lazy *l = (lazy *)arg;
    task_arg x, y;
    x.s = y.s = l->s;
    x.value = 1;
    y.value = 2;
    pthread_barrier_wait(l->go);
    if (l->k % 2) {
        pool_join(l->s->p, add_one, &x, times_three, &y);
        if (x.value != 2 || y.value != 6) atomic_fetch_add(&l->s->wrong, 1);
    } else {
        pool_call(l->s->p, add_one, &x);
        if (x.value != 2) atomic_fetch_add(&l->s->wrong, 1);
    }
    return NULL;
}

static void test_lazy_start(void) {
    static shared s;
    const int rounds = (int)test_scaled(200, 20);
    int r, k;
    pool_config cfg;
    printf("  lazy start: %d fresh 2-thread pools, each hit by %d outside threads at once\n",
           rounds, OUTSIDE_THREADS);
    memset(&s, 0, sizeof s);
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    for (r = 0; r < rounds; r++) {
        pthread_t threads[OUTSIDE_THREADS];
        lazy args[OUTSIDE_THREADS];
        pthread_barrier_t go;
        s.p = NULL;
        CHECK(pool_create(&s.p, &cfg) == 0);
        if (!s.p) return;
        s.index_limit = pool_worker_index_limit(s.p);
        pthread_barrier_init(&go, NULL, OUTSIDE_THREADS);
        for (k = 0; k < OUTSIDE_THREADS; k++) {
            args[k].s = &s;
            args[k].go = &go;
            args[k].k = k;
            pthread_create(&threads[k], NULL, lazy_main, &args[k]);
        }
        for (k = 0; k < OUTSIDE_THREADS; k++) pthread_join(threads[k], NULL);
        pthread_barrier_destroy(&go);
        CHECK(pool_destroy(s.p) == 0);
    }
    CHECK_EQ_I64(atomic_load(&s.wrong), 0);
    CHECK_EQ_I64(atomic_load(&s.bad_index), 0);
    CHECK_EQ_I64(atomic_load(&s.runs), (long)rounds * (OUTSIDE_THREADS + OUTSIDE_THREADS / 2));
}

static void test_default_pool(void) {
    static shared s;
    task_arg x, y;
    fib_arg f;
    pool_stats st;
    pool *p0 = NULL;
    pool_config cfg;
    long expect_runs;
    printf("  default pool (NULL): size from $POOL_NUM_THREADS=3, pool_call, pool_join, outside "
           "threads\n");
    memset(&s, 0, sizeof s);
    s.p = NULL;
    s.index_limit = pool_worker_index_limit(NULL);
    s.iterations = test_scaled(2000, 100);

    CHECK_EQ_I64(pool_num_threads(NULL), 3);
    x.s = y.s = &s;
    x.value = 41;
    pool_call(NULL, add_one, &x);
    CHECK_EQ_I64(x.value, 42);
    x.value = 1;
    y.value = 5;
    pool_join(NULL, add_one, &x, times_three, &y);
    CHECK_EQ_I64(x.value, 2);
    CHECK_EQ_I64(y.value, 15);
    f.s = &s;
    f.n = 20;
    f.result = -1;
    pool_call(NULL, fib_task, &f);
    CHECK_EQ_I64(f.result, 6765);
    atomic_store(&s.runs, 0);
    expect_runs = run_outside_threads(&s);
    CHECK_EQ_I64(atomic_load(&s.wrong), 0);
    CHECK_EQ_I64(atomic_load(&s.bad_index), 0);
    CHECK_EQ_I64(atomic_load(&s.runs), expect_runs);

    memset(&st, 0, sizeof st);
    pool_stats_get(NULL, &st);
    CHECK_EQ_I64(st.num_threads, 3);
    CHECK(st.jobs_run > 0);
    CHECK(st.threads_started >= 1 && st.threads_started <= 3);
    CHECK(pool_destroy(NULL) == EINVAL); /* the default pool is not destroyed */
    x.value = 0;
    pool_call(NULL, add_one, &x); /* and still works */
    CHECK_EQ_I64(x.value, 1);

    /* num_threads 0 in a config also means $POOL_NUM_THREADS */
    memset(&cfg, 0, sizeof cfg);
    CHECK(pool_create(&p0, &cfg) == 0);
    if (p0) {
        CHECK_EQ_I64(pool_num_threads(p0), 3);
        CHECK(pool_destroy(p0) == 0);
    }
}

#define STREAM_THREADS 4
#define STREAM_TASKS 2000

typedef struct stream_task {
    pool_task task;
    atomic_int runs;
    atomic_long *left; /* detached ones: tasks of the round not run yet */
} stream_task;

static void stream_task_run(pool_task *t) {
    stream_task *st = (stream_task *)(void *)((char *)t - offsetof(stream_task, task));
    atomic_fetch_add_explicit(&st->runs, 1, memory_order_relaxed);
    /* Release: the poster that sees the count reach 0 sees every run. */
    if (st->left) atomic_fetch_sub_explicit(st->left, 1, memory_order_release);
}

typedef struct stream_poster {
    pool *p;
    long rounds;
    stream_task tasks[STREAM_TASKS];
    atomic_long left;
    long wrong; /* tasks that ran other than once, and failed calls */
} stream_poster;

static void stream_reset(stream_poster *sp, int detached) {
    int i;
    for (i = 0; i < STREAM_TASKS; i++) {
        pool_task init = POOL_TASK_INIT(stream_task_run);
        sp->tasks[i].task = init;
        atomic_store_explicit(&sp->tasks[i].runs, 0, memory_order_relaxed);
        sp->tasks[i].left = detached ? &sp->left : NULL;
    }
    atomic_store(&sp->left, STREAM_TASKS);
}

static void stream_count_wrong(stream_poster *sp) {
    int i;
    for (i = 0; i < STREAM_TASKS; i++)
        if (atomic_load_explicit(&sp->tasks[i].runs, memory_order_relaxed) != 1) sp->wrong++;
}

static void *stream_main(void *arg) {
    stream_poster *sp = (stream_poster *)arg;
    long r;
    int i;
    for (r = 0; r < sp->rounds; r++) {
        pool_scope scope;
        stream_reset(sp, 0);
        pool_scope_init(&scope, sp->p);
        for (i = 0; i < STREAM_TASKS; i++)
            if (pool_scope_spawn(&scope, &sp->tasks[i].task) != 0) sp->wrong++;
        pool_scope_wait(&scope);
        stream_count_wrong(sp);

        stream_reset(sp, 1);
        for (i = 0; i < STREAM_TASKS; i++)
            if (pool_submit(sp->p, &sp->tasks[i].task) != 0) sp->wrong++;
        /* Acquire: pairs with the tasks' release. */
        while (atomic_load_explicit(&sp->left, memory_order_acquire) > 0) sched_yield();
        stream_count_wrong(sp);

        /* One at a time: each task runs before the next is posted. */
        stream_reset(sp, 1);
        for (i = 0; i < STREAM_TASKS / 20; i++) {
            if (pool_submit(sp->p, &sp->tasks[i].task) != 0) sp->wrong++;
            while (atomic_load_explicit(&sp->left, memory_order_acquire) > STREAM_TASKS - i - 1)
                sched_yield();
        }
        for (i = 0; i < STREAM_TASKS / 20; i++)
            if (atomic_load_explicit(&sp->tasks[i].runs, memory_order_relaxed) != 1) sp->wrong++;
    }
    return NULL;
}

static void test_streams(int threads) {
    static stream_poster posters[STREAM_THREADS];
    pthread_t ids[STREAM_THREADS];
    pool *p = test_pool(threads);
    int k;
    long rounds = test_scaled(40, 4);
    printf("  streams: %d outside threads x %ld rounds of %d spawns, %d submits and %d one at a "
           "time, %d-thread pool\n",
           STREAM_THREADS, rounds, STREAM_TASKS, STREAM_TASKS, STREAM_TASKS / 20, threads);
    for (k = 0; k < STREAM_THREADS; k++) {
        posters[k].p = p;
        posters[k].rounds = rounds;
        posters[k].wrong = 0;
        if (pthread_create(&ids[k], NULL, stream_main, &posters[k]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(2);
        }
    }
    for (k = 0; k < STREAM_THREADS; k++) pthread_join(ids[k], NULL);
    for (k = 0; k < STREAM_THREADS; k++) CHECK_EQ_I64(posters[k].wrong, 0);
    CHECK(pool_destroy(p) == 0);
}

int main(void) {
    test_watchdog(180, "test_outside");
    /* before anything touches the default pool */
    test_setenv("POOL_NUM_THREADS", "3");
    printf("test_outside: outside threads and the default pool\n");
    test_lazy_start();
    test_shared_pool();
    test_default_pool();
    test_watchdog(120, "test_outside streams");
    test_streams(1);
    test_streams(2);
    return test_finish("test_outside");
}
