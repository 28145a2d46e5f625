/* test_pinned.c - tasks pinned to a worker (pool_submit_pinned) and to a
 * thread outside the pool (pool_inbox_*).
 *
 * A pinned task records the worker it ran on (pool_worker_index) or, for
 * an inbox, whether it ran on the inbox's owner, and counts its runs, so
 * every check is exact: each task ran once, where it was sent. The parts:
 *   where      4 workers, 4000 tasks pinned round-robin from outside and
 *              from tasks of the pool: each ran once, on its worker.
 *   sleepers   16 workers on 2 CPUs: one task at a time pinned to a
 *              random worker, after a random pause that lands the post in
 *              every step of that worker's way to sleep: each runs within
 *              5 s (a lost wake-up fails the round, not just the run).
 *   first      1 worker held by a task, 300 normal tasks then a pinned one
 *              queued: the pinned one runs first when the worker is free.
 *   starve     a task that pins itself again forever: a normal task still
 *              runs, after at most 62 pinned runs.
 *   starve_high a high-priority task that queues itself again forever: a
 *              pinned task still runs.
 *   toggle     tasks pinned one at a time to random workers of 4 while
 *              another thread changes the active count at random: each
 *              runs within 5 s, on its worker.
 *   waiting    a task on worker 0 pins a task to worker 0, then waits in
 *              a scope for a task held on worker 1: the pinned task runs
 *              only after the wait ended, on worker 0, and nothing
 *              deadlocks.
 *   retired    4 workers lowered to 1: tasks pinned to stopped workers run
 *              there, and what they submit runs too; a pool made with 1
 *              active of 4 starts worker 3 for a task pinned to it.
 *   destroy    tasks pinned to every worker, then pool_destroy at once:
 *              each ran once, on its worker; a pin from a task during the
 *              destroy is refused (ECANCELED).
 *   inbox      the main thread's inbox: 4 workers post 20000 tasks from
 *              their tasks; main waits on the handle (poll, or
 *              pool_inbox_wait on Windows) and runs them: each ran once,
 *              on main, each worker's in the order it posted them.
 *   inbox_rules a task that posts itself again runs once per
 *              pool_inbox_run; EPERM from another thread; EBUSY twice
 *              posted or destroyed with tasks waiting; ETIMEDOUT.
 *   errors     pool_submit_pinned: EINVAL for a bad index or task, EBUSY.
 *   inbox_owner_ended
 *              an inbox whose owner ended: a thread started after it (which
 *              may get the ended thread's memory) and main get EPERM.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <poll.h>
#endif

typedef struct pin_task {
    pool_task task;
    atomic_int runs;
    int want;   /* the worker it is pinned to */
    int worker; /* where it ran */
} pin_task;

static void pin_run(pool_task *t) {
    pin_task *k = (pin_task *)(void *)t;
    k->worker = pool_worker_index();
    atomic_fetch_add(&k->runs, 1); /* last: a waiter that sees it sees the rest */
}

static pin_task *pin_tasks(long n, int workers) {
    pin_task *k = (pin_task *)calloc((size_t)n, sizeof *k);
    long i;
    if (!k) exit(2);
    for (i = 0; i < n; i++) {
        k[i].task.run = pin_run;
        k[i].want = (int)(i % workers);
    }
    return k;
}

static void wait_runs(pin_task *k, long n) {
    long i;
    for (i = 0; i < n; i++)
        while (!atomic_load(&k[i].runs)) test_sleep_us(100);
}

/* Each ran once, on the worker it was pinned to. */
static void check_pinned(pin_task *k, long n) {
    long i;
    for (i = 0; i < n; i++) {
        CHECK_EQ_I64(atomic_load(&k[i].runs), 1);
        CHECK_EQ_I64(k[i].worker, k[i].want);
    }
}

/* ---- where ---- */

#define WHERE_WORKERS 4
#define WHERE_TASKS 4000

static pool *where_pool;
static pin_task *where_tasks;

/* A task of the pool pins the second half. */
static void pin_second_half(pool_task *t) {
    long i;
    (void)t;
    for (i = WHERE_TASKS / 2; i < WHERE_TASKS; i++)
        CHECK_EQ_I64(pool_submit_pinned(where_pool, where_tasks[i].want, &where_tasks[i].task), 0);
}

static void part_where(void) {
    pool_task from_task = POOL_TASK_INIT(pin_second_half);
    long i;
    test_watchdog(60, "test_pinned where: a pinned task never ran");
    printf("  where: %d tasks pinned round-robin to %d workers, from outside and from a task\n",
           WHERE_TASKS, WHERE_WORKERS);
    where_pool = test_pool(WHERE_WORKERS);
    where_tasks = pin_tasks(WHERE_TASKS, WHERE_WORKERS);
    for (i = 0; i < WHERE_TASKS / 2; i++)
        CHECK_EQ_I64(pool_submit_pinned(where_pool, where_tasks[i].want, &where_tasks[i].task), 0);
    CHECK_EQ_I64(pool_submit(where_pool, &from_task), 0);
    wait_runs(where_tasks, WHERE_TASKS);
    check_pinned(where_tasks, WHERE_TASKS);
    CHECK_EQ_I64(pool_destroy(where_pool), 0);
    free(where_tasks);
}

/* ---- sleepers ---- */

#define SLEEPERS_WORKERS 16

static void part_sleepers(void) {
    long rounds = test_scaled(3000, 200), r;
    uint64_t rng = 42;
    pool *p = test_pool(SLEEPERS_WORKERS);
    pin_task *k = pin_tasks(rounds, SLEEPERS_WORKERS), warm[SLEEPERS_WORKERS];
    int i;
    test_watchdog(300, "test_pinned sleepers");
    printf("  sleepers: %ld tasks, one at a time, pinned to random workers of %d\n", rounds,
           SLEEPERS_WORKERS);
    /* Every worker started, so that posts find them on their way to sleep. */
    memset(warm, 0, sizeof warm);
    for (i = 0; i < SLEEPERS_WORKERS; i++) {
        warm[i].task.run = pin_run;
        warm[i].want = i;
        CHECK_EQ_I64(pool_submit_pinned(p, i, &warm[i].task), 0);
    }
    wait_runs(warm, SLEEPERS_WORKERS);
    check_pinned(warm, SLEEPERS_WORKERS);
    for (r = 0; r < rounds && !test_failures(); r++) {
        double deadline;
        k[r].want = (int)(test_rand(&rng) % SLEEPERS_WORKERS);
        test_sleep_us((long)(test_rand(&rng) % 3000)); /* 0 to 3 ms: busy, searching, asleep */
        CHECK_EQ_I64(pool_submit_pinned(p, k[r].want, &k[r].task), 0);
        deadline = test_now() + 5;
        while (!atomic_load(&k[r].runs) && test_now() < deadline) test_sleep_us(50);
        CHECK_MSG(atomic_load(&k[r].runs) == 1,
                  "round %ld: the task pinned to worker %d did not run in 5 s", r, k[r].want);
        CHECK_EQ_I64(k[r].worker, k[r].want);
    }
    CHECK_EQ_I64(pool_destroy(p), 0);
    free(k);
}

/* ---- first ---- */

#define FIRST_NORMAL 300

static atomic_long first_ticket;

typedef struct ticket_task {
    pool_task task;
    long ticket;
    atomic_int runs;
} ticket_task;

static void ticket_run(pool_task *t) {
    ticket_task *k = (ticket_task *)(void *)t;
    k->ticket = atomic_fetch_add(&first_ticket, 1);
    atomic_fetch_add(&k->runs, 1);
}

static void part_first(void) {
    test_gate gate = TEST_GATE_INIT;
    ticket_task *normal = (ticket_task *)calloc(FIRST_NORMAL, sizeof *normal), pinned;
    pool *p = test_pool(1);
    long i;
    test_watchdog(30, "test_pinned first");
    printf("  first: a held worker, %d normal tasks then a pinned one: the pinned one runs first\n",
           FIRST_NORMAL);
    if (!normal) exit(2);
    memset(&pinned, 0, sizeof pinned);
    pinned.task.run = ticket_run;
    CHECK_EQ_I64(pool_submit(p, &gate.task), 0);
    test_gate_wait_entered(&gate);
    for (i = 0; i < FIRST_NORMAL; i++) {
        normal[i].task.run = ticket_run;
        CHECK_EQ_I64(pool_submit(p, &normal[i].task), 0);
    }
    CHECK_EQ_I64(pool_submit_pinned(p, 0, &pinned.task), 0);
    test_gate_open(&gate);
    for (i = 0; i < FIRST_NORMAL; i++)
        while (!atomic_load(&normal[i].runs)) test_sleep_us(100);
    while (!atomic_load(&pinned.runs)) test_sleep_us(100);
    CHECK_EQ_I64(pinned.ticket, 0);
    for (i = 0; i < FIRST_NORMAL; i++) CHECK_EQ_I64(atomic_load(&normal[i].runs), 1);
    CHECK_EQ_I64(atomic_load(&pinned.runs), 1);
    CHECK_EQ_I64(pool_destroy(p), 0);
    free(normal);
}

/* ---- starve ---- */

#define STARVE_HOLD_AT 1000

static pool *starve_pool;
static atomic_int starve_stop, starve_held, starve_submitted, starve_normal_ran;
static atomic_long pinned_runs, pinned_runs_at_normal;

/* The 1000th run holds the worker until main's normal task is queued, so
   that the bound counts from the moment that task became visible. */
static void repin_run(pool_task *t) {
    if (atomic_fetch_add(&pinned_runs, 1) + 1 == STARVE_HOLD_AT) {
        atomic_store(&starve_held, 1);
        while (!atomic_load(&starve_submitted)) test_sleep_us(100);
    }
    if (!atomic_load(&starve_stop)) CHECK_EQ_I64(pool_submit_pinned(starve_pool, 0, t), 0);
}

static void starve_normal_run(pool_task *t) {
    (void)t;
    atomic_store(&pinned_runs_at_normal, atomic_load(&pinned_runs));
    atomic_store(&starve_normal_ran, 1);
    atomic_store(&starve_stop, 1);
}

static void part_starve(void) {
    pool_task again = POOL_TASK_INIT(repin_run), normal = POOL_TASK_INIT(starve_normal_run);
    long after;
    starve_pool = test_pool(1);
    test_watchdog(30, "test_pinned starve: a task that pins itself again starved a normal task");
    printf("  starve: a task pins itself again forever; a normal task still runs\n");
    CHECK_EQ_I64(pool_submit_pinned(starve_pool, 0, &again), 0);
    while (!atomic_load(&starve_held)) test_sleep_us(100);
    CHECK_EQ_I64(pool_submit(starve_pool, &normal), 0);
    atomic_store(&starve_submitted, 1);
    while (!atomic_load(&starve_normal_ran)) test_sleep_us(100);
    after = atomic_load(&pinned_runs_at_normal) - STARVE_HOLD_AT;
    CHECK_MSG(after <= 61 + 1, "%ld pinned tasks ran while the normal one waited", after);
    CHECK_EQ_I64(pool_destroy(starve_pool), 0);
}

/* ---- starve_high ---- */

static pool *starve_high_pool;
static atomic_int high_stop, pinned_after_high_ran;

static void high_again(pool_task *t) {
    if (!atomic_load(&high_stop))
        CHECK_EQ_I64(pool_submit_priority(starve_high_pool, t, POOL_PRIORITY_HIGH), 0);
}

static void pinned_among_high(pool_task *t) {
    (void)t;
    atomic_store(&pinned_after_high_ran, 1);
    atomic_store(&high_stop, 1);
}

static void part_starve_high(void) {
    pool_task high = POOL_TASK_INIT(high_again), pinned = POOL_TASK_INIT(pinned_among_high);
    starve_high_pool = test_pool(1);
    test_watchdog(30, "test_pinned starve_high: a stream of high tasks starved a pinned task");
    printf("  starve_high: a high task queues itself forever; a pinned task still runs\n");
    CHECK_EQ_I64(pool_submit_priority(starve_high_pool, &high, POOL_PRIORITY_HIGH), 0);
    test_sleep_us(20000);
    CHECK_EQ_I64(pool_submit_pinned(starve_high_pool, 0, &pinned), 0);
    while (!atomic_load(&pinned_after_high_ran)) test_sleep_us(100);
    CHECK_EQ_I64(pool_destroy(starve_high_pool), 0);
}

/* ---- toggle ---- */

#define TOGGLE_WORKERS 4

static pool *toggle_pool;
static atomic_int toggle_stop;

/* Changes the active count at random until told to stop. */
static void *toggler(void *arg) {
    uint64_t rng = 7;
    (void)arg;
    while (!atomic_load(&toggle_stop)) {
        CHECK_EQ_I64(
            pool_set_active_threads(toggle_pool, 1 + (int)(test_rand(&rng) % TOGGLE_WORKERS)), 0);
        test_sleep_us((long)(test_rand(&rng) % 500));
    }
    return NULL;
}

static void part_toggle(void) {
    long rounds = test_scaled(2000, 100), r;
    uint64_t rng = 3;
    pin_task *k = pin_tasks(rounds, TOGGLE_WORKERS);
    pthread_t thread;
    test_watchdog(300, "test_pinned toggle");
    printf("  toggle: %ld tasks pinned one at a time while the active count changes at random\n",
           rounds);
    toggle_pool = test_pool(TOGGLE_WORKERS);
    CHECK(pthread_create(&thread, NULL, toggler, NULL) == 0);
    for (r = 0; r < rounds && !test_failures(); r++) {
        double deadline;
        k[r].want = (int)(test_rand(&rng) % TOGGLE_WORKERS);
        test_sleep_us((long)(test_rand(&rng) % 300));
        CHECK_EQ_I64(pool_submit_pinned(toggle_pool, k[r].want, &k[r].task), 0);
        deadline = test_now() + 5;
        while (!atomic_load(&k[r].runs) && test_now() < deadline) test_sleep_us(20);
        CHECK_MSG(atomic_load(&k[r].runs) == 1,
                  "round %ld: the task pinned to worker %d did not run in 5 s", r, k[r].want);
        CHECK_EQ_I64(k[r].worker, k[r].want);
    }
    atomic_store(&toggle_stop, 1);
    pthread_join(thread, NULL);
    CHECK_EQ_I64(pool_destroy(toggle_pool), 0);
    free(k);
}

/* ---- waiting ---- */

static pool *waiting_pool;
static test_gate waiting_gate = TEST_GATE_INIT;
static atomic_int waiting_in_wait, waiting_wait_ended, waiting_seen_end;
static pin_task waiting_pinned;

static void waiting_pinned_run(pool_task *t) {
    atomic_store(&waiting_seen_end, atomic_load(&waiting_wait_ended));
    pin_run(t);
}

/* Runs on worker 0: pins a task to its own worker, then waits in a scope
   for the gate, which worker 1 steals from worker 0's deque and holds, so
   that worker 0 waits with a pinned task queued. */
static void wait_for_gate(pool_task *t) {
    pool_scope s;
    (void)t;
    CHECK_EQ_I64(pool_submit_pinned(waiting_pool, 0, &waiting_pinned.task), 0);
    pool_scope_init(&s, waiting_pool);
    CHECK_EQ_I64(pool_scope_spawn(&s, &waiting_gate.task), 0);
    test_gate_wait_entered(&waiting_gate);
    atomic_store(&waiting_in_wait, 1);
    pool_scope_wait(&s);
    atomic_store(&waiting_wait_ended, 1);
}

static void part_waiting(void) {
    pool_task waiter = POOL_TASK_INIT(wait_for_gate);
    double until;
    test_watchdog(30, "test_pinned waiting: a task pinned to a waiting worker deadlocked");
    printf("  waiting: a task pinned to a worker that waits in a scope runs when the wait ends\n");
    waiting_pool = test_pool(2);
    waiting_pinned.task.run = waiting_pinned_run;
    waiting_pinned.want = 0;
    CHECK_EQ_I64(pool_submit_pinned(waiting_pool, 0, &waiter), 0);
    while (!atomic_load(&waiting_in_wait)) test_sleep_us(100);
    until = test_now() + 0.05;
    while (test_now() < until) {
        CHECK_EQ_I64(atomic_load(&waiting_pinned.runs), 0);
        test_sleep_us(1000);
    }
    test_gate_open(&waiting_gate);
    while (!atomic_load(&waiting_pinned.runs)) test_sleep_us(100);
    CHECK_EQ_I64(atomic_load(&waiting_seen_end), 1);
    check_pinned(&waiting_pinned, 1);
    CHECK_EQ_I64(pool_destroy(waiting_pool), 0);
}

/* ---- retired ---- */

#define RETIRED_WORKERS 4

static pool *retired_pool;
static atomic_int retired_child_runs;

static void count_child(pool_task *t) {
    (void)t;
    atomic_fetch_add(&retired_child_runs, 1);
}

static pool_task retired_children[RETIRED_WORKERS];

/* Pinned to a stopped worker: records where it ran and queues a normal
   task onto that worker's deque, which must not stay there. */
static void pin_and_submit(pool_task *t) {
    pin_task *k = (pin_task *)(void *)t;
    retired_children[k->want].run = count_child;
    CHECK_EQ_I64(pool_submit(retired_pool, &retired_children[k->want]), 0);
    pin_run(t);
}

static void wait_retired(pool *p, uint64_t n) {
    pool_stats s;
    do {
        test_sleep_us(200);
        pool_stats_get(p, &s);
    } while (s.threads_retired != n);
}

static void part_retired(void) {
    pin_task k[RETIRED_WORKERS], late;
    pool_config cfg;
    int i;
    test_watchdog(60, "test_pinned retired: a task pinned to a stopped worker never ran");
    printf("  retired: tasks pinned to stopped workers run there; a worker not started starts\n");
    retired_pool = test_pool(RETIRED_WORKERS);
    memset(k, 0, sizeof k);
    for (i = 0; i < RETIRED_WORKERS; i++) { /* every worker started */
        k[i].task.run = pin_run;
        k[i].want = i;
        CHECK_EQ_I64(pool_submit_pinned(retired_pool, i, &k[i].task), 0);
    }
    wait_runs(k, RETIRED_WORKERS);
    CHECK_EQ_I64(pool_set_active_threads(retired_pool, 1), 0);
    wait_retired(retired_pool, RETIRED_WORKERS - 1);
    memset(k, 0, sizeof k);
    for (i = 1; i < RETIRED_WORKERS; i++) {
        k[i].task.run = pin_and_submit;
        k[i].want = i;
        CHECK_EQ_I64(pool_submit_pinned(retired_pool, i, &k[i].task), 0);
    }
    wait_runs(k + 1, RETIRED_WORKERS - 1);
    check_pinned(k + 1, RETIRED_WORKERS - 1);
    while (atomic_load(&retired_child_runs) < RETIRED_WORKERS - 1) test_sleep_us(100);
    CHECK_EQ_I64(pool_destroy(retired_pool), 0);
    CHECK_EQ_I64(atomic_load(&retired_child_runs), RETIRED_WORKERS - 1);

    /* 1 active of 4 from the start: worker 3 starts for its pinned task. */
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = RETIRED_WORKERS;
    cfg.active_threads = 1;
    retired_pool = test_pool_cfg(&cfg);
    memset(&late, 0, sizeof late);
    late.task.run = pin_run;
    late.want = RETIRED_WORKERS - 1;
    CHECK_EQ_I64(pool_submit_pinned(retired_pool, late.want, &late.task), 0);
    wait_runs(&late, 1);
    check_pinned(&late, 1);
    CHECK_EQ_I64(pool_destroy(retired_pool), 0);
}

/* ---- destroy ---- */

#define DESTROY_WORKERS 4
#define DESTROY_TASKS 2000

static pool *destroy_pool;
static atomic_int destroy_refused;
static pin_task destroy_other;

/* Pins another task, again each time it has run, until the pool's
   destroy refuses it: main calls pool_destroy while this runs, and the
   destroy waits for it. */
static void pin_during_destroy(pool_task *t) {
    int err, accepted = 0;
    (void)t;
    destroy_other.task.run = pin_run;
    destroy_other.want = 1;
    while ((err = pool_submit_pinned(destroy_pool, 1, &destroy_other.task)) == 0) {
        accepted++;
        while (atomic_load(&destroy_other.runs) < accepted) test_sleep_us(1000);
    }
    atomic_store(&destroy_refused, err);
}

static void part_destroy(void) {
    pin_task *k = pin_tasks(DESTROY_TASKS, DESTROY_WORKERS);
    pool_task late = POOL_TASK_INIT(pin_during_destroy);
    long i;
    test_watchdog(60, "test_pinned destroy");
    printf("  destroy: %d pinned tasks, then pool_destroy at once: each ran on its worker\n",
           DESTROY_TASKS);
    destroy_pool = test_pool(DESTROY_WORKERS);
    CHECK_EQ_I64(pool_submit_pinned(destroy_pool, 0, &late), 0);
    for (i = 0; i < DESTROY_TASKS; i++)
        CHECK_EQ_I64(pool_submit_pinned(destroy_pool, k[i].want, &k[i].task), 0);
    CHECK_EQ_I64(pool_destroy(destroy_pool), 0);
    check_pinned(k, DESTROY_TASKS);
    CHECK_EQ_I64(atomic_load(&destroy_refused), ECANCELED);
    if (atomic_load(&destroy_other.runs)) CHECK_EQ_I64(destroy_other.worker, 1);
    free(k);
}

/* ---- inbox ---- */

#define INBOX_POSTERS 4
#define INBOX_EACH 5000

typedef struct inbox_task {
    pool_task task;
    atomic_int runs;
    int on_main;
    long order; /* when main ran it, among its poster's tasks */
} inbox_task;

static pool_inbox main_box;
static inbox_task *inbox_tasks;
static long inbox_ran_of[INBOX_POSTERS];
static pthread_t main_thread;

static void inbox_run(pool_task *t) {
    inbox_task *k = (inbox_task *)(void *)t;
    long poster = (k - inbox_tasks) / INBOX_EACH;
    k->on_main = pthread_equal(pthread_self(), main_thread) != 0;
    k->order = inbox_ran_of[poster]++;
    atomic_fetch_add(&k->runs, 1);
}

/* A task of the pool: posts its share, in order, pausing now and then so
   that main finds the inbox empty and waits again. */
static void post_share(void *arg) {
    long poster = (long)(intptr_t)arg, i;
    for (i = 0; i < INBOX_EACH; i++) {
        CHECK_EQ_I64(pool_inbox_post(&main_box, &inbox_tasks[poster * INBOX_EACH + i].task), 0);
        if (i % 500 == 0) test_sleep_us(1000);
    }
}

typedef struct poster_task {
    pool_task task;
    long poster;
} poster_task;

static void poster_run(pool_task *t) {
    post_share((void *)(intptr_t)((poster_task *)(void *)t)->poster);
}

/* Blocks until the inbox's handle is readable: poll() where there is one,
   as an event loop would; pool_inbox_wait on Windows. */
static int wait_readable(int timeout_ms) {
#ifdef _WIN32
    return pool_inbox_wait(&main_box, timeout_ms);
#else
    struct pollfd fd;
    int n;
    fd.fd = (int)pool_inbox_handle(&main_box);
    fd.events = POLLIN;
    while ((n = poll(&fd, 1, timeout_ms)) < 0 && errno == EINTR) continue;
    return n > 0 ? 0 : ETIMEDOUT;
#endif
}

static void inbox_round(pool *p, int use_wait) {
    poster_task posters[INBOX_POSTERS];
    long total = 0, i;
    size_t ran;
    memset(inbox_tasks, 0, (size_t)INBOX_POSTERS * INBOX_EACH * sizeof *inbox_tasks);
    memset(inbox_ran_of, 0, sizeof inbox_ran_of);
    memset(posters, 0, sizeof posters);
    for (i = 0; i < INBOX_POSTERS * INBOX_EACH; i++) inbox_tasks[i].task.run = inbox_run;
    for (i = 0; i < INBOX_POSTERS; i++) {
        posters[i].task.run = poster_run;
        posters[i].poster = i;
        CHECK_EQ_I64(pool_submit_pinned(p, (int)i, &posters[i].task), 0);
    }
    while (total < INBOX_POSTERS * INBOX_EACH && !test_failures()) {
        int err = use_wait ? pool_inbox_wait(&main_box, 5000) : wait_readable(5000);
        CHECK_MSG(err == 0, "the inbox's handle stayed unreadable for 5 s with %ld of %d tasks run",
                  total, INBOX_POSTERS * INBOX_EACH);
        CHECK_EQ_I64(pool_inbox_run(&main_box, &ran), 0);
        total += (long)ran;
    }
    for (i = 0; i < INBOX_POSTERS * INBOX_EACH; i++) {
        CHECK_EQ_I64(atomic_load(&inbox_tasks[i].runs), 1);
        CHECK_EQ_I64(inbox_tasks[i].on_main, 1);
        CHECK_EQ_I64(inbox_tasks[i].order, i % INBOX_EACH);
    }
}

static void part_inbox(void) {
    pool *p = test_pool(INBOX_POSTERS);
    test_watchdog(120, "test_pinned inbox");
    printf("  inbox: %d workers post %d tasks to main's inbox; main waits on its handle\n",
           INBOX_POSTERS, INBOX_POSTERS * INBOX_EACH);
    main_thread = pthread_self();
    inbox_tasks = (inbox_task *)calloc((size_t)INBOX_POSTERS * INBOX_EACH, sizeof *inbox_tasks);
    if (!inbox_tasks) exit(2);
    CHECK_EQ_I64(pool_inbox_init(&main_box), 0);
    inbox_round(p, 0);
    inbox_round(p, 1);
    CHECK_EQ_I64(pool_inbox_destroy(&main_box), 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
    free(inbox_tasks);
}

/* ---- inbox_rules ---- */

static pool_inbox rules_box;
static atomic_int self_runs, self_repost, plain_runs, other_thread_errors;

static void count_plain(pool_task *t) {
    (void)t;
    atomic_fetch_add(&plain_runs, 1);
}

static void post_self(pool_task *t) {
    atomic_fetch_add(&self_runs, 1);
    if (atomic_load(&self_repost)) CHECK_EQ_I64(pool_inbox_post(&rules_box, t), 0);
}

static void try_from_worker(void *arg) {
    size_t ran = 7;
    (void)arg;
    if (pool_inbox_run(&rules_box, &ran) == EPERM && ran == 0)
        atomic_fetch_add(&other_thread_errors, 1);
    if (pool_inbox_wait(&rules_box, 0) == EPERM) atomic_fetch_add(&other_thread_errors, 1);
}

static void part_inbox_rules(void) {
    pool_task self = POOL_TASK_INIT(post_self), plain = POOL_TASK_INIT(count_plain);
    pool *p = test_pool(1);
    size_t ran;
    test_watchdog(30, "test_pinned inbox_rules");
    printf("  inbox_rules: a task that posts itself runs once per call; EPERM, EBUSY, ETIMEDOUT\n");
    CHECK_EQ_I64(pool_inbox_init(&rules_box), 0);
    CHECK_EQ_I64(pool_inbox_wait(&rules_box, 20), ETIMEDOUT);
    CHECK_EQ_I64(pool_inbox_run(&rules_box, &ran), 0);
    CHECK_EQ_I64(ran, 0);
    atomic_store(&self_repost, 1);
    CHECK_EQ_I64(pool_inbox_post(&rules_box, &self), 0);
    CHECK_EQ_I64(pool_inbox_post(&rules_box, &self), EBUSY);
    CHECK_EQ_I64(pool_inbox_wait(&rules_box, -1), 0);
    CHECK_EQ_I64(pool_inbox_run(&rules_box, &ran), 0);
    CHECK_EQ_I64(ran, 1);
    CHECK_EQ_I64(pool_inbox_run(&rules_box, NULL), 0);
    CHECK_EQ_I64(atomic_load(&self_runs), 2);
    pool_call_on_worker(p, try_from_worker, NULL);
    CHECK_EQ_I64(atomic_load(&other_thread_errors), 2);
    CHECK_EQ_I64(atomic_load(&self_runs), 2);
    CHECK_EQ_I64(pool_inbox_destroy(&rules_box), EBUSY); /* `self` is posted again */
    atomic_store(&self_repost, 0);
    CHECK_EQ_I64(pool_inbox_post(&rules_box, &plain), 0);
    CHECK_EQ_I64(pool_inbox_wait(&rules_box, 0), 0);
    CHECK_EQ_I64(pool_inbox_run(&rules_box, &ran), 0);
    CHECK_EQ_I64(ran, 2);
    CHECK_EQ_I64(atomic_load(&self_runs), 3);
    CHECK_EQ_I64(atomic_load(&plain_runs), 1);
    CHECK_EQ_I64(pool_inbox_wait(&rules_box, 0), ETIMEDOUT);
    CHECK_EQ_I64(pool_inbox_destroy(&rules_box), 0);
    CHECK_EQ_I64(pool_inbox_init(NULL), EINVAL);
    CHECK_EQ_I64(pool_inbox_post(NULL, &plain), EINVAL);
    CHECK_EQ_I64(pool_inbox_run(NULL, &ran), EINVAL);
    CHECK_EQ_I64(pool_inbox_wait(NULL, 0), EINVAL);
    CHECK_EQ_I64(pool_inbox_destroy(NULL), EINVAL);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* An inbox's owner that ended owns nothing more: a thread started after
   it, which the C library may give the ended thread's stack and
   thread-local memory, is not the owner. */
static pool_inbox ended_owners_box;

static void *make_box_and_end(void *arg) {
    (void)arg;
    CHECK_EQ_I64(pool_inbox_init(&ended_owners_box), 0);
    return NULL;
}

static void *try_after_owner_ended(void *arg) {
    size_t ran = 7;
    (void)arg;
    CHECK_EQ_I64(pool_inbox_wait(&ended_owners_box, 0), EPERM);
    CHECK_EQ_I64(pool_inbox_run(&ended_owners_box, &ran), EPERM);
    CHECK_EQ_I64(ran, 0);
    return NULL;
}

static void part_inbox_owner_ended(void) {
    pthread_t th;
    int round;
    test_watchdog(30, "test_pinned inbox_owner_ended");
    printf("  inbox_owner_ended: no thread started after the owner ended may run its inbox\n");
    for (round = 0; round < 8; round++) {
        CHECK(pthread_create(&th, NULL, make_box_and_end, NULL) == 0);
        pthread_join(th, NULL);
        CHECK(pthread_create(&th, NULL, try_after_owner_ended, NULL) == 0);
        pthread_join(th, NULL);
        CHECK_EQ_I64(pool_inbox_run(&ended_owners_box, NULL), EPERM);
        CHECK_EQ_I64(pool_inbox_destroy(&ended_owners_box), 0);
    }
}

/* ---- errors ---- */

static void part_errors(void) {
    test_gate gate = TEST_GATE_INIT;
    pool_task t = POOL_TASK_INIT(count_plain), norun = POOL_TASK_INIT(NULL);
    pool *p = test_pool(2);
    test_watchdog(30, "test_pinned errors");
    printf("  errors: EINVAL, EBUSY\n");
    CHECK_EQ_I64(pool_submit_pinned(p, -1, &t), EINVAL);
    CHECK_EQ_I64(pool_submit_pinned(p, 2, &t), EINVAL);
    CHECK_EQ_I64(pool_submit_pinned(p, 0, NULL), EINVAL);
    CHECK_EQ_I64(pool_submit_pinned(p, 0, &norun), EINVAL);
    CHECK_EQ_I64(pool_submit_pinned(p, 1, &gate.task), 0);
    test_gate_wait_entered(&gate);
    CHECK_EQ_I64(pool_submit_pinned(p, 1, &t), 0);
    CHECK_EQ_I64(pool_submit_pinned(p, 1, &t), EBUSY);
    CHECK_EQ_I64(pool_submit(p, &t), EBUSY);
    test_gate_open(&gate);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

static const test_part parts[] = {
    {"where", part_where},
    {"sleepers", part_sleepers},
    {"first", part_first},
    {"starve", part_starve},
    {"starve_high", part_starve_high},
    {"toggle", part_toggle},
    {"waiting", part_waiting},
    {"retired", part_retired},
    {"destroy", part_destroy},
    {"inbox", part_inbox},
    {"inbox_rules", part_inbox_rules},
    {"errors", part_errors},
    {"inbox_owner_ended", part_inbox_owner_ended},
};

int main(int argc, char **argv) {
    test_run_parts(argc, argv, parts, sizeof parts / sizeof parts[0]);
    return test_finish("test_pinned");
}
