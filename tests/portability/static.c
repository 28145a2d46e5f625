/* static.c - a POOL_STATIC implementation, compiled twice (-DPORT_TU=a and
 * -DPORT_TU=b) and linked into one program with static_main.c: the two
 * private copies of pool.h must not clash, and each has its own default
 * pool. Compiled with -Wall -Wextra -Wpedantic -Werror although it uses
 * only some of the functions. */
#define POOL_STATIC
#define POOL_IMPLEMENTATION
#include "pool.h"

#define PORT_CAT2(a, b) a##b
#define PORT_CAT(a, b) PORT_CAT2(a, b)

static void fib(void *arg) {
    long *n = (long *)arg, a = *n - 1, b = *n - 2;
    if (*n < 2) return;
    pool_join(NULL, fib, &a, fib, &b);
    *n = a + b;
}

#ifdef __cplusplus
extern "C" {
#endif
long PORT_CAT(port_static_fib_, PORT_TU)(long n);
const void *PORT_CAT(port_static_pool_, PORT_TU)(void);
#ifdef __cplusplus
}
#endif

long PORT_CAT(port_static_fib_, PORT_TU)(long n) {
    pool_call(NULL, fib, &n);
    return n;
}

/* The default pool as a stats snapshot sees it: this copy's own. */
const void *PORT_CAT(port_static_pool_, PORT_TU)(void) {
    pool_stats st;
    pool_stats_get(NULL, &st);
    return st.jobs_injected || st.slot_calls ? (const void *)&pool__default_pool : NULL;
}
