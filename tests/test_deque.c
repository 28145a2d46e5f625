/* test_deque.c - the Chase-Lev deque inside pool.h.
 *
 * Single-threaded: LIFO pop, FIFO steal, empty behaviour, growth from
 * capacity 2 (also with the live range wrapped around the buffer), and a
 * random interleaving of push/pop/steal checked against a reference model.
 *
 * Concurrent: one owner pushes and pops (random mix) about 2 million items
 * while 3 thieves steal; each round starts at capacity 4 so growth races
 * with the thieves many times. Every item must be taken exactly once, and
 * each thief must see strictly increasing items (a steal takes the oldest
 * item present, and every later item is newer).
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

typedef struct item {
    pool_task task;
    int64_t index;
} item;

static item *item_of(pool_task *t) { return (item *)((char *)t - offsetof(item, task)); }

static item *make_items(int64_t n) {
    item *items = (item *)calloc((size_t)n, sizeof *items);
    int64_t i;
    if (!items) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    for (i = 0; i < n; i++) items[i].index = i;
    return items;
}

/* Index of the task, or -1 for NULL. */
static int64_t idx(pool_task *t) { return t ? item_of(t)->index : -1; }

static void test_empty(void) {
    pool__deque d;
    int contended = 0;
    printf("  empty deque: pop and steal return NULL, steal reports no contention\n");
    CHECK(pool__deque_init(&d, 2, NULL) == 0);
    CHECK(pool__deque_pop(&d) == NULL);
    CHECK(pool__deque_steal(&d, 0, &contended) == NULL);
    CHECK(contended == 0);
    /* emptied again after use */
    {
        item *items = make_items(3);
        CHECK(pool__deque_push(&d, &items[0].task) == 0);
        CHECK(pool__deque_pop(&d) == &items[0].task);
        CHECK(pool__deque_pop(&d) == NULL);
        CHECK(pool__deque_push(&d, &items[1].task) == 0);
        CHECK(pool__deque_steal(&d, 0, &contended) == &items[1].task);
        CHECK(pool__deque_steal(&d, 0, &contended) == NULL);
        CHECK(pool__deque_pop(&d) == NULL);
        CHECK(contended == 0);
        free(items);
    }
    pool__deque_destroy(&d);
}

static void test_lifo_fifo(void) {
    pool__deque d;
    item *items = make_items(10);
    int contended = 0;
    int i;
    printf("  pop is LIFO, steal is FIFO\n");
    CHECK(pool__deque_init(&d, 16, NULL) == 0);
    for (i = 0; i < 10; i++) CHECK(pool__deque_push(&d, &items[i].task) == 0);
    for (i = 9; i >= 0; i--) CHECK_EQ_I64(idx(pool__deque_pop(&d)), i);
    CHECK(pool__deque_pop(&d) == NULL);

    for (i = 0; i < 10; i++) CHECK(pool__deque_push(&d, &items[i].task) == 0);
    for (i = 0; i < 10; i++) CHECK_EQ_I64(idx(pool__deque_steal(&d, 0, &contended)), i);
    CHECK(pool__deque_steal(&d, 0, &contended) == NULL);
    CHECK(contended == 0);

    /* both ends of the same contents */
    for (i = 0; i < 10; i++) CHECK(pool__deque_push(&d, &items[i].task) == 0);
    CHECK_EQ_I64(idx(pool__deque_steal(&d, 0, &contended)), 0);
    CHECK_EQ_I64(idx(pool__deque_pop(&d)), 9);
    CHECK_EQ_I64(idx(pool__deque_steal(&d, 0, &contended)), 1);
    CHECK_EQ_I64(idx(pool__deque_pop(&d)), 8);
    for (i = 2; i < 8; i++) CHECK_EQ_I64(idx(pool__deque_steal(&d, 0, &contended)), i);
    CHECK(pool__deque_pop(&d) == NULL);
    CHECK(contended == 0);
    pool__deque_destroy(&d);
    free(items);
}

static void test_growth(void) {
    const int64_t n = 100000;
    pool__deque d;
    item *items = make_items(n);
    int contended = 0;
    int64_t i, next_steal, next_pop;
    printf("  growth from capacity 2 to %" PRId64 " items keeps the exact order\n", n);
    CHECK(pool__deque_init(&d, 2, NULL) == 0);
    for (i = 0; i < n; i++) CHECK(pool__deque_push(&d, &items[i].task) == 0);
    /* oldest half from the top, the rest from the bottom */
    for (i = 0; i < n / 2; i++) CHECK_EQ_I64(idx(pool__deque_steal(&d, 0, &contended)), i);
    for (i = n - 1; i >= n / 2; i--) CHECK_EQ_I64(idx(pool__deque_pop(&d)), i);
    CHECK(pool__deque_pop(&d) == NULL);
    CHECK(pool__deque_steal(&d, 0, &contended) == NULL);
    CHECK(contended == 0);
    pool__deque_destroy(&d);

    /* Growth while the live range is wrapped around the buffer: push 3,
       steal 2 advances top, so every growth copies from a different
       offset. Steals must still come out in push order. */
    printf("  growth with the live range wrapped around the buffer\n");
    CHECK(pool__deque_init(&d, 2, NULL) == 0);
    next_steal = 0;
    i = 0;
    while (i + 3 <= n) {
        int k;
        for (k = 0; k < 3; k++, i++) CHECK(pool__deque_push(&d, &items[i].task) == 0);
        for (k = 0; k < 2; k++)
            CHECK_EQ_I64(idx(pool__deque_steal(&d, 0, &contended)), next_steal++);
    }
    /* left: [next_steal, i), pop takes it newest first */
    for (next_pop = i - 1; next_pop >= next_steal; next_pop--)
        CHECK_EQ_I64(idx(pool__deque_pop(&d)), next_pop);
    CHECK(pool__deque_pop(&d) == NULL);
    CHECK(contended == 0);
    pool__deque_destroy(&d);
    free(items);
}

/* Random push/pop/steal against a reference array deque. */
static void test_model(void) {
    const int64_t n = 200000;
    pool__deque d;
    item *items = make_items(n);
    int64_t *model = (int64_t *)malloc((size_t)n * sizeof *model);
    int64_t top = 0, bottom = 0, pushed = 0, ops = 0;
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    int contended = 0;
    printf("  random interleaving of push/pop/steal matches a model (%" PRId64 " items)\n", n);
    CHECK(pool__deque_init(&d, 2, NULL) == 0);
    while (pushed < n || bottom > top) {
        uint64_t r = test_rand(&rng) % 100;
        ops++;
        if (pushed < n && r < 50) {
            CHECK(pool__deque_push(&d, &items[pushed].task) == 0);
            model[bottom++] = pushed++;
        } else if (r < 75) {
            int64_t expect = bottom > top ? model[--bottom] : -1;
            int64_t got = idx(pool__deque_pop(&d));
            if (got != expect) {
                CHECK_EQ_I64(got, expect);
                break;
            }
        } else {
            int64_t expect = bottom > top ? model[top++] : -1;
            int64_t got = idx(pool__deque_steal(&d, 0, &contended));
            if (got != expect) {
                CHECK_EQ_I64(got, expect);
                break;
            }
        }
        /* keep the model compact so it never runs off the array */
        if (top == bottom) top = bottom = 0;
    }
    CHECK(pool__deque_pop(&d) == NULL);
    CHECK(contended == 0);
    printf("    %" PRId64 " operations\n", ops);
    pool__deque_destroy(&d);
    free(model);
    free(items);
}

/* ------------------------------------------------------------------------ */
/* Concurrent stress                                                        */
/* ------------------------------------------------------------------------ */

#define THIEVES 3

typedef struct stress {
    pool__deque deque;
    item *items;
    int64_t first, count; /* this round's items: [first, first + count) */
    atomic_uchar *taken;  /* per item, over all rounds */
    atomic_int owner_done;
    atomic_long stolen[THIEVES];
    atomic_long order_errors;
    atomic_long out_of_range;
    atomic_long contended;
    int64_t popped;
    uint64_t seed;
} stress;

typedef struct thief_arg {
    stress *s;
    int id;
} thief_arg;

static void take(stress *s, pool_task *t) {
    int64_t i = idx(t);
    if (i < s->first || i >= s->first + s->count) {
        atomic_fetch_add(&s->out_of_range, 1);
        return;
    }
    atomic_fetch_add(&s->taken[i], 1);
}

static void *thief_main(void *arg) {
    thief_arg *ta = (thief_arg *)arg;
    stress *s = ta->s;
    int64_t last = -1;
    long stolen = 0, contended_count = 0;
    for (;;) {
        /* Read done before stealing: if the owner had finished (and seen
           the deque empty) before this steal, an empty steal means empty
           for good. */
        int done = atomic_load(&s->owner_done);
        int contended = 0;
        pool_task *t = pool__deque_steal(&s->deque, 0, &contended);
        if (t) {
            int64_t i = idx(t);
            if (i <= last) atomic_fetch_add(&s->order_errors, 1);
            last = i;
            take(s, t);
            stolen++;
        } else if (contended) {
            contended_count++;
        } else if (done) {
            break;
        }
    }
    atomic_store(&s->stolen[ta->id], stolen);
    atomic_fetch_add(&s->contended, contended_count);
    return NULL;
}

/* The owner: a random mix of pushes and pops (slightly more pushes), so
   the deque is often down to its last item and pop races the thieves for
   it, plus an occasional burst of up to 4096 pushes. Each round starts with
   a burst, so the buffer grows from 4 upwards while the thieves run. */
static void owner_run(stress *s) {
    int64_t next = s->first, end = s->first + s->count;
    int64_t popped = 0;
    pool_task *t;
    int64_t burst = 1024;
    while (next < end) {
        uint64_t r = test_rand(&s->seed);
        if (burst == 0 && r % 2000 == 0) burst = (int64_t)(r >> 32) % 4096 + 1;
        if (burst > 0 || r % 100 < 55) {
            if (burst > 0) burst--;
            if (pool__deque_push(&s->deque, &s->items[next].task) != 0) {
                CHECK(!"pool__deque_push failed");
                break;
            }
            next++;
        } else if ((t = pool__deque_pop(&s->deque)) != NULL) {
            take(s, t);
            popped++;
        }
    }
    while ((t = pool__deque_pop(&s->deque)) != NULL) {
        take(s, t);
        popped++;
    }
    s->popped = popped;
    atomic_store(&s->owner_done, 1);
}

static void test_concurrent(void) {
    const int64_t total = test_scaled(2000000, 20000);
    const int rounds = 100;
    item *items = make_items(total);
    atomic_uchar *taken = (atomic_uchar *)calloc((size_t)total, sizeof *taken);
    int64_t i, sum = 0, wrong = 0, popped = 0, stolen = 0;
    long out_of_range = 0, order_errors = 0, contended = 0;
    int r;
    double t0 = test_now();
    printf("  concurrent: 1 owner (push/pop) + %d thieves, %" PRId64 " items in %d rounds,"
           " each from capacity 4\n",
           THIEVES, total, rounds);
    for (i = 0; i < total; i++) atomic_init(&taken[i], 0);
    for (r = 0; r < rounds; r++) {
        stress s;
        pthread_t threads[THIEVES];
        thief_arg args[THIEVES];
        int k;
        memset(&s, 0, sizeof s);
        s.items = items;
        s.taken = taken;
        s.first = total * r / rounds;
        s.count = total * (r + 1) / rounds - s.first;
        s.seed = 0x1234567ULL + (uint64_t)r * 7919;
        atomic_init(&s.owner_done, 0);
        CHECK(pool__deque_init(&s.deque, 4, NULL) == 0);
        for (k = 0; k < THIEVES; k++) {
            args[k].s = &s;
            args[k].id = k;
            atomic_init(&s.stolen[k], 0);
            if (pthread_create(&threads[k], NULL, thief_main, &args[k]) != 0) {
                fprintf(stderr, "pthread_create failed\n");
                exit(2);
            }
        }
        owner_run(&s);
        for (k = 0; k < THIEVES; k++) {
            pthread_join(threads[k], NULL);
            stolen += atomic_load(&s.stolen[k]);
        }
        popped += s.popped;
        out_of_range += atomic_load(&s.out_of_range);
        order_errors += atomic_load(&s.order_errors);
        contended += atomic_load(&s.contended);
        pool__deque_destroy(&s.deque);
    }
    for (i = 0; i < total; i++) {
        int v = atomic_load(&taken[i]);
        sum += v;
        if (v != 1) {
            if (wrong < 10) fprintf(stderr, "    item %" PRId64 " taken %d times\n", i, v);
            wrong++;
        }
    }
    printf("    popped %" PRId64 ", stolen %" PRId64 ", lost races %ld, %.2f s\n", popped, stolen,
           contended, test_now() - t0);
    CHECK_EQ_I64(wrong, 0);
    CHECK_EQ_I64(sum, total);
    CHECK_EQ_I64(popped + stolen, total);
    CHECK_EQ_I64(out_of_range, 0);
    CHECK_EQ_I64(order_errors, 0);
    free(taken);
    free(items);
}

int main(void) {
    test_watchdog(120, "test_deque");
    printf("test_deque: Chase-Lev deque\n");
    test_empty();
    test_lifo_fifo();
    test_growth();
    test_model();
    test_concurrent();
    return test_finish("test_deque");
}
