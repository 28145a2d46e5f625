/* examples/render.c - a render loop on main that receives results from pool tasks: 32 tasks compute
 * tiles of a Mandelbrot set on the default pool, and each hands its finished tile to main through
 * main's inbox (a task pinned to main), because only main may touch the frame, as only the thread
 * that owns an OpenGL context may upload a texture. Each frame, main runs what arrived, then
 * "presents" the frame; it waits for the next post or the next frame's time, never spins: it
 * polls the inbox's handle, as a real loop would poll it beside its window system's descriptor
 * (pool_inbox_wait does the same when the inbox is all there is to wait for).
 *
 *     cc -O2 -pthread examples/render.c && ./a.out
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#ifndef _WIN32
#include <poll.h>
#endif

#define TILES 32 /* tiles of 8 rows by 8 columns: 4 rows of 8 tiles */
#define WIDTH 64
#define HEIGHT 32
#define FRAME_MS 16

struct tile {
    pool_task compute; /* runs on a worker */
    pool_task upload;  /* pinned to main: copies the pixels into the frame */
    int x0, y0;
    char pixels[8][8];
};

static pool_inbox main_inbox;
static char frame[HEIGHT][WIDTH + 1]; /* main's alone, like a GPU texture */
static int tiles_uploaded;

static void compute_run(pool_task *t) {
    struct tile *tl = (struct tile *)((char *)t - offsetof(struct tile, compute));
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++) {
            double cr = -2.2 + 3.0 * (tl->x0 + x) / WIDTH, ci = -1.2 + 2.4 * (tl->y0 + y) / HEIGHT;
            double zr = 0, zi = 0;
            int i = 0;
            for (; i < 500 && zr * zr + zi * zi < 4; i++) {
                double t2 = zr * zr - zi * zi + cr;
                zi = 2 * zr * zi + ci;
                zr = t2;
            }
            tl->pixels[y][x] = " .:-=+*#%@"[i == 500 ? 9 : i % 9];
        }
    /* Hand the tile to main; the upload sees the pixels written above. */
    if (pool_inbox_post(&main_inbox, &tl->upload) != 0) fprintf(stderr, "post failed\n");
}

static void upload_run(pool_task *t) { /* runs on main, inside pool_inbox_run */
    struct tile *tl = (struct tile *)((char *)t - offsetof(struct tile, upload));
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++) frame[tl->y0 + y][tl->x0 + x] = tl->pixels[y][x];
    tiles_uploaded++;
}

/* Waits until a task was posted to main's inbox or timeout_ms passed: on
   the inbox's handle, a descriptor (an event on Windows). Returns 0 or an
   errno value. */
static int wait_for_post(int timeout_ms) {
#ifdef _WIN32
    DWORD got = WaitForSingleObject((HANDLE)pool_inbox_handle(&main_inbox), (DWORD)timeout_ms);
    return got == WAIT_FAILED ? EIO : 0;
#else
    struct pollfd fd = {.fd = (int)pool_inbox_handle(&main_inbox), .events = POLLIN};
    return poll(&fd, 1, timeout_ms) < 0 && errno != EINTR ? errno : 0;
#endif
}

int main(void) {
    static struct tile tiles[TILES];
    int frames = 0;
    if (pool_inbox_init(&main_inbox) != 0) return 1; /* main owns it */
    for (int y = 0; y < HEIGHT; y++) {
        for (int x = 0; x < WIDTH; x++) frame[y][x] = '?';
        frame[y][WIDTH] = 0;
    }
    for (int i = 0; i < TILES; i++) {
        tiles[i] = (struct tile){.compute = POOL_TASK_INIT(compute_run),
                                 .upload = POOL_TASK_INIT(upload_run),
                                 .x0 = i % 8 * 8,
                                 .y0 = i / 8 * 8};
        if (pool_submit(NULL, &tiles[i].compute) != 0) compute_run(&tiles[i].compute);
    }
    while (tiles_uploaded < TILES) { /* the render loop */
        size_t ran;
        if (wait_for_post(FRAME_MS) != 0) return 1; /* a post, or the next frame is due */
        if (pool_inbox_run(&main_inbox, &ran) != 0) return 1;
        frames++; /* present the frame here: swap buffers */
        if (ran)
            printf("frame %d: %zu tile(s) arrived, %d of %d\n", frames, ran, tiles_uploaded, TILES);
    }
    for (int y = 0; y < HEIGHT; y++) printf("%s\n", frame[y]);
    printf("%d tiles in %d frames\n", TILES, frames);
    return pool_inbox_destroy(&main_inbox) != 0;
}
