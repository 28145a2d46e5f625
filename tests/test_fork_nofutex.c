/* test_fork_nofutex.c - test_fork.c built with POOL_NO_FUTEX: the child
 * of a fork must not inherit the wait table's bucket locks or condvars
 * in the parent's state (glibc's broadcast on a condvar that counts the
 * parent's waiters never returns). */
#ifndef POOL_NO_FUTEX
#define POOL_NO_FUTEX
#endif
#include "test_fork.c"
