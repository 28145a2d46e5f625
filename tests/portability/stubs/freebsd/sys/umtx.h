/* Stub of FreeBSD's <sys/umtx.h>: the declarations _umtx_op(2) documents. */
#define UMTX_OP_WAKE 3
#define UMTX_OP_WAIT_UINT_PRIVATE 15
#define UMTX_OP_WAKE_PRIVATE 16
int _umtx_op(void *obj, int op, unsigned long val, void *uaddr, void *uaddr2);
