/* examples/fib.c -- fork-join with pool_join, in one page.
 *
 * Build and run from the repository root:
 *     cc -O2 -pthread examples/fib.c && ./a.out        fib(30) on the default pool
 *     ./a.out 32 4                                     fib(32) on a pool of 4 threads
 *
 * pool_join(p, a, a_arg, b, b_arg) runs a(a_arg) and b(b_arg), possibly at the same time on two
 * threads, and returns once both are done. Idle workers "steal" the half the caller has not
 * started yet; if nobody does, the caller simply runs it too. So a join costs about as much as a
 * few function calls (bench/fib.c measures it), and recursive code can fork at every level.
 */
#define POOL_IMPLEMENTATION /* in exactly one .c file of a program: compile the implementation */
#include "../pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A pool_fn takes one void *, so the input, the output and the pool travel in one struct. It can
 * live on the stack: pool_join does not return before both halves have finished with it. */
struct fib {
    pool *pool;
    int n;
    long long result;
};

static void fib(void *arg) {
    struct fib *f = arg;
    if (f->n < 2) {
        f->result = f->n;
        return;
    }
    struct fib a = {f->pool, f->n - 1, 0};
    struct fib b = {f->pool, f->n - 2, 0};
    pool_join(f->pool, fib, &a, fib, &b); /* fork both halves, wait for both */
    f->result = a.result + b.result;      /* safe: both halves are finished here */
    /* Real code would stop forking below some small n and recurse serially; this example forks
     * at every call on purpose, to show that pool_join is cheap enough for that. */
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 30;
    int threads = argc > 2 ? atoi(argv[2]) : 0;
    pool *p =
        NULL; /* NULL is the process-wide default pool: one thread per CPU, made on first use */
    struct timespec t0, t1;

    if (n < 0 ||
        n > 90) { /* fib(92) is the last that fits in a long long; this is slow long before */
        fprintf(stderr, "usage: %s [n (0..90)] [threads]\n", argv[0]);
        return 2;
    }
    if (threads > 0) { /* ask for an explicit pool instead; a zeroed config means "all defaults" */
        pool_config cfg = {0};
        cfg.num_threads = threads;
        int err = pool_create(&p, &cfg); /* errors come back as errno values, never printed */
        if (err) {
            fprintf(stderr, "pool_create: %s\n", strerror(err));
            return 1;
        }
    }

    struct fib root = {p, n, 0};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fib(&root); /* pool_join works from any thread: here main() hands the work to the pool */
    clock_gettime(CLOCK_MONOTONIC, &t1);

    printf("fib(%d) = %lld on %d thread(s) in %.1f ms\n", n, root.result, pool_num_threads(p),
           (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    if (p)
        pool_destroy(
            p); /* finishes any remaining work and joins the threads; NULL is not destroyed */
    return 0;
}
