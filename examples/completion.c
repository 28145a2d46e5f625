/* examples/completion.c - an event loop learns that pool tasks finished, without a thread parked
 * in a wait: 24 tasks compute rows of a Mandelbrot set on the default pool and post each finished
 * row to a completion queue; main() runs a poll() loop on the queue's handle (where a real program
 * would also poll its sockets or its window system) and draws each row as it arrives.
 *
 *     cc -O2 -pthread examples/completion.c && ./a.out
 *
 * POSIX (poll). On Windows the handle is an event: wait on it with WaitForMultipleObjects.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include <poll.h>
#include <stddef.h>
#include <stdio.h>

#define ROWS 24
#define COLS 64

struct row {
    pool_task task;            /* submitted to the pool */
    pool_completion_item done; /* posted when the row is computed */
    int y;
    char text[COLS + 1];
};

static pool_completion finished;

static void row_run(pool_task *t) {
    struct row *r = (struct row *)((char *)t - offsetof(struct row, task));
    for (int x = 0; x < COLS; x++) {
        double cr = -2.2 + 3.0 * x / COLS, ci = -1.2 + 2.4 * r->y / ROWS, zr = 0, zi = 0;
        int i = 0;
        while (i < 200 && zr * zr + zi * zi < 4) {
            double t2 = zr * zr - zi * zi + cr;
            zi = 2 * zr * zi + ci;
            zr = t2;
            i++;
        }
        r->text[x] = " .:-=+*#%@"[i == 200 ? 9 : i % 9];
    }
    r->text[COLS] = 0;
    pool_completion_post(&finished, &r->done); /* the loop sees it, and the text */
}

int main(void) {
    static struct row rows[ROWS];
    int drawn = 0, wakeups = 0;
    if (pool_completion_init(&finished) != 0) return 1;
    for (int y = 0; y < ROWS; y++) {
        rows[y] = (struct row){.task = POOL_TASK_INIT(row_run), .y = y};
        if (pool_submit(NULL, &rows[y].task) != 0) row_run(&rows[y].task); /* not taken */
    }
    struct pollfd pfd = {.fd = (int)pool_completion_handle(&finished), .events = POLLIN};
    while (drawn < ROWS) {
        if (poll(&pfd, 1, 5000) <= 0) return 1; /* nothing for 5 s: something is wrong */
        wakeups++;
        for (pool_completion_item *it = pool_completion_drain(&finished); it; it = it->next) {
            struct row *r = (struct row *)((char *)it - offsetof(struct row, done));
            printf("%2d %s\n", r->y, r->text);
            drawn++;
        }
    }
    printf("%d rows drawn in %d wake-ups of the loop\n", drawn, wakeups);
    pool_completion_destroy(&finished);
    return 0;
}
