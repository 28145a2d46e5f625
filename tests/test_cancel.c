/* test_cancel.c - cancelling a scope (pool_scope_cancel, _cancelled,
 * _on_cancel, and pool_scope_wait_status's ECANCELED).
 *
 * Every task records what happened to it in a state word it sets once with
 * a CAS (ran, or skipped through on_cancel; a spawn refused is counted by
 * its spawner), so a task that ran twice, ran and was skipped, or was lost
 * fails the exact count. The parts:
 *   queued     20,000 tasks from outside, cancelled from outside after the
 *              first ran: every task ran or was skipped, once; some were
 *              skipped; the wait says ECANCELED; stats count the skips.
 *   search     a tree of spawns cancelled from inside by the task that
 *              finds the answer; later spawns are refused with ECANCELED
 *              and pool_scope_cancelled tells that from a destroy.
 *   running    tasks that run until they see the cancel: the wait returns.
 *   empty      a cancel with nothing spawned: spawns are refused until the
 *              wait, which says ECANCELED, and the scope is then reusable;
 *              with the scope made on main and made on a worker.
 *   reuse      after a cancelled wait the scope runs every task again.
 *   joiners    two threads wait on one cancelled scope: both say ECANCELED.
 *   race       a cancel from another thread racing with the end of the
 *              wait, many rounds: no cancel mark is left behind naming a
 *              round that is over, and the next round is never cancelled
 *              by it.
 *   owned      tasks that own memory: run and on_cancel free it (the
 *              sanitizers and valgrind catch a leak or a double free).
 *   waiter     one worker spawns, cancels and waits: it skips every task
 *              itself, and must count them done before it parks.
 *   before_run one worker skips a scope's tasks, then runs a task that
 *              waits for the thread waiting on that scope: it must count
 *              its skips done before it runs anything.
 */
#include <stdatomic.h>

/* The threads that joined a wait under way (see part joiners). */
static atomic_int scope_wait_joined;
#define POOL__SCOPE_WAIT_JOINED(s) ((void)(s), atomic_fetch_add(&scope_wait_joined, 1))

#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#include <stdlib.h>

enum { NOT_RUN, RAN, SKIPPED };

typedef struct marked_task {
    pool_task task;
    atomic_int state; /* NOT_RUN, then RAN or SKIPPED, once */
    long spin_us;     /* how long its run takes */
} marked_task;

static atomic_long ran, skipped, twice;

static marked_task *marked_of(pool_task *t) {
    return (marked_task *)(void *)((char *)t - offsetof(marked_task, task));
}

static void mark(pool_task *t, int what) {
    int expected = NOT_RUN;
    if (!atomic_compare_exchange_strong(&marked_of(t)->state, &expected, what))
        atomic_fetch_add(&twice, 1);
    atomic_fetch_add(what == RAN ? &ran : &skipped, 1);
}

static void spin_for(long us) {
    double end = test_now() + (double)us * 1e-6;
    while (test_now() < end) continue;
}

/* If set, a task runs on until it is cancelled (set and cleared by main). */
static _Atomic(pool_scope *) hold_until_cancelled;

static void marked_run(pool_task *t) {
    pool_scope *hold = atomic_load(&hold_until_cancelled);
    mark(t, RAN);
    spin_for(marked_of(t)->spin_us);
    while (hold && !pool_scope_cancelled(hold)) test_sleep_us(50);
}

static void marked_skip(pool_task *t) { mark(t, SKIPPED); }

static void reset_counts(void) {
    atomic_store(&ran, 0);
    atomic_store(&skipped, 0);
    atomic_store(&twice, 0);
}

static marked_task *marked_tasks(long n, long spin_us) {
    marked_task *m = (marked_task *)calloc((size_t)n, sizeof *m);
    long i;
    if (!m) exit(2);
    for (i = 0; i < n; i++) {
        m[i].task = (pool_task)POOL_TASK_INIT(marked_run);
        m[i].spin_us = spin_us;
    }
    return m;
}

static uint64_t cancelled_stat(pool *p) {
    pool_stats st;
    pool_stats_get(p, &st);
    return st.tasks_cancelled;
}

/* ---- queued ---- */

#define QUEUED 20000

static void part_queued(void) {
    pool *p = test_pool(2);
    long n = (long)test_scaled(QUEUED, 2000), i;
    marked_task *m = marked_tasks(n, 5);
    uint64_t stat_before = cancelled_stat(p);
    pool_scope s;
    test_watchdog(60, "test_cancel queued: the wait after a cancel");
    printf("  queued: %ld tasks from outside, cancelled after the first ran\n", n);
    reset_counts();
    pool_scope_init(&s, p);
    /* Each worker holds its first task: the rest waits queued. */
    atomic_store(&hold_until_cancelled, &s);
    CHECK_EQ_I64(pool_scope_on_cancel(&s, marked_skip), 0);
    for (i = 0; i < n; i++) CHECK_EQ_I64(pool_scope_spawn(&s, &m[i].task), 0);
    while (atomic_load(&ran) == 0) test_sleep_us(100);
    CHECK_EQ_I64(pool_scope_cancel(&s), 0);
    CHECK(pool_scope_cancelled(&s));
    CHECK_EQ_I64(pool_scope_cancel(&s), 0); /* twice is once */
    CHECK_EQ_I64(pool_scope_wait_status(&s), ECANCELED);
    CHECK_EQ_I64(atomic_load(&twice), 0);
    atomic_store(&hold_until_cancelled, NULL);
    CHECK_EQ_I64(atomic_load(&ran) + atomic_load(&skipped), n);
    /* Each worker ran one task before the cancel; after it, every task is
       skipped (a worker that saw the cancel sees it at its next task). */
    CHECK_MSG(atomic_load(&ran) >= 1 && atomic_load(&ran) <= 2, "%ld ran, %ld skipped",
              atomic_load(&ran), atomic_load(&skipped));
    for (i = 0; i < n; i++) CHECK(atomic_load(&m[i].state) != NOT_RUN);
    CHECK_EQ_I64((int64_t)(cancelled_stat(p) - stat_before), atomic_load(&skipped));
    CHECK(!pool_scope_cancelled(&s));
    free(m);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- search ---- */

#define SEARCH_NODES 4000
#define SEARCH_ANSWER 700

typedef struct search_node {
    marked_task marked;
    int id;
} search_node;

static search_node search_nodes[SEARCH_NODES];
static pool_scope search_scope;
static atomic_long search_refused, search_refused_wrongly;
static atomic_int search_found;

static void search_run(pool_task *t) {
    search_node *n = (search_node *)(void *)marked_of(t);
    int c;
    mark(t, RAN);
    if (n->id == SEARCH_ANSWER) {
        atomic_store(&search_found, 1);
        CHECK_EQ_I64(pool_scope_cancel(&search_scope), 0);
        CHECK(pool_scope_cancelled(&search_scope));
        return;
    }
    for (c = 2 * n->id + 1; c <= 2 * n->id + 2 && c < SEARCH_NODES; c++) {
        search_node *child = &search_nodes[c];
        int rc;
        spin_for(2);
        rc = pool_scope_spawn(&search_scope, &child->marked.task);
        if (rc == 0) continue;
        atomic_fetch_add(&search_refused, 1);
        if (rc != ECANCELED || !pool_scope_cancelled(&search_scope))
            atomic_fetch_add(&search_refused_wrongly, 1);
    }
}

static void search_from(void *arg) {
    (void)arg;
    CHECK_EQ_I64(pool_scope_spawn(&search_scope, &search_nodes[0].marked.task), 0);
    CHECK_EQ_I64(pool_scope_wait_status(&search_scope), ECANCELED);
}

static void part_search(void) {
    pool *p = test_pool(2);
    long accounted = 0;
    int i;
    test_watchdog(60, "test_cancel search: a search cancelled by the task that finds the answer");
    printf("  search: a tree of spawns, cancelled from the task that finds node %d\n",
           SEARCH_ANSWER);
    reset_counts();
    atomic_store(&search_refused, 0);
    atomic_store(&search_refused_wrongly, 0);
    atomic_store(&search_found, 0);
    for (i = 0; i < SEARCH_NODES; i++) {
        search_nodes[i].marked.task = (pool_task)POOL_TASK_INIT(search_run);
        atomic_store(&search_nodes[i].marked.state, NOT_RUN);
        search_nodes[i].id = i;
    }
    pool_scope_init(&search_scope, p);
    CHECK_EQ_I64(pool_scope_on_cancel(&search_scope, marked_skip), 0);
    CALL_IN(p, search_from, NULL);
    CHECK(atomic_load(&search_found));
    CHECK_EQ_I64(atomic_load(&twice), 0);
    CHECK_EQ_I64(atomic_load(&search_refused_wrongly), 0);
    /* Each node that ran spawned its children, each of which ran, was
       skipped or was refused; a node refused or skipped spawned nothing. */
    for (i = 0; i < SEARCH_NODES; i++) {
        int state = atomic_load(&search_nodes[i].marked.state);
        if (state == RAN && i != SEARCH_ANSWER) {
            int c;
            for (c = 2 * i + 1; c <= 2 * i + 2 && c < SEARCH_NODES; c++) accounted++;
        }
    }
    CHECK_EQ_I64(accounted + 1, /* the root */
                 atomic_load(&ran) + atomic_load(&skipped) + atomic_load(&search_refused));
    /* A destroy's refusal is told apart: the scope is not cancelled now. */
    CHECK(!pool_scope_cancelled(&search_scope));
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- running ---- */

static pool_scope running_scope;
static atomic_int running_started;

static void until_cancelled(pool_task *t) {
    (void)t;
    atomic_fetch_add(&running_started, 1);
    while (!pool_scope_cancelled(&running_scope)) test_sleep_us(50);
}

static void part_running(void) {
    pool *p = test_pool(2);
    pool_task tasks[2] = {POOL_TASK_INIT(until_cancelled), POOL_TASK_INIT(until_cancelled)};
    test_watchdog(30, "test_cancel running: tasks that run until they see the cancel");
    printf("  running: two tasks run until they see the cancel\n");
    atomic_store(&running_started, 0);
    pool_scope_init(&running_scope, p);
    CHECK_EQ_I64(pool_scope_spawn(&running_scope, &tasks[0]), 0);
    CHECK_EQ_I64(pool_scope_spawn(&running_scope, &tasks[1]), 0);
    while (atomic_load(&running_started) < 2) test_sleep_us(100);
    CHECK_EQ_I64(pool_scope_cancel(&running_scope), 0);
    CHECK_EQ_I64(pool_scope_wait_status(&running_scope), ECANCELED);
    CHECK(!pool_scope_cancelled(&running_scope));
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- empty, reuse ---- */

/* On the thread that calls it, with the scope made there: from main (its
   origin outside the pool) and on a worker, whose wait for a scope with no
   task unfinished takes a shorter path that must still end the cancel. */
static void empty_and_reuse(void *arg) {
    pool *p = (pool *)arg;
    long n = 1000, i;
    marked_task *m = marked_tasks(n, 0);
    pool_scope s;
    pool_scope_init(&s, p);
    CHECK(!pool_scope_cancelled(&s));
    CHECK_EQ_I64(pool_scope_cancel(&s), 0);
    CHECK(pool_scope_cancelled(&s));
    CHECK_EQ_I64(pool_scope_spawn(&s, &m[0].task), ECANCELED);
    CHECK_EQ_I64(atomic_load(&m[0].state), NOT_RUN);
    CHECK_EQ_I64(pool_scope_wait_status(&s), ECANCELED);
    CHECK(!pool_scope_cancelled(&s));
    CHECK_EQ_I64(pool_scope_wait_status(&s), 0); /* a wait ends a cancel once */
    reset_counts();
    for (i = 0; i < n; i++) CHECK_EQ_I64(pool_scope_spawn(&s, &m[i].task), 0);
    CHECK_EQ_I64(pool_scope_wait_status(&s), 0);
    CHECK_EQ_I64(atomic_load(&ran), n);
    CHECK_EQ_I64(atomic_load(&twice), 0);
    free(m);
}

static void part_empty_and_reuse(void) {
    pool *p = test_pool(2);
    test_watchdog(30, "test_cancel empty: a cancelled scope with nothing spawned");
    printf("  empty: a cancel with nothing spawned; reuse: the scope runs everything after\n");
    empty_and_reuse(p);
    pool_call_on_worker(p, empty_and_reuse, p);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- joiners ---- */

static atomic_int joiners_status[2];

static void *joiner(void *arg) {
    int k = (int)(intptr_t)arg;
    atomic_store(&joiners_status[k], pool_scope_wait_status(&running_scope));
    return NULL;
}

/* Both threads inside the wait before the cancel: one owns it (white-box:
   the latch's OWNED bit), the other joined it (the test's hook in the
   wait). The round cannot end before the cancel (its tasks run until they
   see it), so each is told ECANCELED. A thread that came after the round
   ended would wait for the next one and rightly say 0: waiting for the
   hook, not for a while, rules that out. */
static void part_joiners(void) {
    pool *p = test_pool(2);
    pool_task tasks[2] = {POOL_TASK_INIT(until_cancelled), POOL_TASK_INIT(until_cancelled)};
    pthread_t th[2];
    int k;
    test_watchdog(30, "test_cancel joiners: two threads waiting on a cancelled scope");
    printf("  joiners: two threads wait on one scope, which is cancelled\n");
    /* until_cancelled watches running_scope: use it here too. */
    atomic_store(&running_started, 0);
    atomic_store(&scope_wait_joined, 0);
    pool_scope_init(&running_scope, p);
    CHECK_EQ_I64(pool_scope_spawn(&running_scope, &tasks[0]), 0);
    CHECK_EQ_I64(pool_scope_spawn(&running_scope, &tasks[1]), 0);
    for (k = 0; k < 2; k++) {
        atomic_store(&joiners_status[k], -1);
        CHECK(pthread_create(&th[k], NULL, joiner, (void *)(intptr_t)k) == 0);
    }
    while (
        atomic_load(&running_started) < 2 || atomic_load(&scope_wait_joined) < 1 ||
        !(__atomic_load_n(&running_scope.pool__done.state, __ATOMIC_ACQUIRE) & POOL__LATCH_OWNED))
        test_sleep_us(100);
    CHECK_EQ_I64(pool_scope_cancel(&running_scope), 0);
    for (k = 0; k < 2; k++) pthread_join(th[k], NULL);
    for (k = 0; k < 2; k++)
        CHECK_MSG(atomic_load(&joiners_status[k]) == ECANCELED, "joiner %d: %d, not ECANCELED", k,
                  atomic_load(&joiners_status[k]));
    CHECK_EQ_I64(atomic_load(&scope_wait_joined), 1);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- race ---- */

#define RACE_ROUNDS 20000

static pool_scope race_scope;
static atomic_int race_go, race_done;

static void *race_canceller(void *arg) {
    long rounds = (long)(intptr_t)arg, r;
    for (r = 1; r <= rounds; r++) {
        while (atomic_load(&race_go) < r) sched_yield();
        pool_scope_cancel(&race_scope);
        atomic_store(&race_done, (int)r);
    }
    return NULL;
}

static void race_nothing(pool_task *t) { (void)t; }

static void part_race(void) {
    pool *p = test_pool(2);
    long rounds = (long)test_scaled(RACE_ROUNDS, 500), r, cancelled_rounds = 0;
    pool_task task = POOL_TASK_INIT(race_nothing);
    pthread_t th;
    test_watchdog(120, "test_cancel race: cancels racing with the end of the wait");
    printf("  race: %ld rounds of a cancel racing with the end of the wait\n", rounds);
    pool_scope_init(&race_scope, p);
    atomic_store(&race_go, 0);
    atomic_store(&race_done, 0);
    CHECK(pthread_create(&th, NULL, race_canceller, (void *)(intptr_t)rounds) == 0);
    for (r = 1; r <= rounds; r++) {
        int rc = pool_scope_spawn(&race_scope, &task), status;
        uint32_t mark, round;
        atomic_store(&race_go, (int)r);
        status = pool_scope_wait_status(&race_scope);
        CHECK(status == 0 || status == ECANCELED);
        CHECK_EQ_I64(rc, 0); /* no cancel is in flight as a round begins */
        while (atomic_load(&race_done) < r) sched_yield();
        /* The cancel either counted for the round that ended, or came after
           it and cancels the round now under way; never a mark left behind
           naming a round that is over. (White-box: the cancel word.) */
        mark = __atomic_load_n(&race_scope.pool__cancel, __ATOMIC_SEQ_CST);
        round =
            __atomic_load_n(&race_scope.pool__done.state, __ATOMIC_SEQ_CST) & ~POOL__LATCH_FLAGS;
        CHECK_MSG(mark == 0 || mark == (round | POOL__CANCEL_MARK),
                  "round %ld: cancel word %u names a round that is over (now %u)", r, mark, round);
        if (pool_scope_cancelled(&race_scope)) { /* end the late cancel's round */
            cancelled_rounds++;
            CHECK_EQ_I64(pool_scope_wait_status(&race_scope), ECANCELED);
        }
        CHECK(!pool_scope_cancelled(&race_scope));
    }
    pthread_join(th, NULL);
    printf("  (%ld of %ld cancels came after their round's wait)\n", cancelled_rounds, rounds);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- owned ---- */

typedef struct owned_task {
    pool_task task;
    char *buffer;
} owned_task;

static atomic_long owned_freed;

static void owned_release(pool_task *t) {
    owned_task *o = (owned_task *)(void *)t;
    free(o->buffer);
    free(o);
    atomic_fetch_add(&owned_freed, 1);
}

static void owned_run(pool_task *t) {
    spin_for(2);
    owned_release(t);
}

static void part_owned(void) {
    pool *p = test_pool(2);
    long n = (long)test_scaled(5000, 200), i;
    pool_scope s;
    test_watchdog(60, "test_cancel owned: tasks freed by their run or by on_cancel");
    printf("  owned: %ld heap tasks, freed by their run or by on_cancel\n", n);
    atomic_store(&owned_freed, 0);
    pool_scope_init(&s, p);
    CHECK_EQ_I64(pool_scope_on_cancel(&s, owned_release), 0);
    for (i = 0; i < n; i++) {
        owned_task *o = (owned_task *)malloc(sizeof *o);
        if (!o) exit(2);
        o->task = (pool_task)POOL_TASK_INIT(owned_run);
        o->buffer = (char *)malloc(64);
        if (i <= n / 4) {
            CHECK_EQ_I64(pool_scope_spawn(&s, &o->task), 0);
        } else { /* refused after the cancel: not taken, so freed here */
            CHECK_EQ_I64(pool_scope_spawn(&s, &o->task), ECANCELED);
            owned_release(&o->task);
        }
        if (i == n / 4) CHECK_EQ_I64(pool_scope_cancel(&s), 0);
    }
    CHECK_EQ_I64(pool_scope_wait_status(&s), ECANCELED);
    CHECK_EQ_I64(atomic_load(&owned_freed), n);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- waiter ---- */

#define WAITER_TASKS 100

static void waiter_root(void *arg) {
    pool *p = (pool *)arg;
    marked_task *m = marked_tasks(WAITER_TASKS, 0);
    pool_scope s;
    int i;
    pool_scope_init(&s, p);
    CHECK_EQ_I64(pool_scope_on_cancel(&s, marked_skip), 0);
    for (i = 0; i < WAITER_TASKS; i++) CHECK_EQ_I64(pool_scope_spawn(&s, &m[i].task), 0);
    CHECK_EQ_I64(pool_scope_cancel(&s), 0);
    CHECK_EQ_I64(pool_scope_wait_status(&s), ECANCELED);
    free(m);
}

static void part_waiter(void) {
    pool_config cfg;
    pool *p;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 1;
    cfg.spawn_throttle = POOL_SPAWN_THROTTLE_OFF; /* every spawn queued on the one worker */
    p = test_pool_cfg(&cfg);
    test_watchdog(30, "test_cancel waiter: a worker that skipped its scope's tasks parks in the "
                      "wait without counting them done");
    printf("  waiter: one worker spawns %d tasks, cancels and waits: it skips them all\n",
           WAITER_TASKS);
    reset_counts();
    pool_call_on_worker(p, waiter_root, p);
    CHECK_EQ_I64(atomic_load(&ran), 0);
    CHECK_EQ_I64(atomic_load(&skipped), WAITER_TASKS);
    CHECK_EQ_I64(atomic_load(&twice), 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* ---- before_run ---- */

#define BEFORE_RUN_TASKS 10

static atomic_int scope_waited, dependent_done;

static void dependent_run(pool_task *t) { /* waits for the thread waiting on the scope */
    (void)t;
    while (!atomic_load(&scope_waited)) test_sleep_us(100);
    atomic_store(&dependent_done, 1);
}

static void part_before_run(void) {
    pool *p;
    test_gate gate = TEST_GATE_INIT;
    pool_task dependent = POOL_TASK_INIT(dependent_run);
    marked_task *m = marked_tasks(BEFORE_RUN_TASKS, 0);
    pool_scope s;
    int i;
    p = test_pool_without_slots(1); /* main only blocks in its wait */
    test_watchdog(30, "test_cancel before_run: a worker ran a task while its skips of a scope "
                      "were not counted done, and the task waits for that scope's waiter");
    printf("  before_run: a worker skips a scope's tasks, then runs a task that waits for the "
           "scope's waiter\n");
    reset_counts();
    atomic_store(&scope_waited, 0);
    atomic_store(&dependent_done, 0);
    CHECK_EQ_I64(pool_submit(p, &gate.task), 0);
    test_gate_wait_entered(&gate);
    /* Injected after the scope's tasks would put it first: the injector is
       a stack. Before them, the worker takes the scope's tasks first. */
    CHECK_EQ_I64(pool_submit(p, &dependent), 0);
    pool_scope_init(&s, p);
    CHECK_EQ_I64(pool_scope_on_cancel(&s, marked_skip), 0);
    for (i = 0; i < BEFORE_RUN_TASKS; i++) CHECK_EQ_I64(pool_scope_spawn(&s, &m[i].task), 0);
    CHECK_EQ_I64(pool_scope_cancel(&s), 0);
    test_gate_open(&gate);
    CHECK_EQ_I64(pool_scope_wait_status(&s), ECANCELED);
    atomic_store(&scope_waited, 1);
    while (!atomic_load(&dependent_done)) test_sleep_us(100);
    CHECK_EQ_I64(atomic_load(&skipped), BEFORE_RUN_TASKS);
    free(m);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

static const test_part parts[] = {
    {"queued", part_queued},         {"search", part_search},   {"running", part_running},
    {"empty", part_empty_and_reuse}, {"joiners", part_joiners}, {"race", part_race},
    {"owned", part_owned},           {"waiter", part_waiter},   {"before_run", part_before_run},
};

int main(int argc, char **argv) {
    test_run_parts(argc, argv, parts, sizeof parts / sizeof parts[0]);
    return test_finish("test_cancel");
}
