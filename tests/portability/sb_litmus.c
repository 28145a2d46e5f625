/* sb_litmus.c - store buffering with a seq_cst store then a seq_cst load
 * (STLR then LDAR on AArch64), the pattern of the Chase-Lev pop and of the
 * sleep protocol's store-load pairs. C11 and ARMv8 forbid both threads
 * missing each other's store; qemu-user on an x86 host does not honour it
 * (its STLR fences before the store, its LDAR after the load, and the x86
 * store buffer sits in between): run on two host CPUs, a fifth of the
 * rounds or so show the forbidden outcome. Pinned to one host CPU, no
 * store buffer is shared between guest threads and none can. The matrix
 * runs it pinned, as the arm64 tests are run: it shows the emulator keeps
 * the order the tests need.
 *
 * Thread 0 does x = k; r0[k] = y and thread 1 does y = j; r1[j] = x, for
 * k, j = 1..N. A violation is a k and j with r0[k] < j and r1[j] < k;
 * since r0 never decreases, checking r0[r1[j] + 1] < j for each j is
 * enough. Exits 1 if it finds one. */
#include <pthread.h>
#include <stdio.h>

#define N 1000000
static long x, y, r0[N + 2], r1[N + 2], ready;

static void start_together(void) {
    __atomic_fetch_add(&ready, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < 2) continue;
}

static void *thread0(void *arg) {
    long k;
    (void)arg;
    start_together();
    for (k = 1; k <= N; k++) {
        __atomic_store_n(&x, k, __ATOMIC_SEQ_CST);
        r0[k] = __atomic_load_n(&y, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

static void *thread1(void *arg) {
    long j;
    (void)arg;
    start_together();
    for (j = 1; j <= N; j++) {
        __atomic_store_n(&y, j, __ATOMIC_SEQ_CST);
        r1[j] = __atomic_load_n(&x, __ATOMIC_SEQ_CST);
    }
    return NULL;
}

int main(void) {
    pthread_t a, b;
    long j, bad = 0;
    pthread_create(&a, NULL, thread0, NULL);
    pthread_create(&b, NULL, thread1, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    for (j = 1; j <= N; j++)
        if (r1[j] + 1 <= N && r0[r1[j] + 1] < j) bad++;
    printf(
        "store buffering, seq_cst store then seq_cst load: %ld forbidden outcomes in %d rounds\n",
        bad, N);
    return bad != 0;
}
