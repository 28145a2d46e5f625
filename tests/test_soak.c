/* test_soak.c - many joins and outside submissions with the race windows
 * widened (POOL_CHAOS: random yields and short sleeps at every protocol
 * step), at 1 thread and at 16 threads on however few cores there are.
 *
 *  - joins: binary join trees from outside, counting leaves exactly, and
 *    chains of joins whose second halves fork no further (the shape whose
 *    lazy halves are promoted as the chain unwinds); at 16 threads halves
 *    must have been promoted and stolen;
 *  - outside callers: 32 threads at once calling join trees into the pool,
 *    the first 4 in its external slots (the workers steal from them), the
 *    rest injected; the joins above run in a slot too, from main;
 *  - a 50 us heartbeat throughout (its promotions, its stop and resume);
 *  - submits: two outside threads submit bursts of detached tasks (every
 *    fourth at high priority, the next pinned to a random worker) while a
 *    third changes the active count at random, with
 *    random pauses between them, long
 *    enough for the workers to fall asleep, so that every burst needs a
 *    wake-up; every task must run;
 *  - cancels: rounds of up to 256 scope tasks (every eighth at high
 *    priority) spawned from outside or
 *    from a worker, cancelled at a random moment by another thread; every
 *    task must run or be skipped exactly once, and every wait return;
 *  - graphs: a random 300-node DAG run again and again, from outside and
 *    from a worker; every node must run once per run, after each of its
 *    predecessors has finished;
 *  - an inbox: two tasks of the pool post tasks to main's inbox, which
 *    main waits on and runs; every task must run once;
 *  - pins during destroy: a task of a 4-worker pool pins a stream of tasks
 *    to the other workers while the pool is destroyed at a random moment;
 *    every pin accepted must run once, on its worker.
 *
 * A lost wake-up leaves a burst unfinished: the watchdog, re-armed after
 * every round, then fails the test and dumps the pool's state (counters
 * word, each worker's latch and deque length, the injector).
 *
 * Sizes: POOL_SOAK=full (make soak) runs 10^8 joins and 10^7 submits per
 * thread count; the default is a reduced run for make test and CI.
 */
#define POOL_CHAOS
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

static pool *soaked;
static int soaked_threads;

static void dump_state(void) {
    pool *p = soaked;
    uint64_t c;
    uint32_t i, started;
    if (!p) return;
    c = POOL__LOAD(&p->counters, POOL__RELAXED);
    started = POOL__LOAD(&p->threads.started, POOL__RELAXED);
    fprintf(stderr, "pool state (%d threads configured, %u started):\n", soaked_threads, started);
    fprintf(stderr, "  counters: sleeping %u, inactive %u, JEC %u; injector %s, high %s\n",
            pool__sleeping_of(c), pool__inactive_of(c), pool__jec_of(c),
            pool__injector_has_work(&p->injector) ? "NOT EMPTY" : "empty",
            pool__injector_has_work(&p->injector_high) ? "NOT EMPTY" : "empty");
    for (i = 0; i < started; i++)
        fprintf(stderr,
                "  worker %u: latch %u (0 unset, 1 sleepy, 2 sleeping, 3 set), deque %lld, "
                "pinned %s\n",
                i, POOL__LOAD(&p->workers[i]->core_latch, POOL__RELAXED),
                (long long)pool__deque_len(&p->workers[i]->deque),
                pool__injector_seen_work(&p->workers[i]->pinned) ? "NOT EMPTY" : "empty");
    fprintf(stderr, "  external slots taken: %#x\n", POOL__LOAD(&p->slots_taken, POOL__RELAXED));
    for (i = 0; i < p->num_slots; i++)
        fprintf(stderr, "  slot %u: deque %lld\n", i,
                (long long)pool__deque_len(&pool__slot(p, i)->deque));
}

/* ------------------------------------------------------------------------ */
/* Joins                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct tree_arg {
    int depth;
    long leaves;
} tree_arg;

static void tree(void *arg) {
    tree_arg *t = (tree_arg *)arg, a, b;
    if (t->depth == 0) {
        t->leaves = 1;
        return;
    }
    a.depth = b.depth = t->depth - 1;
    pool_join(soaked, tree, &a, tree, &b);
    t->leaves = a.leaves + b.leaves;
}

#define TREE_DEPTH 12 /* 4095 joins per tree */

static void leaf(void *arg) { ((tree_arg *)arg)->leaves = 1; }

/* join(chain of depth - 1, a leaf): the second halves fork no further. */
static void chain(void *arg) {
    tree_arg *t = (tree_arg *)arg, a, b;
    if (t->depth == 0) {
        t->leaves = 1;
        return;
    }
    a.depth = t->depth - 1;
    pool_join(soaked, chain, &a, leaf, &b);
    t->leaves = a.leaves + b.leaves;
}

static long soak_joins(long joins) {
    long done = 0;
    int round = 0;
    while (done < joins) {
        tree_arg t;
        int chained = round % 2;
        t.depth = chained ? (1 << TREE_DEPTH) - 1 : TREE_DEPTH;
        t.leaves = 0;
        pool_call(soaked, chained ? chain : tree, &t);
        CHECK_EQ_I64(t.leaves, 1L << TREE_DEPTH);
        done += (1L << TREE_DEPTH) - 1;
        if (++round % 64 == 0) test_watchdog(60, "test_soak (joins)");
    }
    return done;
}

/* ------------------------------------------------------------------------ */
/* Outside callers                                                          */
/* ------------------------------------------------------------------------ */

#define CALLERS 32
#define CALLER_DEPTH 8

static void *call_trees(void *arg) {
    long calls = *(long *)arg, i;
    for (i = 0; i < calls; i++) {
        tree_arg t;
        t.depth = CALLER_DEPTH;
        t.leaves = 0;
        pool_call(soaked, tree, &t);
        CHECK_EQ_I64(t.leaves, 1L << CALLER_DEPTH);
    }
    return NULL;
}

static long soak_callers(long joins) {
    static pthread_t th[CALLERS];
    long calls = joins / CALLERS / ((1L << CALLER_DEPTH) - 1) + 1;
    int i;
    for (i = 0; i < CALLERS; i++) CHECK(pthread_create(&th[i], NULL, call_trees, &calls) == 0);
    for (i = 0; i < CALLERS; i++) pthread_join(th[i], NULL);
    test_watchdog(60, "test_soak (outside callers)");
    return calls * CALLERS * ((1L << CALLER_DEPTH) - 1);
}

/* ------------------------------------------------------------------------ */
/* Outside submissions                                                      */
/* ------------------------------------------------------------------------ */

#define BURST 64

typedef struct submitter submitter;

typedef struct counted_task {
    pool_task task;
    submitter *owner;
} counted_task;

struct submitter {
    long tasks;
    uint64_t rng;
    atomic_long ran;
    pthread_t thread;
    counted_task burst[BURST];
};

static void count_run(pool_task *t) {
    atomic_fetch_add(&((counted_task *)((char *)t - offsetof(counted_task, task)))->owner->ran, 1);
}

/* The i-th task of a burst: every fourth at high priority, the one after
   it pinned to a random worker, the rest normal. */
static int submit_one(submitter *s, pool_task *t, long i) {
    if (i % 4 == 0) return pool_submit_priority(soaked, t, POOL_PRIORITY_HIGH);
    if (i % 4 == 1)
        return pool_submit_pinned(soaked, (int)(test_rand(&s->rng) % soaked_threads), t);
    return pool_submit(soaked, t);
}

/* Bursts of 1..BURST tasks; before reusing them, waits (sleeping, so the
   workers are free) until they all ran: a lost wake-up stalls here. */
static void *submit_bursts(void *arg) {
    submitter *s = (submitter *)arg;
    long sent = 0;
    while (sent < s->tasks) {
        long n = (long)(test_rand(&s->rng) % BURST) + 1, i;
        if (n > s->tasks - sent) n = s->tasks - sent;
        for (i = 0; i < n; i++) {
            s->burst[i].task = (pool_task)POOL_TASK_INIT(count_run);
            s->burst[i].owner = s;
            CHECK(submit_one(s, &s->burst[i].task, i) == 0);
        }
        sent += n;
        while (atomic_load(&s->ran) < sent) test_sleep_us(20);
        test_watchdog(60, "test_soak (submits)");            /* progress: a stall fires it */
        test_sleep_us((long)(test_rand(&s->rng) % 3) * 100); /* 0-200 us: workers may sleep */
    }
    return NULL;
}

#define SUBMITTERS 2

static atomic_int toggle_stop;

/* While the submitters run, changes the active count at random (the pinned
   tasks of the bursts then meet stopped workers too), and restores it. */
static void *toggle_active(void *arg) {
    uint64_t rng = 5;
    (void)arg;
    while (!atomic_load(&toggle_stop)) {
        CHECK(pool_set_active_threads(soaked, 1 + (int)(test_rand(&rng) % soaked_threads)) == 0);
        test_sleep_us((long)(test_rand(&rng) % 1000));
    }
    CHECK(pool_set_active_threads(soaked, soaked_threads) == 0);
    return NULL;
}

static long soak_submits(long total) {
    static submitter subs[SUBMITTERS];
    pthread_t toggler;
    long ran = 0;
    int i;
    atomic_store(&toggle_stop, 0);
    CHECK(pthread_create(&toggler, NULL, toggle_active, NULL) == 0);
    for (i = 0; i < SUBMITTERS; i++) {
        subs[i].tasks = total / SUBMITTERS;
        subs[i].rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
        atomic_store(&subs[i].ran, 0);
        CHECK(pthread_create(&subs[i].thread, NULL, submit_bursts, &subs[i]) == 0);
    }
    for (i = 0; i < SUBMITTERS; i++) {
        pthread_join(subs[i].thread, NULL);
        CHECK_EQ_I64(atomic_load(&subs[i].ran), subs[i].tasks);
        ran += atomic_load(&subs[i].ran);
    }
    atomic_store(&toggle_stop, 1);
    pthread_join(toggler, NULL);
    return ran;
}

/* ------------------------------------------------------------------------ */
/* An inbox                                                                 */
/* ------------------------------------------------------------------------ */

#define INBOX_POSTERS 2

static pool_inbox soak_inbox;
static pool_task *inbox_tasks;
static atomic_int *inbox_runs;
static long inbox_each;

static void inbox_task_run(pool_task *t) { atomic_fetch_add(&inbox_runs[t - inbox_tasks], 1); }

typedef struct inbox_poster {
    pool_task task;
    long first;
} inbox_poster;

static void inbox_post_share(pool_task *t) {
    long i, first = ((inbox_poster *)(void *)t)->first;
    for (i = first; i < first + inbox_each; i++)
        CHECK(pool_inbox_post(&soak_inbox, &inbox_tasks[i]) == 0);
}

/* Two tasks of the pool post `each` tasks apiece to main's inbox; main waits
   on it and runs them: each must run once, on main. */
static long soak_inbox_posts(long each) {
    inbox_poster posters[INBOX_POSTERS];
    long total = INBOX_POSTERS * each, done = 0, i;
    inbox_each = each;
    inbox_tasks = (pool_task *)calloc((size_t)total, sizeof *inbox_tasks);
    inbox_runs = (atomic_int *)calloc((size_t)total, sizeof *inbox_runs);
    if (!inbox_tasks || !inbox_runs) exit(2);
    for (i = 0; i < total; i++) inbox_tasks[i].run = inbox_task_run;
    CHECK(pool_inbox_init(&soak_inbox) == 0);
    memset(posters, 0, sizeof posters);
    for (i = 0; i < INBOX_POSTERS; i++) {
        posters[i].task.run = inbox_post_share;
        posters[i].first = i * each;
        CHECK(pool_submit(soaked, &posters[i].task) == 0);
    }
    while (done < total && !test_failures()) {
        size_t ran;
        int err = pool_inbox_wait(&soak_inbox, 10000);
        CHECK_MSG(err == 0, "the inbox's handle stayed unreadable for 10 s, %ld of %ld run", done,
                  total);
        CHECK(pool_inbox_run(&soak_inbox, &ran) == 0);
        done += (long)ran;
        test_watchdog(60, "test_soak (inbox)");
    }
    for (i = 0; i < total; i++) CHECK_EQ_I64(atomic_load(&inbox_runs[i]), 1);
    CHECK(pool_inbox_destroy(&soak_inbox) == 0);
    free(inbox_tasks);
    free(inbox_runs);
    return done;
}

/* ------------------------------------------------------------------------ */
/* Cancels                                                                  */
/* ------------------------------------------------------------------------ */

#define CANCEL_TASKS 256

typedef struct cancel_task {
    pool_task task;
    atomic_int state; /* 0, then 1 (ran) or 2 (skipped), once */
} cancel_task;

static cancel_task cancel_tasks[CANCEL_TASKS];
static pool_scope cancel_scope;
static atomic_long cancel_go, cancel_done, cancel_twice;

static void cancel_mark(pool_task *t, int what) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&((cancel_task *)(void *)t)->state, &expected, what))
        atomic_fetch_add(&cancel_twice, 1);
}

static void cancel_run(pool_task *t) { cancel_mark(t, 1); }
static void cancel_skip(pool_task *t) { cancel_mark(t, 2); }

/* Cancels round r at a random moment once it has begun. */
static void *canceller(void *arg) {
    long rounds = *(long *)arg, r;
    uint64_t rng = 0xC0FFEEull;
    for (r = 1; r <= rounds; r++) {
        while (atomic_load(&cancel_go) < r) test_sleep_us(10);
        test_sleep_us((long)(test_rand(&rng) % 60));
        pool_scope_cancel(&cancel_scope);
        atomic_store(&cancel_done, r);
    }
    return NULL;
}

/* Spawns the round's tasks; returns how many were taken (the rest were
   refused: the cancel came first). */
static long cancel_spawn(long n) {
    long i, taken = 0;
    for (i = 0; i < n; i++)
        taken += pool_scope_spawn_priority(&cancel_scope, &cancel_tasks[i].task,
                                           i % 8 ? POOL_PRIORITY_NORMAL : POOL_PRIORITY_HIGH) == 0;
    return taken;
}

static void cancel_spawn_on_worker(void *arg) { *(long *)arg = cancel_spawn(*(long *)arg); }

static long soak_cancels(long rounds) {
    pthread_t th;
    uint64_t rng = 0x5EEDull;
    long r, done = 0;
    atomic_store(&cancel_go, 0);
    atomic_store(&cancel_done, 0);
    atomic_store(&cancel_twice, 0);
    pool_scope_init(&cancel_scope, soaked);
    CHECK(pool_scope_on_cancel(&cancel_scope, cancel_skip) == 0);
    CHECK(pthread_create(&th, NULL, canceller, &rounds) == 0);
    for (r = 1; r <= rounds; r++) {
        long n = (long)(test_rand(&rng) % CANCEL_TASKS) + 1, taken = n, i, marked = 0;
        int status;
        for (i = 0; i < n; i++) {
            cancel_tasks[i].task = (pool_task)POOL_TASK_INIT(cancel_run);
            atomic_store(&cancel_tasks[i].state, 0);
        }
        atomic_store(&cancel_go, r); /* the cancel may come during the spawns */
        if (r % 2) taken = cancel_spawn(n);
        else pool_call_on_worker(soaked, cancel_spawn_on_worker, &taken);
        status = pool_scope_wait_status(&cancel_scope);
        CHECK(status == 0 || status == ECANCELED);
        while (atomic_load(&cancel_done) < r) test_sleep_us(10);
        if (pool_scope_cancelled(&cancel_scope)) /* the cancel came after the wait */
            CHECK(pool_scope_wait_status(&cancel_scope) == ECANCELED);
        for (i = 0; i < n; i++) marked += atomic_load(&cancel_tasks[i].state) != 0;
        CHECK_EQ_I64(marked, taken);
        test_watchdog(60, "test_soak (cancels)");
        done++;
    }
    pthread_join(th, NULL);
    CHECK_EQ_I64(atomic_load(&cancel_twice), 0);
    return done;
}

/* ------------------------------------------------------------------------ */
/* Graphs                                                                   */
/* ------------------------------------------------------------------------ */

#define GRAPH_NODES 300
#define GRAPH_PREDS 3

typedef struct soak_node {
    pool_graph_node node;
    int preds[GRAPH_PREDS], npreds;
    atomic_long started, finished, runs;
} soak_node;

static soak_node soak_nodes[GRAPH_NODES];
static pool_graph_edge soak_edges[GRAPH_NODES * GRAPH_PREDS];
static pool_graph soak_graph;
static atomic_long soak_sequence, soak_graph_bad;

static void soak_node_run(pool_graph_node *self) {
    soak_node *n = (soak_node *)(void *)self;
    int k;
    atomic_store(&n->started, atomic_fetch_add(&soak_sequence, 1));
    for (k = 0; k < n->npreds; k++) /* each predecessor finished before this started */
        if (atomic_load(&soak_nodes[n->preds[k]].finished) > atomic_load(&n->started))
            atomic_fetch_add(&soak_graph_bad, 1);
    atomic_fetch_add(&n->runs, 1);
    atomic_store(&n->finished, atomic_fetch_add(&soak_sequence, 1));
}

static void soak_graph_once(void *arg) {
    (void)arg;
    CHECK(pool_graph_run(&soak_graph) == 0);
    CHECK(pool_graph_wait(&soak_graph) == 0);
}

static long soak_graphs(long runs) {
    uint64_t rng = 0xDA6ull;
    long r;
    int i, k, e = 0;
    memset(soak_edges, 0, sizeof soak_edges);
    atomic_store(&soak_graph_bad, 0);
    pool_graph_init(&soak_graph, soaked);
    for (i = 0; i < GRAPH_NODES; i++) {
        soak_nodes[i].node = (pool_graph_node)POOL_GRAPH_NODE_INIT(soak_node_run);
        soak_nodes[i].npreds = 0;
        atomic_store(&soak_nodes[i].runs, 0);
        CHECK(pool_graph_add(&soak_graph, &soak_nodes[i].node) == 0);
        for (k = 0; i > 0 && k < GRAPH_PREDS; k++) { /* earlier nodes only: no cycle */
            int pred = (int)(test_rand(&rng) % (uint64_t)i), j, fresh = 1;
            for (j = 0; j < soak_nodes[i].npreds; j++) fresh &= soak_nodes[i].preds[j] != pred;
            if (!fresh) continue;
            soak_nodes[i].preds[soak_nodes[i].npreds++] = pred;
            CHECK(pool_graph_link(&soak_graph, &soak_edges[e++], &soak_nodes[pred].node,
                                  &soak_nodes[i].node) == 0);
        }
    }
    for (r = 0; r < runs; r++) {
        if (r % 2) soak_graph_once(NULL);
        else pool_call_on_worker(soaked, soak_graph_once, NULL);
        test_watchdog(60, "test_soak (graphs)");
    }
    for (i = 0; i < GRAPH_NODES; i++) CHECK_EQ_I64(atomic_load(&soak_nodes[i].runs), runs);
    CHECK_EQ_I64(atomic_load(&soak_graph_bad), 0);
    return runs;
}

/* ------------------------------------------------------------------------ */
/* Pins racing with a destroy                                               */
/* ------------------------------------------------------------------------ */

#define PIN_STREAM 20000

typedef struct pin_task {
    pool_task task;
    atomic_int runs;
    int want, worker;
} pin_task;

static pool *pin_pool;
static pin_task *pin_stream;
static atomic_long pins_accepted;

static void pin_run(pool_task *t) {
    pin_task *k = (pin_task *)(void *)t;
    k->worker = pool_worker_index();
    atomic_fetch_add(&k->runs, 1);
}

/* A task of the pool pins a stream to workers 1-3 until its pool's
   destroy refuses it (ECANCELED). */
static void pin_streamer(pool_task *t) {
    long i;
    int err = 0;
    (void)t;
    for (i = 0; i < PIN_STREAM && !err; i++) {
        pin_stream[i].task.run = pin_run;
        pin_stream[i].want = 1 + (int)(i % 3);
        if ((err = pool_submit_pinned(pin_pool, pin_stream[i].want, &pin_stream[i].task)) == 0)
            atomic_fetch_add(&pins_accepted, 1);
    }
    CHECK(err == 0 || err == ECANCELED);
}

/* Rounds of a 4-worker pool destroyed at a random moment of the stream:
   every pin accepted ran once, on its worker. */
static long soak_pin_destroy(long rounds) {
    uint64_t rng = 11;
    long r, i, accepted = 0;
    pin_stream = (pin_task *)calloc(PIN_STREAM, sizeof *pin_stream);
    if (!pin_stream) exit(2);
    for (r = 0; r < rounds && !test_failures(); r++) {
        pool_task streamer = POOL_TASK_INIT(pin_streamer);
        long n;
        memset(pin_stream, 0, PIN_STREAM * sizeof *pin_stream);
        atomic_store(&pins_accepted, 0);
        pin_pool = test_pool(4);
        CHECK_EQ_I64(pool_submit_pinned(pin_pool, 0, &streamer), 0);
        test_sleep_us((long)(test_rand(&rng) % 2000));
        CHECK_EQ_I64(pool_destroy(pin_pool), 0);
        n = atomic_load(&pins_accepted);
        for (i = 0; i < n; i++)
            if (atomic_load(&pin_stream[i].runs) != 1 ||
                pin_stream[i].worker != pin_stream[i].want) {
                CHECK_MSG(0, "round %ld: pin %ld of %ld accepted ran %d times, on worker %d of %d",
                          r, i, n, atomic_load(&pin_stream[i].runs), pin_stream[i].worker,
                          pin_stream[i].want);
                break;
            }
        accepted += n;
        test_watchdog(60, "test_soak (pins during destroy)");
    }
    free(pin_stream);
    return accepted;
}

int main(void) {
    static const int thread_counts[] = {1, 16};
    const char *mode = getenv("POOL_SOAK");
    int full = mode && strcmp(mode, "full") == 0;
    long joins = full ? 100000000L : test_scaled(2000000, 100000);
    long submits = full ? 10000000L : test_scaled(100000, 5000);
    long cancels = full ? 200000L : test_scaled(2000, 100);
    long graph_runs = full ? 100000L : test_scaled(1000, 50);
    size_t k;
    test_watchdog(60, "test_soak");
    test_watchdog_dump(dump_state);
    printf("test_soak: %s run with POOL_CHAOS, %ld joins and %ld outside submits per pool\n",
           full ? "full" : "reduced", joins, submits);
    for (k = 0; k < sizeof thread_counts / sizeof thread_counts[0]; k++) {
        double t0 = test_now();
        long j, c, sub, can, gr, ib;
        pool_stats st, before_callers;
        pool_config cfg;
        memset(&cfg, 0, sizeof cfg);
        soaked_threads = thread_counts[k];
        cfg.num_threads = soaked_threads;
        cfg.heartbeat_us = 50; /* promotions by the heartbeat too, and its stop and resume */
        cfg.stack_size = (size_t)16 << 20; /* chains 4095 joins deep (musl's default: 128 KiB) */
        soaked = test_pool_cfg(&cfg);
        j = soak_joins(joins);
        pool_stats_get(soaked, &before_callers);
        c = soak_callers(joins / 4);
        pool_stats_get(soaked, &st);
        CHECK(st.slot_calls > before_callers.slot_calls); /* some callers worked in slots */
        sub = soak_submits(submits);
        can = soak_cancels(cancels);
        gr = soak_graphs(graph_runs);
        ib = soak_inbox_posts(submits / 2);
        pool_stats_get(soaked, &st);
        printf("  %2d threads: %ld joins, %ld from %d outside callers at once, %ld submits, %ld "
               "cancelled rounds, %ld graph runs, %ld inbox tasks, all completed (%.1f s); %llu "
               "halves promoted, %llu tasks stolen, %llu calls in slots, %llu tasks skipped\n",
               soaked_threads, j, c, CALLERS, sub, can, gr, ib, test_now() - t0,
               (unsigned long long)st.joins_promoted, (unsigned long long)st.jobs_stolen,
               (unsigned long long)st.slot_calls, (unsigned long long)st.tasks_cancelled);
        if (soaked_threads > 1 && !test_under_valgrind()) { /* valgrind: one thread at a time */
            /* Promotion needs a worker idle while a join runs, which a
               loaded machine can deny the whole soak: more joins, until
               one shows or a bound is reached. */
            int more;
            for (more = 0; more < 64 && st.joins_promoted == 0; more++) {
                soak_joins((1L << TREE_DEPTH) - 1);
                pool_stats_get(soaked, &st);
            }
            if (more) printf("    %d more trees until a half was promoted\n", more);
            CHECK(st.joins_promoted > 0 && st.jobs_stolen > 0);
        }
        CHECK_EQ_I64(pool_destroy(soaked), 0);
        soaked = NULL;
        test_watchdog(60, "test_soak");
    }
    {
        long rounds = full ? 5000 : test_scaled(100, 10);
        printf(
            "  pins during destroy: %ld rounds, %ld pins accepted, each ran once on its worker\n",
            rounds, soak_pin_destroy(rounds));
    }
    if (test_failures()) {
        printf("test_soak: %ld check(s) FAILED\n", test_failures());
        return 1;
    }
    printf("test_soak: all checks passed\n");
    return 0;
}
