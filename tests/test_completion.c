/* test_completion.c - completion queues (pool_completion_*), waited on with
 * poll() as an event loop would. tests/test_completion_pipe.c builds it
 * again with POOL_COMPLETION_PIPE, the pipe of the other POSIX systems.
 *
 *   basics   the handle is an eventfd (a pipe with POOL_COMPLETION_PIPE),
 *            close-on-exec; it polls readable exactly while items wait;
 *            drain returns them oldest first, once; bad arguments.
 *   loop     100,000 tasks on a 2-thread pool, submitted in bursts from
 *            main, each posting its item at its end, and 4 plain threads
 *            posting at once; main polls the handle (a 10 s timeout: a lost
 *            notification fails the test instead of hanging it) and
 *            drains. Every item is drained exactly once, and poll returns
 *            at most twice per drain that found items: no busy loop.
 *   destroy  two threads post one item each; main drains in a busy loop
 *            until it has both, destroys the queue at once and opens an
 *            unrelated pipe (which gets the freed descriptor number): no
 *            post may fail or write into it, and none may die of SIGPIPE,
 *            though a post's item can be drained before its raise is done.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#include <stdlib.h>
#if !defined(_WIN32)
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

typedef struct done_item {
    pool_task task;
    pool_completion_item item;
    atomic_int drained; /* how many times a drain returned it */
    long id;
} done_item;

static pool_completion queue;

static done_item *done_of(pool_completion_item *it) {
    return (done_item *)(void *)((char *)it - offsetof(done_item, item));
}

/* Whether the handle polls readable (the event is set) within timeout_ms. */
static int readable(int timeout_ms) {
#if defined(_WIN32)
    return WaitForSingleObject((HANDLE)pool_completion_handle(&queue), (DWORD)timeout_ms) ==
           WAIT_OBJECT_0;
#else
    struct pollfd pfd;
    pfd.fd = (int)pool_completion_handle(&queue);
    pfd.events = POLLIN;
    pfd.revents = 0;
    return poll(&pfd, 1, timeout_ms) == 1 && (pfd.revents & POLLIN);
#endif
}

/* The handle is close-on-exec, and what the build asks for: an eventfd on
   Linux, a pipe with POOL_COMPLETION_PIPE. */
static void check_handle_kind(void) {
#if defined(__linux__)
    int fd = (int)pool_completion_handle(&queue);
    char link[64], path[64];
    struct stat st;
    ssize_t n;
    CHECK(fd >= 0);
    CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    CHECK(fstat(fd, &st) == 0);
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    n = readlink(path, link, sizeof link - 1);
    link[n > 0 ? n : 0] = 0;
#ifdef POOL_COMPLETION_PIPE
    CHECK_MSG(S_ISFIFO(st.st_mode), "the handle is not a pipe (%s)", link);
#else
    CHECK_MSG(strstr(link, "eventfd") != NULL, "the handle is not an eventfd (%s)", link);
#endif
#else
    CHECK(pool_completion_handle(&queue) != -1 && pool_completion_handle(&queue) != 0);
#endif
}

/* ---- basics ---- */

static void part_basics(void) {
    done_item items[3];
    pool_completion_item *it;
    int i;
    test_watchdog(30, "test_completion basics");
    printf("  basics: the handle's kind, readable while items wait, order, bad arguments\n");
    CHECK_EQ_I64(pool_completion_init(NULL), EINVAL);
    CHECK_EQ_I64(pool_completion_post(NULL, &items[0].item), EINVAL);
    CHECK_EQ_I64(pool_completion_destroy(NULL), EINVAL);
    CHECK(pool_completion_drain(NULL) == NULL);
#if defined(_WIN32)
    CHECK_EQ_I64(pool_completion_handle(NULL), 0); /* not -1: the current process's handle */
#else
    CHECK_EQ_I64(pool_completion_handle(NULL), -1);
#endif
    CHECK_EQ_I64(pool_completion_init(&queue), 0);
    CHECK_EQ_I64(pool_completion_post(&queue, NULL), EINVAL);
    check_handle_kind();
    CHECK(!readable(0));
    CHECK(pool_completion_drain(&queue) == NULL);
    for (i = 0; i < 3; i++) {
        items[i].id = i;
        CHECK_EQ_I64(pool_completion_post(&queue, &items[i].item), 0);
        CHECK(readable(0));
    }
    it = pool_completion_drain(&queue);
    for (i = 0; i < 3 && it; i++, it = it->next)
        CHECK_EQ_I64(done_of(it)->id, i); /* oldest first */
    CHECK_EQ_I64(i, 3);
    CHECK(it == NULL);
    CHECK(!readable(0)); /* drained: no longer readable */
    CHECK(pool_completion_drain(&queue) == NULL);
    CHECK_EQ_I64(pool_completion_destroy(&queue), 0);
}

/* ---- no descriptor left ---- */

/* With every descriptor taken, init fails with the errno of eventfd or
   pipe, and leaves nothing open. */
static void part_no_fd(void) {
#if !defined(_WIN32)
    struct rlimit old, low;
    int fds[64], n = 0, probe;
    pool_completion c;
    test_watchdog(30, "test_completion no_fd");
    if (test_under_valgrind()) { /* valgrind keeps descriptors of its own above the limit */
        printf("  no_fd: skipped under valgrind\n");
        return;
    }
    printf("  no_fd: init with no descriptor left\n");
    CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
    low = old;
    low.rlim_cur = 64;
    CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
    while (n < 64 && (fds[n] = dup(0)) >= 0) n++;
    CHECK_EQ_I64(pool_completion_init(&c), EMFILE);
    if (n > 0) close(fds[--n]); /* one free: a pipe needs two, an eventfd one */
    probe = dup(0);             /* the one free descriptor is still free: nothing leaked */
    CHECK(probe >= 0);
    if (probe >= 0) close(probe);
    while (n > 0) close(fds[--n]);
    CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
#endif
}

/* ---- loop ---- */

#define TASKS 100000
#define POSTERS 4
#define PER_POSTER 20000
#define BURST 500

static void task_run(pool_task *t) {
    done_item *d = (done_item *)(void *)t;
    CHECK_EQ_I64(pool_completion_post(&queue, &d->item), 0);
}

static void *poster(void *arg) {
    done_item *mine = (done_item *)arg;
    long i, n = (long)test_scaled(PER_POSTER, 100);
    for (i = 0; i < n; i++) {
        CHECK_EQ_I64(pool_completion_post(&queue, &mine[i].item), 0);
        if (i % 64 == 0) sched_yield();
    }
    return NULL;
}

static void part_loop(void) {
    long tasks = (long)test_scaled(TASKS, 1000), per_poster = (long)test_scaled(PER_POSTER, 100);
    long total = tasks + POSTERS * per_poster, drained = 0, submitted = 0, polls = 0, drains = 0, i;
    done_item *items = (done_item *)calloc((size_t)total, sizeof *items);
    pool *p = test_pool(2);
    pthread_t th[POSTERS];
    if (!items) exit(2);
    test_watchdog(120, "test_completion loop");
    printf("  loop: %ld tasks posting at their end and %d threads posting %ld each, drained by a "
           "poll loop\n",
           tasks, POSTERS, per_poster);
    CHECK_EQ_I64(pool_completion_init(&queue), 0);
    for (i = 0; i < total; i++) {
        items[i].task = (pool_task)POOL_TASK_INIT(task_run);
        items[i].id = i;
    }
    for (i = 0; i < POSTERS; i++)
        CHECK(pthread_create(&th[i], NULL, poster, items + tasks + i * per_poster) == 0);
    while (drained < total) {
        pool_completion_item *it;
        int found = 0;
        while (submitted < tasks && submitted - drained < BURST) /* a burst, then the loop */
            CHECK_EQ_I64(pool_submit(p, &items[submitted++].task), 0);
        polls++;
        if (!readable(10000)) {
            CHECK_MSG(0, "no notification in 10 s with %ld of %ld items drained", drained, total);
            break;
        }
        for (it = pool_completion_drain(&queue); it; it = it->next, found = 1) {
            atomic_fetch_add(&done_of(it)->drained, 1);
            drained++;
        }
        drains += found;
    }
    for (i = 0; i < POSTERS; i++) pthread_join(th[i], NULL);
    for (i = 0; i < total; i++)
        if (atomic_load(&items[i].drained) != 1) {
            CHECK_MSG(0, "item %ld drained %d times", i, atomic_load(&items[i].drained));
            break;
        }
    printf("  (%ld polls, %ld drains that found items)\n", polls, drains);
    CHECK_MSG(polls <= 2 * drains + 1, "%ld polls for %ld drains that found items: a busy loop",
              polls, drains);
    CHECK(!readable(0));
    CHECK_EQ_I64(pool_completion_destroy(&queue), 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
    free(items);
}

/* ---- destroy ---- */

#define DESTROY_POSTERS 2

#if !defined(_WIN32) /* the descriptors' reuse is POSIX's */
static pool_completion_item destroy_items[DESTROY_POSTERS];
static atomic_int destroy_round, destroy_posted, destroy_errors;

static void *destroy_poster(void *arg) {
    int me = (int)(intptr_t)arg, seen = 0, r;
    for (;;) {
        while ((r = atomic_load(&destroy_round)) == seen) sched_yield();
        if (r < 0) return NULL;
        seen = r;
        if (pool_completion_post(&queue, &destroy_items[me]) != 0)
            atomic_fetch_add(&destroy_errors, 1);
        atomic_fetch_add(&destroy_posted, 1);
    }
}
#endif

static void part_destroy(void) {
#if !defined(_WIN32)
    long rounds = (long)test_scaled(5000, 100), r;
    pthread_t th[DESTROY_POSTERS];
    int i, stray = 0;
    test_watchdog(60, "test_completion destroy");
    printf("  destroy: %ld rounds of drain everything, destroy at once, reuse the descriptor\n",
           rounds);
    atomic_store(&destroy_round, 0);
    atomic_store(&destroy_errors, 0);
    for (i = 0; i < DESTROY_POSTERS; i++)
        CHECK(pthread_create(&th[i], NULL, destroy_poster, (void *)(intptr_t)i) == 0);
    for (r = 1; r <= rounds; r++) {
        int got = 0, other[2];
        char byte;
        CHECK_EQ_I64(pool_completion_init(&queue), 0);
        atomic_store(&destroy_posted, 0);
        atomic_store(&destroy_round, (int)r);
        while (got < DESTROY_POSTERS) /* a busy drain, as a loop that polls does */
            for (pool_completion_item *it = pool_completion_drain(&queue); it; it = it->next) got++;
        CHECK_EQ_I64(pool_completion_destroy(&queue), 0);
        CHECK(pipe(other) == 0); /* likely the numbers the queue had */
        fcntl(other[0], F_SETFL, O_NONBLOCK);
        while (atomic_load(&destroy_posted) < DESTROY_POSTERS) sched_yield();
        if (read(other[0], &byte, 1) == 1) stray++;
        close(other[0]);
        close(other[1]);
    }
    atomic_store(&destroy_round, -1);
    for (i = 0; i < DESTROY_POSTERS; i++) pthread_join(th[i], NULL);
    CHECK_MSG(stray == 0, "%d raises landed in a pipe opened after the destroy", stray);
    CHECK_EQ_I64(atomic_load(&destroy_errors), 0);
#endif
}

static const test_part parts[] = {
    {"basics", part_basics}, {"no_fd", part_no_fd}, {"loop", part_loop}, {"destroy", part_destroy}};

int main(int argc, char **argv) {
    test_run_parts(argc, argv, parts, sizeof parts / sizeof parts[0]);
#ifdef POOL_COMPLETION_PIPE
    return test_finish("test_completion_pipe");
#else
    return test_finish("test_completion");
#endif
}
