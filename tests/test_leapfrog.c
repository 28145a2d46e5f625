/* test_leapfrog.c - the waiting rule's choice of work, checked on its own.
 *
 * Single-threaded and white-box: a pool whose two worker slots are filled
 * by hand (no thread runs), a "thief" V with runs and frames set up as
 * pool__execute would, and a waiter X calling pool.h's own pool__leapfrog
 * and pool__own_work. Each case checks exactly what X is given, what stays
 * on V's deque, and what is handed to the injector:
 *  - from V's deque, at or above the base of the run X waits for: a join
 *    half (taken), a detached task (handed off), a task of a scope made
 *    during the run (taken), of a scope made on another worker or before
 *    the run began (handed off), a task of the scope X waits for (taken);
 *  - below the base: nothing is taken;
 *  - a run that has ended, or another run's frame: nothing;
 *  - from X's own deque while it waits for a scope: that scope's tasks
 *    (taken), detached tasks on top of them (handed off on the way), an
 *    outer join's half or another scope's task (put back, nothing taken);
 *  - from a waiter's own deque below the base of its run: its scope's
 *    tasks (taken, each to run as a run of its own); anything else is put
 *    back where it was, or handed off if its pop emptied the deque (put
 *    back, it would land one slot higher, at the base, where a waiter for
 *    the run could take it).
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

static pool *p;
static pool__worker *x, *v;

static void nop_task(pool_task *t) { (void)t; }
static void nop_fn(void *arg) { (void)arg; }

/* What the injector holds now, taken out: its count, and whether t is in it. */
static int injector_take(pool_task *t, int *found) {
    pool_task *all = pool__injector_take_all(&p->injector), *i;
    int n = 0;
    *found = 0;
    for (i = all; i; i = i->pool__next, n++)
        if (i == t) *found = 1;
    return n;
}

static void push(pool__worker *w, pool_task *t, pool_scope *s) {
    if (s || t->run != pool__call_job_run) CHECK(pool__mark_queued(t, s) == 0);
    CHECK(pool__deque_push(&w->deque, t) == 0);
}

/* A run of task t begun on w as pool__execute begins one: its body first
   (a new id), then the run's base and frame. */
typedef struct test_run {
    pool__body body;
    int64_t base;
} test_run;

static test_run run_begin(pool__worker *w, pool_task *t, pool_scope *s) {
    test_run r;
    r.body = pool__body_begin(w, s);
    r.base = pool__run_begin(w, t, s);
    return r;
}

static void run_end(pool__worker *w, test_run r) {
    pool__run_end(w, r.base);
    pool__body_end(w, r.body);
}

/* pool__own_work, checking that what it returns runs within the current
   run (all but the case below the base, which says so itself). */
static pool_task *own_work(pool__worker *w, const pool__awaited *wt) {
    int new_run = -1;
    pool_task *t = pool__own_work(w, wt, &new_run);
    CHECK_EQ_I64(new_run, 0);
    return t;
}

static pool__awaited awaited_join(pool__call_job *job) {
    pool__awaited wt;
    memset(&wt, 0, sizeof wt);
    wt.runner = p;
    wt.done = &job->done;
    wt.tag = &job->task;
    wt.thief = &job->thief;
    return wt;
}

static void test_join_half(void) {
    pool__call_job job, half, outer;
    pool_task detached = POOL_TASK_INIT(nop_task);
    pool__awaited wt;
    test_run outer_run;
    int found;
    printf("  a stolen join half: what its waiter may take from the thief\n");
    pool__call_job_init(&job, nop_fn, NULL);
    pool__call_job_init(&half, nop_fn, NULL);
    pool__call_job_init(&outer, nop_fn, NULL);
    push(v, &outer.task, NULL); /* before the run: below its base */
    outer_run = run_begin(v, &job.task, NULL);
    CHECK_EQ_I64(job.thief, v->index + 1);
    wt = awaited_join(&job);

    /* Only the older task, below the base: nothing to take. */
    CHECK(pool__leapfrog(x, &wt) == NULL);
    CHECK_EQ_I64(pool__deque_len(&v->deque), 1);
    CHECK(pool__deque_steal(&v->deque, 0, &found) ==
          &outer.task); /* a thief of the pool takes it */

    /* A join half pushed during the run: its descendant. */
    push(v, &half.task, NULL);
    CHECK(pool__leapfrog(x, &wt) == &half.task);
    CHECK_EQ_I64(pool__deque_len(&v->deque), 0);

    /* A detached task pushed during the run: nobody's; handed to the pool. */
    push(v, &detached, NULL);
    CHECK(pool__leapfrog(x, &wt) == NULL);
    CHECK_EQ_I64(pool__deque_len(&v->deque), 0);
    CHECK_EQ_I64(injector_take(&detached, &found), 1);
    CHECK(found);

    /* The run ended: its frame is free, nothing is taken. */
    run_end(v, outer_run);
    push(v, &half.task, NULL);
    CHECK(pool__leapfrog(x, &wt) == NULL);
    CHECK_EQ_I64(pool__deque_len(&v->deque), 1);
    CHECK(pool__deque_pop(&v->deque) == &half.task);
}

static void test_scopes(void) {
    pool_scope waited, nested, elsewhere, before;
    pool_task a = POOL_TASK_INIT(nop_task), b = POOL_TASK_INIT(nop_task),
              c = POOL_TASK_INIT(nop_task), d = POOL_TASK_INIT(nop_task),
              first = POOL_TASK_INIT(nop_task);
    pool__awaited wt;
    test_run outer_run;
    int found;
    printf("  a scope: what its waiter may take from a worker running one of its tasks\n");
    pool__set_current(v);
    pool_scope_init(&before, p); /* made on V before the run */
    pool__set_current(x);
    pool_scope_init(&elsewhere, p); /* made on another worker */
    pool_scope_init(&waited, p);
    pool__set_current(NULL);
    push(x, &first, &waited);
    CHECK(pool__deque_steal(&x->deque, 0, &found) == &first); /* V steals a task of `waited` */
    outer_run = run_begin(v, &first, &waited);
    pool__set_current(v);
    pool_scope_init(&nested, p); /* made during the run, on V */
    pool__set_current(NULL);
    memset(&wt, 0, sizeof wt);
    wt.runner = p;
    wt.tag = &waited;
    wt.scope = &waited;

    push(v, &a, &nested); /* a task of a scope made in the run: a descendant */
    CHECK(pool__leapfrog(x, &wt) == &a);
    push(v, &b, &waited); /* another task of the scope X waits for */
    CHECK(pool__leapfrog(x, &wt) == &b);
    push(v, &c, &elsewhere); /* a scope made elsewhere: handed off */
    CHECK(pool__leapfrog(x, &wt) == NULL);
    CHECK_EQ_I64(injector_take(&c, &found), 1);
    CHECK(found);
    push(v, &d, &before); /* a scope made on V before the run: handed off */
    CHECK(pool__leapfrog(x, &wt) == NULL);
    CHECK_EQ_I64(injector_take(&d, &found), 1);
    CHECK(found);
    CHECK_EQ_I64(pool__deque_len(&v->deque), 0);
    run_end(v, outer_run);
    (void)pool__unmark_queued(&a), (void)pool__unmark_queued(&b);
    (void)pool__unmark_queued(&c), (void)pool__unmark_queued(&d);
}

static void test_own_deque(void) {
    pool_scope waited, other;
    pool_task mine1 = POOL_TASK_INIT(nop_task), mine2 = POOL_TASK_INIT(nop_task),
              detached = POOL_TASK_INIT(nop_task), theirs = POOL_TASK_INIT(nop_task);
    pool__call_job outer;
    pool__awaited wt;
    int found;
    printf(
        "  a scope's waiter on its own deque: its tasks, detached ones handed off, others left\n");
    pool_scope_init(&waited, p);
    pool_scope_init(&other, p);
    pool__call_job_init(&outer, nop_fn, NULL);
    memset(&wt, 0, sizeof wt);
    wt.runner = p;
    wt.tag = &waited;
    wt.scope = &waited;

    push(x, &outer.task, NULL); /* an outer join's half, oldest */
    push(x, &mine1, &waited);
    push(x, &detached, NULL);
    push(x, &mine2, &waited);
    CHECK(own_work(x, &wt) == &mine2);
    CHECK(own_work(x, &wt) == &mine1); /* the detached task went to the pool */
    CHECK_EQ_I64(injector_take(&detached, &found), 1);
    CHECK(found);
    CHECK(own_work(x, &wt) == NULL); /* the outer half stays */
    CHECK_EQ_I64(pool__deque_len(&x->deque), 1);
    push(x, &theirs, &other);
    CHECK(own_work(x, &wt) == NULL); /* another scope's task stays */
    CHECK_EQ_I64(pool__deque_len(&x->deque), 2);
    CHECK(pool__deque_pop(&x->deque) == &theirs);
    CHECK(pool__deque_pop(&x->deque) == &outer.task);
    (void)pool__unmark_queued(&mine1), (void)pool__unmark_queued(&mine2);
    (void)pool__unmark_queued(&detached), (void)pool__unmark_queued(&theirs);
}

/* V runs a stolen join half J (a run of its own) while an outer join's
   half lies below that run's base, the only task on V's deque. V's task
   waits for a scope: what V finds on its own deque below the run's base
   must not end up at or above it, where a waiter for J (which may take
   anything of J's run) could reach it. Putting back a task whose pop
   emptied the deque lands it one slot higher, so the waiter hands it to
   the pool instead; with another task under it, it goes back where it was. */
static void test_own_deque_below_run(void) {
    pool_scope waited;
    pool__call_job job, outer, older;
    pool__awaited wt, joiner;
    test_run outer_run;
    int found;
    printf("  a waiter in a run does not lift what lies below the run's base to it\n");
    pool_scope_init(&waited, p);
    pool__call_job_init(&job, nop_fn, NULL);
    pool__call_job_init(&outer, nop_fn, NULL);
    pool__call_job_init(&older, nop_fn, NULL);
    memset(&wt, 0, sizeof wt);
    wt.runner = p;
    wt.tag = &waited;
    wt.scope = &waited;
    joiner = awaited_join(&job);

    /* The only task: handed off. */
    push(v, &outer.task, NULL);
    outer_run = run_begin(v, &job.task, NULL);
    CHECK(own_work(v, &wt) == NULL);
    CHECK(pool__leapfrog(x, &joiner) == NULL); /* nothing at or above the base */
    CHECK_EQ_I64(pool__deque_len(&v->deque), 0);
    CHECK_EQ_I64(injector_take(&outer.task, &found), 1);
    CHECK(found);
    run_end(v, outer_run);

    /* With an older task under it: put back in its slot, below the base. */
    push(v, &older.task, NULL);
    push(v, &outer.task, NULL);
    outer_run = run_begin(v, &job.task, NULL);
    CHECK(own_work(v, &wt) == NULL);
    CHECK(pool__leapfrog(x, &joiner) == NULL);
    CHECK_EQ_I64(pool__deque_len(&v->deque), 2);
    CHECK_EQ_I64(injector_take(&outer.task, &found), 0);
    run_end(v, outer_run);
    CHECK(pool__deque_pop(&v->deque) == &outer.task);
    CHECK(pool__deque_pop(&v->deque) == &older.task);
}

/* A task of w's main loop waits for a scope whose tasks an earlier run of
   w pushed: they lie below the base of the waiter's run, and are its to
   run (a pool of one thread, whose spare cannot start, would otherwise
   never finish the wait). Each runs as a run of its own. */
static void test_own_scope_below_run(void) {
    pool_scope waited;
    pool_task t1 = POOL_TASK_INIT(nop_task), t2 = POOL_TASK_INIT(nop_task),
              t3 = POOL_TASK_INIT(nop_task);
    pool__call_job job;
    pool__awaited wt;
    test_run outer_run;
    int new_run = -1;
    printf("  a scope's waiter runs the scope's tasks from below its run's base\n");
    pool_scope_init(&waited, p);
    pool__call_job_init(&job, nop_fn, NULL);
    memset(&wt, 0, sizeof wt);
    wt.runner = p;
    wt.tag = &waited;
    wt.scope = &waited;
    push(v, &t1, &waited);
    push(v, &t2, &waited);
    outer_run = run_begin(v, &job.task, NULL);
    CHECK(pool__own_work(v, &wt, &new_run) == &t2);
    CHECK_EQ_I64(new_run, 1);
    new_run = -1;
    CHECK(pool__own_work(v, &wt, &new_run) == &t1);
    CHECK_EQ_I64(new_run, 1);
    CHECK_EQ_I64(pool__deque_len(&v->deque), 0);
    /* The run's base came down with the deque: what the run pushes now is
       its own, for its waits and for its waiters' leapfrogs. */
    CHECK_EQ_I64(v->run_base, POOL__LOAD(&v->deque.bottom, POOL__RELAXED));
    CHECK_EQ_I64(POOL__LOAD(&v->frames[v->run_depth - 1].base, POOL__ACQUIRE), v->run_base);
    push(v, &t3, &waited);
    new_run = -1;
    CHECK(pool__own_work(v, &wt, &new_run) == &t3);
    CHECK_EQ_I64(new_run, 0);
    run_end(v, outer_run);
    (void)pool__unmark_queued(&t1), (void)pool__unmark_queued(&t2), (void)pool__unmark_queued(&t3);
}

int main(void) {
    pool_config cfg;
    test_watchdog(30, "test_leapfrog");
    printf("test_leapfrog: what a waiter may take\n");
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    if (pool_create(&p, &cfg) != 0) return 2;
    /* Two worker slots filled by hand; no thread runs them. */
    x = pool__worker_new(p, 0);
    v = pool__worker_new(p, 1);
    if (!x || !v) return 2;
    p->workers[0] = x, p->workers[1] = v;
    POOL__STORE(&p->threads.started, 2, POOL__RELEASE);
    test_join_half();
    test_scopes();
    test_own_deque();
    test_own_deque_below_run();
    test_own_scope_below_run();
    /* Take the slots back before pool_destroy, which would join their threads. */
    POOL__STORE(&p->threads.started, 0, POOL__RELEASE);
    pool__worker_free(p, x);
    pool__worker_free(p, v);
    p->workers[0] = p->workers[1] = NULL;
    CHECK(pool_destroy(p) == 0);
    return test_finish("test_leapfrog");
}
