/* test_completion_pipe.c - test_completion.c with POOL_COMPLETION_PIPE: the pipe the
 * other POSIX systems use, tested here on Linux. */
#define POOL_COMPLETION_PIPE
#include "test_completion.c"
