/* impl.c - the implementation TU of the language matrix: compiled as C99,
 * C11, C17 and C2x and as C++11, C++17 and C++20, with gcc and clang,
 * -Wall -Wextra -Wpedantic -Werror, and linked with user.c (compiled in
 * the same or in the other language).
 *
 * It is an ordinary user of the library too: pool.h first (it may enable
 * POSIX in strict ISO modes), then whatever else the file needs.
 */
#define POOL_IMPLEMENTATION
#include "pool.h"

#include <stdio.h>

#include "port.h"

static void fib(void *arg) {
    long *n = (long *)arg, a = *n - 1, b = *n - 2;
    if (*n < 2) return;
    pool_join(NULL, fib, &a, fib, &b);
    *n = a + b;
}

/* fib(n) on the default pool, from outside it. */
long port_fib(long n) {
    pool_call(NULL, fib, &n);
    return n;
}

/* A scope of tasks on a pool of two, each adding its index. */
typedef struct port_item {
    pool_task task;
    long value;
    long *sum;
} port_item;

static void item_run(pool_task *t) {
    port_item *it = (port_item *)(void *)((char *)t - offsetof(port_item, task));
    __atomic_fetch_add(it->sum, it->value, __ATOMIC_RELAXED);
}

long port_scope_sum(int n) {
    pool *p = NULL;
    pool_config cfg;
    pool_scope s;
    port_item items[64];
    long sum = 0;
    int i;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    cfg.name = "port";
    if (n > 64 || pool_create(&p, &cfg) != 0) return -1;
    pool_scope_init(&s, p);
    for (i = 0; i < n; i++) {
        pool_task t = POOL_TASK_INIT(item_run);
        items[i].task = t;
        items[i].value = i + 1;
        items[i].sum = &sum;
        if (pool_scope_spawn(&s, &items[i].task) != 0) return -1;
    }
    pool_scope_wait(&s);
    if (pool_destroy(p) != 0) return -1;
    return sum;
}
