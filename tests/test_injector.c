/* test_injector.c - the injector (the queue for work from outside a pool).
 *
 * Single-threaded: push order, was_empty, batches, take_all on empty, and
 * close: pushes after close return ECANCELED and the list taken after
 * close still holds everything pushed before.
 *
 * Concurrent reuse (ABA hunt): producer threads push their nodes singly and
 * in short linked batches while consumer threads take_all and immediately
 * re-push the SAME node memory, for a fixed number of hops per node. Every
 * node must make exactly HOPS trips, never be in the queue twice at once,
 * and no taken list may be longer than the number of nodes (a cycle).
 *
 * Concurrent close: producers push unique nodes until they get ECANCELED
 * while a consumer takes; after the close every accepted node has been
 * taken exactly once and no rejected node ever shows up.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include <sched.h>

#include "test.h"

typedef struct node {
    pool_task task;
    int64_t id;
    atomic_int in_queue; /* 1 from just before its push until it is taken */
    atomic_int hops;     /* times taken */
    atomic_int accepted; /* close test: its push returned 0 */
} node;

static node *node_of(pool_task *t) { return (node *)((char *)t - offsetof(node, task)); }

static node *make_nodes(int64_t n) {
    node *nodes = (node *)calloc((size_t)n, sizeof *nodes);
    int64_t i;
    if (!nodes) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    for (i = 0; i < n; i++) {
        nodes[i].id = i;
        atomic_init(&nodes[i].in_queue, 0);
        atomic_init(&nodes[i].hops, 0);
        atomic_init(&nodes[i].accepted, 0);
    }
    return nodes;
}

static void injector_init(pool__injector *q) { memset(q, 0, sizeof *q); }

/* Links nodes[i..j] (inclusive) as one chain, i first. */
static void link_chain(node *nodes, int64_t i, int64_t j) {
    int64_t k;
    for (k = i; k < j; k++) nodes[k].task.pool__next = &nodes[k + 1].task;
}

/* ------------------------------------------------------------------------ */
/* Single-threaded                                                          */
/* ------------------------------------------------------------------------ */

static void test_basic(void) {
    pool__injector q;
    node *nodes = make_nodes(8);
    pool_task *list;
    int was_empty = -1, pos[8] = {-1, -1, -1, -1, -1, -1, -1, -1}, k;
    printf("  take_all on empty, was_empty, single pushes and batches kept in order\n");
    injector_init(&q);
    CHECK(pool__injector_take_all(&q) == NULL);

    CHECK(pool__injector_push(&q, &nodes[0].task, &nodes[0].task, &was_empty) == 0);
    CHECK(was_empty == 1);
    CHECK(pool__injector_push(&q, &nodes[1].task, &nodes[1].task, &was_empty) == 0);
    CHECK(was_empty == 0);
    /* a batch 2..4 linked by the caller, then 5..7 */
    link_chain(nodes, 2, 4);
    CHECK(pool__injector_push(&q, &nodes[2].task, &nodes[4].task, &was_empty) == 0);
    CHECK(was_empty == 0);
    link_chain(nodes, 5, 7);
    CHECK(pool__injector_push(&q, &nodes[5].task, &nodes[7].task, &was_empty) == 0);

    /* Exactly the 8 nodes, each once, NULL-terminated, and each batch
       contiguous and in its own order. (The order between pushes is the
       implementation's: a stack gives 5 6 7 2 3 4 1 0.) */
    list = pool__injector_take_all(&q);
    for (k = 0; k < 8 && list; k++, list = list->pool__next) {
        int64_t id = node_of(list)->id;
        CHECK(id >= 0 && id < 8);
        if (id < 0 || id >= 8) break;
        CHECK(pos[id] == -1);
        pos[id] = k;
    }
    CHECK_EQ_I64(k, 8);
    CHECK(list == NULL);
    for (k = 0; k < 8; k++) CHECK(pos[k] >= 0);
    CHECK(pos[3] == pos[2] + 1 && pos[4] == pos[3] + 1);
    CHECK(pos[6] == pos[5] + 1 && pos[7] == pos[6] + 1);
    CHECK(pool__injector_take_all(&q) == NULL);

    /* empty again: the next push sees it empty */
    CHECK(pool__injector_push(&q, &nodes[3].task, &nodes[3].task, &was_empty) == 0);
    CHECK(was_empty == 1);
    list = pool__injector_take_all(&q);
    CHECK(list == &nodes[3].task);
    CHECK(list && list->pool__next == NULL);
    free(nodes);
}

static void test_close(void) {
    pool__injector q;
    node *nodes = make_nodes(6);
    pool_task *list;
    int was_empty = 0, seen[6] = {0}, k, count = 0;
    printf("  close: later pushes return ECANCELED, earlier ones are still taken\n");
    injector_init(&q);
    CHECK(pool__injector_push(&q, &nodes[0].task, &nodes[0].task, &was_empty) == 0);
    link_chain(nodes, 1, 3);
    CHECK(pool__injector_push(&q, &nodes[1].task, &nodes[3].task, &was_empty) == 0);
    pool__injector_close(&q);
    CHECK(pool__injector_push(&q, &nodes[4].task, &nodes[4].task, &was_empty) == ECANCELED);
    link_chain(nodes, 4, 5);
    CHECK(pool__injector_push(&q, &nodes[4].task, &nodes[5].task, &was_empty) == ECANCELED);

    list = pool__injector_take_all(&q);
    for (; list && count < 10; list = list->pool__next, count++) {
        node *n = node_of(list);
        CHECK(n >= nodes && n < nodes + 6);
        if (n >= nodes && n < nodes + 6) seen[n->id]++;
        else break;
    }
    CHECK_EQ_I64(count, 4);
    for (k = 0; k < 4; k++) CHECK_EQ_I64(seen[k], 1);
    for (k = 4; k < 6; k++) CHECK_EQ_I64(seen[k], 0);
    /* still closed, and empty: NULL, not a tagged pointer */
    CHECK(pool__injector_take_all(&q) == NULL);
    CHECK(pool__injector_push(&q, &nodes[4].task, &nodes[4].task, &was_empty) == ECANCELED);
    CHECK(pool__injector_take_all(&q) == NULL);

    /* closing an empty injector, and closing twice */
    injector_init(&q);
    pool__injector_close(&q);
    pool__injector_close(&q);
    CHECK(pool__injector_take_all(&q) == NULL);
    CHECK(pool__injector_push(&q, &nodes[0].task, &nodes[0].task, &was_empty) == ECANCELED);
    free(nodes);
}

/* ------------------------------------------------------------------------ */
/* Concurrent reuse                                                         */
/* ------------------------------------------------------------------------ */

#define PRODUCERS 3
#define CONSUMERS 3
#define HOPS 30

typedef struct reuse {
    pool__injector q;
    node *nodes;
    int64_t count;            /* nodes */
    atomic_long retired;      /* nodes that made all their hops */
    atomic_long taken;        /* nodes taken, over all hops */
    atomic_long duplicates;   /* taken while not in the queue */
    atomic_long bad_pointers; /* a taken pointer that is no node */
    atomic_long cycles;       /* a taken list longer than all nodes */
    atomic_long push_errors;
    atomic_int stop; /* the deadline passed: give up */
} reuse;

typedef struct worker_arg {
    reuse *r;
    int id;
} worker_arg;

/* Pushes the chain of n nodes starting at first (linked by pool__next) in
   random pieces of 1 to 8: single pushes and short batches. */
static void push_pieces(reuse *r, pool_task *first, int64_t n, uint64_t *rng) {
    while (n > 0) {
        int64_t piece = (int64_t)(test_rand(rng) % 8) + 1, k;
        pool_task *last = first, *rest;
        int was_empty;
        if (piece > n) piece = n;
        atomic_store(&node_of(first)->in_queue, 1);
        for (k = 1; k < piece; k++) {
            last = last->pool__next;
            atomic_store(&node_of(last)->in_queue, 1);
        }
        rest = last->pool__next; /* read before the push overwrites it */
        if (pool__injector_push(&r->q, first, last, &was_empty) != 0)
            atomic_fetch_add(&r->push_errors, 1);
        first = rest;
        n -= piece;
    }
}

static void *producer_main(void *arg) {
    worker_arg *wa = (worker_arg *)arg;
    reuse *r = wa->r;
    int64_t begin = r->count * wa->id / PRODUCERS, end = r->count * (wa->id + 1) / PRODUCERS;
    uint64_t rng = 0xABCDEF12345ULL + (uint64_t)wa->id;
    /* push own nodes in chunks of up to 64, yielding in between so the
       consumers are already recycling while producers still produce */
    while (begin < end) {
        int64_t chunk = end - begin < 64 ? end - begin : 64;
        link_chain(r->nodes, begin, begin + chunk - 1);
        push_pieces(r, &r->nodes[begin].task, chunk, &rng);
        begin += chunk;
        if (test_rand(&rng) % 4 == 0) sched_yield();
    }
    return NULL;
}

static void *consumer_main(void *arg) {
    worker_arg *wa = (worker_arg *)arg;
    reuse *r = wa->r;
    uint64_t rng = 0x5555AAAA1ULL + (uint64_t)wa->id * 31;
    while (atomic_load(&r->retired) < r->count && !atomic_load(&r->stop)) {
        pool_task *list = pool__injector_take_all(&r->q), *again = NULL, *again_tail = NULL;
        int64_t len = 0, again_len = 0;
        if (!list) {
            sched_yield();
            continue;
        }
        while (list) {
            pool_task *next;
            node *n = node_of(list);
            if (n < r->nodes || n >= r->nodes + r->count) {
                atomic_fetch_add(&r->bad_pointers, 1);
                break; /* cannot follow a bad link */
            }
            if (++len > r->count) {
                atomic_fetch_add(&r->cycles, 1);
                break;
            }
            next = list->pool__next;
            if (atomic_exchange(&n->in_queue, 0) != 1) atomic_fetch_add(&r->duplicates, 1);
            atomic_fetch_add(&r->taken, 1);
            if (atomic_fetch_add(&n->hops, 1) + 1 < HOPS) {
                /* re-push this very node: collect it on a chain */
                list->pool__next = NULL;
                if (again_tail) again_tail->pool__next = list;
                else again = list;
                again_tail = list;
                again_len++;
            } else {
                atomic_fetch_add(&r->retired, 1);
            }
            list = next;
        }
        if (again) push_pieces(r, again, again_len, &rng);
    }
    return NULL;
}

static void test_reuse(void) {
    reuse r;
    pthread_t threads[PRODUCERS + CONSUMERS];
    worker_arg args[PRODUCERS + CONSUMERS];
    int64_t i, wrong = 0;
    int k;
    double t0 = test_now(), deadline;
    memset(&r, 0, sizeof r);
    injector_init(&r.q);
    r.count = test_scaled(60000, 3000);
    r.nodes = make_nodes(r.count);
    printf("  concurrent reuse: %d producers, %d consumers re-pushing the same nodes,"
           " %" PRId64 " nodes x %d hops\n",
           PRODUCERS, CONSUMERS, r.count, HOPS);
    for (k = 0; k < PRODUCERS + CONSUMERS; k++) {
        args[k].r = &r;
        args[k].id = k < PRODUCERS ? k : k - PRODUCERS;
        if (pthread_create(&threads[k], NULL, k < PRODUCERS ? producer_main : consumer_main,
                           &args[k]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(2);
        }
    }
    /* A lost node would keep the consumers waiting for ever: give up when
       nothing has been taken for 10 s and report what is missing. */
    {
        long last_taken = -1;
        deadline = t0 + 10.0;
        while (atomic_load(&r.retired) < r.count && test_now() < deadline) {
            long taken = atomic_load(&r.taken);
            if (taken != last_taken) deadline = test_now() + 10.0;
            last_taken = taken;
            test_sleep_us(1000);
        }
    }
    atomic_store(&r.stop, 1);
    for (k = 0; k < PRODUCERS + CONSUMERS; k++) pthread_join(threads[k], NULL);

    for (i = 0; i < r.count; i++) {
        int h = atomic_load(&r.nodes[i].hops);
        if (h != HOPS) {
            if (wrong < 10)
                fprintf(stderr, "    node %" PRId64 " made %d hops, not %d\n", i, h, HOPS);
            wrong++;
        }
    }
    printf("    %ld takes in %.2f s\n", atomic_load(&r.taken), test_now() - t0);
    CHECK_EQ_I64(atomic_load(&r.retired), r.count);
    CHECK_EQ_I64(wrong, 0);
    CHECK_EQ_I64(atomic_load(&r.taken), r.count * HOPS);
    CHECK_EQ_I64(atomic_load(&r.duplicates), 0);
    CHECK_EQ_I64(atomic_load(&r.bad_pointers), 0);
    CHECK_EQ_I64(atomic_load(&r.cycles), 0);
    CHECK_EQ_I64(atomic_load(&r.push_errors), 0);
    CHECK(pool__injector_take_all(&r.q) == NULL);
    free(r.nodes);
}

/* ------------------------------------------------------------------------ */
/* Concurrent close                                                         */
/* ------------------------------------------------------------------------ */

typedef struct closing {
    pool__injector q;
    node *nodes;
    int64_t count;
    atomic_long accepted, rejected, taken, bad;
    atomic_int producers_left;
    atomic_long out_of_nodes;
} closing;

typedef struct close_arg {
    closing *c;
    int id;
} close_arg;

static void *close_producer(void *arg) {
    close_arg *ca = (close_arg *)arg;
    closing *c = ca->c;
    int64_t next = c->count * ca->id / PRODUCERS, end = c->count * (ca->id + 1) / PRODUCERS;
    uint64_t rng = 77 + (uint64_t)ca->id;
    for (;;) {
        int64_t piece = (int64_t)(test_rand(&rng) % 4) + 1, k;
        int was_empty, rc;
        if (next + piece > end) {
            atomic_fetch_add(&c->out_of_nodes, 1);
            break;
        }
        link_chain(c->nodes, next, next + piece - 1);
        rc = pool__injector_push(&c->q, &c->nodes[next].task, &c->nodes[next + piece - 1].task,
                                 &was_empty);
        if (rc == 0) {
            for (k = next; k < next + piece; k++) atomic_store(&c->nodes[k].accepted, 1);
            atomic_fetch_add(&c->accepted, piece);
        } else {
            CHECK_EQ_I64(rc, ECANCELED);
            atomic_fetch_add(&c->rejected, piece);
            break; /* closed for good */
        }
        next += piece;
    }
    atomic_fetch_sub(&c->producers_left, 1);
    return NULL;
}

static void drain(closing *c, pool_task *list) {
    int64_t len = 0;
    for (; list; list = list->pool__next) {
        node *n = node_of(list);
        if (n < c->nodes || n >= c->nodes + c->count || ++len > c->count) {
            atomic_fetch_add(&c->bad, 1);
            return;
        }
        atomic_fetch_add(&n->hops, 1);
        atomic_fetch_add(&c->taken, 1);
    }
}

static void *close_consumer(void *arg) {
    closing *c = (closing *)arg;
    while (atomic_load(&c->producers_left) > 0) {
        pool_task *list = pool__injector_take_all(&c->q);
        if (list) drain(c, list);
        else sched_yield();
    }
    return NULL;
}

static void test_concurrent_close(void) {
    closing c;
    pthread_t producers[PRODUCERS], consumer;
    close_arg args[PRODUCERS];
    int64_t i, wrong = 0;
    int k;
    memset(&c, 0, sizeof c);
    injector_init(&c.q);
    c.count = 1000000;
    c.nodes = make_nodes(c.count);
    atomic_init(&c.producers_left, PRODUCERS);
    printf("  concurrent close: %d producers push until ECANCELED while a consumer takes\n",
           PRODUCERS);
    for (k = 0; k < PRODUCERS; k++) {
        args[k].c = &c;
        args[k].id = k;
        pthread_create(&producers[k], NULL, close_producer, &args[k]);
    }
    pthread_create(&consumer, NULL, close_consumer, &c);
    /* close while the producers are in full swing */
    while (atomic_load(&c.accepted) < 1000) sched_yield();
    test_sleep_us(2000);
    pool__injector_close(&c.q);
    for (k = 0; k < PRODUCERS; k++) pthread_join(producers[k], NULL);
    pthread_join(consumer, NULL);
    /* what was pushed before the close and not yet taken */
    drain(&c, pool__injector_take_all(&c.q));
    CHECK(pool__injector_take_all(&c.q) == NULL);

    for (i = 0; i < c.count; i++) {
        int h = atomic_load(&c.nodes[i].hops), a = atomic_load(&c.nodes[i].accepted);
        if (h != a) {
            if (wrong < 10)
                fprintf(stderr, "    node %" PRId64 ": accepted %d, taken %d times\n", i, a, h);
            wrong++;
        }
    }
    printf("    accepted %ld, rejected %ld, taken %ld\n", atomic_load(&c.accepted),
           atomic_load(&c.rejected), atomic_load(&c.taken));
    if (atomic_load(&c.out_of_nodes))
        printf("    (a producer ran out of nodes before the close: close raced nothing)\n");
    CHECK_EQ_I64(wrong, 0);
    CHECK_EQ_I64(atomic_load(&c.taken), atomic_load(&c.accepted));
    CHECK_EQ_I64(atomic_load(&c.bad), 0);
    free(c.nodes);
}

int main(void) {
    test_watchdog(120, "test_injector");
    printf("test_injector: Treiber-stack injector\n");
    test_basic();
    test_close();
    test_reuse();
    test_concurrent_close();
    return test_finish("test_injector");
}
