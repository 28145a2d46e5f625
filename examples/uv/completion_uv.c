/* examples/uv/completion_uv.c - a libuv loop learns that pool tasks finished: a uv_poll_t watches
 * the completion queue's handle, and its callback drains the queue. The tasks sum slices of an
 * array on the default pool; the loop adds up the slices as they arrive and stops its watcher
 * when all have come, so that uv_run returns.
 *
 *     cc -O2 -pthread examples/uv/completion_uv.c -luv && ./a.out
 *
 * Needs libuv (Debian: libuv1-dev); tests/test_example_uv.sh builds and runs it, and says so
 * when libuv is missing. On Windows, watch the handle (an event) with a thread or a timer
 * instead: libuv polls sockets there, not events.
 */
#define POOL_IMPLEMENTATION
#include "../../pool.h"

#include <stddef.h>
#include <stdio.h>
#include <uv.h>

#define SLICES 32
#define PER_SLICE 100000

struct slice {
    pool_task task;
    pool_completion_item done;
    long first;
    long long sum;
};

static pool_completion finished;
static long long total;
static int arrived;

static void slice_run(pool_task *t) {
    struct slice *s = (struct slice *)((char *)t - offsetof(struct slice, task));
    for (long i = s->first; i < s->first + PER_SLICE; i++) s->sum += i;
    pool_completion_post(&finished, &s->done);
}

static void on_readable(uv_poll_t *watcher, int status, int events) {
    (void)events;
    if (status < 0) {
        fprintf(stderr, "uv_poll: %s\n", uv_strerror(status));
        uv_poll_stop(watcher);
        return;
    }
    for (pool_completion_item *it = pool_completion_drain(&finished); it; it = it->next) {
        total += ((struct slice *)((char *)it - offsetof(struct slice, done)))->sum;
        arrived++;
    }
    if (arrived == SLICES) uv_poll_stop(watcher); /* nothing left to watch: uv_run returns */
}

int main(void) {
    static struct slice slices[SLICES];
    uv_loop_t *loop = uv_default_loop();
    uv_poll_t watcher;
    long long n = (long long)SLICES * PER_SLICE;
    if (pool_completion_init(&finished) != 0) return 1;
    if (uv_poll_init(loop, &watcher, (int)pool_completion_handle(&finished)) != 0) return 1;
    uv_poll_start(&watcher, UV_READABLE, on_readable);
    for (int i = 0; i < SLICES; i++) {
        slices[i] = (struct slice){.task = POOL_TASK_INIT(slice_run), .first = (long)i * PER_SLICE};
        if (pool_submit(NULL, &slices[i].task) != 0) slice_run(&slices[i].task);
    }
    uv_run(loop, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&watcher, NULL);
    uv_run(loop, UV_RUN_DEFAULT);
    printf("%d slices arrived through libuv, sum %lld (expected %lld)\n", arrived, total,
           n * (n - 1) / 2);
    pool_completion_destroy(&finished);
    return total != n * (n - 1) / 2;
}
