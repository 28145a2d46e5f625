/* options.c - the compile-time options: POOL_MALLOC and POOL_FREE with a
 * user context, and POOL_ASSERT with POOL_DEBUG. Every allocation of a pool
 * created with cfg.user = &counter goes through the counting allocator with
 * that pointer; after pool_destroy the count is back to zero. The invariant
 * checks that POOL_DEBUG compiles in report through the POOL_ASSERT given
 * here, which counts them. */
#include <stddef.h> /* a compiler header: pool.h must still come before any libc header */

/* The allocator is declared before pool.h and defined after it: with a
   strict -std=c99, pool.h has to come before the C library's headers so
   that the POSIX it enables takes effect. */
static void *port_malloc(size_t size, void *user);
static void port_free(void *ptr, void *user);
static void port_assert_failed(const char *what);
static long asserts_checked;

#define POOL_MALLOC(size, user) port_malloc((size), (user))
#define POOL_FREE(ptr, user) port_free((ptr), (user))
#define POOL_ASSERT(x) \
    ((x) ? (void)__atomic_fetch_add(&asserts_checked, 1, __ATOMIC_RELAXED) : port_assert_failed(#x))
#define POOL_DEBUG
#define POOL_IMPLEMENTATION
#include "pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct port_alloc {
    long live, total;
} port_alloc;

static port_alloc process_wide; /* user NULL: the default pool and friends */

static void *port_malloc(size_t size, void *user) {
    port_alloc *a = user ? (port_alloc *)user : &process_wide;
    __atomic_fetch_add(&a->live, 1, __ATOMIC_RELAXED); /* workers allocate too */
    __atomic_fetch_add(&a->total, 1, __ATOMIC_RELAXED);
    return malloc(size);
}

static void port_free(void *ptr, void *user) {
    port_alloc *a = user ? (port_alloc *)user : &process_wide;
    if (ptr) __atomic_fetch_sub(&a->live, 1, __ATOMIC_RELAXED);
    free(ptr);
}

static void port_assert_failed(const char *what) {
    fprintf(stderr, "POOL_ASSERT failed: %s\n", what);
    abort();
}

static void fib(void *arg) {
    long *n = (long *)arg, a = *n - 1, b = *n - 2;
    if (*n < 2) return;
    pool_join(NULL, fib, &a, fib, &b);
    *n = a + b;
}

static pool *fib_pool;

static void fib_on(void *arg) {
    long *n = (long *)arg, a = *n - 1, b = *n - 2;
    if (*n < 2) return;
    pool_join(fib_pool, fib_on, &a, fib_on, &b);
    *n = a + b;
}

int main(void) {
    port_alloc mine;
    pool_config cfg;
    long n = 22, m = 20;
    int ok;
    memset(&mine, 0, sizeof mine);
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    cfg.user = &mine;
    if (pool_create(&fib_pool, &cfg) != 0) return 1;
    pool_call(fib_pool, fib_on, &n);
    pool_destroy(fib_pool);
    pool_call(NULL, fib, &m); /* the default pool: user NULL */
    ok = n == 17711 && m == 6765 && mine.total > 0 && mine.live == 0 && process_wide.total > 0 &&
         asserts_checked > 0;
    printf("POOL_MALLOC/POOL_FREE: %ld allocations with the pool's user pointer, %ld live after "
           "destroy; %ld with NULL (default pool); POOL_ASSERT checked %ld times: %s\n",
           mine.total, mine.live, process_wide.total, asserts_checked, ok ? "ok" : "FAILED");
    return !ok;
}
