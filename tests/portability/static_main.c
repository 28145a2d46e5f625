/* static_main.c - links two POOL_STATIC copies of pool.h (static.c built
 * twice) and checks that both work and that they are two libraries: two
 * default pools, not one shared. */
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif
long port_static_fib_a(long n);
long port_static_fib_b(long n);
const void *port_static_pool_a(void);
const void *port_static_pool_b(void);
#ifdef __cplusplus
}
#endif

int main(void) {
    long a = port_static_fib_a(20), b = port_static_fib_b(21);
    const void *pa = port_static_pool_a(), *pb = port_static_pool_b();
    int ok = a == 6765 && b == 10946 && pa && pb && pa != pb;
    printf("POOL_STATIC twice: fib(20) = %ld, fib(21) = %ld, %s default pools: %s\n", a, b,
           pa && pb && pa != pb ? "two" : "NOT two", ok ? "ok" : "FAILED");
    return !ok;
}
