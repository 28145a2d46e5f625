/* macOS's pthread_setname_np names the calling thread only (one argument);
   glibc's, whose headers stand in here, takes two: rename it. */
#define pthread_setname_np pool_stub_apple_setname_np
int pool_stub_apple_setname_np(const char *name);
