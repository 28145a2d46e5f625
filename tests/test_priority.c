/* test_priority.c - high-priority tasks (pool_submit_priority,
 * pool_scope_spawn_priority).
 *
 * Every task takes a ticket from one counter when it starts, so the order
 * in which tasks started is exact, and counts its runs, so a task lost or
 * run twice fails the count. The parts:
 *   first      one worker held by a gate while 300 normal tasks and then 40
 *              high ones are queued, from outside and from the worker
 *              itself: every high task starts before every normal one.
 *   spread     four workers held by gates, 2000 normal tasks and 40 high
 *              ones queued: once they are let go, at most three high tasks
 *              start after the first normal one. A worker searches for a
 *              normal task only when it found no high one left, so the
 *              high tasks not yet started then are those taken by the
 *              other three workers, one each. (Counted the other way, the
 *              normal tasks started before the last high one, the bound
 *              fails whenever the worker that took the last high task is
 *              descheduled before it starts it: a ThreadSanitizer run saw
 *              1074.)
 *   starve     one worker runs a high task that queues itself again
 *              forever; a normal task queued meanwhile still runs, after
 *              at most 61 more high tasks (the starvation rule).
 *   wait_starve the same while the only worker waits on a scope whose high
 *              task queues itself again (then a normal one, which lands on
 *              the worker's deque), a task spawned into that scope from
 *              outside (normal; high behind the deque's stream): the
 *              waiter looks at both injectors after 61 tasks in a row (it
 *              used to run either stream for ever).
 *   oldest     one worker: a normal task queues itself again on the
 *              worker's deque, on top of another one; that one still runs,
 *              within 61 runs of the stream, and within 122 while tasks
 *              keep coming from outside (the fairness tick takes the
 *              oldest task of the worker's own deque, in turns with the
 *              injector going first).
 *   scope      high spawns into a scope, from outside and from a task of
 *              the scope, mixed with normal ones: the wait runs each once,
 *              on 1 and 2 threads (on 1, the waiting worker takes the high
 *              ones itself: no spare is started for them); a cancelled
 *              scope skips high tasks too.
 *   deque      one worker runs a stream of high tasks while normal tasks
 *              keep arriving from outside: a normal task that a worker
 *              queued on its own deque still runs (the one normal search
 *              after a streak must not always go to the injector).
 *   waiters    nested scopes of mostly high tasks waited for on a pool of 2
 *              workers and 1 spare, from outside and from tasks, some
 *              cancelled: a waiter must find its scope's high tasks in
 *              their queue before it parks (with the spare in use, nobody
 *              else would run them): every wait returns, every task ran or
 *              was skipped once.
 *   destroy    a task running while its pool is destroyed spawns high tasks
 *              into its scope: accepted (a spawn of the pool's own tasks),
 *              and run.
 *   errors     EINVAL for a priority that is neither level, EBUSY for a
 *              task still queued, ECANCELED from a cancelled scope.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#include <stdlib.h>

typedef struct ticket_task {
    pool_task task;
    atomic_int runs;
    long ticket; /* when it started: 1, 2, ... in the order of starts */
    int high;
} ticket_task;

static atomic_long next_ticket, tickets_done;

static void ticket_run(pool_task *t) {
    ticket_task *k = (ticket_task *)(void *)t;
    k->ticket = atomic_fetch_add(&next_ticket, 1) + 1;
    atomic_fetch_add(&k->runs, 1);
    atomic_fetch_add(&tickets_done, 1); /* after the task's own writes: see wait_tickets */
}

static void reset_tickets(void) {
    atomic_store(&next_ticket, 0);
    atomic_store(&tickets_done, 0);
}

static ticket_task *ticket_tasks(long n, int high) {
    ticket_task *k = (ticket_task *)calloc((size_t)n, sizeof *k);
    long i;
    if (!k) exit(2);
    for (i = 0; i < n; i++) {
        k[i].task.run = ticket_run;
        k[i].high = high;
    }
    return k;
}

/* Every task ran once; returns the latest ticket of `tasks`, and the
   earliest in the place `earliest` points to. */
static long check_ran_once(ticket_task *tasks, long n, long *earliest) {
    long i, latest = 0;
    *earliest = 0;
    for (i = 0; i < n; i++) {
        CHECK_EQ_I64(atomic_load(&tasks[i].runs), 1);
        if (tasks[i].ticket > latest) latest = tasks[i].ticket;
        if (!*earliest || tasks[i].ticket < *earliest) *earliest = tasks[i].ticket;
    }
    return latest;
}

/* Waits until `want` tasks took a ticket and counted their run: the last
   ticket taken is not yet the last run counted. */
static void wait_tickets(long want) {
    while (atomic_load(&tickets_done) < want) test_sleep_us(100);
}

/* ---- first ---- */

#define FIRST_NORMAL 300
#define FIRST_HIGH 40 /* fewer than the starvation rule's 61 */

static ticket_task *first_normal, *first_high;

static void queue_normal_then_high(void *arg) {
    pool *p = (pool *)arg;
    long i;
    for (i = 0; i < FIRST_NORMAL; i++)
        CHECK_EQ_I64(pool_submit_priority(p, &first_normal[i].task, POOL_PRIORITY_NORMAL), 0);
    for (i = 0; i < FIRST_HIGH; i++)
        CHECK_EQ_I64(pool_submit_priority(p, &first_high[i].task, POOL_PRIORITY_HIGH), 0);
}

static void first_round(pool *p, int from_worker) {
    test_gate gate = TEST_GATE_INIT;
    long high_first, high_last, normal_first, normal_last;
    reset_tickets();
    first_normal = ticket_tasks(FIRST_NORMAL, 0);
    first_high = ticket_tasks(FIRST_HIGH, 1);
    if (from_worker) {
        /* The worker queues them itself (normal ones onto its deque), then
           returns to its loop. */
        pool_call(p, queue_normal_then_high, p);
    } else {
        CHECK_EQ_I64(pool_submit(p, &gate.task), 0);
        test_gate_wait_entered(&gate);
        queue_normal_then_high(p);
        test_gate_open(&gate);
    }
    wait_tickets(FIRST_NORMAL + FIRST_HIGH);
    high_last = check_ran_once(first_high, FIRST_HIGH, &high_first);
    normal_last = check_ran_once(first_normal, FIRST_NORMAL, &normal_first);
    CHECK_MSG(high_last < normal_first,
              "%s: high tasks started at tickets %ld..%ld, normal ones from %ld", "first",
              high_first, high_last, normal_first);
    CHECK_EQ_I64(high_last, FIRST_HIGH);
    (void)normal_last;
    free(first_normal);
    free(first_high);
}

static void part_first(void) {
    pool *p = test_pool_without_slots(1); /* pool_call runs on the worker */
    test_watchdog(30, "test_priority first");
    printf("  first: one busy worker, %d normal then %d high tasks: the high ones start first\n",
           FIRST_NORMAL, FIRST_HIGH);
    first_round(p, 0);
    first_round(p, 1);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- spread ---- */

#define SPREAD_THREADS 4
#define SPREAD_NORMAL 2000
#define SPREAD_HIGH 40

static void part_spread(void) {
    pool *p = test_pool(SPREAD_THREADS);
    test_gate gates[SPREAD_THREADS];
    ticket_task *normal = ticket_tasks(SPREAD_NORMAL, 0), *high = ticket_tasks(SPREAD_HIGH, 1);
    long i, high_first, normal_first, after = 0;
    test_watchdog(60, "test_priority spread");
    printf("  spread: %d busy workers, %d normal then %d high tasks: at most %d high ones "
           "start after the first normal one\n",
           SPREAD_THREADS, SPREAD_NORMAL, SPREAD_HIGH, SPREAD_THREADS - 1);
    reset_tickets();
    for (i = 0; i < SPREAD_THREADS; i++) {
        test_gate g = TEST_GATE_INIT;
        gates[i] = g;
        CHECK_EQ_I64(pool_submit(p, &gates[i].task), 0);
    }
    for (i = 0; i < SPREAD_THREADS; i++) test_gate_wait_entered(&gates[i]);
    for (i = 0; i < SPREAD_NORMAL; i++) CHECK_EQ_I64(pool_submit(p, &normal[i].task), 0);
    for (i = 0; i < SPREAD_HIGH; i++)
        CHECK_EQ_I64(pool_submit_priority(p, &high[i].task, POOL_PRIORITY_HIGH), 0);
    for (i = 0; i < SPREAD_THREADS; i++) test_gate_open(&gates[i]);
    wait_tickets(SPREAD_NORMAL + SPREAD_HIGH);
    (void)check_ran_once(high, SPREAD_HIGH, &high_first);
    (void)check_ran_once(normal, SPREAD_NORMAL, &normal_first);
    for (i = 0; i < SPREAD_HIGH; i++)
        if (high[i].ticket > normal_first) after++;
    CHECK_MSG(after <= SPREAD_THREADS - 1,
              "%ld high tasks started after the first normal one (ticket %ld)", after,
              normal_first);
    free(normal);
    free(high);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- starve ---- */

static pool *starve_pool;
static atomic_int starve_stop, normal_ran, starve_held, starve_submitted;
static atomic_long high_runs, high_runs_at_run;

#define STARVE_HOLD_AT 1000

/* The 1000th run holds the worker until main's normal task is queued, so
   that the bound below counts from the moment the task became visible, not
   from a read that main may be descheduled after. */
static void again_run(pool_task *t) {
    if (atomic_fetch_add(&high_runs, 1) + 1 == STARVE_HOLD_AT) {
        atomic_store(&starve_held, 1);
        while (!atomic_load(&starve_submitted)) test_sleep_us(100);
    }
    if (!atomic_load(&starve_stop))
        CHECK_EQ_I64(pool_submit_priority(starve_pool, t, POOL_PRIORITY_HIGH), 0);
}

static void normal_run(pool_task *t) {
    (void)t;
    atomic_store(&high_runs_at_run, atomic_load(&high_runs));
    atomic_store(&normal_ran, 1);
    atomic_store(&starve_stop, 1);
}

static void part_starve(void) {
    pool_task again = POOL_TASK_INIT(again_run), normal = POOL_TASK_INIT(normal_run);
    long after;
    starve_pool = test_pool(1);
    test_watchdog(30, "test_priority starve: a high task that queues itself again starved a "
                      "normal task");
    printf("  starve: a high task queues itself forever; a normal task still runs\n");
    CHECK_EQ_I64(pool_submit_priority(starve_pool, &again, POOL_PRIORITY_HIGH), 0);
    while (!atomic_load(&starve_held)) test_sleep_us(100);
    CHECK_EQ_I64(pool_submit(starve_pool, &normal), 0);
    atomic_store(&starve_submitted, 1);
    while (!atomic_load(&normal_ran)) test_sleep_us(100);
    /* The held run queues the next one; the worker's streak may be anywhere,
       so the rule lets at most 61 more high tasks run first. */
    after = atomic_load(&high_runs_at_run) - STARVE_HOLD_AT;
    CHECK_MSG(after <= 61 + 1, "%ld high tasks ran while the normal one waited", after);
    CHECK_EQ_I64(pool_destroy(starve_pool), 0);
}

/* ---- wait_starve ---- */

static pool_scope wait_starve_scope;
static atomic_int wait_starve_done;
static pool_priority wait_starve_priority; /* of the stream */

#define WAIT_STARVE_GIVE_UP 100000

/* The stream: a task of the scope the only worker waits for that queues
   itself again, at high priority (the high injector) or normal (the
   worker's deque). It gives up after WAIT_STARVE_GIVE_UP more runs, so
   that a starved task fails the bound instead of hanging the wait. */
static void wait_again_run(pool_task *t) {
    long runs = atomic_fetch_add(&high_runs, 1) + 1;
    if (runs == STARVE_HOLD_AT) {
        atomic_store(&starve_held, 1);
        while (!atomic_load(&starve_submitted)) test_sleep_us(100);
    }
    if (!atomic_load(&starve_stop) && runs < STARVE_HOLD_AT + WAIT_STARVE_GIVE_UP)
        CHECK_EQ_I64(pool_scope_spawn_priority(&wait_starve_scope, t, wait_starve_priority), 0);
}

static void wait_starve_waiter(pool_task *t) {
    static pool_task again = POOL_TASK_INIT(wait_again_run);
    (void)t;
    pool_scope_init(&wait_starve_scope, starve_pool);
    CHECK_EQ_I64(pool_scope_spawn_priority(&wait_starve_scope, &again, wait_starve_priority), 0);
    pool_scope_wait(&wait_starve_scope);
    atomic_store(&wait_starve_done, 1);
}

static const char *priority_name(pool_priority priority) {
    return priority == POOL_PRIORITY_HIGH ? "high" : "normal";
}

/* A stream at `stream`, and a task spawned into its scope from outside at
   `late` (starve's normal_run, which stops the stream). */
static void wait_starve_round(pool_priority stream, pool_priority late) {
    pool_task waiter = POOL_TASK_INIT(wait_starve_waiter), late_task = POOL_TASK_INIT(normal_run);
    long after;
    wait_starve_priority = stream;
    atomic_store(&wait_starve_done, 0);
    atomic_store(&high_runs, 0);
    atomic_store(&starve_stop, 0);
    atomic_store(&normal_ran, 0);
    atomic_store(&starve_held, 0);
    atomic_store(&starve_submitted, 0);
    starve_pool = test_pool(1);
    CHECK_EQ_I64(pool_submit(starve_pool, &waiter), 0);
    while (!atomic_load(&starve_held)) test_sleep_us(100);
    CHECK_EQ_I64(pool_scope_spawn_priority(&wait_starve_scope, &late_task, late), 0);
    atomic_store(&starve_submitted, 1);
    while (!atomic_load(&wait_starve_done)) test_sleep_us(100);
    CHECK_EQ_I64(atomic_load(&normal_ran), 1);
    /* The waiter looks at both injectors after 61 tasks in a row. */
    after = atomic_load(&high_runs_at_run) - STARVE_HOLD_AT;
    CHECK_MSG(after <= 61 + 1, "%ld tasks of a %s stream ran while a %s task waited", after,
              priority_name(stream), priority_name(late));
    CHECK_EQ_I64(pool_destroy(starve_pool), 0);
}

static void part_wait_starve(void) {
    test_watchdog(30, "test_priority wait_starve: a waiter's stream starved a task of its scope");
    printf("  wait_starve: the only worker waits on a scope whose high task, or a normal one\n"
           "               on its deque, queues itself; a task spawned into the scope from\n"
           "               outside, normal or high, still runs\n");
    wait_starve_round(POOL_PRIORITY_HIGH, POOL_PRIORITY_NORMAL);
    wait_starve_round(POOL_PRIORITY_NORMAL, POOL_PRIORITY_NORMAL);
    wait_starve_round(POOL_PRIORITY_NORMAL, POOL_PRIORITY_HIGH);
}

/* ---- oldest ---- */

static pool *oldest_pool;
static pool_task oldest_under, oldest_stream;
static atomic_int oldest_ran, oldest_started, oldest_poking;
static atomic_long stream_runs, stream_runs_at_under;

/* Queues itself again on its worker's deque until the task under it ran,
   giving up after WAIT_STARVE_GIVE_UP runs (a starved task then fails the
   bound instead of hanging). */
static void oldest_stream_run(pool_task *t) {
    long runs = atomic_fetch_add(&stream_runs, 1) + 1;
    while (runs == 1 && !atomic_load(&oldest_poking)) test_sleep_us(10); /* see oldest_round */
    if (!atomic_load(&oldest_ran) && runs < WAIT_STARVE_GIVE_UP)
        CHECK_EQ_I64(pool_submit(oldest_pool, t), 0);
}

static void oldest_under_run(pool_task *t) {
    (void)t;
    atomic_store(&stream_runs_at_under, atomic_load(&stream_runs));
    atomic_store(&oldest_ran, 1);
}

/* On the worker: the task under, then the stream on top of it. */
static void oldest_start(pool_task *t) {
    (void)t;
    CHECK_EQ_I64(pool_submit(oldest_pool, &oldest_under), 0);
    CHECK_EQ_I64(pool_submit(oldest_pool, &oldest_stream), 0);
    atomic_store(&oldest_started, 1);
}

static void poke_run(pool_task *t) { (void)t; }

#define OLDEST_POKES (1 << 18)

/* With `poke`, main keeps posting tasks meanwhile (each once: a task's
   queued mark is no synchronisation to resubmit it by), so that the
   injector is seldom empty when the worker looks for fairness; the
   stream's first run waits until the posts have begun. */
static void oldest_round(int poke) {
    pool_task start = POOL_TASK_INIT(oldest_start), poke_init = POOL_TASK_INIT(poke_run), *pokes;
    pool_task under = POOL_TASK_INIT(oldest_under_run), stream = POOL_TASK_INIT(oldest_stream_run);
    long runs;
    int i;
    pokes = (pool_task *)malloc(OLDEST_POKES * sizeof *pokes);
    CHECK(pokes != NULL);
    if (!pokes) return;
    for (i = 0; i < OLDEST_POKES; i++) pokes[i] = poke_init;
    oldest_under = under;
    oldest_stream = stream;
    atomic_store(&oldest_ran, 0);
    atomic_store(&oldest_started, 0);
    atomic_store(&oldest_poking, !poke);
    atomic_store(&stream_runs, 0);
    oldest_pool = test_pool(1);
    CHECK_EQ_I64(pool_submit(oldest_pool, &start), 0);
    while (!atomic_load(&oldest_started)) test_sleep_us(100);
    for (i = 0; !atomic_load(&oldest_ran); i++) {
        if (!poke || i >= OLDEST_POKES) {
            test_sleep_us(100);
            continue;
        }
        CHECK_EQ_I64(pool_submit(oldest_pool, &pokes[i]), 0);
        atomic_store(&oldest_poking, 1);
    }
    CHECK_EQ_I64(pool_destroy(oldest_pool), 0);
    free(pokes);
    /* The fairness tick takes the oldest after 61 searches, or 122 when
       the injector's turn came first. */
    runs = atomic_load(&stream_runs_at_under);
    CHECK_MSG(runs <= (poke ? 2 * 61 : 61) + 1,
              "the stream ran %ld times while the task under it waited%s", runs,
              poke ? " (tasks posted meanwhile)" : "");
}

static void part_oldest(void) {
    test_watchdog(30, "test_priority oldest: a stream on a worker's deque starved the task under "
                      "it");
    printf("  oldest: one worker, a task queues itself again on its deque; the task queued\n"
           "          under it still runs, also while tasks are posted from outside\n");
    oldest_round(0);
    oldest_round(1);
}

/* ---- scope ---- */

#define SCOPE_TASKS 400

static ticket_task *scope_tasks;
static pool_scope the_scope;

static void spawn_mixed(void *arg) {
    long i;
    (void)arg;
    for (i = 0; i < SCOPE_TASKS; i++)
        CHECK_EQ_I64(pool_scope_spawn_priority(&the_scope, &scope_tasks[i].task,
                                               i % 3 ? POOL_PRIORITY_NORMAL : POOL_PRIORITY_HIGH),
                     0);
}

static void spawn_and_wait(void *arg) {
    spawn_mixed(arg);
    pool_scope_wait(&the_scope);
}

static void scope_round(pool *p, int from_worker) {
    long earliest, i;
    reset_tickets();
    scope_tasks = ticket_tasks(SCOPE_TASKS, 0);
    pool_scope_init(&the_scope, p);
    if (from_worker) {
        pool_stats st;
        pool_call_on_worker(p, spawn_and_wait, NULL);
        /* The waiter found the scope's high tasks in their queue itself: it
           never parked for want of them, to leave them to a spare. */
        pool_stats_get(p, &st);
        if (pool_num_threads(p) == 1) CHECK_EQ_I64(st.spares_started, 0);
    } else {
        spawn_mixed(NULL);
        pool_scope_wait(&the_scope);
    }
    check_ran_once(scope_tasks, SCOPE_TASKS, &earliest);
    free(scope_tasks);
    /* cancelled: every task, high or not, is skipped or ran, once */
    scope_tasks = ticket_tasks(SCOPE_TASKS, 0);
    pool_scope_init(&the_scope, p);
    spawn_mixed(NULL);
    CHECK_EQ_I64(pool_scope_cancel(&the_scope), 0);
    CHECK_EQ_I64(pool_scope_spawn_priority(&the_scope, &scope_tasks[0].task, POOL_PRIORITY_HIGH),
                 ECANCELED);
    CHECK_EQ_I64(pool_scope_wait_status(&the_scope), ECANCELED);
    for (i = 0; i < SCOPE_TASKS; i++) CHECK(atomic_load(&scope_tasks[i].runs) <= 1);
    free(scope_tasks);
}

static void part_scope(void) {
    int threads;
    test_watchdog(60, "test_priority scope");
    printf("  scope: high and normal spawns into a scope, from outside and from a task, on 1 and "
           "2 threads\n");
    for (threads = 1; threads <= 2; threads++) {
        pool *p = test_pool(threads);
        scope_round(p, 0);
        scope_round(p, 1);
        CHECK_EQ_I64(pool_destroy(p), 0);
    }
}

/* ---- deque ---- */

static pool *deque_pool;
static atomic_int deque_stop, victim_ran, victim_queued;
static pool_task victim;

static void victim_run(pool_task *t) {
    (void)t;
    atomic_store(&victim_ran, 1);
}

/* Posted from outside; the first queues the victim, from a worker. */
static void plain_run(pool_task *t) {
    if (!atomic_exchange(&victim_queued, 1)) {
        victim.run = victim_run;
        CHECK_EQ_I64(pool_submit(deque_pool, &victim), 0); /* onto the worker's deque */
    }
    free(t);
}

static void stream_run(pool_task *t) {
    double end = test_now() + 8e-6; /* 61 of them outlast the 300 us between posts */
    int rc;
    while (test_now() < end) continue;
    if (atomic_load(&deque_stop)) return;
    /* ECANCELED only once main has stopped the stream and destroys the pool. */
    rc = pool_submit_priority(deque_pool, t, POOL_PRIORITY_HIGH);
    CHECK(rc == 0 || (rc == ECANCELED && atomic_load(&deque_stop)));
}

static void part_deque(void) {
    pool_task stream = POOL_TASK_INIT(stream_run);
    test_watchdog(30, "test_priority deque: a normal task on a worker's deque starved by a stream "
                      "of high tasks and normal posts from outside");
    printf("  deque: high stream plus normal posts: a task on the worker's deque still runs\n");
    deque_pool = test_pool(1);
    atomic_store(&victim_queued, 1);
    CHECK_EQ_I64(pool_submit_priority(deque_pool, &stream, POOL_PRIORITY_HIGH), 0);
    atomic_store(&victim_queued, 0); /* the next plain task queues the victim */
    while (!atomic_load(&victim_ran)) {
        pool_task *t = (pool_task *)calloc(1, sizeof *t);
        if (!t) exit(2);
        t->run = plain_run;
        CHECK_EQ_I64(pool_submit(deque_pool, t), 0);
        test_sleep_us(300);
    }
    atomic_store(&deque_stop, 1);
    CHECK_EQ_I64(pool_destroy(deque_pool), 0);
}

/* ---- waiters ---- */

#define NEST_MAX 64

typedef struct nest_task {
    pool_task task;
    atomic_int runs, skips;
    int depth;
    uint64_t seed;
} nest_task;

typedef struct nest {
    pool_scope scope;
    nest_task tasks[NEST_MAX];
    atomic_int count;
} nest;

static pool *nest_pool;

static void nest_skip(pool_task *t) { atomic_fetch_add(&((nest_task *)(void *)t)->skips, 1); }

static void nest_spawn(nest *n, uint64_t *rng, int depth);

static void nest_check(nest *n) {
    int i, count = atomic_load(&n->count);
    for (i = 0; i < count; i++)
        CHECK_EQ_I64(atomic_load(&n->tasks[i].runs) + atomic_load(&n->tasks[i].skips), 1);
}

/* Spawns 1..6 tasks into a new scope, cancels it one time in four, waits. */
static void nest_round(uint64_t seed, int depth) {
    nest *n = (nest *)calloc(1, sizeof *n);
    int k, m;
    if (!n) exit(2);
    pool_scope_init(&n->scope, nest_pool);
    CHECK_EQ_I64(pool_scope_on_cancel(&n->scope, nest_skip), 0);
    m = (int)(test_rand(&seed) % 6) + 1;
    for (k = 0; k < m; k++) nest_spawn(n, &seed, depth);
    if (test_rand(&seed) % 4 == 0) pool_scope_cancel(&n->scope);
    pool_scope_wait(&n->scope);
    nest_check(n);
    free(n);
}

static void nest_run(pool_task *t) {
    nest_task *k = (nest_task *)(void *)t;
    atomic_fetch_add(&k->runs, 1);
    if (k->depth < 3 && test_rand(&k->seed) % 2 == 0) nest_round(k->seed, k->depth + 1);
}

static void nest_spawn(nest *n, uint64_t *rng, int depth) {
    int i = atomic_fetch_add(&n->count, 1), rc;
    nest_task *k;
    if (i >= NEST_MAX) {
        atomic_fetch_sub(&n->count, 1);
        return;
    }
    k = &n->tasks[i];
    k->task.run = nest_run;
    k->depth = depth;
    k->seed = test_rand(rng) | 1;
    rc = pool_scope_spawn_priority(&n->scope, &k->task,
                                   test_rand(rng) % 3 ? POOL_PRIORITY_HIGH : POOL_PRIORITY_NORMAL);
    if (rc == ECANCELED) atomic_fetch_add(&k->skips, 1);
    else CHECK_EQ_I64(rc, 0);
}

static void nest_on_worker(void *arg) { nest_round(*(uint64_t *)arg, 0); }

static void *nest_caller(void *arg) {
    uint64_t rng = *(uint64_t *)arg;
    long i, rounds = test_scaled(1500, 150);
    for (i = 0; i < rounds; i++) {
        uint64_t seed = test_rand(&rng) | 1;
        if (i % 2) pool_call(nest_pool, nest_on_worker, &seed);
        else nest_round(seed, 0);
    }
    return NULL;
}

static void part_waiters(void) {
    pool_config cfg;
    pthread_t th[2];
    uint64_t seeds[2] = {0x1234567ull, 0x89ABCDEull};
    int i;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    cfg.max_spare_threads = 1;
    nest_pool = test_pool_cfg(&cfg);
    test_watchdog(120, "test_priority waiters: a waiter parked while its scope's high tasks were "
                       "queued, with no spare left to run them");
    printf("  waiters: nested scopes of high tasks on 2 workers and 1 spare\n");
    for (i = 0; i < 2; i++) CHECK_EQ_I64(pthread_create(&th[i], NULL, nest_caller, &seeds[i]), 0);
    for (i = 0; i < 2; i++) pthread_join(th[i], NULL);
    CHECK_EQ_I64(pool_destroy(nest_pool), 0);
}

/* ---- destroy ---- */

#define DESTROY_SPAWNS 50

static pool *dying;
static pool_task doomed_probe;
static atomic_int doomed_started, late_accepted, late_ran;

static void late_run(pool_task *t) {
    (void)t;
    atomic_fetch_add(&late_ran, 1);
}

static void doomed_probe_run(pool_task *t) { (void)t; }

static void doomed_run(pool_task *t) { /* runs while its pool is destroyed */
    static pool_task late[DESTROY_SPAWNS];
    pool_scope s;
    int i;
    (void)t;
    atomic_store(&doomed_started, 1);
    /* A detached submit is refused once the destroy has begun. */
    doomed_probe.run = doomed_probe_run;
    while (pool_submit(dying, &doomed_probe) != ECANCELED) test_sleep_us(100);
    pool_scope_init(&s, dying);
    for (i = 0; i < DESTROY_SPAWNS; i++) {
        late[i].run = late_run;
        if (pool_scope_spawn_priority(&s, &late[i], POOL_PRIORITY_HIGH) == 0)
            atomic_fetch_add(&late_accepted, 1);
    }
    pool_scope_wait(&s);
}

static void part_destroy(void) {
    pool_task doomed = POOL_TASK_INIT(doomed_run);
    test_watchdog(30, "test_priority destroy");
    printf("  destroy: a task of a pool being destroyed spawns high tasks into its scope\n");
    dying = test_pool(2);
    CHECK_EQ_I64(pool_submit(dying, &doomed), 0);
    while (!atomic_load(&doomed_started)) test_sleep_us(100);
    CHECK_EQ_I64(pool_destroy(dying), 0);
    CHECK_EQ_I64(atomic_load(&late_accepted), DESTROY_SPAWNS);
    CHECK_EQ_I64(atomic_load(&late_ran), DESTROY_SPAWNS);
}

/* ---- errors ---- */

static void part_errors(void) {
    pool *p = test_pool(1);
    test_gate gate = TEST_GATE_INIT;
    ticket_task *k = ticket_tasks(1, 1);
    pool_scope s;
    test_watchdog(30, "test_priority errors");
    printf("  errors: EINVAL, EBUSY\n");
    reset_tickets();
    pool_scope_init(&s, p);
    CHECK_EQ_I64(pool_submit_priority(p, &k->task, (pool_priority)2), EINVAL);
    CHECK_EQ_I64(pool_submit_priority(p, &k->task, (pool_priority)-1), EINVAL);
    CHECK_EQ_I64(pool_submit_priority(p, NULL, POOL_PRIORITY_HIGH), EINVAL);
    CHECK_EQ_I64(pool_scope_spawn_priority(&s, &k->task, (pool_priority)2), EINVAL);
    CHECK_EQ_I64(pool_scope_spawn_priority(NULL, &k->task, POOL_PRIORITY_HIGH), EINVAL);
    CHECK_EQ_I64(pool_submit(p, &gate.task), 0);
    test_gate_wait_entered(&gate);
    CHECK_EQ_I64(pool_submit_priority(p, &k->task, POOL_PRIORITY_HIGH), 0);
    CHECK_EQ_I64(pool_submit_priority(p, &k->task, POOL_PRIORITY_HIGH), EBUSY);
    CHECK_EQ_I64(pool_scope_spawn_priority(&s, &k->task, POOL_PRIORITY_HIGH), EBUSY);
    test_gate_open(&gate);
    wait_tickets(1);
    CHECK_EQ_I64(atomic_load(&k->runs), 1);
    pool_scope_wait(&s);
    free(k);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

static const test_part parts[] = {
    {"first", part_first},     {"spread", part_spread},
    {"starve", part_starve},   {"wait_starve", part_wait_starve},
    {"oldest", part_oldest},   {"scope", part_scope},
    {"deque", part_deque},     {"waiters", part_waiters},
    {"destroy", part_destroy}, {"errors", part_errors},
};

int main(int argc, char **argv) {
    test_run_parts(argc, argv, parts, sizeof parts / sizeof parts[0]);
    return test_finish("test_priority");
}
