/* Stub of FreeBSD's <pthread_np.h> (pthread_set_name_np(3)), over glibc's <pthread.h>. */
#include <pthread.h>
void pthread_set_name_np(pthread_t thread, const char *name);
