/* examples/quicksort.c -- divide and conquer with pool_join.
 *
 * Build and run from the repository root:
 *     cc -O2 -pthread examples/quicksort.c && ./a.out          10 million numbers, default pool
 *     ./a.out 1000000 2                                        1 million numbers, 2 threads
 *
 * Quicksort splits an array around a pivot into two parts that no longer touch each other, so
 * they can be sorted at the same time: that is exactly what pool_join is for. Partitioning itself
 * stays serial, which is why the first levels are the slow part and the speed-up is below the
 * number of threads.
 */
#define POOL_IMPLEMENTATION /* in exactly one .c file of a program: compile the implementation */
#include "../pool.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define INSERTION_SORT_BELOW 32 /* tiny ranges: insertion sort beats both recursion and a join */

/* Everything a pool_fn needs travels in one struct, which may live on the caller's stack. */
struct sort_job {
    pool *pool;
    uint32_t *a;
    size_t n;
};

static void swap(uint32_t *x, uint32_t *y) {
    uint32_t t = *x;
    *x = *y;
    *y = t;
}

static void insertion_sort(uint32_t *a, size_t n) {
    for (size_t i = 1; i < n; i++) {
        uint32_t v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Hoare partition around the median of the first, middle and last element (n >= 2). Returns k
 * with 0 < k < n such that every a[0..k) <= every a[k..n): both parts are non-empty, so the
 * recursion always makes progress, and runs of equal keys are split evenly. */
static size_t partition(uint32_t *a, size_t n) {
    size_t mid = (n - 1) / 2;
    if (a[mid] < a[0]) swap(&a[mid], &a[0]);
    if (a[n - 1] < a[0]) swap(&a[n - 1], &a[0]);
    if (a[n - 1] < a[mid]) swap(&a[n - 1], &a[mid]);

    uint32_t pivot = a[mid];
    size_t i = 0, j = n - 1;
    for (;;) {
        while (a[i] < pivot) i++;
        while (a[j] > pivot) j--;
        if (i >= j) return j + 1;
        swap(&a[i++], &a[j--]);
    }
}

static void quicksort(void *arg) {
    struct sort_job *job = arg;
    if (job->n < INSERTION_SORT_BELOW) {
        insertion_sort(job->a, job->n);
        return;
    }
    size_t k = partition(job->a, job->n);
    struct sort_job left = {job->pool, job->a, k};
    struct sort_job right = {job->pool, job->a + k, job->n - k};
    /* Sort both halves, possibly in parallel. The two jobs work on disjoint parts of the array, so
     * they need no locks; pool_join returns only after both are sorted. */
    pool_join(job->pool, quicksort, &left, quicksort, &right);
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 10000000;
    int threads = argc > 2 ? atoi(argv[2]) : 0;
    pool *p = NULL; /* NULL: the process-wide default pool */
    uint32_t *a = malloc((n ? n : 1) * sizeof *a);
    uint64_t sum_before = 0, sum_after = 0, x = 42; /* fixed seed: the same input every run */
    struct timespec t0, t1;

    if (!a) {
        fprintf(stderr, "out of memory for %zu numbers\n", n);
        return 1;
    }
    for (size_t i = 0; i < n; i++) { /* xorshift64: cheap, deterministic pseudo-random input */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        a[i] = (uint32_t)(x >> 32);
        sum_before += a[i];
    }
    if (threads > 0) {
        pool_config cfg = {0};
        cfg.num_threads = threads;
        int err = pool_create(&p, &cfg);
        if (err) {
            fprintf(stderr, "pool_create: %s\n", strerror(err));
            return 1;
        }
    }

    struct sort_job all = {p, a, n};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pool_call(p, quicksort, &all); /* run the root on the pool and wait for the whole sort */
    clock_gettime(CLOCK_MONOTONIC, &t1);

    /* Check the result: ascending order, and the same numbers (same sum) as before. */
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && a[i - 1] > a[i]) {
            fprintf(stderr, "NOT SORTED at index %zu: %u > %u\n", i, a[i - 1], a[i]);
            return 1;
        }
        sum_after += a[i];
    }
    if (sum_after != sum_before) {
        fprintf(stderr, "sorted array has lost or changed elements\n");
        return 1;
    }
    printf("sorted %zu numbers on %d thread(s) in %.1f ms: verified\n", n, pool_num_threads(p),
           (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    if (p) pool_destroy(p);
    free(a);
    return 0;
}
