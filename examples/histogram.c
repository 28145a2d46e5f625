/* examples/histogram.c - per-thread scratch, priorities, a smaller pool for a while, and
 * fire-and-forget tasks, on a byte histogram of a 16 MiB buffer:
 *
 *   1. a scope of 64 chunk tasks, each adding its chunk into the histogram of the thread that
 *      runs it: one histogram per pool_worker_index(), sized by pool_worker_index_limit() (and
 *      one for main outside the pool), so no task needs a lock or an atomic. The first chunk
 *      is a preview the program wants first: it is spawned at high priority, ahead of the
 *      chunks queued before it;
 *   2. the same with the pool lowered to one active thread (pool_set_active_threads), as a
 *      program that leaves its other CPUs to something else for a while would, then raised
 *      again: the histogram is the same;
 *   3. four detached tasks (pool_submit_batch), each summing a quarter of the byte values;
 *      nobody waits for them but pool_destroy, which runs all accepted work to completion.
 *
 *     cc -O2 -pthread examples/histogram.c && ./a.out
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE ((size_t)16 << 20)
#define CHUNKS 64
#define CHUNK (SIZE / CHUNKS)
#define QUARTERS 4

typedef struct histogram {
    uint64_t count[256];
} histogram;

static unsigned char *buffer;
static histogram *per_thread; /* pool_worker_index_limit(p) + 1 of them */
static int outside;           /* the last one's index: for main outside the pool */

struct chunk {
    pool_task task; /* first: the task's address is the chunk's */
    size_t begin;
};

static void chunk_run(pool_task *t) {
    struct chunk *c = (struct chunk *)t;
    /* A thread of the pool, or an outside caller working in one of its
       external slots (pool_scope_wait helps): each has an index of its own.
       -1 is main outside them: with no slot free, or running a spawn at once
       (with $POOL_SPAWN_THROTTLE_OUTSIDE=1); it is the only outside thread. */
    int index = pool_worker_index();
    histogram *h = &per_thread[index < 0 ? outside : index];
    size_t i;
    for (i = c->begin; i < c->begin + CHUNK; i++) h->count[buffer[i]]++;
}

/* Histograms the buffer on p into *out; returns 0 or an errno value. */
static int histogram_of(pool *p, histogram *out) {
    static struct chunk chunks[CHUNKS];
    int threads = pool_worker_index_limit(p) + 1, i, k, rc = 0;
    pool_scope s;
    memset(per_thread, 0, (size_t)threads * sizeof *per_thread);
    pool_scope_init(&s, p);
    for (i = 1; i < CHUNKS && !rc; i++) {
        chunks[i].task = (pool_task)POOL_TASK_INIT(chunk_run);
        chunks[i].begin = (size_t)i * CHUNK;
        rc = pool_scope_spawn(&s, &chunks[i].task);
    }
    chunks[0].task = (pool_task)POOL_TASK_INIT(chunk_run); /* the preview: first in line */
    chunks[0].begin = 0;
    if (!rc) rc = pool_scope_spawn_priority(&s, &chunks[0].task, POOL_PRIORITY_HIGH);
    pool_scope_wait(&s); /* also after an error: what was spawned has run */
    memset(out, 0, sizeof *out);
    for (i = 0; i < threads; i++)
        for (k = 0; k < 256; k++) out->count[k] += per_thread[i].count[k];
    return rc;
}

struct quarter {
    pool_task task; /* first */
    const histogram *h;
    int first;    /* byte values first .. first + 63 */
    uint64_t sum; /* their counts */
};

static void quarter_run(pool_task *t) {
    struct quarter *q = (struct quarter *)t;
    int k;
    for (k = q->first; k < q->first + 256 / QUARTERS; k++) q->sum += q->h->count[k];
}

int main(void) {
    static histogram all, again;
    struct quarter quarters[QUARTERS];
    pool_task *batch[QUARTERS];
    pool *p = NULL;
    uint64_t total = 0, state = 88172645463325252ull;
    size_t i;
    int k, busiest = 0, rc;

    if (pool_create(&p, NULL) != 0) return 1;
    buffer = malloc(SIZE);
    outside = pool_worker_index_limit(p);
    per_thread = calloc((size_t)outside + 1, sizeof *per_thread);
    if (!buffer || !per_thread) return 1;
    for (i = 0; i < SIZE; i++) { /* xorshift64, squared for a lopsided histogram */
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        buffer[i] = (unsigned char)((state & 0xff) * (state & 0xff) >> 8);
    }

    if ((rc = histogram_of(p, &all)) != 0) {
        printf("a spawn failed: %d\n", rc);
        return 1;
    }
    for (k = 0; k < 256; k++) busiest = all.count[k] > all.count[busiest] ? k : busiest;
    printf("%d threads (per-thread histograms: %d): byte %d is the most common, %llu times\n",
           pool_active_threads(p), outside + 1, busiest, (unsigned long long)all.count[busiest]);

    if (pool_set_active_threads(p, 1) != 0) return 1;
    rc = histogram_of(p, &again);
    printf("with %d active thread: %s\n", pool_active_threads(p),
           !rc && memcmp(&all, &again, sizeof all) == 0 ? "the same histogram" : "different!");
    if (rc || memcmp(&all, &again, sizeof all) != 0) return 1;
    if (pool_set_active_threads(p, pool_num_threads(p)) != 0) return 1;

    for (k = 0; k < QUARTERS; k++) {
        quarters[k].task = (pool_task)POOL_TASK_INIT(quarter_run);
        quarters[k].h = &all;
        quarters[k].first = k * (256 / QUARTERS);
        quarters[k].sum = 0;
        batch[k] = &quarters[k].task;
    }
    if (pool_submit_batch(p, batch, QUARTERS) != 0) return 1;
    if (pool_destroy(p) != 0) return 1; /* runs the batch first */
    for (k = 0; k < QUARTERS; k++) {
        printf("bytes %3d-%3d: %llu\n", quarters[k].first, quarters[k].first + 256 / QUARTERS - 1,
               (unsigned long long)quarters[k].sum);
        total += quarters[k].sum;
    }
    free(per_thread);
    free(buffer);
    return total == SIZE ? 0 : 1;
}
