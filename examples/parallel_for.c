/* examples/parallel_for.c -- loops with pool_parallel_for and pool_parallel_reduce, and what
 * `grain` means.
 *
 * Build and run from the repository root:
 *     cc -O2 -pthread examples/parallel_for.c && ./a.out
 *
 * pool_parallel_for(p, begin, end, grain, body, arg) calls body(arg, lo, hi) on sub-ranges
 * [lo, hi) that together cover [begin, end) exactly once, possibly on several threads at the same
 * time, and returns when all of them are done. The range is halved recursively with pool_join, so
 * idle workers steal the halves nobody has started yet. pool_parallel_reduce is the same loop
 * with a result: each piece folds into a partial result of its own, and neighbours are combined.
 *
 * `grain` says how far to cut:
 *   grain > 0  halve while a piece is longer than grain: every body call gets at most grain
 *              indices (and about half as many or more, unless the whole range is shorter). Use it
 *              when few indices carry a lot of work each, or a very uneven amount: grain 1 lets
 *              any idle worker steal any single index. It also bounds what one call receives,
 *              to fit a per-call buffer for instance.
 *   grain 0    adaptive: a few pieces per thread to begin with, and a piece is cut further only
 *              when it is stolen, that is, when some worker was idle enough to take it. Use it for
 *              many cheap indices, or whenever in doubt: it costs a handful of joins, not one per
 *              index, and still splits where the work turns out to be.
 */
#define POOL_IMPLEMENTATION /* in exactly one .c file of a program: compile the implementation */
#include "../pool.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double ms_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* ---- 1. Mandelbrot set: 24 rows of very different cost, grain 1 ---- */

#define WIDTH 64
#define HEIGHT 24
/* A point inside the set costs all of these; one far outside, one or two. */
#define MAX_ITER 20000

/* The argument every body call shares. Calls write disjoint rows, so they need no lock; `calls`
 * is written by all of them, so it is atomic. */
struct image {
    char rows[HEIGHT][WIDTH + 1];
    atomic_int calls;
};

static void mandelbrot_rows(void *arg, size_t lo, size_t hi) {
    static const char shade[] = " .:-=+*%#"; /* by how fast the point escapes */
    struct image *img = arg;
    atomic_fetch_add_explicit(&img->calls, 1, memory_order_relaxed);
    for (size_t y = lo; y < hi; y++) {
        double ci = 1.2 - 2.4 * (double)y / (HEIGHT - 1);
        for (size_t x = 0; x < WIDTH; x++) {
            double cr = -2.1 + 2.7 * (double)x / (WIDTH - 1), zr = 0, zi = 0;
            int i = 0;
            while (i < MAX_ITER && zr * zr + zi * zi <= 4) {
                double t = zr * zr - zi * zi + cr;
                zi = 2 * zr * zi + ci;
                zr = t;
                i++;
            }
            img->rows[y][x] = i == MAX_ITER ? '@' : shade[i < 16 ? i / 2 : 8];
        }
        img->rows[y][WIDTH] = '\0';
    }
}

/* ---- 2. Sum of squares over 10 million numbers, grain 0 ---- */

#define N 10000000u

/* Unsigned arithmetic wraps modulo 2^64: the true sum (about 3.3e20) does not fit, but the sum
 * mod 2^64 is exact, and, unlike a floating-point sum, it does not depend on how the range was
 * cut or in which order the pieces were added. */
struct squares {
    uint32_t *x;
    atomic_int calls;
};

static void fill(void *arg, size_t lo, size_t hi) {
    struct squares *sq = arg;
    for (size_t i = lo; i < hi; i++) sq->x[i] = (uint32_t)i + 1; /* the numbers 1..N */
}

/* The reduction's fold: adds x[lo..hi) into this piece's own partial sum, no atomics. */
static void add_squares(void *arg, void *acc, size_t lo, size_t hi) {
    struct squares *sq = arg;
    uint64_t *sum = acc;
    for (size_t i = lo; i < hi; i++) *sum += (uint64_t)sq->x[i] * sq->x[i];
    atomic_fetch_add_explicit(&sq->calls, 1, memory_order_relaxed); /* only to print the count */
}

/* ... and its combine: the partial sum of the piece after acc's into acc. */
static void add(void *arg, void *acc, const void *later) {
    (void)arg;
    *(uint64_t *)acc += *(const uint64_t *)later;
}

/* 1^2 + ... + n^2 = n(n+1)(2n+1)/6, mod 2^64: divide the factors first, so that the division
 * stays exact, and only then multiply (and wrap). */
static uint64_t sum_squares_formula(uint64_t n) {
    uint64_t a = n, b = n + 1, c = 2 * n + 1;
    if (a % 2 == 0) a /= 2;
    else b /= 2;
    if (a % 3 == 0) a /= 3;
    else if (b % 3 == 0) b /= 3;
    else c /= 3;
    return a * b * c;
}

int main(void) {
    pool *p = NULL; /* NULL: the process-wide default pool, one thread per CPU, made on first use */
    struct timespec t0;

    /* Grain 1: each body call gets one row. The rows through the middle of the set cost thousands
     * of times more than those at the edges; with bigger pieces, one piece may hold most of the
     * work while the other threads have nothing left to steal. 24 rows cost 23 joins: nothing.
     * Grain 0 would adapt too, but only once steals reveal the imbalance; when the items are few
     * and costly, say so. */
    static struct image img, check; /* static: zeroed, and off the stack */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pool_parallel_for(p, 0, HEIGHT, 1, mandelbrot_rows, &img);
    double mandel_ms = ms_since(&t0);

    /* A body is an ordinary function: called on the whole range, it is the serial loop. */
    mandelbrot_rows(&check, 0, HEIGHT);
    if (memcmp(img.rows, check.rows, sizeof img.rows) != 0) {
        fprintf(stderr, "the parallel image differs from the serial one\n");
        return 1;
    }
    for (int y = 0; y < HEIGHT; y++) puts(img.rows[y]);
    printf("mandelbrot %dx%d on %d thread(s): %d body calls (grain 1), %.1f ms, matches a serial "
           "loop\n",
           WIDTH, HEIGHT, pool_num_threads(p), atomic_load(&img.calls), mandel_ms);

    /* Grain 0: ten million iterations of one multiply-add each. Grain 1 would mean ten million
     * body calls and as many joins, far more work than the loop itself. */
    struct squares sq;
    sq.x = malloc(N * sizeof *sq.x);
    if (!sq.x) {
        fprintf(stderr, "out of memory for %u numbers\n", N);
        return 1;
    }
    atomic_init(&sq.calls, 0);
    pool_parallel_for(p, 0, N, 0, fill, &sq); /* writes to disjoint indices need no lock */
    static const uint64_t zero = 0;
    pool_reducer sum_of_squares = {sizeof zero, &zero, add_squares, add};
    uint64_t sum;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pool_parallel_reduce(p, 0, N, 0, &sum_of_squares, &sq, &sum);
    double sum_ms = ms_since(&t0);
    free(sq.x);

    uint64_t expected = sum_squares_formula(N);
    if (sum != expected) {
        fprintf(stderr, "sum of squares: got %llu, expected %llu\n", (unsigned long long)sum,
                (unsigned long long)expected);
        return 1;
    }
    printf("sum of squares 1..%u = %llu (mod 2^64), matches n(n+1)(2n+1)/6\n", N,
           (unsigned long long)sum);
    printf("  %d fold calls (grain 0), %.1f ms\n", atomic_load(&sq.calls), sum_ms);
    return 0;
}
