/* port.h - what impl.c gives the other translation units of a matrix build. */
#ifndef PORT_H
#define PORT_H
#include <string.h>
#ifdef __cplusplus
extern "C" {
#endif
long port_fib(long n);
long port_scope_sum(int n); /* 1 + 2 + ... + n through a scope, or -1 */
#ifdef __cplusplus
}
#endif
#endif
