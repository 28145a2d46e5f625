/* one_alloc.c - POOL_MALLOC without POOL_FREE (-DPORT_ONLY_MALLOC) or the
 * other way round: must not compile, with pool.h's own #error. */
#include <stdlib.h>
#ifdef PORT_ONLY_MALLOC
#define POOL_MALLOC(size, user) ((void)(user), malloc(size))
#else
#define POOL_FREE(ptr, user) ((void)(user), free(ptr))
#endif
#define POOL_IMPLEMENTATION
#include "pool.h"

int main(void) { return pool_worker_index() == -1 ? 0 : 1; }
