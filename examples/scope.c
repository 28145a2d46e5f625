/* examples/scope.c -- a scope of intrusive tasks that spawn more tasks: a parallel `du`.
 *
 * Build and run from the repository root:
 *     cc -O2 -pthread examples/scope.c && ./a.out
 *
 * The program walks a synthetic directory tree: every directory's contents (its files, their
 * sizes and its subdirectories) follow from a 64-bit seed, so the tree needs no disk and is the
 * same on every run. Each directory is a task; it counts its files and spawns one task per
 * subdirectory into the same scope. Nobody knows in advance how many tasks there will be, and
 * that is what a scope is for: pool_scope_wait returns once every task spawned into it, directly
 * or by another task, has finished. pool_join would need the recursion to wait at every level.
 *
 * No task is allocated one by one: each lives inside a `struct dir`, and the dirs come from one
 * array that main() owns.
 */
#define POOL_IMPLEMENTATION /* in exactly one .c file of a program: compile the implementation */
#include "../pool.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DEPTH 12       /* directories this deep have no subdirectories */
#define MAX_DIRS (1 << 18) /* slots in the array; this tree needs about 150,000 */

struct walk;

/* One directory, and the task that scans it. The pool_task is embedded, not pointed to: the pool
 * links tasks through it and allocates nothing, so the memory is yours to provide. It must stay
 * valid from the spawn until the pool calls `run` (after that the pool never touches it again);
 * here the dirs also hold results, so they live until main() has read them. The task need not be
 * the first member: dir_of() recovers the dir with offsetof. */
struct dir {
    struct walk *walk;
    uint64_t seed; /* what is in this directory */
    int depth;
    int root;                    /* which top-level tree it belongs to, for the per-tree totals */
    uint64_t dirs, files, bytes; /* written only by this directory's own task */
    pool_task task;
};

/* Everything the tasks share. The scope and the slots must stay valid until pool_scope_wait has
 * returned: tasks still read them until then. Here they live in main()'s stack frame. */
struct walk {
    pool_scope scope;
    struct dir *slots;
    atomic_size_t used; /* tasks on several threads take slots at once */
};

static struct dir *dir_of(pool_task *t) {
    return (struct dir *)((char *)t - offsetof(struct dir, task));
}

/* ---- the synthetic file system: pure functions of a seed ---- */

static uint64_t mix(uint64_t x) /* splitmix64: a different, well-spread number for every x */
{
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    return x ^ (x >> 31);
}

/* A root's name decides what is in it. */
static uint64_t root_seed(const char *name) {
    uint64_t seed = 0;
    for (; *name; name++) seed = mix(seed ^ (unsigned char)*name);
    return seed;
}

static int num_subdirs(uint64_t seed, int depth) {
    static const int fanout[8] = {0, 0, 1, 1, 2, 3, 4, 6}; /* mostly few, sometimes many */
    return depth < MAX_DEPTH ? fanout[mix(seed) % 8] : 0;
}

static uint64_t subdir_seed(uint64_t seed, int i) { return mix(seed + 1 + (uint64_t)i); }

/* Files of one directory: between 0 and 23, of up to 4 MiB each. */
static void scan_files(uint64_t seed, uint64_t *files, uint64_t *bytes) {
    int n = (int)(mix(seed ^ 0xf11e5) % 24);
    for (int i = 0; i < n; i++) {
        uint64_t h = mix(seed ^ (0xb17e5u + (uint64_t)i));
        *bytes += (h >> 8) % ((uint64_t)1 << (h % 22));
    }
    *files += (uint64_t)n;
}

/* The plain recursive walk: the reference result, and the fallback when the slots run out. */
static void walk_serial(uint64_t seed, int depth, uint64_t *dirs, uint64_t *files,
                        uint64_t *bytes) {
    *dirs += 1;
    scan_files(seed, files, bytes);
    for (int i = 0, n = num_subdirs(seed, depth); i < n; i++)
        walk_serial(subdir_seed(seed, i), depth + 1, dirs, files, bytes);
}

/* ---- the parallel walk ---- */

static void dir_run(pool_task *t);

/* Takes a slot for a subdirectory of `parent` and spawns its task. Called from inside a running
 * task, on a worker: the spawn goes onto that worker's own deque, where idle workers steal it. */
static void spawn_subdir(struct dir *parent, uint64_t seed) {
    struct walk *w = parent->walk;
    size_t slot = atomic_fetch_add_explicit(&w->used, 1, memory_order_relaxed);
    if (slot >= MAX_DIRS) {
        /* No memory for another task: do the work right here instead. The parent's task is
         * still running, so it may add to its own counts. */
        walk_serial(seed, parent->depth + 1, &parent->dirs, &parent->files, &parent->bytes);
        return;
    }
    /* The task lives in the array, not in a local: this function returns long before some other
     * thread gets round to running it. */
    struct dir *d = &w->slots[slot];
    *d = (struct dir){.walk = w,
                      .seed = seed,
                      .depth = parent->depth + 1,
                      .root = parent->root,
                      .task = POOL_TASK_INIT(dir_run)};
    /* A task that was not accepted (0 means accepted) was never queued and is still ours: run
     * it here. Inside a task there is nobody to report the error to, and the work must get done. */
    if (pool_scope_spawn(&w->scope, &d->task) != 0) dir_run(&d->task);
}

static void dir_run(pool_task *t) {
    struct dir *d = dir_of(t);
    d->dirs = 1;
    scan_files(d->seed, &d->files, &d->bytes);
    /* Spawn into the scope this task runs in: the scope cannot finish while this task runs, so it
     * also waits for everything spawned here, and for what those spawn in turn. */
    for (int i = 0, n = num_subdirs(d->seed, d->depth); i < n; i++)
        spawn_subdir(d, subdir_seed(d->seed, i));
    /* No need to wait for the subdirectories: main() sums all the slots after pool_scope_wait. */
}

static double ms_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

int main(void) {
    static const char *const roots[] = {"/home", "/srv", "/tmp", "/usr"};
    enum { NUM_ROOTS = sizeof roots / sizeof roots[0] };
    uint64_t dirs[NUM_ROOTS] = {0}, files[NUM_ROOTS] = {0}, bytes[NUM_ROOTS] = {0};
    struct walk w;
    struct timespec t0;

    w.slots = malloc(MAX_DIRS * sizeof *w.slots);
    if (!w.slots) {
        fprintf(stderr, "out of memory for %d directories\n", MAX_DIRS);
        return 1;
    }
    atomic_init(&w.used, NUM_ROOTS); /* slots 0..NUM_ROOTS-1: the roots, filled in below */

    /* NULL is the process-wide default pool: right for a program with one pool that lives as long
     * as the process. Create a pool instead (examples/fib.c) to choose the number of threads or
     * to destroy it. */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pool_scope_init(&w.scope, NULL);

    /* main() is not a worker: its spawns are injected into the pool, and pool_scope_wait blocks
     * without spinning until the last task of the scope is done. */
    int err = 0;
    for (int r = 0; r < NUM_ROOTS && !err; r++) {
        struct dir *d = &w.slots[r];
        *d = (struct dir){.walk = &w,
                          .seed = root_seed(roots[r]),
                          .depth = 0,
                          .root = r,
                          .task = POOL_TASK_INIT(dir_run)};
        /* Errors are errno values: EINVAL for a NULL scope, task or run function, ECANCELED once
         * the pool is being destroyed (the default pool never is). */
        err = pool_scope_spawn(&w.scope, &d->task);
    }
    pool_scope_wait(&w.scope); /* even after an error: the roots already spawned still use `w` */
    if (err) {
        fprintf(stderr, "pool_scope_spawn: %s\n", strerror(err));
        return 1;
    }
    double ms = ms_since(&t0);

    /* After pool_scope_wait, every write of every task is visible here, and no task touches a
     * slot any more: they can be read without locks, then freed. The scope can be reused. */
    size_t used = atomic_load(&w.used);
    if (used > MAX_DIRS) used = MAX_DIRS;
    for (size_t i = 0; i < used; i++) {
        struct dir *d = &w.slots[i];
        dirs[d->root] += d->dirs;
        files[d->root] += d->files;
        bytes[d->root] += d->bytes;
    }
    free(w.slots);

    uint64_t total_dirs = 0, total_files = 0, total_bytes = 0;
    for (int r = 0; r < NUM_ROOTS; r++) {
        uint64_t sd = 0, sf = 0, sb = 0;
        walk_serial(root_seed(roots[r]), 0, &sd, &sf, &sb);
        if (sd != dirs[r] || sf != files[r] || sb != bytes[r]) {
            fprintf(stderr,
                    "%s: parallel walk counted %llu dirs, %llu files, %llu bytes; "
                    "serial walk %llu, %llu, %llu\n",
                    roots[r], (unsigned long long)dirs[r], (unsigned long long)files[r],
                    (unsigned long long)bytes[r], (unsigned long long)sd, (unsigned long long)sf,
                    (unsigned long long)sb);
            return 1;
        }
        printf("%-6s %7llu dirs %9llu files %8.1f GiB\n", roots[r], (unsigned long long)dirs[r],
               (unsigned long long)files[r], (double)bytes[r] / (1u << 30));
        total_dirs += dirs[r];
        total_files += files[r];
        total_bytes += bytes[r];
    }
    printf("total  %7llu dirs %9llu files %8.1f GiB\n", (unsigned long long)total_dirs,
           (unsigned long long)total_files, (double)total_bytes / (1u << 30));
    printf("%zu tasks in one scope on %d thread(s), %.1f ms: matches a serial walk\n", used,
           pool_num_threads(NULL), ms);
    return 0;
}
