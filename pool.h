/* pool.h - v0.3.0 - a work-stealing thread pool for C and C++ in one header

   Do this in *one* C or C++ file of your project:

       #define POOL_IMPLEMENTATION
       #include "pool.h"

   and include "pool.h" without the define everywhere else. Build with
   -pthread (on Windows nothing: pool.h uses Win32 directly). Nothing else
   is needed: no library, no allocation on the hot paths, no thread
   started before there is work for it.

   PLATFORMS: Linux (glibc, musl), Windows (MinGW, clang-cl), macOS,
   FreeBSD, any other POSIX system; x86-64 and ARM64 (any CPU with
   GCC/Clang __atomic builtins). C99 or later, or C++11 or later, compiled
   by GCC or Clang (MSVC's cl.exe lacks the __atomic builtins: use
   clang-cl).

   QUICK START

       #define POOL_IMPLEMENTATION
       #include "pool.h"

       static void fib(void *arg) {
           long *n = (long *)arg, a = *n - 1, b = *n - 2;
           if (*n < 2) return;
           pool_join(NULL, fib, &a, fib, &b);   // run both, in parallel if a
           *n = a + b;                          // worker is free; return when
       }                                        // both are done
       int main(void) { long n = 30; pool_call(NULL, fib, &n); return n != 832040; }

   CONCEPTS

   A pool owns up to `num_threads` worker threads. Threads are started
   lazily, the first time work is posted that no awake worker can take,
   and they sleep in the kernel (a futex on Linux, WaitOnAddress on
   Windows, _umtx_op on FreeBSD, ulock on macOS) when there is nothing
   to do, so an idle pool burns no CPU.

   Work enters a pool in four ways:
     - fork-join: pool_join(p, a, a_arg, b, b_arg) runs a and b, possibly
       in parallel, and returns when both are done; pool_join_n does the
       same for n of them. pool_call(p, fn, arg) runs fn on the pool and
       waits. pool_parallel_for splits a range,
       pool_parallel_reduce folds one, pool_qsort sorts as qsort does,
       and pool_broadcast runs a function once on every worker.
       On a worker a join is lazy: b is recorded on the worker's own stack
       and runs as a plain call after a unless someone can take it; then
       it is made stealable (pool_join says when). Fork at a fine grain,
       or use a scope or pool_parallel_for for a few long pieces.
     - scopes: pool_scope_init / pool_scope_spawn / pool_scope_wait run any
       number of caller-owned tasks and wait for all of them
       (pool_scope_spawn_copy: a function and a copy of its arguments,
       held by the pool, instead of a task of yours). When every
       worker is busy and the spawner's deque is full, a spawn may run its
       task at once (pool_scope_spawn says when), so a task must not wait
       for what its spawner does after the spawn.
       pool_scope_cancel stops a scope's work early: tasks not yet
       started are skipped, and its wait says ECANCELED.
     - graphs: pool_graph_init / _add / _link describe caller-owned nodes
       and which runs after which, once; pool_graph_run and
       pool_graph_wait run every node, each after its predecessors, as
       often as needed.
     - detached tasks: pool_submit / pool_submit_batch queue caller-owned
       tasks and return at once.

   PRIORITIES

   pool_submit_priority and pool_scope_spawn_priority queue a task as
   POOL_PRIORITY_HIGH: it goes to a queue that every worker looks at
   before any other, its own deque included, so it starts when the first
   worker free to take it looks for work: at once on an idle one, at the
   end of its task on a busy one, ahead of every normal task queued
   earlier. Each free worker takes one high task, so a burst of them
   spreads over the pool. Two rules bound it:
     - starvation: a worker that took 61 high tasks in a row takes one
       round of normal work before its next high one;
     - WAITING's rule: a worker waiting inside a join or a scope runs only
       work of its wait (its scope's high tasks after what its own deque
       holds); a high task of other work waits for a worker that is free
       (a parked waiter's spare is one). A scope's waiter that keeps
       finding work still looks for the scope's queued tasks, normal and
       high, after 61 tasks (after more while other work queued from
       outside is long: as many tasks as that queue held).
   Tasks of one priority run in no particular order. A high task spawned
   into a scope is part of the scope like any other (cancel, wait).

   Every one of these but pool_broadcast (not from p's own tasks: see it)
   may be called from any thread: a worker of the same
   pool (the work goes to that worker's own deque), a thread outside every
   pool, or a worker of another pool (it blocks, and its own pool starts a
   spare thread for its queued work meanwhile, so pools may call into each
   other without deadlock, as long as no pool has all its threads, workers
   and max_spare_threads spares, blocked in such calls at once: see
   WAITING).
   A thread outside every pool that calls
   pool_call, pool_join, pool_parallel_for or pool_scope_wait works: it
   takes one of the pool's external slots (external_slots, 4 by default)
   and runs the call itself as a worker would, the workers stealing what
   it forks; pool_worker_index() then returns the slot's index. With every
   slot taken, and for submissions and spawns, its work is injected and it
   blocks without spinning. pool_call_on_worker runs a function on a
   worker thread, for code that needs the workers' stack size, pinning or
   thread hooks.

   PINNED TASKS

   Some work must run on one particular thread: OpenGL and most UI
   toolkits on main, a library's calls on the thread that initialised it.
     - pool_submit_pinned(p, i, t) runs t on worker i of p and nowhere
       else, when that worker is free: after the task it runs, ahead of
       the normal work it would take next (pinned tasks share the
       starvation rule of high ones). A worker that waits inside a join or
       a scope never runs its pinned tasks on top of the wait: they are no
       part of it, so no wait of pool.h's can wait for them; they run
       when the wait ends, and may take that long to start (so a task that
       blocks on a pinned task's result deadlocks if the pinned worker
       waits for that task). A worker above
       the active count runs them (nothing else can), and destroy runs
       every one accepted.
     - A thread outside the pool makes itself an inbox (pool_inbox_init);
       any thread posts tasks to it (pool_inbox_post), and the owner runs
       them when it calls pool_inbox_run, at a point of its choosing: once
       a frame in a render loop, when its event loop sees the inbox's
       handle readable, or after pool_inbox_wait.
   A pinned task is detached (nothing of pool.h waits for it); to wait for
   one, have it post to a completion queue or signal what the waiter
   waits on.

   WAITING

   A worker that waits (for a stolen join half, a scope, a call into
   another pool, a blocking job) runs only work that belongs to what it
   waits for: its own join half, its scope's tasks, and what the worker
   running part of it pushed (it steals back from its thief). So waits
   nest as deep as the program nests, never by the amount of work, and a
   task cannot be picked up on top of a wait it would deadlock with. With
   nothing of its own left, the worker parks, and while work is queued
   that nobody can take its pool starts a spare thread: a worker like any
   other, with an index from num_threads up (below
   pool_worker_index_limit), which stops when the park ends and stays for
   the next one, at most max_spare_threads of them. The implementation's waiting section has
   the rule and the argument.

   A pool_task is intrusive: you embed it in your own struct, set `run`,
   and recover your struct in `run` with offsetof. The pool never copies
   or allocates tasks; a task must stay valid until its `run` has been
   called, and may be freed or reused from inside `run`.

       struct job { pool_task task; int value; };
       static void job_run(pool_task *t) {
           struct job *j = (struct job *)((char *)t - offsetof(struct job, task));
           printf("%d\n", j->value);
       }
       struct job j = { POOL_TASK_INIT(job_run), 42 };
       pool_submit(NULL, &j.task);

   A NULL `pool *` means the process-wide default pool, created on first
   use with default settings (except for pool_destroy, where NULL is
   EINVAL: the default pool lives until the process exits).

   BLOCKING WORK

   Workers are for computing: a worker blocked in read(), sleep() or on a
   lock is a core lost to every task. Blocking work goes to the pool's
   blocking threads, which start on demand (up to max_blocking_threads)
   and exit after blocking_keep_alive_ms without work:

     pool_submit_blocking(p, task)      fire and forget; always runs
     pool_submit_blocking_job(p, job)   a job that can be waited for
     pool_wait_blocking_job(job)        waits for it: 0 if it ran,
                                        ECANCELED if it was skipped
     pool_destroy_fast(p)               pool_destroy, skipping queued jobs
                                        not marked mandatory

   Their blocks below say the rules: when a job may be submitted again,
   how long it must stay valid, what EAGAIN leaves you to do.

   ERRORS

   Functions that can fail return 0 or an errno value and never print or
   abort on bad input. Each function's block, beside its declaration below,
   says which codes it returns and when; across the API they mean:
     EINVAL     a bad argument: a NULL pointer, a task without run, a
                configuration field or index out of range, a job never
                submitted or waited for already
     ENOMEM     an allocation failed
     EDEADLK    the call would wait for itself (pool_destroy or
                pool_broadcast from a task of that pool,
                pool_scope_wait_status from a task of that scope,
                pool_graph_wait from a node of that graph)
     ECANCELED  the pool's destroy has begun (a submission), or
                pool_destroy_fast skipped the job (its wait), or the scope
                or graph was cancelled (its spawns and its wait)
     EBUSY      the task or job is still queued from an earlier submission
                (or twice in one batch), or the job is in flight on another
                pool. Make tasks and jobs with their initialiser (POOL_TASK_INIT,
                POOL_BLOCKING_JOB_INIT) or zero them: leftover private
                fields may read as queued. Also an object still in use: a
                graph that runs, a node or edge in a graph already, an
                inbox with tasks not run yet
     EAGAIN     no thread exists to run the task and none could be started
                (for pool_submit_pinned and pool_broadcast: the one worker's
                thread that must run it): the task was not taken
     ECHILD     in the child of a fork(), a pool or job from before it
     ENOTSUP    a feature compiled out (pool_trace_write without POOL_TRACE)
     ELOOP      pool_graph_run: the graph has a cycle
     EPERM      pool_inbox_run and pool_inbox_wait on a thread that does not
                own the inbox
     ETIMEDOUT  pool_inbox_wait: nothing was posted in time
     EIO, ...   pool_stats_print and pool_trace_write: a write error, or the
                errno of fopen
   pool_join, pool_call, pool_call_on_worker and pool_parallel_for return
   nothing: they always complete the work, if need be on the calling
   thread. pool_scope_wait returns nothing either (pool_scope_wait_status
   says when it did not wait).

   CONFIGURATION

   pool_create takes a pool_config: zero-initialised, every field takes
   its default, so set only what you change. Each field's meaning, range
   and default is beside it in struct pool_config below; num_threads,
   spin_us, heartbeat_us and spawn_throttle_outside may also be set from
   the environment ($POOL_NUM_THREADS, $POOL_SPIN_US, $POOL_HEARTBEAT_US,
   $POOL_SPAWN_THROTTLE_OUTSIDE) when the field is 0.

   LOOKING INSIDE
     pool_worker_index()              the calling thread's index in its
                                      pool, -1 outside every pool
     pool_stats_get(p, &s)            the pool's counters, summed
     pool_worker_stats_get(p, i, &w)  one thread's counters, pinned CPU
     pool_stats_print(p, stderr)      both, formatted for a terminal
     pool_trace_write(p, "t.json")    with POOL_TRACE: a Chrome trace of
                                      the last events of every thread

   FORK
     After fork(), the child may use pool.h: its default pool is a new
     one, created on first use. A pool created before the fork has no
     threads in the child: submissions to it and its pool_destroy return
     ECHILD; pool_join, pool_call and pool_parallel_for on it run the work
     on the calling thread; pool_scope_wait on it returns at once (what was
     spawned before the fork stays the parent's); waiting for a blocking
     job submitted before the fork and unfinished then, or for a graph's
     run under way then, returns ECHILD. A
     child forked from inside a task should only exec or _exit: its stack
     still belongs to a worker.

   COMPILE-TIME OPTIONS (define before including with POOL_IMPLEMENTATION)
     POOL_STATIC          make every function static to the including file
     POOL_DEF             linkage of the public functions (default extern)
     POOL_MALLOC(size, user) and POOL_FREE(ptr, user)
                          replace malloc/free; define both or neither;
                          `user` is pool_config.user (NULL for the default
                          pool and for process-wide allocations)
     POOL_ASSERT(x)       how a failed internal check is reported (default
                          assert)
     POOL_DEBUG           compile in the invariant checks the implementation
                          states on its paths (off by default: some run at
                          every join)
     POOL_NO_FUTEX        use the portable mutex/condvar wait instead of futex
     POOL_TRACE           record events for pool_trace_write (costs a clock
                          read and a few stores per event)
     POOL_TRACE_EVENTS    events kept per thread, a power of two (65536)
     POOL_HEARTBEAT_DEFAULT_US
                          the heartbeat of pools that leave heartbeat_us and
                          $POOL_HEARTBEAT_US unset, 0 (none) to 1000000 (0)
     POOL_SPAWN_THROTTLE_DEFAULT
                          the least spawn throttle of pools that leave
                          spawn_throttle 0, 1 to 65535 (8)
     POOL_EXTERNAL_SLOTS_DEFAULT
                          the external slots of pools that leave
                          external_slots 0, 0 to 30 (4)
     POOL_NO_STATS        compile out the workers' counters (the fork-join
                          path then does not touch them; their stats read 0)
     POOL_NO_INLINE_JOIN  no pool_join macro in C (see pool_join): every
                          call reaches the function
     POOL_NO_CPP          leave the C++ interface (namespace pool_cpp) out of
                          a C++ file; wherever pool.h is included
     POOL_COMPLETION_PIPE the handle of a completion queue or an inbox is a
                          pipe on Linux too, not an eventfd
     POOL_CHAOS           testing only: random yields and short sleeps at
                          each protocol step, to widen race windows

   CONTENTS of the implementation, in file order; search for the tag
   (">>sleep") to jump to a section:
     >>cpp                the C++ interface (in the API part, after the C)
     >>platform           atomics, threads, wait/wake, CPU count, yield
     >>deque              the Chase-Lev deque
     >>injector           the queue for work posted from outside
     >>pool               the pool and worker structures
     >>tracing            the event rings of POOL_TRACE
     >>sleep              the counters word, the CoreLatch, progressive sleep
     >>latches            waiting for one job
     >>scopes             scope counts: the tasks a scope's wait waits for
     >>lazy               lazy joins: forks promoted only when asked for
     >>loop               the worker loop: finding work, running it
     >>waiting            what a thread runs while it waits
     >>slots              external slots: outside callers doing the work
     >>monitor            the monitor thread: thread-start retries, heartbeat
     >>blocking           the blocking pool's threads and queue
     >>fork               fork(): the pools a child inherits
     >>api-lifecycle      pool_create, pool_destroy
     >>api-default        the default pool, made on first use
     >>api-fork-join      pool_join, pool_join_n, pool_call, pool_parallel_for
     >>api-scopes         pool_scope_init, _spawn, _wait
     >>api-graphs         pool_graph_*: nodes that run after their predecessors
     >>api-completion     pool_completion_*, pool_inbox_*: finished work and
                          pinned tasks for event loops
     >>api-submit         pool_submit, pool_submit_batch
     >>api-algorithms     pool_parallel_reduce, pool_qsort, pool_broadcast
     >>api-trace          pool_trace_write
     >>api-introspection  worker indices and stats
     >>api-blocking       pool_submit_blocking(_job), pool_wait_blocking_job

   DESIGN (the implementation explains each protocol where it lives)
     - Each worker owns a Chase-Lev deque (Le, Pop, Cohen, Zappa Nardelli,
       PPoPP 2013): push/pop at the bottom by the owner, steal at the top by
       thieves chosen at random. The buffer grows; old buffers are retired,
       never freed while thieves may read them, and freed by pool_destroy.
     - Work from outside the pool goes into a lock-free Treiber stack that a
       worker empties with one atomic exchange (ABA-free by construction),
       unless its caller works in an external slot: a deque like a
       worker's, with no thread of its own.
     - Sleep uses a jobs event counter: one 64-bit counter word (sleeping,
       inactive, jobs event counter), a 4-state latch per worker (UNSET,
       SLEEPY, SLEEPING, SET) that doubles as its futex word, progressive
       sleep, and the rule that a waker, not the sleeper, un-counts a
       sleeper it wakes.

   LICENSE: MIT, see the end of this file.
*/
#if defined(POOL_IMPLEMENTATION) && defined(__linux__) && defined(__STRICT_ANSI__) && \
    !defined(_POSIX_C_SOURCE) && !defined(_XOPEN_SOURCE) && !defined(_GNU_SOURCE) && \
    !defined(_DEFAULT_SOURCE)
/* Strict ISO modes (-std=c99) hide POSIX; the implementation needs it. This
   only works if pool.h is the first header of the implementation file. */
#define _POSIX_C_SOURCE 200809L
#endif

#ifndef POOL_H
#define POOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define POOL_VERSION_MAJOR 0
#define POOL_VERSION_MINOR 3
#define POOL_VERSION_PATCH 0

#ifndef POOL_DEF
#ifdef POOL_STATIC
/* A file that calls only some of the functions gets no unused warnings. */
#if defined(__GNUC__) || defined(__clang__)
#define POOL_DEF static __attribute__((unused))
#else
#define POOL_DEF static
#endif
#else
#define POOL_DEF extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pool pool;
typedef struct pool_task pool_task;
typedef struct pool_scope pool_scope;
typedef struct pool_config pool_config;
typedef struct pool_stats pool_stats;
typedef struct pool_worker_stats pool_worker_stats;
typedef struct pool_blocking_job pool_blocking_job;
typedef struct pool_graph pool_graph;
typedef struct pool_graph_node pool_graph_node;
typedef struct pool_graph_edge pool_graph_edge;
typedef struct pool_completion pool_completion;
typedef struct pool_completion_item pool_completion_item;
typedef struct pool_inbox pool_inbox;
typedef void (*pool_fn)(void *arg);

/* pool_priority: the two levels of pool_submit_priority and
   pool_scope_spawn_priority (see PRIORITIES). */
typedef enum pool_priority { POOL_PRIORITY_NORMAL = 0, POOL_PRIORITY_HIGH = 1 } pool_priority;

/* pool_task: a unit of work the caller owns. Embed it in your own struct,
   set run, and recover your struct in run with offsetof (see CONCEPTS).
   The pool never copies or allocates it; it must stay valid until its run
   is called, and may be freed or submitted again from inside run. Make it
   with POOL_TASK_INIT or zero it: the private fields say whether it is
   queued. */
struct pool_task {
    void (*run)(pool_task *self); /* set by the user */
    pool_task *pool__next;        /* private: queue link */
    pool_scope *pool__scope;      /* private: scope the task was spawned into */
};

/* Static or compound initialiser: `pool_task t = POOL_TASK_INIT(fn);` */
/* clang-format off: an initialiser, not a block */
#define POOL_TASK_INIT(fn) \
    { (fn), 0, 0 }
/* clang-format on */

/* pool_config: the settings of pool_create. Zero-initialised, every field
   takes its default; each field's meaning, range and default is here, and
   pool_create returns EINVAL for a value out of range. */
struct pool_config {
    /* Worker threads at most, 0 to 65535. 0: $POOL_NUM_THREADS if it is set
       (1 to 65535), else the CPUs in this process's affinity mask, capped on
       Linux by its cgroup v2 CPU quota (ceil(quota / period) of the smallest
       cpu.max from its cgroup up to the root). */
    int num_threads;
    /* The workers' stack size; 0: the platform's. A size the system refuses
       (below its minimum, more than it can map) is EINVAL, tried once at
       create with a thread that exits at once. It is address space the
       stack may grow into, committed as it grows, on Windows too (64 KiB
       to 4 GiB - 1 there). */
    size_t stack_size;
    /* Thread name prefix: workers are "name-0", "name-1", ...; blocking
       threads "name-blk". NULL: "pool". */
    const char *name;
    /* Called on each worker and spare thread itself, before its first task
       and after its last, with `user` and its worker index; not on blocking
       threads. NULL: none. */
    void (*on_thread_start)(void *user, int worker_index);
    void (*on_thread_exit)(void *user, int worker_index);
    /* Passed to the thread hooks and to POOL_MALLOC / POOL_FREE. */
    void *user;
    /* Blocking threads at most, >= 0; 0: 512. */
    int max_blocking_threads;
    /* An idle blocking thread exits after this many milliseconds; 0: 10000. */
    unsigned blocking_keep_alive_ms;
    /* Pin worker i to CPU cpus[i % num_cpus] (the list is copied; CPUs 0 to
       1023, num_cpus >= 0; NULL cpus with num_cpus > 0 is EINVAL). Linux and
       Windows (CPUs 0-63 of the thread's processor group); elsewhere, and
       for a CPU the system refuses, the worker runs unpinned, which its
       pool_worker_stats.cpu (-1) shows. Blocking threads are never pinned.
       num_cpus 0: no pinning. */
    const int *cpus;
    int num_cpus;
    /* Spare threads at most, 0 to 65535; 0: 256. A worker that parks in a
       wait has its pool start a spare while queued work needs one (see
       WAITING); spares have worker indices from num_threads up, stop when
       the park ends, and stay for the next. Workers and spares together
       are at most 65535: the pool takes fewer spares where they would be
       more. Pools that call into each other need a thread per call blocked
       at once (see WAITING). */
    int max_spare_threads;
    /* The idle policy, 0 to 1000000: microseconds a worker that ran out of
       work keeps searching (between searches it watches the queues for a
       few microseconds, then yields the CPU; it only yields while a thread
       outside the pool works in one of its external slots) before the
       usual short search and sleep, so that work arriving within the gap
       starts without a kernel wake-up. It costs that much CPU per idle
       spell (from the end of one task to the start of the next: a worker
       woken for work that another took first does not spin again), which
       pool_stats.spin_ns counts. 0: $POOL_SPIN_US if it is a number up to
       1000000, else no spin (an idle pool costs next to nothing). */
    unsigned spin_us;
    /* While any worker is busy, the pool's monitor thread asks every worker
       this often (microseconds, up to 1000000) to promote its lazy join
       halves at its next join (see pool_join), so that a worker that runs
       out of work finds them queued. The monitor blocks when every worker is
       idle, asleep or parked, and uses no signal; on Windows a heartbeat is
       as coarse as the system's timer. POOL_HEARTBEAT_OFF: none. 0:
       $POOL_HEARTBEAT_US if it is a number up to 1000000 (0 there: none),
       else POOL_HEARTBEAT_DEFAULT_US (0: none). Off by default: idle and
       waiting workers ask for halves themselves (bench/results/heartbeat.txt
       has what a heartbeat cost and gave). */
    unsigned heartbeat_us;
    /* A busy worker whose deque holds this many tasks, with no worker of its
       pool idle and every thread the pool wants started, runs a task spawned
       into a scope by the function that made the scope at once (see
       pool_scope_spawn), as does a thread outside every pool in a scope it
       made with this many of the scope's tasks unfinished beyond one per
       thread, if spawn_throttle_outside says so; 1 to 65535.
       POOL_SPAWN_THROTTLE_OFF: every spawn is
       queued, for a program whose tasks wait for what their spawner does
       after the spawn. 0: num_threads, but at least
       POOL_SPAWN_THROTTLE_DEFAULT (8). */
    unsigned spawn_throttle;
    /* How many threads outside the pool may work in it at once (see
       pool_call), 1 to 30. POOL_EXTERNAL_SLOTS_NONE: every call from outside
       runs on a worker while its caller blocks. 0:
       POOL_EXTERNAL_SLOTS_DEFAULT (4). */
    int external_slots;
    /* The active count the pool starts with, 1 to num_threads: workers with
       an index at or above it take no work until pool_set_active_threads
       raises it. 0: num_threads. */
    int active_threads;
    /* Whether a thread outside every pool is throttled too, in a scope it
       made (see pool_scope_spawn for its rule): 1: yes, for a program whose
       tasks spawned from outside never wait for what their spawner does
       after the spawn; POOL_SPAWN_THROTTLE_OUTSIDE_OFF: no, every spawn
       from outside is queued. 0: yes if $POOL_SPAWN_THROTTLE_OUTSIDE is 1,
       else no. */
    int spawn_throttle_outside;
};

/* pool_config.heartbeat_us: no heartbeat. */
#define POOL_HEARTBEAT_OFF 0xffffffffu

/* pool_config.spawn_throttle: every spawn is queued. */
#define POOL_SPAWN_THROTTLE_OFF 0xffffffffu

/* pool_config.spawn_throttle_outside: spawns from outside are queued. */
#define POOL_SPAWN_THROTTLE_OUTSIDE_OFF (-1)

/* pool_config.external_slots: outside callers never work in the pool; their
   calls run on its workers while they block. */
#define POOL_EXTERNAL_SLOTS_NONE (-1)

/* pool_stats: counters, summed over the workers at the moment of the call
   (pool_stats_get). Each is exact once the pool is quiescent; while it runs
   they are a snapshot. */
struct pool_stats {
    uint64_t jobs_run;        /* tasks and join halves run from a queue (not a half its
                                 own join took straight back: that is a plain call), and
                                 calls run in external slots */
    uint64_t jobs_stolen;     /* ... of which were stolen from another worker */
    uint64_t steals_failed;   /* steal attempts that lost a race */
    uint64_t jobs_injected;   /* tasks posted to its injectors (from outside the pool,
                                 every high-priority one, and work its own threads hand
                                 there, counted again), counted as they are taken: behind
                                 the posts while tasks wait there */
    uint64_t sleeps;          /* times a worker blocked in the kernel */
    uint64_t wakeups;         /* times a worker was woken from the kernel */
    uint64_t wakeups_wasted;  /* ... and went back to sleep without running a task */
    uint64_t threads_started; /* worker threads started (up to num_threads) */
    uint64_t threads_failed;  /* worker and spare thread creations that failed */
    int num_threads;          /* configured maximum */
    uint64_t spares_started;  /* spare threads started: beyond num_threads, each to stand in
                                 for a worker parked in a wait */
    uint64_t waits_parked;    /* times a worker parked in a wait, with nothing of its own to run */
    uint64_t wait_depth_max;  /* the most waits ever nested on one thread's stack (the pool's
                                 threads, and outside threads waiting on the pool) */
    uint64_t spin_ns;         /* time idle workers spent searching within the spin budget
                                 (pool_config.spin_us): the CPU the idle policy cost */
    uint64_t joins_promoted;  /* join halves made stealable after the join began, for an
                                 idle worker (see pool_join); the others were plain calls */
    uint64_t spawns_inline;   /* scope tasks run at once by their spawner, whose deque was
                                 full enough (see pool_scope_spawn); not in jobs_run. On
                                 a thread outside the pool: added when a wait of the
                                 scope returns (a scope never waited for adds none) */
    uint64_t tasks_cancelled; /* scope tasks the pool's threads and slots skipped for a
                                 cancel (see pool_scope_cancel); not in jobs_run */
    uint64_t slot_calls;      /* calls and scope waits of outside threads that worked in an
                                 external slot (see pool_call); the rest were injected */
    uint64_t threads_retired; /* now: workers that stopped above the active count (see
                                 pool_set_active_threads) */
    /* The blocking pool. The first three are current values, kept without
       locks so that they can be read at any time. */
    uint64_t blocking_threads;         /* blocking threads alive */
    uint64_t blocking_idle_threads;    /* ... of which waiting for a task */
    uint64_t blocking_queue_depth;     /* blocking tasks queued, not started */
    uint64_t blocking_tasks_run;       /* blocking tasks run to completion */
    uint64_t blocking_tasks_skipped;   /* jobs skipped by pool_destroy_fast */
    uint64_t blocking_threads_started; /* blocking threads ever started */
    uint64_t blocking_threads_failed;  /* blocking thread creations that failed */
};

/* pool_worker_stats: one worker's, spare's or external slot's counters
   (pool_worker_stats_get); pool_stats sums them. */
struct pool_worker_stats {
    uint64_t jobs_run;       /* tasks and join halves run from a queue (see pool_stats) */
    uint64_t jobs_stolen;    /* ... of which this worker stole from another */
    uint64_t steals_failed;  /* steal attempts that lost a race */
    uint64_t jobs_injected;  /* tasks it took from the pool's injectors (see pool_stats) */
    uint64_t sleeps;         /* times it blocked in the kernel, or stopped above the active count */
    uint64_t wakeups;        /* times it was woken from the kernel */
    uint64_t wakeups_wasted; /* ... and went back to sleep without running a task */
    uint64_t waits_parked;   /* times it parked in a wait (see pool_stats) */
    uint64_t wait_depth_max; /* the most waits nested on its stack */
    uint64_t spin_ns;        /* time it spent searching within the spin budget */
    uint64_t joins_promoted; /* join halves it made stealable (see pool_stats) */
    uint64_t spawns_inline;  /* scope tasks it ran at once as it spawned them (see pool_stats) */
    uint64_t tasks_cancelled; /* scope tasks it skipped for a cancel (see pool_stats) */
    uint64_t slot_calls;      /* an external slot: the calls and waits run in it */
    int started;              /* 1 if its thread has been started (never, for a slot) */
    int cpu;                  /* the CPU it pinned itself to as it started; -1: none (yet) */
};

/* Private: a one-shot completion flag that a thread can block on. */
typedef struct pool__latch {
    uint32_t state;
} pool__latch;

/* pool_scope: a group of tasks to wait for (pool_scope_init, _spawn,
   _wait), owned by the caller; every field is private. It must stay valid
   until every call on it has returned: a wait that returns on one thread
   does not mean that a spawn on another, which ran its task at once, has
   returned.
   The fields that threads write while the scope is in use come first, and
   the rest, which every spawn and every task only read (the pool, the
   cancel mark), start 64 bytes after the last of them, in another cache
   line: a spawner's read-modify-write of the count, and a worker's when
   tasks finish, would otherwise take that line away from every other
   thread's next spawn and next task. (Where a prefetch fetches lines in
   pairs, the read-only line may come along with the written one: it has
   nothing to write back.) */
struct pool_scope {
    size_t pool__pending;          /* unfinished tasks, plus a bit while nobody waits yet */
    uint64_t pool__inline_runs;    /* 2 per task run at once, odd while one runs */
    uint64_t pool__inline_owed;    /* stand-ins counted by waiters for such a run */
    uint64_t pool__inline_counted; /* runs at once from outside in the pool's stats */
    unsigned char pool__apart[64 - sizeof(uint64_t)];
    pool *pool__pool;
    pool__latch pool__done;
    uint32_t pool__cancel;   /* the round cancelled, | 1; 0: none (see >>scopes) */
    uint32_t pool__ended;    /* the round the last wait ended, | 1 if it was cancelled */
    uint32_t pool__injected; /* 1 once a task of it went into an injector */
    void (*pool__on_cancel)(pool_task *t); /* called for a task skipped by a cancel */
    const void *pool__origin;              /* the worker that initialised it, NULL: none */
    uint64_t pool__origin_run;             /* ... and the id of the run it was in then */
    uint64_t pool__outside_origin; /* the thread outside every pool that did (its id), 0: none */
};

/* pool_graph_node: a task of a graph (pool_graph_add), run once per run of
   the graph after every node linked before it (pool_graph_link) has
   finished. Owned by the caller, like a pool_task; it must stay valid, and
   keep its graph, as long as the graph is used. Make it with
   POOL_GRAPH_NODE_INIT or zero it and set run. */
struct pool_graph_node {
    void (*run)(pool_graph_node *self); /* set by the user */
    pool_task pool__task;               /* private from here on */
    pool_graph *pool__graph;            /* the graph it was added to */
    pool_graph_node *pool__next;        /* the graph's list of nodes */
    pool_graph_node *pool__next_root;   /* the graph's list of nodes without predecessors */
    pool_graph_edge *pool__out;         /* the edges to its successors */
    uint32_t pool__preds;               /* how many edges lead to it */
    uint32_t pool__waiting;             /* predecessors not finished in this run */
    uint32_t pool__generation;          /* its graph's when it was added */
};

/* Static or compound initialiser for a node whose run is fn. */
/* clang-format off: an initialiser, not a block */
#define POOL_GRAPH_NODE_INIT(fn) \
    { (fn), POOL_TASK_INIT(0), 0, 0, 0, 0, 0, 0, 0 }
/* clang-format on */

/* pool_graph_edge: the storage of one edge (pool_graph_link), owned by the
   caller: no graph allocates. Zero it before its link (an edge in use is
   refused); it stays valid, and in use, as long as its graph is used. */
struct pool_graph_edge {
    pool_graph_node *pool__to; /* private */
    pool_graph_edge *pool__next;
};

/* pool_graph: nodes and the edges between them, built once and run any
   number of times (pool_graph_init, _add, _link, _run, _wait), owned by the
   caller; every field is private. */
struct pool_graph {
    pool_scope pool__scope;        /* a run's nodes are the scope's tasks */
    pool_graph_node *pool__nodes;  /* every node, newest first */
    pool_graph_node *pool__roots;  /* the nodes without predecessors, once checked */
    uint32_t pool__run;            /* the run's generation and state (see >>api-graphs) */
    uint32_t pool__blocked;        /* waiters blocked until the run's claimant ends it */
    uint32_t pool__cancelled_runs; /* bit (generation % 32) of each of the last 32 runs:
                                      set if its wait said ECANCELED */
    int pool__checked;             /* 0: changed since the cycle check; else its result + 1 */
    uint32_t pool__generation;     /* its pool_graph_init's, which its nodes hold */
};

/* pool_completion_item: what a finished piece of work posts to a
   completion queue (pool_completion_post); embed it in your own struct and
   recover the struct with offsetof, as with pool_task. Owned by the
   caller: valid until it has been drained. */
struct pool_completion_item {
    pool_completion_item *next; /* set by pool_completion_drain: the next item, oldest first */
};

/* A stack that raises a descriptor when it stops being empty: what a
   completion queue and an inbox are made of. Private. */
struct pool__signalled_stack {
    void *pool__posted;       /* the nodes posted, newest first */
    intptr_t pool__signal[2]; /* the descriptors or event (see >>platform) */
    uint32_t pool__raising;   /* posts that found it empty and may still raise */
};

/* pool_completion: a queue of finished work with a descriptor that an
   event loop waits on (pool_completion_init, _handle, _post, _drain,
   _destroy). Owned by the caller; every field is private. */
struct pool_completion {
    struct pool__signalled_stack pool__stack; /* of pool_completion_items */
};

/* pool_inbox: the tasks pinned to one thread that is not a worker,
   typically main (pool_inbox_init, _post, _run, _wait, _handle,
   _destroy; see PINNED TASKS). Owned by the caller; every field is
   private. */
struct pool_inbox {
    struct pool__signalled_stack pool__stack; /* of pool_tasks */
    uint64_t pool__owner;                     /* the thread that made it */
};

/* pool_blocking_job: a blocking task that can be waited for, and skipped
   by a fast shutdown (pool_submit_blocking_job, pool_wait_blocking_job).
   Make it with POOL_BLOCKING_JOB_INIT or zero it; it must stay valid until
   its wait returns, or until pool_destroy returns if nobody waits. */
struct pool_blocking_job {
    void (*run)(pool_blocking_job *self);       /* the blocking work; set by the user */
    void (*on_cancel)(pool_blocking_job *self); /* optional: called instead of run if
                                                   pool_destroy_fast skips the job */
    int mandatory;                              /* nonzero: never skipped */
    pool_task pool__task;                       /* private from here on */
    pool *pool__pool;
    uint32_t pool__refs;
    int pool__status;
    uint32_t pool__fork_generation;
    pool__latch pool__done;
};

/* Static or compound initialiser for a job whose run is fn. */
/* clang-format off: an initialiser, not a block */
#define POOL_BLOCKING_JOB_INIT(fn) \
    { \
        (fn), 0, 0, POOL_TASK_INIT(0), 0, 0, 0, 0, { 0 } \
    }
/* clang-format on */

/* Every function below may be called from any thread unless its block says
   otherwise: a worker of the same pool, a worker of another pool, a thread
   outside every pool. A NULL `pool *` means the default pool, created on
   first use (pool_destroy excepted). Errors are errno values (see ERRORS at
   the top for what each code means across the API). */

/* ---- lifecycle ---------------------------------------------------------- */

/* pool_create: makes a pool configured by cfg (NULL: every default) and
   stores it in *out. Starts no worker: threads start when work comes.
   Errors:  EINVAL: out is NULL; or (*out is then set to NULL) num_threads or
            max_spare_threads < 0 or > 65535; max_blocking_threads < 0;
            spin_us > 1000000; heartbeat_us > 1000000 but for
            POOL_HEARTBEAT_OFF; spawn_throttle > 65535 but for
            POOL_SPAWN_THROTTLE_OFF; external_slots < -1 or > 30;
            spawn_throttle_outside < -1 or > 1; active_threads < 0 or
            above the pool's thread count; a stack_size the system
            refuses; num_cpus < 0, cpus NULL with
            num_cpus > 0, or a CPU outside 0..1023. ENOMEM.
   Threads: any.
   Blocks:  no; with a stack_size, while a thread started with it to check
            it exits. */
POOL_DEF int pool_create(pool **out, const pool_config *cfg);

/* pool_destroy: runs all accepted work to completion (blocking tasks first,
   while the workers still run), wakes and joins every thread, frees p.
   Meanwhile pool_submit(_batch) fail with ECANCELED, as do spawns from
   outside the pool and, once the blocking pool has shut down, blocking
   submissions; joins, calls and spawns of p's own tasks complete.
   Errors:  EINVAL: p is NULL (the default pool lives until exit).
            EDEADLK: called from inside a task of p, on whatever thread runs
            it; p keeps working. ECHILD: a pool created before a fork().
   Threads: any thread but p's own tasks; every other thread must have
            returned from its calls on p first, as for any freed object.
   Blocks:  until the work is done. On a worker of another pool, that pool
            starts a spare thread meanwhile if work is queued there. */
POOL_DEF int pool_destroy(pool *p);

/* ---- fork-join ---------------------------------------------------------- */

/* pool_join: runs a(a_arg) and b(b_arg), in parallel if a worker is free,
   and returns when both are done. On a worker of p the join is lazy: b is
   recorded on the caller's stack and made stealable at a task's outermost
   join, or when a join begins or ends and this worker has been asked for
   work: by an idle or waiting worker, a worker falling asleep or parking,
   a raised pool_set_active_threads, or the heartbeat; otherwise it runs as
   a plain call after a (see >>lazy in the implementation). So a b behind
   an a that joins no further is not stealable until a returns: fork at a
   fine grain, or use a scope or pool_parallel_for for a few long pieces.
   From outside the pool it runs as pool_call does. Each nested level takes a
   frame of the caller's stack (bench/stack.c measures it). In C (C99 and
   later), a call of pool_join is also a macro: on a worker of p the join
   runs inline in the caller, so that a and b known where it is called
   become direct calls; (pool_join)(...) and &pool_join reach the function,
   which does the same. Being a macro, it also replaces a call through a
   struct member named pool_join: define POOL_NO_INLINE_JOIN to have none.
   POOL_DEBUG builds call the function, whose invariant checks the inline
   join leaves out.
   Errors:  none; a NULL a or b is skipped (the other runs on the caller).
   Threads: any.
   Blocks:  until both are done; a caller whose b was stolen runs only b's
            work meanwhile and parks when there is none (see WAITING). */
POOL_DEF void pool_join(pool *p, pool_fn a, void *a_arg, pool_fn b, void *b_arg);

/* pool_fork: one function and its argument, for pool_join_n. */
typedef struct pool_fork {
    pool_fn fn;
    void *arg;
} pool_fork;

/* pool_join_n: runs forks[i].fn(forks[i].arg) for i in 0 .. n-1, in
   parallel where workers are free, and returns when all are done: an
   n-way pool_join (a 7-way fork without a scope). The array is halved by
   pool_joins, so every rule of pool_join holds for each piece, and the
   nesting takes about log2(n) of pool_join's stack frames.
   Errors:  none; entries whose fn is NULL are skipped, and a NULL forks
            or n of 0 does nothing.
   Threads: any (from outside the pool, as pool_join).
   Blocks:  until every fn has returned (see WAITING). */
POOL_DEF void pool_join_n(pool *p, const pool_fork *forks, size_t n);

/* pool_call: runs fn(arg) on p and waits. On a worker of p: inline. On a
   thread outside every pool: on the calling thread, in one of p's external
   slots (pool_worker_index() then returns the slot's index), or with every
   slot taken on a worker while the caller blocks. On a worker of another
   pool: on a worker of p while the caller blocks. The caller runs none of
   p's other work meanwhile, beyond what fn forks.
   Errors:  none; a NULL fn does nothing. If p can start no thread, or is
            being destroyed, fn runs on the caller.
   Threads: any.
   Blocks:  until fn returns (see WAITING). */
POOL_DEF void pool_call(pool *p, pool_fn fn, void *arg);

/* pool_call_on_worker: runs fn(arg) on a worker thread of p and waits, for
   a function that needs the workers' stack size, pinning or their
   on_thread_start setup. Inline on a worker of p.
   Errors:  none; a NULL fn does nothing. If p can start no thread, is
            being destroyed or was inherited across a fork(), or the
            default pool cannot be created, fn runs on the caller after
            all, as pool_call's would.
   Threads: any.
   Blocks:  until fn returns; the caller runs nothing else meanwhile. */
POOL_DEF void pool_call_on_worker(pool *p, pool_fn fn, void *arg);

/* pool_parallel_for: calls body(arg, lo, hi) on disjoint sub-ranges that
   together cover [begin, end) exactly once, in parallel. The range is
   halved by joins that are eager (parallel from the start). grain > 0:
   halve while a piece is longer than grain (it bounds what one call gets);
   0: a few pieces per thread, and a piece is cut further when stolen.
   Errors:  none; an empty range or a NULL body does nothing.
   Threads: any (from outside the pool, as pool_call).
   Blocks:  until every sub-range is done (see WAITING). */
POOL_DEF void pool_parallel_for(pool *p, size_t begin, size_t end, size_t grain,
                                void (*body)(void *arg, size_t lo, size_t hi), void *arg);

/* ---- parallel algorithms ------------------------------------------------ */

/* pool_reducer: how pool_parallel_reduce combines partial results. A
   partial result is `size` bytes of the caller's type (a long, a struct
   of sums, a small histogram); the pool keeps one per piece of the range
   it is working on, aligned for any type. */
typedef struct pool_reducer {
    size_t size;          /* bytes of one partial result, > 0 */
    const void *identity; /* `size` bytes: the result of no elements */
    /* Adds elements lo .. hi-1 into acc, which holds the identity or what
       earlier calls on this piece added. Called concurrently on disjoint
       ranges, each with its own acc: no atomics needed. */
    void (*fold)(void *arg, void *acc, size_t lo, size_t hi);
    /* acc = acc (+) later, where `later` is the result of the range just
       after acc's. Need not be commutative; must be associative. */
    void (*combine)(void *arg, void *acc, const void *later);
} pool_reducer;

/* pool_parallel_reduce: folds [begin, end) into *result (`r->size`
   bytes, the first piece's partial result while the call runs). The
   range is split as pool_parallel_for splits it; each piece is folded
   from the identity, and neighbours are combined in range order. With
   grain > 0 the pieces and the order of every combine depend only on
   begin, end and grain, so a floating-point sum gives the same bits on
   every run and every thread count; with grain 0 the split follows the
   idle workers, and the result is the same only for an exact combine.
   Partial results of up to 128 bytes live on the stack; a larger one is
   allocated (POOL_MALLOC) at each split, and where that fails the piece
   is folded whole instead (the same result for an exact combine).
   r->identity must not overlap *result: the pieces start from it while
   the first one folds into *result.
   Errors:  EINVAL: NULL r, result, r->identity, r->fold or r->combine,
            or r->size 0. An empty range copies the identity into
            *result.
   Threads: any (from outside the pool, as pool_call).
   Blocks:  until the whole range is folded (see WAITING). */
POOL_DEF int pool_parallel_reduce(pool *p, size_t begin, size_t end, size_t grain,
                                  const pool_reducer *r, void *arg, void *result);

/* pool_qsort: sorts n elements of `size` bytes at base in ascending order
   of cmp, as qsort does, in parallel on p: a mergesort whose halves and
   merges are joins, so its parallelism grows with the pool. cmp is called
   from several threads at once and must be safe for that, and it may be
   given copies of elements in the scratch, not only pointers into base:
   it must depend on the bytes it is given alone (not on an index worked
   out from the pointer, nor on the address for a tie). The order of equal elements is unspecified
   (not stable). Elements over 32 bytes are sorted through an array of
   pointers and moved once at the end.
   Memory: scratch of n * size bytes (n * (size + 16) above 32 bytes),
   allocated with POOL_MALLOC and freed before the return; if that fails,
   an in-place parallel quicksort (heapsort past a depth limit) sorts
   instead, and the call still succeeds.
   Errors:  EINVAL: NULL cmp, NULL base with n > 1, size 0, or n * size
            beyond SIZE_MAX. base is then untouched.
   Threads: any (from outside the pool, as pool_call).
   Blocks:  until sorted (see WAITING). */
POOL_DEF int pool_qsort(pool *p, void *base, size_t n, size_t size,
                        int (*cmp)(const void *a, const void *b));

/* pool_broadcast: runs fn(arg, i) once on each worker i of p, 0 ..
   num_threads - 1, as a task pinned to it (pool_submit_pinned), and waits
   for all of them: per-thread setup such as seeding an RNG. Workers not
   started yet are started; a worker above the active count wakes to run
   it. Spare threads and callers in external slots, which run p's tasks
   too (indices num_threads .. pool_worker_index_limit(p) - 1), are not
   reached: size per-thread data by pool_worker_index_limit, and set up
   those entries yourself.
   Errors:  EINVAL: NULL fn. EDEADLK: called from a task of p on any thread
            (each worker must be free to run its call; nothing ran); a
            blocking task of p, which runs on no worker, may broadcast.
            EAGAIN: a worker's thread could not be started (nothing ran).
            ENOMEM: the default pool could not be created, or, above 32
            workers, the tasks could not be allocated (nothing ran).
            ECHILD: a pool created before a fork(). ECANCELED: p's destroy
            had begun (a destroy may not overlap the call: see
            pool_destroy); fn may have run on some workers, which
            finished before the return.
   Threads: any but p's own tasks (EDEADLK; a blocking task of p is not
            one of them). A worker runs its call when
            it is free, never on top of a wait of its own (see PINNED
            TASKS): a worker of p blocked until the caller returns (it
            waits for a blocking job, or a call into another pool, that
            broadcasts) never runs it, and the broadcast never returns.
   Blocks:  until every call returned; a worker of another pool blocks
            without helping (its pool gets a spare meanwhile). */
POOL_DEF int pool_broadcast(pool *p, void (*fn)(void *arg, int worker), void *arg);

/* ---- scopes ------------------------------------------------------------- */

/* pool_scope_init: prepares a caller-owned scope (the stack is fine) for
   spawns into p. A scope is reusable after its wait.
   Errors:  none; a NULL s does nothing.
   Threads: any; the thread and task that initialise it are its origin
            (see pool_scope_spawn).
   Blocks:  no (it may create the default pool). */
POOL_DEF void pool_scope_init(pool_scope *s, pool *p);

/* pool_scope_spawn: queues t in s; t's run may spawn more into s. A busy
   worker whose deque holds spawn_throttle tasks (8, or num_threads if
   more), while no worker of the pool is idle and every thread it wants is
   started, runs a spawn from the scope's origin at once, before it
   returns: so a task must not wait for anything its spawner does after
   the spawn, unless spawn_throttle is POOL_SPAWN_THROTTLE_OFF. A thread
   outside every pool is throttled only if the pool's
   spawn_throttle_outside says so: in a scope it made, it runs a spawn at
   once while spawn_throttle tasks of the scope are unfinished beyond one
   for each of the pool's threads (on that thread, in no slot:
   pool_worker_index() is -1 there). Spawns from the scope's own tasks,
   into an outer scope, or into a scope made on another thread are always
   queued.
   Errors:  EINVAL: NULL s, t or t->run. EBUSY: t is still queued from an
            earlier submission. ECANCELED: s is cancelled (t was not taken),
            or, from outside the pool, the pool is being destroyed;
            pool_scope_cancelled(s) tells the two apart. ECHILD: a pool
            created before a fork().
   Threads: any.
   Blocks:  no, but for a task it runs at once. */
POOL_DEF int pool_scope_spawn(pool_scope *s, pool_task *t);

/* pool_scope_spawn_priority: pool_scope_spawn at a priority (see
   PRIORITIES). POOL_PRIORITY_NORMAL is pool_scope_spawn; a
   POOL_PRIORITY_HIGH task goes to the high queue, even from a worker,
   and is never run at once by the throttle (only where no pool could be
   created, as any spawn then).
   Errors:  as pool_scope_spawn; EINVAL also for a priority that is
            neither of the two.
   Threads: any.
   Blocks:  as pool_scope_spawn. */
POOL_DEF int pool_scope_spawn_priority(pool_scope *s, pool_task *t, pool_priority priority);

/* The largest argument block pool_scope_spawn_copy copies, and the
   alignment of its copy. */
#define POOL_SPAWN_COPY_MAX 96
#define POOL_SPAWN_COPY_ALIGN 16

/* pool_scope_spawn_copy: spawns fn into s with a copy of the `size` bytes
   at arg: fn receives a pointer to the copy (aligned to
   POOL_SPAWN_COPY_ALIGN: for any type that is not over-aligned; valid
   until fn returns), so the caller needs no task struct and may reuse or
   free arg as soon as this returns: a C translation of OpenMP's
   `#pragma omp task firstprivate(...)`. The copy lives in a cell of the
   pool's: each worker keeps a cache of free cells, refilled from a list
   the pool shares under a lock or from a new slab of 64 cells, so a
   spawn and a run on a worker take no lock and allocate nothing while
   its cache lasts (a thread outside the pool always takes the shared
   list's lock); a slab is allocated (POOL_MALLOC) only when the caller's
   cache and the shared list are empty, and all are freed by
   pool_destroy. Every other rule is pool_scope_spawn's: it may run fn at
   once, on the spawner, under the throttle, and then takes no cell (the
   copy is on the spawner's stack until fn returns). A cancel of s drops the
   copied spawns it skips without calling s's on_cancel (they have no
   task of yours): a block that owns something (memory fn would free)
   leaks then, so in a scope that may be cancelled copy only what fn
   does not have to release.
   Errors:  EINVAL: NULL s or fn, a size above POOL_SPAWN_COPY_MAX, or a
            NULL arg with a size. ECANCELED and ECHILD as
            pool_scope_spawn (never EBUSY: the task is the pool's).
            ENOMEM: no free cell at hand and no slab could be allocated
            (nothing was spawned: call fn yourself, or wait and retry);
            never for a spawn run at once.
   Threads: any (from outside the pool, the free cells are shared under a
            lock).
   Blocks:  as pool_scope_spawn. */
POOL_DEF int pool_scope_spawn_copy(pool_scope *s, pool_fn fn, const void *arg, size_t size);

/* pool_scope_wait: waits until s has no unfinished task: every task
   spawned into s before the wait began, directly or nested, has finished,
   and so has every task spawned into it meanwhile, by any thread, before
   the count of unfinished tasks came to 0 (a thread that keeps tasks of s
   under way keeps its waiters waiting; a task of s that waits for a
   waiter of s to return deadlocks). It runs the scope's own
   tasks meanwhile; s can then be reused. Any number of threads may wait
   on s at once, and spawn into it meanwhile.
   Errors:  none (see pool_scope_wait_status); from inside a task of s it
            returns at once.
   Threads: any.
   Blocks:  until the tasks are done (see WAITING); from outside the pool
            the caller works in an external slot if one is free. */
POOL_DEF void pool_scope_wait(pool_scope *s);

/* pool_scope_wait_status: pool_scope_wait, telling why it did not wait
   or whether the scope was cancelled.
   Errors:  0: every task has finished. ECANCELED: every task has finished
            or was skipped, and s was cancelled while this wait's tasks
            ran (a thread that joined another's wait under way may get 0
            when a later wait of s ended before it returned). EINVAL: s is
            NULL. EDEADLK: called
            from inside a task of s, or from a join half forked by one, on
            whatever thread runs it, or on a thread inside a task of s that
            the throttle ran at once there: nothing was waited for. (Else
            only the task this thread runs innermost is looked at: from a
            task of another scope that a queued task of s spawned and the
            throttle ran at once, the wait is not refused, and it deadlocks
            as the program would run serially; nor is a wait on another
            thread that a task of s waits for, as a pool_call_on_worker
            from a task of s run in an external slot, or a call into
            another pool, whose function waits for s: it deadlocks.)
   Threads: any.
   Blocks:  as pool_scope_wait. */
POOL_DEF int pool_scope_wait_status(pool_scope *s);

/* pool_scope_cancel: cancels s until the end of its next wait: tasks of s
   not yet started are not run (s's on_cancel, if set, is called for each
   instead, on whichever thread took it; copied spawns are dropped
   without it, see pool_scope_spawn_copy), spawns into s are refused with
   ECANCELED, running tasks go on and may ask pool_scope_cancelled, and
   the wait returns once they have finished and the rest are skipped,
   with ECANCELED from pool_scope_wait_status. When that wait ends, s is
   no longer cancelled: reused, it starts afresh. Cancelling twice is
   cancelling once. A cancel that comes as a wait ends counts for that wait
   (which reports ECANCELED) or for neither, never for the next; a task
   spawned as a cancelled wait ends may be skipped (its on_cancel called)
   with the next wait reporting 0.
   Errors:  EINVAL: s is NULL.
   Threads: any, also a task of s.
   Blocks:  no. */
POOL_DEF int pool_scope_cancel(pool_scope *s);

/* pool_scope_cancelled: nonzero while s is cancelled (see
   pool_scope_cancel): a long task of s may ask it to stop early. What the
   canceller wrote before pool_scope_cancel is visible to a thread that
   sees it cancelled.
   Errors:  none; a NULL s reads 0.
   Threads: any.
   Blocks:  no. */
POOL_DEF int pool_scope_cancelled(const pool_scope *s);

/* pool_scope_on_cancel: sets the function called, instead of its run, for
   each task of s that a cancel skips (NULL: none; pool_scope_init clears
   it), so that the task's memory can be released. Not for copied spawns
   (pool_scope_spawn_copy): they have no task of yours. It is called on
   whichever thread took the task, and must not wait for s, directly or
   through another thread: its task counts as unfinished until it returns.
   Set it before the spawns it should cover.
   Errors:  EINVAL: s is NULL.
   Threads: any.
   Blocks:  no. */
POOL_DEF int pool_scope_on_cancel(pool_scope *s, void (*on_cancel)(pool_task *t));

/* ---- graphs ------------------------------------------------------------- */

/* pool_graph_init: prepares a caller-owned graph, empty, on pool p (NULL:
   the default pool): add nodes, link them, then run it and wait for the
   run, as often as needed. Initialising a graph again forgets its nodes
   and edges, which stay in use (EBUSY) until they are zeroed or made
   afresh, and are no nodes of it for pool_graph_link (EINVAL).
   Errors:  none; a NULL g does nothing.
   Threads: any, but only once g is not running and every other call
            on g has returned (the waits of its last run included: as for
            freeing g, join or hear from each waiting thread first).
   Blocks:  no (it may create the default pool). */
POOL_DEF void pool_graph_init(pool_graph *g, pool *p);

/* pool_graph_add: adds node n (run set, made with POOL_GRAPH_NODE_INIT or
   zeroed) to g.
   Errors:  EINVAL: NULL g, n or n->run. EBUSY: n is in a graph already
            (this one or another: a node stays in its graph), or g is
            running (run, not yet waited).
   Threads: any, but not at the same time as another call on g.
   Blocks:  no. */
POOL_DEF int pool_graph_add(pool_graph *g, pool_graph_node *n);

/* pool_graph_link: makes `to` run after `from` in every run of g, with e as
   the edge's storage. A cycle is not refused here: the next pool_graph_run
   finds it (ELOOP), so that building a graph costs nothing per edge.
   Errors:  EINVAL: NULL g, e, from or to, or from or to not a node of g
            (one added before g's last pool_graph_init is not). EBUSY: e
            is in use (linked already, or not zeroed), or g is
            running (run, not yet waited).
   Threads: any, but not at the same time as another call on g.
   Blocks:  no. */
POOL_DEF int pool_graph_link(pool_graph *g, pool_graph_edge *e, pool_graph_node *from,
                             pool_graph_node *to);

/* pool_graph_run: starts a run of g: every node runs once, after all its
   predecessors, in parallel where the edges allow; returns at once. Each
   run must be waited for (pool_graph_wait) before the next, or before g
   is changed. When g changed since its last run, it is first checked for
   a cycle, in time linear in its nodes and edges.
   Errors:  EINVAL: g is NULL. EBUSY: g is running already. ELOOP: g has a
            cycle (nothing runs). ECANCELED: from outside the pool while it
            is being destroyed (nothing runs). ECHILD: a pool created before
            a fork().
   Threads: any.
   Blocks:  no; only when g has no pool (the default pool could not be
            created) does the whole run happen here, before it returns. */
POOL_DEF int pool_graph_run(pool_graph *g);

/* pool_graph_wait: waits until the run of g has finished, running its
   nodes meanwhile as pool_scope_wait does; g can then be run again or
   changed. Returns 0 at once if g is not running (a cancel made meanwhile
   stays for the next run); a run that pool_graph_run is still starting
   (another thread may see its first nodes run) counts as running, or as
   none if it is refused. Several threads may wait for one run: the
   first runs nodes, the others block until it has ended; each returns
   once the run it found under way has ended, also when another waiter
   came back first and ran g again.
   Errors:  0: every node ran. ECANCELED: the run was cancelled
            (pool_graph_cancel): the nodes not yet started did not run (a
            cancel that came as the run ended may find every node run;
            a waiter that blocked, and woke only after 32 more runs of g,
            refused ones included, says the outcome of one of those).
            EINVAL: g is NULL. EDEADLK: called from a node of g (nothing
            was waited for). ECHILD: in the child of a fork(), a run of a
            pool created before it that was under way at the fork (it is
            ended in the child; what runs of it stays the parent's).
   Threads: any.
   Blocks:  until the run has finished (see WAITING). */
POOL_DEF int pool_graph_wait(pool_graph *g);

/* pool_graph_cancel: cancels g's run under way, or the next one if none is:
   nodes not yet started do not run, and pool_graph_wait says ECANCELED. A
   run after that wait is not cancelled.
   Errors:  EINVAL: g is NULL.
   Threads: any, also a node of g.
   Blocks:  no. */
POOL_DEF int pool_graph_cancel(pool_graph *g);

/* pool_graph_cancelled: nonzero while g is cancelled (see
   pool_graph_cancel): a long node may ask it to stop early.
   Errors:  none; a NULL g reads 0.
   Threads: any.
   Blocks:  no. */
POOL_DEF int pool_graph_cancelled(const pool_graph *g);

/* ---- completion queues -------------------------------------------------- */

/* pool_completion_init: makes c a completion queue: tasks, scopes' and
   graphs' last tasks, blocking jobs, or any thread post items to it when
   they finish, and an event loop learns of them by waiting on its handle
   (poll, epoll, kqueue, libuv, WaitForMultipleObjects) and draining it,
   without a thread parked in a wait of pool.h's. The handle is an eventfd
   on Linux (a pipe with POOL_COMPLETION_PIPE defined where the
   implementation is), a pipe's read end on other POSIX systems, a
   manual-reset event on Windows. It needs no pool.
   Errors:  EINVAL: c is NULL. The errno of eventfd, pipe or fcntl (EMFILE,
            ENFILE, ...); ENOMEM on Windows.
   Threads: any.
   Blocks:  no. */
POOL_DEF int pool_completion_init(pool_completion *c);

/* pool_completion_handle: what to wait on for c: a descriptor that polls
   readable (POLLIN) once items are posted and until they are drained, or,
   on Windows, an event HANDLE (cast to intptr_t) that is set then. It may
   be readable with nothing to drain, after a post raced with a drain:
   drain and wait again. Do not read it or close it yourself. A child of
   fork() shares it with its parent: use a queue in one process only.
   Errors:  none; a NULL c gives -1 (0 on Windows, which no wait accepts).
   Threads: any.
   Blocks:  no. */
POOL_DEF intptr_t pool_completion_handle(const pool_completion *c);

/* pool_completion_post: adds item to c; the post that finds c empty makes
   its handle readable as it returns (so a post onto items not yet drained
   leaves that to the one before it). Any thread, typically at the end of a
   task's run; what the poster wrote before is visible to the thread that
   drains the item. Never blocks and never allocates. An item may be posted
   again only once it has been drained (posted twice, it would link to
   itself).
   Errors:  EINVAL: c or item is NULL. The errno of a failed write to the
            handle (which a live queue's never fails; EIO on Windows); the
            item is queued all the same.
   Threads: any.
   Blocks:  no. */
POOL_DEF int pool_completion_post(pool_completion *c, pool_completion_item *item);

/* pool_completion_drain: takes every item posted to c so far and makes its
   handle unreadable until the next post; returns them oldest first,
   linked through `next` (NULL: none). Call it when the handle is readable;
   it never blocks, so it may also be called to poll.
   Errors:  none; NULL for a NULL c.
   Threads: any, but one drainer at a time per c is the intended use
            (items are never drained twice either way).
   Blocks:  no. */
POOL_DEF pool_completion_item *pool_completion_drain(pool_completion *c);

/* pool_completion_destroy: closes c's handle, once every post that is
   still raising it has done so (a post's item may be drained before its
   raise: once every item posted is drained, c may be destroyed). Items not
   drained are left to their owners; nothing may post to c or wait on its
   handle after.
   Errors:  EINVAL: c is NULL.
   Threads: any, once nothing posts to c any more.
   Blocks:  only while a post finishes raising the handle (a system call). */
POOL_DEF int pool_completion_destroy(pool_completion *c);

/* ---- inboxes: tasks pinned to a thread outside the pool ----------------- */

/* pool_inbox_init: makes box the inbox of the calling thread (see PINNED
   TASKS): tasks posted to it from any thread run on this thread only, when
   it calls pool_inbox_run. Its handle, like a completion queue's (an
   eventfd on Linux unless POOL_COMPLETION_PIPE, a pipe elsewhere, an
   event HANDLE on Windows), is
   readable while tasks wait, so an event loop learns of them without a
   thread parked in a wait. It needs no pool.
   Errors:  EINVAL: box is NULL. The errno of eventfd, pipe or fcntl
            (EMFILE, ENFILE, ...); ENOMEM on Windows.
   Threads: any; the caller becomes the inbox's owner, for good: once it
            ends, no thread may run box (pool_inbox_run and _wait say
            EPERM), a thread started later included.
   Blocks:  no. */
POOL_DEF int pool_inbox_init(pool_inbox *box);

/* pool_inbox_handle: what to wait on for box (as pool_completion_handle):
   it polls readable once a task is posted and until pool_inbox_run takes
   it; it may be readable with nothing to run after a post raced with a
   run. Do not read or close it.
   Errors:  none; a NULL box gives -1 (0 on Windows).
   Threads: any.
   Blocks:  no. */
POOL_DEF intptr_t pool_inbox_handle(const pool_inbox *box);

/* pool_inbox_post: queues t to run on box's owner thread, at its next
   pool_inbox_run, after the tasks posted before it; returns at once. Any
   thread, a task of any pool's included. What the poster wrote before is
   visible to t's run. t must stay valid until its run is called, which may
   free it or post it again.
   Errors:  EINVAL: box, t or t->run is NULL. EBUSY: t is still queued
            (here or in a pool). The errno of a failed write to the handle
            (never for a live inbox; EIO on Windows): t is queued all the
            same.
   Threads: any.
   Blocks:  no; never allocates. */
POOL_DEF int pool_inbox_post(pool_inbox *box, pool_task *t);

/* pool_inbox_run: runs, on the calling thread, every task posted to box
   before the call, oldest first, and makes the handle unreadable until the
   next post. Tasks those tasks post wait for the next call, so the call
   always returns. *ran (if ran is not NULL) is how many ran. A task's run
   may call pool_inbox_run again.
   Errors:  EINVAL: box is NULL. EPERM: the caller is not box's owner
            (nothing runs).
   Threads: box's owner only.
   Blocks:  no, beyond the tasks it runs. */
POOL_DEF int pool_inbox_run(pool_inbox *box, size_t *ran);

/* pool_inbox_wait: for an owner with no event loop: blocks until a task
   is posted to box (returns at once if one waits) or timeout_ms pass
   (-1: no limit); then call pool_inbox_run. It burns no CPU while it
   waits, and a signal handled meanwhile does not end it early.
   Errors:  ETIMEDOUT: the time passed with nothing posted. EINVAL: box is
            NULL or timeout_ms < -1. EPERM: the caller is not box's owner.
            The errno of poll() (not EINTR); EIO on Windows.
   Threads: box's owner only.
   Blocks:  yes, until a post or the timeout. */
POOL_DEF int pool_inbox_wait(pool_inbox *box, int timeout_ms);

/* pool_inbox_destroy: closes box's handle. No task may be waiting: run
   them first (EBUSY leaves the inbox as it was), and nothing may post to
   box or wait on its handle after.
   Errors:  EINVAL: box is NULL. EBUSY: tasks are still posted.
   Threads: any, once nothing posts to box any more.
   Blocks:  only while a post finishes raising the handle (a system call). */
POOL_DEF int pool_inbox_destroy(pool_inbox *box);

/* ---- detached tasks ----------------------------------------------------- */

/* pool_submit: queues a detached task and returns at once: t never runs
   before pool_submit returns (from a worker of p it goes on that worker's
   deque, which the worker itself may run later). t must stay valid until its run is called,
   which may free or reuse it.
   Errors:  EINVAL: NULL t or t->run. EBUSY: t is still queued. ECANCELED:
            p's destroy has begun. EAGAIN: p has no worker thread and none
            could be started (t was not taken). ENOMEM: the default pool
            could not be created. ECHILD: a pool created before a fork().
   Threads: any.
   Blocks:  no, but the first submission to a pool with no thread starts
            one (it may wait for the lock of another thread's start), and
            a NULL p may create the default pool. */
POOL_DEF int pool_submit(pool *p, pool_task *t);

/* pool_submit_batch: queues n tasks, published with one atomic operation
   (from a worker of p, onto its deque with one announce). All or none are
   accepted.
   Errors:  as pool_submit; EINVAL also for a NULL tasks with n > 0 and for
            any invalid element (none is queued), EBUSY for a task queued
            twice in the batch.
   Threads: any.
   Blocks:  as pool_submit. */
POOL_DEF int pool_submit_batch(pool *p, pool_task *const *tasks, size_t n);

/* pool_submit_priority: pool_submit at a priority (see PRIORITIES).
   POOL_PRIORITY_NORMAL is pool_submit; a POOL_PRIORITY_HIGH task goes to
   the high queue, even from a worker (never onto its deque).
   Errors:  as pool_submit; EINVAL also for a priority that is neither of
            the two.
   Threads: any.
   Blocks:  as pool_submit. */
POOL_DEF int pool_submit_priority(pool *p, pool_task *t, pool_priority priority);

/* pool_submit_pinned: queues t to run on worker `worker` of p and no other
   thread (see PINNED TASKS): when that worker is free, before the normal
   work it would take next; never on top of a wait of the worker's. It
   starts the worker's thread if it has not started yet, and runs even on a
   worker above the active count (pool_set_active_threads), which wakes to
   run it and stops again.
   Errors:  as pool_submit; EINVAL also for a worker outside 0 ..
            num_threads - 1; EAGAIN also when that worker's thread could
            not be started (t was not taken).
   Threads: any.
   Blocks:  no, but a worker not started yet is started first (it may wait
            for the lock of another thread's start). */
POOL_DEF int pool_submit_pinned(pool *p, int worker, pool_task *t);

/* ---- the blocking pool -------------------------------------------------- */

/* pool_submit_blocking: runs t on one of p's blocking threads (see
   BLOCKING WORK): fire and forget; always run, even by pool_destroy_fast.
   Errors:  EINVAL: NULL t or t->run. EBUSY: t is still queued. ECANCELED:
            p's destroy has shut its blocking pool down. EAGAIN: no
            blocking thread exists and none could be started (t was not
            taken: run it yourself, or retry later). ENOMEM: the default
            pool could not be created. ECHILD: a pool created before a
            fork().
   Threads: any.
   Blocks:  no. */
POOL_DEF int pool_submit_blocking(pool *p, pool_task *t);

/* pool_submit_blocking_job: the same for a job that can be waited for and
   skipped by pool_destroy_fast. Submitted again before its wait, from its
   own run or after a run nobody waited for, it adds a run, and its wait
   returns after the last one.
   Errors:  as pool_submit_blocking; EBUSY also for a job in flight
            (submitted, not waited for) on another pool.
   Threads: any.
   Blocks:  no. */
POOL_DEF int pool_submit_blocking_job(pool *p, pool_blocking_job *job);

/* pool_wait_blocking_job: waits for a submitted job (and its added runs),
   once per submission. Waiting after its pool was destroyed is fine.
   Errors:  0: it ran. ECANCELED: pool_destroy_fast skipped it. EINVAL:
            NULL, never submitted, or already waited for. ECHILD: in a
            forked child, a job submitted before the fork and unfinished.
   Threads: any; on a worker, its pool starts a spare thread while it
            waits, if work is queued there.
   Blocks:  until the job has run or was skipped. A blocking job may
            itself submit jobs and wait for them, but with every blocking
            thread waiting on jobs queued behind them nothing can run: keep
            max_blocking_threads above such nesting. */
POOL_DEF int pool_wait_blocking_job(pool_blocking_job *job);

/* pool_destroy_fast: pool_destroy, except that queued blocking jobs not
   marked mandatory are skipped: their on_cancel is called (on this thread)
   and their wait returns ECANCELED.
   Errors:  as pool_destroy.
   Threads: as pool_destroy.
   Blocks:  as pool_destroy, without waiting for the skipped jobs. */
POOL_DEF int pool_destroy_fast(pool *p);

/* ---- looking inside ----------------------------------------------------- */

/* pool_worker_index: the calling thread's index in its pool: below
   num_threads for a worker, from there up for a spare, and for a thread
   working in an external slot (inside pool_call, pool_join,
   pool_parallel_for or pool_scope_wait from outside) the slot's, the last
   external_slots indices below pool_worker_index_limit. -1 on any other
   thread. No two threads of a pool hold one index at the same time.
   Errors:  none.
   Threads: any.
   Blocks:  no. */
POOL_DEF int pool_worker_index(void);

/* pool_num_threads: p's worker count (num_threads): how many threads it
   keeps running; 1 if the default pool could not be created.
   Errors:  none.
   Threads: any.
   Blocks:  no (it may create the default pool). */
POOL_DEF int pool_num_threads(const pool *p);

/* pool_set_active_threads: how many workers of p take work, 1 to
   num_threads, while p runs (pool_config.active_threads sets the count it
   starts with). Lowered, the workers with an index at or above n finish
   the task each runs (a join or wait in it completes, running its own work
   as always), hand what is queued on their deques to the others, and
   stop: they start no new task and block until the count rises again.
   Raised, stopped workers come back and missing ones start as work
   arrives. No task is lost or left on a stopped worker's deque. Spares
   still stand in for workers parked in a wait (see WAITING): the count
   is of workers that are not parked.
   Errors:  EINVAL: n < 1 or n > num_threads. ECANCELED: p's destroy has
            begun. ENOMEM: the default pool could not be created. ECHILD:
            a pool created before a fork().
   Threads: any, a task of p's included (its worker stops after the task).
   Blocks:  no, but it takes the lock of thread starts (it may wait for
            another thread's start), wakes the workers that have to look at
            the new count, and a raise may start a missing worker. */
POOL_DEF int pool_set_active_threads(pool *p, int n);

/* pool_active_threads: p's active count (see pool_set_active_threads);
   1 if the default pool could not be created.
   Errors:  none.
   Threads: any.
   Blocks:  no (it may create the default pool). */
POOL_DEF int pool_active_threads(const pool *p);

/* pool_worker_index_limit: one more than the highest index
   pool_worker_index can return on a thread of p: num_threads +
   max_spare_threads + external_slots, the first two together at most
   65535 (see max_spare_threads; 1 if the default pool could not be
   created). Size per-thread arrays by it.
   Errors:  none.
   Threads: any.
   Blocks:  no (it may create the default pool). */
POOL_DEF int pool_worker_index_limit(const pool *p);

/* pool_stats_get: p's counters summed over its workers, spares and slots,
   and the blocking pool's (see struct pool_stats): a snapshot while p
   runs, exact once it is quiescent.
   Errors:  none; a NULL out does nothing.
   Threads: any.
   Blocks:  no. */
POOL_DEF void pool_stats_get(const pool *p, pool_stats *out);

/* pool_worker_stats_get: the counters of one worker, spare or external
   slot, whether its thread has started, and the CPU it is pinned to.
   Errors:  EINVAL: out is NULL, or worker is not in 0 ..
            pool_worker_index_limit(p) - 1. ENOMEM: the default pool could
            not be created.
   Threads: any.
   Blocks:  no. */
POOL_DEF int pool_worker_stats_get(const pool *p, int worker, pool_worker_stats *out);

/* pool_stats_print: writes the totals and a row per started worker and
   spare to out, formatted for a terminal, and flushes it.
   Errors:  EINVAL: out is NULL. ENOMEM: the default pool could not be
            created. The errno of a failed write or flush (ENOSPC, ...),
            else EIO; an error flag already set on out (see clearerr) is
            reported as this call's, as EIO if nothing failed now.
   Threads: any.
   Blocks:  on the stream's I/O. */
POOL_DEF int pool_stats_print(const pool *p, FILE *out);

/* ---- tracing ------------------------------------------------------------ */

/* pool_trace_write: with POOL_TRACE, writes the last POOL_TRACE_EVENTS
   events of every thread of p (jobs, steals, sleeps, wake-ups,
   injections, blocking tasks) to the file at path, in Chrome's trace
   format (open it in ui.perfetto.dev or chrome://tracing). Safe while p
   runs. Besides the workers, 64 threads get a lane: blocking threads (a
   lane is freed when its thread exits) and threads outside the pool (kept
   for good); the events of threads beyond those are not recorded.
   Errors:  ENOTSUP: built without POOL_TRACE. EINVAL: path is NULL. The
            errno of fopen (ENOENT, EACCES, ...). The errno of a failed
            write or close (ENOSPC, ...), else EIO. ENOMEM.
   Threads: any.
   Blocks:  on the file's I/O. */
POOL_DEF int pool_trace_write(const pool *p, const char *path);

/* ---- the inline join (private) ------------------------------------------ */

/* Not API: the layout that the C++ interface (below) compiles into its
   callers, so that a join of two lambdas runs inline, with no call into
   the implementation, in any translation unit. It is the lazy joins
   section's protocol, and the C join runs the very same functions. One
   symbol is exported for it, pool__join_current_v3 (static in a
   POOL_STATIC build); its suffix (_v3) changes with any change of layout
   or of protocol here, so that files built against different pool.h
   versions fail to link instead of misreading a worker. */

/* The header's inline functions: external inline in C++ (one definition
   for the templates below that call them, in every file), static in C and
   with POOL_STATIC. */
#if defined(__cplusplus) && !defined(POOL_STATIC)
#define POOL__HEADER_INLINE inline
#else
#define POOL__HEADER_INLINE static inline
#endif

/* A function call packaged as a task, with a latch for its completion: the
   second half of a join, or a call from outside the pool. */
typedef struct pool__call_job {
    pool_task task;
    pool_fn fn;
    void *arg;
    uint32_t thief; /* 1 + the index of the worker that took it from a queue; 0: none yet */
    /* A join half: the scope whose task its joiner ran innermost, which
       its thief then runs a task of as well (see pool__inside_task_of). */
    const pool_scope *enclosing;
    pool__latch done;
} pool__call_job;

/* A join's frame, on its joiner's stack (see the lazy joins section). */
typedef struct pool__lazy_join {
    pool__call_job job; /* fn and arg from the start; the rest once promoted */
    struct pool__lazy_join *older;
    struct pool__lazy_join *newer;           /* set by a promotion (pool__lazy_link) */
    struct pool__lazy_join *promoted_before; /* the view's `promoted` when this one was pushed */
} pool__lazy_join;

/* A pool's thread counts. */
typedef struct pool__thread_counts {
    /* Workers [0, started) have a thread: workers, then spares. Written
       under spawn_lock. */
    uint32_t started;
    uint32_t parked; /* workers parked in a wait (see the waiting section) */
    uint32_t active; /* the active count (see the retirement section) */
} pool__thread_counts;

/* A worker (or external slot) as a join on its thread sees it. Only its
   owner writes newest and promoted; the rest is set when it is made. The
   three functions are the join's slow paths, in the implementation. */
typedef struct pool__join_view pool__join_view;
struct pool__join_view {
    pool__lazy_join *newest;   /* the newest join of the task it runs innermost */
    pool__lazy_join *promoted; /* ... and the newest of them that was pushed */
    pool *home;
    int home_is_default;            /* home is the default pool, which a NULL pool means */
    const uint32_t *promote_wanted; /* its own; other threads set it (see "Who asks") */
    /* f's half onto the deque at once (an eager join). */
    void (*push_half)(pool__join_view *v, pool__lazy_join *f);
    /* The oldest lazy halves onto the deque, where thieves find them. */
    void (*promote)(pool__join_view *v);
    /* f was promoted: takes its half back, or waits for its thief. 1: the
       caller runs the half; 0: the thief has run it. */
    int (*take_back)(pool__join_view *v, pool__lazy_join *f);
};

/* The join view of the worker or slot running this thread; NULL on a
   thread outside every pool. GNU __thread in C and C++ alike: C++'s
   thread_local would have every access to it from C++ go through a
   wrapper function that only a C++ definition provides (macOS), or test
   for a dynamic initialiser first. */
#ifdef POOL_STATIC
static __thread pool__join_view *pool__join_current_v3;
#else
extern __thread pool__join_view *pool__join_current_v3;
#endif

/* A join's start, on v's thread: records the second half, b(b_arg), in
   frame f, lazily unless `eager` or f is the task's outermost join, and
   promotes older halves if someone asked. The first half runs next.
   Relaxed: a hint; pool__promote reads it again with the pairing. */
POOL__HEADER_INLINE void pool__join_begin(pool__join_view *v, pool__lazy_join *f, pool_fn b,
                                          void *b_arg, int eager) {
    f->job.fn = b;
    f->job.arg = b_arg;
    f->older = v->newest;
    v->newest = f;
    if (eager || !f->older) v->push_half(v, f);
    else if (__atomic_load_n(v->promote_wanted, __ATOMIC_RELAXED)) v->promote(v);
}

/* A join's end, once its first half has returned: 1 if the caller is to
   run the second half now (it was never promoted, or was taken back), 0
   if a thief ran it. A half never promoted is taken back with a plain
   store: no barrier, nothing another thread sees. f was promoted if and
   only if it is the view's newest promoted frame now: the halves of the
   newer joins, all ended, have each given that place back to the one
   before them (pool__join_take_back), so the test needs no flag in the
   frame to be stored at the join's start. */
POOL__HEADER_INLINE int pool__join_end(pool__join_view *v, pool__lazy_join *f) {
    v->newest = f->older;
    if (v->promoted != f) {
        /* Asked again here too: a first half that forked the last time
           returns into halves that may never fork again. */
        if (__atomic_load_n(v->promote_wanted, __ATOMIC_RELAXED)) v->promote(v);
        return 1;
    }
    return v->take_back(v, f);
}

/* pool_join's path on a worker of p, inline in the caller (see pool_join);
   the function otherwise. The macro is variadic: an argument with a comma
   of its own, a compound literal, is one argument of the function but
   several of a named macro's. */
#if !defined(__cplusplus) && !defined(POOL_NO_INLINE_JOIN) && !defined(POOL_DEBUG) && \
    defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L
POOL__HEADER_INLINE void pool__join_inline(pool *p, pool_fn a, void *a_arg, pool_fn b,
                                           void *b_arg) {
    pool__join_view *v = pool__join_current_v3;
    if (v && a && b && (v->home == p || (!p && v->home_is_default))) {
        pool__lazy_join f;
        pool__join_begin(v, &f, b, b_arg, 0);
        a(a_arg);
        if (pool__join_end(v, &f)) b(b_arg);
    } else {
        (pool_join)(p, a, a_arg, b, b_arg);
    }
}

#define pool_join(...) pool__join_inline(__VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif

/* ------------------------------------------------------------------------ */
/* The C++ interface                                                   >>cpp */
/*                                                                          */
/* Namespace pool_cpp (a C++ namespace cannot share the name of the C type  */
/* pool). C++11 or later; the C API is untouched, and a C implementation    */
/* file serves C++ users and the other way round. Define POOL_NO_CPP to     */
/* leave it out.                                                            */
/*                                                                          */
/*   join(p, a, b)               a() and b(), in parallel if a worker is    */
/*                               free; inline on a worker of p (below)      */
/*   call(p, f)                  f() on the pool, its result returned       */
/*   parallel_for(p, lo, hi, [grain,] body)   body(i) for i in [lo, hi)     */
/*   parallel_reduce(p, lo, hi, grain, identity, fold, combine)             */
/*   sort(p, first, last[, cmp]) std::sort's contract, in parallel          */
/*   scope s(p); s.spawn(f); s.wait();        tasks of any callable         */
/*                                                                          */
/* Callables are lambdas (with captures) or function objects; p NULL is the */
/* default pool, as in C. These run on the pool as the C functions of the   */
/* same names do, and block as they do (see WAITING).                       */
/*                                                                          */
/* Exceptions. An exception thrown by a half of a join, a loop body, a fold */
/* or combine, a comparison, a scope's task or call's f is caught on the    */
/* thread that threw it; the rest of the work still runs to its end, and    */
/* then the first exception is rethrown to the caller of the join, loop,    */
/* call, sort or scope wait (for a join whose halves both throw: a's). No   */
/* exception ever crosses a C frame of pool.h. Built without exceptions     */
/* (-fno-exceptions), nothing is caught: a throw is then impossible, and    */
/* scope::spawn drops a task the pool refuses (a cancelled scope, no        */
/* memory, a fork's child): use try_spawn, which returns why.               */
/*                                                                          */
/* The inline join. join() called on a worker of p records b in a frame on  */
/* the caller's stack and calls a() and b() directly, through the same      */
/* pool__join_begin and _end as the C join, with no call into the           */
/* implementation unless b is promoted (see the lazy joins section): the    */
/* compiler sees both lambdas whole. It reads the worker through one        */
/* thread-local, pool__join_current_v3, exported by the implementation      */
/* file (the one private symbol pool.h exports). With POOL_STATIC, each     */
/* file that includes pool.h has its own implementation, and this whole     */
/* namespace is given internal linkage too: C++ in that file joins inline   */
/* on that copy's pools, as a C user of it would.                           */
/*                                                                          */
/* Allocation. join, call, parallel_for and parallel_reduce allocate        */
/* nothing (what they pass the pool lives on the caller's stack) while the  */
/* work does not throw; call, parallel_for and a scope keep the first       */
/* exception in a small heap block (std::bad_alloc in its place when even   */
/* that cannot be had). sort allocates a buffer of n elements              */
/* (std::vector). scope::spawn must keep the callable beyond the spawner's  */
/* frame: a callable that is trivially copyable and small (up to            */
/* POOL_SPAWN_COPY_MAX bytes with the scope's pointer) is copied into the   */
/* pool's cells (pool_scope_spawn_copy: no allocation while a worker's      */
/* cache lasts); any other is moved into one `new` per spawn, deleted when  */
/* it has run or been skipped.                                              */
/* ------------------------------------------------------------------------ */

#if defined(__cplusplus) && !defined(POOL_NO_CPP)

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <new>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define POOL__CPP_EXCEPTIONS 1
#else
#define POOL__CPP_EXCEPTIONS 0
#endif

/* The namespaces. POOL_STATIC: internal linkage, as the implementation
   has. Otherwise an inline namespace says whether exceptions were on, so
   that files built with and without them cannot share one definition of
   a template whose layout and behaviour differ. */
/* clang-format off */
#ifdef POOL_STATIC
#define POOL__CPP_OPEN namespace pool_cpp { namespace {
#elif POOL__CPP_EXCEPTIONS
#define POOL__CPP_OPEN namespace pool_cpp { inline namespace v1_exceptions {
#else
#define POOL__CPP_OPEN namespace pool_cpp { inline namespace v1_no_exceptions {
#endif
#define POOL__CPP_CLOSE } }
/* clang-format on */

POOL__CPP_OPEN

namespace detail {

/* Where the first exception of a piece of parallel work waits for its
   caller. Any thread may capture, at any time: a scope's task spawned
   after its wait began may throw while that wait returns, and rethrows
   it. The exception is published by a pointer. */
class first_error {
  public:
    first_error() : error_(nullptr) {}
    ~first_error() { forget(error_.load(std::memory_order_relaxed)); }
    first_error(const first_error &) = delete;
    first_error &operator=(const first_error &) = delete;

    /* In a catch block: keeps the exception in flight if none is kept.
       Out of memory it keeps a marker instead, rethrown as
       std::bad_alloc: the caller must still learn that the work failed
       (a call whose result was never made must not return it). */
    void capture() noexcept {
#if POOL__CPP_EXCEPTIONS
        if (error_.load(std::memory_order_relaxed)) return; /* one is kept already */
        std::exception_ptr *mine = new (std::nothrow) std::exception_ptr(std::current_exception());
        std::exception_ptr *none = nullptr;
        if (!mine) mine = out_of_memory();
        /* Release: pairs with the acquire in rethrow; the taker sees the
           exception object whole. */
        if (!error_.compare_exchange_strong(none, mine, std::memory_order_release,
                                            std::memory_order_relaxed))
            forget(mine);
#endif
    }

    /* Rethrows the kept exception, if any, and forgets it (the work may
       run again: a scope is reusable). */
    void rethrow() {
#if POOL__CPP_EXCEPTIONS
        /* Relaxed first: nearly always nothing is kept. */
        if (!error_.load(std::memory_order_relaxed)) return;
        /* Acquire: pairs with the release in capture. */
        std::exception_ptr *kept = error_.exchange(nullptr, std::memory_order_acquire);
        if (!kept) return; /* another waiter took it */
        if (kept == out_of_memory()) throw std::bad_alloc();
        std::exception_ptr e = std::move(*kept);
        delete kept;
        std::rethrow_exception(e);
#endif
    }

  private:
    std::atomic<std::exception_ptr *> error_;

    /* The marker kept when no exception_ptr could be allocated: this
       object's own address, never dereferenced, never deleted. (Not a
       static's: shared libraries built with hidden visibility would each
       have their own, and a rethrow in another library would not know
       the marker of the capture.) */
    std::exception_ptr *out_of_memory() noexcept {
        return reinterpret_cast<std::exception_ptr *>(&error_);
    }
    void forget(std::exception_ptr *kept) noexcept {
        if (kept != out_of_memory()) delete kept;
    }
};

/* Calls f(), an exception it throws kept in err. */
template <class F> inline void guarded(first_error &err, F &&f) noexcept {
#if POOL__CPP_EXCEPTIONS
    try {
        f();
    } catch (...) {
        err.capture();
    }
#else
    (void)err;
    f();
#endif
}

/* Calls f(), an exception it throws kept in *err (one thread's: no
   atomics). */
template <class F> inline void guarded_by_one(void *err, F &&f) noexcept {
#if POOL__CPP_EXCEPTIONS
    try {
        f();
    } catch (...) {
        *static_cast<std::exception_ptr *>(err) = std::current_exception();
    }
#else
    (void)err;
    f();
#endif
}

/* Rethrows *err if it holds an exception. */
inline void rethrow_if(void *err) {
#if POOL__CPP_EXCEPTIONS
    std::exception_ptr *e = static_cast<std::exception_ptr *>(err);
    if (*e) std::rethrow_exception(*e);
#else
    (void)err;
#endif
}

#if POOL__CPP_EXCEPTIONS
typedef std::exception_ptr half_error;
#else
typedef char half_error;
#endif

/* A callable as a pool_fn: one half of a join, run by one thread. */
template <class F> struct half {
    F *fn;
    half_error error;
    explicit half(F *f) : fn(f), error() {}
    static void run(void *arg) {
        half *h = static_cast<half *>(arg);
        guarded_by_one(&h->error, *h->fn);
    }
};

/* The second half of an inline join, as a pool_fn for the thread that
   takes it if it is promoted. Its error is made only by that run: a half
   called inline stores nothing here. */
template <class F> struct lazy_half {
    F *fn;
    alignas(half_error) unsigned char error[sizeof(half_error)];
    explicit lazy_half(F *f) : fn(f) {}
    static void run(void *arg) {
        lazy_half *h = static_cast<lazy_half *>(arg);
        guarded_by_one(::new (static_cast<void *>(h->error)) half_error(), *h->fn);
    }
    /* After run: the exception it kept (or none), its error unmade. */
    half_error take_error() {
        half_error *made = reinterpret_cast<half_error *>(error);
        half_error e(*made);
        made->~half_error();
        return e;
    }
};

/* a threw (the exception in flight is a's): ends the join, b run too, and
   an exception of b's dropped, since a's is the one to rethrow. */
template <class B>
inline void join_inline_unwind(pool__join_view *v, pool__lazy_join *f, lazy_half<B> &hb) {
    half_error dropped = half_error();
    if (pool__join_end(v, f)) guarded_by_one(&dropped, *hb.fn);
    else hb.take_error();
}

/* join on a worker of its pool: b recorded in a frame on this stack, a
   and b called directly (see "The inline join"). No exception is caught
   on the way: a's is seen only when it is thrown, and b, called last,
   throws straight to the caller. */
template <class A, class B> inline void join_inline(pool__join_view *v, A &a, B &b) {
    lazy_half<B> hb(&b);
    pool__lazy_join f;
    pool__join_begin(v, &f, &lazy_half<B>::run, &hb, 0);
#if POOL__CPP_EXCEPTIONS
    try {
        a();
    } catch (...) {
        join_inline_unwind(v, &f, hb);
        throw;
    }
#else
    a();
#endif
    if (pool__join_end(v, &f)) {
        b();
    } else {
        half_error e = hb.take_error();
        rethrow_if(&e);
    }
}

/* join from any other thread: pool_join's way. */
template <class A, class B> void join_elsewhere(pool *p, A &a, B &b) {
    half<A> ha(&a);
    half<B> hb(&b);
    pool_join(p, &half<A>::run, &ha, &half<B>::run, &hb);
    rethrow_if(&ha.error);
    rethrow_if(&hb.error);
}

/* call's function and where its result is made (R needs no default
   constructor). */
template <class F, class R> struct call_box {
    F *fn;
    first_error error;
    bool made;
    alignas(R) unsigned char result[sizeof(R)];
    explicit call_box(F *f) : fn(f), made(false) {}
    ~call_box() {
        if (made) value().~R();
    }
    R &value() { return *reinterpret_cast<R *>(&result); }
    static void run(void *arg) {
        call_box *b = static_cast<call_box *>(arg);
        guarded(b->error, [b] {
            ::new (static_cast<void *>(&b->result)) R((*b->fn)());
            b->made = true;
        });
    }
};

template <class F> struct call_box<F, void> {
    F *fn;
    first_error error;
    explicit call_box(F *f) : fn(f) {}
    static void run(void *arg) {
        call_box *b = static_cast<call_box *>(arg);
        guarded(b->error, *b->fn);
    }
};

/* A loop body as pool_parallel_for's. */
template <class F> struct loop {
    F *body;
    first_error error;
    explicit loop(F *b) : body(b) {}
    static void run(void *arg, size_t lo, size_t hi) {
        loop *l = static_cast<loop *>(arg);
        guarded(l->error, [l, lo, hi] {
            for (size_t i = lo; i < hi; i++) (*l->body)(i);
        });
    }
};

} /* namespace detail */

/* join: runs a() and b(), possibly at the same time on two threads, and
   returns when both have returned; pool_join for callables. On a worker
   of p it is inline (see "The inline join" above): a costs a direct call,
   and b one too unless an idle worker took it.
   Exceptions: if a() or b() throws, the other still runs; then a's
            exception, else b's, is rethrown here.
   Threads: any (from outside the pool, as pool_join).
   Blocks:  until both have returned (see WAITING). */
template <class A, class B> inline void join(pool *p, A &&a, B &&b) {
    pool__join_view *v = pool__join_current_v3;
    if (v && (v->home == p || (!p && v->home_is_default))) detail::join_inline(v, a, b);
    else detail::join_elsewhere(p, a, b);
}

/* call: runs f() on p and returns its result (decayed: a value, never a
   reference); pool_call for a callable. The result needs a move
   constructor.
   Exceptions: what f throws is rethrown here (std::bad_alloc when no
            memory was left to keep it).
   Threads: any.
   Blocks:  until f returns (see pool_call). */
template <class F>
inline auto call(pool *p, F &&f) ->
    typename std::enable_if<!std::is_void<decltype(f())>::value,
                            typename std::decay<decltype(f())>::type>::type {
    typedef typename std::remove_reference<F>::type FF;
    typedef typename std::decay<decltype(f())>::type R;
    detail::call_box<FF, R> box(&f);
    pool_call(p, &detail::call_box<FF, R>::run, &box);
    box.error.rethrow();
    return std::move(box.value());
}

template <class F>
inline auto call(pool *p, F &&f) ->
    typename std::enable_if<std::is_void<decltype(f())>::value>::type {
    typedef typename std::remove_reference<F>::type FF;
    detail::call_box<FF, void> box(&f);
    pool_call(p, &detail::call_box<FF, void>::run, &box);
    box.error.rethrow();
}

/* parallel_for: calls body(i) for every i in [begin, end) exactly once, in
   parallel, in pieces as pool_parallel_for cuts them (grain: see there;
   without it, 0).
   Exceptions: a throw ends its piece; the other pieces run to their end,
            then the first exception is rethrown here.
   Threads: any.
   Blocks:  until every piece is done (see WAITING). */
template <class F>
inline void parallel_for(pool *p, size_t begin, size_t end, size_t grain, F &&body) {
    typedef typename std::remove_reference<F>::type FF;
    detail::loop<FF> l(&body);
    pool_parallel_for(p, begin, end, grain, &detail::loop<FF>::run, &l);
    l.error.rethrow();
}

template <class F> inline void parallel_for(pool *p, size_t begin, size_t end, F &&body) {
    parallel_for(p, begin, end, 0, std::forward<F>(body));
}

namespace detail {

template <class T, class Fold, class Combine> struct reduction {
    pool *p;
    size_t grain;
    const T *identity;
    const Fold *fold;
    const Combine *combine;

    T run(size_t lo, size_t hi) const {
        if (hi - lo <= grain) return (*fold)(lo, hi, *identity);
        size_t mid = lo + (hi - lo) / 2;
        T left(*identity), right(*identity);
        join(
            p, [&] { left = run(lo, mid); }, [&] { right = run(mid, hi); });
        return (*combine)(std::move(left), std::move(right));
    }
};

} /* namespace detail */

/* parallel_reduce: folds [begin, end) into one T: the range is halved by
   joins down to pieces of at most grain elements (0: about 8 pieces per
   thread of p), each piece is fold(lo, hi, identity) -> T, and neighbours
   are combined in range order, combine(left, right) -> T. combine must
   be associative, not commutative; with a grain the pieces and the order
   of every combine depend only on begin, end and grain, so a
   floating-point sum is the same on every run and thread count. T needs a
   copy constructor and move assignment.
   Exceptions: the first one thrown by fold, combine or T's copies is
            rethrown here, once the rest has run.
   Threads: any.
   Blocks:  until the whole range is folded (see WAITING). */
template <class T, class Fold, class Combine>
inline T parallel_reduce(pool *p, size_t begin, size_t end, size_t grain, const T &identity,
                         const Fold &fold, const Combine &combine) {
    detail::reduction<T, Fold, Combine> r = {p, grain, &identity, &fold, &combine};
    if (end <= begin) return identity;
    if (!grain) {
        size_t pieces = 8 * (size_t)pool_num_threads(p);
        r.grain = (end - begin) / pieces ? (end - begin) / pieces : 1;
    }
    return call(p, [&r, begin, end] { return r.run(begin, end); });
}

namespace detail {

/* The leaves of sort. Elements that are small and plainly copyable are
   sorted by a quicksort whose partition, where the keys look random, has
   no branch on the comparison (the pick is a conditional add, where
   std::sort's partition mispredicts about every other key), and where
   they follow a pattern (nearly sorted, interleaved runs) scans with
   branches that are then predicted; any other T by std::sort. */
template <class It, class Cmp> struct quicksort {
    typedef typename std::iterator_traits<It>::value_type T;
    Cmp *cmp;
    uint64_t random; /* xorshift state: where the pivot's samples are taken */

    /* [first, last) sorted. !leftmost: first[-1] is a key no greater than
       any in the range (the pivot of an enclosing partition). bad_left:
       lopsided partitions allowed before heapsort, which bounds the worst
       case. */
    void sort(It first, It last, bool leftmost, unsigned bad_left, bool patterned) {
        while (last - first > 32) {
            size_t n = (size_t)(last - first);
            std::iter_swap(first, pivot(first, n));
            bool equal = !leftmost && !(*cmp)(first[-1], *first);
            if (n >= look_keys) patterned = follows_pattern(first, n, !equal);
            if (equal) {
                /* The pivot equals the key before the range, so every key
                   not above it equals it: they are done. Many equal keys
                   leave the range this way, a partition each. */
                first = partition(first, last, false, patterned) + 1;
                continue;
            }
            It pivot_at = partition(first, last, true, patterned);
            size_t left = (size_t)(pivot_at - first), right = n - left - 1;
            if ((left < n / 8 || right < n / 8) && bad_left-- == 0) {
                std::make_heap(first, last, *cmp);
                std::sort_heap(first, last, *cmp);
                return;
            }
            /* The smaller side by recursion: a stack of log n frames. */
            if (left < right) {
                sort(first, pivot_at, leftmost, bad_left, patterned);
                first = pivot_at + 1;
                leftmost = false;
            } else {
                sort(pivot_at + 1, last, false, bad_left, patterned);
                last = pivot_at;
            }
        }
        std::sort(first, last, *cmp);
    }

    /* The pivot: the median of 3 keys, or above 128 keys of 3 medians of
       3, taken at random places: sorted, reversed or sawtooth input gives
       no worse pivots than random input does. */
    It pivot(It first, size_t n) {
        if (n <= 128) return median(sample(first, n), sample(first, n), sample(first, n));
        It a = median(sample(first, n), sample(first, n), sample(first, n));
        It b = median(sample(first, n), sample(first, n), sample(first, n));
        return median(a, b, median(sample(first, n), sample(first, n), sample(first, n)));
    }

    It sample(It first, size_t n) {
        random ^= random << 13;
        random ^= random >> 7;
        random ^= random << 17;
        /* The high half of a product, not a division: a division costs
           many times a product, and most partitions are of short ranges,
           whose 3 to 9 samples would then be a visible part of their work.
           The product fits in 64 bits only for n below 2^32, hence the %
           above that. */
        return first + (size_t)(n <= 0xffffffffu ? ((random >> 32) * n) >> 32 : random % n);
    }

    It median(It a, It b, It c) {
        if ((*cmp)(*b, *a)) std::swap(a, b);
        if ((*cmp)(*c, *b)) {
            std::swap(b, c);
            if ((*cmp)(*b, *a)) std::swap(a, b);
        }
        return b;
    }

    /* Whether a key goes left of the pivot in a partition (see below). */
    bool goes_left(T &key, T &pivot, bool less) {
        return less ? (*cmp)(key, pivot) : !(*cmp)(pivot, key);
    }

    /* Whether the keys' sides of the pivot *first follow a pattern that a
       branch predicts: in two windows of 32 keys at random places, the side
       seldom changes from one key to the next (nearly sorted keys, a
       lopsided pivot), or from one key to the one after next (two sorted
       sequences interleaved), by the partition the range is to have (less,
       as below). Random keys change side about every other key: 31 times
       in the two windows' 62 steps in the mean. A range below look_keys
       keys inherits its enclosing range's answer. */
    static const size_t look_keys = 1024;
    bool follows_pattern(It first, size_t n, bool less) {
        T &pivot = *first;
        unsigned next_changes = 0, after_next_changes = 0;
        for (int window = 0; window < 2; window++) {
            It at = sample(first + 1, n - 33);
            bool before_last = goes_left(at[0], pivot, less), last = goes_left(at[1], pivot, less);
            next_changes += before_last != last;
            for (int i = 2; i < 32; i++) {
                bool side = goes_left(at[i], pivot, less);
                next_changes += side != last;
                after_next_changes += side != before_last;
                before_last = last;
                last = side;
            }
        }
        return next_changes <= 6 || after_next_changes <= 6;
    }

    /* The first key of [from, to) that does not go left of the pivot, or
       to. The scans are most of a patterned partition's work, so each
       checks its bound once per four keys, and knows `less` when compiled. */
    template <bool Less> It scan_left(It from, It to, T &pivot) {
        for (; to - from >= 4; from += 4) {
            if (!goes_left(from[0], pivot, Less)) return from;
            if (!goes_left(from[1], pivot, Less)) return from + 1;
            if (!goes_left(from[2], pivot, Less)) return from + 2;
            if (!goes_left(from[3], pivot, Less)) return from + 3;
        }
        while (from < to && goes_left(*from, pivot, Less)) ++from;
        return from;
    }

    /* Where the run of keys at the end of [from, to) that do not go left
       of the pivot begins: from if none goes left. */
    template <bool Less> It scan_right(It from, It to, T &pivot) {
        for (; to - from >= 4; to -= 4) {
            if (goes_left(to[-1], pivot, Less)) return to;
            if (goes_left(to[-2], pivot, Less)) return to - 1;
            if (goes_left(to[-3], pivot, Less)) return to - 2;
            if (goes_left(to[-4], pivot, Less)) return to - 3;
        }
        while (from < to && !goes_left(to[-1], pivot, Less)) --to;
        return to;
    }

    /* The patterned partition of [left_end, last) (see partition): where
       the left side ends. */
    template <bool Less> It partition_patterned(It left_end, It last, T &pivot) {
        It right_begin = last; /* [right_begin, last): the right side */
        for (;;) {
            left_end = scan_left<Less>(left_end, right_begin, pivot);
            right_begin = scan_right<Less>(left_end, right_begin, pivot);
            if (left_end >= right_begin) return left_end;
            std::iter_swap(left_end++, --right_begin);
        }
    }

    /* Partitions around the pivot *first: the keys below it (less: true)
       or not above it (less: false) before the rest. Returns where the
       pivot ends, between the two. Random keys: each key is swapped with
       the first of the keys that stay right, whether or not it moves left
       (no branch on the comparison): a key that stays leaves that run of
       keys as it was, but for its order. Patterned keys: the two sides are
       scanned from the ends inwards, behind branches that are predicted,
       and a key that belongs on the other side is swapped with one from
       there (an already partitioned range is left as it is); each scan
       stops where the other side begins whatever cmp says, and the tails
       and the loop's end test use < and >=, since a cmp that answers two
       ways for one key can leave the sides one past each other: a cmp that
       is no strict weak order cannot take them out of the range. A
       throwing cmp leaves a permutation. */
    It partition(It first, It last, bool less, bool patterned) {
        T pivot = *first;
        It left_end = first + 1; /* [first + 1, left_end): the left side */
        if (patterned) {
            left_end = less ? partition_patterned<true>(left_end, last, pivot)
                            : partition_patterned<false>(left_end, last, pivot);
        } else {
            for (It i = first + 1; i != last; ++i) {
                T key = *i;
                bool left = goes_left(key, pivot, less);
                *i = *left_end;
                *left_end = key;
                left_end += left;
            }
        }
        std::iter_swap(first, left_end - 1);
        return left_end - 1;
    }
};

/* T that the leaves and the buffer may copy as bytes are copied: no
   constructor, assignment or destructor of the user's runs. */
template <class T> struct plain_copy {
    static const bool value = std::is_trivially_copyable<T>::value &&
                              std::is_copy_constructible<T>::value &&
                              std::is_copy_assignable<T>::value;
};

template <class It, class Cmp> void sort_leaf(It first, It last, Cmp &cmp, std::true_type) {
    typedef typename std::iterator_traits<It>::value_type T;
    size_t n = (size_t)(last - first);
    unsigned bad_left = 0;
    /* Sorted or reversed input costs a look, where the partitions would
       move every key (random input: two or three comparisons). */
    if (std::is_sorted(first, last, cmp)) return;
    if (std::is_sorted(first, last, [&cmp](T &x, T &y) { return cmp(y, x); })) {
        std::reverse(first, last);
        return;
    }
    for (size_t m = n; m > 1; m >>= 1) bad_left++;
    quicksort<It, Cmp> q = {&cmp, 0x9e3779b97f4a7c15ull ^ n};
    q.sort(first, last, true, bad_left, false);
}

template <class It, class Cmp> void sort_leaf(It first, It last, Cmp &cmp, std::false_type) {
    std::sort(first, last, cmp);
}

template <class It, class Cmp> void sort_leaf(It first, It last, Cmp &cmp) {
    typedef typename std::iterator_traits<It>::value_type T;
    typedef std::integral_constant<bool, plain_copy<T>::value && sizeof(T) <= 2 * sizeof(void *)>
        branch_free;
    sort_leaf(first, last, cmp, branch_free());
}

template <class It>
struct plain_copy_of
    : std::integral_constant<bool,
                             plain_copy<typename std::iterator_traits<It>::value_type>::value> {};

/* A leaf's part of the raw buffer (see sort_buffered), copied in from b. */
template <class ItB, class ItA> void fill_leaf(ItB b, size_t n, ItA a, std::true_type) {
    std::uninitialized_copy(b, b + n, a);
}

template <class ItB, class ItA> void fill_leaf(ItB, size_t, ItA, std::false_type) {}

/* Calls f(); if it throws, calls keep() and rethrows: how a sort keeps
   its elements when cmp or a move throws. */
template <class F, class K> inline void keeping(F &&f, K &&keep) {
#if POOL__CPP_EXCEPTIONS
    try {
        f();
    } catch (...) {
        keep();
        throw;
    }
#else
    (void)keep;
    f();
#endif
}

/* Moves [x, xe) to out, every element, whatever a move throws (a move cut
   short leaves a moved-from element behind); returns the first exception
   a move threw, or none. */
template <class In, class Out> half_error move_each(In x, In xe, Out out) noexcept {
    half_error first = half_error();
    for (; x != xe; ++x, ++out) {
#if POOL__CPP_EXCEPTIONS
        try {
            *out = std::move(*x);
        } catch (...) {
            if (!first) first = std::current_exception();
        }
#else
        *out = std::move(*x);
#endif
    }
    return first;
}

/* Moves the runs [x, xe) and [y, ye), one after the other, to out:
   std::move where T's moves cannot throw, else every element whatever a
   move throws, and then the first exception rethrown. */
template <class In, class Out> void move_runs(In x, In xe, In y, In ye, Out out, std::true_type) {
    std::move(y, ye, std::move(x, xe, out));
}

/* Moves the runs [x, xe) and [y, ye), one after the other, to out, every
   element whatever a move throws; returns the first exception. */
template <class In, class Out>
half_error move_each_run(In x, In xe, In y, In ye, Out out) noexcept {
    half_error first = move_each(x, xe, out), second = move_each(y, ye, out + (xe - x));
    return first ? first : second;
}

template <class In, class Out> void move_runs(In x, In xe, In y, In ye, Out out, std::false_type) {
    half_error first = move_each_run(x, xe, y, ye, out);
    rethrow_if(&first);
}

template <class In, class Out> void move_runs(In x, In xe, In y, In ye, Out out) {
    typedef typename std::iterator_traits<In>::value_type T;
    move_runs(x, xe, y, ye, out, std::is_nothrow_move_assignable<T>());
}

/* A mergesort whose halves and merges are joins. Every element moves once
   per level, between the caller's range and a buffer, which trade roles
   from level to level; the leaves are sort_leaf. Exceptions: every sort
   and merge below leaves each of its elements at its destination, also
   when cmp or a move throws (what is left then moves there without a
   comparison), so that the last merge brings every element back into the
   caller's range whatever threw where. */
template <class Cmp> struct sorter {
    pool *p;
    Cmp *cmp;
    size_t merge_piece; /* merges of more are split in two (by joins) */
    bool fill;          /* the buffer starts raw: each leaf copies its part in from b */

    /* Sorts the n elements at a, leaving them at b if to_b, else at a.
       Leaves at depth 0. */
    template <class ItA, class ItB> void sort(ItA a, ItB b, size_t n, unsigned depth, bool to_b) {
        size_t h = n / 2;
        keeping(
            [&] {
                if (depth == 0) {
                    if (fill) fill_leaf(b, n, a, plain_copy_of<ItA>());
                    sort_leaf(a, a + n, *cmp);
                } else {
                    join(
                        p, [&] { sort(a, b, h, depth - 1, !to_b); },
                        [&] { sort(a + h, b + h, n - h, depth - 1, !to_b); });
                }
            },
            [&] {
                /* Moved on to the destination, unsorted: the leaf's
                   elements from a, the halves' from where they were sent
                   (a if to_b). */
                if (to_b) move_each(a, a + n, b);
                else if (depth > 0) move_each(b, b + n, a);
            });
        if (depth == 0) {
            if (to_b) move_runs(a, a + n, a + n, a + n, b);
        } else if (to_b) {
            merge(a, h, a + h, n - h, b);
        } else {
            merge(b, h, b + h, n - h, a);
        }
    }

    /* How many keys of the sorted run y (ny) go before *key: std::lower_bound,
       but with cmp given the elements themselves, never a const copy (a cmp
       may take non-const references, as std::sort's may). */
    template <class In> size_t lower_bound(In y, size_t ny, In key) {
        size_t lo = 0;
        while (ny > 0) {
            size_t half = ny / 2;
            if ((*cmp)(y[lo + half], *key)) {
                lo += half + 1;
                ny -= half + 1;
            } else {
                ny = half;
            }
        }
        return lo;
    }

    /* Merges the sorted runs x (nx) and y (ny) into out: cut at the middle
       of the longer run, found in the other by binary search. */
    template <class In, class Out> void merge(In x, size_t nx, In y, size_t ny, Out out) {
        if (nx + ny <= merge_piece) {
            merge_serial(x, x + nx, y, y + ny, out);
            return;
        }
        if (nx < ny) {
            std::swap(x, y);
            std::swap(nx, ny);
        }
        size_t mx = nx / 2, my = 0;
        keeping([&] { my = lower_bound(y, ny, x + mx); },
                [&] { move_each_run(x, x + nx, y, y + ny, out); });
        join(
            p, [&] { merge(x, mx, y, my, out); },
            [&] { merge(x + mx, nx - mx, y + my, ny - my, out + (mx + my)); });
    }

    /* Without a branch on the comparison where T allows: the pick is a
       conditional move, which random keys would otherwise mispredict. */
    template <class In, class Out> void merge_serial(In x, In xe, In y, In ye, Out out) {
        keeping(
            [&] {
                while (x != xe && y != ye) {
                    bool take_y = (*cmp)(*y, *x);
                    *out = std::move(take_y ? *y : *x);
                    ++out;
                    y += take_y;
                    x += !take_y;
                }
            },
            [&] { move_each_run(x, xe, y, ye, out); });
        move_runs(x, xe, y, ye, out);
    }
};

/* The mergesort with its buffer. Plainly copyable elements: the buffer
   is raw memory, which the leaves fill, in parallel. Any other T: a
   std::vector, moved into on the caller's thread. */
template <class Cmp, class It>
void sort_buffered(sorter<Cmp> &s, It first, size_t n, unsigned depth, std::true_type) {
    typedef typename std::iterator_traits<It>::value_type T;
    struct raw {
        std::allocator<T> alloc;
        size_t n;
        T *at;
        explicit raw(size_t count) : n(count), at(alloc.allocate(count)) {}
        ~raw() { alloc.deallocate(at, n); }
    } buffer(n);
    s.fill = true;
    call(s.p, [&] { s.sort(buffer.at, first, n, depth, true); });
}

template <class Cmp, class It>
void sort_buffered(sorter<Cmp> &s, It first, size_t n, unsigned depth, std::false_type) {
    typedef typename std::iterator_traits<It>::value_type T;
    std::vector<T> buffer;
    buffer.reserve(n);
    /* One element at a time: a move that throws then leaves the buffer
       holding every element moved before it (as a range insert would not),
       and those go back. */
    keeping(
        [&] {
            for (size_t i = 0; i < n; i++) buffer.push_back(std::move(first[i]));
        },
        [&] { move_each(buffer.begin(), buffer.end(), first); });
    call(s.p, [&] { s.sort(buffer.begin(), first, n, depth, true); });
}

} /* namespace detail */

/* sort: sorts [first, last) as std::sort(first, last, cmp) does (not
   stable; cmp a strict weak order, called from several threads at once),
   in parallel on p: a mergesort whose halves and merges are joins, over
   at least one leaf per thread of p, and merges split in about 4 pieces
   per thread, so its parallelism grows with the pool.
   A leaf of small trivially copyable elements (up to two pointers' size)
   is a quicksort with pivots sampled at random and a partition that is
   branch-free where the keys look random, one of any other T is std::sort. On a pool of one thread,
   or below 8192 elements, the whole range is one leaf, sorted on the calling thread. Otherwise it
   allocates a buffer of last - first elements (std::allocator, or for T not trivially copyable a
   std::vector). Its iterators' references must be real ones: a proxy's, as std::vector<bool>'s,
   whose elements share words, is refused when compiled (elements written by two threads at once).
   Exceptions: std::bad_alloc if the buffer cannot be had; the first exception thrown by cmp or by
   T's moves is rethrown once the rest has run, and [first, last) then holds valid elements in an
   unspecified order: its own, but for a moved-from one (for plainly copyable T a copy of another)
   in place of the one a leaf held aside when cmp threw there (as std::sort does), at most one per
   leaf, and of each one whose move threw (the basic guarantee, as std::sort gives it). Threads:
   any. Blocks: until sorted (see WAITING). */
template <class It, class Cmp> inline void sort(pool *p, It first, It last, Cmp cmp) {
    static_assert(std::is_reference<typename std::iterator_traits<It>::reference>::value,
                  "pool_cpp::sort needs iterators whose references are real ones, not proxies");
    size_t n = (size_t)(last - first);
    size_t threads = (size_t)pool_num_threads(p);
    unsigned depth = 1;
    if (threads < 2 || n < 8192) {
        detail::sort_leaf(first, last, cmp);
        return;
    }
    /* As few levels as give every thread a leaf (each level is a pass
       over the elements), and an odd number: the leaves then sort in the
       buffer and the last merge lands in [first, last), with no pass to
       copy back. */
    while (((size_t)1 << depth) < threads) depth++;
    if (depth % 2 == 0) depth++;
    while (depth > 1 && (n >> depth) < 2048) depth -= 2;
    detail::sorter<Cmp> s = {p, &cmp, n / (4 * threads) > 4096 ? n / (4 * threads) : 4096, false};
    detail::sort_buffered(s, first, n, depth, detail::plain_copy_of<It>());
}

template <class It> inline void sort(pool *p, It first, It last) {
    sort(p, first, last, std::less<typename std::iterator_traits<It>::value_type>());
}

/* scope: a group of tasks of any callable, waited for together; the C++
   face of pool_scope. Not copyable or movable (its tasks point at it).
   The destructor waits too, and drops an exception the tasks threw
   (call wait to see it). */
class scope {
  public:
    /* Errors: none (pool_scope_init). Threads: any; the constructing
       thread and task are its origin (see pool_scope_spawn). */
    explicit scope(pool *p = nullptr) : own_run_(&task_base::run_task) {
        pool_scope_init(&scope_, p);
        pool_scope_on_cancel(&scope_, &skip);
    }
    ~scope() { pool_scope_wait(&scope_); }
    scope(const scope &) = delete;
    scope &operator=(const scope &) = delete;

    /* spawn: queues f() in the scope (it may run at once: see
       pool_scope_spawn); f may spawn more into it. f is copied into the
       pool's cells if it is trivially copyable and small, else moved into
       a `new` task (see "Allocation" above).
       Errors:  0, or ECANCELED: the scope is cancelled, or the pool is
                being destroyed; ECHILD: the pool was created before a
                fork(); ENOMEM: no memory for the task. f has then not
                been queued (nor run).
       Exceptions: none of its own; what f's copy or move throws.
       Threads: any.
       Blocks:  as pool_scope_spawn. */
    template <class F> int try_spawn(F &&f) {
        typedef typename std::decay<F>::type D;
        return spawn_as<D>(std::forward<F>(f), std::integral_constant < bool,
                           std::is_trivially_copyable<D>::value &&
                               sizeof(copied<D>) <= POOL_SPAWN_COPY_MAX &&
                               alignof(copied<D>) <= POOL_SPAWN_COPY_ALIGN > ());
    }

    /* spawn: try_spawn, which throws std::system_error (with the errno
       value) or std::bad_alloc where that returns an error. Built without
       exceptions, the task is then dropped: use try_spawn to learn of it. */
    template <class F> void spawn(F &&f) {
        int rc = try_spawn(std::forward<F>(f));
#if POOL__CPP_EXCEPTIONS
        if (rc == ENOMEM) throw std::bad_alloc();
        if (rc) throw std::system_error(rc, std::generic_category(), "pool_cpp::scope::spawn");
#else
        (void)rc;
#endif
    }

    /* wait: pool_scope_wait, then rethrows the first exception a task of
       this round threw (every other task has run; with several waiters,
       one of them rethrows it). From inside a task of this scope it
       returns at once and rethrows nothing: the exception is the real
       waiter's, and that waiter still has tasks to wait for.
       Threads: any. Blocks: as pool_scope_wait. */
    void wait() { (void)wait_status(); }

    /* wait_status: pool_scope_wait_status (0, ECANCELED, EDEADLK), then
       rethrows as wait does (with EDEADLK, nothing). */
    int wait_status() {
        int rc = pool_scope_wait_status(&scope_);
        if (rc != EDEADLK) error_.rethrow();
        return rc;
    }

    /* cancel, cancelled: pool_scope_cancel and pool_scope_cancelled; tasks
       a cancel skips are destroyed without being run. */
    void cancel() { pool_scope_cancel(&scope_); }
    bool cancelled() const { return pool_scope_cancelled(&scope_) != 0; }

    /* The C scope, for the C functions that take one (a C task may be
       spawned into it too). Its on_cancel is the scope's own: setting
       another would leak the tasks a cancel skips. */
    pool_scope *c_scope() { return &scope_; }

  private:
    /* A callable in a cell of the pool's (pool_scope_spawn_copy). */
    template <class D> struct copied {
        scope *owner;
        D fn;
        static void run(void *arg) {
            copied *c = static_cast<copied *>(arg);
            detail::guarded(c->owner->error_, c->fn);
        }
    };

    /* A callable in a task of its own, deleted when it has run or been
       skipped. Every such task of a scope has the run function below as
       the file that made the scope sees it (own_run_: a program's shared
       objects may each have their own copy of an inline function), which
       is how skip, also that file's, tells them from C tasks spawned
       through c_scope(). */
    struct task_base : pool_task {
        void (*invoke)(task_base *t); /* runs the callable and deletes the task */
        void (*destroy)(task_base *t);
        static void run_task(pool_task *t) {
            task_base *b = static_cast<task_base *>(t);
            b->invoke(b);
        }
    };
    template <class D> struct owned : task_base {
        scope *owner;
        D fn;
        template <class F> owned(scope *s, F &&f) : owner(s), fn(std::forward<F>(f)) {
            run = s->own_run_;
            pool__next = nullptr;
            pool__scope = nullptr;
            invoke = &owned::run_and_delete;
            destroy = &owned::destroy_only;
        }
        static void run_and_delete(task_base *t) {
            owned *o = static_cast<owned *>(t);
            detail::guarded(o->owner->error_, o->fn);
            delete o;
        }
        static void destroy_only(task_base *t) { delete static_cast<owned *>(t); }
    };

    /* The scope's on_cancel: a skipped task of its own is deleted; a C
       task spawned through c_scope() is left as a cancel without an
       on_cancel leaves it. */
    static void skip(pool_task *t) {
        if (t->run != &task_base::run_task) return;
        task_base *b = static_cast<task_base *>(t);
        b->destroy(b);
    }

    template <class D, class F> int spawn_as(F &&f, std::true_type) {
        copied<D> c = {this, D(std::forward<F>(f))};
        return pool_scope_spawn_copy(&scope_, &copied<D>::run, &c, sizeof c);
    }

    template <class D, class F> int spawn_as(F &&f, std::false_type) {
#if !defined(__cpp_aligned_new)
        /* Before C++17 new ignores an alignment beyond the default. */
        static_assert(alignof(owned<D>) <= alignof(std::max_align_t),
                      "pool_cpp::scope::spawn: an over-aligned callable needs C++17");
#endif
        owned<D> *o = new (std::nothrow) owned<D>(this, std::forward<F>(f));
        int rc;
        if (!o) return ENOMEM;
        rc = pool_scope_spawn(&scope_, o);
        if (rc) delete o;
        return rc;
    }

    pool_scope scope_;              /* first: the members below stay off its count's line */
    void (*own_run_)(pool_task *t); /* see task_base */
    detail::first_error error_;
};

POOL__CPP_CLOSE

#endif /* __cplusplus && !POOL_NO_CPP */

#endif /* POOL_H */

/* ======================================================================== */
/*                              IMPLEMENTATION                              */
/* ======================================================================== */
#if defined(POOL_IMPLEMENTATION) && !defined(POOL__IMPLEMENTED)
#define POOL__IMPLEMENTED

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
/* Windows 7 for processor groups; WaitOnAddress (8) is looked up. */
#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0601
#elif _WIN32_WINNT < 0x0601
#error "pool.h needs _WIN32_WINNT >= 0x0601 (Windows 7)"
#endif
#include <windows.h>
#include <process.h>
#else
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#endif

#if defined(POOL_MALLOC) != defined(POOL_FREE)
#error "pool.h: define both POOL_MALLOC and POOL_FREE, or neither"
#endif
#ifndef POOL_MALLOC
#define POOL_MALLOC(size, user) ((void)(user), malloc(size))
#define POOL_FREE(ptr, user) ((void)(user), free(ptr))
#endif
#ifndef POOL_ASSERT
#include <assert.h>
#define POOL_ASSERT(x) assert(x)
#if defined(POOL_DEBUG) && defined(NDEBUG)
#error \
    "POOL_DEBUG reports through POOL_ASSERT, which is assert() and off with NDEBUG: define POOL_ASSERT"
#endif
#endif

/* POOL__INVARIANT(x) states an invariant on a path where it holds. It is
   checked (through POOL_ASSERT) only when POOL_DEBUG is defined: a build
   without NDEBUG, such as `make bench`'s, must not pay for it, and the
   fork-join path runs some of these at every join. `make test-debug` runs
   the suite with them. */
#ifdef POOL_DEBUG
#define POOL__INVARIANT(x) POOL_ASSERT(x)
#else
#define POOL__INVARIANT(x) ((void)0)
#endif

#ifdef POOL_STATIC
#define POOL__IMPL static
#else
#define POOL__IMPL
#endif

/* ------------------------------------------------------------------------ */
/* Platform: atomics, threads, wait/wake, CPU count, yield       >>platform */
/*                                                                          */
/* Everything the protocols need from the system is in this section.        */
/* ------------------------------------------------------------------------ */

/* Atomics are the GCC/Clang __atomic builtins: the same code compiles as C
   and C++, and ThreadSanitizer understands every one of them. */
#define POOL__RELAXED __ATOMIC_RELAXED
#define POOL__ACQUIRE __ATOMIC_ACQUIRE
#define POOL__RELEASE __ATOMIC_RELEASE
#define POOL__ACQ_REL __ATOMIC_ACQ_REL
#define POOL__SEQ_CST __ATOMIC_SEQ_CST
#define POOL__LOAD(ptr, mo) __atomic_load_n((ptr), (mo))
#define POOL__STORE(ptr, v, mo) __atomic_store_n((ptr), (v), (mo))
#define POOL__XCHG(ptr, v, mo) __atomic_exchange_n((ptr), (v), (mo))
#define POOL__CAS(ptr, expected, desired, mo_ok, mo_fail) \
    __atomic_compare_exchange_n((ptr), (expected), (desired), 0, (mo_ok), (mo_fail))
#define POOL__FETCH_ADD(ptr, v, mo) __atomic_fetch_add((ptr), (v), (mo))
#define POOL__FETCH_SUB(ptr, v, mo) __atomic_fetch_sub((ptr), (v), (mo))
#define POOL__FETCH_OR(ptr, v, mo) __atomic_fetch_or((ptr), (v), (mo))
#define POOL__FETCH_AND(ptr, v, mo) __atomic_fetch_and((ptr), (v), (mo))

/* A counter only its owner thread writes, read by pool_stats_get at any
   time: a relaxed load and store, no read-modify-write on the hot path.
   POOL_NO_STATS compiles out the workers' counters (to measure what
   they cost); the blocking pool's are state it runs on, and stay. */
#define POOL__COUNTER_ADD(counter, n) \
    POOL__STORE(&(counter), POOL__LOAD(&(counter), POOL__RELAXED) + (n), POOL__RELAXED)
#ifdef POOL_NO_STATS
#define POOL__COUNT(counter, n) ((void)0)
#else
#define POOL__COUNT(counter, n) POOL__COUNTER_ADD(counter, n)
#endif

/* Two cache lines: adjacent-line prefetch makes 64 bytes too few to keep
   the fields one thread writes away from those another thread writes. */
#define POOL__CACHE_LINE 128
#define POOL__ALIGNED __attribute__((aligned(POOL__CACHE_LINE)))

#if defined(__cplusplus)
#define POOL__THREAD_LOCAL thread_local
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define POOL__THREAD_LOCAL _Thread_local
#else
#define POOL__THREAD_LOCAL __thread
#endif

/* The join fast path is a handful of loads and stores; it must not pay
   for a call or for the registers a cold path would need. */
#define POOL__INLINE static inline __attribute__((always_inline))
#define POOL__COLD static __attribute__((noinline, cold))

#if defined(__x86_64__) || defined(__i386__)
#define POOL__CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define POOL__CPU_RELAX() __asm__ __volatile__("yield" ::: "memory")
#else
#define POOL__CPU_RELAX() ((void)0)
#endif

static void *pool__alloc(size_t size, void *user) { return POOL_MALLOC(size, user); }
static void pool__free(void *ptr, void *user) { POOL_FREE(ptr, user); }

/* Cache-line aligned allocation on top of POOL_MALLOC, which promises only
   malloc's alignment. The original pointer is kept just before the block. */
/* What pool__alloc_aligned asks POOL_MALLOC for, to give size bytes. */
static size_t pool__aligned_request(size_t size) {
    return size + POOL__CACHE_LINE + sizeof(void *);
}

static void *pool__alloc_aligned(size_t size, void *user) {
    char *raw = (char *)pool__alloc(pool__aligned_request(size), user);
    uintptr_t aligned;
    if (!raw) return NULL;
    aligned = ((uintptr_t)(raw + sizeof(void *)) + POOL__CACHE_LINE - 1) &
              ~(uintptr_t)(POOL__CACHE_LINE - 1);
    memcpy((char *)aligned - sizeof(void *), &raw, sizeof raw);
    return (void *)aligned;
}

static void pool__free_aligned(void *ptr, void *user) {
    char *raw;
    if (!ptr) return;
    memcpy(&raw, (char *)ptr - sizeof(void *), sizeof raw);
    pool__free(raw, user);
}

/* Threads, locks and once-flags. POSIX threads, or on Windows the Win32
   API itself (SRW locks, condition variables, _beginthreadex), so that
   MinGW needs no winpthreads and clang-cl works too. */
#if defined(_WIN32)
typedef HANDLE pool__thread;
typedef SRWLOCK pool__mutex;
typedef CONDITION_VARIABLE pool__cond;
typedef INIT_ONCE pool__once_flag;
#define POOL__MUTEX_INIT SRWLOCK_INIT
#define POOL__ONCE_INIT INIT_ONCE_STATIC_INIT
typedef unsigned pool__thread_result;
#define POOL__THREAD_CALL __stdcall
#else
typedef pthread_t pool__thread;
typedef pthread_mutex_t pool__mutex;
typedef pthread_cond_t pool__cond;
typedef pthread_once_t pool__once_flag;
#define POOL__MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#define POOL__ONCE_INIT PTHREAD_ONCE_INIT
typedef void *pool__thread_result;
#define POOL__THREAD_CALL
#endif
/* A thread's entry point: `static pool__thread_result POOL__THREAD_CALL
   name(void *arg)`, returning 0. */
typedef pool__thread_result(POOL__THREAD_CALL *pool__thread_proc)(void *);

/* Tests make thread creation fail on purpose: they define
   POOL__THREAD_CREATE to the name of their own function, which has this
   signature and may call pool__thread_create_native. */
static int pool__thread_create_native(pool__thread *t, size_t stack_size, pool__thread_proc fn,
                                      void *arg);
#ifdef POOL__THREAD_CREATE
static int POOL__THREAD_CREATE(pool__thread *t, size_t stack_size, pool__thread_proc fn, void *arg);
#else
#define POOL__THREAD_CREATE pool__thread_create_native
#endif

static int pool__thread_start(pool__thread *t, pool__thread_proc fn, void *arg, size_t stack_size) {
    return POOL__THREAD_CREATE(t, stack_size, fn, arg);
}

#if defined(_WIN32)
static int pool__thread_create_native(pool__thread *t, size_t stack_size, pool__thread_proc fn,
                                      void *arg) {
    /* A reservation, as a pthread stack size is: without the flag Windows
       commits the whole size up front, against the system's commit limit,
       for every worker. */
    unsigned flags = stack_size ? STACK_SIZE_PARAM_IS_A_RESERVATION : 0;
    uintptr_t h = _beginthreadex(NULL, (unsigned)stack_size, fn, arg, flags, NULL);
    if (!h) return errno ? errno : EAGAIN;
    *t = (HANDLE)h;
    return 0;
}

/* Windows reserves stacks in 64 KiB units and takes any size; a smaller
   one is refused here, as pthreads refuses one below PTHREAD_STACK_MIN. */
static int pool__stack_size_accepted(size_t stack_size) {
    return stack_size >= 65536 && stack_size <= UINT_MAX;
}

static void pool__thread_join(pool__thread t) {
    WaitForSingleObject(t, INFINITE);
    CloseHandle(t);
}

/* A handle to the calling thread that another thread can join. */
static pool__thread pool__thread_self(void) {
    HANDLE h = NULL;
    DuplicateHandle(GetCurrentProcess(), GetCurrentThread(), GetCurrentProcess(), &h, 0, FALSE,
                    DUPLICATE_SAME_ACCESS);
    return h;
}

/* Nobody will join the calling thread (it holds no handle to itself). */
static void pool__thread_detach_self(void) {}

/* The creator's handle of a thread that will be joined through
   pool__thread_self instead. */
static void pool__thread_forget(pool__thread t) { CloseHandle(t); }

static int pool__mutex_init(pool__mutex *m) {
    InitializeSRWLock(m);
    return 0;
}
static void pool__mutex_destroy(pool__mutex *m) { (void)m; }
static void pool__mutex_lock(pool__mutex *m) { AcquireSRWLockExclusive(m); }
static int pool__mutex_trylock(pool__mutex *m) { return TryAcquireSRWLockExclusive(m) != 0; }
static void pool__mutex_unlock(pool__mutex *m) { ReleaseSRWLockExclusive(m); }

static int pool__cond_init(pool__cond *c) {
    InitializeConditionVariable(c);
    return 0;
}
static void pool__cond_destroy(pool__cond *c) { (void)c; }
static void pool__cond_wait(pool__cond *c, pool__mutex *m) {
    SleepConditionVariableSRW(c, m, INFINITE, 0);
}
static void pool__cond_signal(pool__cond *c) { WakeConditionVariable(c); }
static void pool__cond_broadcast(pool__cond *c) { WakeAllConditionVariable(c); }

static BOOL CALLBACK pool__once_trampoline(PINIT_ONCE once, PVOID fn, PVOID *context) {
    (void)once, (void)context;
    (*(void (**)(void))fn)();
    return TRUE;
}

static void pool__call_once(pool__once_flag *once, void (*fn)(void)) {
    InitOnceExecuteOnce(once, pool__once_trampoline, (PVOID)&fn, NULL);
}

static void pool__yield(void) { SwitchToThread(); }

static uint64_t pool__now_ns(void) {
    static int64_t frequency; /* fixed at boot: threads that race store the same value */
    int64_t hz = POOL__LOAD(&frequency, POOL__RELAXED);
    LARGE_INTEGER now;
    if (!hz) {
        LARGE_INTEGER f;
        QueryPerformanceFrequency(&f);
        hz = f.QuadPart;
        POOL__STORE(&frequency, hz, POOL__RELAXED);
    }
    QueryPerformanceCounter(&now);
    return (uint64_t)(now.QuadPart / hz) * 1000000000u +
           (uint64_t)(now.QuadPart % hz) * 1000000000u / (uint64_t)hz;
}

/* Waits on c until woken or pool__now_ns() reaches deadline_ns; returns 1
   once the deadline has passed. */
static int pool__cond_wait_until(pool__cond *c, pool__mutex *m, uint64_t deadline_ns) {
    uint64_t now = pool__now_ns(), ms;
    if (now >= deadline_ns) return 1;
    ms = (deadline_ns - now + 999999u) / 1000000u;
    SleepConditionVariableSRW(c, m, ms >= INFINITE ? INFINITE - 1 : (DWORD)ms, 0);
    return pool__now_ns() >= deadline_ns;
}
#else
static int pool__thread_create_native(pool__thread *t, size_t stack_size, pool__thread_proc fn,
                                      void *arg) {
    pthread_attr_t attr;
    int rc = pthread_attr_init(&attr);
    if (rc) return rc;
    if (stack_size) rc = pthread_attr_setstacksize(&attr, stack_size);
    if (!rc) rc = pthread_create(t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return rc;
}

/* Whether the thread attributes take this stack size. */
static int pool__stack_size_accepted(size_t stack_size) {
    pthread_attr_t attr;
    int rc;
    if (pthread_attr_init(&attr) != 0) return 0;
    rc = pthread_attr_setstacksize(&attr, stack_size);
    pthread_attr_destroy(&attr);
    return rc == 0;
}

static void pool__thread_join(pool__thread t) { pthread_join(t, NULL); }
static pool__thread pool__thread_self(void) { return pthread_self(); }
static void pool__thread_detach_self(void) { pthread_detach(pthread_self()); }
static void pool__thread_forget(pool__thread t) { (void)t; }

static int pool__mutex_init(pool__mutex *m) { return pthread_mutex_init(m, NULL); }
static void pool__mutex_destroy(pool__mutex *m) { pthread_mutex_destroy(m); }
static void pool__mutex_lock(pool__mutex *m) { pthread_mutex_lock(m); }
static int pool__mutex_trylock(pool__mutex *m) { return pthread_mutex_trylock(m) == 0; }
static void pool__mutex_unlock(pool__mutex *m) { pthread_mutex_unlock(m); }

/* Condition variables time out on the monotonic clock where the system
   allows it, so that setting the wall clock does not stretch a timeout. */
#if defined(__APPLE__)
#define POOL__COND_CLOCK CLOCK_REALTIME
#else
#define POOL__COND_CLOCK CLOCK_MONOTONIC
#endif

static int pool__cond_init(pool__cond *c) {
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);
    if (rc) return rc;
#if !defined(__APPLE__)
    rc = pthread_condattr_setclock(&attr, POOL__COND_CLOCK);
#endif
    if (!rc) rc = pthread_cond_init(c, &attr);
    pthread_condattr_destroy(&attr);
    return rc;
}
static void pool__cond_destroy(pool__cond *c) { pthread_cond_destroy(c); }
static void pool__cond_wait(pool__cond *c, pool__mutex *m) { pthread_cond_wait(c, m); }
static void pool__cond_signal(pool__cond *c) { pthread_cond_signal(c); }
static void pool__cond_broadcast(pool__cond *c) { pthread_cond_broadcast(c); }

static void pool__call_once(pool__once_flag *once, void (*fn)(void)) { pthread_once(once, fn); }

static void pool__yield(void) { sched_yield(); }

static uint64_t pool__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Waits on c until woken or pool__now_ns() reaches deadline_ns; returns 1
   once the deadline has passed. */
static int pool__cond_wait_until(pool__cond *c, pool__mutex *m, uint64_t deadline_ns) {
    struct timespec ts;
    uint64_t now = pool__now_ns(), at;
    if (now >= deadline_ns) return 1;
    clock_gettime(POOL__COND_CLOCK, &ts);
    at = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + (deadline_ns - now);
    ts.tv_sec = (time_t)(at / 1000000000u);
    ts.tv_nsec = (long)(at % 1000000000u);
    return pthread_cond_timedwait(c, m, &ts) == ETIMEDOUT;
}
#endif

/* A thread that returns at once, started by pool__stack_size_ok. */
static pool__thread_result POOL__THREAD_CALL pool__probe_main(void *arg) {
    (void)arg;
    return 0;
}

static int pool__probe_thread(size_t stack_size) {
    pool__thread t;
    int rc;
    memset(&t, 0, sizeof t); /* set by a successful create; compilers cannot always tell */
    rc = pool__thread_create_native(&t, stack_size, pool__probe_main, NULL);
    if (rc == 0) pool__thread_join(t);
    return rc;
}

/* Whether threads can be created with this stack size (0: the default),
   so that pool_create refuses a bad one instead of every worker failing.
   The attributes accept sizes (SIZE_MAX, a terabyte) that every thread
   creation then refuses, so a thread is started to find out. If it
   fails, so that a thread with the default stack does not, the size is
   refused; if both fail, the system is out of threads for now, which
   says nothing about the size (the pool starts its threads later). */
static int pool__stack_size_ok(size_t stack_size) {
    if (!stack_size) return 1;
    if (!pool__stack_size_accepted(stack_size)) return 0;
    return pool__probe_thread(stack_size) == 0 || pool__probe_thread(0) != 0;
}

/* POOL_CHAOS (testing only): at each step of the deque, injector, sleep
   and latch protocols, POOL__CHAOS() yields now and then and sleeps a few
   microseconds once in a while, so that soak tests see the interleavings
   a quiet machine almost never produces. Without POOL_CHAOS it is nothing. */
#ifdef POOL_CHAOS
static POOL__THREAD_LOCAL uint64_t pool__chaos_rng;

static void pool__chaos(void) {
    uint64_t x = pool__chaos_rng ? pool__chaos_rng : ((uint64_t)(uintptr_t)&pool__chaos_rng | 1);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    pool__chaos_rng = x;
    if ((x & 7) == 0) {
        pool__yield();
    } else if ((x & 1023) == 1) {
#if defined(_WIN32)
        Sleep(0);
#else
        struct timespec ts;
        ts.tv_sec = 0;
        ts.tv_nsec = (long)((x >> 10) % 20000);
        nanosleep(&ts, NULL);
#endif
    }
}
#define POOL__CHAOS() pool__chaos()
#else
#define POOL__CHAOS() ((void)0)
#endif

#if defined(__linux__)
#include <sys/prctl.h>
#include <sys/syscall.h>
#ifndef __cplusplus
/* <unistd.h> hides syscall() in strict ISO C modes, and <sched.h>
   declares sched_getcpu() only with _GNU_SOURCE; these declarations are
   the ones glibc and musl use. (C++ compilers define _GNU_SOURCE.) */
long syscall(long number, ...);
int sched_getcpu(void);
#endif
#endif

/* Wait/wake on a 32-bit word: pool__wait blocks while *addr == expected
   (it may return spuriously: callers loop), pool__wake_one wakes one
   thread blocked on addr, pool__wake_all every one. Every caller changes *addr before it wakes, and
   each primitive below compares *addr with `expected` atomically with
   going to sleep, so a wake-up between a waiter's check and its sleep is
   never lost. The address-keyed primitive of each system: futex (Linux),
   _umtx_op (FreeBSD), os_sync_wait_on_address or __ulock_wait (macOS),
   WaitOnAddress (Windows 8+); elsewhere, with POOL_NO_FUTEX, or when
   Windows lacks WaitOnAddress, a table of mutex + condvar buckets. */
#if defined(POOL_NO_FUTEX) || defined(_WIN32) || \
    !(defined(__linux__) || defined(__FreeBSD__) || defined(__APPLE__))
#define POOL__WAIT_TABLE 1
#endif

#ifdef POOL__WAIT_TABLE
/* A waker changes *addr before it calls wake, and wake takes the bucket
   lock, so it cannot run between a waiter's check of *addr and its
   cond_wait: the check and the sleep are atomic with respect to wake. */
#define POOL__WAIT_BUCKETS 64
static struct pool__wait_bucket {
    pool__mutex lock;
    pool__cond cond;
} pool__wait_table[POOL__WAIT_BUCKETS];
static pool__once_flag pool__wait_table_once = POOL__ONCE_INIT;

static void pool__wait_table_init(void) {
    int i;
    for (i = 0; i < POOL__WAIT_BUCKETS; i++) {
        pool__mutex_init(&pool__wait_table[i].lock);
        pool__cond_init(&pool__wait_table[i].cond);
    }
}

static struct pool__wait_bucket *pool__wait_bucket_of(const uint32_t *addr) {
    pool__call_once(&pool__wait_table_once, pool__wait_table_init);
    return &pool__wait_table[((uintptr_t)addr / sizeof(uint32_t)) % POOL__WAIT_BUCKETS];
}

static void pool__table_wait(uint32_t *addr, uint32_t expected) {
    struct pool__wait_bucket *b = pool__wait_bucket_of(addr);
    pool__mutex_lock(&b->lock);
    /* Relaxed: the bucket lock orders this load after the waker's change. */
    if (POOL__LOAD(addr, POOL__RELAXED) == expected) pool__cond_wait(&b->cond, &b->lock);
    pool__mutex_unlock(&b->lock);
}

static void pool__table_wake(uint32_t *addr) {
    struct pool__wait_bucket *b = pool__wait_bucket_of(addr);
    pool__mutex_lock(&b->lock);
    pool__cond_broadcast(&b->cond); /* buckets are shared: wake them all */
    pool__mutex_unlock(&b->lock);
}

#if !defined(_WIN32)
/* For the child of a fork: a bucket's lock may have been held, and its
   condvar may still count waiters, by threads of the parent that do not
   exist here (glibc's broadcast would wait for them forever). Every
   bucket starts afresh; the child has one thread, so nobody is inside. */
static void pool__wait_table_reset_all(void) {
    int i;
    for (i = 0; i < POOL__WAIT_BUCKETS; i++) {
        pool__mutex_init(&pool__wait_table[i].lock);
        pool__cond_init(&pool__wait_table[i].cond);
    }
}
#endif
#else
static void pool__wait_table_reset_all(void) {}
#endif

#if defined(POOL_NO_FUTEX)
static void pool__wait(uint32_t *addr, uint32_t expected) { pool__table_wait(addr, expected); }
static void pool__wake_one(uint32_t *addr) { pool__table_wake(addr); }
static void pool__wake_all(uint32_t *addr) { pool__table_wake(addr); }
#elif defined(__linux__)
/* The kernel's futex ABI, spelled out: musl-gcc's include path, and
   Alpine's without linux-headers, have no <linux/futex.h>. Targets with
   only 64-bit time have just SYS_futex_time64; with no timeout the two
   calls are the same. */
#define POOL__FUTEX_WAIT_PRIVATE 128 /* FUTEX_WAIT | FUTEX_PRIVATE_FLAG */
#define POOL__FUTEX_WAKE_PRIVATE 129 /* FUTEX_WAKE | FUTEX_PRIVATE_FLAG */
#if defined(SYS_futex)
#define POOL__SYS_FUTEX SYS_futex
#else
#define POOL__SYS_FUTEX SYS_futex_time64
#endif

static void pool__wait(uint32_t *addr, uint32_t expected) {
    syscall(POOL__SYS_FUTEX, addr, POOL__FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void pool__wake_one(uint32_t *addr) {
    syscall(POOL__SYS_FUTEX, addr, POOL__FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void pool__wake_all(uint32_t *addr) {
    syscall(POOL__SYS_FUTEX, addr, POOL__FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
#elif defined(__FreeBSD__)
#include <sys/types.h>
#include <sys/umtx.h>

static void pool__wait(uint32_t *addr, uint32_t expected) {
    _umtx_op(addr, UMTX_OP_WAIT_UINT_PRIVATE, expected, NULL, NULL);
}

static void pool__wake_one(uint32_t *addr) { _umtx_op(addr, UMTX_OP_WAKE_PRIVATE, 1, NULL, NULL); }
static void pool__wake_all(uint32_t *addr) {
    _umtx_op(addr, UMTX_OP_WAKE_PRIVATE, INT_MAX, NULL, NULL);
}
#elif defined(__APPLE__)
/* os_sync_wait_on_address is the public API from macOS 14.4. Before it,
   libSystem's __ulock_wait/__ulock_wake (macOS 10.12+) are the same
   mechanism; they have no header, so they are declared here, as libc++
   and the Go, Rust and Zig runtimes do. */
#if defined(__clang__) && defined(__has_include)
#if __has_include(<os/os_sync_wait_on_address.h>)
#include <os/os_sync_wait_on_address.h>
#define POOL__OS_SYNC 1
#endif
#endif
#ifdef __cplusplus
extern "C" {
#endif
extern int __ulock_wait(uint32_t operation, void *addr, uint64_t value, uint32_t timeout_us);
extern int __ulock_wake(uint32_t operation, void *addr, uint64_t wake_value);
#ifdef __cplusplus
}
#endif
#define POOL__UL_COMPARE_AND_WAIT 1
#define POOL__ULF_WAKE_ALL 0x00000100
#define POOL__ULF_NO_ERRNO 0x01000000

static void pool__wait(uint32_t *addr, uint32_t expected) {
#ifdef POOL__OS_SYNC
    if (__builtin_available(macOS 14.4, iOS 17.4, *)) {
        os_sync_wait_on_address(addr, expected, sizeof *addr, OS_SYNC_WAIT_ON_ADDRESS_NONE);
        return;
    }
#endif
    __ulock_wait(POOL__UL_COMPARE_AND_WAIT | POOL__ULF_NO_ERRNO, addr, expected, 0);
}

static void pool__wake_one(uint32_t *addr) {
#ifdef POOL__OS_SYNC
    if (__builtin_available(macOS 14.4, iOS 17.4, *)) {
        os_sync_wake_by_address_any(addr, sizeof *addr, OS_SYNC_WAKE_BY_ADDRESS_NONE);
        return;
    }
#endif
    __ulock_wake(POOL__UL_COMPARE_AND_WAIT | POOL__ULF_NO_ERRNO, addr, 0);
}

static void pool__wake_all(uint32_t *addr) {
#ifdef POOL__OS_SYNC
    if (__builtin_available(macOS 14.4, iOS 17.4, *)) {
        os_sync_wake_by_address_all(addr, sizeof *addr, OS_SYNC_WAKE_BY_ADDRESS_NONE);
        return;
    }
#endif
    __ulock_wake(POOL__UL_COMPARE_AND_WAIT | POOL__ULF_WAKE_ALL | POOL__ULF_NO_ERRNO, addr, 0);
}
#elif defined(_WIN32)
/* WaitOnAddress lives in an API set that MinGW's import libraries may
   lack, so it is looked up at run time; without it (before Windows 8),
   the bucket table serves. */
typedef BOOL(WINAPI *pool__wait_on_address_fn)(volatile VOID *, PVOID, SIZE_T, DWORD);
typedef VOID(WINAPI *pool__wake_by_address_fn)(PVOID);
static pool__wait_on_address_fn pool__wait_on_address;
static pool__wake_by_address_fn pool__wake_by_address_single;
static pool__wake_by_address_fn pool__wake_by_address_all;
static pool__once_flag pool__wait_resolve_once = POOL__ONCE_INIT;

static void pool__wait_resolve(void) {
    HMODULE lib = LoadLibraryA("api-ms-win-core-synch-l1-2-0.dll");
    FARPROC wait = lib ? GetProcAddress(lib, "WaitOnAddress") : NULL;
    FARPROC wake = lib ? GetProcAddress(lib, "WakeByAddressSingle") : NULL;
    FARPROC wake_all = lib ? GetProcAddress(lib, "WakeByAddressAll") : NULL;
    if (wait && wake && wake_all) { /* via void (*)(void), the cast that means "any function" */
        pool__wait_on_address = (pool__wait_on_address_fn)(void (*)(void))wait;
        pool__wake_by_address_single = (pool__wake_by_address_fn)(void (*)(void))wake;
        pool__wake_by_address_all = (pool__wake_by_address_fn)(void (*)(void))wake_all;
    }
}

static void pool__wait(uint32_t *addr, uint32_t expected) {
    pool__call_once(&pool__wait_resolve_once, pool__wait_resolve);
    if (pool__wait_on_address) pool__wait_on_address(addr, &expected, sizeof expected, INFINITE);
    else pool__table_wait(addr, expected);
}

static void pool__wake_one(uint32_t *addr) {
    pool__call_once(&pool__wait_resolve_once, pool__wait_resolve);
    if (pool__wake_by_address_single) pool__wake_by_address_single(addr);
    else pool__table_wake(addr);
}

static void pool__wake_all(uint32_t *addr) {
    pool__call_once(&pool__wait_resolve_once, pool__wait_resolve);
    if (pool__wake_by_address_all) pool__wake_by_address_all(addr);
    else pool__table_wake(addr);
}
#else
static void pool__wait(uint32_t *addr, uint32_t expected) { pool__table_wait(addr, expected); }
static void pool__wake_one(uint32_t *addr) { pool__table_wake(addr); }
static void pool__wake_all(uint32_t *addr) { pool__table_wake(addr); }
#endif

/* Asymmetric fences, for a Dekker pairing (each side stores, then loads
   what the other stores) whose one side runs millions of times a second
   and whose other side almost never runs. The frequent side's full fence
   is then the whole cost, so the rare side pays for both: on Linux it
   asks the kernel (membarrier, "private expedited") to run a full memory
   barrier on every thread of the process that is running, and a thread
   that is not running has passed through one in its context switch. So
   for any frequent-side store and later load, the rare side's load after
   its fence sees the store, or the frequent side's load sees what the
   rare side stored before its fence, as if both sides had a seq_cst
   fence. The frequent side then needs only a compiler barrier.
   Elsewhere, or where the kernel refuses the registration (it is older
   than 4.14, or a sandbox filters the call), each side uses seq_cst
   read-modify-writes and loads instead. Which kind a process uses is
   settled by the first pool_create, before any thread of a pool exists,
   and never changes: pool__fence_asymmetric's relaxed loads see it. */
static int pool__fence_asymmetric;
static pool__once_flag pool__fence_once = POOL__ONCE_INIT;

#if defined(__linux__) && defined(SYS_membarrier)
#define POOL__MEMBARRIER_PRIVATE_EXPEDITED 8           /* MEMBARRIER_CMD_PRIVATE_EXPEDITED */
#define POOL__MEMBARRIER_REGISTER_PRIVATE_EXPEDITED 16 /* ..._REGISTER_PRIVATE_EXPEDITED */

static void pool__fence_setup_once(void) {
    if (syscall(SYS_membarrier, POOL__MEMBARRIER_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
        syscall(SYS_membarrier, POOL__MEMBARRIER_PRIVATE_EXPEDITED, 0, 0) == 0)
        POOL__STORE(&pool__fence_asymmetric, 1, POOL__RELAXED);
}

/* The rare side's fence; 0 if it was made. A registration is the
   process's for good (a fork's child inherits it), so this fails only
   where the kernel goes back on it. */
static int pool__fence_heavy(void) {
    return (int)syscall(SYS_membarrier, POOL__MEMBARRIER_PRIVATE_EXPEDITED, 0, 0);
}
#else
static void pool__fence_setup_once(void) {}
static int pool__fence_heavy(void) { return -1; }
#endif

static void pool__fence_setup(void) { pool__call_once(&pool__fence_once, pool__fence_setup_once); }

/* Whether the frequent side may use a compiler barrier (see above). */
POOL__INLINE int pool__fence_is_asymmetric(void) {
    return POOL__LOAD(&pool__fence_asymmetric, POOL__RELAXED);
}

#define POOL__COMPILER_BARRIER() __asm__ __volatile__("" ::: "memory")

/* A set of CPUs. On Linux a thread inherits its creator's affinity, so a
   pinned worker that starts a thread (a worker, a blocking thread, or
   another pool's) would pass its one CPU on: every thread a pool starts
   first takes the set its pool was created with. Elsewhere a new thread
   gets the process's affinity, and only `count` is used. */
typedef struct pool__cpu_set {
#if defined(__linux__)
    unsigned long bits[1024 / (8 * sizeof(unsigned long))];
#endif
    int count;    /* CPUs in the set */
    int has_bits; /* bits hold the set (else count comes from the system) */
} pool__cpu_set;

/* The CPUs the calling thread may run on: its affinity mask, not the
   machine's CPUs. */
static void pool__cpu_set_get(pool__cpu_set *set) {
    memset(set, 0, sizeof *set);
#if defined(__linux__)
    {
        long bytes = syscall(SYS_sched_getaffinity, 0, sizeof set->bits, set->bits);
        size_t i;
        for (i = 0; bytes > 0 && i < (size_t)bytes / sizeof(unsigned long); i++)
            set->count += __builtin_popcountl(set->bits[i]);
        set->has_bits = set->count > 0;
    }
#endif
#if defined(_WIN32)
    {
        DWORD_PTR process_mask, system_mask;
        /* A process confined to one processor group has a mask to count;
           across groups (more than 64 CPUs), count them all. */
        if (GetActiveProcessorGroupCount() == 1 &&
            GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask) &&
            process_mask) {
            for (; process_mask; process_mask &= process_mask - 1) set->count++;
        } else {
            set->count = (int)GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
        }
    }
#else
    if (!set->count) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        set->count = n > 0 ? (int)(n > 65535 ? 65535 : n) : 1;
    }
#endif
    if (set->count < 1) set->count = 1;
}

/* Gives the calling thread the CPUs of `set` (see pool__cpu_set): 0, or
   -1 if the system refused them. */
static int pool__cpu_set_apply(const pool__cpu_set *set) {
#if defined(__linux__)
    if (set->has_bits) return (int)syscall(SYS_sched_setaffinity, 0, sizeof set->bits, set->bits);
#else
    (void)set;
#endif
    return 0;
}

/* The CPU limit of the cgroup v2 this process is in: the smallest
   ceil(quota / period) of its cpu.max and its ancestors', or 0 for no
   limit (no cgroup v2, no quota, or anything unreadable). A container
   given 1.5 CPUs on a 64-core host should get 2 workers, not 64.
   Tests point both paths at a fake tree. */
#ifndef POOL__CGROUP_ROOT
#define POOL__CGROUP_ROOT "/sys/fs/cgroup"
#endif
#ifndef POOL__PROC_SELF_CGROUP
#define POOL__PROC_SELF_CGROUP "/proc/self/cgroup"
#endif

#if defined(__linux__)
/* ceil(quota / period) from one cpu.max ("max 100000" or "150000 100000"); 0: none. */
static long pool__read_cpu_max(const char *path) {
    FILE *f = fopen(path, "r");
    char quota[32];
    unsigned long long q, period;
    long limit = 0;
    if (!f) return 0;
    if (fscanf(f, "%31s %llu", quota, &period) == 2 && period > 0 &&
        sscanf(quota, "%llu", &q) == 1 && q > 0) {
        unsigned long long cpus = (q + period - 1) / period;
        limit = cpus > 65535 ? 65535 : (long)cpus;
    }
    fclose(f);
    return limit;
}

static int pool__cgroup_cpu_limit(void) {
    char line[4096], dir[4096 + 64];
    size_t root_len, len;
    long best = 0;
    int found = 0;
    FILE *f = fopen(POOL__PROC_SELF_CGROUP, "r");
    if (!f) return 0;
    /* The v2 entry is "0::/path"; v1 controllers have other numbers. */
    while (!found && fgets(line, sizeof line, f)) found = strncmp(line, "0::/", 4) == 0;
    fclose(f);
    /* A path longer than Linux's PATH_MAX would be cut: no answer then. */
    if (!found || !strchr(line, '\n')) return 0;
    line[strcspn(line, "\n")] = 0;
    root_len = strlen(POOL__CGROUP_ROOT);
    if (root_len + strlen(line + 3) + sizeof "/cpu.max" > sizeof dir) return 0;
    memcpy(dir, POOL__CGROUP_ROOT, root_len);
    strcpy(dir + root_len, line + 3);
    /* From the process's cgroup up to the root: a parent's quota binds too. */
    for (;;) {
        long limit;
        len = strlen(dir);
        while (len > root_len && dir[len - 1] == '/') dir[--len] = 0;
        strcpy(dir + len, "/cpu.max");
        limit = pool__read_cpu_max(dir);
        dir[len] = 0;
        if (limit > 0 && (best == 0 || limit < best)) best = limit;
        if (len <= root_len) break;
        while (len > root_len && dir[len - 1] != '/') len--;
        dir[len] = 0;
    }
    return (int)best;
}

/* Pins the calling thread to one CPU: 0, or an errno value. */
static int pool__pin_current_thread(int cpu) {
    unsigned long mask[1024 / (8 * sizeof(unsigned long))];
    size_t bits = 8 * sizeof(unsigned long);
    memset(mask, 0, sizeof mask);
    mask[(size_t)cpu / bits] = 1ul << ((size_t)cpu % bits);
    return syscall(SYS_sched_setaffinity, 0, sizeof mask, mask) == 0 ? 0 : errno;
}

/* The CPU the calling thread runs on at this instant, or -1 if unknown.
   No system call: the C library reads it from memory the kernel keeps. */
static int pool__current_cpu(void) {
    int cpu = sched_getcpu();
    return cpu >= 0 && cpu < 1024 ? cpu : -1;
}
#elif defined(_WIN32)
static int pool__cgroup_cpu_limit(void) { return 0; }

/* Within the thread's processor group: CPUs 0-63. */
static int pool__pin_current_thread(int cpu) {
    if ((size_t)cpu >= 8 * sizeof(DWORD_PTR)) return EINVAL;
    return SetThreadAffinityMask(GetCurrentThread(), (DWORD_PTR)1 << cpu) ? 0 : EINVAL;
}
#else
static int pool__cgroup_cpu_limit(void) { return 0; }
static int pool__pin_current_thread(int cpu) {
    (void)cpu;
    return ENOTSUP;
}
#endif

/* The highest CPU number a pin may name (the Linux mask size above). */
#define POOL__MAX_CPU 1023

#if defined(__FreeBSD__)
#include <pthread_np.h>
#endif

static void pool__thread_set_name(const char *name) {
#if defined(__linux__)
    prctl(PR_SET_NAME, name, 0, 0, 0);
#elif defined(__APPLE__)
    pthread_setname_np(name);
#elif defined(__FreeBSD__)
    pthread_set_name_np(pthread_self(), name);
#elif defined(_WIN32)
    /* SetThreadDescription: Windows 10 1607+, looked up like WaitOnAddress. */
    typedef HRESULT(WINAPI * set_description_fn)(HANDLE, PCWSTR);
    FARPROC proc = GetProcAddress(GetModuleHandleA("kernel32.dll"), "SetThreadDescription");
    WCHAR wide[16];
    if (proc && MultiByteToWideChar(CP_UTF8, 0, name, -1, wide, 16) > 0)
        ((set_description_fn)(void (*)(void))proc)(GetCurrentThread(), wide);
#else
    (void)name;
#endif
}

/* A signal an event loop can wait on: a descriptor that is readable (an
   event that is set) from a raise until the next clear. Linux: an eventfd
   (h[0] == h[1]), unless POOL_COMPLETION_PIPE asks for the pipe of the
   other POSIX systems (read end h[0], write end h[1]); Windows: a
   manual-reset event (h[0] == h[1]). Non-blocking and close-on-exec.
   Each returns 0 or an errno value. */
#if defined(_WIN32)
static int pool__signal_open(intptr_t h[2]) {
    HANDLE e = CreateEventA(NULL, TRUE, FALSE, NULL);
    if (!e) return ENOMEM;
    h[0] = h[1] = (intptr_t)e;
    return 0;
}
static int pool__signal_raise(intptr_t h[2]) { return SetEvent((HANDLE)h[1]) ? 0 : EIO; }
static void pool__signal_clear(intptr_t h[2]) { ResetEvent((HANDLE)h[0]); }
static void pool__signal_close(intptr_t h[2]) { CloseHandle((HANDLE)h[0]); }
static int pool__signal_wait(intptr_t h[2], int timeout_ms) {
    DWORD r = WaitForSingleObject((HANDLE)h[0], timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms);
    return r == WAIT_OBJECT_0 ? 0 : r == WAIT_TIMEOUT ? ETIMEDOUT : EIO;
}
#else
#include <poll.h>
#if defined(__linux__) && !defined(POOL_COMPLETION_PIPE)
#include <sys/eventfd.h>
#define POOL__SIGNAL_EVENTFD 1
#else
#include <fcntl.h>
#endif

static int pool__signal_open(intptr_t h[2]) {
#ifdef POOL__SIGNAL_EVENTFD
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) return errno;
    h[0] = h[1] = fd;
#else
    int fd[2], i;
    if (pipe(fd) != 0) return errno;
    for (i = 0; i < 2; i++)
        if (fcntl(fd[i], F_SETFL, fcntl(fd[i], F_GETFL) | O_NONBLOCK) != 0 ||
            fcntl(fd[i], F_SETFD, FD_CLOEXEC) != 0) {
            int err = errno;
            close(fd[0]);
            close(fd[1]);
            return err;
        }
    h[0] = fd[0];
    h[1] = fd[1];
#endif
    return 0;
}

/* A full pipe, or an eventfd at its maximum, is readable already. write()
   is a cancellation point: a poster cancelled there would leave its item
   queued with the handle never raised, and every later post (onto a stack
   not empty) would not raise it either, so cancellation is held off. */
static int pool__signal_raise(intptr_t h[2]) {
#ifdef POOL__SIGNAL_EVENTFD
    uint64_t one = 1;
#else
    char one = 1;
#endif
    ssize_t n;
    int cancel_state, err;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    while ((n = write((int)h[1], &one, sizeof one)) < 0 && errno == EINTR) continue;
    err = n >= 0 || errno == EAGAIN ? 0 : errno;
    pthread_setcancelstate(cancel_state, NULL);
    return err;
}

/* Reads until nothing is left (an eventfd's one read resets it). */
static void pool__signal_clear(intptr_t h[2]) {
    char buf[64];
    ssize_t n;
    while ((n = read((int)h[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) continue;
}

/* The write end first: a write between the two closes would otherwise
   meet a pipe with no reader (SIGPIPE). */
static void pool__signal_close(intptr_t h[2]) {
    if (h[1] != h[0]) close((int)h[1]);
    close((int)h[0]);
}

/* Blocks until the signal is raised, or for timeout_ms (-1: no limit). A
   signal of the caller's that interrupts poll() is not the caller's error:
   the wait goes on for what is left of the time. */
static int pool__signal_wait(intptr_t h[2], int timeout_ms) {
    uint64_t deadline = pool__now_ns() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000000u;
    struct pollfd fd;
    int left = timeout_ms, n;
    fd.fd = (int)h[0];
    fd.events = POLLIN;
    while ((n = poll(&fd, 1, left)) < 0 && errno == EINTR) {
        uint64_t now = pool__now_ns();
        if (timeout_ms >= 0)
            left = now >= deadline ? 0 : (int)((deadline - now + 999999u) / 1000000u);
    }
    return n > 0 ? 0 : n == 0 ? ETIMEDOUT : errno;
}
#endif

/* ------------------------------------------------------------------------ */
/* Deque: the Chase-Lev work-stealing deque (C11, Le et al. 2013)   >>deque */
/*                                                                          */
/* The owner pushes and pops at `bottom`; thieves take from `top`. Indices  */
/* are signed 64-bit and only grow, so they never wrap in practice, and     */
/* `bottom - top` is the number of items.                                   */
/*                                                                          */
/* The paper's three fences become orderings on the accesses they guard     */
/* (ThreadSanitizer does not model standalone fences):                      */
/*  - push publishes the slot with a release store of bottom;               */
/*  - pop's store of bottom and load of top are seq_cst, and so are a       */
/*    thief's loads of top and bottom. These four are the store-load pair   */
/*    the algorithm needs: when the owner takes the last item without a     */
/*    CAS (it saw top < new bottom), every thief that read the old top      */
/*    reads the new bottom, and finds the deque empty.                      */
/*                                                                          */
/* Growth never frees: a thief may have loaded the old buffer pointer and   */
/* still read a slot from it (freeing it here is a use-after-free). Old     */
/* buffers are chained to the new one and freed by pool__deque_destroy.     */
/* Buffers double, so the retired ones together are smaller than the live   */
/* one. Growth may fail for lack of memory; push then returns ENOMEM and    */
/* the caller runs the task another way, so a full deque never loses work.  */
/* ------------------------------------------------------------------------ */

typedef struct pool__deque_buffer {
    int64_t mask;                       /* capacity - 1, capacity a power of two */
    pool_task **slots;                  /* read and written atomically */
    struct pool__deque_buffer *retired; /* the buffer this one replaced */
} pool__deque_buffer;

typedef struct pool__deque {
    POOL__ALIGNED int64_t top;    /* thieves' end; advanced only by CAS */
    POOL__ALIGNED int64_t bottom; /* owner's end */
    pool__deque_buffer *buffer;   /* written by the owner only */
    void *alloc_user;
} pool__deque;

static pool__deque_buffer *pool__deque_buffer_new(int64_t capacity, void *user) {
    pool__deque_buffer *b =
        (pool__deque_buffer *)pool__alloc(sizeof *b + (size_t)capacity * sizeof(pool_task *), user);
    if (!b) return NULL;
    b->mask = capacity - 1;
    b->slots = (pool_task **)(b + 1);
    b->retired = NULL;
    return b;
}

static int pool__deque_init(pool__deque *d, int64_t capacity, void *alloc_user) {
    POOL__INVARIANT(capacity > 0 && (capacity & (capacity - 1)) == 0);
    d->top = 0;
    d->bottom = 0;
    d->alloc_user = alloc_user;
    d->buffer = pool__deque_buffer_new(capacity, alloc_user);
    return d->buffer ? 0 : ENOMEM;
}

static void pool__deque_destroy(pool__deque *d) {
    pool__deque_buffer *b = d->buffer;
    while (b) {
        pool__deque_buffer *older = b->retired;
        pool__free(b, d->alloc_user);
        b = older;
    }
    d->buffer = NULL;
}

/* Owner only. Copies the live items [top, bottom) into a buffer twice the
   size and publishes it; the old buffer stays readable for thieves. */
POOL__COLD pool__deque_buffer *pool__deque_grow(pool__deque *d, pool__deque_buffer *old,
                                                int64_t top, int64_t bottom) {
    pool__deque_buffer *b = pool__deque_buffer_new(2 * (old->mask + 1), d->alloc_user);
    int64_t i;
    if (!b) return NULL;
    for (i = top; i < bottom; i++)
        POOL__STORE(&b->slots[i & b->mask], POOL__LOAD(&old->slots[i & old->mask], POOL__RELAXED),
                    POOL__RELAXED);
    b->retired = old;
    /* Release: a thief that loads this pointer (acquire) sees the copied slots. */
    POOL__STORE(&d->buffer, b, POOL__RELEASE);
    return b;
}

/* Owner only. Returns 0, or ENOMEM when the deque is full and cannot grow. */
POOL__INLINE int pool__deque_push(pool__deque *d, pool_task *t) {
    int64_t bottom = POOL__LOAD(&d->bottom, POOL__RELAXED); /* only the owner writes it */
    /* Acquire pairs with a thief's CAS on top: its read of the slot it took
       happens before we overwrite that slot. */
    int64_t top = POOL__LOAD(&d->top, POOL__ACQUIRE);
    pool__deque_buffer *b = d->buffer; /* only the owner writes it */
    if (bottom - top > b->mask) {
        b = pool__deque_grow(d, b, top, bottom);
        if (!b) return ENOMEM;
    }
    POOL__STORE(&b->slots[bottom & b->mask], t, POOL__RELAXED);
    POOL__CHAOS();
    /* Release: a thief that reads this bottom also reads the slot and the
       task's contents. */
    POOL__STORE(&d->bottom, bottom + 1, POOL__RELEASE);
    return 0;
}

/* Owner only: the most recently pushed task, or NULL. */
POOL__INLINE pool_task *pool__deque_pop(pool__deque *d) {
    int64_t bottom = POOL__LOAD(&d->bottom, POOL__RELAXED) - 1;
    pool__deque_buffer *b = d->buffer;
    int64_t top;
    pool_task *t;
    /* seq_cst store, then seq_cst load of top: the store-load pair described
       above. It pairs with the seq_cst loads in pool__deque_steal. */
    POOL__STORE(&d->bottom, bottom, POOL__SEQ_CST);
    POOL__CHAOS();
    top = POOL__LOAD(&d->top, POOL__SEQ_CST);
    if (top > bottom) { /* empty: restore */
        POOL__STORE(&d->bottom, bottom + 1, POOL__RELAXED);
        return NULL;
    }
    t = POOL__LOAD(&b->slots[bottom & b->mask], POOL__RELAXED);
    if (top == bottom) {
        /* The last item: race the thieves for it with their own CAS. */
        POOL__CHAOS();
        if (!POOL__CAS(&d->top, &top, top + 1, POOL__SEQ_CST, POOL__RELAXED)) t = NULL;
        POOL__STORE(&d->bottom, bottom + 1, POOL__RELAXED);
    }
    return t;
}

/* Any thread: the oldest task, or NULL. NULL with *contended set means the
   deque was not empty but another thread won the race; try again. Only a
   task at index min_top or above is taken (0: any), so that a waiter can
   take what the owner pushed since a given moment (see the waiting
   section): below that index lies older work. */
static pool_task *pool__deque_steal(pool__deque *d, int64_t min_top, int *contended) {
    int64_t top = POOL__LOAD(&d->top, POOL__SEQ_CST); /* pairs with pop */
    int64_t bottom;
    pool__deque_buffer *b;
    pool_task *t;
    if (top < min_top) return NULL;
    POOL__CHAOS();
    bottom = POOL__LOAD(&d->bottom, POOL__SEQ_CST); /* pairs with pop and push */
    if (top >= bottom) return NULL;
    b = POOL__LOAD(&d->buffer, POOL__ACQUIRE); /* pairs with the release in grow */
    /* Read the item before the CAS: once top moves past it the owner may
       overwrite the slot. If the CAS fails the value is discarded. */
    t = POOL__LOAD(&b->slots[top & b->mask], POOL__RELAXED);
    POOL__CHAOS();
    /* seq_cst: orders against pop's CAS for the last item, and its release
       half pairs with the acquire load of top in push. */
    if (!POOL__CAS(&d->top, &top, top + 1, POOL__SEQ_CST, POOL__RELAXED)) {
        *contended = 1;
        return NULL;
    }
    return t;
}

/* Any thread: a snapshot, exact only when the owner and thieves are still. */
static int64_t pool__deque_len(pool__deque *d) {
    int64_t len = POOL__LOAD(&d->bottom, POOL__RELAXED) - POOL__LOAD(&d->top, POOL__RELAXED);
    return len > 0 ? len : 0;
}

/* ------------------------------------------------------------------------ */
/* Injector: the queue for work posted from outside the pool     >>injector */
/*                                                                          */
/* A Treiber stack whose consumers never pop one node: they take the whole  */
/* stack with one atomic read-modify-write. That is what makes it ABA-safe  */
/* although task memory is reused the moment a task has run:               */
/*  - A push reads head H, links its last node to H, and CASes head from H  */
/*    to its first node. If the CAS succeeds, head *is* H at that instant,  */
/*    so the link "last -> H" is exactly right, whatever happened to H in   */
/*    between (taken, run, freed, reused and pushed again): the CAS only    */
/*    depends on the current value, never on a node's `next` read earlier. */
/*  - A take-all never reads a node before it owns it: the exchange hands   */
/*    it the list atomically, and no other thread can reach those nodes.    */
/* The classic ABA failure needs a pop that reads head->next, then CASes    */
/* head to that stale next, while another pop and a push change the stack   */
/* under it. The one pop here, the high-priority injector's, is made under  */
/* a lock that every remover of that stack holds: no other pop can run      */
/* between its read and its CAS (pool__injector_pop_locked).                */
/*                                                                          */
/* The low bit of head is CLOSED: pool_destroy sets it, after which every   */
/* push fails with ECANCELED, and take-all keeps the bit. Everything pushed */
/* before the close is still taken by someone, so no accepted work is lost. */
/* ------------------------------------------------------------------------ */

#define POOL__INJECTOR_CLOSED ((uintptr_t)1)

typedef struct pool__injector {
    uintptr_t head; /* pool_task * | POOL__INJECTOR_CLOSED */
} pool__injector;

/* Pushes the chain first..last (linked by pool__next). seq_cst: the CAS is
   one half of the store-load pair with a sleeping worker's last look at
   the injector (see the sleep section). */
static int pool__injector_push_chain(pool__injector *q, pool_task *first, pool_task *last,
                                     int *was_empty, int even_if_closed) {
    uintptr_t head = POOL__LOAD(&q->head, POOL__RELAXED); /* validated by the CAS */
    uintptr_t closed;
    do {
        closed = head & POOL__INJECTOR_CLOSED;
        if (closed && !even_if_closed) return ECANCELED;
        last->pool__next = (pool_task *)(head & ~POOL__INJECTOR_CLOSED);
        POOL__CHAOS();
    } while (!POOL__CAS(&q->head, &head, (uintptr_t)first | closed, POOL__SEQ_CST, POOL__RELAXED));
    *was_empty = (head & ~POOL__INJECTOR_CLOSED) == 0;
    return 0;
}

/* Posts new work: fails with ECANCELED once the injector is closed. */
static int pool__injector_push(pool__injector *q, pool_task *first, pool_task *last,
                               int *was_empty) {
    return pool__injector_push_chain(q, first, last, was_empty, 0);
}

/* Gives back work that was accepted earlier; never refused. */
static void pool__injector_repush(pool__injector *q, pool_task *first, pool_task *last) {
    int was_empty;
    pool__injector_push_chain(q, first, last, &was_empty, 1);
}

/* Gives back the chain that starts at `rest`, accepted earlier, if the
   injector is empty: one CAS, and no walk to the chain's last task, whose
   link is NULL already (the CLOSED bit is kept: work accepted earlier is
   taken back after the close too). 0 if the injector holds work.
   seq_cst as in pool__injector_push_chain. */
static int pool__injector_give_back_if_empty(pool__injector *q, pool_task *rest) {
    uintptr_t head = POOL__LOAD(&q->head, POOL__RELAXED); /* validated by the CAS */
    if (head & ~POOL__INJECTOR_CLOSED) return 0;
    POOL__CHAOS();
    return POOL__CAS(&q->head, &head, (uintptr_t)rest | head, POOL__SEQ_CST, POOL__RELAXED);
}

/* Takes every task pushed so far. Acquire pairs with the pushes' CAS: the
   tasks' contents and links are visible. */
static pool_task *pool__injector_take_all(pool__injector *q) {
    if (!(POOL__LOAD(&q->head, POOL__RELAXED) & ~POOL__INJECTOR_CLOSED)) return NULL;
    POOL__CHAOS();
    return (pool_task *)(POOL__FETCH_AND(&q->head, POOL__INJECTOR_CLOSED, POOL__ACQUIRE) &
                         ~POOL__INJECTOR_CLOSED);
}

/* Pops the newest task, for a stack whose removers all hold one lock (the
   high-priority injector: see pool__take_high). Then nothing leaves the
   stack between this load of the head and the CAS, pushes only add above
   it, and a head still equal to `top` still links to the same next: no
   ABA. Acquire, on the load and a failed CAS: pairs with the push's CAS,
   so the task's link and contents are visible. */
static pool_task *pool__injector_pop_locked(pool__injector *q) {
    uintptr_t head = POOL__LOAD(&q->head, POOL__ACQUIRE), closed;
    pool_task *top;
    do {
        closed = head & POOL__INJECTOR_CLOSED;
        top = (pool_task *)(head & ~POOL__INJECTOR_CLOSED);
        if (!top) return NULL;
        POOL__CHAOS();
    } while (!POOL__CAS(&q->head, &head, (uintptr_t)top->pool__next | closed, POOL__ACQUIRE,
                        POOL__ACQUIRE));
    top->pool__next = NULL;
    return top;
}

/* A chain of tasks taken from a stack (newest first, linked by
   pool__next), reversed in place: oldest first. */
static pool_task *pool__oldest_first(pool_task *newest) {
    pool_task *oldest = NULL;
    while (newest) {
        pool_task *next = newest->pool__next;
        newest->pool__next = oldest;
        oldest = newest;
        newest = next;
    }
    return oldest;
}

static void pool__injector_close(pool__injector *q) {
    POOL__FETCH_OR(&q->head, POOL__INJECTOR_CLOSED, POOL__SEQ_CST);
}

/* Relaxed: a hint, for a look that is repeated or made again under a lock. */
static int pool__injector_seen_work(pool__injector *q) {
    return (POOL__LOAD(&q->head, POOL__RELAXED) & ~POOL__INJECTOR_CLOSED) != 0;
}

/* seq_cst: the load half of the sleeper's store-load pair. */
static int pool__injector_has_work(pool__injector *q) {
    return (POOL__LOAD(&q->head, POOL__SEQ_CST) & ~POOL__INJECTOR_CLOSED) != 0;
}

/* ------------------------------------------------------------------------ */
/* The pool and its workers                                          >>pool */
/* ------------------------------------------------------------------------ */

/* A run a worker has under way that other threads may help with: see the
   waiting section. Written by the worker (releases), read by waiters
   (acquires); `run` is 0 while the frame is free. */
typedef struct pool__frame {
    uint64_t run;    /* the run's id, unique on this worker */
    int64_t base;    /* the worker's deque bottom when the run began */
    const void *tag; /* what the run is part of: the join half it is, or its task's scope */
} pool__frame;

/* Runs nested deeper than this on one worker are not recorded: nobody can
   help with them, and their waiters are stood in for instead. */
#define POOL__FRAMES 16

typedef struct pool__worker {
    /* Its joins (see the lazy joins section) and its pool, join.home. First,
       so that the thread-local pointing at it points at the worker (see
       pool__current). Its owner writes it at every join. */
    pool__join_view join;
    pool__deque deque;
    /* The worker's CoreLatch (see the sleep section) and its futex word.
       Other threads write it, so it has a cache line to itself. */
    POOL__ALIGNED uint32_t core_latch;
    /* Set by other threads that want work of this worker's, read at every
       join (see the lazy joins section): a cache line of its own. */
    POOL__ALIGNED uint32_t promote_wanted;
    /* Tasks pinned to this worker (see pool__take_pinned), pushed by any
       thread: a line of its own. */
    POOL__ALIGNED pool__injector pinned;
    /* Written by the worker, read by waiters of other threads. */
    POOL__ALIGNED pool__frame frames[POOL__FRAMES];
    /* ... read by workers as they wake (see pool__spread): the CPU it ran
       on when it last started, woke or took this slot; -1 while it sleeps,
       parks or retires, or nobody holds the slot. */
    int cpu_awake;
    /* Owner-private from here on; the stats are read by pool_stats_get. */
    POOL__ALIGNED uint64_t rng;
    uint64_t runs;          /* runs begun, the last one's id */
    uint64_t run_current;   /* the id of the innermost run under way; 0: none */
    pool_scope *held_scope; /* the scope of the tasks it ran or skipped, not counted done
                               yet... */
    size_t held_count;      /* ... and how many (see pool__hold_done) */
    int64_t run_base;       /* its base: the deque bottom when it began */
    uint32_t run_depth;     /* runs under way (frames[0, min(run_depth, POOL__FRAMES)) are used) */
    uint32_t ticks;         /* searches of the main loop, for its fairness rule */
    uint32_t fair_turn;     /* which of the fairness rule's two looks goes first */
    uint32_t high_streak;   /* high-priority and pinned tasks it took in a row (see
                               pool__find_work) */
    int lone_injected;      /* the task it runs came alone from the injector, and whether
                               to pause after it is still to be decided (see
                               pool__stream_pause) */
    pool_task *pinned_next; /* pinned tasks taken from `pinned`, oldest first, not run yet */
    struct pool__copy_cell *copy_free; /* its cache of copied-spawn cells (see pool__copy_take) */
    uint32_t copy_free_count;          /* ... and their number */
    uint32_t wait_depth;               /* waits nested on its stack */
    const pool_scope *running_scope;   /* the scope whose task it runs innermost */
    int index;
    int cpu; /* pinned to; -1: not pinned. Set by the worker before its first task. */
    pool__thread thread;
    struct {
        uint64_t jobs_run, jobs_stolen, steals_failed, jobs_injected, sleeps, wakeups,
            wakeups_wasted, waits_parked, wait_depth_max, spin_ns, joins_promoted, spawns_inline,
            tasks_cancelled, slot_calls;
    } stats;
} pool__worker;

/* The blocking pool (see its section). Everything is guarded by `lock`
   except the counters in `stats`, which are written under the lock and
   read without it by pool_stats_get. */
typedef struct pool__blocking {
    pool__mutex lock;
    pool__cond work_ready;  /* idle threads wait here */
    pool__cond all_exited;  /* pool_destroy waits here */
    pool_task *head, *tail; /* FIFO of queued tasks */
    uint32_t max_threads;
    uint32_t notified; /* idle threads signalled and not yet awake */
    uint32_t spinning; /* threads that just finished a task and poll the queue */
    uint64_t keep_alive_ns;
    int shutdown;
    int have_last_exited;
    pool__thread last_exited;
    struct {
        uint64_t threads, idle, queued, run, skipped, started, failed;
    } stats;
} pool__blocking;

/* The monitor thread (see pool__monitor_main): retries thread starts that
   failed while the pool is short of threads, and beats the heartbeat.
   Guarded by `lock`. */
typedef struct pool__monitor {
    pool__mutex lock;
    pool__cond wake;
    pool__thread thread;
    int running;         /* the thread was started (written under spawn_lock) */
    int retry;           /* a thread start failed: try again after a backoff */
    int stop;            /* pool_destroy: exit */
    uint32_t heart_idle; /* it found no worker busy and waits (the heartbeat: see lazy joins) */
} pool__monitor;

struct pool {
    /* Read-only after pool_create. */
    int num_threads;
    uint32_t max_workers; /* num_threads plus the spare threads it may start */
    size_t stack_size;
    uint64_t spin_ns;         /* the idle spin budget (pool_config.spin_us) */
    uint64_t heartbeat_ns;    /* pool_config.heartbeat_us; 0: none */
    uint32_t spawn_throttle;  /* pool_config.spawn_throttle as kept: UINT32_MAX is off */
    int throttle_outside;     /* pool_config.spawn_throttle_outside as kept: 0 or 1 */
    uint32_t threads_looping; /* threads that reached their worker loop (see the throttle) */
    char name[16];
    void (*on_thread_start)(void *user, int worker_index);
    void (*on_thread_exit)(void *user, int worker_index);
    void *user;
    /* max_workers entries, filled in order as threads start, then the
       num_slots external slots (see their section), made by pool_create. */
    pool__worker **workers;
    uint32_t num_slots;
    /* p is the default pool (pool__resolve): set before it is published,
       and copied into each worker's join view. */
    int is_default;
    pool__cpu_set allowed; /* every thread of the pool starts with these CPUs */
    int *cpus;             /* pool_config.cpus, copied; NULL: no pinning */
    int num_cpus;
    uint32_t fork_generation; /* pool__fork_generation when created, see pool__inherited */
    pool *inherited_next;     /* in a fork's child: the list of parents' default pools */
#ifdef POOL_TRACE
    struct pool__trace_buffer *trace;
#endif

    /* The sleep counters: see the sleep section. */
    POOL__ALIGNED uint64_t counters;

    POOL__ALIGNED pool__injector injector;
    /* High-priority tasks (see PRIORITIES): looked at first by every
       worker that searches, so a line of its own, read far more often
       than it is written. */
    POOL__ALIGNED pool__injector injector_high;

    /* Read by every post: rarely written, and kept apart from what is. */
    POOL__ALIGNED pool__thread_counts threads;
    uint32_t retired;     /* workers retired above it now */
    uint32_t retire_gen;  /* retired workers block on it; bumped when they may be wanted */
    uint32_t closing;     /* pool_destroy has begun: no new submissions */
    uint32_t terminating; /* workers leave once they find no work */
    uint32_t spawn_closed;
    uint32_t workers_gone; /* pool_destroy joined the workers: waiters run their own work */
    POOL__ALIGNED uint64_t jobs_injected; /* taken from the injectors (pool__count_injected) */
    uint64_t outside_spawns_inline;       /* spawns the throttle ran at once outside the pool */
    uint64_t threads_failed;
    uint64_t spawn_retry_ns;         /* posters start no thread before this time */
    uint32_t spawn_again;            /* a poster found spawn_lock held: see pool__spawn */
    uint64_t outside_wait_depth_max; /* the deepest nesting of waits on p's outside waiters */
    /* The external slots taken (bit k: slot k), and POOL__SLOTS_CLOSED and
       POOL__SLOTS_WAITER (see the external slots section). Written at
       every call from outside: a line of its own. */
    POOL__ALIGNED uint32_t slots_taken;
    pool__mutex spawn_lock;
    pool__mutex help_lock; /* helpers that take their own work from the injector */
    pool__monitor monitor;
    /* Copied spawns' cells (see pool__copy_take): those not in a worker's
       cache, and every slab, under copy_lock. */
    pool__mutex copy_lock;
    struct pool__copy_cell *copy_shared;
    uint32_t copy_shared_count;
    struct pool__copy_slab *copy_slabs;

    POOL__ALIGNED pool__blocking blocking;
};

#ifndef POOL_STATIC
__thread pool__join_view *pool__join_current_v3;
#endif

/* The worker whose join view v is: its first member. */
static pool__worker *pool__worker_of_view(pool__join_view *v) { return (pool__worker *)(void *)v; }

/* The worker running on this thread, or the external slot it works in (see
   their section); NULL on a thread outside every pool. The thread-local
   that says so is the inline join's (see its section in the API). */
POOL__INLINE pool__worker *pool__current(void) {
    pool__join_view *v = pool__join_current_v3;
    return v ? pool__worker_of_view(v) : NULL;
}

/* On a thread outside every pool, the task bodies it runs for a pool (the
   spawn throttle's runs at once, see pool__outside_runs_inline, and tasks
   it helps with), numbered as a worker numbers its runs: `current` is the
   innermost one's, 0 at the thread's own level. `thread` names the thread
   (pool__thread_id). */
typedef struct pool__outside_body {
    uint64_t runs, current, thread;
} pool__outside_body;

static POOL__THREAD_LOCAL pool__outside_body pool__outside_runs;
static uint64_t pool__outside_threads; /* ids given out */

/* A name for the calling thread, as the origin of the scopes it makes
   outside every pool and the owner of its inboxes: taken from a
   process-wide count at its first use, so that no later thread has it
   (an address in the thread's own memory would not do: a new thread may
   get the memory of one that ended). */
static uint64_t pool__thread_id(void) {
    /* Relaxed: only uniqueness matters. */
    if (!pool__outside_runs.thread)
        pool__outside_runs.thread = POOL__FETCH_ADD(&pool__outside_threads, 1, POOL__RELAXED) + 1;
    return pool__outside_runs.thread;
}

/* This thread becomes w's (NULL: no worker's). */
static void pool__set_current(pool__worker *w) { pool__join_current_v3 = w ? &w->join : NULL; }

/* The calling thread's index in its pool, or -1 (see pool_worker_index). */
static int pool__worker_index(void) {
    pool__worker *w = pool__current();
    return w ? w->index : -1;
}

/* External slots: slot k of p is workers[max_workers + k]; its index,
   max_workers + k, is above every thread's. A slot that nobody holds has
   an empty deque and no frame in use, so that thieves and waiters may
   skip it: pool__slots_in_use tells them which to look at. */
#define POOL__MAX_SLOTS 30
#define POOL__SLOTS_MASK (((uint32_t)1 << POOL__MAX_SLOTS) - 1)
#define POOL__SLOTS_CLOSED ((uint32_t)1 << 30) /* pool_destroy began: no new holder */
#define POOL__SLOTS_WAITER ((uint32_t)1 << 31) /* pool_destroy waits for the holders */

#ifndef POOL_EXTERNAL_SLOTS_DEFAULT
#define POOL_EXTERNAL_SLOTS_DEFAULT 4
#endif
#if POOL_EXTERNAL_SLOTS_DEFAULT < 0 || POOL_EXTERNAL_SLOTS_DEFAULT > 30
#error "POOL_EXTERNAL_SLOTS_DEFAULT must be 0 to 30 slots"
#endif

/* Relaxed: a hint. Work a holder queues is published by its deque. A
   searcher may miss a push while the holder is at work, as it may miss a
   worker's (the holder pops it itself); what must not be missed is what a
   holder leaves queued when it parks, and that it posts with a seq_cst
   read-modify-write of the counters (pool__park_begin), after taking the
   slot: a sleeper's announce reads that post or a later value, and then
   sees the slot taken and its deque, or came first, and the post changes
   the JEC under it. */
POOL__INLINE uint32_t pool__slots_in_use(pool *p) {
    return POOL__LOAD(&p->slots_taken, POOL__RELAXED) & POOL__SLOTS_MASK;
}

POOL__INLINE pool__worker *pool__slot(pool *p, uint32_t k) {
    return p->workers[p->max_workers + k];
}

POOL__INLINE int pool__is_slot(const pool__worker *w) {
    return (uint32_t)w->index >= w->join.home->max_workers;
}

/* The worker or slot with index `index`, if it exists: a hint read from a
   job (its thief), which the frames then check. Acquire: pairs with
   pool__spawn's release; the workers below are set. */
static pool__worker *pool__worker_at(pool *p, uint32_t index) {
    if (index < POOL__LOAD(&p->threads.started, POOL__ACQUIRE) ||
        (index >= p->max_workers && index - p->max_workers < p->num_slots))
        return p->workers[index];
    return NULL;
}

/* The pool whose blocking thread this is, NULL on every other thread. */
static POOL__THREAD_LOCAL pool *pool__blocking_home;

/* The entry points of a worker's thread and of the monitor's, defined with
   what they run (the worker loop, the monitor) further down: an inherent
   cycle, since this section starts those threads and what they run starts
   more (pool__spawn). */
static pool__thread_result POOL__THREAD_CALL pool__worker_main(void *arg);
static pool__thread_result POOL__THREAD_CALL pool__monitor_main(void *arg);
/* A worker's join view points at the join's slow paths, in the fork-join
   section. */
static void pool__join_view_init(pool__worker *w, pool *p);

/* A new worker for slot `index` of p, its deque ready; NULL: no memory. */
static pool__worker *pool__worker_new(pool *p, uint32_t index) {
    pool__worker *w = (pool__worker *)pool__alloc_aligned(sizeof *w, p->user);
    if (!w) return NULL;
    memset(w, 0, sizeof *w);
    pool__join_view_init(w, p);
    w->index = (int)index;
    w->cpu = -1;
    w->cpu_awake = -1;
    w->rng = 0x9E3779B97F4A7C15ull * (index + 1);
    if (pool__deque_init(&w->deque, 256, p->user) != 0) {
        pool__free_aligned(w, p->user);
        return NULL;
    }
    return w;
}

static void pool__worker_free(pool *p, pool__worker *w) {
    pool__deque_destroy(&w->deque);
    pool__free_aligned(w, p->user);
}

/* Under spawn_lock, once a worker exists: the monitor thread, if it is not
   running yet (a failed start is tried again with the next worker). */
static void pool__monitor_start(pool *p) {
    if (!p->monitor.running &&
        pool__thread_start(&p->monitor.thread, pool__monitor_main, p, p->stack_size) == 0)
        p->monitor.running = 1;
}

/* A thread start failed: the monitor tries again after a backoff. */
static void pool__monitor_retry(pool *p) {
    pool__mutex_lock(&p->monitor.lock);
    p->monitor.retry = 1;
    pool__cond_signal(&p->monitor.wake);
    pool__mutex_unlock(&p->monitor.lock);
}

/* Starts the next thread of p if it has fewer than it wants: num_threads
   (without `spares`), or with `spares` pool__threads_wanted, which counts
   a spare for each parked worker (see the waiting section); the count is
   read again under the lock, so that a start under way for somebody else
   does not hide a park that came meanwhile. Called when work is posted
   that no awake worker can take, and when a worker parks. A poster never
   blocks on the lock (POOL__LOCK_TRY): whoever holds it is starting a
   thread, which will look for that work and wake or start more if it
   finds plenty, or starts none and looks again after its unlock, as the
   poster leaves it word to (spawn_again). A parker waits for the lock
   (POOL__LOCK_WAIT): the holder may have read the count before the park, and nobody else would
   start the parker's spare. A failed start is counted and tried again
   later, by the monitor thread while the pool is short of threads and by
   the next post; the pool carries on with the threads it has, and with
   none at all the threads that wait for work run their own
   (pool__wait_elsewhere). Returns the number of threads started so far.

   A poster tries again no sooner than POOL__SPAWN_RETRY_NS after a
   failure: a system out of threads fails every thread creation, each one
   costly, and otherwise every join would try one. A waiter whose pool has
   no thread at all, or that parks (POOL__LOCK_WAIT), tries at once. */
#define POOL__SPAWN_RETRY_NS 1000000

/* The threads p should have started: the active count (num_threads unless
   pool_set_active_threads lowered it), and a spare for each worker parked
   in a wait (see the waiting section), up to max_workers. A worker whose
   index is at or above it takes no new work (see the retirement section).
   `mo` is relaxed on a local push's fast path: a stale count there costs
   parallelism for a moment, never a job, since the pusher pops its own
   work. A poster that has just made work visible reads it seq_cst: with
   the seq_cst increment in pool__park_begin and the parker's seq_cst look
   at the injector, that is a store-load pair, so a poster and a worker
   that parks at the same moment cannot both miss each other (the poster
   sees the park and starts a spare, or the parker sees the work). */
POOL__INLINE uint32_t pool__threads_wanted(pool *p, int mo) {
    uint32_t want = POOL__LOAD(&p->threads.active, mo) + POOL__LOAD(&p->threads.parked, mo);
    return want < p->max_workers ? want : p->max_workers;
}

/* How a thread start takes spawn_lock (see pool__spawn), and which count
   of threads it starts up to: num_threads, or with a spare for each
   worker parked in a wait (see pool__threads_wanted). */
typedef enum { POOL__LOCK_TRY, POOL__LOCK_WAIT } pool__lock_wait;
typedef enum { POOL__NO_SPARES, POOL__SPARES } pool__spare_rule;

/* Takes spawn_lock if it is free (returns 1), or leaves word for its
   holder (returns 0). The word comes after a failed try, so the holder
   that failed it may have looked already: the lock is tried once more
   after the word. If that fails too, its holder took the lock after the
   word was left, and looks after its unlock. */
static int pool__spawn_trylock(pool *p) {
    if (pool__mutex_trylock(&p->spawn_lock)) return 1;
    POOL__STORE(&p->spawn_again, 1, POOL__SEQ_CST);
    return pool__mutex_trylock(&p->spawn_lock);
}

/* Under spawn_lock: starts one thread if p has fewer than limit. */
static uint32_t pool__spawn_locked_below(pool *p, uint32_t limit) {
    uint32_t started = p->threads.started;
    pool__worker *w;
    if (!p->spawn_closed && started < limit) {
        w = pool__worker_new(p, started);
        if (w && pool__thread_start(&w->thread, pool__worker_main, w, p->stack_size) == 0) {
            p->workers[started] = w;
            /* Release: a thread that sees the new count (acquire) sees the
               worker's slot and its initialised deque. seq_cst: a paired
               ask that reads the count before this store is before it in
               the seq_cst order, and so before the new worker's first
               promotion, which then sees the asker counted (see "Who
               asks"). */
            POOL__STORE(&p->threads.started, ++started, POOL__SEQ_CST);
            POOL__STORE(&p->spawn_retry_ns, 0, POOL__RELAXED);
            pool__monitor_start(p);
        } else {
            if (w) pool__worker_free(p, w);
            POOL__FETCH_ADD(&p->threads_failed, 1, POOL__RELAXED); /* a statistic */
            POOL__STORE(&p->spawn_retry_ns, pool__now_ns() + POOL__SPAWN_RETRY_NS, POOL__RELAXED);
            if (p->monitor.running) pool__monitor_retry(p);
        }
    }
    return started;
}

/* pool__spawn's work under spawn_lock: starts one thread if p has fewer
   than it should. */
static uint32_t pool__spawn_locked(pool *p, pool__spare_rule spares) {
    /* Relaxed: a count raised later wakes or starts threads itself. A park
       before the previous holder's unlock is seen through the lock; a later
       one is its parker's to start, or the poster's that sets spawn_again. */
    return pool__spawn_locked_below(p, spares == POOL__SPARES
                                           ? pool__threads_wanted(p, POOL__RELAXED)
                                           : POOL__LOAD(&p->threads.active, POOL__RELAXED));
}

/* Unlocks spawn_lock, then does what posters asked for meanwhile (see
   pool__spawn); `started` is the count the holder saw. Returns the count. */
static uint32_t pool__spawn_unlock(pool *p, uint32_t started) {
    for (;;) {
        pool__mutex_unlock(&p->spawn_lock);
        if (!POOL__XCHG(&p->spawn_again, 0, POOL__SEQ_CST)) return started;
        /* Relaxed, as in pool__spawn. A start that failed is the monitor's
           to retry. */
        if (POOL__LOAD(&p->spawn_retry_ns, POOL__RELAXED)) return started;
        if (!pool__spawn_trylock(p)) return started;
        started = pool__spawn_locked(p, POOL__SPARES); /* a poster's limit */
    }
}

/* Tests see a thread about to block on the spawn lock that they hold
   (tests/test_waiting.c). */
#ifndef POOL__SPAWN_LOCK_WAITING
#define POOL__SPAWN_LOCK_WAITING(p) ((void)0)
#endif

/* A poster that finds the lock held leaves spawn_again set for the holder,
   which looks again once it has unlocked: the holder may have read the
   count of parked workers before a park that made the poster's work need
   a thread, and would start none. Every holder that starts threads looks
   after its unlock, so a poster's failed trylock always has somebody
   behind it (see pool__spawn_trylock). seq_cst, the store and the
   exchange: a holder's exchange comes after its unlock, and either sees
   the word or comes before it; then the poster's second try finds the
   lock free, or held by a later holder, which looks in turn.
   The lock's other holders are a new worker's start-up, which looks for
   work itself, and pool_destroy. */
static uint32_t pool__spawn(pool *p, pool__lock_wait wait_for_lock, pool__spare_rule spares) {
    uint32_t started, limit;
    uint64_t retry;
    /* Relaxed: a stale value only costs one extra trip to the lock. */
    started = POOL__LOAD(&p->threads.started, POOL__RELAXED);
    /* seq_cst: see pool__threads_wanted. */
    limit = spares == POOL__SPARES ? pool__threads_wanted(p, POOL__SEQ_CST)
                                   : POOL__LOAD(&p->threads.active, POOL__RELAXED);
    if (started >= limit) return started;
    /* Relaxed: a hint; the lock below decides. While the pool has no
       thread at all every post tries: nobody else would run its work. */
    retry = POOL__LOAD(&p->spawn_retry_ns, POOL__RELAXED);
    if (wait_for_lock == POOL__LOCK_TRY && started && retry && pool__now_ns() < retry)
        return started;
    if (wait_for_lock == POOL__LOCK_WAIT) {
        POOL__SPAWN_LOCK_WAITING(p);
        pool__mutex_lock(&p->spawn_lock);
    } else if (!pool__spawn_trylock(p)) return started;
    return pool__spawn_unlock(p, pool__spawn_locked(p, spares));
}

/* Starts threads until worker `index` has one, for a task pinned to it,
   whatever the count wants: a worker above it retires at once and runs its
   pinned tasks there. 0; EAGAIN if a start failed; ECANCELED once
   pool_destroy stopped thread starts. */
static int pool__spawn_through(pool *p, uint32_t index) {
    uint32_t started;
    int err = 0;
    /* Acquire: pairs with pool__spawn_locked_below's release; the worker's
       slot is visible. */
    if (POOL__LOAD(&p->threads.started, POOL__ACQUIRE) > index) return 0;
    pool__mutex_lock(&p->spawn_lock);
    started = p->threads.started;
    while (started <= index && !err) {
        uint32_t before = started;
        if (p->spawn_closed) err = ECANCELED;
        else if ((started = pool__spawn_locked_below(p, index + 1)) == before) err = EAGAIN;
    }
    pool__spawn_unlock(p, started);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Tracing (POOL_TRACE)                                           >>tracing */
/*                                                                          */
/* Each thread that does something in a pool writes timestamped events to  */
/* a lane of its own: worker i to lane i, blocking threads and threads      */
/* outside the pool to one of POOL__TRACE_SHARED_LANES lanes they claim on  */
/* first use. A lane is a ring of POOL_TRACE_EVENTS events with one writer, */
/* so recording is a few plain stores: the oldest events are overwritten.   */
/* pool_trace_write may run while the pool works. It reads a lane's head,   */
/* copies the ring, reads the head again, and keeps only the events the     */
/* writer cannot have overwritten meanwhile (a seqlock reader, per lane).   */
/* Without POOL_TRACE none of this is compiled and POOL__TRACE is nothing.  */
/* ------------------------------------------------------------------------ */

enum {
    POOL__EV_JOB_BEGIN,
    POOL__EV_JOB_END,
    POOL__EV_STEAL, /* arg: the victim worker */
    POOL__EV_SLEEP_BEGIN,
    POOL__EV_SLEEP_END,
    POOL__EV_WAKE,   /* arg: the worker woken */
    POOL__EV_INJECT, /* arg: how many tasks */
    POOL__EV_BLOCKING_BEGIN,
    POOL__EV_BLOCKING_END
};

#ifdef POOL_TRACE
#ifndef POOL_TRACE_EVENTS
#define POOL_TRACE_EVENTS 65536
#endif
#if POOL_TRACE_EVENTS < 2 || (POOL_TRACE_EVENTS & (POOL_TRACE_EVENTS - 1)) != 0
#error "pool.h: POOL_TRACE_EVENTS must be a power of two"
#endif
#define POOL__TRACE_SHARED_LANES 64

typedef struct pool__trace_event {
    uint64_t ts; /* ns since the pool was created */
    uint32_t kind, arg;
} pool__trace_event;

typedef struct pool__trace_lane {
    POOL__ALIGNED uint64_t head; /* events ever written */
    pool__trace_event *events;   /* POOL_TRACE_EVENTS of them; NULL until first use */
    uintptr_t owner;             /* shared lanes: the claiming thread, 0 when free */
    int blocking;                /* shared lanes: claimed by a blocking thread */
} pool__trace_lane;

struct pool__trace_buffer {
    uint64_t start_ns;
    uint64_t id; /* tells a pool from a later one at the same address */
    int lanes;   /* pool__trace_own_lanes + POOL__TRACE_SHARED_LANES */
    pool__trace_lane lane[1];
};

static uint64_t pool__trace_next_id;

/* This thread's shared lane for the pool it used last. */
static POOL__THREAD_LOCAL struct {
    uint64_t id;
    pool__trace_lane *lane;
} pool__trace_cache;

/* A lane for each worker and external slot (its index), then the shared ones. */
static int pool__trace_own_lanes(const pool *p) { return (int)(p->max_workers + p->num_slots); }

static int pool__trace_init(pool *p) {
    int lanes = pool__trace_own_lanes(p) + POOL__TRACE_SHARED_LANES;
    size_t size =
        sizeof(struct pool__trace_buffer) + (size_t)(lanes - 1) * sizeof(pool__trace_lane);
    p->trace = (struct pool__trace_buffer *)pool__alloc_aligned(size, p->user);
    if (!p->trace) return ENOMEM;
    memset(p->trace, 0, size);
    p->trace->lanes = lanes;
    p->trace->start_ns = pool__now_ns();
    /* Relaxed: only uniqueness matters. */
    p->trace->id = POOL__FETCH_ADD(&pool__trace_next_id, 1, POOL__RELAXED) + 1;
    return 0;
}

static void pool__trace_free(pool *p) {
    int i;
    if (!p->trace) return;
    for (i = 0; i < p->trace->lanes; i++) pool__free(p->trace->lane[i].events, p->user);
    pool__free_aligned(p->trace, p->user);
}

/* The owner allocates its lane's ring before its first event. Release:
   pairs with the acquire in pool__trace_copy_lane. */
static int pool__trace_lane_ready(pool *p, pool__trace_lane *lane) {
    pool__trace_event *ev;
    if (POOL__LOAD(&lane->events, POOL__RELAXED)) return 1; /* the owner wrote it */
    ev = (pool__trace_event *)pool__alloc(POOL_TRACE_EVENTS * sizeof *ev, p->user);
    if (!ev) return 0;
    memset(ev, 0, POOL_TRACE_EVENTS * sizeof *ev);
    POOL__STORE(&lane->events, ev, POOL__RELEASE);
    return 1;
}

/* A shared lane for this thread: the one it owns, else a free one it
   claims. NULL if all are taken: its events are dropped, and the answer
   is cached too, so that such a thread does not rescan (and write to)
   the lanes at every event. */
static pool__trace_lane *pool__trace_shared_lane(pool *p) {
    struct pool__trace_buffer *tr = p->trace;
    uintptr_t me = (uintptr_t)&pool__trace_cache; /* unique among live threads */
    pool__trace_lane *found = NULL;
    int blocking = pool__blocking_home == p, i;
    if (pool__trace_cache.id == tr->id) return pool__trace_cache.lane;
    /* Acquire, here and in the claim: the previous owner's events (its
       release in pool__trace_release_lane) come before ours. */
    for (i = pool__trace_own_lanes(p); i < tr->lanes && !found; i++)
        if (POOL__LOAD(&tr->lane[i].owner, POOL__ACQUIRE) == me &&
            POOL__LOAD(&tr->lane[i].blocking, POOL__RELAXED) == blocking)
            found = &tr->lane[i];
    for (i = pool__trace_own_lanes(p); i < tr->lanes && !found; i++) {
        uintptr_t owner = 0;
        if (POOL__LOAD(&tr->lane[i].owner, POOL__RELAXED) == 0 && /* a hint; the CAS decides */
            POOL__CAS(&tr->lane[i].owner, &owner, me, POOL__ACQUIRE, POOL__RELAXED)) {
            found = &tr->lane[i];
            POOL__STORE(&found->blocking, blocking, POOL__RELAXED); /* read by the writer */
        }
    }
    pool__trace_cache.id = tr->id;
    pool__trace_cache.lane = found;
    return found;
}

/* A blocking thread that exits frees its lane for the next one. Release:
   pairs with the acquire of the next claim. */
static void pool__trace_release_lane(pool *p) {
    uintptr_t me = (uintptr_t)&pool__trace_cache;
    int i;
    pool__trace_cache.id = 0;
    for (i = pool__trace_own_lanes(p); i < p->trace->lanes; i++)
        if (POOL__LOAD(&p->trace->lane[i].owner, POOL__RELAXED) == me) /* ours: no race */
            POOL__STORE(&p->trace->lane[i].owner, 0, POOL__RELEASE);
}

/* Records one event in the calling thread's lane of p. The slot's stores
   are releases: a reader whose (acquire) load sees one of them also sees
   the store of head that came before it, which tells it that the slot
   was being reused (see pool__trace_copy_lane). The release store of head
   publishes the event. */
static void pool__trace(pool *p, uint32_t kind, uint32_t arg) {
    pool__worker *w = pool__current();
    pool__trace_lane *lane;
    pool__trace_event *e;
    uint64_t head;
    if (!p->trace) return;
    lane = w && w->join.home == p ? &p->trace->lane[w->index] : pool__trace_shared_lane(p);
    if (!lane || !pool__trace_lane_ready(p, lane)) return;
    head = POOL__LOAD(&lane->head, POOL__RELAXED); /* only this thread writes it */
    e = &lane->events[head & (POOL_TRACE_EVENTS - 1)];
    POOL__STORE(&e->ts, pool__now_ns() - p->trace->start_ns, POOL__RELEASE);
    POOL__STORE(&e->kind, kind, POOL__RELEASE);
    POOL__STORE(&e->arg, arg, POOL__RELEASE);
    POOL__STORE(&lane->head, head + 1, POOL__RELEASE);
}
#define POOL__TRACE(p, kind, arg) pool__trace((p), (kind), (uint32_t)(arg))
#else
#define POOL__TRACE(p, kind, arg) ((void)(p))
#endif

/* ------------------------------------------------------------------------ */
/* Sleep: the counters word, the CoreLatch, and progressive sleep   >>sleep */
/*                                                                          */
/* The protocol of a jobs event counter with a 4-state latch per worker     */
/* (README's prior art names where it comes from); what follows is the      */
/* part a reader of this code needs.                                        */
/*                                                                          */
/* p->counters packs three fields so one atomic access reads them all:      */
/*    bits  0-15  sleeping   workers registered as blocked (or about to)    */
/*    bits 16-31  inactive   workers looking for work, sleeping included    */
/*    bits 32-63  JEC        jobs event counter                             */
/* inactive - sleeping is the number of workers awake and searching: they   */
/* will find new work by themselves, so a poster wakes sleepers only for    */
/* the jobs those searchers cannot absorb.                                  */
/*                                                                          */
/* JEC. Even means "sleepy": some worker announced it may sleep and no      */
/* work has been posted since. Odd means "active". A worker about to sleep  */
/* makes it even (if odd) and remembers the value; every post makes it odd  */
/* (if even). Before it registers as sleeping, the worker checks the JEC    */
/* is still the value it remembered: if any post came after its announce,   */
/* it does not sleep but searches again. A post that came before the        */
/* announce is found by the search that follows the announce.               */
/*                                                                          */
/* CoreLatch. Each worker has a 4-state latch, which is also the word it    */
/* blocks on:                                                               */
/*    UNSET    --(worker: about to sleep)-->  SLEEPY                        */
/*    SLEEPY   --(worker: registered)------>  SLEEPING  --futex wait--      */
/*    any      --(a waker)----------------->  SET                           */
/*    SET      --(worker: back to work)---->  UNSET                         */
/* A waker that finds SLEEPY sets SET, and the worker's own SLEEPY ->       */
/* SLEEPING CAS then fails: the wake-up cannot fall between the worker's    */
/* last check and its sleep (the "tickle-then-get-sleepy" race). A latch    */
/* left SET by a waker while the worker was busy only costs the worker one  */
/* more search before it sleeps.                                            */
/*                                                                          */
/* Who un-counts a sleeper. Exactly one thread removes a registered worker  */
/* from `sleeping`: the waker that moves its latch SLEEPING -> SET, or the  */
/* worker itself if it gives up sleeping while still SLEEPY (a waker that   */
/* set SLEEPY -> SET leaves the count to it). So a poster reading the       */
/* counters never counts a worker that is already awake as asleep, and     */
/* never wakes the same sleeper twice.                                      */
/*                                                                          */
/* Injected work. The store-load pair that rules out a lost wake-up for     */
/* work from outside the pool:                                              */
/*    poster:  CAS injector head (seq_cst);  read counters (seq_cst)        */
/*    sleeper: CAS sleeping += 1 (seq_cst);  read injector head (seq_cst)   */
/* In the single total order of seq_cst operations one of the two reads     */
/* comes last and sees the other thread's write: the poster sees the        */
/* sleeper and wakes it, or the sleeper sees the work and does not sleep.   */
/* Work pushed on a worker's own deque needs no such pair: its owner is     */
/* awake, and takes the work back itself if nobody steals it. The pool has  */
/* two injectors, one per priority; each is one instance of the pair (the   */
/* sleeper reads both heads after its CAS, a poster pushes to one).         */
/* ------------------------------------------------------------------------ */

#define POOL__ONE_SLEEPING ((uint64_t)1)
#define POOL__ONE_INACTIVE ((uint64_t)1 << 16)
#define POOL__ONE_JEC ((uint64_t)1 << 32)

enum { POOL__CORE_UNSET = 0, POOL__CORE_SLEEPY = 1, POOL__CORE_SLEEPING = 2, POOL__CORE_SET = 3 };

/* Progressive sleep: this many fruitless searches, each followed by a
   yield, before a worker announces it is sleepy; one more search after
   the announce, then it blocks. (The first few of them watch the queues
   for a moment before the yield, and search again at once if work shows:
   see pool__idle_watch in the worker loop section.) */
#define POOL__ROUNDS_UNTIL_SLEEPY 32

/* The spin budget (pool_config.spin_us) comes first in an idle spell:
   searches for that long, each followed by a watch of the queues while
   no outside thread works in an external slot, by a yield while one does
   (see pool__spin_watch in the worker loop section), while the rounds
   stay at 0. The worker stays counted as a searcher, not a sleeper, so posters
   neither wake it nor need to: its next search finds their work. */
#define POOL__MAX_SPIN_US 1000000

typedef struct pool__idle {
    unsigned rounds;
    uint32_t jec;       /* the JEC when this worker announced it was sleepy */
    int woken;          /* woken from the kernel and has not run a task since */
    int spin_spent;     /* this spell's spin budget ran out */
    uint64_t spin_from; /* when the spin budget of this spell began; 0: not spinning */
} pool__idle;

static uint32_t pool__sleeping_of(uint64_t c) { return (uint32_t)(c & 0xffff); }
static uint32_t pool__inactive_of(uint64_t c) { return (uint32_t)((c >> 16) & 0xffff); }
static uint32_t pool__jec_of(uint64_t c) { return (uint32_t)(c >> 32); }

/* Poster: make the JEC odd if it is even. Returns the counters after.
   seq_cst: the poster's half of the injected-work pair above. */
POOL__INLINE uint64_t pool__jec_post_from(pool *p, uint64_t c) {
    while (!(pool__jec_of(c) & 1))
        if (POOL__CAS(&p->counters, &c, c + POOL__ONE_JEC, POOL__SEQ_CST, POOL__SEQ_CST))
            return c + POOL__ONE_JEC;
    return c;
}

POOL__INLINE uint64_t pool__jec_post(pool *p) {
    return pool__jec_post_from(p, POOL__LOAD(&p->counters, POOL__SEQ_CST));
}

/* Whether either injector of p holds work: the sleeper's read in the
   injected-work pair (seq_cst, in pool__injector_has_work). */
static int pool__injected_work(pool *p) {
    return pool__injector_has_work(&p->injector_high) || pool__injector_has_work(&p->injector);
}

static int pool__priority_valid(pool_priority priority) {
    return priority == POOL_PRIORITY_NORMAL || priority == POOL_PRIORITY_HIGH;
}

static pool__injector *pool__injector_of(pool *p, pool_priority priority) {
    return priority == POOL_PRIORITY_HIGH ? &p->injector_high : &p->injector;
}

/* Sleeper: make the JEC even if it is odd, and return it. seq_cst: the
   search that follows must see every job posted before this point. */
static uint32_t pool__jec_announce_sleepy(pool *p) {
    uint64_t c = POOL__LOAD(&p->counters, POOL__SEQ_CST);
    while (pool__jec_of(c) & 1)
        if (POOL__CAS(&p->counters, &c, c + POOL__ONE_JEC, POOL__SEQ_CST, POOL__SEQ_CST))
            return pool__jec_of(c + POOL__ONE_JEC);
    return pool__jec_of(c);
}

/* Relaxed: read-modify-writes keep the counts exact, and no data is
   published through them; the pairing above is carried by the JEC and
   the sleeping registration, which are seq_cst. */
static void pool__sub_sleeping(pool *p) {
    uint64_t before = POOL__FETCH_SUB(&p->counters, POOL__ONE_SLEEPING, POOL__RELAXED);
    POOL__INVARIANT(pool__sleeping_of(before) != 0); /* counted once, un-counted once */
    (void)before;
}

/* A waker found w asleep or about to sleep: make it search again. */
static int pool__wake_sleeper(pool *p, pool__worker *w) {
    uint32_t s = POOL__LOAD(&w->core_latch, POOL__RELAXED); /* validated by the CAS */
    POOL__CHAOS();
    while (s == POOL__CORE_SLEEPY || s == POOL__CORE_SLEEPING) {
        /* Release: the woken worker's reset (acquire) sees the work that
           was posted before this wake-up. */
        if (POOL__CAS(&w->core_latch, &s, POOL__CORE_SET, POOL__RELEASE, POOL__RELAXED)) {
            if (s == POOL__CORE_SLEEPING) {
                pool__sub_sleeping(p);
                POOL__TRACE(p, POOL__EV_WAKE, w->index);
                pool__wake_one(&w->core_latch);
            }
            return 1;
        }
    }
    return 0;
}

/* Wakes up to n sleeping workers; returns how many it woke. */
static uint32_t pool__wake_any(pool *p, uint32_t n) {
    /* Acquire: pairs with the release in pool__spawn. */
    uint32_t started = POOL__LOAD(&p->threads.started, POOL__ACQUIRE), i, woken = 0;
    for (i = 0; i < started && woken < n; i++) woken += pool__wake_sleeper(p, p->workers[i]);
    return woken;
}

/* Wakes w whatever it is doing, for a latch it waits on or for shutdown.
   Release: w's reset (acquire) sees what the caller wrote before. */
static void pool__notify_worker(pool__worker *w) {
    if (POOL__XCHG(&w->core_latch, POOL__CORE_SET, POOL__RELEASE) == POOL__CORE_SLEEPING) {
        pool__sub_sleeping(w->join.home);
        POOL__TRACE(w->join.home, POOL__EV_WAKE, w->index);
        pool__wake_one(&w->core_latch);
    }
}

/* n jobs were just made visible; c is the counters word after the post.
   The rule for how many sleepers to wake: if the queue already had work,
   the awake searchers are evidently not keeping up, so wake one sleeper
   per job; if it was empty, the awake searchers will take the first jobs,
   so wake sleepers only for the rest. If that still leaves jobs nobody
   can take, start another thread (wait_for_lock: see pool__spawn).
   Returns how many awake idle workers it counted on to take the jobs. */
POOL__COLD uint32_t pool__wake_for_jobs(pool *p, uint64_t c, uint32_t n, int queue_was_empty,
                                        pool__lock_wait wait_for_lock) {
    uint32_t sleeping = pool__sleeping_of(c), inactive = pool__inactive_of(c);
    /* A woken worker may leave idle before its waker un-counts it asleep,
       so for a moment sleeping can exceed inactive. */
    uint32_t awake_idle = inactive > sleeping ? inactive - sleeping : 0;
    uint32_t to_wake = 0, woken = 0;
    if (!queue_was_empty) to_wake = n;
    else if (awake_idle < n) to_wake = n - awake_idle;
    if (to_wake > sleeping) to_wake = sleeping;
    if (to_wake) woken = pool__wake_any(p, to_wake);
    if (awake_idle + woken < n) pool__spawn(p, wait_for_lock, POOL__SPARES);
    return awake_idle;
}

/* n tasks were just pushed onto the injector: posts the jobs event and
   wakes workers for them; returns what pool__wake_for_jobs does. */
static uint32_t pool__announce_injected(pool *p, size_t n, int queue_was_empty) {
    POOL__CHAOS();
    return pool__wake_for_jobs(p, pool__jec_post(p), n > 65535 ? 65535 : (uint32_t)n,
                               queue_was_empty, POOL__LOCK_TRY);
}

/* Work posted to the injector: new (refused once it is closed), or
   accepted earlier and given back (never refused). */
typedef enum { POOL__INJECT_NEW, POOL__INJECT_ACCEPTED } pool__inject_kind;

/* Injects the chain first..last of n tasks into q, one of p's two
   injectors, and wakes workers for them. ECANCELED if q is closed, unless
   the work was accepted earlier. *awake (if not NULL): whether an awake
   worker was there to take the work, or it waits for a thread to wake up
   or start. */
static int pool__inject(pool *p, pool__injector *q, pool_task *first, pool_task *last, size_t n,
                        pool__inject_kind kind, int *awake) {
    int was_empty = 0; /* given-back work: others were already looking */
    uint32_t awake_idle;
    if (kind == POOL__INJECT_ACCEPTED) pool__injector_repush(q, first, last);
    else if (pool__injector_push(q, first, last, &was_empty) != 0) return ECANCELED;
    POOL__TRACE(p, POOL__EV_INJECT, n > UINT32_MAX ? UINT32_MAX : n);
    awake_idle = pool__announce_injected(p, n, was_empty);
    if (awake) *awake = awake_idle > 0;
    return 0;
}

/* Injected tasks were moved onto w's own deque. They were promised the
   injected-work pair, which the deque's release store cannot give: the
   read-modify-write here (seq_cst) is the poster's store-load barrier. A
   sleeper's announce reads this value or a later one, and so sees the
   moved tasks; or it came first, and then the post changes the JEC under
   the sleeper's feet. wait_for_lock: see pool__spawn. */
static void pool__new_moved_jobs(pool__worker *w, uint32_t n, pool__lock_wait wait_for_lock) {
    pool *p = w->join.home;
    uint64_t c = pool__jec_post_from(p, POOL__FETCH_ADD(&p->counters, 0, POOL__SEQ_CST));
    pool__wake_for_jobs(p, c, n, pool__deque_len(&w->deque) <= (int64_t)n, wait_for_lock);
}

/* n tasks were pushed onto w's own deque. This runs on every eager push
   (a task's outermost join, a split, a scope spawn), so the common case, nobody asleep and every
   thread wanted started, returns after three loads (threads.started and .parked share a cache
   line); whether the deque was empty is only worked out when it matters. Relaxed threads.started: a
   stale count only sends us down the slow path. There is no store-load pair here: the push's
   release store of bottom and the counters load in pool__jec_post may be reordered (store
   buffering, on x86 too), so a worker going to sleep at that moment can miss the new job. That
   costs parallelism, never the job: w is awake and pops it itself, and the next post wakes the
   sleeper. */
POOL__INLINE void pool__new_local_jobs(pool__worker *w, uint32_t n) {
    pool *p = w->join.home;
    uint64_t c = pool__jec_post(p);
    if (pool__sleeping_of(c) == 0 &&
        POOL__LOAD(&p->threads.started, POOL__RELAXED) >= pool__threads_wanted(p, POOL__RELAXED))
        return;
    pool__wake_for_jobs(p, c, n, pool__deque_len(&w->deque) <= (int64_t)n, POOL__LOCK_TRY);
}

/* Back to UNSET, consuming a SET if there is one. Acquire pairs with the
   release of whoever set it, so the search that follows sees what they
   announced (a finished job, shutdown, new work). An exchange, not a
   store: a store could overwrite a SET without synchronising with it. */
static void pool__core_latch_reset(pool__worker *w) {
    POOL__XCHG(&w->core_latch, POOL__CORE_UNSET, POOL__ACQUIRE);
}

/* Spreading woken workers. A kernel may run a woken thread on the CPU of
   the thread that woke it while another CPU idles, and leave it there for
   milliseconds: Linux does so when its recent load is high, which a
   burst of work leaves behind for tens of milliseconds (it then no longer
   looks for an idle CPU, and does not move a thread that ran a moment
   ago). A worker woken by a busy worker, or by a caller working in an
   external slot, then shares that thread's CPU, and the two run at half
   speed each, as if the pool had one thread fewer, while a CPU they may
   use has nothing to run. So each thread of the pool notes in cpu_awake
   the CPU it ran on when it last woke: a worker as it starts, wakes from
   its sleep, a park or retirement, a caller as it takes a slot or wakes
   from a park in it; -1 as it sleeps, parks, retires or gives the slot
   back (a thread parked in a wait frees its CPU for the worker that
   stands in for it). A worker that wakes on a CPU that another one noted
   moves itself to one of its allowed CPUs that none noted, if there is
   one: its affinity narrowed to that CPU, which the kernel obeys at once,
   then restored. Workers woken at once onto one CPU pick among the free
   CPUs by their index, so that they spread when their indices differ
   modulo the number of free CPUs, and note the one they pick before they
   move.
   The notes are hints (relaxed), and stale once the kernel moves a
   thread on its own: a wrong one costs speed for a while, never
   correctness, and the kernel stays free to move any thread later. The
   affinity is read just before the move and written back after it: a
   change that another thread makes to it in between is lost, and if the
   kernel refuses both it and the pool's set (the CPUs changed meanwhile),
   the worker stays on its one CPU, where later wake-ups leave it.
   Nothing moves in a pool whose workers are pinned (config.cpus), nor a
   worker whose affinity is one CPU (pinned by the user's thread hook),
   nor one that wakes to end the pool, nor a caller (its thread is the
   user's). Linux only: elsewhere the kernel places threads on its own. */
#if defined(__linux__)

/* Where the caller runs (tests replace it with a CPU of their choice). */
#ifndef POOL__CURRENT_CPU
#define POOL__CURRENT_CPU() pool__current_cpu()
#endif

#define POOL__CPU_WORDS (1024 / (8 * sizeof(unsigned long)))
#define POOL__CPU_WORD_BITS (8 * sizeof(unsigned long))

static void pool__note_cpu(pool__worker *w, int cpu) {
    POOL__STORE(&w->cpu_awake, cpu, POOL__RELAXED); /* a hint, see above */
}

/* The CPUs that the awake threads of p other than w noted, set in taken. */
static void pool__cpus_awake(pool *p, const pool__worker *w, unsigned long *taken) {
    /* Acquire: pairs with pool__spawn's release; the workers below are set. */
    uint32_t n = POOL__LOAD(&p->threads.started, POOL__ACQUIRE), slots = pool__slots_in_use(p), i;
    for (i = 0; i < n + p->num_slots; i++) {
        pool__worker *v;
        int cpu;
        if (i >= n && !(slots >> (i - n) & 1)) continue;
        v = i < n ? p->workers[i] : pool__slot(p, i - n);
        cpu = v == w ? -1 : POOL__LOAD(&v->cpu_awake, POOL__RELAXED);
        if (cpu >= 0)
            taken[(size_t)cpu / POOL__CPU_WORD_BITS] |= 1ul << (cpu % POOL__CPU_WORD_BITS);
    }
}

/* The CPUs of `set` that no thread in `taken` noted, in free; returns how
   many. */
static int pool__cpus_free(const pool__cpu_set *set, const unsigned long *taken,
                           unsigned long *free) {
    size_t k;
    int count = 0;
    for (k = 0; k < POOL__CPU_WORDS; k++) {
        free[k] = set->has_bits ? set->bits[k] & ~taken[k] : 0;
        count += __builtin_popcountl(free[k]);
    }
    return count;
}

/* The i-th CPU set in free (i < their number). */
static int pool__cpu_nth(const unsigned long *free, int i) {
    size_t k;
    for (k = 0; k < POOL__CPU_WORDS; k++) {
        unsigned long word = free[k];
        int here = __builtin_popcountl(word);
        if (i >= here) {
            i -= here;
            continue;
        }
        while (i-- > 0) word &= word - 1; /* drop the lowest bits before it */
        return (int)(k * POOL__CPU_WORD_BITS) + __builtin_ctzl(word);
    }
    return -1;
}

/* w started, or woke from its sleep, a park or retirement: notes its CPU,
   and moves if another thread of its pool noted it (see above). The
   pool's CPUs are looked at before the thread's own affinity is asked
   for: where every CPU has a thread, with more workers than CPUs, a
   wake-up costs no system call more. The notes are read again after that
   system call, which a worker woken at the same time may have used to
   note its pick. */
static void pool__spread(pool__worker *w) {
    pool *p = w->join.home;
    unsigned long taken[POOL__CPU_WORDS], free[POOL__CPU_WORDS];
    pool__cpu_set own;
    int cpu = POOL__CURRENT_CPU(), count;
    pool__note_cpu(w, cpu);
    /* Relaxed terminating: a hint; a move at the end only costs time. */
    if (cpu < 0 || p->cpus || POOL__LOAD(&p->terminating, POOL__RELAXED)) return;
    memset(taken, 0, sizeof taken);
    pool__cpus_awake(p, w, taken);
    if (!(taken[(size_t)cpu / POOL__CPU_WORD_BITS] >> (cpu % POOL__CPU_WORD_BITS) & 1) ||
        pool__cpus_free(&p->allowed, taken, free) == 0)
        return;
    pool__cpu_set_get(&own);
    pool__cpus_awake(p, w, taken);
    if ((count = pool__cpus_free(&own, taken, free)) == 0) return;
    cpu = pool__cpu_nth(free, w->index % count);
    pool__note_cpu(w, cpu); /* before the move: a worker woken with w sees it taken */
    if (pool__pin_current_thread(cpu) != 0) pool__note_cpu(w, POOL__CURRENT_CPU());
    /* Restored; if the kernel refuses the mask now (its CPUs changed), the
       pool's, so that the worker is not left on one CPU for good. */
    if (pool__cpu_set_apply(&own) != 0) pool__cpu_set_apply(&p->allowed);
}
#else
static void pool__note_cpu(pool__worker *w, int cpu) { (void)w, (void)cpu; }
static void pool__spread(pool__worker *w) { (void)w; }
#ifndef POOL__CURRENT_CPU
#define POOL__CURRENT_CPU() (-1)
#endif
#endif

/* Asking for promotions: sets promote_wanted, which every join of its
   owner reads (see "Who asks" in the lazy joins section), unless it is set
   already (a load first: a store would take the line from its owner's
   cache for nothing). A hint (a search, a waiter, the heartbeat) is
   relaxed: what it leads to is published by the deque. Where the pool has
   just come to want a thread (a sleeper, a parker, a raised count) the
   load is seq_cst, after the asker's seq_cst change of the counts: the
   store-load pair with pool__promote's exchange, which then reads the
   counts. The load, not the store, is what pairs: if it reads 0, the 1
   stored after it is read by the owner's next exchange, which then sees
   the counts; if it reads 1, the exchange that clears that 1 comes after
   the load in the seq_cst order (the load is coherence-ordered before it:
   the rule of C++20 and C23, which every hardware mapping of C11's
   seq_cst gives). So the store is relaxed. The slots in
   use are read seq_cst for such an ask: a caller that takes a slot (a
   seq_cst read-modify-write) and then pushes, announcing with a seq_cst
   load of the counters, either is seen here, or its announce sees the
   asker's count. */
typedef enum { POOL__ASK_HINT, POOL__ASK_PAIRED } pool__ask;

static void pool__want_promotion(pool__worker *v, pool__ask ask) {
    uint32_t set = ask == POOL__ASK_PAIRED ? POOL__LOAD(&v->promote_wanted, POOL__SEQ_CST)
                                           : POOL__LOAD(&v->promote_wanted, POOL__RELAXED);
    if (!set) POOL__STORE(&v->promote_wanted, 1, POOL__RELAXED);
}

/* ... on every worker of p and every external slot in use but `except`. */
static void pool__want_promotions_of(pool *p, const pool__worker *except, pool__ask ask) {
    /* Acquire: pairs with pool__spawn's release; the workers below are set.
       seq_cst for a paired ask: a worker it does not count yet asks itself
       once it starts (pool__worker_main), and the seq_cst store in
       pool__spawn_locked_below puts that start after this load; a slot
       taken after this read asks itself too (pool__slot_take). */
    uint32_t n = ask == POOL__ASK_PAIRED ? POOL__LOAD(&p->threads.started, POOL__SEQ_CST)
                                         : POOL__LOAD(&p->threads.started, POOL__ACQUIRE),
             i;
    uint32_t slots = ask == POOL__ASK_PAIRED
                         ? POOL__LOAD(&p->slots_taken, POOL__SEQ_CST) & POOL__SLOTS_MASK
                         : pool__slots_in_use(p);
    for (i = 0; i < n; i++)
        if (p->workers[i] != except) pool__want_promotion(p->workers[i], ask);
    for (i = 0; slots >> i; i++)
        if ((slots >> i & 1) && pool__slot(p, i) != except)
            pool__want_promotion(pool__slot(p, i), ask);
}

/* ... on every other worker of w's pool, and the slots in use. */
static void pool__want_promotions(pool__worker *w, pool__ask ask) {
    pool__want_promotions_of(w->join.home, w, ask);
}

/* The last step of progressive sleep. Returns when w should search again. */
static void pool__sleep(pool__worker *w, pool__idle *idle) {
    pool *p = w->join.home;
    uint32_t s = POOL__CORE_UNSET;
    uint64_t c;
    POOL__INVARIANT(w->held_count == 0); /* a wait for them would never end */
    /* Relaxed: a SET that beats this CAS is consumed by the reset below,
       one that comes after it makes the SLEEPY -> SLEEPING CAS fail. */
    if (!POOL__CAS(&w->core_latch, &s, POOL__CORE_SLEEPY, POOL__RELAXED, POOL__RELAXED)) {
        pool__core_latch_reset(w);
        idle->rounds = 0;
        return;
    }
    POOL__CHAOS();
    c = POOL__LOAD(&p->counters, POOL__SEQ_CST);
    do {
        if (pool__jec_of(c) != idle->jec) {
            /* Work was posted since the announce: search, and if that
               fails, announce again and retry the sleep. */
            pool__core_latch_reset(w);
            idle->rounds = POOL__ROUNDS_UNTIL_SLEEPY;
            return;
        }
        /* seq_cst: the sleeper's write in the injected-work pair. */
    } while (!POOL__CAS(&p->counters, &c, c + POOL__ONE_SLEEPING, POOL__SEQ_CST, POOL__SEQ_CST));

    /* The sleeper's read in the injected-work pair. Termination is checked
       here too so that a worker never blocks once pool_destroy began
       (pool_destroy also wakes every worker; this just saves a round).
       The SLEEPY -> SLEEPING CAS is relaxed: only the latch's own order of
       modifications matters (a waker's SET before it makes it fail), and
       what the waker published arrives through pool__core_latch_reset. */
    POOL__CHAOS();
    s = POOL__CORE_SLEEPY;
    if (pool__injected_work(p) || POOL__LOAD(&p->terminating, POOL__ACQUIRE) ||
        !POOL__CAS(&w->core_latch, &s, POOL__CORE_SLEEPING, POOL__RELAXED, POOL__RELAXED)) {
        /* Still SLEEPY, so no waker un-counted us: do it ourselves. */
        pool__sub_sleeping(p);
        pool__core_latch_reset(w);
        idle->rounds = 0;
        return;
    }
    POOL__COUNT(w->stats.sleeps, 1);
    if (idle->woken) POOL__COUNT(w->stats.wakeups_wasted, 1);
    POOL__TRACE(p, POOL__EV_SLEEP_BEGIN, 0);
    pool__note_cpu(w, -1);
    /* Counted asleep above (seq_cst): a lazy half of a busy worker's, or
       what its eager push left queued unseen, is handed over at its next
       join (see "Who asks"). */
    pool__want_promotions(w, POOL__ASK_PAIRED);
    while (POOL__LOAD(&w->core_latch, POOL__RELAXED) == POOL__CORE_SLEEPING)
        pool__wait(&w->core_latch, POOL__CORE_SLEEPING);
    /* The waker moved us SLEEPING -> SET and un-counted us; only w leaves SET. */
    POOL__INVARIANT(POOL__LOAD(&w->core_latch, POOL__RELAXED) == POOL__CORE_SET);
    POOL__TRACE(p, POOL__EV_SLEEP_END, 0);
    POOL__COUNT(w->stats.wakeups, 1);
    pool__spread(w);
    pool__core_latch_reset(w);
    idle->rounds = 0;
    idle->woken = 1;
}

/* Ends the spin of an idle spell, if it had one: counts its time. */
static void pool__spin_end(pool__worker *w, pool__idle *idle, uint64_t now) {
    (void)w, (void)now; /* unused with POOL_NO_STATS */
    if (!idle->spin_from) return;
    POOL__COUNT(w->stats.spin_ns, now - idle->spin_from);
    idle->spin_from = 0;
}

/* Whether an idle spell is within its spin budget: from its first
   fruitless search on, for the pool's spin_ns. A spell runs from the end
   of a task to the start of the next, so a worker woken that finds
   nothing to do (somebody else took the work) does not spin again, and
   neither does one whose sleep was called off by a post (pool__sleep
   starts its rounds over, at the round that spins). A worker back from
   retirement starts a spell as a new worker does. */
static int pool__spinning(pool__worker *w, pool__idle *idle) {
    uint64_t budget = w->join.home->spin_ns, now;
    if (!budget || idle->woken || idle->spin_spent) return 0;
    now = pool__now_ns();
    if (!idle->spin_from) idle->spin_from = now;
    if (now - idle->spin_from < budget) return 1;
    pool__spin_end(w, idle, now);
    idle->spin_spent = 1;
    return 0;
}

/* One fruitless search beyond the spin budget: yield, announce, or
   sleep, by how many came before. */
static void pool__no_work_found(pool__worker *w, pool__idle *idle) {
    if (idle->rounds < POOL__ROUNDS_UNTIL_SLEEPY) {
        idle->rounds++;
        pool__yield();
    } else if (idle->rounds == POOL__ROUNDS_UNTIL_SLEEPY) {
        idle->jec = pool__jec_announce_sleepy(w->join.home);
        POOL__CHAOS();
        idle->rounds++;
        pool__yield();
    } else {
        pool__sleep(w, idle);
    }
}

/* ------------------------------------------------------------------------ */
/* Latches: waiting for one job                                   >>latches */
/*                                                                          */
/* A latch is set once per round, by the thread that finished the job, and  */
/* its waiters poll it while they help (see the waiting section) and block  */
/* on its word when they park. The word holds three bits and a round number:*/
/* DONE, set by the setter; WAITING, set by a waiter about to block, so     */
/* that the setter makes a system call only when somebody sleeps; OWNED,    */
/* which a scope's latch carries while one thread waits for the scope (see  */
/* pool__scope_wait); and from bit 3 up the round, which a scope bumps when */
/* it re-arms its latch for reuse (a job's latch stays in round 0). The     */
/* round wraps after 2^29 re-arms; a waiter that slept through exactly that */
/* many would take the new round for its own and wait on.                   */
/* ------------------------------------------------------------------------ */

#define POOL__LATCH_WAITING 1u
#define POOL__LATCH_DONE 2u
#define POOL__LATCH_OWNED 4u
#define POOL__LATCH_FLAGS 7u
#define POOL__LATCH_ROUND 8u

static void pool__latch_init(pool__latch *l) { l->state = 0; }

/* Acquire pairs with the release in pool__latch_set: the job's effects are
   visible to the waiter. */
static int pool__latch_is_done(pool__latch *l) {
    return (POOL__LOAD(&l->state, POOL__ACQUIRE) & POOL__LATCH_DONE) != 0;
}

/* The moment DONE is set a waiter may return and the latch (on its stack)
   vanish, so nothing of it is touched afterwards but the wake-up, which is
   harmless on a dead address: the kernel compares the word (futex and its
   kin), or the bucket table only hashes the address. Release: the job's
   effects happen before a waiter's acquire. Every blocked waiter is woken
   (a scope may have several, see pool_scope_wait_status). */
static void pool__latch_set(pool__latch *l) {
    uint32_t before = POOL__FETCH_OR(&l->state, POOL__LATCH_DONE, POOL__RELEASE);
    POOL__INVARIANT(!(before & POOL__LATCH_DONE)); /* set once per round */
    if (before & POOL__LATCH_WAITING) pool__wake_all(&l->state);
}

/* Returns 1 if l was done within `spins` rounds. */
static int pool__latch_spin(pool__latch *l, int spins) {
    int spin;
    for (spin = 0; spin < spins; spin++) {
        if (pool__latch_is_done(l)) return 1;
        POOL__CPU_RELAX();
    }
    return 0;
}

/* Blocks on l's word once, in the round it was in at `round` (the word
   without its flags); returns 1 if that round is over or has one of the
   flags in `ends`, else 0 (the wake-up was spurious). */
static int pool__latch_park_until(pool__latch *l, uint32_t round, uint32_t ends) {
    /* Acquire: DONE means the job's effects are visible. */
    uint32_t s = POOL__LOAD(&l->state, POOL__ACQUIRE);
    if ((s & ~POOL__LATCH_FLAGS) != round || (s & ends)) return 1;
    if (!(s & POOL__LATCH_WAITING) &&
        !POOL__CAS(&l->state, &s, s | POOL__LATCH_WAITING, POOL__ACQUIRE, POOL__ACQUIRE))
        return 0; /* it changed under us: look again */
    POOL__CHAOS();
    pool__wait(&l->state, s | POOL__LATCH_WAITING);
    return 0;
}

/* Blocks once until round `round` of l is done or over (see above). */
static int pool__latch_park_in(pool__latch *l, uint32_t round) {
    return pool__latch_park_until(l, round, POOL__LATCH_DONE);
}

/* Blocks on l's word once; returns 1 if l is done. */
static int pool__latch_park(pool__latch *l) {
    uint32_t round = POOL__LOAD(&l->state, POOL__RELAXED) & ~POOL__LATCH_FLAGS;
    return pool__latch_park_in(l, round) && pool__latch_is_done(l);
}

static void pool__call_job_run(pool_task *t) {
    pool__call_job *job = (pool__call_job *)(void *)((char *)t - offsetof(pool__call_job, task));
    job->fn(job->arg);
    pool__latch_set(&job->done);
}

static void pool__call_job_init(pool__call_job *job, pool_fn fn, void *arg) {
    job->task.run = pool__call_job_run;
    job->task.pool__next = NULL;
    job->task.pool__scope = NULL;
    job->fn = fn;
    job->arg = arg;
    job->thief = 0;
    job->enclosing = NULL;
    pool__latch_init(&job->done);
}

static int pool__is_call_job(const pool_task *t) { return t->run == pool__call_job_run; }

/* The scope whose work task t is part of, for pool__inside_task_of: its
   own scope, or for a join half its joiner's. */
static const pool_scope *pool__enclosing_scope(const pool_task *t, const pool_scope *scope) {
    if (scope || !pool__is_call_job(t)) return scope;
    return ((const pool__call_job *)(const void *)((const char *)t -
                                                   offsetof(pool__call_job, task)))
        ->enclosing;
}

/* ------------------------------------------------------------------------ */
/* Scopes: counting the tasks a scope's wait waits for             >>scopes */
/* ------------------------------------------------------------------------ */

/* A scope counts its unfinished tasks plus a reference held until its
   waiter comes (POOL__SCOPE_UNWAITED, a high bit), and whoever brings the
   count to zero sets the latch. A queued task that spawns into the scope
   holds a count itself while it runs, so the count cannot reach zero
   under a spawn; a task run at once holds none (see "Tasks run at once"
   below), and its spawns are those of any thread. The scope also
   remembers the worker and run it was made in, which tells waiters that
   its tasks descend from that run (see the waiting section).

   Several threads may wait for one scope at once, and again and again.
   Exactly one of them owns the wait: it sets OWNED in the latch word with
   a CAS, takes the reference away, waits, and re-arms the scope. The
   others join the wait under way: they block on the latch until its round
   is done or over. Whether a wait is under way and which round it is in
   live in one word, read at once, so a joiner can never block in a round
   that nobody owns: OWNED and the round are set and cleared together, and
   the owner's re-arm (the next round, flags clear, with an exchange) wakes
   whoever blocked in its round meanwhile. The joiner's CAS that sets
   WAITING fails once the round has moved on, and pool__wait compares the
   word, so no wake-up falls between a joiner's look and its block.

   Spawns may come from any thread at any time, also while another thread
   waits. One that finds the count at zero comes after the wait's tasks
   have all finished (or it found none), while its owner has yet to give
   the reference back: it gives the reference back itself, with the same
   CAS that counts its task and before the task is posted, so that the
   count never returns to zero without it and no latch is set for a round
   that is already done; the owner's re-arm sets the reference bit, which
   is then set already. A joiner cannot tell whether the round it joined
   covers what it spawned itself (its spawn may have come after that
   round's tasks finished), so once the round is over it looks at the
   count, the reference aside: any means tasks are unfinished, and it
   waits again. (It waits for the round to be over, not only done, to read
   the round's outcome: see the cancellation below.) tests/model/scope.pml
   checks all of this with waiters that spawn, after finding the hang of a
   give-back in two steps, of none, and the early return of a joiner that
   does not look again; its joiners may look as soon as the round is done,
   of which looking once it is over is one schedule. */
#define POOL__SCOPE_UNWAITED ((size_t)1 << (sizeof(size_t) * CHAR_BIT - 2))

static void pool__scope_tasks_done(pool_scope *s, size_t n) {
    /* acq_rel: release publishes these tasks' effects; the acquire of the
       last decrement sees every other task's and the waiter's fields. */
    size_t before = POOL__FETCH_SUB(&s->pool__pending, n, POOL__ACQ_REL);
    POOL__INVARIANT((before & ~POOL__SCOPE_UNWAITED) >= n); /* counted when spawned */
    if (before == n) pool__latch_set(&s->pool__done);
}

static void pool__scope_task_done(pool_scope *s) { pool__scope_tasks_done(s, 1); }

/* Counts n tasks about to be posted into s. At zero a wait is finishing:
   the reference goes back in the same step (see above). In two steps, the
   owner could re-arm and the next owner take the reference away between
   them, and the second step would then give back a reference that the new
   wait has taken: that wait would never end. Relaxed: only the count
   matters here; the task itself is published by pool__post. */
static void pool__scope_count_spawns(pool_scope *s, size_t n) {
    size_t count = POOL__LOAD(&s->pool__pending, POOL__RELAXED); /* checked by the CAS */
    while (!POOL__CAS(&s->pool__pending, &count, count ? count + n : POOL__SCOPE_UNWAITED + n,
                      POOL__RELAXED, POOL__RELAXED))
        continue;
}

/* Tasks run at once. A spawn that the throttle runs at once (see
   pool__spawn_runs_inline) runs on the scope's origin, inside the body
   that made the scope: only that thread runs such tasks of a scope, and
   one at a time. They are not counted: the count's two locked
   read-modify-writes would be most of what such a spawn costs, since a
   locked instruction waits for every store before it to reach the cache.
   The origin numbers these runs instead, in inline_runs, which only it
   writes: odd while one runs, and that odd number names the run.

   A wait on the origin's thread never meets a run in progress but one it
   is inside of (it would wait for itself: EDEADLK). A wait on another
   thread that finds one in progress counts a stand-in for it in the
   scope, as a spawn counts its task, and records the stand-in in
   inline_owed, which asks the origin to count it done when the run ends;
   the usual wait then covers the run, with all a wait does meanwhile.
   inline_owed holds a number of stand-ins (16 bits) and the run they
   stand in for (all of them the same run; the run number's low 48 bits).

   The race: the origin ends its run (stores the next even number), then
   looks at inline_owed; the waiter records its stand-in, then looks at
   inline_runs again. A Dekker pairing: with a full fence on each side,
   the origin sees the record, or the waiter sees the end, or both. The
   fences are asymmetric (see the platform section): the waiter, which is
   rare, pays for the origin's, so a run at once costs the origin a
   compiler barrier. So:
    - A waiter that still sees its run going leaves its stand-in to the
      origin, which takes every stand-in it sees at a run's end and
      counts them done.
    - One that sees its run ended may be too late for the origin's look:
      it takes one stand-in of its run back itself, if any is left, and
      counts it done. If none is, the origin took its stand-in, or
      another waiter of the same run did; either counted it done, after
      the run's end.
    - Stand-ins of an ended run that nobody took yet are in the way of a
      waiter of a later run: it takes them over (counts them done) with
      the same CAS that records its own. Their waiters then find none of
      their run left.
    - A waiter whose first look is older than the record it finds (it was
      slow, and its run ended while a later one began) records nothing:
      its run has ended, so it counts its stand-in done at once. Taking
      the later run's stand-ins over would count them done while their
      run goes on.
   Each stand-in is so counted done once, and not before its run's end,
   since only a thread that saw the run end (or a later run begin) takes
   it. The record is tagged with its run because a stand-in is counted done only for its
   own run: a waiter that saw its run end must not take the stand-in of a
   later run that the origin has already taken its own from. And a
   record cannot be too new for the origin's look: the stores of
   inline_runs are releases, so a waiter that saw a later run start
   records after the origin looked at the earlier end. (A record's run is
   compared with a waiter's as a signed 48-bit difference: right while
   they are less than 2^46 runs apart, days of runs at once of one scope
   at a few nanoseconds each, which no waiter sleeps through between its
   first look and its record.) */
#define POOL__OWED(run, n) (((uint64_t)(run) << 16) | (n))
#define POOL__OWED_COUNT(owed) ((uint32_t)((owed)&0xffff))
#define POOL__OWED_FULL 0xffffu

/* The record's run against `run`: 0 the same, > 0 later, < 0 earlier. */
static int64_t pool__owed_run_order(uint64_t owed, uint64_t run) {
    return (int64_t)(((owed >> 16) - run) << 16);
}

POOL__INLINE uint64_t pool__scope_inline_begin(pool_scope *s) {
    /* Relaxed: only this thread writes it. Release: see above. */
    uint64_t runs = POOL__LOAD(&s->pool__inline_runs, POOL__RELAXED);
    POOL__INVARIANT(!(runs & 1)); /* one run at a time */
    POOL__STORE(&s->pool__inline_runs, runs + 1, POOL__RELEASE);
    return runs + 2;
}

POOL__INLINE void pool__scope_inline_end(pool_scope *s, uint64_t next) {
    uint64_t owed;
    /* Release: a waiter that sees the end sees the run's effects. The
       frequent side of the pairing above. */
    if (pool__fence_is_asymmetric()) {
        POOL__STORE(&s->pool__inline_runs, next, POOL__RELEASE);
        POOL__COMPILER_BARRIER();
        owed = POOL__LOAD(&s->pool__inline_owed, POOL__RELAXED);
    } else {
        (void)POOL__XCHG(&s->pool__inline_runs, next, POOL__SEQ_CST);
        owed = POOL__LOAD(&s->pool__inline_owed, POOL__SEQ_CST);
    }
    /* Acquire: pairs with the records' releases, after their counts. Any
       run it names has ended: this one, or an earlier one. */
    if (owed && (owed = POOL__XCHG(&s->pool__inline_owed, 0, POOL__ACQUIRE)) != 0)
        pool__scope_tasks_done(s, POOL__OWED_COUNT(owed));
}

/* Records a waiter's stand-in for run `run`, taking over what an earlier
   run left; 1 if a later run's record shows that `run` has ended, 2 if
   the record is full (in either case nothing is recorded: the caller
   waits for the end itself, at once in the first, and counts its
   stand-in done). seq_cst: the rare side of the pairing; its release
   publishes the count to whoever takes the stand-in. Acquire loads: a
   later run's record comes after its waiter saw that run begin, after
   `run` ended, so this waiter sees the end's effects too. */
static int pool__scope_owe(pool_scope *s, uint64_t run) {
    uint64_t owed = POOL__LOAD(&s->pool__inline_owed, POOL__ACQUIRE); /* checked by the CAS */
    uint64_t ended;
    for (;;) {
        int64_t order = pool__owed_run_order(owed, run);
        if (owed && order > 0) return 1;
        ended = order == 0 ? 0 : owed;
        if (POOL__OWED_COUNT(owed - ended) == POOL__OWED_FULL) return 2;
        if (POOL__CAS(&s->pool__inline_owed, &owed,
                      POOL__OWED(run, POOL__OWED_COUNT(owed - ended) + 1), POOL__SEQ_CST,
                      POOL__ACQUIRE))
            break;
    }
    if (ended) pool__scope_tasks_done(s, POOL__OWED_COUNT(ended));
    return 0;
}

/* A stand-in for run `run`, which has ended, taken back if one is left. */
static void pool__scope_owe_back(pool_scope *s, uint64_t run) {
    uint64_t owed = POOL__LOAD(&s->pool__inline_owed, POOL__RELAXED); /* checked by the CAS */
    for (;;) {
        uint32_t n = POOL__OWED_COUNT(owed);
        if (pool__owed_run_order(owed, run) != 0 || n == 0) return; /* taken */
        if (POOL__CAS(&s->pool__inline_owed, &owed, n > 1 ? owed - 1 : 0, POOL__ACQUIRE,
                      POOL__RELAXED))
            break;
    }
    pool__scope_task_done(s);
}

/* Tests hold a waiter between its count and its record, to make its
   record come after the origin's look (tests/test_throttle.c). */
#ifndef POOL__STAND_IN_COUNTED
#define POOL__STAND_IN_COUNTED(s) ((void)0)
#endif

/* The waiter's side, on a thread other than the origin's: 0, or EDEADLK
   if the run in progress is this thread's. */
static int pool__scope_wait_inline(pool_scope *s) {
    /* Acquire: pairs with the end's release. */
    uint64_t run = POOL__LOAD(&s->pool__inline_runs, POOL__ACQUIRE);
    int unrecorded;
    if (!(run & 1)) return 0;
    /* Only the origin runs tasks of s at once: on its thread, this run is
       one this thread is inside of. */
    if (s->pool__outside_origin ? s->pool__outside_origin == pool__outside_runs.thread
                                : s->pool__origin == (const void *)pool__current())
        return EDEADLK;
    pool__scope_count_spawns(s, 1);
    POOL__STAND_IN_COUNTED(s);
    if ((unrecorded = pool__scope_owe(s, run)) != 0 ||
        (pool__fence_is_asymmetric() && pool__fence_heavy() != 0)) {
        /* Ended already; or 65535 waiters of this run recorded; or
           unpaired (see pool__fence_heavy): the origin may miss the
           record. The end is waited for here. */
        while (POOL__LOAD(&s->pool__inline_runs, POOL__ACQUIRE) == run) pool__yield();
        if (unrecorded) {
            pool__scope_task_done(s);
            return 0;
        }
    }
    if (POOL__LOAD(&s->pool__inline_runs, POOL__SEQ_CST) != run) pool__scope_owe_back(s, run);
    return 0;
}

/* Cancellation. A cancel belongs to one round of the scope's latch (see the
   latches section): pool__cancel holds that round with its low bit set (a
   round's three low bits are clear, so 0 means none), and the scope is
   cancelled while that round is the latch's current one. The end of a wait
   moves the latch to the next round, and so uncancels the scope without a
   store that every task must see; a task asks with one relaxed load when
   nothing was cancelled.

   The races, and what each ordering is for:
    - A task taken while its scope is cancelled is skipped. One taken just
      before the cancel runs: a cancel stops nothing that has started, and
      a skip check that misses a cancel by a hair is a task that started
      before it as far as anyone can tell. Relaxed, for that reason; a
      spawn's check likewise.
    - A cancel reads the round, then stores it. If the wait ended between
      the two, the word names a round that is over: harmless to every
      check, which compares with the current round, but a word left behind
      would name a current round again once the round number wraps (2^29
      waits). So the owner of a wait, having moved the round on, clears a
      word naming its round, and a cancel that finds the round moved on
      after its store takes its store back. Each is a write to one word,
      then a read of the other (the owner: the latch, then the cancel word;
      the canceller: the cancel word, then the latch), all seq_cst: in
      their single order one of the two reads sees the other's write, and
      that one clears the stale word.
    - A cancel never replaces the mark of a later round: one that read a
      stale round would otherwise overwrite, then clear, the cancel of the
      round under way.
    - A round that is done (its count reached zero) has no task left: a
      task taken after that was spawned for the next round, its spawn
      having found the count at zero, and must not be skipped for a cancel
      of the last one. So a round counts as cancelled only until it is
      done; the owner of a wait that found no task unfinished sets DONE
      itself. (A task whose late spawn is taken in the instant between the
      decrement to zero and the DONE is still skipped; the documentation of
      pool_scope_cancel says so.)
   The owner of a wait reads the word before it moves the round on: that is
   its status. A cancel stored after that read and before the move counts
   for neither wait (the owner clears it). The owner leaves the round's
   outcome in pool__ended for the threads that joined its wait, who read it
   once the round is over. */
#define POOL__CANCEL_MARK 1u

static uint32_t pool__scope_round(const pool_scope *s) {
    /* Relaxed: the callers order what they need around it (see above). */
    return POOL__LOAD(&s->pool__done.state, POOL__RELAXED) & ~POOL__LATCH_FLAGS;
}

/* Whether s is cancelled in its current round, not yet done; `order` is
   the cancel word's load (relaxed for a hint, acquire to see what the
   canceller wrote). */
POOL__INLINE int pool__scope_cancelled_now(const pool_scope *s, int order) {
    uint32_t mark = POOL__LOAD(&s->pool__cancel, order), state;
    if (!mark) return 0;
    state = POOL__LOAD(&s->pool__done.state, POOL__RELAXED); /* see above */
    return !(state & POOL__LATCH_DONE) &&
           mark == ((state & ~POOL__LATCH_FLAGS) | POOL__CANCEL_MARK);
}

static void pool__scope_cancel(pool_scope *s) {
    for (;;) {
        uint32_t round = pool__scope_round(s); /* checked again after the store */
        uint32_t mark = round | POOL__CANCEL_MARK;
        uint32_t seen = POOL__LOAD(&s->pool__cancel, POOL__RELAXED); /* checked by the CAS */
        if (seen == mark) { /* cancelled already: an RMW all the same, so that a thread
                               that sees the mark sees what this canceller wrote */
            POOL__FETCH_OR(&s->pool__cancel, 0, POOL__RELEASE);
            return;
        }
        if (seen && (int32_t)(seen - mark) > 0) return; /* a later round's: this one is over */
        if (!POOL__CAS(&s->pool__cancel, &seen, mark, POOL__SEQ_CST, POOL__RELAXED)) continue;
        POOL__CHAOS();
        /* seq_cst: the canceller's read of the pair above. */
        if ((POOL__LOAD(&s->pool__done.state, POOL__SEQ_CST) & ~POOL__LATCH_FLAGS) != round)
            POOL__CAS(&s->pool__cancel, &mark, 0, POOL__RELAXED, POOL__RELAXED);
        return;
    }
}

/* The owner of s's wait in round `round`, having moved the latch on:
   clears a cancel of that round (see above). */
static void pool__scope_uncancel(pool_scope *s, uint32_t round) {
    uint32_t mark = round | POOL__CANCEL_MARK;
    /* seq_cst: the owner's read of the pair above; relaxed CAS: the word
       orders nothing else. */
    if (POOL__LOAD(&s->pool__cancel, POOL__SEQ_CST) == mark)
        POOL__CAS(&s->pool__cancel, &mark, 0, POOL__RELAXED, POOL__RELAXED);
}

/* Counting done in batches. A worker that has run or skipped a task of
   scope s does not count it done in s at once: it holds the count, and
   counts all it holds of s in one step when it turns to anything else.
   Every worker running a scope's tasks would otherwise write the scope's
   count at each task's end (as well as at its spawn), and that one shared
   line, not the tasks, would set the pace of fine-grained scopes, graphs,
   and the skips of a cancel.
   While w holds counts of s, s's wait cannot end, so w may only go on
   with what s's end waits for anyway: running another task of s (s's wait
   waits for that task too, so whatever it waits for, even s's end through
   another thread, it would wait for without the hold: that deadlocks
   either way), taking and skipping tasks, calling on_cancel (which must
   not wait for s). Before anything else w counts what it holds: before it
   runs a task of another scope or of none (pool__execute,
   pool__execute_inline), goes idle (pool__worker_loop), finds nothing in a
   wait or leaves it (pool__wait_in_pool), or parks (pool__park_begin). A
   task it runs that leaves its deque empty is counted at once (see
   pool__execute): the worker is about to search, and a nested scope's
   waiter may be waiting for just that task. */
static void pool__held_flush(pool__worker *w) {
    size_t n = w->held_count;
    w->held_count = 0;
    pool__scope_tasks_done(w->held_scope, n);
}

/* Before w turns to a task of scope s (NULL: none). */
POOL__INLINE void pool__held_flush_unless(pool__worker *w, const pool_scope *s) {
    if (w->held_count && w->held_scope != s) pool__held_flush(w);
}

/* w has run or skipped a task of s: held (see above). */
POOL__INLINE void pool__hold_done(pool__worker *w, pool_scope *s) {
    pool__held_flush_unless(w, s);
    w->held_scope = s;
    w->held_count++;
}

/* Copied spawns (pool_scope_spawn_copy): a task whose argument block the
   pool copies into a cell of its own, so that the spawner needs neither a
   task struct nor storage that outlives it. Cells come in slabs, allocated
   when none is free and kept until pool_destroy; a worker (or a slot's
   holder) keeps a cache of free cells that only it touches, so a spawn
   and a run on a worker take no lock and allocate nothing once the slabs
   exist. A cell is freed where its task ran: into that thread's cache if
   it is p's worker, else into the pool's shared list. Cells drift from
   spawners to runners, so a cache grown past two slabs' worth hands one
   slab's worth to the shared list, and an empty cache refills from it
   before it allocates. A spawn the throttle runs at once needs no cell
   (see pool__spawn_copy_inline). */
#define POOL__COPY_SLAB 64 /* cells per slab, and per hand-over */

/* The copy of an argument block: an explicit alignment, since a union of
   the widest types is only 4-aligned on some 32-bit ABIs. */
typedef union pool__copy_args {
    unsigned char bytes[POOL_SPAWN_COPY_MAX];
    long double align_ld;
    long long align_ll;
    void *align_ptr;
} __attribute__((aligned(POOL_SPAWN_COPY_ALIGN))) pool__copy_args;

typedef struct pool__copy_cell {
    pool_task task; /* first: a task's address is its cell's */
    pool_fn fn;
    pool *home;
    struct pool__copy_cell *next_free;
    pool__copy_args arg;
} pool__copy_cell;

typedef struct pool__copy_slab {
    struct pool__copy_slab *next;
    pool__copy_cell cells[POOL__COPY_SLAB];
} pool__copy_slab;

/* Moves up to `max` cells from *from (counted by *from_count) onto *to. */
static void pool__copy_move(pool__copy_cell **from, uint32_t *from_count, pool__copy_cell **to,
                            uint32_t *to_count, uint32_t max) {
    while (*from && max--) {
        pool__copy_cell *c = *from;
        *from = c->next_free;
        c->next_free = *to;
        *to = c;
        --*from_count, ++*to_count;
    }
}

/* Under copy_lock: one slab's worth of cells from the shared list, or a
   new slab; NULL if none is free and the slab cannot be allocated. */
static pool__copy_cell *pool__copy_refill_locked(pool *p, uint32_t *count) {
    pool__copy_cell *got = NULL;
    pool__copy_slab *slab;
    uint32_t i;
    *count = 0;
    if (p->copy_shared) {
        pool__copy_move(&p->copy_shared, &p->copy_shared_count, &got, count, POOL__COPY_SLAB);
        return got;
    }
    /* Aligned: POOL_MALLOC may promise less than a cell's arg needs. */
    if (!(slab = (pool__copy_slab *)pool__alloc_aligned(sizeof *slab, p->user))) return NULL;
    slab->next = p->copy_slabs;
    p->copy_slabs = slab;
    for (i = 0; i < POOL__COPY_SLAB; i++) {
        slab->cells[i].home = p;
        slab->cells[i].next_free = got;
        got = &slab->cells[i];
    }
    *count = POOL__COPY_SLAB;
    return got;
}

/* A free cell of p for the calling thread (w: p's worker or slot it runs
   on, or NULL), or NULL when out of memory. */
static pool__copy_cell *pool__copy_take(pool *p, pool__worker *w) {
    pool__copy_cell *c;
    if (w && !w->copy_free) {
        pool__mutex_lock(&p->copy_lock);
        w->copy_free = pool__copy_refill_locked(p, &w->copy_free_count);
        pool__mutex_unlock(&p->copy_lock);
    }
    if (w) {
        if ((c = w->copy_free) != NULL) w->copy_free = c->next_free, w->copy_free_count--;
        return c;
    }
    pool__mutex_lock(&p->copy_lock);
    if (!p->copy_shared) p->copy_shared = pool__copy_refill_locked(p, &p->copy_shared_count);
    if ((c = p->copy_shared) != NULL) p->copy_shared = c->next_free, p->copy_shared_count--;
    pool__mutex_unlock(&p->copy_lock);
    return c;
}

/* Frees cell c on the thread its task ran or was skipped on. */
static void pool__copy_give(pool__copy_cell *c) {
    pool *p = c->home;
    pool__worker *w = pool__current();
    if (w && w->join.home == p) {
        c->next_free = w->copy_free;
        w->copy_free = c;
        if (++w->copy_free_count <= 2 * POOL__COPY_SLAB) return;
        pool__mutex_lock(&p->copy_lock);
        pool__copy_move(&w->copy_free, &w->copy_free_count, &p->copy_shared, &p->copy_shared_count,
                        POOL__COPY_SLAB);
        pool__mutex_unlock(&p->copy_lock);
        return;
    }
    pool__mutex_lock(&p->copy_lock);
    c->next_free = p->copy_shared;
    p->copy_shared = c;
    p->copy_shared_count++;
    pool__mutex_unlock(&p->copy_lock);
}

/* The run of a copied spawn: the user's function on the copy, then the
   cell goes back (the task is the pool's: nothing reads it after run). */
static void pool__copy_run(pool_task *t) {
    pool__copy_cell *c = (pool__copy_cell *)(void *)t;
    c->fn(c->arg.bytes);
    pool__copy_give(c);
}

/* Task t of s, taken from a queue while s is cancelled, is not run: s's
   on_cancel is called instead (a copied spawn's cell is freed: the task
   is none of the user's), and t counts as done (held by a worker,
   see above). Relaxed on_cancel: set before the spawn, it is published
   with t by the queue. */
POOL__COLD void pool__scope_skip(pool__worker *w, pool_task *t, pool_scope *s) {
    void (*on_cancel)(pool_task *) = POOL__LOAD(&s->pool__on_cancel, POOL__RELAXED);
    if (w) pool__held_flush_unless(w, s); /* on_cancel is no task of the scope held */
    if (t->run == pool__copy_run)
        pool__copy_give((pool__copy_cell *)(void *)t); /* not the user's */
    else if (on_cancel) on_cancel(t);
    if (!w) {
        pool__scope_task_done(s);
        return;
    }
    POOL__COUNT(w->stats.tasks_cancelled, 1);
    pool__hold_done(w, s);
}

/* ------------------------------------------------------------------------ */
/* Lazy joins: a fork that touches no shared memory until someone can take  */
/* it                                                                >>lazy */
/*                                                                          */
/* pool_join on a worker records its second half in a frame on its own      */
/* stack, linked into the worker's list of the joins of the task it runs    */
/* innermost (`join.newest`), and reads one word, the worker's own          */
/* `promote_wanted`, which other threads set when they want work (see "Who  */
/* asks"). Unless it is set, the half stays in the list, and taking it back */
/* after the first half is a plain call: no store another thread can see,   */
/* no barrier, no line of the pool's read. Otherwise the oldest halves      */
/* still lazy are pushed onto the deque (promoted), oldest first, where     */
/* thieves take them; their joins pop them                                  */
/* back as an eager join does. The join reads promote_wanted once more when */
/* its first half returns: a recursion that has stopped forking, unwinding  */
/* through halves that fork no more, would otherwise never look again.      */
/*                                                                          */
/* The invariants, and what each one is for:                                */
/*  - The halves newer than the list's newest promoted one                  */
/*    (`join.promoted`) are all lazy, and a promotion takes the oldest of   */
/*    them first, so that thieves get the biggest pieces. It links them     */
/*    from older to newer as it walks down from the newest, so that a       */
/*    join's start stores into no frame but its own. (Halves older than it  */
/*    may be lazy too, when an eager join, pool_parallel_for's, began       */
/*    inside a lazy one: they stay lazy until it ends, and run on their     */
/*    own worker.)                                                          */
/*  - Halves are promoted only onto an empty deque, oldest first. The deque */
/*    keeps its order, every item older than those above it, which the     */
/*    waiting rule's run bases depend on (an older half pushed above a      */
/*    newer scope spawn would break it); and whatever is queued already is  */
/*    what an idle worker takes first anyway.                               */
/*  - Each task a worker takes from a queue starts with an empty list       */
/*    (pool__execute saves and restores it): an outer task's half is never  */
/*    promoted above an inner run's base, and the enclosing scope recorded  */
/*    at promotion is that of the task whose join it is.                    */
/*  - Only the owner reads or writes the list and the frames. Other threads */
/*    set promote_wanted, and see a promoted half through the deque (its    */
/*    release store of bottom).                                             */
/*                                                                          */
/* Wake-ups. A promotion is announced with the seq_cst pairing of injected  */
/* work (pool__new_moved_jobs), not the weaker one of a local push: the     */
/* halves exist for workers that are idle or asleep, and a sleeper that     */
/* missed them would leave them to their busy owner, the very thing         */
/* promotion is for. For the same reason a join that finds sleepers and a   */
/* deque not empty announces what it holds again: an eager push (below) may */
/* have missed a worker falling asleep, and later joins push nothing.       */
/*                                                                          */
/* Who asks. An idle worker's fruitless search sets promote_wanted on every */
/* other worker and slot in use; a waiter that found nothing of its own     */
/* sets it on its join half's thief, whose next join then promotes a half   */
/* the waiter may leapfrog (a scope's waiter, not knowing where its tasks   */
/* run, asks every worker). Whatever makes the pool want a thread asks      */
/* every worker too, since a join reads nothing of the pool's: a worker as  */
/* it falls asleep, a worker as it parks (its stand-in is to be woken or    */
/* started), and pool_set_active_threads as it raises the count. A worker   */
/* asks itself as it starts, and an outside caller as it takes a slot while */
/* the pool wants a thread, since an ask made a moment before passed it by. */
/* A promotion after which the pool still wants a thread leaves the ask     */
/* standing for the next join. The heartbeat asks every worker of a busy    */
/* pool besides.                                                            */
/*                                                                          */
/* The sleeper's ask is a store-load pair with the promotion. The sleeper   */
/* counts itself asleep (a seq_cst read-modify-write of the counters), then */
/* reads promote_wanted (seq_cst) and stores 1 if it is clear; a promotion  */
/* clears it with a seq_cst exchange, then reads the counters (seq_cst).    */
/* Either the promotion reads the counters after the sleeper counted        */
/* itself, and wakes it for what it queues or finds queued (or, counting on */
/* an awake worker instead, leaves the ask standing), or the sleeper's read */
/* came after the clear and the 1 is there for the owner's next join. That  */
/* is what catches the lost wake-up of an eager push (a local push          */
/* announces without a store-load pair, see pool__new_local_jobs): a worker */
/* that missed the push, asleep, has asked its owner, whose next join       */
/* start, or end of a join never promoted, announces what its deque holds.  */
/* A join whose own half was pushed reads nothing at its end: behind a      */
/* first half that forks no further, that half waits for it, as in any      */
/* eager join.                                                              */
/*                                                                          */
/* What stays eager. The outermost join of a task pushes its half at once,  */
/* as a promoted frame, so that a join of two long computations that fork   */
/* no further is parallel from its start. pool_parallel_for's splits push   */
/* at once too (its chunks are few and long), and so do scope spawns and    */
/* submissions. A lazy half can only be promoted at a join's start or end: */
/* behind a first half that forks no further it waits until that half      */
/* returns.                                                                 */
/* ------------------------------------------------------------------------ */

typedef enum { POOL__FORK_LAZY, POOL__FORK_EAGER } pool__fork;

/* The half of frame f becomes a job that other threads can run. */
static void pool__lazy_job_init(pool__worker *w, pool__lazy_join *f) {
    pool__call_job_init(&f->job, f->job.fn, f->job.arg);
    f->job.enclosing = w->running_scope;
}

/* Pushes f's half onto w's deque; 0, or ENOMEM (f stays lazy). */
static int pool__lazy_push(pool__worker *w, pool__lazy_join *f) {
    pool__lazy_job_init(w, f);
    if (pool__deque_push(&w->deque, &f->job.task) != 0) return ENOMEM;
    f->promoted_before = w->join.promoted;
    w->join.promoted = f;
    return 0;
}

/* Links the lazy halves newer than the newest promoted one from older to
   newer, for pool__lazy_next. Done here rather than at each join's start:
   a join then stores into no frame but its own. The walk covers the lazy
   frames, which the promotion then pushes, all but those past its cap of
   65535 (the next promotion walks them again). Nothing to link when
   nothing was pushed: an empty list, or no memory for its outermost
   half. */
static void pool__lazy_link(pool__worker *w) {
    pool__lazy_join *f;
    if (!w->join.promoted) return;
    for (f = w->join.newest; f != w->join.promoted; f = f->older) {
        POOL__INVARIANT(f->older != NULL); /* the promoted frame is on the list */
        f->older->newer = f;
    }
}

/* The oldest lazy half newer than the newest promoted one, or NULL; the
   links it follows are pool__lazy_link's, made just before. A list whose
   outermost half could not be pushed (no memory) promotes nothing. */
static pool__lazy_join *pool__lazy_next(pool__worker *w) {
    pool__lazy_join *last = w->join.promoted;
    return last && last != w->join.newest ? last->newer : NULL;
}

/* Whether p wants a thread busy: a worker asleep, or a thread to start
   that can be started. A start that failed is retried by the monitor and
   by posts, and a destroy starts none: counted, such a thread would keep
   the ask standing, and every join promoting, until it starts (a worker
   that starts asks for work itself). seq_cst counters: see pool__promote.
   Relaxed threads.started: a stale count is smaller, and only keeps an ask
   standing one join longer; relaxed spawn_retry_ns and closing: hints of
   the same kind. */
static int pool__wants_thread(pool *p) {
    return pool__sleeping_of(POOL__LOAD(&p->counters, POOL__SEQ_CST)) != 0 ||
           (POOL__LOAD(&p->threads.started, POOL__RELAXED) <
                pool__threads_wanted(p, POOL__SEQ_CST) &&
            !POOL__LOAD(&p->spawn_retry_ns, POOL__RELAXED) &&
            !POOL__LOAD(&p->closing, POOL__RELAXED));
}

/* Promotes every lazy half of w's list, oldest first, if its deque is
   empty; with a deque not empty and sleepers, announces what it holds
   (see "Wake-ups"). Every half, not one per idle worker: a worker that
   takes one asks again only when it has run it, and the owner looks only
   at its next join, which may be a long first half away; with its halves
   queued, the worker takes the next at once. A half nobody takes costs
   its owner the pop an eager join pays; the next joins are lazy again.
   While the pool still wants a thread afterwards (a sleeper it did not
   wake because an awake worker was counted on to take the halves, a
   thread not started, nothing lazy to hand over yet), the ask stands for
   the next join: nobody else would ask again. */
POOL__COLD void pool__promote(pool__worker *w) {
    pool *p = w->join.home;
    pool__lazy_join *f;
    uint32_t n = 0;
    int64_t queued;
    /* seq_cst, and the counts read after it seq_cst: the promoter's half
       of the pair with a sleeper's or a parker's ask (see "Who asks"). A
       request that comes after this is seen at the next join. */
    POOL__XCHG(&w->promote_wanted, 0, POOL__SEQ_CST);
    /* Relaxed: a stale top is smaller, and only makes the deque look fuller. */
    queued = POOL__LOAD(&w->deque.bottom, POOL__RELAXED) - POOL__LOAD(&w->deque.top, POOL__RELAXED);
    if (queued > 0) {
        /* Only when the awake searchers cannot take what is queued would
           it wake anybody; they find it by searching otherwise. seq_cst:
           see above. */
        uint64_t c = POOL__LOAD(&p->counters, POOL__SEQ_CST);
        uint32_t sleeping = pool__sleeping_of(c), awake_idle;
        awake_idle = pool__inactive_of(c) > sleeping ? pool__inactive_of(c) - sleeping : 0;
        if (sleeping && awake_idle < queued)
            pool__new_moved_jobs(w, queued > 65535 ? 65535 : (uint32_t)queued, POOL__LOCK_TRY);
    } else {
        pool__lazy_link(w);
        while (n < 65535 && (f = pool__lazy_next(w)) != NULL && pool__lazy_push(w, f) == 0) n++;
        if (n) {
            POOL__COUNT(w->stats.joins_promoted, n);
            pool__new_moved_jobs(w, n, POOL__LOCK_TRY);
        }
    }
    /* Relaxed: w's own word. */
    if (pool__wants_thread(p)) POOL__STORE(&w->promote_wanted, 1, POOL__RELAXED);
}

/* The heartbeat. While any worker of a pool is busy, its monitor thread
   sets promote_wanted on every worker each heartbeat_ns (pool__heartbeat),
   so that halves are queued before anybody has to ask: a worker that runs
   out of work finds them at once. When no worker is busy (each is idle,
   asleep or parked in a wait) nothing can join, and the monitor blocks
   until one is busy again: it sets heart_idle, then looks once more.
   A worker that becomes busy (pool__leave_idle, pool__park_end) changes
   the counts with a seq_cst read-modify-write, then reads heart_idle
   (seq_cst): a store-load pair with the monitor's store of heart_idle and
   its seq_cst reads of the counts, so that one of the two sees the other
   and a busy pool is never left without its heartbeat. */
static int pool__any_busy(pool *p) {
    /* seq_cst: the monitor's load half of the pair above. The counters are
       read before threads.started: a worker counted inactive was counted
       after its start was published (see pool__worker_loop), so this
       never sees a worker idle that it does not count as started. */
    uint64_t c = POOL__LOAD(&p->counters, POOL__SEQ_CST);
    uint32_t parked = POOL__LOAD(&p->threads.parked, POOL__SEQ_CST);
    /* Acquire: pairs with pool__spawn's release. */
    uint32_t started = POOL__LOAD(&p->threads.started, POOL__ACQUIRE);
    /* Retired workers are not busy either; one counted in none of the
       three for a moment (see pool__retire) only costs one beat more. */
    uint32_t retired = POOL__LOAD(&p->retired, POOL__SEQ_CST);
    return started > pool__inactive_of(c) + parked + retired;
}

static void pool__heartbeat(pool *p) { pool__want_promotions_of(p, NULL, POOL__ASK_HINT); }

/* A worker of p became busy: the monitor's heartbeat resumes if it had
   stopped (see above). */
static void pool__heartbeat_resume(pool *p) {
    pool__monitor *m = &p->monitor;
    /* seq_cst: the worker's load half of the pair above. */
    if (!POOL__LOAD(&m->heart_idle, POOL__SEQ_CST)) return;
    pool__mutex_lock(&m->lock);
    if (POOL__LOAD(&m->heart_idle, POOL__RELAXED)) { /* written under the lock */
        POOL__STORE(&m->heart_idle, 0, POOL__RELAXED);
        pool__cond_signal(&m->wake);
    }
    pool__mutex_unlock(&m->lock);
}

/* ------------------------------------------------------------------------ */
/* Worker loop: finding work, running it                             >>loop */
/* ------------------------------------------------------------------------ */

/* A user's task carries this bit in its scope word from its submission
   until its run starts. Submitting it again meanwhile would link it into
   a queue twice and corrupt the queue; pool__mark_queued refuses that. */
#define POOL__QUEUED ((uintptr_t)1)

/* Marks t queued, for scope s (or none); 0, or EBUSY if it already is.
   A load and a store, not a read-modify-write: that would put a locked
   instruction on every submission to catch two threads submitting one
   task at the same instant; a task submitted again before it ran, the
   usual mistake, is caught either way.
   Relaxed: a misuse check; the task is published by the queue it enters. */
static int pool__mark_queued(pool_task *t, pool_scope *s) {
    if ((uintptr_t)POOL__LOAD(&t->pool__scope, POOL__RELAXED) & POOL__QUEUED) return EBUSY;
    POOL__STORE(&t->pool__scope, (pool_scope *)((uintptr_t)s | POOL__QUEUED), POOL__RELAXED);
    return 0;
}

/* The scope of a task the caller holds (queued, or taken from a queue). */
static pool_scope *pool__scope_of(const pool_task *t) {
    return (pool_scope *)((uintptr_t)POOL__LOAD(&t->pool__scope, POOL__RELAXED) & ~POOL__QUEUED);
}

/* Marks s (NULL: none) as having had a task in an injector: its waiters
   then look there for fairness (see pool__wait_in_pool), and the waits of
   other scopes do not walk the injector for nothing. Relaxed: a hint that
   a later look reads; the load first keeps the line clean once it is set. */
static void pool__scope_mark_injected(pool_scope *s) {
    if (s && !POOL__LOAD(&s->pool__injected, POOL__RELAXED))
        POOL__STORE(&s->pool__injected, 1, POOL__RELAXED);
}

/* Gives the chain first..last of n tasks, accepted earlier, to the pool:
   into the injector, where any worker's main loop finds them. The chain is
   the caller's until it is injected: its scopes are marked first. */
static void pool__hand_off(pool *p, pool_task *first, pool_task *last, size_t n) {
    pool_task *t;
    last->pool__next = NULL;
    for (t = first; t; t = t->pool__next) pool__scope_mark_injected(pool__scope_of(t));
    pool__inject(p, &p->injector, first, last, n, POOL__INJECT_ACCEPTED, NULL);
}

/* Clears the mark of a task that was not queued after all, or is about to
   run (its run may submit it again). Returns its scope. */
static pool_scope *pool__unmark_queued(pool_task *t) {
    pool_scope *scope = pool__scope_of(t);
    /* A user's task leaves a queue, or is refused, with its mark: one run
       twice from one submission, or taken from a queue it never entered,
       is caught here. The pool's own call jobs carry no mark. */
    POOL__INVARIANT(pool__is_call_job(t) ||
                    ((uintptr_t)POOL__LOAD(&t->pool__scope, POOL__RELAXED) & POOL__QUEUED));
    POOL__STORE(&t->pool__scope, scope, POOL__RELAXED);
    return scope;
}

/* What pool_destroy and a scope's wait look at to refuse a wait for
   themselves (EDEADLK): the tasks this thread is running. A worker keeps
   the scope of the task it runs innermost (`running_scope`, owner-private:
   a task costs a store), and a thief of a join half its joiner's, since
   the half is part of that task; any other thread that runs a pool's tasks (one
   whose pool has no worker, pool_destroy's drain) links them in this
   chain. */
typedef struct pool__helping {
    const pool *helped;
    const pool_scope *scope;
    const struct pool__helping *outer;
    uint64_t outer_body; /* the body the task is nested in (see pool__outside_body) */
} pool__helping;

static POOL__THREAD_LOCAL const pool__helping *pool__helping_top;

/* A task body begins on this thread, outside its pool's workers (see
   pool__outside_body): returns the id of the body it is nested in. */
static uint64_t pool__outside_body_begin(void) {
    uint64_t outer = pool__outside_runs.current;
    pool__outside_runs.current = ++pool__outside_runs.runs;
    return outer;
}

static void pool__outside_body_end(uint64_t outer) { pool__outside_runs.current = outer; }

/* This thread, not a worker of p, begins a task of p (of scope s, or
   NULL): linked in the chain above until pool__helping_end, in a body of
   its own. */
static void pool__helping_begin(pool__helping *h, const pool *p, const pool_scope *s) {
    h->helped = p;
    h->scope = s;
    h->outer = pool__helping_top;
    pool__helping_top = h;
    h->outer_body = pool__outside_body_begin();
}

static void pool__helping_end(const pool__helping *h) {
    pool__outside_body_end(h->outer_body);
    pool__helping_top = h->outer;
}

/* Whether this thread is inside a task of pool p (as a thread that is not
   its worker: p's workers are told by their home), or runs a task of
   scope s innermost. */
static int pool__inside_task_of(const pool *p, const pool_scope *s) {
    const pool__helping *r;
    const pool__worker *w;
    for (r = pool__helping_top; r; r = r->outer)
        if ((p && r->helped == p) || (s && r->scope == s)) return 1;
    return s && (w = pool__current()) != NULL && w->running_scope == s;
}

/* What a worker keeps of the task body it runs innermost, saved when a
   nested body begins and restored when it ends: the scope of its task (see
   pool__inside_task_of), its lazy joins (see the lazy joins section), and
   its id. Every body a worker begins gets a new id from `runs`, the
   counter that numbers runs, so ids only grow on a worker and a body that
   began later while another lasts is nested in it. A scope records the id
   of the body that made it (pool_scope_init): its own tasks can tell that
   they are still in that body, which decides whether a spawn may run at
   once (see pool_scope_spawn), and a waiter can tell that a scope was made
   inside a run it helps with (see "Which runs belong"). */
typedef struct pool__body {
    const pool_scope *scope;
    struct pool__lazy_join *lazy_newest, *lazy_promoted;
    uint64_t id;
} pool__body;

static pool__body pool__body_begin(pool__worker *w, const pool_scope *scope) {
    pool__body outer;
    outer.scope = w->running_scope;
    outer.lazy_newest = w->join.newest;
    outer.lazy_promoted = w->join.promoted;
    outer.id = w->run_current;
    w->running_scope = scope;
    w->join.newest = w->join.promoted = NULL; /* see the lazy joins section */
    w->run_current = ++w->runs;
    return outer;
}

static void pool__body_end(pool__worker *w, pool__body outer) {
    w->join.newest = outer.lazy_newest;
    w->join.promoted = outer.lazy_promoted;
    w->running_scope = outer.scope;
    w->run_current = outer.id;
}

/* w begins a run of task t (see "Which runs belong" in the waiting
   section), whose body has begun: its id is the body's, its base w's
   deque bottom now (what lies below is outer runs' work, which w's waits
   leave alone, see pool__own_work) and, while there is room, it has a
   frame. The frame's stores are releases, read with acquires by waiters:
   one that sees the id sees the base and tag stored before it, and one
   that sees a later run's base or tag sees this run's end too. Returns
   the base of the run it is nested in. */
static int64_t pool__run_begin(pool__worker *w, pool_task *t, pool_scope *scope) {
    uint32_t depth = w->run_depth++;
    /* Relaxed: only the owner writes bottom. */
    int64_t base = POOL__LOAD(&w->deque.bottom, POOL__RELAXED), outer_base = w->run_base;
    w->run_base = base;
    if (pool__is_call_job(t)) {
        pool__call_job *job =
            (pool__call_job *)(void *)((char *)t - offsetof(pool__call_job, task));
        /* Relaxed: a hint to its joiner of where to look; the frame decides. */
        POOL__STORE(&job->thief, (uint32_t)w->index + 1, POOL__RELAXED);
    }
    if (depth < POOL__FRAMES) {
        pool__frame *f = &w->frames[depth];
        POOL__STORE(&f->base, base, POOL__RELEASE);
        POOL__STORE(&f->tag, pool__is_call_job(t) ? (const void *)t : (const void *)scope,
                    POOL__RELEASE);
        POOL__STORE(&f->run, w->run_current, POOL__RELEASE);
    }
    return outer_base;
}

/* Keeps the base of w's current run at or below its deque's bottom. A
   waiter may pop below the base (its scope's tasks, see pool__own_work);
   what w pushes from there on is its current run's, and must lie at or
   above the base, or the run's own waits and its waiters' leapfrogs would
   not find it. What lies below the bottom is older either way. Release:
   as in pool__run_begin. */
static void pool__clamp_run_base(pool__worker *w) {
    /* Relaxed: only the owner writes bottom. */
    int64_t bottom = POOL__LOAD(&w->deque.bottom, POOL__RELAXED);
    uint32_t depth = w->run_depth;
    if (bottom >= w->run_base) return;
    w->run_base = bottom;
    if (depth && depth - 1 < POOL__FRAMES)
        POOL__STORE(&w->frames[depth - 1].base, bottom, POOL__RELEASE);
}

/* The end of w's innermost run: its frame is freed, and everything w
   pushes from here on belongs to the run it was nested in. */
static void pool__run_end(pool__worker *w, int64_t outer_base) {
    uint32_t depth;
    POOL__INVARIANT(w->run_depth > 0); /* a run begun */
    depth = --w->run_depth;
    if (depth < POOL__FRAMES) POOL__STORE(&w->frames[depth].run, 0, POOL__RELEASE);
    w->run_base = outer_base;
    pool__clamp_run_base(w); /* the inner run's waits may have popped below it */
}

/* Runs task t, taken from a queue of w's pool, on worker w. The task may
   be freed or reused by its run function, so nothing is read after. With
   `new_run`, the task is a run of its own on w (see the waiting section);
   a task of the scope w waits for, taken from its own deque, runs within
   w's current run instead: nobody but w waits for it, and what it pushes
   belongs to that run too. */
POOL__INLINE void pool__execute(pool__worker *w, pool_task *t, int new_run) {
    pool_scope *scope = pool__unmark_queued(t);
    pool__body outer;
    int64_t outer_base = 0;
    if (scope && pool__scope_cancelled_now(scope, POOL__RELAXED)) {
        pool__scope_skip(w, t, scope);
        return;
    }
    pool__held_flush_unless(w, scope); /* see pool__hold_done */
    outer = pool__body_begin(w, pool__enclosing_scope(t, scope));
    POOL__COUNT(w->stats.jobs_run, 1);
    if (new_run) outer_base = pool__run_begin(w, t, scope);
    POOL__TRACE(w->join.home, POOL__EV_JOB_BEGIN, 0);
    t->run(t);
    POOL__TRACE(w->join.home, POOL__EV_JOB_END, 0);
    if (new_run) pool__run_end(w, outer_base);
    pool__body_end(w, outer);
    if (scope) {
        pool__hold_done(w, scope);
        /* With its deque empty, w is about to search, and a waiter for the
           scope may be waiting for this very count: counted at once (a
           nested scope's last task would otherwise keep its waiter for a
           whole search). Relaxed deque length: a hint. */
        if (pool__deque_len(&w->deque) <= 0) pool__held_flush(w);
    }
}

/* The start and the end of a task of scope s that w, its spawner, runs at
   once instead of queueing it (see pool_scope_spawn): a body of its own,
   within w's current run, numbered in s instead of counted (see "Tasks
   run at once" in the scopes section). Like a join half taken back, it is
   a call: not in jobs_run and not traced as a job. */
typedef struct pool__inline_run {
    pool__body outer;
    uint64_t next; /* s's inline_runs once it ends */
} pool__inline_run;

POOL__INLINE pool__inline_run pool__inline_begin(pool__worker *w, pool_scope *s) {
    pool__inline_run r;
    pool__held_flush_unless(w, s); /* see pool__hold_done */
    POOL__COUNT(w->stats.spawns_inline, 1);
    r.outer = pool__body_begin(w, s);
    r.next = pool__scope_inline_begin(s);
    return r;
}

POOL__INLINE void pool__inline_end(pool__worker *w, pool_scope *s, pool__inline_run r) {
    pool__scope_inline_end(s, r.next);
    pool__body_end(w, r.outer);
}

/* Task t of s at once on w (see above). */
static void pool__execute_inline(pool__worker *w, pool_task *t, pool_scope *s) {
    pool__inline_run r = pool__inline_begin(w, s);
    t->run(t);
    pool__inline_end(w, s, r);
}

/* The spawn throttle. A worker whose deque holds p->spawn_throttle tasks
   while no worker of its pool is idle has work for every thief that may
   come; a task it spawns more runs at once, as its spawner's own call,
   where queueing it would cost a push and a pop that nobody else needs.
   (With a worker idle, or asleep, or a thread the pool wants not in its
   loop yet, it is queued: that thread would otherwise wait for the
   spawner's task to end. A thread counts from its first inactive count
   on, not from its start: in between it is neither idle nor busy.) Only a spawn from the
   task body that made the scope runs so (the scope's origin: the same
   worker and body id, see pool__body): that is where a serial run of the
   program would run it, so the task nests on the stack as the program
   nests. A spawn from a task of the scope, from a task run on top of a
   wait, or into an outer scope is queued: run at once there, it would sit
   on top of work it does not descend from (a task that respawns itself
   would recurse without bound, and one that waits for what lies below it
   would deadlock). The task is not counted in the scope but numbered, and
   a wait on another thread that saw it start still waits for its end (see
   "Tasks run at once" in the scopes section).
   Relaxed: the deque's length and the counters are hints; a stale one
   only queues a task that could have run at once, or the reverse. */
#ifndef POOL_SPAWN_THROTTLE_DEFAULT
#define POOL_SPAWN_THROTTLE_DEFAULT 8
#endif
#if POOL_SPAWN_THROTTLE_DEFAULT < 1 || POOL_SPAWN_THROTTLE_DEFAULT > 65535
#error "POOL_SPAWN_THROTTLE_DEFAULT must be 1 to 65535 tasks"
#endif

POOL__INLINE int pool__spawn_runs_inline(pool__worker *w, const pool_scope *s) {
    pool *p = w->join.home;
    return s->pool__origin == w && s->pool__origin_run == w->run_current &&
           pool__deque_len(&w->deque) >= (int64_t)p->spawn_throttle &&
           pool__inactive_of(POOL__LOAD(&p->counters, POOL__RELAXED)) == 0 &&
           POOL__LOAD(&p->threads_looping, POOL__RELAXED) >= pool__threads_wanted(p, POOL__RELAXED);
}

/* The throttle for a thread outside every pool, in a scope it made, if the
   pool's spawn_throttle_outside says so (off by default: a program written
   when every spawn from outside was queued may have its tasks wait for
   what the spawner does next). Its spawns are injected, one chain a take
   for the workers (see "Streams from outside"), and so outrun them when
   the tasks are small. A spawn from the body that made the scope (the
   thread's own level, or a task the throttle ran at once there) runs at
   once when spawn_throttle tasks of the scope wait beyond one for each of
   the pool's threads: work for every thread that may come. The thread has
   no deque to tell it so; the scope's count does (tasks not finished; a
   worker holds back the count of tasks it ran while its deque has more of
   them, see pool__hold_done, so those count as waiting). Once a destroy
   has begun it queues the spawn, which the closed injector refuses.
   Relaxed: a hint, as above. */
POOL__INLINE int pool__outside_runs_inline(const pool_scope *s) {
    pool *p = s->pool__pool;
    return p->throttle_outside && s->pool__outside_origin == pool__outside_runs.thread &&
           s->pool__origin_run == pool__outside_runs.current && !pool__current() &&
           !POOL__LOAD(&p->closing, POOL__RELAXED) &&
           (uint64_t)(POOL__LOAD(&s->pool__pending, POOL__RELAXED) & ~POOL__SCOPE_UNWAITED) >=
               (uint64_t)p->spawn_throttle + (uint64_t)p->num_threads;
}

/* Runs task t of pool p on a thread that is not p's worker: one whose pool
   has no thread, or pool_destroy's drain. */
static void pool__execute_helping(pool *p, pool_task *t) {
    pool_scope *scope = pool__unmark_queued(t);
    pool__helping helping;
    if (scope && pool__scope_cancelled_now(scope, POOL__RELAXED)) {
        pool__scope_skip(NULL, t, scope);
        return;
    }
    pool__helping_begin(&helping, p, scope);
    POOL__TRACE(p, POOL__EV_JOB_BEGIN, 0);
    t->run(t);
    POOL__TRACE(p, POOL__EV_JOB_END, 0);
    pool__helping_end(&helping);
    if (scope) pool__scope_task_done(scope);
}

static uint32_t pool__random(pool__worker *w) { /* xorshift64* */
    uint64_t x = w->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    w->rng = x;
    return (uint32_t)((x * 0x2545F4914F6CDD1Dull) >> 32);
}

/* One pass over the other workers and the external slots in use, from a
   random start, repeated while some steal lost a race (that deque had
   work). *more says whether the victim had work left after the steal. */
static pool_task *pool__steal_work(pool__worker *w, int *more) {
    pool *p = w->join.home;
    uint32_t n = POOL__LOAD(&p->threads.started, POOL__ACQUIRE); /* pairs with pool__spawn */
    uint32_t slots = pool__slots_in_use(p), all = n + p->num_slots;
    int contended;
    if (n < 2 && !slots) return NULL;
    do {
        uint32_t start = pool__random(w) % all, i;
        contended = 0;
        for (i = 0; i < all; i++) {
            uint32_t v = (start + i) % all;
            pool__worker *victim;
            pool_task *t;
            if (v >= n && !(slots >> (v - n) & 1)) continue;
            victim = v < n ? p->workers[v] : pool__slot(p, v - n);
            if (victim == w) continue;
            t = pool__deque_steal(&victim->deque, 0, &contended);
            if (t) {
                POOL__COUNT(w->stats.jobs_stolen, 1);
                POOL__TRACE(p, POOL__EV_STEAL, victim->index);
                *more = pool__deque_len(&victim->deque) > 0;
                return t;
            }
        }
        if (contended) POOL__COUNT(w->stats.steals_failed, 1);
    } while (contended);
    return NULL;
}

/* n tasks were taken from p's injectors, to run or to skip: the pool's
   count of injected tasks. Counted by the taker, once per take, not by the
   poster at every post: a poster from outside would pay a locked
   instruction per post on top of the push's, where a take is of a chain.
   Posts and takes are equal once the queues are empty. Relaxed: a
   statistic. */
static void pool__count_injected(pool *p, uint64_t n) {
    POOL__FETCH_ADD(&p->jobs_injected, n, POOL__RELAXED);
}

/* ... taken by worker w: its own count too. */
static void pool__count_injected_by(pool__worker *w, uint64_t n) {
    POOL__COUNT(w->stats.jobs_injected, n);
    pool__count_injected(w->join.home, n);
}

/* The most injected tasks a worker keeps of a chain it takes (see
   pool__split_injected). */
#define POOL__TAKE_CHUNK 256

/* Gives `rest`, a chain taken from q, one of p's injectors, back to it; returns how
   many sleepers to wake for it (as many as it has tasks, up to the pool's
   thread count), for the caller to announce. It goes back with one CAS
   into an empty injector, which needs no walk to its last task. If posts
   came in since the take, they are taken over and put in front of it, and
   the CAS tried again: a walk over them only. (Walking the rest to push it
   on top of them made a batch that kept meeting single posts quadratic:
   every chunk walked all that was left.) The posts taken over were
   accepted and announced by their posters; the caller's announce covers a
   worker that fell asleep while they were held here. Given back, not
   taken: the pool's count of injected tasks counts them when they are
   taken for good (pool__count_injected). */
static uint32_t pool__give_back_injected(pool *p, pool__injector *q, pool_task *rest) {
    pool_task *t;
    uint32_t n = 0;
    /* Counted before it is given back: from then on another worker may
       take it, cut it and run it. */
    for (t = rest; t && n < (uint32_t)p->num_threads; t = t->pool__next) n++;
    while (!pool__injector_give_back_if_empty(q, rest)) {
        /* Posted meanwhile: taken over and put in front, a walk over what
           was posted since the take only, never over the rest again. */
        pool_task *posted = pool__injector_take_all(q);
        if (!posted) continue;
        for (t = posted; t->pool__next; t = t->pool__next) continue;
        t->pool__next = rest;
        rest = posted;
    }
    return n;
}

/* Keeps the first `chunk` tasks of a chain taken from the injector
   (POOL__TAKE_CHUNK, or fewer at a look for fairness, see below) and
   gives the rest back, where the next idle worker takes the next chunk
   with one exchange. One worker moving a whole batch onto its deque would
   leave the others to steal it one task at a time, each steal a CAS on
   the top index the owner's pops read: the deque's cache lines would
   travel for every task. */
static void pool__split_injected(pool__worker *w, pool_task *first, uint32_t chunk) {
    pool *p = w->join.home;
    pool_task *keep_last = first, *rest;
    uint32_t kept = 1;
    if (p->num_threads < 2) return; /* nobody else would take the rest */
    while (kept < chunk && keep_last->pool__next) {
        keep_last = keep_last->pool__next;
        kept++;
    }
    if (!(rest = keep_last->pool__next)) return;
    keep_last->pool__next = NULL;
    pool__announce_injected(p, pool__give_back_injected(p, &p->injector, rest), 0);
}

/* Takes everything injected so far, keeps the first task to run and moves
   the rest onto w's deque, where other workers can steal them; *moved
   says how many, for the caller to announce (see pool__worker_loop). Of a
   chain longer than `chunk` it keeps that many (pool__split_injected).
   Tasks of a cancelled scope are skipped on the way: a cancel with a
   backlog injected from outside then costs no push and pop per task. */
static pool_task *pool__take_injected(pool__worker *w, uint32_t *moved, uint32_t chunk) {
    pool_task *first = pool__injector_take_all(&w->join.home->injector), *t, *next;
    uint64_t taken = 1;
    if (!first) return NULL;
    w->lone_injected = first->pool__next == NULL;
    pool__split_injected(w, first, chunk);
    for (t = first->pool__next; t; t = next) {
        pool_scope *scope = pool__scope_of(t);
        next = t->pool__next;
        if (scope && pool__scope_cancelled_now(scope, POOL__RELAXED)) {
            pool__unmark_queued(t);
            pool__scope_skip(w, t, scope);
            taken++;
            continue;
        }
        if (pool__deque_push(&w->deque, t) != 0) {
            pool_task *last = t;
            while (last->pool__next) last = last->pool__next;
            pool__injector_repush(&w->join.home->injector, t, last);
            break;
        }
        taken++;
        if (*moved < 65535) ++*moved;
    }
    pool__count_injected_by(w, taken);
    return first;
}

/* Fairness. A worker looks at its own deque first (its newest work is in
   its cache, and a join takes its half back from there), so a task that
   keeps submitting itself again, or any endless stream of local work,
   would keep it from the injector forever, and from the older tasks under
   the stream on its own deque. Every POOL__FAIR_TICKS-th search of the
   main loop therefore looks at the injector and at the oldest task of its
   own deque (pool__take_oldest_own) first, the two taking turns at going
   first (one that always went first would keep the other from its turn
   while posts kept coming): each gets its turn within 2 *
   POOL__FAIR_TICKS searches. A join
   that takes its half back inline does not search, and pays nothing.
   A look for fairness takes a chunk, as any take does, unless its worker
   has POOL__FAIR_DEEP tasks queued already: then it takes at most
   POOL__FAIR_TAKE, half of what the worker runs from its deque until its
   next look, so that the deque shrinks while a backlog lasts. Taking a
   chunk there, each worker's deque would grow by a chunk every
   POOL__FAIR_TICKS tasks, until the whole backlog had moved onto the
   deques, and a worker that ran out would then steal from the others one
   task at a time, where it could have taken the next chunk from the
   injector with one exchange. The bound is a few chunks, not one: while
   single posts stream in, a deque often holds a chunk, and the smaller
   take gives most of the chain back with a CAS that contends with the
   posters'. */
#define POOL__FAIR_TICKS 61
#define POOL__FAIR_TAKE (POOL__FAIR_TICKS / 2)
#define POOL__FAIR_DEEP (4 * POOL__TAKE_CHUNK)

static uint32_t pool__fair_chunk(pool__worker *w) {
    return pool__deque_len(&w->deque) >= POOL__FAIR_DEEP ? POOL__FAIR_TAKE : POOL__TAKE_CHUNK;
}

/* Takes one high-priority task: every free worker takes one, and none is
   moved onto a deque, where it would wait behind its holder's task. A pop
   under help_lock, which every remover of the high injector holds (the
   waiters' pool__take_own too): the stack is never taken whole and put
   back by one while another looks, so a waiter that looks under the lock
   before it parks sees every task of its own that is queued there. A
   relaxed look first: this runs at every search. */
static pool_task *pool__take_high(pool__worker *w) {
    pool *p = w->join.home;
    pool_task *t;
    if (!pool__injector_seen_work(&p->injector_high)) return NULL;
    pool__mutex_lock(&p->help_lock);
    t = pool__injector_pop_locked(&p->injector_high);
    pool__mutex_unlock(&p->help_lock);
    if (t) pool__count_injected_by(w, 1);
    return t;
}

/* Pinned tasks (pool_submit_pinned). Each worker has a stack of its own
   that any thread pushes to and only the worker takes from, all at once,
   into pinned_next (oldest first), from which it runs them one per search.
   A search looks at it with the high-priority injector, the two taking
   turns (pool__take_urgent), so pinned tasks share the high tasks'
   starvation rule; a wait never looks (see PINNED TASKS). No pinned task
   is left behind while its worker sleeps, is retired or exits:
     - asleep: the poster pushes, then sets the worker's CoreLatch
       (pool__notify_worker, a release). The latch's order of modifications
       settles it: a SET before the worker's UNSET -> SLEEPY or SLEEPY ->
       SLEEPING makes that CAS fail, and the reset after it (an acquire)
       shows the worker the push before its next search; a SET after it
       wakes the worker (and un-counts it, as any waker does). Only
       pool__sleep consumes a SET, so none is lost to another reset, and
       the sleeper's last look needs no read of the stack.
     - retired: a store-load pair, as for parks (see "Retirement"):
         poster:  push (seq_cst CAS);     read retired (seq_cst), bump if any
         retirer: retired += 1 (seq_cst); read retire_gen; read the stack (seq_cst)
       and the retired worker runs what it finds (pool__retire).
     - exiting: pool_destroy closes every started worker's stack before it
       sets terminating, so a push fails (ECANCELED) or comes before the
       close; a worker that sees terminating (an acquire) sees the close,
       so every push before it, and runs them before it leaves. */

/* Whether tasks pinned to w wait. `mo`: relaxed for a worker that has
   synchronised already, seq_cst for the retirer's read above. */
static int pool__pinned_waiting(pool__worker *w, int mo) {
    return w->pinned_next || (POOL__LOAD(&w->pinned.head, mo) & ~POOL__INJECTOR_CLOSED) != 0;
}

/* The oldest task pinned to w, or NULL. A relaxed look first: this runs at
   every search. */
static pool_task *pool__take_pinned(pool__worker *w) {
    pool_task *t = w->pinned_next;
    if (!t) {
        if (!pool__injector_seen_work(&w->pinned)) return NULL;
        if (!(t = pool__oldest_first(pool__injector_take_all(&w->pinned)))) return NULL;
    }
    w->pinned_next = t->pool__next;
    t->pool__next = NULL;
    return t;
}

/* A high-priority task or a task pinned to w, the two kinds taking turns
   by the streak's parity, so that neither starves the other. */
static pool_task *pool__take_urgent(pool__worker *w) {
    pool_task *t;
    if (w->high_streak & 1) return (t = pool__take_pinned(w)) != NULL ? t : pool__take_high(w);
    return (t = pool__take_high(w)) != NULL ? t : pool__take_pinned(w);
}

/* The oldest task of w's own deque, for fairness: a task that queues
   itself again on the deque of the worker that runs it is popped again
   at once, and what lies under it waits until a thief takes it, on a pool
   of one worker (or with every worker in such a stream) for ever, and
   with it whoever waits for that task. So the fairness tick takes from
   the other end, as a thief would (in the main loop no run of w's is
   under way: nothing on its deque is a half that w must take back
   itself). With one task queued a pop takes the same one, cheaper. */
static pool_task *pool__take_oldest_own(pool__worker *w) {
    int contended = 0;
    if (pool__deque_len(&w->deque) < 2) return NULL;
    return pool__deque_steal(&w->deque, 0, &contended); /* lost to a thief: pop below */
}

/* Where a search looks, in order. High-priority tasks first, before the
   worker's own deque: a high task posted while every worker is busy
   starts when the first of them ends its task. Normal work is never
   starved: after POOL__FAIR_TICKS high tasks in a row a worker takes one
   search's worth of other work first (the fairness tick's rule, for the
   same reason), and takes a high task after that only if it found none.
   Tasks pinned to w take turns with the high ones, under the same rule.
   *more: the task came from a deque that still has work. */
static pool_task *pool__find_work(pool__worker *w, uint32_t *moved, int *more) {
    pool_task *t = NULL;
    *moved = 0;
    *more = 0;
    if (w->high_streak < POOL__FAIR_TICKS && (t = pool__take_urgent(w)) != NULL) {
        w->high_streak++;
        return t;
    }
    w->high_streak = 0;
    /* Only normal searches tick: ticking on high ones too, the search after
       a streak would always be the injector's, and the deque's work wait. */
    if (++w->ticks == POOL__FAIR_TICKS) {
        w->ticks = 0;
        if ((w->fair_turn ^= 1) != 0) {
            t = pool__take_injected(w, moved, pool__fair_chunk(w));
            if (!t) t = pool__take_oldest_own(w);
        } else {
            t = pool__take_oldest_own(w);
            if (!t) t = pool__take_injected(w, moved, pool__fair_chunk(w));
        }
    }
    if (!t) t = pool__deque_pop(&w->deque);
    if (!t) t = pool__steal_work(w, more);
    if (!t) t = pool__take_injected(w, moved, POOL__TAKE_CHUNK);
    if (!t) t = pool__take_urgent(w); /* passed over above for fairness */
    return t;
}

/* Whether any queue of p visibly holds work. The deque lengths are
   relaxed reads: a hint, see pool__leave_idle. */
static int pool__work_visible(pool *p) {
    uint32_t n = POOL__LOAD(&p->threads.started, POOL__ACQUIRE), i; /* pairs with pool__spawn */
    uint32_t slots = pool__slots_in_use(p);
    if (pool__injected_work(p)) return 1;
    for (i = 0; i < n; i++)
        if (pool__deque_len(&p->workers[i]->deque) > 0) return 1;
    for (i = 0; slots >> i; i++)
        if ((slots >> i & 1) && pool__deque_len(&pool__slot(p, i)->deque) > 0) return 1;
    return 0;
}

/* w stops being idle (it found work). Posters that saw it idle counted on
   it to take their work and woke nobody for it; it may have taken other
   work instead. Waking two sleepers here regardless, as one could, would
   wake threads that find nothing whenever work trickles in. Here w looks first:
   if work is still visible (the deque w stole from has more, or any queue
   does), it wakes one sleeper, or with none asleep and no other searcher
   awake, starts a thread; that is how a big batch from outside starts
   thread after thread. Otherwise nobody is owed anything.
   seq_cst: with the injector load in pool__work_visible, the mirror of a
   poster's push then counters read: a poster that saw w idle (its read
   came before this decrement) pushed before w looks, so w sees its work.
   Work on deques needs no such pair: its owner is awake and runs it. */
static void pool__leave_idle(pool__worker *w, int more) {
    pool *p = w->join.home;
    uint64_t c = POOL__FETCH_SUB(&p->counters, POOL__ONE_INACTIVE, POOL__SEQ_CST);
    POOL__CHAOS();
    if (more || pool__work_visible(p))
        pool__wake_for_jobs(p, c - POOL__ONE_INACTIVE, 1, 0, POOL__LOCK_TRY);
    pool__heartbeat_resume(p);
}

/* Retirement: a changeable active count.
   pool_set_active_threads changes p->threads.active. A worker takes new work only
   while its index is below pool__threads_wanted, the active count plus a
   stand-in for each worker parked in a wait: with a lowered count the
   workers above it stop, and a park still gets a stand-in. Every search
   of the main loop looks (two relaxed loads, on the line a join's push
   reads anyway); a worker above the count finishes the task it runs first
   (its waits run their own work as always), then retires:
     - it counts its held counts done and hands its deque to the injector,
       so that no task is left where nobody looks;
     - it stops counting as an idle searcher, and passes on a wake-up it
       may have been counted on for (pool__leave_idle's rule);
     - it blocks on retire_gen until the count it is above rises. It never
       counts as a sleeper, so no poster's wake-up goes to it.
   Whoever raises the count wakes every retired worker, and each looks
   again: pool_set_active_threads, pool_destroy (once it has set
   terminating: then they leave), and a worker that parks while workers
   are retired. Spares are workers too: one whose park has ended retires,
   and a later park wakes it. Two known slacks: a worker above a lowered
   count that parks in a wait still gets a stand-in while it is parked,
   and a sleeper that fell asleep just as the count was lowered stays
   counted asleep until a wake-up reaches it (it then retires and passes
   the wake-up on). For the last one a
   store-load pair rules out a retirement missed at the moment of a park:
       retirer: retired += 1 (seq_cst); read retire_gen; read parked (seq_cst)
       parker:  parked += 1 (seq_cst);  read retired (seq_cst), bump if any
   One of the two reads of parked and retired comes last in the total
   order and sees the other's write: the retirer sees the park and does not
   block, or the parker sees the retirer and bumps retire_gen after the
   retirer read it (its futex wait then returns at once, or is woken), or
   before, and then the retirer's acquire read of the bump shows it the
   park. pool_set_active_threads needs no pair: it always bumps. */

/* Whether w, a worker of the main loop, is above the count it may work
   under. */
POOL__INLINE int pool__above_count(pool__worker *w, int mo) {
    return (uint32_t)w->index >= pool__threads_wanted(w->join.home, mo);
}

/* Lets every retired worker look at the count again. Release: a retired
   worker that reads the new generation (acquire) sees the count that made
   it. */
static void pool__wake_retired(pool *p) {
    POOL__FETCH_ADD(&p->retire_gen, 1, POOL__RELEASE);
    pool__wake_all(&p->retire_gen);
}

/* Gives everything on w's deque to the pool's injector. */
static void pool__give_away_deque(pool__worker *w) {
    pool_task *t, *first = NULL, *last = NULL;
    size_t n = 0;
    while ((t = pool__deque_pop(&w->deque)) != NULL) {
        if (last) last->pool__next = t;
        else first = t;
        last = t;
        n++;
    }
    if (first) pool__hand_off(w->join.home, first, last, n);
}

/* Hands on what w, retired or about to be, holds for others: its held
   counts and its deque. */
static void pool__retire_hand_off(pool__worker *w) {
    if (w->held_count) pool__held_flush(w);
    pool__give_away_deque(w);
}

/* A retired w runs the tasks pinned to it (nobody else can), one batch as
   taken from the stack, and hands on what they left: then it looks at the
   count again, so that a task that pins itself anew cannot keep it, and
   a task submitted onto its deque waits for no more than a batch. */
static void pool__retired_run_pinned(pool__worker *w) {
    pool *p = w->join.home;
    POOL__TRACE(p, POOL__EV_SLEEP_END, 0);
    pool__note_cpu(w, POOL__CURRENT_CPU()); /* awake meanwhile (see the sleep section) */
    do {
        pool_task *t = pool__take_pinned(w);
        if (t) pool__execute(w, t, 1);
    } while (w->pinned_next);
    pool__retire_hand_off(w);
    pool__note_cpu(w, -1);
    POOL__TRACE(p, POOL__EV_SLEEP_BEGIN, 0);
}

/* w is above the count: see "Retirement". Returns with w counted as an
   idle searcher again, once the count wants it. */
static void pool__retire(pool__worker *w, int *idle_now, pool__idle *idle) {
    pool *p = w->join.home;
    pool__retire_hand_off(w);
    if (idle->spin_from) pool__spin_end(w, idle, pool__now_ns());
    if (*idle_now) pool__leave_idle(w, 0);
    *idle_now = 0;
    POOL__FETCH_ADD(&p->retired, 1, POOL__SEQ_CST); /* the retirer's write in the pair */
    /* A sleep in the stats as in the trace: a spare that retires without
       ever sleeping otherwise shows a sleep in one and none in the other. */
    POOL__COUNT(w->stats.sleeps, 1);
    POOL__TRACE(p, POOL__EV_SLEEP_BEGIN, 0);
    pool__note_cpu(w, -1);
    for (;;) {
        uint32_t gen = POOL__LOAD(&p->retire_gen, POOL__ACQUIRE); /* pairs with the bump */
        if (!pool__above_count(w, POOL__SEQ_CST)) break;          /* the retirer's read */
        if (POOL__LOAD(&p->terminating, POOL__ACQUIRE)) break;    /* bumped after it is set */
        if (pool__pinned_waiting(w, POOL__SEQ_CST)) { /* the retirer's read in the pinned pair */
            pool__retired_run_pinned(w);
            continue;
        }
        pool__wait(&p->retire_gen, gen);
    }
    POOL__TRACE(p, POOL__EV_SLEEP_END, 0);
    pool__spread(w);
    POOL__FETCH_SUB(&p->retired, 1, POOL__RELAXED); /* a count for stats and parkers' hint */
    /* A searcher again, as a new worker is (see pool__worker_loop). */
    POOL__FETCH_ADD(&p->counters, POOL__ONE_INACTIVE, POOL__RELEASE);
    *idle_now = 1;
    idle->rounds = 0;
    idle->woken = 0;
    idle->spin_spent = 0;
}

/* Streams from outside. A thread outside the pool that posts tasks one by
   one (pool_submit, pool_scope_spawn) that take less time to run than a
   post takes meets an idle worker at every post: the worker takes the
   lone task, runs it and looks again at once, so the injector's head
   moves between their caches at every post, and each post's CAS waits for
   the line, which makes posts slower still. A worker whose take got one
   task, and that finds the next post already there when it has run it,
   is in such a stream: it pauses for POOL__STREAM_PAUSE_NS before it
   searches again, so that the poster posts a run of tasks into a line it
   keeps (while no other worker is searching), and the next take gets
   them as one chain (see pool__take_injected). A worker that finds the
   injector empty does not pause: a caller that waits for each task before
   it posts the next gets its next task run at once. The worker is not
   idle meanwhile, so no poster counts on it to take its work (the sleep
   section's rule wakes another); and its held count is flushed first, so
   that no wait waits for a count it holds. A pause is at most one per
   task taken, and bounded: work of any kind waits for it 2 us at most. */
#define POOL__STREAM_PAUSE_NS 2000

static void pool__stream_pause(pool__worker *w) {
    uint64_t from;
    w->lone_injected = 0;
    /* Relaxed: a hint, a stale value costs or skips one pause. */
    if (!pool__injector_seen_work(&w->join.home->injector)) return;
    if (w->held_count) pool__held_flush(w);
    from = pool__now_ns();
    while (pool__now_ns() - from < POOL__STREAM_PAUSE_NS) POOL__CPU_RELAX();
}

/* The looks of a watch: every one reads the injectors and w's own lines;
   every POOL__WATCH_DEQUES-th one also reads the deques (two lines each)
   and asks the busy workers for promotions again. The deques are looked
   at less often than the injectors: their owners write them at every push
   and pop, and each look by a watcher makes the next write fetch the line
   back. A worker asked for promotions may have had nothing to promote
   when it looked, so it is asked again while the watch goes on (a lazy
   half is visible only once promoted). Every load but the acquire of
   threads.started in pool__work_visible (which makes the workers it
   counts safe to read) is a hint: w searches after the watch either way,
   so a stale value ends the watch a look early or late. */
#define POOL__WATCH_DEQUES 4

/* 1 if w is to search now: injected or pinned work shows, or w is asked
   to stop. */
static int pool__watch_stop(pool__worker *w) {
    pool *p = w->join.home;
    return pool__injected_work(p) || pool__pinned_waiting(w, POOL__RELAXED) ||
           POOL__LOAD(&p->terminating, POOL__RELAXED) || pool__above_count(w, POOL__RELAXED);
}

/* The deques' part of the `look`-th look (from 1): 1 if work shows there. */
static int pool__watch_deques(pool__worker *w, int look) {
    if (look % POOL__WATCH_DEQUES) return 0;
    if (pool__work_visible(w->join.home)) return 1;
    pool__want_promotions(w, POOL__ASK_HINT);
    return 0;
}

/* How many looks a spin watch takes before it yields: a few microseconds
   where a pause takes as long as on x86, less where it is shorter or does
   nothing. */
#define POOL__SPIN_WATCH_LOOKS 64

/* Within the spin budget, between two searches: looks at what a search
   would take from, with a pause between looks, until something shows, w
   is asked to stop, or POOL__SPIN_WATCH_LOOKS looks came up empty; then
   yields, so that a thread waiting for this CPU gets it. Searching
   instead of looking would write w's own deque at every search (the
   pop's barrier), a line every other searcher reads, and yielding after
   every search (the rule past the budget) makes a spinning worker see
   new work a system call late, which is what a budget is set to avoid.
   While a thread works in an external slot the watch ends at once, and w
   searches and yields each round: that caller is a thread beyond
   num_threads, and where the machine has no CPU to spare, a watcher that
   keeps its CPU for microseconds slows the caller more than searching and
   yielding does. (The pool cannot tell whether a CPU is spare, so this
   holds on every machine.) Nothing here is a wake-up protocol: w is a
   counted searcher and searches again after the watch, so the watch can
   only delay finding work, and by a bounded number of looks. */
static void pool__spin_watch(pool__worker *w) {
    int look;
    for (look = 1; look <= POOL__SPIN_WATCH_LOOKS; look++) {
        if (pool__watch_stop(w)) return;
        if (pool__slots_in_use(w->join.home)) break;
        if (pool__watch_deques(w, look)) return;
        POOL__CPU_RELAX();
    }
    pool__yield();
}

/* The first POOL__IDLE_WATCH_ROUNDS fruitless searches of an idle spell
   past the spin budget each watch for POOL__IDLE_WATCH_LOOKS looks before
   the yield: about as long as the yield's system call takes where a pause
   is as long as on x86, next to nothing where a pause is short or does
   nothing. Work often comes right after a worker ran out: the next call of
   an outside caller that calls in a loop, the first join half that caller
   pushes, the next chunk of a batch. A worker that yields at once sees that
   work a system call late; a watch sees it at once. Few looks, and only in
   the first rounds: a watch keeps the CPU, which a thread beyond the CPUs
   may be waiting for, and every spell costs an idle pool that much more
   CPU. Unlike the spin watch, it goes on while a thread works in an
   external slot: it is about as short as the yield it comes before, which
   costs that thread the CPU too, and the caller's own work is what it is
   most often watching for. Each look pauses first: the search has just
   looked. The worker stays a counted searcher, as in the spin watch. */
#define POOL__IDLE_WATCH_ROUNDS 4
#define POOL__IDLE_WATCH_LOOKS 8

#if POOL__IDLE_WATCH_ROUNDS >= POOL__ROUNDS_UNTIL_SLEEPY
#error "the idle watch would step over the sleepy announce (pool__no_work_found)"
#endif

/* 1 if the watch of an idle round saw work, or w is asked to stop. */
static int pool__idle_watch(pool__worker *w) {
    int look;
    for (look = 1; look <= POOL__IDLE_WATCH_LOOKS; look++) {
        POOL__CPU_RELAX();
        if (pool__watch_stop(w) || pool__watch_deques(w, look)) return 1;
    }
    return 0;
}

/* The main loop of a worker: runs any work it finds until the pool
   terminates and no work is left. Idle rounds watch within the spin
   budget, then follow the progressive sleep of the sleep section, the
   first of them with a short watch before the yield (pool__idle_watch). */
static void pool__worker_loop(pool__worker *w) {
    pool *p = w->join.home;
    pool__idle idle = {0, 0, 0, 0, 0};
    int idle_now = 1, more;
    uint32_t moved;
    /* A new worker starts as a searcher: posters count on it, and when it
       finds work it looks whether more threads are needed. Release: the
       heartbeat's monitor, which reads the counters first, then sees this
       worker among threads.started (pool__any_busy); for posters a hint. */
    POOL__FETCH_ADD(&p->counters, POOL__ONE_INACTIVE, POOL__RELEASE);
    /* Relaxed: a hint for the spawn throttle (see pool__spawn_runs_inline). */
    POOL__FETCH_ADD(&p->threads_looping, 1, POOL__RELAXED);
    for (;;) {
        pool_task *t;
        if (pool__above_count(w, POOL__RELAXED) && !POOL__LOAD(&p->terminating, POOL__RELAXED)) {
            pool__retire(w, &idle_now, &idle);
            continue;
        }
        t = pool__find_work(w, &moved, &more);
        if (t) {
            if (idle_now) {
                pool__leave_idle(w, more);
                idle_now = 0;
                if (idle.spin_from) pool__spin_end(w, &idle, pool__now_ns());
            }
            idle.woken = 0;
            idle.spin_spent = 0;
            if (moved) pool__new_moved_jobs(w, moved, POOL__LOCK_TRY);
            pool__execute(w, t, 1);
            if (w->lone_injected) pool__stream_pause(w);
            continue;
        }
        if (w->held_count) pool__held_flush(w); /* before it idles (see pool__hold_done) */
        /* Acquire: pairs with pool_destroy's release; its pinned tasks are
           visible then (see "Pinned tasks"), and run before it leaves. */
        if (POOL__LOAD(&p->terminating, POOL__ACQUIRE)) {
            if (!pool__pinned_waiting(w, POOL__RELAXED)) break;
            continue;
        }
        if (!idle_now) {
            POOL__FETCH_ADD(&p->counters, POOL__ONE_INACTIVE, POOL__RELAXED);
            idle_now = 1;
            idle.rounds = 0;
        }
        pool__want_promotions(w, POOL__ASK_HINT);
        if (idle.rounds == 0 && pool__spinning(w, &idle)) pool__spin_watch(w);
        else if (idle.rounds < POOL__IDLE_WATCH_ROUNDS && pool__idle_watch(w)) idle.rounds++;
        else pool__no_work_found(w, &idle);
    }
    if (idle_now) pool__leave_idle(w, 0);
}

/* "<prefix>-<index>", or "<prefix>-<suffix>" for index < 0, in out[16]:
   the prefix is cut to 9 characters so that the name fits the 15 Linux
   allows for a thread. */
static void pool__format_thread_name(char *out, const char *prefix, int index, const char *suffix) {
    char digits[12];
    int len = 0, n = 0;
    while (prefix[len] && len < 9) out[len] = prefix[len], len++;
    out[len++] = '-';
    if (index < 0) {
        while (*suffix && len < 15) out[len++] = *suffix++;
        out[len] = 0;
        return;
    }
    do digits[n++] = (char)('0' + index % 10);
    while ((index /= 10) > 0 && n < 5);
    while (n > 0) out[len++] = digits[--n];
    out[len] = 0;
}

static pool__thread_result POOL__THREAD_CALL pool__worker_main(void *arg) {
    pool__worker *w = (pool__worker *)arg;
    pool *p = w->join.home;
    char name[16];
    pool__format_thread_name(name, p->name, w->index, NULL);
    pool__thread_set_name(name);
    pool__cpu_set_apply(&p->allowed); /* not its creator's, which may be pinned */
    if (p->cpus) {
        int cpu = p->cpus[w->index % p->num_cpus];
        /* Relaxed: read by pool_worker_stats_get, a statistic; a thread
           that saw this worker run a task sees it through that task. */
        if (pool__pin_current_thread(cpu) == 0) POOL__STORE(&w->cpu, cpu, POOL__RELAXED);
    }
    /* Wait until the spawner has published this worker (it holds the lock
       until then): before that, wakers do not scan it, so it must not
       sleep, and a thief would not find its work. */
    pool__mutex_lock(&p->spawn_lock);
    pool__mutex_unlock(&p->spawn_lock);
    /* An ask (a sleeper's, a parker's, a raised count's) that read
       threads.started before the spawner published this worker passed it
       by: the worker asks itself, so that the first join that reads the
       word (a nested join, see "Who asks") promotes and looks at the
       pool's counts. Relaxed: its own word, read by its own joins. */
    POOL__STORE(&w->promote_wanted, 1, POOL__RELAXED);
    pool__set_current(w);
    if (p->on_thread_start) p->on_thread_start(p->user, w->index);
    pool__spread(w); /* after the hook, which may pin it */
    pool__worker_loop(w);
    if (p->on_thread_exit) p->on_thread_exit(p->user, w->index);
    pool__set_current(NULL);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Waiting: what a thread runs while it waits                     >>waiting */
/*                                                                          */
/* A thread waits when what it asked for runs elsewhere: a join whose       */
/* second half was stolen, a scope, a call from outside the pool or from    */
/* another pool, a blocking job. It keeps its stack meanwhile, so whatever  */
/* it runs while it waits runs on top of the frame that waits. Both         */
/* dangers come from there. Run whatever work is found, and waits nest in   */
/* the order work is found, not in the order the program nests them        */
/* (thousands deep: the stack overflows); and a task run on top of a wait   */
/* may itself wait for something that needs the frame below it to return,   */
/* a deadlock no serial run of the program has.                             */
/*                                                                          */
/* The rule: a waiter runs only work that belongs to what it waits for, a   */
/* descendant of it in the tree of joins and spawns:                        */
/*  - its own join half, taken back (the join's fast path);                 */
/*  - from its own deque, while it waits for a scope, that scope's tasks;   */
/*  - from the deque of a worker that runs part of what it waits for (the   */
/*    thief of its join half, a worker running a task of its scope), what   */
/*    that run pushed: join halves, and tasks of scopes made inside the     */
/*    run. This is leapfrogging: the waiter steals back from its thief.     */
/* Detached tasks belong to no wait and never run on top of one.            */
/*                                                                          */
/* Why this cannot deadlock: each task on a waiter's stack descends from    */
/* what the frame below it waits for, so the stack holds one path of the    */
/* task tree, as in a serial run of the program. A task on the path waits   */
/* only for its own descendants, for another pool's work, or for a          */
/* blocking job; those run on their own threads and need nothing of the     */
/* path below the task, unless the program has a task wait for an ancestor, */
/* which deadlocks its serial run as well. The same argument bounds the     */
/* stack: waits nest as deep as the program nests.                          */
/*                                                                          */
/* Which runs belong. Each task a worker takes from a queue and runs is a   */
/* run, with an id that only grows on that worker, and while it lasts a     */
/* frame in the worker's `frames`: the id, the deque's bottom when the run  */
/* began (`base`), and a tag, the join half it is or its task's scope. A    */
/* waiter looks for a frame whose tag is what it waits for, steals from     */
/* that worker's deque at or above `base`, and then reads the frame again.  */
/* The same run means the stolen task was pushed during it: the deque held  */
/* nothing from `base` up when the run began, and had the run ended before  */
/* the push, the end's release store to the frame would be ordered before   */
/* the push's release store of bottom, which the steal read with an         */
/* acquire, and the second read would see it. A task pushed during the run  */
/* descends from it if it is a join half (a join waits for its halves, so   */
/* its joiner is inside the run) or a task of a scope made during the run   */
/* (a scope records the worker and the run it was made in; a run that began */
/* later on the same worker, while this one lasts, is nested in it). A      */
/* detached task, a spawn into an outer scope, or a task whose run has      */
/* ended is handed to the pool (injected): a waiter neither runs it nor     */
/* keeps it from others.                                                    */
/*                                                                          */
/* Keeping the CPUs busy. A worker that finds nothing of its own spins,     */
/* then yields, for a few rounds, then parks: it blocks on the latch's word */
/* until the setter wakes it. A parked worker is a CPU its pool no longer   */
/* uses, so the pool then wants one thread more than num_threads, for as    */
/* long as it stays parked (pool__threads_wanted). Whoever finds work       */
/* queued that no awake thread can take, and no sleeper to wake, starts     */
/* that thread, as posters always did for missing workers: the worker       */
/* itself as it parks (for the work on its own deque, posted with the       */
/* seq_cst pairing of the sleep section, and for work queued elsewhere),    */
/* and any poster afterwards. Starting it only for queued work means a wait */
/* that nothing else needs costs no thread. A thread started beyond         */
/* num_threads is a spare: a worker like any other, with an index of its    */
/* own above num_threads, that stops (retires) when the park ends and       */
/* stays, so that a later park finds the capacity waiting instead of        */
/* starting a thread. There are at most max_spare_threads; a failed start   */
/* is retried by the monitor thread. With every spare in use, a parked      */
/* worker's CPU stays unused until it resumes. So pools that call into      */
/* each other in a cycle deadlock once every thread of one of them, its     */
/* workers and all its spares, is blocked in calls into the others: on a    */
/* pool of 2 threads and 256 spares, a loop of 300 pieces, each calling     */
/* into another pool whose function calls back, blocks all 258 (spares run  */
/* pieces too), as with any bounded pool.                                   */
/*                                                                          */
/* Threads that are not workers of the pool, outside threads and workers    */
/* of other pools, run none of its work while they wait (another pool's     */
/* task may wait for work of theirs): they park, after a short spin when an */
/* awake worker took the job. Only when the pool has no thread at all (none */
/* could be started) or pool_destroy has joined them does a waiter run      */
/* work itself, and then only its own: the job it waits for, or the tasks   */
/* of its scope.                                                            */
/* ------------------------------------------------------------------------ */

/* What a waiter waits for, and what belongs to it. */
typedef struct pool__awaited {
    pool__latch *done;     /* set when what it waits for has finished */
    pool *runner;          /* the pool that runs it */
    const void *tag;       /* the frames it may help: a join half or a scope */
    const uint32_t *thief; /* a join half: where its thief's index is written */
    pool_scope *scope;     /* a scope wait: the scope, whose tasks are its own */
    pool_task *own;        /* a call from outside: the injected job */
} pool__awaited;

/* Rounds of a worker that found nothing of its own, before it parks. The
   first POOL__WAIT_SPIN_ROUNDS spin POOL__WAIT_SPINS pauses each, looking
   at the latch; the others yield. What a worker waits for is most often a
   small stolen half that ends within a microsecond or two, and a yield
   costs a system call and, where another thread is ready on the CPU (an
   idle worker, when outside callers in slots outnumber the spare CPUs),
   that thread's turn: waits for a 1023-node tree's stolen halves took a
   few times as long as the spin (bench/results/wait-spin-2026-11-28.txt).
   Where no other thread is ready, the yields kept the CPU busy as well;
   where one is, each stretch of fruitless rounds holds it back by the
   spin's length, and waiters that share a CPU may do so in turn: 16
   workers on 2 CPUs ran fib, nqueens and the unbalanced tree as fast as
   with yields from the first round (the same file). The spin's length
   is counted in pauses, so its time is the CPU's: 512 pauses (the file
   gives their time on the CPU it was measured on), several times that
   where a pause is slower, and next to nothing where POOL__CPU_RELAX is
   a no-op (the spin rounds are then mostly searches). It is not the idle
   spin budget (pool_config.spin_us), which is about a worker with no
   work at all, and it is not counted in pool_stats.spin_ns. */
#define POOL__WAIT_ROUNDS 32
#define POOL__WAIT_SPIN_ROUNDS 8
#define POOL__WAIT_SPINS 64
#if POOL__WAIT_SPIN_ROUNDS > POOL__WAIT_ROUNDS
#error "the injector is looked at in the round before the park, which must not spin"
#endif

/* Spin rounds of a thread that is not a worker of the pool, when an awake
   worker took its job: a call of a small job is often done within
   microseconds. (No spin when the job had to wake a worker: a kernel
   wake-up takes tens of microseconds, and a spinning waiter holds a CPU
   the woken worker could run on.) */
#define POOL__OUTSIDE_SPINS 1000

/* Waits nested on the stack of a thread that is no pool's worker, for
   pool_stats' wait_depth_max (a worker counts its own). */
static POOL__THREAD_LOCAL uint32_t pool__outside_wait_depth;

/* Counts a wait of w (a worker of any pool) or of another thread waiting
   on p (NULL: not recorded). */
POOL__INLINE void pool__wait_enter(pool__worker *w, pool *p) {
    if (w) {
        uint32_t depth = ++w->wait_depth;
        /* Relaxed: a statistic only the owner writes. */
        if (depth > POOL__LOAD(&w->stats.wait_depth_max, POOL__RELAXED))
            POOL__STORE(&w->stats.wait_depth_max, depth, POOL__RELAXED);
    } else {
        uint32_t depth = ++pool__outside_wait_depth;
        uint64_t max = p ? POOL__LOAD(&p->outside_wait_depth_max, POOL__RELAXED) : 0;
        while (p && depth > max && /* a statistic */
               !POOL__CAS(&p->outside_wait_depth_max, &max, depth, POOL__RELAXED, POOL__RELAXED))
            continue;
    }
}

POOL__INLINE void pool__wait_leave(pool__worker *w) {
    if (w) --w->wait_depth;
    else --pool__outside_wait_depth;
}

/* From w's own deque, for a waiter: the newest task if it is a task of the
   scope it waits for (*new_run: it lay below the base of w's run, and runs
   as a run of its own, so that what it pushes has a base above which its
   own waits find it). Detached tasks on top (left by work it ran while it
   waited) are handed to the pool on the way; anything else, an outer
   join's half or another scope's task, is put back for thieves. A task put
   back after its pop emptied the deque lands one slot higher (the pop
   moved top past it); from below the run's base that could be the base
   itself, where a waiter for this run would take it for part of the run,
   so such a task is handed to the pool instead. The scope's tasks may lie
   below the base: a task that waits for a scope may start after the
   scope's tasks were pushed by an earlier run of the same worker. */
static pool_task *pool__own_work(pool__worker *w, const pool__awaited *wt, int *new_run) {
    pool_task *t, *mine = NULL, *first = NULL, *last = NULL;
    size_t n = 0;
    int64_t bottom;
    *new_run = 0;
    /* Relaxed: only the owner writes bottom. */
    while ((bottom = POOL__LOAD(&w->deque.bottom, POOL__RELAXED), t = pool__deque_pop(&w->deque)) !=
           NULL) {
        pool_scope *scope = pool__scope_of(t);
        int below = bottom - 1 < w->run_base; /* the index t had */
        if (scope && scope == wt->scope) {
            mine = t;
            *new_run = below;
            break;
        }
        if ((scope || pool__is_call_job(t)) &&
            !(below && POOL__LOAD(&w->deque.bottom, POOL__RELAXED) == bottom)) {
            int rc = pool__deque_push(&w->deque, t); /* where it was */
            POOL__INVARIANT(rc == 0);
            (void)rc;
            break;
        }
        if (last) last->pool__next = t;
        else first = t;
        last = t;
        n++;
        if (scope || pool__is_call_job(t)) break; /* handed off, not put back */
    }
    pool__clamp_run_base(w);
    if (first) pool__hand_off(w->join.home, first, last, n);
    return mine;
}

/* Whether t, stolen from worker v's deque at or above the base of v's run
   `run` while that run lasted, descends from what wt waits for. t is the
   caller's now, and its scope lives while t is queued in it. */
static int pool__belongs(const pool_task *t, const pool__awaited *wt, const pool__worker *v,
                         uint64_t run) {
    pool_scope *scope;
    if (pool__is_call_job(t)) return 1;
    scope = pool__scope_of(t);
    if (!scope) return 0; /* detached */
    if (scope == wt->scope) return 1;
    return scope->pool__origin == v && scope->pool__origin_run >= run;
}

/* From worker or slot v, for w: a task of a run of v's tagged with what wt
   waits for (see "Which runs belong"). Returns it, or NULL; *stop: a task
   stolen that did not belong was handed to the pool, and the search ends
   there. */
static pool_task *pool__leapfrog_from(pool__worker *w, const pool__awaited *wt, pool__worker *v,
                                      int *stop) {
    uint32_t f;
    for (f = 0; f < POOL__FRAMES; f++) {
        pool__frame *frame = &v->frames[f];
        uint64_t run = POOL__LOAD(&frame->run, POOL__ACQUIRE);
        int contended = 0;
        pool_task *t;
        if (!run) break; /* frames are used from 0 up */
        if (POOL__LOAD(&frame->tag, POOL__ACQUIRE) != wt->tag) continue;
        t = pool__deque_steal(&v->deque, POOL__LOAD(&frame->base, POOL__ACQUIRE), &contended);
        /* Not `break`: a deeper run's base can lie below this one's,
           lowered with the deque by a wait (pool__clamp_run_base). */
        if (!t) continue;
        POOL__CHAOS();
        if (POOL__LOAD(&frame->run, POOL__ACQUIRE) == run && pool__belongs(t, wt, v, run)) {
            POOL__COUNT(w->stats.jobs_stolen, 1);
            POOL__TRACE(w->join.home, POOL__EV_STEAL, v->index);
            return t;
        }
        pool__hand_off(w->join.home, t, t, 1);
        *stop = 1;
        return NULL;
    }
    return NULL;
}

/* A task of a run that is part of what wt waits for, or NULL: from the
   thief of a join half, or for a scope from any worker or slot in use. */
static pool_task *pool__leapfrog(pool__worker *w, const pool__awaited *wt) {
    pool *p = w->join.home;
    /* Acquire: pairs with pool__spawn's release; the workers below are set. */
    uint32_t n = POOL__LOAD(&p->threads.started, POOL__ACQUIRE), slots, i;
    pool_task *t = NULL;
    int stop = 0;
    if (wt->thief) {
        uint32_t thief = POOL__LOAD(wt->thief, POOL__RELAXED); /* a hint: the frames decide */
        pool__worker *v = thief ? pool__worker_at(p, thief - 1) : NULL;
        return v && v != w ? pool__leapfrog_from(w, wt, v, &stop) : NULL;
    }
    for (i = 0; i < n && !t && !stop; i++)
        if (p->workers[i] != w) t = pool__leapfrog_from(w, wt, p->workers[i], &stop);
    for (slots = pool__slots_in_use(p), i = 0; slots >> i && !t && !stop; i++)
        if ((slots >> i & 1) && pool__slot(p, i) != w)
            t = pool__leapfrog_from(w, wt, pool__slot(p, i), &stop);
    return t;
}

/* w is about to park: see "Keeping the CPUs busy". Once it counts as
   parked, the pool wants a thread more (pool__threads_wanted): work left
   on w's deque is posted with the seq_cst pairing, and for work queued
   elsewhere one sleeper is woken, or with none a spare started, as a
   poster would. Work posted later sees the same count. */
static void pool__park_begin(pool__worker *w) {
    pool *p = w->join.home;
    int64_t left = pool__deque_len(&w->deque);
    int slot = pool__is_slot(w);
    pool__note_cpu(w, -1); /* before the stand-in is woken (see the sleep section) */
    if (w->held_count) pool__held_flush(w); /* see pool__hold_done */
    /* seq_cst: the parker's half of the pair in pool__threads_wanted; the
       injector load in pool__work_visible is the other. A slot's holder is
       no CPU of the pool's: nobody stands in for it. */
    if (!slot) POOL__FETCH_ADD(&p->threads.parked, 1, POOL__SEQ_CST);
    /* The parker's read in the retirement pair: a retired worker may now
       be the stand-in. */
    if (!slot && POOL__LOAD(&p->retired, POOL__SEQ_CST)) pool__wake_retired(p);
    POOL__STORE(&w->stats.waits_parked, w->stats.waits_parked + 1, POOL__RELAXED); /* a statistic */
    if (left > 0) pool__new_moved_jobs(w, left > 65535 ? 65535 : (uint32_t)left, POOL__LOCK_WAIT);
    else if (!slot && pool__work_visible(p))
        pool__wake_for_jobs(p, POOL__LOAD(&p->counters, POOL__SEQ_CST), 1, 0, POOL__LOCK_WAIT);
    /* Lazy halves elsewhere are work for the stand-in too (see "Who asks"). */
    if (!slot) pool__want_promotions(w, POOL__ASK_PAIRED);
}

static void pool__park_end(pool__worker *w) {
    uint32_t before;
    if (pool__is_slot(w)) {
        pool__note_cpu(w, POOL__CURRENT_CPU()); /* its thread is the user's: it stays */
        return;
    }
    pool__spread(w);
    /* seq_cst: the heartbeat's pair (see the lazy joins section); for the
       spares, a stale count afterwards only starts a thread too many. */
    before = POOL__FETCH_SUB(&w->join.home->threads.parked, 1, POOL__SEQ_CST);
    POOL__INVARIANT(before != 0); /* pool__park_begin counted w */
    (void)before;
    pool__heartbeat_resume(w->join.home);
}

/* Blocks until `done` is set; w (a worker of any pool, or NULL) stands in
   a spare for itself meanwhile. */
static void pool__park(pool__worker *w, pool__latch *done) {
    if (w) pool__park_begin(w);
    while (!pool__latch_park(done)) continue;
    if (w) pool__park_end(w);
}

/* Takes from q, one of p's injectors, the first task that is wt's own (the
   job it waits for, a task of its scope; with wt NULL, the first of all)
   and gives the rest back. Under help_lock, so that a helper never finds
   the injector empty while another one sorts it. The rest is announced as
   a post is: a worker that found the injector empty meanwhile may be
   falling asleep, and the helper, a waiter or an external slot's holder
   that leaves the pool next, may never look at the injector again. */
static pool_task *pool__take_own_from_counting(pool *p, pool__injector *q, const pool__awaited *wt,
                                               size_t *walked) {
    pool_task *all, *t, **link, *mine = NULL;
    uint32_t n = 0;
    pool__mutex_lock(&p->help_lock);
    all = pool__injector_take_all(q);
    for (link = &all; (t = *link) != NULL; link = &t->pool__next) {
        ++*walked;
        if (!wt || t == wt->own || (wt->scope && pool__scope_of(t) == wt->scope)) {
            *link = t->pool__next;
            mine = t;
            break;
        }
    }
    if (all) n = pool__give_back_injected(p, q, all); /* no walk over a long rest */
    pool__mutex_unlock(&p->help_lock);
    if (mine) pool__count_injected(p, 1);
    if (n) pool__announce_injected(p, n, 0);
    return mine;
}

static pool_task *pool__take_own_from(pool *p, pool__injector *q, const pool__awaited *wt) {
    size_t walked = 0;
    return pool__take_own_from_counting(p, q, wt, &walked);
}

/* pool__take_own_from, high priority first; a join or a call is never a
   high task, so only a scope's waiter and the drain (wt NULL) look there. */
static pool_task *pool__take_own(pool *p, const pool__awaited *wt) {
    pool_task *t = !wt || wt->scope ? pool__take_own_from(p, &p->injector_high, wt) : NULL;
    return t ? t : pool__take_own_from(p, &p->injector, wt);
}

/* w found nothing of its own for wt: asks the thief of its join half to
   promote what its run pushes lazily (see the lazy joins section), or for
   a scope every worker. The thief's index is a hint (relaxed). */
static void pool__want_help(pool__worker *w, const pool__awaited *wt) {
    uint32_t thief = wt->thief ? POOL__LOAD(wt->thief, POOL__RELAXED) : 0;
    pool__worker *v = thief ? pool__worker_at(w->join.home, thief - 1) : NULL;
    if (v) pool__want_promotion(v, POOL__ASK_HINT);
    else pool__want_promotions(w, POOL__ASK_HINT);
}

/* w, a worker of wt->runner, waits: runs what belongs to the wait, spins
   and yields a few rounds when there is nothing, then parks. Before it
   parks it looks in the injector too: a scope's tasks land there when they
   were spawned from outside the pool, or when a deque could not grow, a
   join's half when a waiter nested on top of the join handed it off
   (pool__own_work), and a pool that cannot start a thread may have nobody
   else to run them. A waiter that keeps finding work elsewhere (its
   scope's high tasks, or tasks that spawn more onto its deque) would not
   reach that look while the stream lasts (a short gap in the stream is
   not the 32 rounds), and a task of its own queued there (normal, or high
   behind a stream on the deque) could wait for ever, its wait with it when
   the stream waits for that task: so after POOL__FAIR_TICKS tasks since
   its last look (pool__wait_fair_look's rule below), it looks at both
   injectors first, as the main loop's fairness tick does. */
#define POOL__FAIR_WAIT_MAX (1u << 24)

/* The waiter's look for fairness (see above): a task of its scope's from
   either injector, or NULL; *fair_every is the streak before the next.
   Only a scope's waiter looks, and only once a task of the scope went into
   an injector: a join's half there has not started, so nothing of its
   join is running to make a streak, and a scope whose tasks were all
   pushed onto deques (a request's tree on a worker) has nothing there to
   find. The normal injector first: the loop below looks at the high one
   every round, so a stream there is what keeps it from the normal one.
   The next look comes after as many tasks as this one walked, at least
   POOL__FAIR_TICKS: a long chain of other work costs its walker at most a
   node per task it runs. */
static pool_task *pool__wait_fair_look(const pool__awaited *wt, unsigned *fair_every) {
    pool *p = wt->runner;
    pool_task *t = NULL;
    size_t walked = 0;
    if (!wt->scope || !POOL__LOAD(&wt->scope->pool__injected, POOL__RELAXED)) return NULL;
    if (pool__injector_seen_work(&p->injector))
        t = pool__take_own_from_counting(p, &p->injector, wt, &walked);
    if (!t && pool__injector_seen_work(&p->injector_high))
        t = pool__take_own_from_counting(p, &p->injector_high, wt, &walked);
    *fair_every = walked > POOL__FAIR_WAIT_MAX ? POOL__FAIR_WAIT_MAX
                  : walked > POOL__FAIR_TICKS  ? (unsigned)walked
                                               : POOL__FAIR_TICKS;
    return t;
}

static void pool__wait_in_pool(pool__worker *w, const pool__awaited *wt) {
    unsigned rounds = 0, streak = 0, fair_every = POOL__FAIR_TICKS;
    pool__wait_enter(w, wt->runner);
    while (!pool__latch_is_done(wt->done)) {
        int new_run = 0;
        pool_task *t = NULL;
        if (streak >= fair_every) {
            streak = 0;
            t = pool__wait_fair_look(wt, &fair_every);
        }
        if (!t) t = pool__own_work(w, wt, &new_run);
        if (!t && (t = pool__leapfrog(w, wt)) != NULL) new_run = 1;
        /* A scope's high tasks never reach a deque: looked for every round
           (a relaxed look first), not only before it parks. */
        if (!t && wt->scope && pool__injector_seen_work(&wt->runner->injector_high))
            t = pool__take_own_from(wt->runner, &wt->runner->injector_high, wt);
        /* Under help_lock, with no look before it: another remover may have
           the high stack out for a moment, but only under the lock. */
        if (!t && rounds == POOL__WAIT_ROUNDS && (wt->scope || wt->own))
            t = pool__take_own(wt->runner, wt);
        if (t) {
            pool__execute(w, t, new_run);
            rounds = 0;
            streak++;
            continue;
        }
        if (w->held_count) { /* before it waits on (see pool__hold_done) */
            pool__held_flush(w);
            continue; /* they may have been the last the wait waited for */
        }
        pool__want_help(w, wt); /* a thief's next join promotes a half it may take */
        if (rounds++ < POOL__WAIT_SPIN_ROUNDS) {
            (void)pool__latch_spin(wt->done, POOL__WAIT_SPINS);
        } else if (rounds <= POOL__WAIT_ROUNDS) {
            pool__yield();
        } else {
            pool__park(w, wt->done);
        }
    }
    if (w->held_count) pool__held_flush(w); /* before it leaves (see pool__hold_done) */
    pool__wait_leave(w);
}

/* Whether p's threads will run nothing that is queued: none could be
   started, or pool_destroy has joined them. Its waiters run their own. */
static int pool__runs_nothing(pool *p) {
    /* Acquire: pairs with pool__spawn's release, and pool_destroy's. */
    return POOL__LOAD(&p->threads.started, POOL__ACQUIRE) == 0 ||
           POOL__LOAD(&p->workers_gone, POOL__ACQUIRE);
}

/* w (a worker of another pool, or NULL: a thread outside every pool) waits
   for work of wt->runner. With `spin`, an awake worker took the job. */
static void pool__wait_elsewhere(pool__worker *w, const pool__awaited *wt, int spin) {
    pool *p = wt->runner;
    int tried_spawn = 0;
    pool__wait_enter(w, p);
    if (!spin || !pool__latch_spin(wt->done, POOL__OUTSIDE_SPINS)) {
        while (!pool__latch_is_done(wt->done)) {
            if (pool__runs_nothing(p)) {
                pool_task *t;
                /* No thread yet: try to start one (once per wait), waiting
                   for a start already under way. Once one exists it stays
                   until pool_destroy, which runs what is left itself. */
                if (!tried_spawn++ && !POOL__LOAD(&p->workers_gone, POOL__ACQUIRE) &&
                    pool__spawn(p, POOL__LOCK_WAIT, POOL__NO_SPARES) > 0)
                    continue;
                if ((t = pool__take_own(p, wt)) != NULL) {
                    pool__execute_helping(p, t);
                    continue;
                }
            }
            pool__park(w, wt->done);
        }
    }
    pool__wait_leave(w);
}

/* A join's second half was stolen: w waits for it. */
static void pool__wait_join(pool__worker *w, pool__call_job *job) {
    pool__awaited wt;
    wt.done = &job->done;
    wt.runner = w->join.home;
    wt.tag = &job->task;
    wt.thief = &job->thief;
    wt.scope = NULL;
    wt.own = &job->task; /* handed off to the injector by a waiter (pool__own_work) */
    pool__wait_in_pool(w, &wt);
}

/* ------------------------------------------------------------------------ */
/* External slots: outside callers that do the work                 >>slots */
/*                                                                          */
/* A thread outside every pool that calls into p (pool_call, pool_join,     */
/* pool_parallel_for, pool_scope_wait) would otherwise inject its work and  */
/* block while a worker, woken in the kernel, runs it: for a short call     */
/* that is most of its cost. Instead it takes one of p's external slots, a  */
/* worker without a thread of its own, and runs the call as that worker:    */
/* its joins go on the slot's deque, where p's workers steal them as they   */
/* steal from each other, it waits by the waiting section's rule, and its   */
/* index, above every thread's, is pool_worker_index() meanwhile. With      */
/* every slot taken it injects as before. A thread that is some pool's      */
/* worker, or holds a slot of another pool, takes none: it waits as such a  */
/* worker does (see the waiting section).                                   */
/*                                                                          */
/* The holder is not one of the pool's CPUs. It is not counted in the sleep */
/* counters (it never sleeps there: it only waits), and nobody stands in    */
/* for it when it parks. What it leaves on its deque when it parks is       */
/* posted with the seq_cst pairing of injected work, as a promotion is      */
/* (pool__park_begin): a local push's announce has no store-load pair, and  */
/* a worker falling asleep at that moment may miss the push. For a worker   */
/* that costs nothing, since it pops the job itself later, but a parked     */
/* holder pops nothing until it is woken. tests/model/sleep.pml checks it.  */
/*                                                                          */
/* The slots taken are bits of one word, taken with a CAS (acquire: the     */
/* previous holder's writes to the slot, its deque, frames and counters,    */
/* are seen) and given back with an and (release). A holder gives its slot  */
/* back with an empty deque: what its call left there (detached tasks,      */
/* spawns into outer scopes) is handed to the pool first. pool_destroy sets */
/* POOL__SLOTS_CLOSED, after which no slot is taken, and blocks on the word */
/* until the holders are done: their calls are accepted work, and run to    */
/* their end with the workers still there to help.                          */
/* ------------------------------------------------------------------------ */

/* The external slots of a new pool: 0, or ENOMEM (pool__free_pool frees
   those made). */
static int pool__slots_init(pool *p) {
    uint32_t k;
    for (k = 0; k < p->num_slots; k++)
        if (!(p->workers[p->max_workers + k] = pool__worker_new(p, p->max_workers + k)))
            return ENOMEM;
    return 0;
}

/* A free slot of p for the calling thread, or NULL: none is free, or p is
   being destroyed. */
static pool__worker *pool__slot_take(pool *p) {
    /* Relaxed: the CAS decides. */
    uint32_t taken = POOL__LOAD(&p->slots_taken, POOL__RELAXED), k;
    for (;;) {
        if (taken & POOL__SLOTS_CLOSED) return NULL;
        for (k = 0; k < p->num_slots && (taken >> k & 1); k++) continue;
        if (k == p->num_slots) return NULL;
        /* Acquire: pairs with the previous holder's release. seq_cst:
           the taker's half of a pair with a sleeper's ask (see
           pool__want_promotion). */
        if (POOL__CAS(&p->slots_taken, &taken, taken | (uint32_t)1 << k, POOL__SEQ_CST,
                      POOL__RELAXED)) {
            pool__note_cpu(pool__slot(p, k), POOL__CURRENT_CPU()); /* see the sleep section */
            /* An ask that read the slots before this CAS passed the slot
               by: the holder asks itself if the pool wants a thread. Its
               counts are read seq_cst after the seq_cst CAS, so an asker
               that missed the CAS was counted before they are read.
               Relaxed store: the holder's own word now. */
            if (pool__wants_thread(p))
                POOL__STORE(&pool__slot(p, k)->promote_wanted, 1, POOL__RELAXED);
            return pool__slot(p, k);
        }
    }
}

/* The holder gives slot w back. Release: pairs with the next holder's
   acquire, and with pool_destroy's. */
static void pool__slot_give_back(pool *p, pool__worker *w) {
    uint32_t bit = (uint32_t)1 << ((uint32_t)w->index - p->max_workers), before;
    pool_task *t, *first = NULL, *last = NULL;
    size_t n = 0;
    POOL__INVARIANT(w->run_depth == 0 && w->wait_depth == 0 && !w->join.newest &&
                    w->held_count == 0);
    while ((t = pool__deque_pop(&w->deque)) != NULL) {
        if (last) last->pool__next = t;
        else first = t;
        last = t;
        n++;
    }
    if (first) pool__hand_off(p, first, last, n);
    pool__note_cpu(w, -1);
    before = POOL__FETCH_AND(&p->slots_taken, ~bit, POOL__RELEASE);
    POOL__INVARIANT(before & bit); /* w held the slot */
    if ((before & POOL__SLOTS_WAITER) && !(before & POOL__SLOTS_MASK & ~bit))
        pool__wake_all(&p->slots_taken);
}

/* pool_destroy: no slot is taken from now on; returns once every holder
   has given its slot back. Acquire: the holders' work, what they handed
   off included, is seen. */
static void pool__slots_close(pool *p) {
    uint32_t taken = POOL__FETCH_OR(&p->slots_taken, POOL__SLOTS_CLOSED, POOL__ACQUIRE);
    taken |= POOL__SLOTS_CLOSED;
    while (taken & POOL__SLOTS_MASK) {
        if (!(taken & POOL__SLOTS_WAITER) &&
            !POOL__CAS(&p->slots_taken, &taken, taken | POOL__SLOTS_WAITER, POOL__ACQUIRE,
                       POOL__ACQUIRE))
            continue;
        pool__wait(&p->slots_taken, taken | POOL__SLOTS_WAITER);
        taken = POOL__LOAD(&p->slots_taken, POOL__ACQUIRE);
    }
}

/* Runs job on the calling thread, a thread outside every pool, in slot w
   of p: a run of the slot's, as a worker runs a task it took. */
static void pool__run_in_slot(pool *p, pool__worker *w, pool__call_job *job) {
    pool__set_current(w);
    POOL__COUNT(w->stats.slot_calls, 1);
    pool__execute(w, &job->task, 1);
    pool__set_current(NULL);
    pool__slot_give_back(p, w);
}

/* ------------------------------------------------------------------------ */
/* The monitor thread                                             >>monitor */
/*                                                                          */
/* One per pool, started with its first worker: it retries thread starts    */
/* that failed while the pool is short of threads, even when nothing else   */
/* is posted and every worker is busy in a long task, so that a transient   */
/* failure of pthread_create never leaves work waiting for a busy worker.   */
/* Short of threads means: work is queued while fewer than num_threads      */
/* workers exist, or parked workers leave fewer than num_threads unparked   */
/* (see the waiting section). It retries after 1 ms, then backs off,        */
/* doubling up to POOL__RETRY_MAX_NS. It also beats the heartbeat while a   */
/* worker is busy (see the lazy joins section). Otherwise it sleeps on a    */
/* condition variable and costs nothing. If the monitor itself cannot be    */
/* started, the next worker start tries again, and until then the next     */
/* post or park does the retrying, and nobody beats.                        */
/* ------------------------------------------------------------------------ */

#define POOL__RETRY_FIRST_NS 1000000
#define POOL__RETRY_MAX_NS 8000000
#define POOL__MAX_HEARTBEAT_US 1000000
#ifndef POOL_HEARTBEAT_DEFAULT_US
#define POOL_HEARTBEAT_DEFAULT_US 0 /* none: idle workers ask (see the lazy joins section) */
#endif
#if POOL_HEARTBEAT_DEFAULT_US < 0 || POOL_HEARTBEAT_DEFAULT_US > 1000000
#error "POOL_HEARTBEAT_DEFAULT_US must be 0 (none) to 1000000 microseconds"
#endif

/* Under m's lock: whether a heartbeat is due from now on; if not, the
   heartbeat stops until a worker is busy again (see the lazy joins
   section). */
static int pool__heart_should_beat(pool *p) {
    pool__monitor *m = &p->monitor;
    if (pool__any_busy(p)) return 1;
    /* seq_cst: the monitor's store half of the heartbeat's pair. */
    POOL__STORE(&m->heart_idle, 1, POOL__SEQ_CST);
    if (!pool__any_busy(p)) return 0;
    POOL__STORE(&m->heart_idle, 0, POOL__RELAXED);
    return 1;
}

/* The earlier of two deadlines, 0 meaning none. */
static uint64_t pool__earlier(uint64_t a, uint64_t b) { return !a ? b : !b ? a : a < b ? a : b; }

static int pool__short_of_threads(pool *p) {
    /* Relaxed: a hint; pool__spawn decides under its lock. */
    return POOL__LOAD(&p->threads.started, POOL__RELAXED) <
               pool__threads_wanted(p, POOL__RELAXED) &&
           pool__work_visible(p);
}

static pool__thread_result POOL__THREAD_CALL pool__monitor_main(void *arg) {
    pool *p = (pool *)arg;
    pool__monitor *m = &p->monitor;
    uint64_t backoff = POOL__RETRY_FIRST_NS, next_retry = 0, next_beat = 0;
    char name[16];
    pool__format_thread_name(name, p->name, -1, "mon");
    pool__thread_set_name(name);
    pool__cpu_set_apply(&p->allowed); /* not its creator's, which may be pinned */
    pool__mutex_lock(&m->lock);
    while (!m->stop) {
        uint64_t now = pool__now_ns(), deadline;
        if (!m->retry) backoff = POOL__RETRY_FIRST_NS, next_retry = 0;
        else if (!next_retry) next_retry = now + backoff;
        if (p->heartbeat_ns && !next_beat && pool__heart_should_beat(p))
            next_beat = now + p->heartbeat_ns;
        deadline = pool__earlier(next_retry, next_beat);
        if (!deadline) {
            pool__cond_wait(&m->wake, &m->lock);
            continue;
        }
        if (!pool__cond_wait_until(&m->wake, &m->lock, deadline)) continue;
        now = pool__now_ns();
        if (next_beat && now >= next_beat) {
            next_beat = 0;
            pool__mutex_unlock(&m->lock);
            pool__heartbeat(p);
            pool__mutex_lock(&m->lock);
        }
        if (next_retry && now >= next_retry) {
            m->retry = 0, next_retry = 0;
            pool__mutex_unlock(&m->lock);
            if (pool__short_of_threads(p)) pool__spawn(p, POOL__LOCK_WAIT, POOL__SPARES);
            pool__mutex_lock(&m->lock);
            if (m->retry && backoff < POOL__RETRY_MAX_NS) backoff *= 2;
        }
    }
    pool__mutex_unlock(&m->lock);
    return 0;
}

/* pool_destroy, once no thread can be started any more. */
static void pool__monitor_stop(pool *p) {
    if (!p->monitor.running) return;
    pool__mutex_lock(&p->monitor.lock);
    p->monitor.stop = 1;
    pool__cond_signal(&p->monitor.wake);
    pool__mutex_unlock(&p->monitor.lock);
    pool__thread_join(p->monitor.thread);
}

/* ------------------------------------------------------------------------ */
/* Blocking pool                                                 >>blocking */
/*                                                                          */
/* Blocking work (file I/O, locks, sleeps) must not run on the workers:     */
/* every blocked worker is a core's worth of fork-join lost. It runs on     */
/* separate threads, started on demand up to max_blocking_threads and gone  */
/* after blocking_keep_alive_ms idle, with the three guarantees below that  */
/* such pools are easy to get wrong:                                        */
/*                                                                          */
/* One mutex guards a FIFO of intrusive tasks, the thread counts and        */
/* `notified`; a condvar wakes idle threads. A blocking task takes          */
/* microseconds at the least, so a lock per task is cheap, and it keeps     */
/* keep-alive and shutdown simple to reason about.                          */
/*                                                                          */
/* `notified` counts idle threads that were signalled and are not awake     */
/* yet. A submit signals only while idle > notified, so an idle thread that */
/* an earlier submit claimed is not counted twice: a burst starts threads   */
/* instead of queueing behind the one idle thread. A thread that leaves its */
/* wait for any reason (signal, spurious wake-up, timeout, a task it saw)   */
/* consumes one notification if there is one, so the count never stays     */
/* too high, and a thread whose keep-alive ran out exits only if nobody     */
/* signalled it and nothing is queued.                                      */
/*                                                                          */
/* A thread that finished a task polls the queue for a few microseconds    */
/* before it waits (`spinning`): blocking work often comes in a stream, and */
/* a signalled condvar costs a wake-up on each side. A submit leaves a task */
/* to the spinners, without a signal, while there are at least as many     */
/* spinners as queued tasks; a spinner that stops polling re-checks the     */
/* queue under the lock before it waits, so such a task is always taken.    */
/*                                                                          */
/* Nothing queued waits forever: a thread exits only when the queue is      */
/* empty (checked under the lock), and a submit that finds no thread and    */
/* cannot start one does not queue the task but returns EAGAIN (queued,     */
/* it would wait forever).                                                  */
/*                                                                          */
/* No handle is left unjoined: an exiting thread leaves its own handle for  */
/* the next one to join, and joins the one left before it (a chain).        */
/* pool_destroy joins the last; by induction that one joined all the rest.  */
/* The last thread to leave on keep-alive detaches itself instead, since    */
/* nobody may come after it.                                                */
/*                                                                          */
/* Shutdown runs every queued task; pool_destroy_fast skips the jobs not    */
/* marked mandatory, and tells their owners: on_cancel is called and        */
/* pool_wait_blocking_job returns ECANCELED (dropped silently, a job would  */
/* leave whoever waits for it waiting forever).                             */
/* ------------------------------------------------------------------------ */

#define POOL__DEFAULT_MAX_BLOCKING 512
#define POOL__DEFAULT_KEEP_ALIVE_MS 10000

static int pool__blocking_init(pool__blocking *b, const pool_config *cfg) {
    b->max_threads = cfg->max_blocking_threads ? (uint32_t)cfg->max_blocking_threads
                                               : POOL__DEFAULT_MAX_BLOCKING;
    b->keep_alive_ns = (uint64_t)(cfg->blocking_keep_alive_ms ? cfg->blocking_keep_alive_ms
                                                              : POOL__DEFAULT_KEEP_ALIVE_MS) *
                       1000000u;
    if (pool__mutex_init(&b->lock) != 0) return ENOMEM;
    if (pool__cond_init(&b->work_ready) != 0) {
        pool__mutex_destroy(&b->lock);
        return ENOMEM;
    }
    if (pool__cond_init(&b->all_exited) != 0) {
        pool__cond_destroy(&b->work_ready);
        pool__mutex_destroy(&b->lock);
        return ENOMEM;
    }
    return 0;
}

static void pool__blocking_free(pool__blocking *b) {
    pool__cond_destroy(&b->all_exited);
    pool__cond_destroy(&b->work_ready);
    pool__mutex_destroy(&b->lock);
}

/* The stats are written under the lock (so one writer at a time) and
   read without it: a relaxed load and store, as for POOL__COUNT. */
#define POOL__BLOCKING_COUNT(b, field, n) POOL__COUNTER_ADD((b)->stats.field, (uint64_t)(n))

/* Queue operations, under the lock. */
static void pool__blocking_push(pool__blocking *b, pool_task *t) {
    t->pool__next = NULL;
    if (b->tail) b->tail->pool__next = t;
    else b->head = t;
    b->tail = t;
    POOL__BLOCKING_COUNT(b, queued, 1);
}

static pool_task *pool__blocking_pop(pool__blocking *b) {
    pool_task *t = b->head;
    if (!t) return NULL;
    b->head = t->pool__next;
    if (!b->head) b->tail = NULL;
    POOL__BLOCKING_COUNT(b, queued, -1);
    return t;
}

/* A thread that just ran a task polls the queue briefly, with the lock
   released; returns with it held. */
#define POOL__BLOCKING_SPIN_NS 20000

static void pool__blocking_spin(pool__blocking *b) {
    uint64_t until = pool__now_ns() + POOL__BLOCKING_SPIN_NS;
    int round;
    b->spinning++;
    pool__mutex_unlock(&b->lock);
    /* Relaxed: a hint; the queue is read under the lock afterwards. */
    for (round = 0; !POOL__LOAD(&b->stats.queued, POOL__RELAXED); round++) {
        POOL__CPU_RELAX();
        if (round % 64 == 63 && pool__now_ns() > until) break;
    }
    pool__mutex_lock(&b->lock);
    b->spinning--;
}

/* An idle thread waits for a task, under the lock. Returns 0 if its
   keep-alive ran out with nothing to do: the thread should exit. */
static int pool__blocking_idle_wait(pool__blocking *b) {
    uint64_t deadline = pool__now_ns() + b->keep_alive_ns;
    int timed_out = 0;
    POOL__BLOCKING_COUNT(b, idle, 1);
    while (!b->head && !b->shutdown && !b->notified && !timed_out)
        timed_out = pool__cond_wait_until(&b->work_ready, &b->lock, deadline);
    POOL__BLOCKING_COUNT(b, idle, -1);
    if (b->notified) {
        b->notified--;
        return 1;
    }
    return b->head || b->shutdown || !timed_out;
}

/* Jobs. A job's refs count its runs still to finish and the waiter, as a
   scope's pending count does: whichever comes last sets the latch. So the
   waiter registers (pool__latch_init) at any time, before or after the
   runs finish, and the setter never reads a half-written latch: the
   waiter writes it before its release decrement, the setter reads it
   after its acquire decrement. A submission is in flight from its submit
   until its wait returns (pool__pool is set). A job submitted again while
   one is in flight, from its own run or after a run nobody waited for,
   adds a run to wait for instead of starting over: the wait returns after
   the last one. */
static void pool__blocking_job_finish(pool_blocking_job *job, int status) {
    /* Relaxed: published by the release decrement below. A skipped run's
       ECANCELED stays, whatever runs finish after it. */
    if (status) POOL__STORE(&job->pool__status, status, POOL__RELAXED);
    /* acq_rel: release publishes the job's effects and status, acquire
       sees the waiter's latch fields. */
    if (POOL__FETCH_SUB(&job->pool__refs, 1, POOL__ACQ_REL) == 1) pool__latch_set(&job->pool__done);
}

static pool_blocking_job *pool__blocking_job_of(pool_task *t) {
    return (pool_blocking_job *)(void *)((char *)t - offsetof(pool_blocking_job, pool__task));
}

static void pool__blocking_job_run(pool_task *t) {
    pool_blocking_job *job = pool__blocking_job_of(t);
    pool *p = POOL__LOAD(&job->pool__pool, POOL__RELAXED); /* set by the submit before */
    job->run(job);
    /* Counted before the waiter can return, so that it sees its own job. */
    POOL__FETCH_ADD(&p->blocking.stats.run, 1, POOL__RELAXED);
    pool__blocking_job_finish(job, 0);
}

static pool__thread_result POOL__THREAD_CALL pool__blocking_main(void *arg) {
    pool *p = (pool *)arg;
    pool__blocking *b = &p->blocking;
    pool__thread previous;
    int have_previous;
    char name[16];
    pool__format_thread_name(name, p->name, -1, "blk");
    pool__thread_set_name(name);
    pool__cpu_set_apply(&p->allowed); /* not its creator's, which may be pinned */
    pool__blocking_home = p;
    pool__mutex_lock(&b->lock);
    for (;;) {
        pool_task *t = pool__blocking_pop(b);
        if (t) {
            int is_job = t->run == pool__blocking_job_run; /* t may be gone after run */
            pool__mutex_unlock(&b->lock);
            uint64_t outer_body;
            pool__unmark_queued(t);
            outer_body = pool__outside_body_begin(); /* see pool__outside_runs_inline */
            POOL__TRACE(p, POOL__EV_BLOCKING_BEGIN, 0);
            t->run(t);
            POOL__TRACE(p, POOL__EV_BLOCKING_END, 0);
            pool__outside_body_end(outer_body);
            pool__mutex_lock(&b->lock);
            if (!is_job) POOL__FETCH_ADD(&b->stats.run, 1, POOL__RELAXED);
            if (!b->head && !b->shutdown) pool__blocking_spin(b);
        } else if (b->shutdown || !pool__blocking_idle_wait(b)) {
            break;
        }
    }
#ifdef POOL_TRACE
    pool__trace_release_lane(p);
#endif
    POOL__BLOCKING_COUNT(b, threads, -1);
    have_previous = b->have_last_exited, previous = b->last_exited;
    if (b->stats.threads == 0 && !b->shutdown) {
        /* The last one out on keep-alive: no thread may exit after it to
           join it, and the pool may never be destroyed (the default pool
           is not), so it detaches itself and leaves nothing behind. */
        b->have_last_exited = 0;
        pool__thread_detach_self();
    } else {
        b->have_last_exited = 1, b->last_exited = pool__thread_self();
    }
    if (b->stats.threads == 0) pool__cond_broadcast(&b->all_exited);
    pool__mutex_unlock(&b->lock);
    /* From here on p may be freed: pool_destroy waits only for the lock
       and then joins this thread, which first joins its predecessor. */
    if (have_previous) pool__thread_join(previous);
    pool__blocking_home = NULL;
    return 0;
}

/* Under the lock. */
static int pool__blocking_spawn(pool *p) {
    pool__blocking *b = &p->blocking;
    pool__thread t;
    memset(&t, 0, sizeof t);
    if (pool__thread_start(&t, pool__blocking_main, p, p->stack_size) != 0) {
        POOL__BLOCKING_COUNT(b, failed, 1);
        return EAGAIN;
    }
    pool__thread_forget(t); /* joined through pool__thread_self, see pool__blocking_main */
    POOL__BLOCKING_COUNT(b, threads, 1);
    POOL__BLOCKING_COUNT(b, started, 1);
    return 0;
}

/* Queues t for a blocking thread: an idle one nobody has claimed yet, else
   a new one below the cap, else the first to finish its task. */
static int pool__blocking_submit(pool *p, pool_task *t) {
    pool__blocking *b = &p->blocking;
    int rc = 0;
    pool__mutex_lock(&b->lock);
    if (b->shutdown) {
        rc = ECANCELED;
    } else if (b->stats.queued < b->spinning) {
        pool__blocking_push(b, t); /* a spinner takes it */
    } else if (b->stats.idle > b->notified) {
        b->notified++;
        pool__blocking_push(b, t);
        pool__cond_signal(&b->work_ready);
    } else if ((b->stats.threads < b->max_threads && pool__blocking_spawn(p) == 0) ||
               b->stats.threads > 0) {
        pool__blocking_push(b, t);
    } else {
        rc = EAGAIN; /* no thread, and none could be started */
    }
    pool__mutex_unlock(&b->lock);
    return rc;
}

/* Stops the blocking pool: no more submissions, every queued task run (or
   with skip_optional, the jobs not marked mandatory skipped and reported),
   every thread joined. */
static void pool__blocking_shutdown(pool *p, int skip_optional) {
    pool__blocking *b = &p->blocking;
    pool_task *skipped = NULL, **link, *t;
    pool__mutex_lock(&b->lock);
    b->shutdown = 1;
    for (link = &b->head, b->tail = NULL; (t = *link) != NULL;) {
        if (skip_optional && t->run == pool__blocking_job_run &&
            !pool__blocking_job_of(t)->mandatory) {
            *link = t->pool__next;
            t->pool__next = skipped;
            skipped = t;
            POOL__BLOCKING_COUNT(b, queued, -1);
        } else {
            b->tail = t;
            link = &t->pool__next;
        }
    }
    pool__cond_broadcast(&b->work_ready);
    pool__mutex_unlock(&b->lock);

    for (; skipped; skipped = t) {
        pool_blocking_job *job = pool__blocking_job_of(skipped);
        t = skipped->pool__next;
        pool__unmark_queued(skipped);
        if (job->on_cancel) job->on_cancel(job);
        POOL__FETCH_ADD(&b->stats.skipped, 1, POOL__RELAXED);
        pool__blocking_job_finish(job, ECANCELED);
    }

    pool__mutex_lock(&b->lock);
    while (b->stats.threads > 0) pool__cond_wait(&b->all_exited, &b->lock);
    pool__mutex_unlock(&b->lock);
    if (b->have_last_exited) pool__thread_join(b->last_exited);
}

/* ------------------------------------------------------------------------ */
/* fork(): the pools a child inherits                                >>fork */
/* ------------------------------------------------------------------------ */

/* fork(). The child of a fork has one thread, the one that called fork;
   every other thread of the parent, workers included, is gone. A pool
   inherited from the parent therefore cannot run anything, and waiting
   on it would hang: such a pool refuses work (ECHILD) or has its caller
   run the work (join, call, parallel_for), and nothing else touches it.
   The child's default pool starts afresh, lazily, like the parent's.

   A pool is inherited when its fork_generation differs from the
   process's, which the child handler increments. Relaxed loads suffice:
   the handler runs in the child before any thread other than the caller
   exists, and in the parent the value never changes. The prepare handler
   holds the default pool's lock across fork, so the child never inherits
   it locked; with POOL_NO_FUTEX the child resets every wait bucket. */
static uint32_t pool__fork_generation;
static pool *pool__default_pool;
static pool__mutex pool__default_lock = POOL__MUTEX_INIT;

static int pool__inherited(const pool *p) {
    return p->fork_generation != POOL__LOAD(&pool__fork_generation, POOL__RELAXED);
}

#if !defined(_WIN32)
static void pool__atfork_prepare(void) { pool__mutex_lock(&pool__default_lock); }

static void pool__atfork_parent(void) { pool__mutex_unlock(&pool__default_lock); }

/* The parents' default pools, in a child: their threads are gone and their
   locks may be held, so they can never be destroyed, but they are kept on
   this list rather than dropped (nothing points at them otherwise, and a
   leak checker would call them lost). */
static pool *pool__inherited_defaults;

static void pool__atfork_child(void) {
    pool *d = POOL__LOAD(&pool__default_pool, POOL__RELAXED); /* one thread here */
    POOL__STORE(&pool__fork_generation, pool__fork_generation + 1, POOL__RELAXED);
    if (d) {
        d->inherited_next = pool__inherited_defaults;
        pool__inherited_defaults = d;
    }
    POOL__STORE(&pool__default_pool, NULL, POOL__RELAXED);
    /* Forked from inside a task: this thread is no pool's worker any more. */
    pool__set_current(NULL);
    pool__blocking_home = NULL;
    pool__wait_table_reset_all();
    pool__mutex_unlock(&pool__default_lock);
}

static void pool__atfork_register(void) {
    pthread_atfork(pool__atfork_prepare, pool__atfork_parent, pool__atfork_child);
}
#else
static void pool__atfork_register(void) {} /* no fork() */
#endif

static pool__once_flag pool__atfork_once = POOL__ONCE_INIT;

/* ------------------------------------------------------------------------ */
/* Public API: lifecycle                                    >>api-lifecycle */
/* ------------------------------------------------------------------------ */

/* $POOL_NUM_THREADS, else the CPUs the pool may use, capped by the
   cgroup's CPU quota. */
static int pool__default_num_threads(const pool__cpu_set *allowed) {
    const char *env = getenv("POOL_NUM_THREADS");
    int n, quota;
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == 0 && v >= 1 && v <= 65535) return (int)v;
    }
    n = allowed->count;
    quota = pool__cgroup_cpu_limit();
    if (quota > 0 && quota < n) n = quota;
    return n > 65535 ? 65535 : n;
}

/* heartbeat_us as the pool keeps it: 0 is none. */
static uint64_t pool__heartbeat_ns(unsigned heartbeat_us) {
    const char *env = getenv("POOL_HEARTBEAT_US");
    if (heartbeat_us == POOL_HEARTBEAT_OFF) return 0;
    if (heartbeat_us) return (uint64_t)heartbeat_us * 1000;
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == 0 && v >= 0 && v <= POOL__MAX_HEARTBEAT_US) return (uint64_t)v * 1000;
    }
    return (uint64_t)POOL_HEARTBEAT_DEFAULT_US * 1000; /* 0: none */
}

/* $POOL_SPIN_US if it is a number up to POOL__MAX_SPIN_US, else 0. */
static unsigned pool__default_spin_us(void) {
    const char *env = getenv("POOL_SPIN_US");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == 0 && v >= 0 && v <= POOL__MAX_SPIN_US) return (unsigned)v;
    }
    return 0;
}

/* Whether $POOL_SPAWN_THROTTLE_OUTSIDE is 1. */
static int pool__default_throttle_outside(void) {
    const char *env = getenv("POOL_SPAWN_THROTTLE_OUTSIDE");
    return env && strcmp(env, "1") == 0;
}

static void pool__free_pool(pool *p) {
    void *user = p->user;
    uint32_t k;
    while (p->copy_slabs) {
        struct pool__copy_slab *next = p->copy_slabs->next;
        pool__free_aligned(p->copy_slabs, user);
        p->copy_slabs = next;
    }
    for (k = 0; p->workers && k < p->num_slots; k++)
        if (pool__slot(p, k)) pool__worker_free(p, pool__slot(p, k));
#ifdef POOL_TRACE
    pool__trace_free(p);
#endif
    if (p->cpus) pool__free(p->cpus, user);
    pool__free(p->workers, user);
    pool__free_aligned(p, user);
}

/* A CPU list from pool_config: 0 (none, or valid), or EINVAL. */
static int pool__check_cpus(const pool_config *cfg) {
    int i;
    if (cfg->num_cpus < 0 || (cfg->num_cpus > 0 && !cfg->cpus)) return EINVAL;
    for (i = 0; i < cfg->num_cpus; i++)
        if (cfg->cpus[i] < 0 || cfg->cpus[i] > POOL__MAX_CPU) return EINVAL;
    return 0;
}

/* The blocking pool's part of create and destroy; see its section. */

#define POOL__DEFAULT_MAX_SPARES 256

/* The locks and condition variables of p besides the blocking pool's:
   0, or ENOMEM with none of them left initialised. */
static int pool__sync_init(pool *p) {
    if (pool__mutex_init(&p->spawn_lock) != 0) return ENOMEM;
    if (pool__mutex_init(&p->help_lock) != 0) goto no_help_lock;
    if (pool__mutex_init(&p->monitor.lock) != 0) goto no_monitor_lock;
    if (pool__cond_init(&p->monitor.wake) != 0) goto no_monitor_wake;
    if (pool__mutex_init(&p->copy_lock) != 0) goto no_copy_lock;
    return 0;
no_copy_lock:
    pool__cond_destroy(&p->monitor.wake);
no_monitor_wake:
    pool__mutex_destroy(&p->monitor.lock);
no_monitor_lock:
    pool__mutex_destroy(&p->help_lock);
no_help_lock:
    pool__mutex_destroy(&p->spawn_lock);
    return ENOMEM;
}

static void pool__sync_free(pool *p) {
    pool__mutex_destroy(&p->copy_lock);
    pool__cond_destroy(&p->monitor.wake);
    pool__mutex_destroy(&p->monitor.lock);
    pool__mutex_destroy(&p->help_lock);
    pool__mutex_destroy(&p->spawn_lock);
}

POOL__IMPL int pool_create(pool **out, const pool_config *cfg) {
    static const pool_config defaults = {0, 0, NULL, NULL, NULL, NULL, 0, 0, NULL,
                                         0, 0, 0,    0,    0,    0,    0, 0};
    pool__cpu_set allowed;
    pool *p;
    pool__worker *w;
    size_t n, spares;
    if (!out) return EINVAL;
    *out = NULL;
    if (!cfg) cfg = &defaults;
    if (cfg->num_threads < 0 || cfg->num_threads > 65535 || cfg->max_blocking_threads < 0 ||
        cfg->max_spare_threads < 0 || cfg->max_spare_threads > 65535 ||
        cfg->spin_us > POOL__MAX_SPIN_US ||
        (cfg->heartbeat_us > POOL__MAX_HEARTBEAT_US && cfg->heartbeat_us != POOL_HEARTBEAT_OFF) ||
        (cfg->spawn_throttle > 65535 && cfg->spawn_throttle != POOL_SPAWN_THROTTLE_OFF) ||
        cfg->external_slots < POOL_EXTERNAL_SLOTS_NONE || cfg->external_slots > POOL__MAX_SLOTS ||
        cfg->active_threads < 0 || !pool__stack_size_ok(cfg->stack_size) ||
        cfg->spawn_throttle_outside < POOL_SPAWN_THROTTLE_OUTSIDE_OFF ||
        cfg->spawn_throttle_outside > 1 || pool__check_cpus(cfg) != 0)
        return EINVAL;
    pool__call_once(&pool__atfork_once, pool__atfork_register);
    pool__fence_setup();
    /* The CPUs of the calling thread, unless it is a worker, which may be
       pinned: then those of its pool. */
    if ((w = pool__current()) != NULL) allowed = w->join.home->allowed;
    else pool__cpu_set_get(&allowed);
    n = (size_t)(cfg->num_threads ? cfg->num_threads : pool__default_num_threads(&allowed));
    if ((size_t)cfg->active_threads > n) return EINVAL;
    /* The sleep counters count every thread in 16 bits. */
    spares = (size_t)(cfg->max_spare_threads ? cfg->max_spare_threads : POOL__DEFAULT_MAX_SPARES);
    if (n + spares > 65535) spares = 65535 - n;
    p = (pool *)pool__alloc_aligned(sizeof *p, cfg->user);
    if (!p) return ENOMEM;
    memset(p, 0, sizeof *p);
    p->allowed = allowed;
    p->user = cfg->user;
    p->fork_generation = POOL__LOAD(&pool__fork_generation, POOL__RELAXED);
    p->num_threads = (int)n;
    p->threads.active = cfg->active_threads ? (uint32_t)cfg->active_threads : (uint32_t)n;
    p->spin_ns = (uint64_t)(cfg->spin_us ? cfg->spin_us : pool__default_spin_us()) * 1000;
    /* A busy worker keeps at least one task queued for each other thread. */
    p->spawn_throttle = cfg->spawn_throttle               ? cfg->spawn_throttle
                        : n > POOL_SPAWN_THROTTLE_DEFAULT ? (uint32_t)n
                                                          : POOL_SPAWN_THROTTLE_DEFAULT;
    p->heartbeat_ns = pool__heartbeat_ns(cfg->heartbeat_us);
    p->throttle_outside = cfg->spawn_throttle_outside ? cfg->spawn_throttle_outside == 1
                                                      : pool__default_throttle_outside();
    p->max_workers = (uint32_t)(n + spares);
    p->num_slots = cfg->external_slots == POOL_EXTERNAL_SLOTS_NONE ? 0
                   : cfg->external_slots                           ? (uint32_t)cfg->external_slots
                                                                   : POOL_EXTERNAL_SLOTS_DEFAULT;
    p->workers = (pool__worker **)pool__alloc((p->max_workers + p->num_slots) * sizeof *p->workers,
                                              cfg->user);
    if (p->workers) memset(p->workers, 0, (p->max_workers + p->num_slots) * sizeof *p->workers);
    if (cfg->num_cpus) {
        p->cpus = (int *)pool__alloc((size_t)cfg->num_cpus * sizeof(int), cfg->user);
        if (p->cpus) memcpy(p->cpus, cfg->cpus, (size_t)cfg->num_cpus * sizeof(int));
        p->num_cpus = cfg->num_cpus;
    }
    if (!p->workers || (cfg->num_cpus && !p->cpus) || pool__slots_init(p) != 0 ||
#ifdef POOL_TRACE
        pool__trace_init(p) != 0 ||
#endif
        pool__sync_init(p) != 0) {
        pool__free_pool(p);
        return ENOMEM;
    }
    if (pool__blocking_init(&p->blocking, cfg) != 0) {
        pool__sync_free(p);
        pool__free_pool(p);
        return ENOMEM;
    }
    p->stack_size = cfg->stack_size;
    strncpy(p->name, cfg->name ? cfg->name : "pool", sizeof p->name - 1);
    p->on_thread_start = cfg->on_thread_start;
    p->on_thread_exit = cfg->on_thread_exit;
    *out = p;
    return 0;
}

/* pool_destroy runs every accepted job; pool_destroy_fast skips the
   blocking jobs not marked mandatory. */
typedef enum { POOL__DESTROY_RUN_ALL, POOL__DESTROY_SKIP_OPTIONAL } pool__destroy_mode;

static int pool__destroy(pool *p, pool__destroy_mode mode) {
    pool__worker *w = pool__current();
    pool_task *t;
    uint32_t i, started;
    if (!p) return EINVAL;
    if (pool__inherited(p)) return ECHILD; /* its threads are the parent's */
    /* From a task of p, on whatever thread: the task would return into a
       freed pool, or p's threads would wait for the caller's own task. */
    if ((w && w->join.home == p) || pool__blocking_home == p || pool__inside_task_of(p, NULL))
        return EDEADLK;
    /* A worker of another pool blocks here for as long as p's work takes:
       its own pool gets a spare meanwhile (p's tasks may call into it). */
    if (w) pool__park_begin(w);
    /* Refuse new submissions, then close the injector: work accepted
       before the close is taken by a worker or by the drain below. */
    POOL__STORE(&p->closing, 1, POOL__RELEASE); /* read by pool_submit */
    /* Calls under way in external slots finish first, helped by the
       workers; later calls are injected, and refused with the injector. */
    pool__slots_close(p);
    pool__injector_close(&p->injector_high);
    pool__injector_close(&p->injector);
    /* Blocking tasks first: the workers keep running while they finish,
       so a task that waits for one, or that one waits for, completes. */
    pool__blocking_shutdown(p, mode == POOL__DESTROY_SKIP_OPTIONAL);
    pool__mutex_lock(&p->spawn_lock);
    p->spawn_closed = 1;
    started = p->threads.started;
    pool__mutex_unlock(&p->spawn_lock);
    pool__monitor_stop(p);
    /* Pinned tasks run only on their worker: accepted ones come before the
       close, which the worker sees before it leaves (see "Pinned tasks"). */
    for (i = 0; i < started; i++) pool__injector_close(&p->workers[i]->pinned);
    /* Release: a worker that sees it also sees the closed injectors. */
    POOL__STORE(&p->terminating, 1, POOL__RELEASE);
    pool__wake_retired(p); /* retired workers leave too (see "Retirement") */
    for (i = 0; i < started; i++) pool__notify_worker(p->workers[i]);
    for (i = 0; i < started; i++) pool__thread_join(p->workers[i]->thread);
    /* Work injected after the last worker's last look, or while no thread
       could be started, runs here, one task at a time: a task that waits
       runs its own work itself (release: its waits see workers_gone). */
    POOL__STORE(&p->workers_gone, 1, POOL__RELEASE);
    while ((t = pool__take_own(p, NULL)) != NULL) pool__execute_helping(p, t);
    for (i = 0; i < started; i++) pool__worker_free(p, p->workers[i]);
    pool__sync_free(p);
    pool__blocking_free(&p->blocking);
    pool__free_pool(p);
    if (w) pool__park_end(w);
    return 0;
}

POOL__IMPL int pool_destroy(pool *p) { return pool__destroy(p, POOL__DESTROY_RUN_ALL); }

POOL__IMPL int pool_destroy_fast(pool *p) { return pool__destroy(p, POOL__DESTROY_SKIP_OPTIONAL); }

/* ------------------------------------------------------------------------ */
/* Public API: the default pool                               >>api-default */
/* ------------------------------------------------------------------------ */

/* NULL means the default pool, created once on first use (once per
   process: a forked child makes its own). NULL is returned only if it
   could not be created (out of memory); callers then run the work on the
   calling thread. */
/* d becomes the default pool, before any other thread can see it: its
   external slots (its only workers yet) and the workers it makes later
   learn it in their join views, so that a C++ join given a NULL pool on
   one of them is inline. */
static void pool__mark_default(pool *d) {
    uint32_t k;
    d->is_default = 1;
    for (k = 0; k < d->num_slots; k++) d->workers[d->max_workers + k]->join.home_is_default = 1;
}

static pool *pool__resolve(const pool *p) {
    pool *d;
    if (p) return (pool *)p;
    /* Acquire: pairs with the release store below. */
    d = POOL__LOAD(&pool__default_pool, POOL__ACQUIRE);
    if (d) return d;
    pool__mutex_lock(&pool__default_lock);
    d = POOL__LOAD(&pool__default_pool, POOL__RELAXED); /* the lock orders it */
    if (!d && pool_create(&d, NULL) == 0) {
        pool__mark_default(d);
        POOL__STORE(&pool__default_pool, d, POOL__RELEASE);
    }
    pool__mutex_unlock(&pool__default_lock);
    return d;
}

/* ------------------------------------------------------------------------ */
/* Public API: fork-join                                    >>api-fork-join */
/* ------------------------------------------------------------------------ */

/* Runs fn(arg) on p and waits, from a thread that is not a worker of p: on
   this thread in an external slot if it is outside every pool and a slot
   is free (see their section; not with on_worker), else injected, and the
   caller waits as the waiting section says (it runs none of p's other
   work). */
static void pool__call_remote(pool *p, pool_fn fn, void *arg, int on_worker) {
    pool__call_job job;
    pool__awaited wt;
    pool__worker *slot;
    int awake = 0;
    if (pool__inherited(p)) { /* its threads stayed in the parent */
        fn(arg);
        return;
    }
    pool__call_job_init(&job, fn, arg);
    /* From a task this thread runs outside every pool's workers (one the
       throttle ran at once, or one it helps with), the call is part of
       that task: a wait in it for the task's scope, on whatever thread,
       is refused (EDEADLK) instead of waiting for itself. */
    if (!pool__current() && pool__helping_top) job.enclosing = pool__helping_top->scope;
    if (!on_worker && !pool__current() && (slot = pool__slot_take(p)) != NULL) {
        pool__run_in_slot(p, slot, &job);
        return;
    }
    if (pool__inject(p, &p->injector, &job.task, &job.task, 1, POOL__INJECT_NEW, &awake) != 0) {
        /* p is being destroyed: its workers may be gone. */
        fn(arg);
        return;
    }
    wt.done = &job.done;
    wt.runner = p;
    wt.tag = NULL;
    wt.thief = NULL;
    wt.scope = NULL;
    wt.own = &job.task;
    pool__wait_elsewhere(pool__current(), &wt, awake);
}

/* The join's second half was not on top of w's deque after a returned: a
   left tasks above it (detached ones, spawns into scopes it does not wait
   for). They belong to no wait, so they are handed to the pool, and the
   half is taken back if it is still there (returns 1), or else waited for. */
POOL__COLD int pool__join_slow(pool__worker *w, pool__call_job *job_b, pool_task *t) {
    pool_task *first = NULL, *last = NULL;
    size_t n = 0;
    while (t && t != &job_b->task) {
        if (last) last->pool__next = t;
        else first = t;
        last = t;
        n++;
        t = pool__deque_pop(&w->deque);
    }
    if (first) pool__hand_off(w->join.home, first, last, n);
    if (t) return 1;
    pool__wait_join(w, job_b);
    return 0;
}

/* The join view's slow paths (pool__join_begin and _end call them through
   the view, from C and C++ alike). */

/* The half of frame f is pushed at its join's start (see "What stays
   eager" in the lazy joins section); out of memory, it stays lazy. */
static void pool__join_push_half(pool__join_view *v, pool__lazy_join *f) {
    pool__worker *w = pool__worker_of_view(v);
    if (pool__lazy_push(w, f) == 0) pool__new_local_jobs(w, 1);
}

static void pool__join_promote(pool__join_view *v) { pool__promote(pool__worker_of_view(v)); }

/* f's half was pushed: popped back from the deque, or if it was stolen,
   waited for (leapfrogging, see the waiting section). pool__join_end
   calls it for the view's newest promoted frame only, which is how it
   knows f was pushed: any path that left a newer frame there, or took f
   off early, would make a pushed half look lazy, run twice. */
static int pool__join_take_back(pool__join_view *v, pool__lazy_join *f) {
    pool__worker *w = pool__worker_of_view(v);
    pool_task *t;
    w->join.promoted = f->promoted_before;
    t = pool__deque_pop(&w->deque);
    return t == &f->job.task || pool__join_slow(w, &f->job, t);
}

/* w's view, for joins on its thread (see the inline join in the API). */
static void pool__join_view_init(pool__worker *w, pool *p) {
    w->join.home = p;
    w->join.home_is_default = p->is_default;
    w->join.promote_wanted = &w->promote_wanted;
    w->join.push_half = pool__join_push_half;
    w->join.promote = pool__join_promote;
    w->join.take_back = pool__join_take_back;
}

/* The heart of fork-join, on a worker of the pool: record b (lazy: see the
   lazy joins section; eager: pushed where thieves can take it at once),
   run a, then run b, taken back from the list with a plain load or from
   the deque, or, if it was stolen, wait for its thief. A half taken back
   is a plain call, neither counted nor traced: a counter's store to load
   chain here would run from join to join. */
POOL__INLINE void pool__join_local(pool__worker *w, pool_fn a, void *a_arg, pool_fn b, void *b_arg,
                                   pool__fork mode) {
    pool__lazy_join f;
    POOL__INVARIANT(w == pool__current()); /* the list and the deque are w's own */
    pool__join_begin(&w->join, &f, b, b_arg, mode == POOL__FORK_EAGER);
    a(a_arg);
    POOL__INVARIANT(w->join.newest == &f); /* a's joins have all ended */
    if (pool__join_end(&w->join, &f)) b(b_arg);
}

typedef struct pool__join_args {
    pool *p;
    pool_fn a, b;
    void *a_arg, *b_arg;
} pool__join_args;

/* A join from outside the pool, as one injected job. It normally runs on
   a worker of p; run by its own caller because p has no worker (see
   pool__wait_elsewhere) or by pool_destroy's drain, it runs a then b. */
static void pool__join_trampoline(void *arg) {
    pool__join_args *j = (pool__join_args *)arg;
    pool__worker *w = pool__current();
    if (w && w->join.home == j->p) {
        pool__join_local(w, j->a, j->a_arg, j->b, j->b_arg, POOL__FORK_LAZY);
    } else {
        j->a(j->a_arg);
        j->b(j->b_arg);
    }
}

/* The worker of p running this thread, or NULL. */
static pool__worker *pool__worker_of(pool *p) {
    pool__worker *w = pool__current();
    return w && w->join.home == p ? w : NULL;
}

POOL__IMPL void(pool_join)(pool *p, pool_fn a, void *a_arg, pool_fn b, void *b_arg) {
    pool__worker *w;
    if (!a || !b) { /* nothing to run in parallel */
        if (a) a(a_arg);
        if (b) b(b_arg);
        return;
    }
    p = pool__resolve(p);
    if (!p) {
        a(a_arg);
        b(b_arg);
    } else if ((w = pool__worker_of(p)) != NULL) {
        pool__join_local(w, a, a_arg, b, b_arg, POOL__FORK_LAZY);
    } else {
        pool__join_args args;
        args.p = p, args.a = a, args.a_arg = a_arg, args.b = b, args.b_arg = b_arg;
        pool__call_remote(p, pool__join_trampoline, &args, 0);
    }
}

/* join_n: halves the array by joins down to single entries. */
typedef struct pool__fork_span {
    pool *p;
    const pool_fork *forks;
    size_t n;
} pool__fork_span;

static void pool__fork_span_run(void *arg) {
    const pool__fork_span *span = (const pool__fork_span *)arg;
    pool__fork_span left = *span, right = *span;
    if (span->n == 1) {
        if (span->forks->fn) span->forks->fn(span->forks->arg);
        return;
    }
    left.n = span->n / 2;
    right.forks += left.n, right.n -= left.n;
    pool_join(span->p, pool__fork_span_run, &left, pool__fork_span_run, &right);
}

POOL__IMPL void pool_join_n(pool *p, const pool_fork *forks, size_t n) {
    pool__fork_span all;
    if (!forks || !n) return;
    all.p = p, all.forks = forks, all.n = n;
    pool__fork_span_run(&all);
}

POOL__IMPL void pool_call(pool *p, pool_fn fn, void *arg) {
    if (!fn) return;
    p = pool__resolve(p);
    if (!p || pool__worker_of(p)) fn(arg);
    else pool__call_remote(p, fn, arg, 0);
}

POOL__IMPL void pool_call_on_worker(pool *p, pool_fn fn, void *arg) {
    pool__worker *w;
    if (!fn) return;
    p = pool__resolve(p);
    if (!p || ((w = pool__worker_of(p)) != NULL && !pool__is_slot(w))) fn(arg);
    else pool__call_remote(p, fn, arg, 1);
}

/* parallel_for: recursive halving on top of join. With grain 0 the split
   is adaptive, a splitter that follows theft: a range is cut into
   about num_threads pieces, and a piece cut further only when it was
   stolen, i.e. when some worker was idle enough to take it. Loops whose
   work is spread evenly pay for a handful of joins; uneven ones split
   where the imbalance is. */
typedef struct pool__pfor {
    pool *target;
    void (*body)(void *arg, size_t lo, size_t hi);
    void *arg;
    size_t grain;
    uint32_t num_threads;
} pool__pfor;

typedef struct pool__pfor_range {
    const pool__pfor *loop;
    size_t lo, hi;
    uint32_t splits; /* adaptive mode: how many more times to halve */
    int owner;       /* worker that created this range, to detect a steal */
} pool__pfor_range;

/* A join whose second half is pushed at once (see "What stays eager" in the
   lazy joins section); from a thread that is not p's worker, pool_join. */
static void pool__join_eager(pool *p, pool_fn a, void *a_arg, pool_fn b, void *b_arg) {
    pool__worker *w = pool__worker_of(p);
    if (w) pool__join_local(w, a, a_arg, b, b_arg, POOL__FORK_EAGER);
    else pool_join(p, a, a_arg, b, b_arg);
}

static int pool__pfor_should_split(pool__pfor_range *r) {
    const pool__pfor *loop = r->loop;
    size_t len = r->hi - r->lo;
    if (loop->grain) return len > loop->grain;
    if (len < 2) return 0;
    if (pool__worker_index() != r->owner) { /* stolen: there is idle capacity */
        r->splits = r->splits / 2 > loop->num_threads ? r->splits / 2 : loop->num_threads;
        return 1;
    }
    if (r->splits == 0) return 0;
    r->splits /= 2;
    return 1;
}

static void pool__pfor_run(void *arg) {
    pool__pfor_range *r = (pool__pfor_range *)arg;
    if (pool__pfor_should_split(r)) {
        pool__pfor_range left = *r, right = *r;
        left.hi = right.lo = r->lo + (r->hi - r->lo) / 2;
        left.owner = right.owner = pool__worker_index();
        pool__join_eager(r->loop->target, pool__pfor_run, &left, pool__pfor_run, &right);
    } else {
        r->loop->body(r->loop->arg, r->lo, r->hi);
    }
}

/* The whole range starts where it is first run, so it never counts as stolen. */
static void pool__pfor_run_root(void *arg) {
    ((pool__pfor_range *)arg)->owner = pool__worker_index();
    pool__pfor_run(arg);
}

POOL__IMPL void pool_parallel_for(pool *p, size_t begin, size_t end, size_t grain,
                                  void (*body)(void *arg, size_t lo, size_t hi), void *arg) {
    pool__pfor loop;
    pool__pfor_range all;
    if (!body || begin >= end) return;
    p = pool__resolve(p);
    if (!p || end - begin == 1) {
        body(arg, begin, end);
        return;
    }
    loop.target = p, loop.body = body, loop.arg = arg, loop.grain = grain;
    loop.num_threads = (uint32_t)p->num_threads;
    all.loop = &loop, all.lo = begin, all.hi = end, all.splits = loop.num_threads, all.owner = -1;
    pool_call(p, pool__pfor_run_root, &all);
}

/* ------------------------------------------------------------------------ */
/* Public API: scopes                                          >>api-scopes */
/* ------------------------------------------------------------------------ */

/* Posts one task that the caller has already validated: a normal one onto
   the caller's deque if it is a worker of p, else into the injector; a
   high-priority one into the high injector, where every worker looks
   first. */
static int pool__post(pool *p, pool_task *t, pool_priority priority) {
    pool__worker *w = priority == POOL_PRIORITY_NORMAL ? pool__worker_of(p) : NULL;
    if (w && pool__deque_push(&w->deque, t) == 0) {
        pool__new_local_jobs(w, 1);
        return 0;
    }
    /* From p's own worker, a high task goes to the injector even after
       pool_destroy closed it: a spawn of p's own tasks is accepted while
       they run, and destroy drains the injectors after its workers end. */
    pool__scope_mark_injected(pool__scope_of(t));
    return pool__inject(p, pool__injector_of(p, priority), t, t, 1,
                        pool__worker_of(p) ? POOL__INJECT_ACCEPTED : POOL__INJECT_NEW, NULL);
}

POOL__IMPL void pool_scope_init(pool_scope *s, pool *p) {
    pool__worker *w;
    if (!s) return;
    s->pool__pool = pool__resolve(p);
    s->pool__pending = POOL__SCOPE_UNWAITED;
    pool__latch_init(&s->pool__done);
    s->pool__cancel = 0;
    s->pool__ended = 0;
    s->pool__on_cancel = NULL;
    s->pool__inline_runs = 0;
    s->pool__inline_owed = 0;
    s->pool__inline_counted = 0;
    s->pool__injected = 0;
    w = pool__current();
    s->pool__origin = w;
    s->pool__origin_run = w ? w->run_current : pool__outside_runs.current;
    s->pool__outside_origin = w ? 0 : pool__thread_id();
}

/* The worker of s's pool running this thread if it is s's origin and the
   throttle runs a spawn into s at once now, else NULL. Only a worker of
   s's pool: the origin may be another pool's worker. */
POOL__INLINE pool__worker *pool__spawn_inline_worker(const pool_scope *s) {
    pool__worker *w = pool__current();
    return w && w->join.home == s->pool__pool && pool__spawn_runs_inline(w, s) ? w : NULL;
}

/* Copies an argument block. The spawner has most likely just written it
   field by field, and a run at once reads the copy field by field at
   once: a load that spans two stores still in flight (or a store and
   padding never written) cannot take its bytes from them and waits until
   they reach the cache, which costs more than the whole copy. So the
   block is read 4 bytes at a time, and written 8 at a time into the
   16-aligned copy: a read lies inside one 4-aligned field of 4 bytes or
   more, and a field of up to 8 bytes inside one write. (Smaller fields,
   and the tail below 8 bytes, may still wait.) The empty asm keeps the
   compiler from merging the two reads into one wide load again. */
static void pool__copy_block(unsigned char *to, const void *from, size_t size) {
    const unsigned char *src = (const unsigned char *)from;
    size_t i;
    for (i = 0; i + 8 <= size; i += 8) {
        uint32_t half[2];
        uint64_t both;
        memcpy(&half[0], src + i, 4);
        memcpy(&half[1], src + i + 4, 4);
        __asm__("" : "+r"(half[0]), "+r"(half[1]));
        memcpy(&both, half, 8); /* the bytes in memory order, for one 8-byte write */
        memcpy(to + i, &both, 8);
    }
    if (i < size) memcpy(to + i, src + i, size - i); /* src may be NULL with no size */
}

/* A copied spawn that the throttle runs at once (see pool_scope_spawn)
   needs no cell: its copy lives on the spawner's stack until fn returns,
   so the spawns that nobody else could take cost no cell's round trip. */
static void pool__spawn_copy_inline(pool__worker *w, pool_scope *s, pool_fn fn, const void *arg,
                                    size_t size) {
    pool__copy_args copy;
    pool__inline_run r;
    pool__copy_block(copy.bytes, arg, size);
    r = pool__inline_begin(w, s);
    fn(copy.bytes);
    pool__inline_end(w, s, r);
}

/* A spawn into s, which has a pool that is not inherited and is not
   cancelled, of a task marked queued that the throttle did not run at
   once: counted, then posted. */
static int pool__scope_spawn_checked(pool_scope *s, pool_task *t, pool_priority priority) {
    int rc;
    pool__scope_count_spawns(s, 1);
    rc = pool__post(s->pool__pool, t, priority);
    if (rc) { /* as if the task had run: it may be the last one a wait waits for */
        pool__unmark_queued(t);
        pool__scope_task_done(s);
    }
    return rc;
}

/* A spawn into s that the throttle runs at once on its origin outside
   every pool (see pool__outside_runs_inline): task t, or fn with a copy of
   arg on this stack. A body of the thread's own, numbered in s as a
   worker's run at once is (see "Tasks run at once"). */
static void pool__outside_run_at_once(pool_scope *s, pool_task *t, pool_fn fn, const void *arg,
                                      size_t size) {
    pool__helping helping; /* inside a task of the pool and of s, for the waits' checks */
    uint64_t next;
    pool__helping_begin(&helping, s->pool__pool, s);
    next = pool__scope_inline_begin(s);
    if (t) {
        t->run(t);
    } else {
        pool__copy_args copy;
        pool__copy_block(copy.bytes, arg, size);
        fn(copy.bytes);
    }
    pool__scope_inline_end(s, next);
    pool__helping_end(&helping);
}

/* A wait of s, made outside every pool, adds the runs at once that ended
   since the last one counted to p's statistics: a read-modify-write at
   each run would cost about as much as the run. Relaxed: a statistic; the
   CAS gives each run to one waiter. */
static void pool__outside_runs_count(pool_scope *s, pool *p) {
    uint64_t runs = POOL__LOAD(&s->pool__inline_runs, POOL__RELAXED) / 2;
    uint64_t counted = POOL__LOAD(&s->pool__inline_counted, POOL__RELAXED);
    if (!s->pool__outside_origin) return;
    while (counted < runs &&
           !POOL__CAS(&s->pool__inline_counted, &counted, runs, POOL__RELAXED, POOL__RELAXED))
        continue;
    if (counted < runs) POOL__FETCH_ADD(&p->outside_spawns_inline, runs - counted, POOL__RELAXED);
}

POOL__IMPL int pool_scope_spawn_priority(pool_scope *s, pool_task *t, pool_priority priority) {
    pool__worker *w;
    if (!s || !t || !t->run || !pool__priority_valid(priority)) return EINVAL;
    if (s->pool__pool && pool__inherited(s->pool__pool)) return ECHILD;
    if (pool__scope_cancelled_now(s, POOL__RELAXED)) return ECANCELED; /* see the cancellation */
    /* Relaxed: a misuse check, as in pool__mark_queued. */
    if ((uintptr_t)POOL__LOAD(&t->pool__scope, POOL__RELAXED) & POOL__QUEUED) return EBUSY;
    if (!s->pool__pool) { /* no pool could be created: run it here */
        t->pool__scope = NULL;
        t->run(t);
        return 0;
    }
    /* The throttle bounds the deque, which a high-priority task skips. */
    if (priority == POOL_PRIORITY_NORMAL && (w = pool__spawn_inline_worker(s)) != NULL) {
        pool__execute_inline(w, t, s);
        return 0;
    }
    if (priority == POOL_PRIORITY_NORMAL && pool__outside_runs_inline(s)) {
        pool__outside_run_at_once(s, t, NULL, NULL, 0);
        return 0;
    }
    if (pool__mark_queued(t, s) != 0) return EBUSY;
    return pool__scope_spawn_checked(s, t, priority);
}

POOL__IMPL int pool_scope_spawn(pool_scope *s, pool_task *t) {
    return pool_scope_spawn_priority(s, t, POOL_PRIORITY_NORMAL);
}

POOL__IMPL int pool_scope_spawn_copy(pool_scope *s, pool_fn fn, const void *arg, size_t size) {
    pool__copy_cell *c;
    pool__worker *w;
    pool *p;
    int err;
    if (!s || !fn || size > POOL_SPAWN_COPY_MAX || (size && !arg)) return EINVAL;
    p = s->pool__pool;
    if (p && pool__inherited(p)) return ECHILD; /* its copy_lock may be held forever */
    if (pool__scope_cancelled_now(s, POOL__RELAXED)) return ECANCELED;
    if (!p) { /* no pool could be created: run it here, as any spawn then */
        pool__copy_args local;
        pool__copy_block(local.bytes, arg, size);
        fn(local.bytes);
        return 0;
    }
    if ((w = pool__spawn_inline_worker(s)) != NULL) {
        pool__spawn_copy_inline(w, s, fn, arg, size);
        return 0;
    }
    if (pool__outside_runs_inline(s)) {
        pool__outside_run_at_once(s, NULL, fn, arg, size);
        return 0;
    }
    if (!(c = pool__copy_take(p, pool__worker_of(p)))) return ENOMEM;
    c->task.run = pool__copy_run;
    c->task.pool__next = NULL;
    c->task.pool__scope = NULL;
    c->fn = fn;
    pool__copy_block(c->arg.bytes, arg, size);
    (void)pool__mark_queued(&c->task, s); /* a free cell's task is not queued */
    if ((err = pool__scope_spawn_checked(s, &c->task, POOL_PRIORITY_NORMAL)) != 0)
        pool__copy_give(c);
    return err;
}

/* Tests learn that a thread joined the wait of a round, so that they can
   cancel the round knowing it is inside (tests/test_cancel.c). */
#ifndef POOL__SCOPE_WAIT_JOINED
#define POOL__SCOPE_WAIT_JOINED(s) ((void)0)
#endif

/* Another thread owns the wait for s, in round `round`: block until that
   round is over (its owner re-armed the scope), and say in *cancelled
   whether it was cancelled. Returns whether tasks are still unfinished
   then (the caller waits again: see above). Acquire: pairs with the
   release of the decrements (and so of every task that finished). The
   reference bit is masked: the owner gave it back as it re-armed. */
static int pool__scope_wait_other(pool_scope *s, uint32_t round, int *cancelled) {
    pool__worker *w = pool__current();
    int unfinished;
    POOL__SCOPE_WAIT_JOINED(s);
    if (w) pool__park_begin(w);
    /* Until the round is over, not only done: its owner writes the
       round's outcome before it moves the round on (see the cancellation),
       and the acquire in the park orders it before this read. */
    while (!pool__latch_park_until(&s->pool__done, round, 0)) continue;
    *cancelled = POOL__LOAD(&s->pool__ended, POOL__RELAXED) == (round | POOL__CANCEL_MARK);
    unfinished = (POOL__LOAD(&s->pool__pending, POOL__ACQUIRE) & ~POOL__SCOPE_UNWAITED) != 0;
    if (w) pool__park_end(w);
    return unfinished;
}

/* The owner of the wait for s (see above), in round `round`, waits for its
   tasks and re-arms it; 0, or ECANCELED if the round was cancelled. */
static int pool__scope_wait_owned(pool_scope *s, pool *p, uint32_t round) {
    pool__worker *w = pool__current(), *slot;
    pool__awaited wt;
    int cancelled;
    /* acq_rel, as in pool__scope_task_done: the acquire sees the effects of
       every task that finished already. */
    if (POOL__FETCH_SUB(&s->pool__pending, POOL__SCOPE_UNWAITED, POOL__ACQ_REL) !=
        POOL__SCOPE_UNWAITED) { /* tasks are unfinished */
        wt.done = &s->pool__done;
        wt.runner = p;
        wt.tag = s;
        wt.thief = NULL;
        wt.scope = s;
        wt.own = NULL;
        if (w && w->join.home == p) {
            pool__wait_in_pool(w, &wt);
        } else if (!w && (slot = pool__slot_take(p)) != NULL) { /* see the external slots */
            pool__set_current(slot);
            POOL__COUNT(slot->stats.slot_calls, 1);
            pool__wait_in_pool(slot, &wt);
            pool__set_current(NULL);
            pool__slot_give_back(p, slot);
        } else {
            pool__wait_elsewhere(w, &wt, 1);
        }
    } else { /* done already: a late spawn's task is not skipped (see the cancellation) */
        pool__latch_set(&s->pool__done);
    }
    /* The round's outcome (see the cancellation; relaxed: a cancel this
       misses raced with the end of the wait, and the exchange below
       publishes pool__ended to the joiners). */
    cancelled = POOL__LOAD(&s->pool__cancel, POOL__RELAXED) == (round | POOL__CANCEL_MARK);
    POOL__STORE(&s->pool__ended, round | (cancelled ? POOL__CANCEL_MARK : 0), POOL__RELAXED);
    /* Re-arm: the reference back (an or, not a store: a late spawn may
       have counted its task, and given the reference back already; relaxed:
       the exchange below publishes it), then the next round with the flags
       clear. Release: pairs with the acquire of the next owner's CAS and of
       joiners' loads, which then see the reference back; seq_cst: the
       owner's write of the cancellation's pair. */
    POOL__FETCH_OR(&s->pool__pending, POOL__SCOPE_UNWAITED, POOL__RELAXED);
    if (POOL__XCHG(&s->pool__done.state, round + POOL__LATCH_ROUND, POOL__SEQ_CST) &
        POOL__LATCH_WAITING)
        pool__wake_all(&s->pool__done.state);
    pool__scope_uncancel(s, round);
    return cancelled ? ECANCELED : 0;
}

/* Whether a wait for s may return at once: no task unfinished, the
   reference in place, and no cancel to end. Such a wait writes nothing:
   whatever this thread spawned, or saw spawned, was counted before this
   load, and a count of zero means each of those tasks has finished.
   Acquire: the decrements are releases, and every change of the word is
   a read-modify-write, so the load sees their tasks' effects. */
POOL__INLINE int pool__scope_nothing_to_wait_for(const pool_scope *s) {
    /* A cancelled round must end, to uncancel s, even with no task. */
    return POOL__LOAD(&s->pool__pending, POOL__ACQUIRE) == POOL__SCOPE_UNWAITED &&
           !pool__scope_cancelled_now(s, POOL__RELAXED);
}

/* Own the wait for s, or join the one under way, until its tasks are done. */
static int pool__scope_wait_done(pool_scope *s, pool *p) {
    uint32_t state;
    if (pool__scope_nothing_to_wait_for(s)) return 0;
    /* Acquire: pairs with the re-arming release of the previous owner. */
    state = POOL__LOAD(&s->pool__done.state, POOL__ACQUIRE);
    for (;;) {
        if (state & POOL__LATCH_OWNED) {
            int cancelled;
            if (!pool__scope_wait_other(s, state & ~POOL__LATCH_FLAGS, &cancelled))
                return cancelled ? ECANCELED : 0;
            state = POOL__LOAD(&s->pool__done.state, POOL__ACQUIRE);
            continue;
        }
        POOL__INVARIANT(!(state & (POOL__LATCH_DONE | POOL__LATCH_WAITING)));
        if (POOL__CAS(&s->pool__done.state, &state, state | POOL__LATCH_OWNED, POOL__ACQUIRE,
                      POOL__ACQUIRE))
            break;
    }
    return pool__scope_wait_owned(s, p, state & ~POOL__LATCH_FLAGS);
}

/* Whether a wait for s has nothing to do: no task of s unfinished, none
   run at once in progress, and no cancel to end. The common case on a
   worker (a scope whose tasks the throttle ran at once, or its waiter's
   own waits already ran), so it is looked at first, before the checks for
   a wait for itself. A scope made outside every pool never takes it: its
   wait counts its runs at once in the statistics (pool__outside_runs_count).
   A thread inside a task of s never finds s settled: that task is counted
   until after its run (a queued one) or makes inline_runs odd (a run at
   once); a thief running a join half of it, or a worker running a call
   made from it, is inside it too, and the task cannot end before the
   half or the call, whose queue published the count or the run number.
   The run number is read before the count. Its acquire pairs with the
   release of a run's end, and the run counted whatever it spawned into s
   before it ended, so the count read after it holds those tasks. Read the
   other way round, a run could spawn a task after the count was read and
   end before the run number was, and the wait would miss that task. */
POOL__INLINE int pool__scope_settled(const pool_scope *s) {
    return !s->pool__outside_origin && !(POOL__LOAD(&s->pool__inline_runs, POOL__ACQUIRE) & 1) &&
           pool__scope_nothing_to_wait_for(s);
}

POOL__INLINE int pool__scope_wait(pool_scope *s) {
    pool *p;
    int rc;
    if (!s) return EINVAL;
    if (!(p = s->pool__pool)) { /* every task ran when it was spawned */
        if (!pool__scope_cancelled_now(s, POOL__RELAXED)) return 0;
        pool__scope_uncancel(s, 0); /* its latch never leaves round 0 */
        return ECANCELED;
    }
    if (pool__inherited(p)) { /* what it spawned before the fork is the parent's */
        s->pool__pending = POOL__SCOPE_UNWAITED;
        pool__latch_init(&s->pool__done);
        s->pool__cancel = 0;
        s->pool__inline_runs = 0; /* a run the fork cut off never ends here */
        s->pool__inline_owed = 0;
        s->pool__inline_counted = 0;
        return 0;
    }
    if (pool__scope_settled(s)) return 0;
    /* Either would wait for itself. */
    if (pool__inside_task_of(NULL, s) || pool__scope_wait_inline(s) != 0) return EDEADLK;
    rc = pool__scope_wait_done(s, p);
    pool__outside_runs_count(s, p);
    return rc;
}

POOL__IMPL int pool_scope_wait_status(pool_scope *s) { return pool__scope_wait(s); }

POOL__IMPL void pool_scope_wait(pool_scope *s) { (void)pool__scope_wait(s); }

POOL__IMPL int pool_scope_cancel(pool_scope *s) {
    if (!s) return EINVAL;
    pool__scope_cancel(s);
    return 0;
}

/* Acquire: pairs with the cancel's CAS (see the cancellation). */
POOL__IMPL int pool_scope_cancelled(const pool_scope *s) {
    return s && pool__scope_cancelled_now(s, POOL__ACQUIRE);
}

/* Relaxed: set before the spawns it covers, it is published by their
   queues (see pool__scope_skip). */
POOL__IMPL int pool_scope_on_cancel(pool_scope *s, void (*on_cancel)(pool_task *t)) {
    if (!s) return EINVAL;
    POOL__STORE(&s->pool__on_cancel, on_cancel, POOL__RELAXED);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Public API: graphs                                          >>api-graphs */
/*                                                                          */
/* A run of a graph is a round of its scope: pool_graph_run spawns the      */
/* nodes without predecessors, and a node that finishes counts down each    */
/* successor's `waiting` and spawns the successor it brings to zero. The    */
/* scope's count then covers every node started and not finished, and its   */
/* wait is the graph's: cancelling the scope skips what is queued, and a    */
/* successor of a skipped node is never spawned, so a cancelled run still   */
/* ends. The counts are set again at each run, before any root is spawned   */
/* (the spawn publishes them to the thread that runs the root). Nothing is  */
/* allocated: nodes and edges are the caller's. A cycle would leave its     */
/* nodes waiting for each other and the wait hanging, so a changed graph is */
/* checked before it runs (Kahn's algorithm), and only a changed one.       */
/* ------------------------------------------------------------------------ */

static pool_graph_node *pool__graph_node_of(pool_task *t) {
    return (pool_graph_node *)(void *)((char *)t - offsetof(pool_graph_node, pool__task));
}

/* Node n has finished: counts down its successors and chains those it
   brought to zero through their tasks' links (*ready to *last, *k of
   them). acq_rel: the release publishes n's effects, the acquire of the
   decrement that reaches zero sees every predecessor's before the
   successor runs. */
static void pool__graph_release(pool_graph_node *n, pool_task **ready, pool_task **last,
                                uint32_t *k) {
    pool_graph_edge *e;
    for (e = n->pool__out; e; e = e->pool__next)
        if (POOL__FETCH_SUB(&e->pool__to->pool__waiting, 1, POOL__ACQ_REL) == 1) {
            pool_task *next = &e->pool__to->pool__task;
            next->pool__next = *ready;
            if (!*ready) *last = next;
            *ready = next;
            ++*k;
        }
}

/* Posts the n nodes of g whose tasks are chained from `ready` to `last`,
   counted in g's scope already: pushed onto this worker's deque, or
   injected in one chain. `kind` is POOL__INJECT_ACCEPTED for successors
   (part of a run accepted already, never refused) and POOL__INJECT_NEW
   for a run's roots from outside: ECANCELED if the pool is being
   destroyed, with nothing posted. Each link is read before its task is
   pushed: from then on a thief may take the task and relink it. */
static int pool__graph_post(pool *p, pool_task *ready, pool_task *last, uint32_t n,
                            pool__inject_kind kind) {
    pool__worker *w = pool__worker_of(p);
    uint32_t pushed = 0;
    if (w) {
        pool_task *t = ready, *next;
        while (t && (next = t->pool__next, pool__deque_push(&w->deque, t) == 0)) {
            t = next;
            pushed++;
        }
        if (pushed) pool__new_local_jobs(w, pushed);
        if (!t) return 0;
        ready = t; /* out of memory part-way: the rest is injected, accepted already */
        kind = POOL__INJECT_ACCEPTED;
    }
    pool__scope_mark_injected(pool__scope_of(ready)); /* every node's is the graph's */
    return pool__inject(p, &p->injector, ready, last, n - pushed, kind, NULL);
}

/* Starts the k successors a finished node of g released: counted in g's
   scope in one step, then posted. A cancelled run starts none: never
   counted, they are the cancel's skips. */
static void pool__graph_start(pool_graph *g, pool_task *ready, pool_task *last, uint32_t k) {
    pool_scope *s = &g->pool__scope;
    pool_task *t;
    if (!k || pool__scope_cancelled_now(s, POOL__RELAXED)) return;
    pool__scope_count_spawns(s, k);
    for (t = ready; t; t = t->pool__next) {
        int rc = pool__mark_queued(t, s); /* started once a run: its last start has run */
        POOL__INVARIANT(rc == 0);
        (void)rc;
    }
    pool__graph_post(s->pool__pool, ready, last, k, POOL__INJECT_ACCEPTED);
}

/* A node's task: the user's run, then the successors it released, started
   together. */
static void pool__graph_node_run(pool_task *t) {
    pool_graph_node *n = pool__graph_node_of(t);
    pool_task *ready = NULL, *last = NULL;
    uint32_t k = 0;
    n->run(n);
    pool__graph_release(n, &ready, &last, &k);
    pool__graph_start(n->pool__graph, ready, last, k);
}

/* A run of g with no pool (none could be created): every node on this
   thread, in an order its edges allow, with a worklist rather than a
   recursion as deep as the graph. */
static void pool__graph_run_here(pool_graph *g) {
    pool_task *ready = NULL, *last = NULL;
    pool_graph_node *n;
    uint32_t k = 0;
    for (n = g->pool__roots; n; n = n->pool__next_root) {
        n->pool__task.pool__next = ready;
        ready = &n->pool__task;
    }
    while (ready) {
        n = pool__graph_node_of(ready);
        ready = ready->pool__next;
        if (pool__scope_cancelled_now(&g->pool__scope, POOL__RELAXED)) continue;
        n->run(n);
        pool__graph_release(n, &ready, &last, &k);
    }
}

/* Kahn's algorithm over g, with the nodes' run counts as scratch: ELOOP if
   some node is never reached (it lies on a cycle or after one), else 0,
   with the roots listed for the runs. */
static int pool__graph_check(pool_graph *g) {
    pool_graph_node *n, *roots = NULL;
    pool_task *ready = NULL; /* a stack of the nodes ready, through their tasks' links */
    size_t nodes = 0, reached = 0;
    for (n = g->pool__nodes; n; n = n->pool__next, nodes++) {
        n->pool__waiting = n->pool__preds;
        if (n->pool__preds) continue;
        n->pool__next_root = roots;
        roots = n;
    }
    g->pool__roots = roots;
    for (n = roots; n; n = n->pool__next_root) {
        n->pool__task.pool__next = ready;
        ready = &n->pool__task;
    }
    while (ready) {
        pool_graph_edge *e;
        n = pool__graph_node_of(ready);
        ready = ready->pool__next;
        n->pool__task.pool__next = NULL;
        reached++;
        for (e = n->pool__out; e; e = e->pool__next)
            if (--e->pool__to->pool__waiting == 0) {
                e->pool__to->pool__task.pool__next = ready;
                ready = &e->pool__to->pool__task;
            }
    }
    return reached == nodes ? 0 : ELOOP;
}

/* A run's word (pool__run): a generation, bumped as each run ends, and in
   its two low bits the state of the generation's run: IDLE (none since
   the last ended, or refused), STARTING (pool_graph_run is checking and
   posting it), RUNNING (posted, not yet waited for), CLAIMED (its first
   waiter waits for it). See "Waiting for a run" below. */
#define POOL__GRAPH_IDLE 0u
#define POOL__GRAPH_STARTING 1u
#define POOL__GRAPH_RUNNING 2u
#define POOL__GRAPH_CLAIMED 3u
#define POOL__GRAPH_STATE 3u
#define POOL__GRAPH_NEXT 4u /* one generation */

static uint32_t pool__graph_generation_of(uint32_t word) { return word & ~POOL__GRAPH_STATE; }

/* The bit of pool__cancelled_runs that holds the outcome of word's run. */
static uint32_t pool__graph_outcome_bit(uint32_t word) {
    return 1u << (word / POOL__GRAPH_NEXT % 32);
}

/* Numbers each pool_graph_init, so that a node tells the graph it was
   added to from the same memory initialised again (g's own fields cannot
   be read before its first init). Relaxed: only distinct values matter. A
   forgotten node passes for a new one only when a multiple of 2^32 inits
   (of any graph of this implementation) lie between. */
static uint32_t pool__graph_inits;

POOL__IMPL void pool_graph_init(pool_graph *g, pool *p) {
    if (!g) return;
    g->pool__generation = POOL__FETCH_ADD(&pool__graph_inits, 1, POOL__RELAXED);
    pool_scope_init(&g->pool__scope, p);
    g->pool__nodes = NULL;
    g->pool__roots = NULL;
    g->pool__run = POOL__GRAPH_IDLE; /* generation 0 */
    g->pool__blocked = 0;
    g->pool__cancelled_runs = 0;
    g->pool__checked = 1; /* empty: no cycle */
}

/* Relaxed: add and link are not made at the same time as other calls on
   g; a run begun by this caller's own earlier call is seen. */
static int pool__graph_running(const pool_graph *g) {
    return (POOL__LOAD(&g->pool__run, POOL__RELAXED) & POOL__GRAPH_STATE) != POOL__GRAPH_IDLE;
}

POOL__IMPL int pool_graph_add(pool_graph *g, pool_graph_node *n) {
    pool_task task = POOL_TASK_INIT(pool__graph_node_run);
    if (!g || !n || !n->run) return EINVAL;
    if (n->pool__graph || pool__graph_running(g)) return EBUSY;
    n->pool__graph = g;
    n->pool__generation = g->pool__generation;
    n->pool__task = task;
    n->pool__out = NULL;
    n->pool__preds = 0;
    n->pool__next = g->pool__nodes;
    g->pool__nodes = n;
    g->pool__checked = 0;
    return 0;
}

static int pool__graph_has(const pool_graph *g, const pool_graph_node *n) {
    return n->pool__graph == g && n->pool__generation == g->pool__generation;
}

POOL__IMPL int pool_graph_link(pool_graph *g, pool_graph_edge *e, pool_graph_node *from,
                               pool_graph_node *to) {
    if (!g || !e || !from || !to || !pool__graph_has(g, from) || !pool__graph_has(g, to))
        return EINVAL;
    if (e->pool__to || pool__graph_running(g)) return EBUSY;
    e->pool__to = to;
    e->pool__next = from->pool__out;
    from->pool__out = e;
    to->pool__preds++;
    g->pool__checked = 0;
    return 0;
}

/* Waiting for a run. Several threads may wait for one run, and the first
   back may run g again at once; each must return when its own run has
   ended, not wait for the next (whose nodes may wait for it). So a run's
   wait is not a scope's (whose joiners wait until the scope's count is
   zero, whatever run its tasks belong to): the first waiter claims the
   run (RUNNING to CLAIMED, a CAS) and alone waits for g's scope, running
   nodes meanwhile; only then does it end the run (the next generation,
   IDLE), so the next run starts after that wait, and no two waits of the
   scope are ever under way. The other waiters block on the word until it
   leaves their run's CLAIMED value, however many runs came since.

   A run is published (RUNNING) once its roots are counted and posted, so
   a waiter that claims it finds them counted. They may run, and be seen
   to run, before that: a waiter that finds the run STARTING blocks until
   it is published (then claims it or waits for its claimant) or refused
   (a cycle, a pool being destroyed: the next generation, IDLE, and
   nothing ran). A node's own wait is refused first (EDEADLK).

   No lost wake-up: a blocked waiter counts itself in pool__blocked, then
   reads the word; whoever moves the word on (the starter, the claimant)
   then reads pool__blocked, and wakes the waiters if any is counted. All
   four are seq_cst, so in their single order one of the two reads sees
   the other's write: the waiter sees the word moved on, or the mover sees
   the waiter. A waiter counted but not yet blocked finds the word moved
   on, as pool__wait compares it. The claimant's outcome (ECANCELED or
   not) is written before its exchange, which publishes it to the waiters'
   loads, as is a refused run's (not cancelled). The outcomes of the last
   32 runs are kept, a bit for each, so that a waiter that looks only
   after later runs ended still reads its own run's; 32 runs later its
   bit holds another run's.
   tests/model/graph.pml checks the protocol with runs whose nodes may run
   before they are published, and a next run whose nodes wait for the last
   run's waiters, after finding the hang of a waiter that reads the word
   before it counts itself, of an end that wakes nobody, and of waiters
   that wait for the scope, and the early return of a waiter that takes a
   run being started for none. */

/* Records whether the run of `word`, about to end, was cancelled. Only
   the thread that ends a run records, so one run's bit at a time, and the
   RMW acts on the latest bits whatever this thread saw of them. Relaxed:
   the end's exchange publishes it. */
static void pool__graph_record(pool_graph *g, uint32_t word, int cancelled) {
    uint32_t bit = pool__graph_outcome_bit(word);
    if (cancelled) POOL__FETCH_OR(&g->pool__cancelled_runs, bit, POOL__RELAXED);
    else POOL__FETCH_AND(&g->pool__cancelled_runs, ~bit, POOL__RELAXED);
}

/* Moves g's run word to `to` and wakes the waiters blocked on it; returns
   the word it held. seq_cst: the mover's half of the pair above; its
   release publishes what came before it (the roots of a run published,
   the check of one refused, the outcome of one ended). */
static uint32_t pool__graph_move(pool_graph *g, uint32_t to) {
    uint32_t before = POOL__XCHG(&g->pool__run, to, POOL__SEQ_CST);
    if (POOL__LOAD(&g->pool__blocked, POOL__SEQ_CST)) pool__wake_all(&g->pool__run);
    return before;
}

/* Tests hold a run being started before its refusal, or between its
   posts and its publication, to have it seen meanwhile
   (tests/test_graph.c). */
#ifndef POOL__GRAPH_REFUSING
#define POOL__GRAPH_REFUSING(g) ((void)0)
#endif
#ifndef POOL__GRAPH_PUBLISHING
#define POOL__GRAPH_PUBLISHING(g) ((void)0)
#endif

/* pool_graph_run refuses the run it is starting (`idle` its IDLE word):
   nothing of it ran, and its waiters say 0. */
static int pool__graph_refuse(pool_graph *g, uint32_t idle, int rc) {
    POOL__GRAPH_REFUSING(g);
    pool__graph_record(g, idle, 0);
    pool__graph_move(g, idle + POOL__GRAPH_NEXT);
    return rc;
}

/* pool_graph_run publishes the run it started. */
static void pool__graph_publish(pool_graph *g, uint32_t idle) {
    POOL__GRAPH_PUBLISHING(g);
    pool__graph_move(g, idle | POOL__GRAPH_RUNNING);
}

POOL__IMPL int pool_graph_run(pool_graph *g) {
    pool_scope *s;
    pool_graph_node *n;
    pool_task *ready = NULL, *last = NULL;
    uint32_t idle, roots = 0;
    pool *p;
    if (!g) return EINVAL;
    s = &g->pool__scope;
    p = s->pool__pool;
    if (p && pool__inherited(p)) return ECHILD;
    if (p && pool__worker_of(p) == NULL && POOL__LOAD(&p->closing, POOL__ACQUIRE))
        return ECANCELED; /* acquire: pairs with pool_destroy's release store */
    idle = POOL__LOAD(&g->pool__run, POOL__RELAXED); /* checked by the CAS */
    if (idle & POOL__GRAPH_STATE) return EBUSY;
    /* Acquire: pairs with the release of the last run's end or refusal,
       after which its nodes are done with the counts. */
    if (!POOL__CAS(&g->pool__run, &idle, idle | POOL__GRAPH_STARTING, POOL__ACQUIRE, POOL__RELAXED))
        return EBUSY;
    if (!g->pool__checked) g->pool__checked = pool__graph_check(g) + 1;
    if (g->pool__checked != 1) return pool__graph_refuse(g, idle, ELOOP);
    for (n = g->pool__nodes; n; n = n->pool__next) /* published by the roots' posts */
        POOL__STORE(&n->pool__waiting, n->pool__preds, POOL__RELAXED);
    if (!p) { /* every node here, each a task of g's scope: its own wait is refused */
        pool__helping here;
        pool__helping_begin(&here, NULL, s);
        pool__graph_run_here(g);
        pool__helping_end(&here);
        pool__graph_publish(g, idle);
        return 0;
    }
    for (n = g->pool__roots; n; n = n->pool__next_root) {
        n->pool__task.pool__next = ready;
        if (!ready) last = &n->pool__task;
        ready = &n->pool__task;
        roots++;
    }
    if (roots && !pool__scope_cancelled_now(s, POOL__RELAXED)) {
        pool_task *t;
        pool__scope_count_spawns(s, roots);
        for (t = ready; t; t = t->pool__next) pool__mark_queued(t, s);
        if (pool__graph_post(p, ready, last, roots, POOL__INJECT_NEW) != 0) { /* destroy began */
            for (t = ready; t; t = t->pool__next) pool__unmark_queued(t);
            pool__scope_tasks_done(s, roots);
            return pool__graph_refuse(g, idle, ECANCELED);
        }
    }
    pool__graph_publish(g, idle);
    return 0;
}

/* What the waiter of the run whose CLAIMED word is `claimed` returns once
   it has ended. Relaxed: the run's end recorded it before its exchange,
   and the waiter's acquire read that word or a later one; every write of
   the word is an RMW, so a later one continues that exchange's release
   sequence. */
static int pool__graph_outcome(const pool_graph *g, uint32_t claimed) {
    uint32_t runs = POOL__LOAD(&g->pool__cancelled_runs, POOL__RELAXED);
    return runs & pool__graph_outcome_bit(claimed) ? ECANCELED : 0;
}

/* Tests learn that a waiter counted itself blocked until g's run word
   moves on (tests/test_graph.c). */
#ifndef POOL__GRAPH_WAIT_BLOCKING
#define POOL__GRAPH_WAIT_BLOCKING(g) ((void)0)
#endif

/* Blocks until g's run word leaves `word` (see "Waiting for a run") and
   returns the word then; a worker stands in a spare for itself meanwhile,
   as a scope's joiner does. The last load is seq_cst, so an acquire. */
static uint32_t pool__graph_block(pool_graph *g, uint32_t word) {
    pool__worker *w = pool__current();
    uint32_t now;
    if (w) pool__park_begin(w);
    POOL__FETCH_ADD(&g->pool__blocked, 1, POOL__SEQ_CST); /* the waiter's write of the pair */
    POOL__GRAPH_WAIT_BLOCKING(g);
    while ((now = POOL__LOAD(&g->pool__run, POOL__SEQ_CST)) == word) /* ... and its read */
        pool__wait(&g->pool__run, word);
    POOL__FETCH_SUB(&g->pool__blocked, 1, POOL__RELAXED); /* a count: a stale one wakes in vain */
    if (w) pool__park_end(w);
    return now;
}

/* The claimant waits for g's scope and ends the run. */
static int pool__graph_wait_claimed(pool_graph *g, uint32_t claimed) {
    uint32_t before;
    int rc = pool__scope_wait(&g->pool__scope);
    POOL__INVARIANT(rc != EDEADLK); /* nothing of a graph's scope runs at once */
    pool__graph_record(g, claimed, rc == ECANCELED);
    before = pool__graph_move(g, pool__graph_generation_of(claimed) + POOL__GRAPH_NEXT);
    POOL__INVARIANT(before == claimed); /* only the claimant moves a claimed run on */
    (void)before;
    return rc;
}

/* In a child of fork(), the run's starter or claimant may be a thread of
   the parent, and nothing of the parent's run is waited for here: the
   scope is reset (its wait does that) and the run ended, with ECHILD, as
   a blocking job unfinished at the fork says: its nodes are the parent's.
   Relaxed: the child's own threads are the only ones, and came after its
   start. */
static int pool__graph_wait_in_child(pool_graph *g) {
    uint32_t word = POOL__LOAD(&g->pool__run, POOL__RELAXED);
    (void)pool__scope_wait(&g->pool__scope);
    if (!(word & POOL__GRAPH_STATE)) return 0;
    POOL__CAS(&g->pool__run, &word, pool__graph_generation_of(word) + POOL__GRAPH_NEXT,
              POOL__RELAXED, POOL__RELAXED);
    return ECHILD;
}

POOL__IMPL int pool_graph_wait(pool_graph *g) {
    uint32_t word, claimed;
    pool *p;
    if (!g) return EINVAL;
    /* First: a node may run before its run is published. */
    if (pool__inside_task_of(NULL, &g->pool__scope)) return EDEADLK;
    p = g->pool__scope.pool__pool;
    if (p && pool__inherited(p)) return pool__graph_wait_in_child(g);
    /* Acquire: pairs with the run's publication (its roots are counted)
       and with the end of a run (its outcome). */
    word = POOL__LOAD(&g->pool__run, POOL__ACQUIRE);
    claimed = word | POOL__GRAPH_CLAIMED;
    if ((word & POOL__GRAPH_STATE) == POOL__GRAPH_STARTING) {
        word = pool__graph_block(g, word);
        if (pool__graph_generation_of(word) != pool__graph_generation_of(claimed))
            return pool__graph_outcome(g, claimed); /* refused, or ended already */
    }
    if ((word & POOL__GRAPH_STATE) == POOL__GRAPH_IDLE) return 0; /* none; a cancel stays */
    /* Acquire on failure: the word read then is acted on (a claimed run,
       or one that ended); on success the load above acquired the run, but
       a CAS's success order may not be weaker than its failure order. */
    if (word != claimed && POOL__CAS(&g->pool__run, &word, claimed, POOL__ACQUIRE, POOL__ACQUIRE))
        return pool__graph_wait_claimed(g, claimed);
    if (word == claimed) pool__graph_block(g, claimed); /* another claimed it */
    return pool__graph_outcome(g, claimed);
}

POOL__IMPL int pool_graph_cancel(pool_graph *g) {
    return g ? pool_scope_cancel(&g->pool__scope) : EINVAL;
}

POOL__IMPL int pool_graph_cancelled(const pool_graph *g) {
    return g && pool_scope_cancelled(&g->pool__scope);
}

/* ------------------------------------------------------------------------ */
/* Public API: completion queues and inboxes               >>api-completion */
/*                                                                          */
/* Both are a signalled stack: posted nodes form a lock-free stack (a CAS   */
/* to push, an exchange to take all), and the handle is raised by the post  */
/* that finds the stack empty: one system call per batch the loop drains,   */
/* not per node. No post may be left without a raised handle, so a take     */
/* clears the handle first and takes the nodes second: a post that comes    */
/* after the take finds the stack empty and raises the handle again, after  */
/* the clear; one that comes between them is taken with the rest (its       */
/* raise, if any, then leaves the handle readable with nothing to take: a   */
/* spurious wake, never a lost one). The clear happens before the take, the */
/* take (a release) before such a post's CAS (an acquire that reads it),    */
/* and that CAS before its raise: the raise comes after the clear.          */
/*                                                                          */
/* A completion queue's nodes are pool_completion_items, an inbox's are     */
/* pool_tasks: each post passes the address of its node's link field.       */
/* ------------------------------------------------------------------------ */

static int pool__sigstack_init(struct pool__signalled_stack *s) {
    s->pool__posted = NULL;
    s->pool__raising = 0;
    return pool__signal_open(s->pool__signal);
}

static intptr_t pool__sigstack_handle(const struct pool__signalled_stack *s) {
#if defined(_WIN32)
    return s ? s->pool__signal[0] : 0;
#else
    return s ? s->pool__signal[0] : -1;
#endif
}

/* A post that finds the stack empty raises the handle after its push, and
   its node may be taken, and the stack destroyed, in between: such posts
   are counted in pool__raising from before their CAS (whose release
   publishes the count with the node) until their raise is done (a
   release), and destroy waits for the count to be 0 (an acquire) before
   it closes the handle. Posts onto a stack that is not empty never raise,
   and are not counted. `link` is the node's link field. */
static int pool__sigstack_post(struct pool__signalled_stack *s, void *node, void **link) {
    void *top = POOL__LOAD(&s->pool__posted, POOL__RELAXED); /* checked by the CAS */
    int counted = 0, err;
    for (;;) {
        if ((top == NULL) != counted) { /* relaxed: the CAS's release publishes it */
            if (top) POOL__FETCH_SUB(&s->pool__raising, 1, POOL__RELAXED);
            else POOL__FETCH_ADD(&s->pool__raising, 1, POOL__RELAXED);
            counted = top == NULL;
        }
        memcpy(link, &top, sizeof top); /* typed (pool_task *, ...): no aliasing through void * */
        /* Release: publishes the node and what its poster wrote before, to
           the take's acquire; acquire: pairs with the take's release. */
        if (POOL__CAS(&s->pool__posted, &top, node, POOL__ACQ_REL, POOL__ACQUIRE)) break;
    }
    if (top) return 0;
    err = pool__signal_raise(s->pool__signal);
    POOL__FETCH_SUB(&s->pool__raising, 1, POOL__RELEASE); /* s is not touched after */
    return err;
}

/* Takes every node posted so far, newest first. */
static void *pool__sigstack_take(struct pool__signalled_stack *s) {
    pool__signal_clear(s->pool__signal);
    /* acq_rel: acquire pairs with the posts' release; release orders the
       clear before any post that finds the stack empty (above). */
    return POOL__XCHG(&s->pool__posted, NULL, POOL__ACQ_REL);
}

static void pool__sigstack_destroy(struct pool__signalled_stack *s) {
    /* Acquire: pairs with the raising posts' release (see pool__sigstack_post). */
    while (POOL__LOAD(&s->pool__raising, POOL__ACQUIRE)) pool__yield();
    pool__signal_close(s->pool__signal);
}

POOL__IMPL int pool_completion_init(pool_completion *c) {
    return c ? pool__sigstack_init(&c->pool__stack) : EINVAL;
}

POOL__IMPL intptr_t pool_completion_handle(const pool_completion *c) {
    return pool__sigstack_handle(c ? &c->pool__stack : NULL);
}

POOL__IMPL int pool_completion_post(pool_completion *c, pool_completion_item *item) {
    if (!c || !item) return EINVAL;
    return pool__sigstack_post(&c->pool__stack, item, (void **)&item->next);
}

POOL__IMPL pool_completion_item *pool_completion_drain(pool_completion *c) {
    pool_completion_item *newest, *oldest = NULL;
    if (!c) return NULL;
    newest = (pool_completion_item *)pool__sigstack_take(&c->pool__stack);
    while (newest) { /* reversed: oldest first */
        pool_completion_item *next = newest->next;
        newest->next = oldest;
        oldest = newest;
        newest = next;
    }
    return oldest;
}

POOL__IMPL int pool_completion_destroy(pool_completion *c) {
    if (!c) return EINVAL;
    pool__sigstack_destroy(&c->pool__stack);
    return 0;
}

/* An inbox belongs to the thread that made it, and to no thread after it
   ends. */
static int pool__inbox_owned(const pool_inbox *box) {
    return box->pool__owner == pool__thread_id();
}

POOL__IMPL int pool_inbox_init(pool_inbox *box) {
    if (!box) return EINVAL;
    box->pool__owner = pool__thread_id();
    return pool__sigstack_init(&box->pool__stack);
}

POOL__IMPL intptr_t pool_inbox_handle(const pool_inbox *box) {
    return pool__sigstack_handle(box ? &box->pool__stack : NULL);
}

POOL__IMPL int pool_inbox_post(pool_inbox *box, pool_task *t) {
    if (!box || !t || !t->run) return EINVAL;
    if (pool__mark_queued(t, NULL) != 0) return EBUSY;
    /* Queued even if the raise fails: the error is the handle's. */
    return pool__sigstack_post(&box->pool__stack, t, (void **)&t->pool__next);
}

/* Runs what was posted before the take, oldest first; what those tasks post
   waits for the next call, so a task that posts itself again cannot keep
   the owner here. */
POOL__IMPL int pool_inbox_run(pool_inbox *box, size_t *ran) {
    pool_task *oldest;
    size_t n = 0;
    if (ran) *ran = 0;
    if (!box) return EINVAL;
    if (!pool__inbox_owned(box)) return EPERM;
    oldest = pool__oldest_first((pool_task *)pool__sigstack_take(&box->pool__stack));
    while (oldest) {
        pool_task *t = oldest;
        oldest = t->pool__next;
        t->pool__next = NULL;
        uint64_t outer_body;
        pool__unmark_queued(t);                  /* before run, which may post it again */
        outer_body = pool__outside_body_begin(); /* see pool__outside_runs_inline */
        t->run(t);
        pool__outside_body_end(outer_body);
        n++;
        if (ran) *ran = n;
    }
    return 0;
}

POOL__IMPL int pool_inbox_wait(pool_inbox *box, int timeout_ms) {
    if (!box || timeout_ms < -1) return EINVAL;
    if (!pool__inbox_owned(box)) return EPERM;
    /* Relaxed: a hint; pool_inbox_run's exchange synchronises with the post. */
    if (POOL__LOAD(&box->pool__stack.pool__posted, POOL__RELAXED)) return 0;
    return pool__signal_wait(box->pool__stack.pool__signal, timeout_ms);
}

POOL__IMPL int pool_inbox_destroy(pool_inbox *box) {
    if (!box) return EINVAL;
    /* Relaxed: nothing may post any more, so the value is settled; the
       raising count's acquire below orders the close after the posts. */
    if (POOL__LOAD(&box->pool__stack.pool__posted, POOL__RELAXED)) return EBUSY;
    pool__sigstack_destroy(&box->pool__stack);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Public API: detached tasks                                  >>api-submit */
/* ------------------------------------------------------------------------ */

/* A batch of normal tasks from a worker goes onto its deque and is
   announced once; otherwise it is linked and published with one CAS on
   the injector of its priority. */
static int pool__submit(pool *p, pool_task *const *tasks, size_t n, pool_priority priority) {
    pool__worker *w;
    size_t i;
    if (n && !tasks) return EINVAL;
    for (i = 0; i < n; i++)
        if (!tasks[i] || !tasks[i]->run) return EINVAL;
    if (!(p = pool__resolve(p))) return ENOMEM;
    if (pool__inherited(p)) return ECHILD;
    /* Acquire: pairs with pool_destroy's release store. */
    if (POOL__LOAD(&p->closing, POOL__ACQUIRE)) return ECANCELED;
    if (!n) return 0;
    w = pool__worker_of(p);
    /* Nobody waits for a detached task: with no thread to run it, it
       would wait for pool_destroy (an external slot's holder leaves it to
       the pool). Refuse it instead, untaken. (Once a thread exists it
       stays until destroy. Acquire: pairs with pool__spawn's release.) */
    if ((!w || pool__is_slot(w)) && POOL__LOAD(&p->threads.started, POOL__ACQUIRE) == 0 &&
        pool__spawn(p, POOL__LOCK_WAIT, POOL__NO_SPARES) == 0)
        return EAGAIN;
    for (i = 0; i < n; i++)
        if (pool__mark_queued(tasks[i], NULL) != 0) { /* queued already, or twice in the batch */
            while (i > 0) pool__unmark_queued(tasks[--i]);
            return EBUSY;
        }
    if (w && priority == POOL_PRIORITY_NORMAL) {
        size_t pushed;
        for (pushed = 0; pushed < n; pushed++)
            if (pool__deque_push(&w->deque, tasks[pushed]) != 0) break;
        if (pushed) pool__new_local_jobs(w, pushed > 65535 ? 65535 : (uint32_t)pushed);
        if (pushed == n) return 0;
        if (pushed) { /* out of memory part-way: the rest, already accepted, is injected */
            for (n -= pushed, tasks += pushed, i = 0; i + 1 < n; i++)
                tasks[i]->pool__next = tasks[i + 1];
            pool__inject(p, &p->injector, tasks[0], tasks[n - 1], n, POOL__INJECT_ACCEPTED, NULL);
            return 0;
        }
    }
    for (i = 0; i + 1 < n; i++) tasks[i]->pool__next = tasks[i + 1];
    if (pool__inject(p, pool__injector_of(p, priority), tasks[0], tasks[n - 1], n, POOL__INJECT_NEW,
                     NULL) != 0) {
        for (i = 0; i < n; i++) pool__unmark_queued(tasks[i]);
        return ECANCELED;
    }
    return 0;
}

POOL__IMPL int pool_submit_batch(pool *p, pool_task *const *tasks, size_t n) {
    return pool__submit(p, tasks, n, POOL_PRIORITY_NORMAL);
}

POOL__IMPL int pool_submit(pool *p, pool_task *t) {
    return pool__submit(p, &t, 1, POOL_PRIORITY_NORMAL);
}

POOL__IMPL int pool_submit_priority(pool *p, pool_task *t, pool_priority priority) {
    if (!pool__priority_valid(priority)) return EINVAL;
    return pool__submit(p, &t, 1, priority);
}

/* Pushes t onto w's pinned stack and makes sure w looks: see "Pinned
   tasks" for the two pairs this is one half of. */
static int pool__pin(pool__worker *w, pool_task *t) {
    pool *p = w->join.home;
    int was_empty;
    t->pool__next = NULL;
    if (pool__injector_push(&w->pinned, t, t, &was_empty) != 0) return ECANCELED; /* seq_cst */
    pool__notify_worker(w);
    if (POOL__LOAD(&p->retired, POOL__SEQ_CST)) pool__wake_retired(p); /* the poster's read */
    return 0;
}

POOL__IMPL int pool_submit_pinned(pool *p, int worker, pool_task *t) {
    int err;
    if (!t || !t->run) return EINVAL;
    if (!(p = pool__resolve(p))) return ENOMEM;
    if (worker < 0 || worker >= p->num_threads) return EINVAL;
    if (pool__inherited(p)) return ECHILD;
    /* Acquire: pairs with pool_destroy's release store. */
    if (POOL__LOAD(&p->closing, POOL__ACQUIRE)) return ECANCELED;
    if (pool__mark_queued(t, NULL) != 0) return EBUSY;
    err = pool__spawn_through(p, (uint32_t)worker);
    if (!err) err = pool__pin(p->workers[worker], t);
    if (err) pool__unmark_queued(t);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Public API: parallel algorithms                         >>api-algorithms */
/*                                                                          */
/* Built on the layers below and nothing private of theirs: reduce splits   */
/* as parallel_for does, the sort is joins all the way down, and broadcast  */
/* is pinned tasks and a latch.                                             */
/* ------------------------------------------------------------------------ */

/* Reduce. A piece that splits keeps its own partial result for its left
   half (so the leftmost piece's is *result) and makes a fresh one, from the
   identity, for its right half; after the join it combines the two, left
   then right. The tree of splits is parallel_for's, so with a grain its
   shape, and the order of every combine, depend only on the range. */
#define POOL__REDUCE_INLINE 128

typedef union pool__reduce_acc { /* a partial result kept on the stack */
    unsigned char bytes[POOL__REDUCE_INLINE];
    long double align_ld; /* aligned as malloc would be */
    long long align_ll;
    void *align_ptr;
} pool__reduce_acc;

typedef struct pool__reduce {
    pool__pfor loop; /* target, grain, num_threads; no body */
    const pool_reducer *r;
    void *arg;
} pool__reduce;

typedef struct pool__reduce_part {
    pool__pfor_range range; /* range.loop is &reduce->loop */
    const pool__reduce *reduce;
    void *acc;
} pool__reduce_part;

static void pool__reduce_run(void *arg) {
    pool__reduce_part *part = (pool__reduce_part *)arg;
    const pool__reduce *red = part->reduce;
    const pool_reducer *r = red->r;
    if (pool__pfor_should_split(&part->range)) {
        pool__reduce_acc inline_acc;
        pool *p = red->loop.target;
        void *later =
            r->size <= sizeof inline_acc ? (void *)&inline_acc : pool__alloc(r->size, p->user);
        if (later) {
            pool__reduce_part left = *part, right = *part;
            left.range.hi = right.range.lo = part->range.lo + (part->range.hi - part->range.lo) / 2;
            left.range.owner = right.range.owner = pool__worker_index();
            right.acc = later;
            memcpy(later, r->identity, r->size);
            pool__join_eager(p, pool__reduce_run, &left, pool__reduce_run, &right);
            r->combine(red->arg, part->acc, later);
            if (later != (void *)&inline_acc) pool__free(later, p->user);
            return;
        }
    }
    r->fold(red->arg, part->acc, part->range.lo, part->range.hi);
}

static void pool__reduce_run_root(void *arg) {
    ((pool__reduce_part *)arg)->range.owner = pool__worker_index();
    pool__reduce_run(arg);
}

POOL__IMPL int pool_parallel_reduce(pool *p, size_t begin, size_t end, size_t grain,
                                    const pool_reducer *r, void *arg, void *result) {
    pool__reduce red;
    pool__reduce_part all;
    if (!r || !result || !r->identity || !r->fold || !r->combine || !r->size) return EINVAL;
    memcpy(result, r->identity, r->size);
    if (begin >= end) return 0;
    p = pool__resolve(p);
    if (!p || end - begin == 1) {
        r->fold(arg, result, begin, end);
        return 0;
    }
    red.loop.target = p, red.loop.body = NULL, red.loop.arg = NULL, red.loop.grain = grain;
    red.loop.num_threads = (uint32_t)p->num_threads;
    red.r = r, red.arg = arg;
    all.range.loop = &red.loop, all.range.lo = begin, all.range.hi = end;
    all.range.splits = red.loop.num_threads, all.range.owner = -1;
    all.reduce = &red, all.acc = result;
    pool_call(p, pool__reduce_run_root, &all);
    return 0;
}

/* The sort. A top-down mergesort that moves each element once per level:
   the halves are sorted into the other buffer, then merged back, the two
   buffers trading roles level by level (no copy back). Halves and merges
   are joins, lazy ones, made stealable where a worker is idle: a merge is
   split at the middle of its longer run, whose element is looked up in the
   other by binary search, and the two merges join. Records over 32 bytes
   are sorted as pointers (each comparison then reads through one), moved
   once into the scratch in sorted order and copied back, both as parallel
   loops. Without scratch memory, an in-place quicksort: Hoare partitions
   around a median of three, the two sides joined, heapsort past a depth
   of 2 log2 n so that no input takes quadratic time. */
#define POOL__SORT_SERIAL 2048  /* elements: below, the halves are not joined */
#define POOL__MERGE_SERIAL 8192 /* elements merged: below, a merge is not split */
#define POOL__SORT_INDIRECT 32  /* bytes: above, records are sorted as pointers */
#define POOL__SORT_SMALL 16     /* elements: below, quicksort's insertion sort */
#define POOL__SORT_AHEAD 32     /* pointers: how far ahead a pass asks for records */

typedef struct pool__sort {
    pool *target;
    int (*cmp)(const void *, const void *);
    size_t size;  /* of an element as sorted: the record's, or a pointer's */
    int indirect; /* the elements sorted are pointers to the records */
} pool__sort;

static int pool__sort_cmp(const pool__sort *s, const char *a, const char *b) {
    if (s->indirect) return s->cmp(*(void *const *)a, *(void *const *)b);
    return s->cmp(a, b);
}

/* One element: constant sizes let the compiler use one move. */
static void pool__sort_move(const pool__sort *s, char *dst, const char *src) {
    switch (s->size) {
    case 4:
        memcpy(dst, src, 4);
        break;
    case 8:
        memcpy(dst, src, 8);
        break;
    default:
        memcpy(dst, src, s->size);
    }
}

typedef struct pool__merge {
    const pool__sort *sort;
    const char *a, *b; /* the two sorted runs; a's elements go first among equals */
    size_t na, nb;
    char *out;
} pool__merge;

/* A pass over an array of pointers to records, at p: asks the cache for
   the start of the record POOL__SORT_AHEAD pointers on (the line a
   comparator reading a leading key needs), if the array (ending at end)
   goes that far. Above the cache's size the records a pass reads through
   its pointers are at random places, each a miss the pass would wait for;
   asked for this early, they arrive while it works on the ones before. */
POOL__INLINE void pool__sort_fetch_ahead(const char *p, const char *end) {
    if (end - p > (ptrdiff_t)(POOL__SORT_AHEAD * sizeof(void *)))
        __builtin_prefetch(*(void *const *)(p + POOL__SORT_AHEAD * sizeof(void *)));
}

/* The merge loop, made for one element size and kind by its callers'
   constants. Branch-free: which run gives the next element is data, a
   coin toss on random input, so a conditional move beats a branch. The
   source and the steps are picked by masks rather than by ?:, which gcc
   compiled back into the branch for 4-byte elements. */
POOL__INLINE void pool__merge_loop(int (*cmp)(const void *, const void *), size_t z, int indirect,
                                   const char *a, const char *a_end, const char *b,
                                   const char *b_end, char *out) {
    while (a < a_end && b < b_end) {
        int take_b;
        if (indirect) pool__sort_fetch_ahead(a, a_end), pool__sort_fetch_ahead(b, b_end);
        take_b = indirect ? cmp(*(void *const *)b, *(void *const *)a) < 0 : cmp(b, a) < 0;
        {
            uintptr_t pick_b = (uintptr_t)0 - (uintptr_t)take_b; /* all ones: b */
            size_t step_b = z & ((size_t)0 - (size_t)take_b);
            memcpy(out, (const char *)((uintptr_t)a ^ (((uintptr_t)a ^ (uintptr_t)b) & pick_b)), z);
            b += step_b;
            a += z - step_b;
        }
        out += z;
    }
    memcpy(out, a, (size_t)(a_end - a));
    memcpy(out + (a_end - a), b, (size_t)(b_end - b));
}

static void pool__merge_serial(const pool__merge *m) {
    const pool__sort *s = m->sort;
    size_t z = s->size;
    const char *a_end = m->a + m->na * z, *b_end = m->b + m->nb * z;
    if (s->indirect) pool__merge_loop(s->cmp, sizeof(void *), 1, m->a, a_end, m->b, b_end, m->out);
    else if (z == 4) pool__merge_loop(s->cmp, 4, 0, m->a, a_end, m->b, b_end, m->out);
    else if (z == 8) pool__merge_loop(s->cmp, 8, 0, m->a, a_end, m->b, b_end, m->out);
    else pool__merge_loop(s->cmp, z, 0, m->a, a_end, m->b, b_end, m->out);
}

/* The first index of run[0..n) whose element is not before key (with
   after_equal, the first after key). */
static size_t pool__sort_search(const pool__sort *s, const char *run, size_t n, const char *key,
                                int after_equal) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = pool__sort_cmp(s, run + mid * s->size, key);
        if (c < 0 || (after_equal && c == 0)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Splits at the middle element of the longer run: everything of a before
   it (or, splitting b, not after it) goes left, so equal elements keep a
   before b. */
static void pool__merge_run(void *arg) {
    pool__merge *m = (pool__merge *)arg, left, right;
    size_t z = m->sort->size, ia, ib;
    if (m->na + m->nb <= POOL__MERGE_SERIAL) {
        pool__merge_serial(m);
        return;
    }
    if (m->na >= m->nb) {
        ia = m->na / 2;
        ib = pool__sort_search(m->sort, m->b, m->nb, m->a + ia * z, 0);
    } else {
        ib = m->nb / 2;
        ia = pool__sort_search(m->sort, m->a, m->na, m->b + ib * z, 1);
    }
    left = *m, right = *m;
    left.na = ia, left.nb = ib;
    right.a = m->a + ia * z, right.na = m->na - ia;
    right.b = m->b + ib * z, right.nb = m->nb - ib;
    right.out = m->out + (ia + ib) * z;
    pool_join(m->sort->target, pool__merge_run, &left, pool__merge_run, &right);
}

typedef struct pool__msort {
    const pool__sort *sort;
    char *data, *scratch; /* the elements, and as many bytes beside */
    size_t n;
    int into_scratch; /* where the sorted elements end up */
} pool__msort;

/* Sorts data[0..n) into data or, with into_scratch, into scratch; the
   halves go into the other one first, so that their merge lands where the
   whole belongs. */
static void pool__msort_serial(const pool__sort *s, char *data, char *scratch, size_t n,
                               int into_scratch) {
    size_t z = s->size, half = n / 2;
    pool__merge m;
    if (n <= 2) {
        int swap = n == 2 && pool__sort_cmp(s, data + z, data) < 0;
        if (swap && into_scratch) {
            pool__sort_move(s, scratch, data + z);
            pool__sort_move(s, scratch + z, data);
        } else if (swap) { /* in place, through scratch's place: free now */
            pool__sort_move(s, scratch, data);
            pool__sort_move(s, data, data + z);
            pool__sort_move(s, data + z, scratch);
        } else if (into_scratch) {
            memcpy(scratch, data, n * z);
        }
        return;
    }
    pool__msort_serial(s, data, scratch, half, !into_scratch);
    pool__msort_serial(s, data + half * z, scratch + half * z, n - half, !into_scratch);
    m.sort = s;
    m.a = into_scratch ? data : scratch;
    m.b = m.a + half * z;
    m.na = half, m.nb = n - half;
    m.out = into_scratch ? scratch : data;
    pool__merge_serial(&m);
}

static void pool__msort_run(void *arg) {
    pool__msort *ms = (pool__msort *)arg, left, right;
    size_t z = ms->sort->size, half = ms->n / 2;
    pool__merge m;
    if (ms->n < POOL__SORT_SERIAL) {
        pool__msort_serial(ms->sort, ms->data, ms->scratch, ms->n, ms->into_scratch);
        return;
    }
    left = *ms, right = *ms;
    left.n = half, left.into_scratch = !ms->into_scratch;
    right.data += half * z, right.scratch += half * z;
    right.n = ms->n - half, right.into_scratch = !ms->into_scratch;
    pool_join(ms->sort->target, pool__msort_run, &left, pool__msort_run, &right);
    m.sort = ms->sort;
    m.a = ms->into_scratch ? ms->data : ms->scratch;
    m.b = m.a + half * z;
    m.na = half, m.nb = ms->n - half;
    m.out = ms->into_scratch ? ms->scratch : ms->data;
    pool__merge_run(&m);
}

/* Swaps two elements of n bytes through a small buffer. */
static void pool__sort_swap(char *a, char *b, size_t n) {
    unsigned char tmp[64];
    while (n) {
        size_t k = n < sizeof tmp ? n : sizeof tmp;
        memcpy(tmp, a, k);
        memcpy(a, b, k);
        memcpy(b, tmp, k);
        a += k, b += k, n -= k;
    }
}

static void pool__heap_sift(const pool__sort *s, char *a, size_t root, size_t n) {
    size_t z = s->size, child;
    while ((child = 2 * root + 1) < n) {
        if (child + 1 < n && pool__sort_cmp(s, a + child * z, a + (child + 1) * z) < 0) child++;
        if (pool__sort_cmp(s, a + root * z, a + child * z) >= 0) return;
        pool__sort_swap(a + root * z, a + child * z, z);
        root = child;
    }
}

static void pool__heapsort(const pool__sort *s, char *a, size_t n) {
    size_t i, z = s->size;
    for (i = n / 2; i-- > 0;) pool__heap_sift(s, a, i, n);
    for (i = n; i-- > 1;) {
        pool__sort_swap(a, a + i * z, z);
        pool__heap_sift(s, a, 0, i);
    }
}

static void pool__insertion_sort(const pool__sort *s, char *a, size_t n) {
    size_t i, j, z = s->size;
    for (i = 1; i < n; i++)
        for (j = i; j > 0 && pool__sort_cmp(s, a + (j - 1) * z, a + j * z) > 0; j--)
            pool__sort_swap(a + (j - 1) * z, a + j * z, z);
}

typedef struct pool__qsort_part {
    const pool__sort *sort;
    char *a;
    size_t n;
    unsigned depth; /* partitions left before heapsort */
} pool__qsort_part;

/* Moves the median of the first, middle and last elements to the front. */
static void pool__median_to_front(const pool__sort *s, char *a, size_t n) {
    size_t z = s->size;
    char *lo = a, *mid = a + n / 2 * z, *hi = a + (n - 1) * z;
    if (pool__sort_cmp(s, mid, lo) < 0) pool__sort_swap(mid, lo, z);
    if (pool__sort_cmp(s, hi, mid) < 0) {
        pool__sort_swap(hi, mid, z);
        if (pool__sort_cmp(s, mid, lo) < 0) pool__sort_swap(mid, lo, z);
    }
    pool__sort_swap(a, mid, z);
}

/* Hoare's partition around a[0]: returns k with the pivot moved to a[k],
   every element before it not after it, every one after it not before. */
static size_t pool__partition(const pool__sort *s, char *a, size_t n) {
    size_t z = s->size, i = 0, j = n;
    for (;;) {
        do i++;
        while (i < n && pool__sort_cmp(s, a + i * z, a) < 0);
        do j--; /* j > 0: a comparator that finds the pivot after itself */
        while (j > 0 && pool__sort_cmp(s, a + j * z, a) > 0);
        if (i >= j) break;
        pool__sort_swap(a + i * z, a + j * z, z);
    }
    pool__sort_swap(a, a + j * z, z); /* the pivot between the two sides */
    return j;
}

static void pool__qsort_run(void *arg) {
    pool__qsort_part *q = (pool__qsort_part *)arg, left, right;
    size_t k;
    if (q->n < POOL__SORT_SMALL) {
        pool__insertion_sort(q->sort, q->a, q->n);
        return;
    }
    if (q->depth == 0) {
        pool__heapsort(q->sort, q->a, q->n);
        return;
    }
    pool__median_to_front(q->sort, q->a, q->n);
    k = pool__partition(q->sort, q->a, q->n);
    left = *q, right = *q;
    left.n = k, left.depth = right.depth = q->depth - 1;
    right.a = q->a + (k + 1) * q->sort->size, right.n = q->n - k - 1;
    pool_join(q->sort->target, pool__qsort_run, &left, pool__qsort_run, &right);
}

/* Records over 32 bytes: pointers to them were sorted into order[]; the
   records are gathered into the scratch in that order, then copied back. */
typedef struct pool__sort_gather {
    char *base, *records;
    char *const *order;
    size_t size;
    int back; /* 0: gather into records; 1: copy records back to base */
} pool__sort_gather;

static void pool__sort_gather_run(void *arg, size_t lo, size_t hi) {
    const pool__sort_gather *g = (const pool__sort_gather *)arg;
    size_t i;
    if (g->back) {
        memcpy(g->base + lo * g->size, g->records + lo * g->size, (hi - lo) * g->size);
        return;
    }
    for (i = lo; i < hi; i++) {
        pool__sort_fetch_ahead((const char *)&g->order[i], (const char *)&g->order[hi]);
        memcpy(g->records + i * g->size, g->order[i], g->size);
    }
}

typedef struct pool__sort_call {
    pool__sort sort;
    char *base, *scratch; /* scratch: NULL for the quicksort */
    size_t n, record_size;
} pool__sort_call;

static void pool__sort_indirect(pool__sort_call *c) {
    char **order = (char **)(void *)c->scratch, **spare = order + c->n;
    pool__sort_gather g;
    pool__msort all;
    size_t i;
    for (i = 0; i < c->n; i++) order[i] = c->base + i * c->record_size;
    all.sort = &c->sort, all.data = (char *)order, all.scratch = (char *)spare;
    all.n = c->n, all.into_scratch = 0;
    pool__msort_run(&all);
    g.base = c->base, g.records = (char *)(spare + c->n), g.order = order;
    g.size = c->record_size, g.back = 0;
    pool_parallel_for(c->sort.target, 0, c->n, 0, pool__sort_gather_run, &g);
    g.back = 1;
    pool_parallel_for(c->sort.target, 0, c->n, 0, pool__sort_gather_run, &g);
}

static void pool__sort_root(void *arg) {
    pool__sort_call *c = (pool__sort_call *)arg;
    if (!c->scratch) {
        pool__qsort_part all;
        size_t n;
        all.sort = &c->sort, all.a = c->base, all.n = c->n, all.depth = 0;
        for (n = c->n; n > 1; n >>= 1) all.depth += 2;
        pool__qsort_run(&all);
    } else if (c->sort.indirect) {
        pool__sort_indirect(c);
    } else {
        pool__msort all;
        all.sort = &c->sort, all.data = c->base, all.scratch = c->scratch;
        all.n = c->n, all.into_scratch = 0;
        pool__msort_run(&all);
    }
}

POOL__IMPL int pool_qsort(pool *p, void *base, size_t n, size_t size,
                          int (*cmp)(const void *a, const void *b)) {
    pool__sort_call c;
    size_t scratch;
    if (!cmp || !size || (!base && n > 1) || (n && size > SIZE_MAX / n)) return EINVAL;
    if (n < 2) return 0;
    p = pool__resolve(p);
    c.sort.target = p, c.sort.cmp = cmp;
    c.sort.indirect = size > POOL__SORT_INDIRECT;
    c.sort.size = c.sort.indirect ? sizeof(char *) : size;
    c.base = (char *)base, c.n = n, c.record_size = size;
    /* The indirect sort's pointers and spare pointers, then the records. */
    scratch = n * size;
    if (c.sort.indirect && scratch <= SIZE_MAX - 2 * n * sizeof(char *))
        scratch += 2 * n * sizeof(char *);
    else if (c.sort.indirect) scratch = 0; /* too big to address: sort in place */
    c.scratch = scratch ? (char *)pool__alloc(scratch, p ? p->user : NULL) : NULL;
    if (!c.scratch) c.sort.indirect = 0, c.sort.size = size; /* in place: the records */
    if (p) pool_call(p, pool__sort_root, &c);
    else pool__sort_root(&c);
    if (c.scratch) pool__free(c.scratch, p ? p->user : NULL);
    return 0;
}

/* Broadcast: one task pinned to each worker, counted down; the last one to
   finish sets the latch the caller blocks on. */
#define POOL__BROADCAST_INLINE 32 /* workers whose tasks live on the stack */

typedef struct pool__broadcast {
    void (*fn)(void *arg, int worker);
    void *arg;
    uint32_t left; /* calls not finished */
    pool__latch done;
} pool__broadcast;

typedef struct pool__broadcast_task {
    pool_task task;
    pool__broadcast *b;
    int worker;
} pool__broadcast_task;

static void pool__broadcast_run(pool_task *t) {
    pool__broadcast_task *bt = (pool__broadcast_task *)(void *)t;
    pool__broadcast *b = bt->b;
    b->fn(b->arg, bt->worker);
    /* acq_rel: the last one's release covers every call before it, which
       pool__latch_set's release hands on to the caller. */
    if (POOL__FETCH_SUB(&b->left, 1, POOL__ACQ_REL) == 1) pool__latch_set(&b->done);
}

/* Pins one task to each worker, stopping at the first refusal; returns
   it, with *pinned the tasks pinned. */
static int pool__broadcast_pin(pool *p, pool__broadcast *b, pool__broadcast_task *tasks, uint32_t n,
                               uint32_t *pinned) {
    uint32_t i;
    for (i = 0; i < n; i++) {
        pool_task init = POOL_TASK_INIT(pool__broadcast_run);
        int err;
        tasks[i].task = init, tasks[i].b = b, tasks[i].worker = (int)i;
        (void)pool__mark_queued(&tasks[i].task, NULL); /* a fresh task: never EBUSY */
        if ((err = pool__pin(p->workers[i], &tasks[i].task)) != 0) {
            pool__unmark_queued(&tasks[i].task);
            *pinned = i;
            return err;
        }
    }
    *pinned = n;
    return 0;
}

POOL__IMPL int pool_broadcast(pool *p, void (*fn)(void *arg, int worker), void *arg) {
    pool__broadcast_task inline_tasks[POOL__BROADCAST_INLINE], *tasks = inline_tasks;
    pool__broadcast b;
    pool__worker *w = pool__current();
    uint32_t n, pinned;
    void *user;
    int err;
    if (!fn) return EINVAL;
    if (!(p = pool__resolve(p))) return ENOMEM;
    if (pool__inherited(p)) return ECHILD;
    if ((w && w->join.home == p) || pool__inside_task_of(p, NULL)) return EDEADLK;
    /* Acquire: pairs with pool_destroy's release store. */
    if (POOL__LOAD(&p->closing, POOL__ACQUIRE)) return ECANCELED;
    n = (uint32_t)p->num_threads;
    user = p->user;
    if ((err = pool__spawn_through(p, n - 1)) != 0) return err;
    if (n > POOL__BROADCAST_INLINE &&
        !(tasks = (pool__broadcast_task *)pool__alloc(n * sizeof *tasks, user)))
        return ENOMEM;
    b.fn = fn, b.arg = arg, b.left = n;
    pool__latch_init(&b.done);
    err = pool__broadcast_pin(p, &b, tasks, n, &pinned);
    /* The calls not pinned never run: count them off. Whoever brings the
       count to 0 sets the latch (acq_rel, as in pool__broadcast_run). */
    if (pinned < n && POOL__FETCH_SUB(&b.left, n - pinned, POOL__ACQ_REL) == n - pinned)
        pool__latch_set(&b.done);
    pool__park(w, &b.done);
    if (tasks != inline_tasks) pool__free(tasks, user);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Public API: the trace file                                   >>api-trace */
/*                                                                          */
/* Chrome's trace event format, which Perfetto and chrome://tracing open:   */
/* per lane a thread_name record, then its events in time order. Jobs,      */
/* sleeps and blocking tasks are B/E pairs (they nest: a job that joins     */
/* runs others inside it), steals, wake-ups and injections instants. A      */
/* lane whose ring wrapped may start with E events whose B was overwritten. */
/* ------------------------------------------------------------------------ */

#ifdef POOL_TRACE
/* Copies lane's surviving events into out (POOL_TRACE_EVENTS slots);
   returns how many, with *first the index of the oldest. */
static size_t pool__trace_copy_lane(pool__trace_lane *lane, pool__trace_event *out,
                                    uint64_t *first) {
    /* Acquire: pairs with the release in pool__trace_lane_ready. */
    pool__trace_event *ev = POOL__LOAD(&lane->events, POOL__ACQUIRE);
    uint64_t head, again, lo, i;
    if (!ev) return 0;
    /* Acquire: pairs with pool__trace's release store; the events up to
       head are complete. */
    head = POOL__LOAD(&lane->head, POOL__ACQUIRE);
    lo = head > POOL_TRACE_EVENTS ? head - POOL_TRACE_EVENTS : 0;
    for (i = lo; i < head; i++) {
        /* Acquire, pairing with the slot's release stores: if this load
           saw a value of a later event j >= i + N (N = POOL_TRACE_EVENTS),
           the head load below sees at least j, the head the writer had
           stored before writing j, and the slot is discarded. */
        pool__trace_event *e = &ev[i & (POOL_TRACE_EVENTS - 1)];
        out[i - lo].ts = POOL__LOAD(&e->ts, POOL__ACQUIRE);
        out[i - lo].kind = POOL__LOAD(&e->kind, POOL__ACQUIRE);
        out[i - lo].arg = POOL__LOAD(&e->arg, POOL__ACQUIRE);
    }
    again = POOL__LOAD(&lane->head, POOL__ACQUIRE);
    /* With head at `again` the writer has written, or is writing, events
       up to index again, which reuse the slots of indices up to again - N:
       those may be torn. The ones from again - N + 1 on are intact. */
    if (again + 1 > POOL_TRACE_EVENTS && again + 1 - POOL_TRACE_EVENTS > lo) {
        uint64_t skip = again + 1 - POOL_TRACE_EVENTS - lo;
        if (skip >= head - lo) return 0;
        memmove(out, out + skip, (size_t)(head - lo - skip) * sizeof *out);
        lo += skip;
    }
    *first = lo;
    return (size_t)(head - lo);
}

static void pool__trace_write_event(FILE *f, int tid, const pool__trace_event *e) {
    static const char *const names[] = {"job",  "job",    "steal",    "sleep",   "sleep",
                                        "wake", "inject", "blocking", "blocking"};
    static const char phases[] = {'B', 'E', 'i', 'B', 'E', 'i', 'i', 'B', 'E'};
    static const char *const args[] = {NULL,     NULL,    "victim", NULL, NULL,
                                       "worker", "tasks", NULL,     NULL};
    if (e->kind > POOL__EV_BLOCKING_END) return;
    fprintf(
        f,
        ",\n{\"name\":\"%s\",\"cat\":\"pool\",\"ph\":\"%c\",\"ts\":%llu.%03u,\"pid\":1,\"tid\":%d",
        names[e->kind], phases[e->kind], (unsigned long long)(e->ts / 1000),
        (unsigned)(e->ts % 1000), tid);
    if (phases[e->kind] == 'i') fprintf(f, ",\"s\":\"t\"");
    if (args[e->kind]) fprintf(f, ",\"args\":{\"%s\":%u}", args[e->kind], (unsigned)e->arg);
    fputc('}', f);
}

/* Lane ids (Chrome's tid): worker i is i; the k-th blocking lane in the
   file POOL__TRACE_BLOCKING_TID + k, the k-th outside one
   POOL__TRACE_OUTSIDE_TID + k: above any worker index. */
#define POOL__TRACE_BLOCKING_TID 100000
#define POOL__TRACE_OUTSIDE_TID 200000

/* A JSON string: the pool's name is the user's and may hold anything. */
static void pool__trace_write_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void pool__trace_write_lane(FILE *f, pool *p, int index, pool__trace_event *buf,
                                   int *blocking_lanes, int *outside_lanes) {
    pool__trace_lane *lane = &p->trace->lane[index];
    uint64_t first = 0;
    size_t n = pool__trace_copy_lane(lane, buf, &first), i;
    char name[40];
    int tid;
    if (n == 0) return;
    if (index < (int)p->max_workers) {
        tid = index;
        pool__format_thread_name(name, p->name, index, NULL);
    } else if (index < pool__trace_own_lanes(p)) { /* an external slot: whoever held it */
        tid = index;
        pool__format_thread_name(name, p->name, -1, "slot");
        sprintf(name + strlen(name), "-%d", index - (int)p->max_workers);
    } else if (POOL__LOAD(&lane->blocking, POOL__RELAXED)) {
        tid = POOL__TRACE_BLOCKING_TID + *blocking_lanes;
        pool__format_thread_name(name, p->name, -1, "blk");
        sprintf(name + strlen(name), "-%d", (*blocking_lanes)++);
    } else {
        tid = POOL__TRACE_OUTSIDE_TID + *outside_lanes;
        sprintf(name, "outside-%d", (*outside_lanes)++);
    }
    fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":",
            tid);
    pool__trace_write_string(f, name);
    fprintf(f, "}}");
    for (i = 0; i < n; i++) pool__trace_write_event(f, tid, &buf[i]);
}
#endif

POOL__IMPL int pool_trace_write(const pool *cp, const char *path) {
#ifdef POOL_TRACE
    pool *p;
    pool__trace_event *buf;
    FILE *f;
    int i, rc = 0, blocking_lanes = 0, outside_lanes = 0, saved_errno = errno;
    if (!path) return EINVAL;
    if (!(p = pool__resolve(cp))) return ENOMEM;
    if (!p->trace) return ENOTSUP;
    buf = (pool__trace_event *)pool__alloc(POOL_TRACE_EVENTS * sizeof *buf, p->user);
    if (!buf) return ENOMEM;
    f = fopen(path, "w");
    if (!f) {
        rc = errno ? errno : EIO;
        pool__free(buf, p->user);
        return rc;
    }
    errno = 0; /* a buffered write fails at a flush: its errno is the one to report */
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
               "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
               "\"args\":{\"name\":");
    pool__trace_write_string(f, p->name);
    fprintf(f, "}}");
    for (i = 0; i < p->trace->lanes; i++)
        pool__trace_write_lane(f, p, i, buf, &blocking_lanes, &outside_lanes);
    fprintf(f, "\n]}\n");
    if (ferror(f)) rc = errno ? errno : EIO;
    if (fclose(f) != 0 && !rc) rc = errno ? errno : EIO;
    pool__free(buf, p->user);
    errno = rc ? rc : saved_errno; /* never left at the 0 set above */
    return rc;
#else
    (void)cp;
    return path ? ENOTSUP : EINVAL;
#endif
}

/* ------------------------------------------------------------------------ */
/* Public API: introspection                            >>api-introspection */
/* ------------------------------------------------------------------------ */

POOL__IMPL int pool_worker_index(void) { return pool__worker_index(); }

POOL__IMPL int pool_num_threads(const pool *p) {
    pool *r = pool__resolve(p);
    return r ? r->num_threads : 1;
}

/* Under spawn_lock, so that pool_destroy's count (every thread) is the
   last. Lowered: sleepers above the count are woken to retire (see
   "Retirement"), so that posters stop counting them asleep. Raised: the
   retired workers look again, and queued work wakes or starts threads as
   a post does. */
POOL__IMPL int pool_set_active_threads(pool *p, int n) {
    uint32_t old, i, started;
    if (!(p = pool__resolve(p))) return ENOMEM;
    if (pool__inherited(p)) return ECHILD;
    if (n < 1 || n > p->num_threads) return EINVAL;
    pool__mutex_lock(&p->spawn_lock);
    if (p->spawn_closed || POOL__LOAD(&p->closing, POOL__ACQUIRE)) {
        pool__mutex_unlock(&p->spawn_lock);
        return ECANCELED;
    }
    /* seq_cst: read by retired workers and posters with the parked count. */
    old = POOL__XCHG(&p->threads.active, (uint32_t)n, POOL__SEQ_CST);
    started = p->threads.started;
    if ((uint32_t)n < old)
        for (i = (uint32_t)n; i < started; i++) pool__wake_sleeper(p, p->workers[i]);
    else if ((uint32_t)n > old) pool__wake_retired(p);
    pool__mutex_unlock(&p->spawn_lock);
    if ((uint32_t)n > old && pool__work_visible(p))
        pool__wake_for_jobs(p, POOL__LOAD(&p->counters, POOL__SEQ_CST), (uint32_t)n - old, 0,
                            POOL__LOCK_WAIT);
    /* Lazy halves are work for the threads now wanted (see "Who asks"). */
    if ((uint32_t)n > old) pool__want_promotions_of(p, NULL, POOL__ASK_PAIRED);
    return 0;
}

POOL__IMPL int pool_active_threads(const pool *p) {
    pool *r = pool__resolve(p);
    return r ? (int)POOL__LOAD(&r->threads.active, POOL__RELAXED) : 1;
}

POOL__IMPL int pool_worker_index_limit(const pool *p) {
    pool *r = pool__resolve(p);
    return r ? (int)(r->max_workers + r->num_slots) : 1;
}

/* Worker w's counters into out. Relaxed loads: each counter is a
   statistic, read as a snapshot. */
static void pool__worker_stats_read(pool__worker *w, pool_worker_stats *out) {
    out->jobs_run = POOL__LOAD(&w->stats.jobs_run, POOL__RELAXED);
    out->jobs_stolen = POOL__LOAD(&w->stats.jobs_stolen, POOL__RELAXED);
    out->steals_failed = POOL__LOAD(&w->stats.steals_failed, POOL__RELAXED);
    out->jobs_injected = POOL__LOAD(&w->stats.jobs_injected, POOL__RELAXED);
    out->sleeps = POOL__LOAD(&w->stats.sleeps, POOL__RELAXED);
    out->wakeups = POOL__LOAD(&w->stats.wakeups, POOL__RELAXED);
    out->wakeups_wasted = POOL__LOAD(&w->stats.wakeups_wasted, POOL__RELAXED);
    out->waits_parked = POOL__LOAD(&w->stats.waits_parked, POOL__RELAXED);
    out->wait_depth_max = POOL__LOAD(&w->stats.wait_depth_max, POOL__RELAXED);
    out->spin_ns = POOL__LOAD(&w->stats.spin_ns, POOL__RELAXED);
    out->joins_promoted = POOL__LOAD(&w->stats.joins_promoted, POOL__RELAXED);
    out->spawns_inline = POOL__LOAD(&w->stats.spawns_inline, POOL__RELAXED);
    out->tasks_cancelled = POOL__LOAD(&w->stats.tasks_cancelled, POOL__RELAXED);
    out->slot_calls = POOL__LOAD(&w->stats.slot_calls, POOL__RELAXED);
    out->cpu = POOL__LOAD(&w->cpu, POOL__RELAXED);
}

POOL__IMPL void pool_stats_get(const pool *cp, pool_stats *out) {
    pool *p;
    uint32_t i, started;
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!(p = pool__resolve(cp))) return;
    /* Acquire: pairs with pool__spawn's release; relaxed for the rest. */
    started = POOL__LOAD(&p->threads.started, POOL__ACQUIRE);
    for (i = 0; i < started + p->num_slots; i++) { /* the workers, then the external slots */
        pool_worker_stats w;
        pool__worker_stats_read(i < started ? p->workers[i] : pool__slot(p, i - started), &w);
        out->slot_calls += w.slot_calls;
        out->jobs_run += w.jobs_run;
        out->jobs_stolen += w.jobs_stolen;
        out->steals_failed += w.steals_failed;
        out->sleeps += w.sleeps;
        out->wakeups += w.wakeups;
        out->wakeups_wasted += w.wakeups_wasted;
        out->waits_parked += w.waits_parked;
        out->spin_ns += w.spin_ns;
        out->joins_promoted += w.joins_promoted;
        out->spawns_inline += w.spawns_inline;
        out->tasks_cancelled += w.tasks_cancelled;
        if (w.wait_depth_max > out->wait_depth_max) out->wait_depth_max = w.wait_depth_max;
    }
    i = POOL__LOAD(&p->outside_wait_depth_max, POOL__RELAXED);
    if (i > out->wait_depth_max) out->wait_depth_max = i;
    out->jobs_injected = POOL__LOAD(&p->jobs_injected, POOL__RELAXED);
    out->spawns_inline += POOL__LOAD(&p->outside_spawns_inline, POOL__RELAXED);
    out->threads_started = started < (uint32_t)p->num_threads ? started : (uint32_t)p->num_threads;
    out->spares_started = started - out->threads_started;
    out->threads_failed = POOL__LOAD(&p->threads_failed, POOL__RELAXED);
    out->threads_retired = POOL__LOAD(&p->retired, POOL__RELAXED);
    out->num_threads = p->num_threads;
    out->blocking_threads = POOL__LOAD(&p->blocking.stats.threads, POOL__RELAXED);
    out->blocking_idle_threads = POOL__LOAD(&p->blocking.stats.idle, POOL__RELAXED);
    out->blocking_queue_depth = POOL__LOAD(&p->blocking.stats.queued, POOL__RELAXED);
    out->blocking_tasks_run = POOL__LOAD(&p->blocking.stats.run, POOL__RELAXED);
    out->blocking_tasks_skipped = POOL__LOAD(&p->blocking.stats.skipped, POOL__RELAXED);
    out->blocking_threads_started = POOL__LOAD(&p->blocking.stats.started, POOL__RELAXED);
    out->blocking_threads_failed = POOL__LOAD(&p->blocking.stats.failed, POOL__RELAXED);
}

POOL__IMPL int pool_worker_stats_get(const pool *cp, int worker, pool_worker_stats *out) {
    pool *p;
    if (!out) return EINVAL;
    memset(out, 0, sizeof *out);
    out->cpu = -1;
    if (!(p = pool__resolve(cp))) return ENOMEM;
    if (worker < 0 || (uint32_t)worker >= p->max_workers + p->num_slots) return EINVAL;
    if ((uint32_t)worker >= p->max_workers) { /* an external slot */
        pool__worker_stats_read(p->workers[worker], out);
        return 0;
    }
    /* Acquire: pairs with pool__spawn's release. */
    out->started = (uint32_t)worker < POOL__LOAD(&p->threads.started, POOL__ACQUIRE);
    if (out->started) pool__worker_stats_read(p->workers[worker], out);
    return 0;
}

/* The pool's totals, then one row per started worker and spare. */
POOL__IMPL int pool_stats_print(const pool *cp, FILE *out) {
    pool_stats s;
    pool_worker_stats ws;
    pool *p;
    int i, saved_errno = errno;
    if (!out) return EINVAL;
    if (!(p = pool__resolve(cp))) return ENOMEM;
    errno = 0; /* a failed write's errno is the one to report, not an older one */
    pool_stats_get(p, &s);
    fprintf(out,
            "pool %s: %llu/%d threads started (%llu failed), %llu spares\n"
            "  jobs     %llu run, %llu stolen, %llu steals failed, %llu injected, "
            "%llu join halves promoted, %llu spawns run inline, %llu cancelled, "
            "%llu calls in external slots\n"
            "  sleep    %llu sleeps, %llu wake-ups, %llu wasted, %llu us spun\n"
            "  waits    %llu parked, nested %llu deep at most\n"
            "  blocking %llu threads (%llu idle), %llu queued, %llu run, %llu skipped, "
            "%llu threads started, %llu failed\n",
            p->name, (unsigned long long)s.threads_started, s.num_threads,
            (unsigned long long)s.threads_failed, (unsigned long long)s.spares_started,
            (unsigned long long)s.jobs_run, (unsigned long long)s.jobs_stolen,
            (unsigned long long)s.steals_failed, (unsigned long long)s.jobs_injected,
            (unsigned long long)s.joins_promoted, (unsigned long long)s.spawns_inline,
            (unsigned long long)s.tasks_cancelled, (unsigned long long)s.slot_calls,
            (unsigned long long)s.sleeps, (unsigned long long)s.wakeups,
            (unsigned long long)s.wakeups_wasted, (unsigned long long)(s.spin_ns / 1000),
            (unsigned long long)s.waits_parked, (unsigned long long)s.wait_depth_max,
            (unsigned long long)s.blocking_threads, (unsigned long long)s.blocking_idle_threads,
            (unsigned long long)s.blocking_queue_depth, (unsigned long long)s.blocking_tasks_run,
            (unsigned long long)s.blocking_tasks_skipped,
            (unsigned long long)s.blocking_threads_started,
            (unsigned long long)s.blocking_threads_failed);
    fprintf(out, "  %6s %12s %12s %10s %10s %8s %8s %8s %8s %5s %4s\n", "worker", "run", "stolen",
            "failed", "injected", "sleeps", "wakeups", "wasted", "parked", "depth", "cpu");
    for (i = 0; i < (int)p->max_workers; i++) {
        if (pool_worker_stats_get(p, i, &ws) != 0 || !ws.started) break;
        fprintf(out, "  %6d %12llu %12llu %10llu %10llu %8llu %8llu %8llu %8llu %5llu %4d\n", i,
                (unsigned long long)ws.jobs_run, (unsigned long long)ws.jobs_stolen,
                (unsigned long long)ws.steals_failed, (unsigned long long)ws.jobs_injected,
                (unsigned long long)ws.sleeps, (unsigned long long)ws.wakeups,
                (unsigned long long)ws.wakeups_wasted, (unsigned long long)ws.waits_parked,
                (unsigned long long)ws.wait_depth_max, ws.cpu);
    }
    /* A buffered stream may fail only when it is flushed (a full disk). */
    if (fflush(out) != 0 || ferror(out)) {
        if (!errno) errno = EIO; /* never left at the 0 set above */
        return errno;
    }
    errno = saved_errno;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Public API: the blocking pool                             >>api-blocking */
/* ------------------------------------------------------------------------ */

POOL__IMPL int pool_submit_blocking(pool *p, pool_task *t) {
    int rc;
    if (!t || !t->run) return EINVAL;
    if (!(p = pool__resolve(p))) return ENOMEM;
    if (pool__inherited(p)) return ECHILD;
    if (pool__mark_queued(t, NULL) != 0) return EBUSY;
    rc = pool__blocking_submit(p, t);
    if (rc) pool__unmark_queued(t);
    return rc;
}

POOL__IMPL int pool_submit_blocking_job(pool *p, pool_blocking_job *job) {
    pool *in_flight;
    int rc;
    if (!job || !job->run) return EINVAL;
    if (!(p = pool__resolve(p))) return ENOMEM;
    if (pool__inherited(p)) return ECHILD;
    /* Relaxed: set by this job's earlier submit, which happens before its
       run (and a submit from there), or cleared by its wait. */
    in_flight = POOL__LOAD(&job->pool__pool, POOL__RELAXED);
    if (in_flight && in_flight != p) return EBUSY; /* still in flight on another pool */
    if (pool__mark_queued(&job->pool__task, NULL) != 0) return EBUSY;
    if (in_flight) {
        /* Relaxed: a run in flight or the waiter holds a reference, so the
           count cannot reach zero under this. */
        POOL__FETCH_ADD(&job->pool__refs, 1, POOL__RELAXED);
    } else {
        job->pool__fork_generation = p->fork_generation;
        job->pool__task.run = pool__blocking_job_run;
        POOL__STORE(&job->pool__pool, p, POOL__RELAXED);
        POOL__STORE(&job->pool__refs, 2, POOL__RELAXED);
        POOL__STORE(&job->pool__status, 0, POOL__RELAXED);
    }
    rc = pool__blocking_submit(p, &job->pool__task);
    if (rc) {
        pool__unmark_queued(&job->pool__task);
        if (in_flight) POOL__FETCH_SUB(&job->pool__refs, 1, POOL__RELAXED);
        else POOL__STORE(&job->pool__pool, NULL, POOL__RELAXED);
    }
    return rc;
}

POOL__IMPL int pool_wait_blocking_job(pool_blocking_job *job) {
    pool *p;
    int status;
    if (!job || !(p = POOL__LOAD(&job->pool__pool, POOL__RELAXED))) return EINVAL;
    /* Submitted before a fork, and not finished then: the copy here will
       never run. (The pool itself may be gone; the job remembers.) */
    if (job->pool__fork_generation != POOL__LOAD(&pool__fork_generation, POOL__RELAXED) &&
        POOL__LOAD(&job->pool__refs, POOL__ACQUIRE) != 1) {
        POOL__STORE(&job->pool__pool, NULL, POOL__RELAXED);
        return ECHILD;
    }
    pool__latch_init(&job->pool__done);
    /* Drop the waiter's reference; acq_rel as in pool__blocking_job_finish. */
    if (POOL__FETCH_SUB(&job->pool__refs, 1, POOL__ACQ_REL) != 1) {
        /* Parks at once, no spin: blocking jobs are rarely short, and a
           spinning waiter would hold a CPU the blocking thread it woke
           needs. A worker parks too, with a spare standing in for it (see
           the waiting section). The job's pool may be destroyed while we
           wait, so an outside wait is not counted in its statistics. */
        pool__worker *w = pool__current();
        pool__wait_enter(w, NULL);
        pool__park(w, &job->pool__done);
        pool__wait_leave(w);
    }
    status = POOL__LOAD(&job->pool__status, POOL__RELAXED); /* the latch's acquire orders it */
    POOL__STORE(&job->pool__pool, NULL, POOL__RELAXED); /* waited for: a second wait is EINVAL */
    return status;
}

#endif /* POOL_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
VERSION HISTORY
  0.3.0  the waiting rule: a waiter runs only work that belongs to what it
         waits for (leapfrogging), parks otherwise, and its pool starts
         spare threads for queued work (max_spare_threads,
         pool_worker_index_limit, wait statistics); a monitor thread
         retries failed thread starts; pool_scope_wait_status; blocking
         jobs refuse a second queueing and may submit themselves again;
         fairness toward injected work; stack_size probed at create;
         the idle spin budget (spin_us, $POOL_SPIN_US, pool_stats.spin_ns)
  0.2.0  per-worker stats and pool_stats_print; POOL_TRACE and
         pool_trace_write; CPU pinning; cgroup-aware default size; fork
         safety; native Windows threads and WaitOnAddress; FreeBSD
         _umtx_op and macOS ulock/os_sync wait; POOL__THREAD_CREATE hook
  0.1.0  first release: work-stealing core, sleep protocol, fork-join,
         scopes, parallel_for, detached tasks, blocking pool
------------------------------------------------------------------------------
LICENSE

MIT License

Copyright (c) 2026 the pool.h authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in
all copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
