/* test_cpp.cpp - the C++ interface, namespace pool_cpp: join, call,
 * parallel_for, parallel_reduce, sort and scope, with exact outcomes (every
 * task ran exactly once, every sum and checksum matches) and the exceptions
 * each one carries to its caller. C++11 (C++17 and C++20 too, g++ and
 * clang++); tests/test_cpp.sh builds and runs it in each of those, under
 * ThreadSanitizer and under ASan + UBSan. tests/test.h is C (stdatomic), so
 * the harness is here: CHECK, a watchdog that fails a stalled part, parts
 * by name on the command line, loops scaled by $POOL_TEST_SCALE.
 * The parts:
 *   join          fib(20..25) through join (each half adds into its result,
 *                 so a half run twice or never changes it) on pools of 1, 2
 *                 and 4 threads: from outside the pool, from a worker
 *                 (inside call, with and without external slots: the
 *                 thread-local view is the pool's, so the join is inline),
 *                 nested (a join whose half calls and joins again), on pool
 *                 B from a worker of pool A (not inline: the view is A's),
 *                 and on the default pool (NULL) from outside and inside
 *                 (inline there: the view is the default pool's).
 *   join_throw    a throws, b throws, both throw (a's is rethrown), neither:
 *                 the other half always ran once; from outside, inline on a
 *                 worker, on another pool from a worker, on the default
 *                 pool, and through a nested join. b run by a thief (a
 *                 spins, at most 5 s, until b has started on another
 *                 thread): b's exception, a's too when both throw, reaches
 *                 the caller.
 *   call          int, std::string and void results, one with no default
 *                 constructor, a move-only one; a reference result
 *                 decayed to a value; mutable, const, lvalue callables and
 *                 a function pointer; run on the pool (a worker index, the
 *                 pool's view), nested, on another pool from a worker, on
 *                 the default pool; exceptions rethrown (value and void).
 *   parallel_for  each index of [begin, end) exactly once (a counter per
 *                 index), both overloads, many sizes, offsets and grains,
 *                 pools of 1, 2 and 4, from outside and from a worker,
 *                 nested loops; empty and reversed ranges call nothing. A
 *                 throw at one index: rethrown; with grain 1 every other
 *                 index ran once; with a grain g only indices after the
 *                 throw in its piece (fewer than g, contiguous) were left
 *                 out, none ran twice.
 *   reduce        an integer sum exact (grains 0, 1, 7, 1000, more than the
 *                 range); a double sum with a grain bit-identical on 1, 2
 *                 and 4 threads and to the same halving done serially; the
 *                 identity for an empty range (fold never called);
 *                 std::string concatenation (order-sensitive combine) and a
 *                 std::vector<int> histogram equal the serial answer; a
 *                 partial result with no default constructor; exceptions
 *                 from fold and combine rethrown.
 *   sort          random uint32 vectors of 0, 1, 100, 8191, 8192, 8193,
 *                 100,000 and 1,000,000 elements (20,000 and 100,000 with
 *                 $POOL_TEST_SCALE below 1) against std::sort, on
 *                 pools of 1, 2, 4 and 16 threads; few distinct values;
 *                 equal keys, organ pipes, saw teeth and keys out of place
 *                 (what wears a quicksort's leaves down); a trivially
 *                 copyable type that is only movable; std::greater; std::string elements; a
 * std::deque<int>; keys with payloads (every payload present once); from a worker and on the
 * default pool. A comparator that throws after N calls (once, or every call from then on) and a
 *                 move that throws after N moves: the exception reaches the
 *                 caller, every element constructed was destroyed (a live
 *                 count), nothing leaked (ASan), the range holds its own
 *                 elements (one moved-from where a move threw); a throwing
 *                 comparator on trivially copyable keys (the branch-free
 *                 leaves and the raw buffer): rethrown, the range holds
 *                 its own keys, each once, sortable again.
 *   scope         small trivially copyable lambdas (the copy path: no
 *                 operator new on the spawning thread, up to 96 bytes with
 *                 the scope's pointer), lambdas capturing a std::string or
 *                 over 96 bytes (the heap path: one new each): every task
 *                 once, captures intact; nested spawns (a tree, every node
 *                 once); spawns from a worker; a scope inside a task; an
 *                 exception in one task: wait rethrows it after every other
 *                 task ran, and the scope is reusable (the next round
 *                 returns normally); two threads waiting on one scope whose
 *                 task threw: exactly one gets the exception; a task that
 *                 waits on its own scope after another threw gets EDEADLK
 *                 and no exception, the real waiter the exception; cancel: on
 *                 one thread held by a gate, every queued task skipped (none
 *                 ran, every capture destroyed; a C task spawned through
 *                 c_scope() neither run nor touched, and run in the next
 *                 round), cancelled() true inside, try_spawn ECANCELED,
 *                 spawn throws std::system_error(ECANCELED), wait_status
 *                 ECANCELED, the next round runs and returns 0; a cancel
 *                 from a task midway: each task ran at most once and was
 *                 destroyed exactly once; the destructor waits for running
 *                 tasks; the default pool.
 *
 * The C interface the wrapper sits on, and the other build shapes (the
 * implementation compiled as C, POOL_STATIC in two files, -fno-exceptions,
 * files with and without exceptions in one program) are tests/test_cpp.sh's.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* The harness                                                              */
/* ------------------------------------------------------------------------ */

static std::atomic<long> failures(0);
static std::atomic<long> printed(0);

static void fail_at(const char *file, int line, const char *expr, const std::string &detail) {
    failures.fetch_add(1);
    if (printed.fetch_add(1) < 50) {
        std::fflush(stdout);
        std::fprintf(stderr, "%s:%d: CHECK failed: %s%s%s\n", file, line, expr,
                     detail.empty() ? "" : "  ", detail.c_str());
        std::fflush(stderr);
    }
}

#define CHECK(cond) \
    do { \
        if (!(cond)) fail_at(__FILE__, __LINE__, #cond, std::string()); \
    } while (0)

#define CHECK_EQ(a, b) \
    do { \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b); \
        if (check_a_ != check_b_) \
            fail_at(__FILE__, __LINE__, #a " == " #b, \
                    "(" + std::to_string(check_a_) + " != " + std::to_string(check_b_) + ")"); \
    } while (0)

/* The watchdog: a detached thread that fails the program (status 3, as
   tests/test.h's) when the part it was armed for has not ended in time. */
static std::atomic<long long> watchdog_deadline_ms(0);
static std::atomic<int> watchdog_seconds(0);
static std::atomic<const char *> watchdog_name(nullptr);

static long long now_ms() {
    return (long long)std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static void watchdog(int seconds, const char *name) {
    static bool started = false;
    watchdog_name.store(name);
    watchdog_seconds.store(seconds);
    watchdog_deadline_ms.store(now_ms() + 1000LL * seconds);
    if (started) return;
    started = true;
    std::thread([] {
        for (;;) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            if (now_ms() < watchdog_deadline_ms.load()) continue;
            char msg[256];
            int len = std::snprintf(msg, sizeof msg, "WATCHDOG: %s stalled after %d s\n",
                                    watchdog_name.load(), watchdog_seconds.load());
            if (len > (int)sizeof msg - 1) len = (int)sizeof msg - 1;
            std::fflush(stdout);
            if (write(2, msg, (size_t)len) < 0) {
            }
            _exit(3); /* the stalled threads hold locks: no atexit */
        }
    }).detach();
}

static double test_scale() {
    const char *s = std::getenv("POOL_TEST_SCALE");
    double v = s ? std::atof(s) : 1.0;
    return v > 0 ? v : 1.0;
}

static size_t scaled(size_t n, size_t min) {
    size_t v = (size_t)((double)n * test_scale());
    return v < min ? min : v;
}

/* A pool of `threads` workers; slots false: no external slots, so that a
   call from outside runs on a worker. */
static pool *make_pool(int threads, bool slots = true) {
    pool_config cfg;
    pool *p = nullptr;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    if (!slots) cfg.external_slots = POOL_EXTERNAL_SLOTS_NONE;
    int rc = pool_create(&p, &cfg);
    if (rc) {
        std::fprintf(stderr, "pool_create(%d) failed: %d\n", threads, rc);
        std::exit(2);
    }
    return p;
}

static void destroy_pool(pool *p) { CHECK_EQ(pool_destroy(p), 0); }

/* What the tests throw: an id to tell whose exception arrived. */
struct boom {
    int id;
};

/* Runs f; returns the id of the boom it threw, -1 if it threw nothing, -2
   for anything else. */
template <class F> static int thrown_id(F &&f) {
    try {
        f();
    } catch (const boom &e) {
        return e.id;
    } catch (...) {
        return -2;
    }
    return -1;
}

/* Spins until flag is set or `seconds` pass; whether it was set. */
static bool spin_until(const std::atomic<int> &flag, double seconds) {
    long long end = now_ms() + (long long)(seconds * 1000);
    while (!flag.load()) {
        if (now_ms() > end) return false;
        std::this_thread::yield();
    }
    return true;
}

/* operator new counted per thread, to tell the scope's copy path (no new)
   from its heap path (one new per spawn). */
static thread_local long news_on_this_thread = 0;

/* Out of line: g++ would otherwise pair the inlined free with a new
   expression (-Wmismatched-new-delete). */
__attribute__((noinline)) static void *counted_alloc(std::size_t size) {
    news_on_this_thread++;
    return std::malloc(size ? size : 1);
}
__attribute__((noinline)) static void counted_free(void *p) { std::free(p); }

void *operator new(std::size_t size) {
    void *p = counted_alloc(size);
    if (!p) throw std::bad_alloc();
    return p;
}
/* While set, every nothrow new fails: out of memory where the C++
   interface keeps an exception. */
static std::atomic<bool> refuse_nothrow_new(false);

void *operator new(std::size_t size, const std::nothrow_t &) noexcept {
    if (refuse_nothrow_new.load()) return nullptr;
    return counted_alloc(size);
}
void operator delete(void *p) noexcept { counted_free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { counted_free(p); }
#if defined(__cpp_sized_deallocation)
void operator delete(void *p, std::size_t) noexcept { counted_free(p); }
#endif

/* An object that counts the live ones (each constructor adds one, the
   destructor takes it back) and owns heap memory (a string too long for
   the small-string buffer): a leaked one shows in `live` and under ASan. */
struct tracked {
    static std::atomic<long> live;
    static std::atomic<long> moves_left; /* a move throws when it reaches 0; < 0: never */
    long key;
    std::string text;
    explicit tracked(long k = 0) : key(k), text(make_text(k)) { live++; }
    tracked(const tracked &o) : key(o.key), text(o.text) { live++; }
    tracked(tracked &&o) : key(o.key), text() {
        count_move();
        text = std::move(o.text);
        live++;
    }
    tracked &operator=(const tracked &o) {
        key = o.key;
        text = o.text;
        return *this;
    }
    tracked &operator=(tracked &&o) {
        count_move();
        key = o.key;
        text = std::move(o.text);
        return *this;
    }
    ~tracked() { live--; }
    static std::string make_text(long k) { return "tracked element number " + std::to_string(k); }
    static void count_move() {
        if (moves_left.load(std::memory_order_relaxed) < 0) return;
        if (moves_left.fetch_sub(1) == 0) throw boom{41};
    }
    bool operator<(const tracked &o) const { return key < o.key; }
};
std::atomic<long> tracked::live(0);
std::atomic<long> tracked::moves_left(-1);

static const int pool_sizes[] = {1, 2, 4};

/* ------------------------------------------------------------------------ */
/* join                                                                     */
/* ------------------------------------------------------------------------ */

/* fib through join; each half adds into its result, so a half run twice
   or never gives another number. */
static long fib(pool *p, int n) {
    if (n < 2) return n;
    long x = 0, y = 0;
    pool_cpp::join(
        p, [&] { x += fib(p, n - 1); }, [&] { y += fib(p, n - 2); });
    return x + y;
}

static long fib_serial(int n) {
    long a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        long t = a + b;
        a = b;
        b = t;
    }
    return a;
}

/* Whether this thread's join view is p's: a join on p here is inline. */
static bool view_is(pool *p) {
    pool__join_view *v = pool__join_current_v3;
    return v && v->home == p;
}

static void part_join() {
    std::printf("  join: fib on 1, 2, 4 threads, outside, worker, nested, cross-pool, NULL\n");
    watchdog(120, "test_cpp join");
    int top = test_scale() < 1 ? 22 : 25;
    CHECK(pool__join_current_v3 == nullptr); /* main is outside every pool */
    pool *other = make_pool(2);
    for (int threads : pool_sizes) {
        pool *p = make_pool(threads);
        pool *noslots = make_pool(threads, false);
        for (int n = 20; n <= top; n++) {
            long want = fib_serial(n);
            CHECK_EQ(fib(p, n), want);               /* from outside: pool_join's way */
            CHECK(pool__join_current_v3 == nullptr); /* and nothing left behind */
            bool inline_view = false, on_worker = false;
            long got = pool_cpp::call(p, [&] {
                inline_view = view_is(p);
                return fib(p, n);
            });
            CHECK_EQ(got, want);
            CHECK(inline_view);
            got = pool_cpp::call(noslots, [&] {
                inline_view = view_is(noslots);
                int w = pool_worker_index();
                on_worker = w >= 0 && w < threads;
                return fib(noslots, n);
            });
            CHECK_EQ(got, want);
            CHECK(inline_view);
            CHECK(on_worker);
        }
        /* Nested: a join whose halves join, call and join on the same pool. */
        for (pool *q : {p, noslots}) {
            long r1 = 0, r2 = 0, r3 = 0;
            pool_cpp::call(q, [&] {
                pool_cpp::join(
                    q,
                    [&] {
                        pool_cpp::join(
                            q, [&] { r1 += fib(q, 18); }, [&] { r2 += fib(q, 17); });
                    },
                    [&] { r3 += pool_cpp::call(q, [&] { return fib(q, 19); }); });
            });
            CHECK_EQ(r1, fib_serial(18));
            CHECK_EQ(r2, fib_serial(17));
            CHECK_EQ(r3, fib_serial(19));
        }
        /* On pool B from a worker of pool A: the view is A's, so not inline. */
        bool view_a = false, view_b = false;
        long got = pool_cpp::call(noslots, [&] {
            view_a = view_is(noslots);
            long ra = 0, rb = 0;
            pool_cpp::join(
                other,
                [&] {
                    view_b = view_is(other);
                    ra += fib(other, 20);
                },
                [&] { rb += fib(noslots, 19); });
            return ra * 100000 + rb;
        });
        CHECK_EQ(got, fib_serial(20) * 100000 + fib_serial(19));
        CHECK(view_a);
        CHECK(view_b); /* a ran on B (in pool_join, on a worker of B) */
        destroy_pool(p);
        destroy_pool(noslots);
    }
    destroy_pool(other);
    /* The default pool. */
    CHECK_EQ(fib(nullptr, 21), fib_serial(21));
    bool default_view = false;
    CHECK_EQ(pool_cpp::call(nullptr,
                            [&] {
                                /* A NULL pool is inline on a thread of the default pool. */
                                pool__join_view *v = pool__join_current_v3;
                                default_view = v && v->home_is_default;
                                return fib(nullptr, 21);
                            }),
             fib_serial(21));
    CHECK(default_view);
}

/* ------------------------------------------------------------------------ */
/* join_throw                                                               */
/* ------------------------------------------------------------------------ */

struct join_outcome {
    int caught; /* thrown_id of the join */
    int a_ran, b_ran;
};

static join_outcome join_throwing(pool *p, bool a_throws, bool b_throws) {
    join_outcome o = {-3, 0, 0};
    o.caught = thrown_id([&] {
        pool_cpp::join(
            p,
            [&] {
                o.a_ran++;
                if (a_throws) throw boom{1};
            },
            [&] {
                o.b_ran++;
                if (b_throws) throw boom{2};
            });
    });
    return o;
}

/* The four cases on p, from wherever this runs; `where` names it. */
static void join_throw_cases(pool *p, const char *where) {
    for (int c = 0; c < 4; c++) {
        bool a_throws = c & 1, b_throws = c & 2;
        join_outcome o = join_throwing(p, a_throws, b_throws);
        int want = a_throws ? 1 : b_throws ? 2 : -1;
        if (o.caught != want || o.a_ran != 1 || o.b_ran != 1)
            fail_at(__FILE__, __LINE__, where,
                    "case " + std::to_string(c) + ": caught " + std::to_string(o.caught) +
                        " (want " + std::to_string(want) + "), a ran " + std::to_string(o.a_ran) +
                        ", b ran " + std::to_string(o.b_ran));
    }
}

/* b on a thief: a waits until b has started on another thread. */
static void join_throw_thief(pool *p, bool a_throws, bool b_throws) {
    std::atomic<int> b_started(0);
    int a_index = -5, b_index = -5, a_ran = 0, b_ran = 0;
    bool seen = false;
    int caught = thrown_id([&] {
        pool_cpp::call(p, [&] {
            pool_cpp::join(
                p,
                [&] {
                    a_ran++;
                    a_index = pool_worker_index();
                    seen = spin_until(b_started, 5.0);
                    if (a_throws) throw boom{1};
                },
                [&] {
                    b_ran++;
                    b_index = pool_worker_index();
                    b_started.store(1);
                    if (b_throws) throw boom{2};
                });
        });
    });
    CHECK(seen);
    CHECK_EQ(a_ran, 1);
    CHECK_EQ(b_ran, 1);
    CHECK(b_index >= 0);
    CHECK(a_index != b_index);
    CHECK_EQ(caught, a_throws ? 1 : b_throws ? 2 : -1);
}

static void part_join_throw() {
    std::printf("  join_throw: a, b, both, neither; outside, inline, cross-pool, NULL, thief\n");
    watchdog(60, "test_cpp join_throw");
    pool *other = make_pool(2);
    for (int threads : pool_sizes) {
        pool *p = make_pool(threads);
        pool *noslots = make_pool(threads, false);
        join_throw_cases(p, "join from outside");
        join_throw_cases(noslots, "join from outside (no slots)");
        pool_cpp::call(p, [&] { join_throw_cases(p, "inline join in a slot"); });
        pool_cpp::call(noslots, [&] { join_throw_cases(noslots, "inline join on a worker"); });
        pool_cpp::call(noslots, [&] { join_throw_cases(other, "join on B from a worker of A"); });
        /* Through a nested join: the inner join's exception leaves the
           outer join's a, which rethrows it; b still ran. */
        pool_cpp::call(noslots, [&] {
            int inner_b = 0, outer_b = 0;
            int id = thrown_id([&] {
                pool_cpp::join(
                    noslots,
                    [&] {
                        pool_cpp::join(
                            noslots, [] { throw boom{5}; }, [&] { inner_b++; });
                    },
                    [&] { outer_b++; });
            });
            CHECK_EQ(id, 5);
            CHECK_EQ(inner_b, 1);
            CHECK_EQ(outer_b, 1);
        });
        /* An exception that leaves call: rethrown by call as well. */
        CHECK_EQ(thrown_id([&] {
                     pool_cpp::call(p, [&] {
                         pool_cpp::join(
                             p, [] {}, [] { throw boom{6}; });
                     });
                 }),
                 6);
        destroy_pool(p);
        destroy_pool(noslots);
    }
    join_throw_cases(nullptr, "join on the default pool from outside");
    pool_cpp::call(nullptr, [] { join_throw_cases(nullptr, "join on the default pool inside"); });
    /* b on a thief, with and without external slots. */
    for (int slots = 0; slots < 2; slots++) {
        pool *p = make_pool(2, slots != 0);
        for (int c = 0; c < 4; c++) join_throw_thief(p, c & 1, c & 2);
        destroy_pool(p);
    }
    destroy_pool(other);
}

/* ------------------------------------------------------------------------ */
/* call                                                                     */
/* ------------------------------------------------------------------------ */

static int forty_two() { return pool_worker_index() >= 0 ? 42 : -42; }

/* A result or partial result with no default constructor. */
struct no_default {
    long value;
    explicit no_default(long v) : value(v) {}
};

static void part_call() {
    std::printf("  call: int, std::string, void, references, callables, nesting, exceptions\n");
    watchdog(60, "test_cpp call");
    pool *other = make_pool(2, false);
    for (int threads : pool_sizes) {
        for (int slots = 0; slots < 2; slots++) {
            pool *p = make_pool(threads, slots != 0);
            int runs = 0;
            CHECK_EQ(pool_cpp::call(p,
                                    [&] {
                                        runs++;
                                        return view_is(p) && pool_worker_index() >= 0 ? 7 : -7;
                                    }),
                     7);
            CHECK_EQ(runs, 1);
            std::string s = pool_cpp::call(p, [&] {
                runs++;
                return std::string(view_is(p) ? "on the pool, " : "elsewhere, ") +
                       std::string(100, 'x');
            });
            CHECK(s == "on the pool, " + std::string(100, 'x'));
            CHECK_EQ(runs, 2);
            pool_cpp::call(p, [&] { runs++; });
            CHECK_EQ(runs, 3);
            auto noop = [] {};
            static_assert(std::is_void<decltype(pool_cpp::call(p, noop))>::value, "void call");

            /* A reference result comes back as a value. */
            int target = 5;
            auto copy = pool_cpp::call(p, [&]() -> int & { return target; });
            static_assert(std::is_same<decltype(copy), int>::value, "decayed result");
            target = 6;
            CHECK_EQ(copy, 5);

            /* Callables: mutable (its state persists in the caller's object),
               const lvalue, a function pointer. */
            int state = 0;
            auto counter = [state]() mutable { return ++state; };
            CHECK_EQ(pool_cpp::call(p, counter), 1);
            CHECK_EQ(pool_cpp::call(p, counter), 2);
            const auto constant = [] { return 11; };
            CHECK_EQ(pool_cpp::call(p, constant), 11);
            CHECK_EQ(pool_cpp::call(p, &forty_two), 42);
            CHECK_EQ(pool_cpp::call(p, forty_two), 42);

            /* Nested (inline on the worker), and on another pool from a worker:
               there it runs on that pool (its view). */
            CHECK_EQ(pool_cpp::call(
                         p,
                         [&] {
                             return pool_cpp::call(p, [&] { return view_is(p) ? 1 : 0; }) +
                                    pool_cpp::call(other, [&] { return view_is(other) ? 2 : 0; });
                         }),
                     3);

            /* Exceptions. */
            CHECK_EQ(thrown_id([&] { (void)pool_cpp::call(p, []() -> int { throw boom{7}; }); }),
                     7);
            CHECK_EQ(
                thrown_id([&] { (void)pool_cpp::call(p, []() -> std::string { throw boom{8}; }); }),
                8);
            CHECK_EQ(thrown_id([&] { pool_cpp::call(p, [] { throw boom{9}; }); }), 9);
            CHECK_EQ(thrown_id([&] {
                         pool_cpp::call(p, [&] { pool_cpp::call(other, [] { throw boom{10}; }); });
                     }),
                     10);
            CHECK_EQ(thrown_id([&] {
                         pool_cpp::call(p, [] { throw std::runtime_error("not a boom"); });
                     }),
                     -2);
            /* And the call after a throw is clean. */
            CHECK_EQ(pool_cpp::call(p, [] { return 3; }), 3);

            /* No memory to keep the exception in: the caller still learns
               that the work failed (a result never made is not returned). */
            refuse_nothrow_new = true;
            bool lost = false;
            try {
                (void)pool_cpp::call(p, []() -> std::string { throw boom{13}; });
            } catch (const std::bad_alloc &) {
                lost = true;
            } catch (...) {
            }
            refuse_nothrow_new = false;
            CHECK(lost);
            CHECK_EQ(pool_cpp::call(p, [] { return 4; }), 4);

            /* Results with no default constructor, and move-only ones. */
            CHECK_EQ(pool_cpp::call(p, [] { return no_default(17); }).value, 17);
            std::unique_ptr<std::string> up = pool_cpp::call(
                p, [] { return std::unique_ptr<std::string>(new std::string("up")); });
            CHECK(up && *up == "up");
            CHECK_EQ(thrown_id([&] {
                         (void)pool_cpp::call(p, []() -> std::unique_ptr<int> { throw boom{11}; });
                     }),
                     11);
            destroy_pool(p);
        }
    }
    destroy_pool(other);
    CHECK_EQ(pool_cpp::call(nullptr, [] { return pool_worker_index() >= 0 ? 1 : 0; }), 1);
    CHECK_EQ(thrown_id([] { pool_cpp::call(nullptr, [] { throw boom{12}; }); }), 12);
}

/* ------------------------------------------------------------------------ */
/* parallel_for                                                             */
/* ------------------------------------------------------------------------ */

/* Counts per index of [begin, end); checks each exactly once. */
static void pfor_once(pool *p, size_t begin, size_t n, size_t grain, bool with_grain) {
    std::vector<std::atomic<int>> counts(n + 2);
    for (auto &c : counts) c.store(0);
    size_t end = begin + n;
    auto body = [&](size_t i) {
        if (i < begin || i >= end) counts[n + 1]++; /* out of range */
        else counts[i - begin]++;
    };
    if (with_grain) pool_cpp::parallel_for(p, begin, end, grain, body);
    else pool_cpp::parallel_for(p, begin, end, body);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += counts[i].load() != 1;
    if (bad || counts[n + 1].load())
        fail_at(__FILE__, __LINE__, "parallel_for: each index once",
                std::to_string(bad) + " indices wrong, " + std::to_string(counts[n + 1].load()) +
                    " out of range; n " + std::to_string(n) + " begin " + std::to_string(begin) +
                    " grain " + (with_grain ? std::to_string(grain) : std::string("none")));
}

/* One index throws: the exception comes back; with grain g only indices
   after it in its piece are left out (fewer than g, contiguous), none runs
   twice; grain 1: every other index ran. */
static void pfor_throw(pool *p, size_t n, size_t grain, size_t thrower) {
    std::vector<std::atomic<int>> counts(n);
    for (auto &c : counts) c.store(0);
    int id = thrown_id([&] {
        pool_cpp::parallel_for(p, 0, n, grain, [&](size_t i) {
            counts[i]++;
            if (i == thrower) throw boom{(int)(i % 1000)};
        });
    });
    CHECK_EQ(id, (int)(thrower % 1000));
    size_t twice = 0, missing = 0, first_missing = n, last_missing = 0;
    for (size_t i = 0; i < n; i++) {
        int c = counts[i].load();
        if (c > 1) twice++;
        if (c == 0) {
            missing++;
            first_missing = std::min(first_missing, i);
            last_missing = i;
        }
    }
    CHECK_EQ(twice, 0);
    CHECK_EQ(counts[thrower].load(), 1);
    if (grain == 1) CHECK_EQ(missing, 0);
    if (missing) {
        CHECK_EQ(first_missing, thrower + 1);
        CHECK_EQ(last_missing - first_missing + 1, missing); /* contiguous */
        if (grain) CHECK(missing < grain);
    }
}

static void part_parallel_for() {
    std::printf("  parallel_for: each index once, both overloads, empty, nested, exceptions\n");
    watchdog(120, "test_cpp parallel_for");
    static const size_t sizes[] = {1, 2, 3, 7, 64, 100, 1000, 4097, 100003};
    static const size_t grains[] = {0, 1, 3, 100, 1000000};
    for (int threads : pool_sizes) {
        pool *p = make_pool(threads);
        for (size_t n : sizes) {
            if (n > 10000 && test_scale() < 1) { /* once, under the sanitizers */
                if (threads == 2) pfor_once(p, 0, n, 0, false);
                continue;
            }
            for (size_t begin : {(size_t)0, (size_t)1000, (size_t)-1 - n}) {
                pfor_once(p, begin, n, 0, false);
                for (size_t g : grains) pfor_once(p, begin, n, g, true);
            }
        }
        /* From a worker, and nested: a 2-D loop, each cell once. */
        pool_cpp::call(p, [&] {
            pfor_once(p, 5, 1000, 0, false);
            pfor_once(p, 5, 1000, 7, true);
        });
        const size_t rows = 50, cols = 300;
        std::vector<std::atomic<int>> cells(rows * cols);
        for (auto &c : cells) c.store(0);
        pool_cpp::parallel_for(p, 0, rows, 1, [&](size_t r) {
            pool_cpp::parallel_for(p, 0, cols, [&](size_t c) { cells[r * cols + c]++; });
        });
        size_t bad = 0;
        for (auto &c : cells) bad += c.load() != 1;
        CHECK_EQ(bad, 0);
        /* Empty and reversed ranges call nothing. */
        int calls = 0;
        pool_cpp::parallel_for(p, 10, 10, [&](size_t) { calls++; });
        pool_cpp::parallel_for(p, 10, 10, 1, [&](size_t) { calls++; });
        pool_cpp::parallel_for(p, 11, 10, [&](size_t) { calls++; });
        pool_cpp::parallel_for(p, 11, 10, 4, [&](size_t) { calls++; });
        CHECK_EQ(calls, 0);
        /* Exceptions. */
        for (size_t g : {(size_t)1, (size_t)0, (size_t)16, (size_t)5000}) {
            pfor_throw(p, 1000, g, 537);
            pfor_throw(p, 1000, g, 0);
            pfor_throw(p, 1000, g, 999);
        }
        pool_cpp::call(p, [&] { pfor_throw(p, 1000, 1, 123); });
        /* Many throwers: one of them arrives, each other index ran once. */
        std::vector<std::atomic<int>> counts(2000);
        for (auto &c : counts) c.store(0);
        int id = thrown_id([&] {
            pool_cpp::parallel_for(p, 0, 2000, 1, [&](size_t i) {
                counts[i]++;
                if (i % 100 == 3) throw boom{(int)i};
            });
        });
        CHECK(id >= 0 && id % 100 == 3);
        bad = 0;
        for (auto &c : counts) bad += c.load() != 1;
        CHECK_EQ(bad, 0);
        /* The loop after a throw is clean. */
        pfor_once(p, 0, 1000, 0, false);
        destroy_pool(p);
    }
    pfor_once(nullptr, 0, 10000, 0, false);
    pfor_once(nullptr, 0, 10000, 10, true);
    pfor_throw(nullptr, 1000, 1, 500);
}

/* ------------------------------------------------------------------------ */
/* reduce                                                                   */
/* ------------------------------------------------------------------------ */

static double serial_halving(const std::vector<double> &v, size_t lo, size_t hi, size_t grain) {
    if (hi - lo <= grain) {
        double acc = 0.0;
        for (size_t i = lo; i < hi; i++) acc += v[i];
        return acc;
    }
    size_t mid = lo + (hi - lo) / 2;
    return serial_halving(v, lo, mid, grain) + serial_halving(v, mid, hi, grain);
}

static void part_reduce() {
    std::printf("  reduce: exact sums, bit-identical doubles, strings in order, exceptions\n");
    watchdog(120, "test_cpp reduce");
    const size_t n = scaled(200000, 20000);
    std::vector<double> values(n);
    uint64_t state = 0x9e3779b97f4a7c15ULL;
    for (auto &x : values) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        x = (double)(state >> 11) / 9007199254740992.0 * 1e6 - 3e5 + 1e-3;
    }
    auto sum_fold = [](size_t lo, size_t hi, const unsigned long long &init) {
        unsigned long long s = init;
        for (size_t i = lo; i < hi; i++) s += i * i;
        return s;
    };
    auto sum_combine = [](unsigned long long a, unsigned long long b) { return a + b; };
    auto dfold = [&](size_t lo, size_t hi, const double &init) {
        double acc = init;
        for (size_t i = lo; i < hi; i++) acc += values[i];
        return acc;
    };
    auto dcombine = [](double a, double b) { return a + b; };
    const size_t dgrain = 100;
    const double dwant = serial_halving(values, 0, n, dgrain);
    const size_t sn = 5000;
    std::string swant;
    for (size_t i = 0; i < sn; i++)
        swant += (char)('a' + i % 26), swant += (char)('A' + i / 26 % 26);
    auto sfold = [](size_t lo, size_t hi, const std::string &init) {
        std::string s = init;
        for (size_t i = lo; i < hi; i++) s += (char)('a' + i % 26), s += (char)('A' + i / 26 % 26);
        return s;
    };
    auto scombine = [](std::string a, const std::string &b) { return a + b; };
    std::vector<int> hwant(16, 0);
    for (size_t i = 0; i < n; i++) hwant[(i * 7 + i / 3) % 16]++;
    auto hfold = [](size_t lo, size_t hi, const std::vector<int> &init) {
        std::vector<int> h = init;
        for (size_t i = lo; i < hi; i++) h[(i * 7 + i / 3) % 16]++;
        return h;
    };
    auto hcombine = [](std::vector<int> a, const std::vector<int> &b) {
        for (size_t i = 0; i < a.size(); i++) a[i] += b[i];
        return a;
    };
    for (int threads : pool_sizes) {
        pool *p = make_pool(threads);
        for (size_t begin : {(size_t)0, (size_t)17}) {
            for (size_t grain : {(size_t)0, (size_t)1, (size_t)7, (size_t)1000, n + 1}) {
                size_t len = grain == 1 ? n / 10 : n;
                unsigned long long want = 0;
                for (size_t i = begin; i < begin + len; i++) want += (unsigned long long)(i * i);
                CHECK(pool_cpp::parallel_reduce(p, begin, begin + len, grain, 0ULL, sum_fold,
                                                sum_combine) == want);
            }
        }
        /* Bit-identical on every thread count, and to the serial halving. */
        for (int rep = 0; rep < 3; rep++) {
            double got = pool_cpp::parallel_reduce(p, 0, n, dgrain, 0.0, dfold, dcombine);
            CHECK(std::memcmp(&got, &dwant, sizeof got) == 0);
        }
        double in_worker = pool_cpp::call(
            p, [&] { return pool_cpp::parallel_reduce(p, 0, n, dgrain, 0.0, dfold, dcombine); });
        CHECK(std::memcmp(&in_worker, &dwant, sizeof in_worker) == 0);
        /* Empty: the identity, fold never called. */
        int folds = 0;
        auto counting_fold = [&](size_t, size_t, const long &init) {
            folds++;
            return init;
        };
        auto lcombine = [](long a, long b) { return a + b; };
        CHECK_EQ(pool_cpp::parallel_reduce(p, 5, 5, 0, 77L, counting_fold, lcombine), 77);
        CHECK_EQ(pool_cpp::parallel_reduce(p, 6, 5, 3, 78L, counting_fold, lcombine), 78);
        CHECK_EQ(folds, 0);
        /* Non-trivial T: order (a string) and a histogram. */
        for (size_t grain : {(size_t)0, (size_t)1, (size_t)7, (size_t)100000}) {
            std::string got =
                pool_cpp::parallel_reduce(p, 0, sn, grain, std::string(), sfold, scombine);
            CHECK(got == swant);
        }
        for (size_t grain : {(size_t)0, (size_t)333}) {
            std::vector<int> got =
                pool_cpp::parallel_reduce(p, 0, n, grain, std::vector<int>(16, 0), hfold, hcombine);
            CHECK(got == hwant);
        }
        /* Exceptions from fold and from combine. */
        for (size_t grain : {(size_t)0, (size_t)1, (size_t)64}) {
            CHECK_EQ(thrown_id([&] {
                         (void)pool_cpp::parallel_reduce(
                             p, 0, 10000, grain, 0L,
                             [](size_t lo, size_t hi, const long &init) {
                                 if (lo <= 4321 && 4321 < hi) throw boom{21};
                                 return init + (long)(hi - lo);
                             },
                             lcombine);
                     }),
                     21);
            std::atomic<int> combines(0);
            CHECK_EQ(thrown_id([&] {
                         (void)pool_cpp::parallel_reduce(
                             p, 0, 10000, grain, 0L,
                             [](size_t lo, size_t hi, const long &init) {
                                 return init + (long)(hi - lo);
                             },
                             [&](long a, long b) -> long {
                                 if (combines++ == 3) throw boom{22};
                                 return a + b;
                             });
                     }),
                     22);
        }
        /* A reduction after the throws is clean. */
        CHECK(pool_cpp::parallel_reduce(p, 0, 1000, 0, 0ULL, sum_fold, sum_combine) ==
              332833500ULL);
        destroy_pool(p);
    }
    double on_default = pool_cpp::parallel_reduce(nullptr, 0, n, dgrain, 0.0, dfold, dcombine);
    CHECK(std::memcmp(&on_default, &dwant, sizeof on_default) == 0);
    CHECK(pool_cpp::parallel_reduce(nullptr, 0, sn, 0, std::string(), sfold, scombine) == swant);
    /* A partial result with no default constructor. */
    pool *p2 = make_pool(2);
    for (size_t grain : {(size_t)0, (size_t)10}) {
        no_default nd = pool_cpp::parallel_reduce(
            p2, 0, 10000, grain, no_default(0),
            [](size_t lo, size_t hi, const no_default &init) {
                long v = init.value;
                for (size_t i = lo; i < hi; i++) v += (long)i;
                return no_default(v);
            },
            [](const no_default &a, const no_default &b) { return no_default(a.value + b.value); });
        CHECK_EQ(nd.value, 49995000);
    }
    destroy_pool(p2);
}

/* ------------------------------------------------------------------------ */
/* sort                                                                     */
/* ------------------------------------------------------------------------ */

static std::vector<uint32_t> random_u32(size_t n, uint64_t seed, uint32_t modulo) {
    std::vector<uint32_t> v(n);
    uint64_t x = seed * 2 + 1;
    for (auto &e : v) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        uint32_t r = (uint32_t)((x * 0x2545F4914F6CDD1DULL) >> 32);
        e = modulo ? r % modulo : r;
    }
    return v;
}

struct keyed {
    uint32_t key;
    uint32_t id;
};

static void sort_u32(pool *p, size_t n, uint64_t seed, uint32_t modulo) {
    std::vector<uint32_t> v = random_u32(n, seed, modulo), want = v;
    std::sort(want.begin(), want.end());
    pool_cpp::sort(p, v.begin(), v.end());
    if (v != want)
        fail_at(__FILE__, __LINE__, "sort == std::sort",
                "n " + std::to_string(n) + " modulo " + std::to_string(modulo) + " threads " +
                    std::to_string(pool_num_threads(p)));
}

/* Inputs that wear a quicksort down: equal keys, organ pipes, saw teeth,
   and one key out of place in sorted runs. */
static void sort_patterns(pool *p, size_t n) {
    for (int pattern = 0; pattern < 5; pattern++) {
        std::vector<uint32_t> v(n);
        for (size_t i = 0; i < n; i++) {
            switch (pattern) {
            case 0:
                v[i] = 7;
                break;
            case 1:
                v[i] = (uint32_t)(i < n / 2 ? i : n - i);
                break;
            case 2:
                v[i] = (uint32_t)(i % 1000);
                break;
            case 3:
                v[i] = (uint32_t)(i % 1000 ? i : n - i);
                break;
            default:
                v[i] = (uint32_t)(i & 1 ? i : n - i);
                break;
            }
        }
        std::vector<uint32_t> want = v;
        std::sort(want.begin(), want.end());
        pool_cpp::sort(p, v.begin(), v.end());
        if (v != want)
            fail_at(__FILE__, __LINE__, "sort == std::sort",
                    "pattern " + std::to_string(pattern) + " n " + std::to_string(n) + " threads " +
                        std::to_string(pool_num_threads(p)));
    }
}

/* Trivially copyable, yet only movable: sorted by moves, as std::sort
   sorts it (no copy of the leaves' or the buffer's). */
struct move_only_key {
    uint32_t key;
    explicit move_only_key(uint32_t k) : key(k) {}
    move_only_key(move_only_key &&) = default;
    move_only_key &operator=(move_only_key &&) = default;
    move_only_key(const move_only_key &) = delete;
    move_only_key &operator=(const move_only_key &) = delete;
};

static void sort_move_only(pool *p, size_t n, uint64_t seed) {
    std::vector<uint32_t> keys = random_u32(n, seed, 0), want = keys;
    std::sort(want.begin(), want.end());
    std::vector<move_only_key> v;
    v.reserve(n);
    for (uint32_t k : keys) v.emplace_back(k);
    pool_cpp::sort(p, v.begin(), v.end(),
                   [](const move_only_key &a, const move_only_key &b) { return a.key < b.key; });
    bool same = v.size() == n;
    for (size_t i = 0; same && i < n; i++) same = v[i].key == want[i];
    CHECK(same);
}

/* The most leaves pool_cpp::sort cuts a range into on p: 2^depth, where
   depth is the first odd one with a leaf per thread. */
static size_t sort_leaves_most(pool *p) { return 4 * (size_t)pool_num_threads(p); }

/* keyed by key, throwing at the limit-th comparison: the branch-free
   leaves and the raw buffer (keyed is trivially copyable). */
struct throwing_keyed_less {
    std::atomic<long> *calls;
    long limit;
    bool operator()(const keyed &a, const keyed &b) const {
        if (calls->fetch_add(1, std::memory_order_relaxed) + 1 == limit) throw boom{32};
        return a.key < b.key;
    }
};

static void sort_throwing_keyed(pool *p, size_t n, long limit) {
    std::vector<uint32_t> keys = random_u32(n, (uint64_t)limit, 0);
    std::vector<keyed> kv(n);
    for (size_t i = 0; i < n; i++) kv[i] = keyed{keys[i], (uint32_t)i};
    std::atomic<long> calls(0);
    int id = thrown_id([&] {
        pool_cpp::sort(p, kv.begin(), kv.end(), throwing_keyed_less{&calls, limit});
    });
    CHECK_EQ(id, 32);
    CHECK_EQ(kv.size(), n);
    /* The elements are the range's own, each once, but for a copy of
       another in place of at most one per leaf (see sort_leaves_most). */
    std::vector<unsigned char> seen(n, 0);
    bool own = true;
    size_t copies = 0;
    for (const keyed &e : kv) {
        own &= e.id < n && e.key == keys[e.id];
        if (e.id < n) copies += seen[e.id], seen[e.id] = 1;
    }
    CHECK(own);
    CHECK(copies <= sort_leaves_most(p));
    /* They can be sorted again. */
    pool_cpp::sort(p, kv.begin(), kv.end(),
                   [](const keyed &a, const keyed &b) { return a.key < b.key; });
    bool ordered = true;
    for (size_t i = 1; i < n; i++) ordered &= kv[i - 1].key <= kv[i].key;
    CHECK(ordered);
}

/* A comparator that throws when its count reaches `limit` (once) or from
   then on (`always`). */
struct throwing_less {
    std::atomic<long> *calls;
    long limit;
    bool always;
    bool operator()(const tracked &a, const tracked &b) const {
        long c = calls->fetch_add(1, std::memory_order_relaxed) + 1;
        if (c == limit || (always && c > limit)) throw boom{31};
        return a.key < b.key;
    }
};

static void sort_throwing(pool *p, size_t n, long limit, bool always, long moves) {
    CHECK_EQ(tracked::live.load(), 0);
    {
        std::vector<tracked> v;
        v.reserve(n);
        std::vector<uint32_t> keys = random_u32(n, (uint64_t)limit, 0);
        for (size_t i = 0; i < n; i++) v.emplace_back((long)keys[i]);
        std::atomic<long> calls(0);
        tracked::moves_left.store(moves);
        int id = thrown_id([&] {
            pool_cpp::sort(p, v.begin(), v.end(), throwing_less{&calls, limit, always});
        });
        tracked::moves_left.store(-1);
        CHECK_EQ(id, moves >= 0 ? 41 : 31);
        CHECK_EQ(v.size(), n);
        CHECK_EQ(tracked::live.load(), (long)n);
        /* The range's own elements, but for a moved-from one where the
           move that threw was cut short, and at most one per leaf whose
           std::sort the comparator cut short. */
        std::vector<long> want(keys.begin(), keys.end()), got;
        size_t moved_from = 0;
        for (const tracked &e : v) {
            if (e.text == tracked::make_text(e.key)) got.push_back(e.key);
            else moved_from++;
        }
        std::sort(want.begin(), want.end());
        std::sort(got.begin(), got.end());
        CHECK(moved_from <= (moves >= 0 ? 1u : 0u) + (always ? sort_leaves_most(p) : 1u));
        CHECK(std::includes(want.begin(), want.end(), got.begin(), got.end()));
        /* The elements are left valid: they can be sorted again. */
        pool_cpp::sort(p, v.begin(), v.end());
        CHECK(std::is_sorted(v.begin(), v.end()));
    }
    CHECK_EQ(tracked::live.load(), 0);
}

static void part_sort() {
    std::printf("  sort: uint32 0 .. 10^6 on 1, 2, 4, 16 threads, duplicates, patterns, greater,\n"
                "        strings, deque, payloads, worker, NULL, throwing comparators and moves\n");
    watchdog(240, "test_cpp sort");
    const bool small = test_scale() < 1;
    const size_t big = small ? 100000 : 1000000, mid = small ? 20000 : 100000;
    const size_t sizes[] = {0, 1, 100, 8191, 8192, 8193, mid, big};
    static const int sort_threads[] = {1, 2, 4, 16};
    for (int threads : sort_threads) {
        pool *p = make_pool(threads);
        uint64_t seed = 1;
        for (size_t n : sizes) {
            sort_u32(p, n, seed++, 0);
            if (n >= 8192) sort_u32(p, n, seed++, 16); /* many duplicates */
        }
        sort_u32(p, 3, seed++, 2);
        sort_patterns(p, mid);
        sort_move_only(p, mid, seed++);
        /* Sorted and reversed input. */
        std::vector<uint32_t> v(50000);
        for (size_t i = 0; i < v.size(); i++) v[i] = (uint32_t)i;
        pool_cpp::sort(p, v.begin(), v.end(), std::greater<uint32_t>());
        CHECK(std::is_sorted(v.begin(), v.end(), std::greater<uint32_t>()));
        CHECK(v.front() == 49999 && v.back() == 0);
        pool_cpp::sort(p, v.begin(), v.end());
        bool identity = true;
        for (size_t i = 0; i < v.size(); i++) identity &= v[i] == i;
        CHECK(identity);
        /* std::greater on random input. */
        v = random_u32(mid, seed++, 0);
        std::vector<uint32_t> want = v;
        std::sort(want.begin(), want.end(), std::greater<uint32_t>());
        pool_cpp::sort(p, v.begin(), v.end(), std::greater<uint32_t>());
        CHECK(v == want);
        /* A raw pointer range and a lambda comparator. */
        v = random_u32(30000, seed++, 1000);
        want = v;
        std::sort(want.begin(), want.end());
        pool_cpp::sort(p, v.data(), v.data() + v.size(),
                       [](uint32_t a, uint32_t b) { return a < b; });
        CHECK(v == want);
        /* A comparator of non-const references, as std::sort takes: on
           elements of the leaves' own quicksort and of std::sort's. */
        v = random_u32(30000, seed++, 1000);
        want = v;
        std::sort(want.begin(), want.end());
        pool_cpp::sort(p, v.begin(), v.end(), [](uint32_t &a, uint32_t &b) { return a < b; });
        CHECK(v == want);
        /* std::string elements. */
        std::vector<uint32_t> r = random_u32(small ? 12000 : 60000, seed++, 5000);
        std::vector<std::string> strs, swant;
        for (uint32_t x : r) strs.push_back("key-" + std::to_string(x) + std::string(x % 40, '.'));
        swant = strs;
        std::sort(swant.begin(), swant.end());
        pool_cpp::sort(p, strs.begin(), strs.end());
        CHECK(strs == swant);
        std::reverse(strs.begin(), strs.end());
        pool_cpp::sort(p, strs.begin(), strs.end(),
                       [](std::string &a, std::string &b) { return a < b; });
        CHECK(strs == swant);
        /* A std::deque: a random-access iterator that is not a pointer. */
        std::vector<uint32_t> dsrc = random_u32(mid, seed++, 0);
        std::deque<int> dq(dsrc.begin(), dsrc.end());
        std::vector<int> dwant(dsrc.begin(), dsrc.end());
        std::sort(dwant.begin(), dwant.end());
        pool_cpp::sort(p, dq.begin(), dq.end());
        CHECK(std::equal(dq.begin(), dq.end(), dwant.begin()));
        pool_cpp::sort(p, dq.begin(), dq.end(), std::greater<int>());
        CHECK(std::equal(dq.begin(), dq.end(), dwant.rbegin()));
        /* Keys with payloads: sorted by key, every payload once. */
        std::vector<uint32_t> keys = random_u32(50000, seed++, 64);
        std::vector<keyed> kv(keys.size());
        for (size_t i = 0; i < kv.size(); i++) kv[i] = keyed{keys[i], (uint32_t)i};
        pool_cpp::sort(p, kv.begin(), kv.end(),
                       [](const keyed &a, const keyed &b) { return a.key < b.key; });
        std::vector<int> seen(kv.size(), 0);
        bool ordered = true, intact = true;
        for (size_t i = 0; i < kv.size(); i++) {
            if (i && kv[i - 1].key > kv[i].key) ordered = false;
            if (kv[i].id >= kv.size() || keys[kv[i].id] != kv[i].key) intact = false;
            else seen[kv[i].id]++;
        }
        CHECK(ordered);
        CHECK(intact);
        CHECK(std::count(seen.begin(), seen.end(), 1) == (long)kv.size());
        /* From a worker of the pool. */
        pool_cpp::call(p, [&] { sort_u32(p, mid, seed, 0); });
        seed++;
        /* Throwing comparators and moves (the parallel path: 4+ threads and
           8192+ elements; the serial one: std::sort's own). */
        const size_t tn = small ? 10000 : 50000;
        const long late = (long)tn * 6; /* about half of the comparisons */
        sort_throwing(p, tn, 1000, false, -1);
        sort_throwing(p, tn, late, false, -1);
        sort_throwing(p, tn, 1000, true, -1);
        sort_throwing(p, tn, late, true, -1);
        sort_throwing(p, 1000, 500, false, -1);
        sort_throwing(p, tn, 1L << 40, false, (long)tn * 2);
        sort_throwing(p, tn, 1L << 40, false, 10);
        sort_throwing_keyed(p, tn, 1000);
        sort_throwing_keyed(p, tn, late);
        destroy_pool(p);
    }
    pool *other = make_pool(2);
    pool_cpp::call(other, [&] { sort_u32(nullptr, mid, 99, 0); });
    destroy_pool(other);
    sort_u32(nullptr, mid, 98, 0);
}

/* ------------------------------------------------------------------------ */
/* scope                                                                    */
/* ------------------------------------------------------------------------ */

/* 88 bytes: with the scope's pointer, 96, the largest block copied. */
struct payload88 {
    std::atomic<int> *counts;
    char bytes[80];
};

/* 96 bytes: 104 with the pointer, so on the heap though trivially copyable. */
struct payload96 {
    std::atomic<int> *counts;
    char bytes[88];
};

/* A node of a tree of spawns into one scope: each node spawns its two
   children until depth 0, and counts itself in counts[id]. */
static void spawn_tree(pool_cpp::scope *s, std::atomic<int> *counts, unsigned id, int depth) {
    counts[id]++;
    if (depth == 0) return;
    s->spawn([s, counts, id, depth] { spawn_tree(s, counts, 2 * id + 1, depth - 1); });
    s->spawn([s, counts, id, depth] { spawn_tree(s, counts, 2 * id + 2, depth - 1); });
}

static std::atomic<int> c_task_runs(0);
static void c_task_run(pool_task *) { c_task_runs++; }

static size_t count_not_one(const std::vector<std::atomic<int>> &v) {
    size_t bad = 0;
    for (auto &c : v) bad += c.load() != 1;
    return bad;
}

/* Spawns into s, for each of counts, a trivially copyable lambda holding a
   Payload (a counter and bytes it checks) of `size` bytes, waits, checks
   each ran once with its bytes intact, and returns how many operator new
   calls the spawns made on this thread. */
template <class Payload>
static long spawn_payloads(pool_cpp::scope &s, std::vector<std::atomic<int>> &counts, size_t size) {
    long news = 0;
    for (auto &c : counts) c.store(0);
    for (size_t i = 0; i < counts.size(); i++) {
        Payload pl;
        pl.counts = &counts[i];
        std::memset(pl.bytes, (int)(i & 0x7f), sizeof pl.bytes);
        auto f = [pl] {
            bool intact = true;
            for (char b : pl.bytes) intact &= b == pl.bytes[0];
            if (intact) (*pl.counts)++;
        };
        static_assert(std::is_trivially_copyable<decltype(f)>::value, "copyable");
        CHECK_EQ(sizeof f, size);
        long before = news_on_this_thread;
        CHECK_EQ(s.try_spawn(f), 0);
        news += news_on_this_thread - before;
    }
    s.wait();
    CHECK_EQ(count_not_one(counts), 0);
    return news;
}

static void scope_copy_and_heap(pool *p, size_t n) {
    std::vector<std::atomic<int>> counts(n);
    for (auto &c : counts) c.store(0);
    pool_cpp::scope s(p);
    /* Copy path: small and trivially copyable, no new on this thread. */
    long news = 0;
    for (size_t i = 0; i < n; i++) {
        std::atomic<int> *c = &counts[i];
        auto f = [c] { (*c)++; };
        static_assert(std::is_trivially_copyable<decltype(f)>::value, "copyable");
        long before = news_on_this_thread;
        s.spawn(f);
        news += news_on_this_thread - before;
    }
    s.wait();
    CHECK_EQ(news, 0);
    CHECK_EQ(count_not_one(counts), 0);
    /* The 96-byte boundary: copied; trivially copyable but too big: one
       new each. */
    CHECK_EQ(spawn_payloads<payload88>(s, counts, 88), 0);
    CHECK_EQ(spawn_payloads<payload96>(s, counts, 96), (long)n);
    /* A std::string captured by value: one new each (the string is moved). */
    for (auto &c : counts) c.store(0);
    news = 0;
    std::vector<std::string> texts(n);
    for (size_t i = 0; i < n; i++)
        texts[i] = "task number " + std::to_string(i) + " with a long enough text";
    const std::string *tp = texts.data();
    for (size_t i = 0; i < n; i++) {
        std::string text = texts[i];
        std::atomic<int> *c = &counts[i];
        auto f = [text, c, i, tp] { /* allocates nothing when it runs */
                                    if (text == tp[i]) (*c)++;
        };
        long before = news_on_this_thread;
        if (i % 2) s.spawn(std::move(f));
        else s.spawn(f); /* copied: the string's copy allocates too */
        news += news_on_this_thread - before;
    }
    s.wait();
    CHECK_EQ(news, (long)(n + n / 2 + n % 2));
    CHECK_EQ(count_not_one(counts), 0);
}

static void part_scope() {
    std::printf("  scope: copy and heap paths, nesting, exceptions, reuse, cancel, destructor\n");
    watchdog(120, "test_cpp scope");
    const size_t n = scaled(20000, 2000);
    for (int threads : pool_sizes) {
        pool *p = make_pool(threads);
        scope_copy_and_heap(p, n);
        /* From a worker: the same, spawned by a task (and the throttle may
           run some at once). */
        pool_cpp::call(p, [&] { scope_copy_and_heap(p, n / 4); });

        /* A tree of nested spawns into one scope. */
        const int depth = test_scale() < 1 ? 11 : 13;
        std::vector<std::atomic<int>> nodes(((size_t)2 << depth) - 1);
        for (auto &c : nodes) c.store(0);
        {
            pool_cpp::scope s(p);
            std::atomic<int> *counts = nodes.data();
            pool_cpp::scope *sp = &s;
            s.spawn([sp, counts, depth] { spawn_tree(sp, counts, 0, depth); });
            s.wait();
            CHECK_EQ(count_not_one(nodes), 0);
        }
        /* A scope inside a task of another scope. */
        std::atomic<int> inner_runs(0);
        {
            pool_cpp::scope outer(p);
            for (int i = 0; i < 8; i++)
                outer.spawn([&] {
                    pool_cpp::scope inner(p);
                    for (int j = 0; j < 100; j++) inner.spawn([&] { inner_runs++; });
                    inner.wait();
                });
            outer.wait();
        }
        CHECK_EQ(inner_runs.load(), 800);

        /* An exception in one task: wait rethrows it once every other task
           ran; the next round returns normally. Copy path, heap path, and
           several throwers. */
        {
            pool_cpp::scope s(p);
            for (int round = 0; round < 3; round++) {
                std::vector<std::atomic<int>> counts(1000);
                for (auto &c : counts) c.store(0);
                std::string label(50, 'L');
                for (int i = 0; i < 1000; i++) {
                    std::atomic<int> *c = &counts[(size_t)i];
                    if (round == 0) {
                        s.spawn([c, i] {
                            (*c)++;
                            if (i == 500) throw boom{51};
                        });
                    } else if (round == 1) {
                        s.spawn([c, i, label] {
                            (*c)++;
                            if (i == 500 && label.size() == 50) throw boom{52};
                        });
                    } else {
                        s.spawn([c, i] {
                            (*c)++;
                            if (i % 10 == 0) throw boom{1000 + i};
                        });
                    }
                }
                int id = thrown_id([&] { s.wait(); });
                if (round < 2) CHECK_EQ(id, 51 + round);
                else CHECK(id >= 1000 && id < 2000 && id % 10 == 0);
                CHECK_EQ(count_not_one(counts), 0);
                /* Reusable: a round without exceptions returns normally. */
                std::atomic<int> clean(0);
                for (int i = 0; i < 100; i++) s.spawn([&clean] { clean++; });
                CHECK_EQ(thrown_id([&] { s.wait(); }), -1);
                CHECK_EQ(clean.load(), 100);
                CHECK_EQ(s.wait_status(), 0);
            }
            /* wait_status rethrows as wait does. */
            s.spawn([] { throw boom{53}; });
            CHECK_EQ(thrown_id([&] { (void)s.wait_status(); }), 53);
            CHECK_EQ(s.wait_status(), 0);
        }
        /* A task that waits on its own scope after another task threw
           (EDEADLK, at once) rethrows nothing: the exception stays the
           real waiter's. Two tasks at once need two threads; the pause
           lets the thrower's exception be kept first (were it not, the
           round checks nothing it could get wrong). */
        if (threads > 1) {
            for (int round = 0; round < 3; round++) {
                pool_cpp::scope s(p);
                std::atomic<int> threw(0);
                int inner_id = 0, inner_status = -1;
                s.spawn([&] {
                    threw = 1;
                    throw boom{54};
                });
                s.spawn([&] {
                    if (!spin_until(threw, 10)) return;
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                    inner_id = thrown_id([&] { inner_status = s.wait_status(); });
                    if (inner_id == -1) inner_id = thrown_id([&] { s.wait(); });
                });
                CHECK_EQ(thrown_id([&] { s.wait(); }), 54);
                CHECK_EQ(inner_id, -1);
                CHECK_EQ(inner_status, EDEADLK);
            }
        }
        /* Two threads wait on one scope whose task threw: exactly one of
           them gets the exception, every round. */
        {
            const int rounds = (int)scaled(200, 20);
            int wrong = 0;
            pool_cpp::scope s(p);
            for (int round = 0; round < rounds; round++) {
                std::atomic<int> go(0), caught(0);
                s.spawn([&go] {
                    while (!go.load()) std::this_thread::yield();
                    throw boom{55};
                });
                auto waiter = [&] {
                    if (thrown_id([&] { s.wait(); }) == 55) caught++;
                };
                std::thread other(waiter);
                go.store(1);
                waiter();
                other.join();
                wrong += caught.load() != 1;
            }
            CHECK_EQ(wrong, 0);
            CHECK_EQ(thrown_id([&] { s.wait(); }), -1);
        }

        /* A scope destroyed with a thrown exception never waited for: the
           destructor waits and drops it. */
        {
            std::atomic<int> ran(0);
            {
                pool_cpp::scope s(p);
                for (int i = 0; i < 100; i++)
                    s.spawn([&ran, i] {
                        ran++;
                        if (i == 50) throw boom{54};
                    });
            }
            CHECK_EQ(ran.load(), 100);
        }

        /* The destructor waits for running tasks. */
        {
            std::atomic<int> done(0);
            {
                pool_cpp::scope s(p);
                for (int i = 0; i < 32; i++)
                    s.spawn([&done] {
                        std::this_thread::sleep_for(std::chrono::milliseconds(2));
                        done++;
                    });
                std::string big(200, 'b');
                for (int i = 0; i < 32; i++)
                    s.spawn([&done, big] {
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                        if (big.size() == 200) done++;
                    });
            }
            CHECK_EQ(done.load(), 64);
        }

        /* A cancel from a task midway: each task ran at most once and its
           capture was destroyed exactly once. */
        {
            const size_t m = 5000;
            std::vector<std::atomic<int>> ran(m);
            for (auto &c : ran) c.store(0);
            long live_before = tracked::live.load();
            pool_cpp::scope s(p);
            pool_cpp::scope *sp = &s;
            std::vector<std::string> texts(m);
            for (size_t i = 0; i < m; i++) texts[i] = tracked::make_text((long)i);
            const std::string *tp = texts.data();
            size_t refused = 0, first_refused = m;
            for (size_t i = 0; i < m; i++) {
                tracked t((long)i);
                std::atomic<int> *c = &ran[i];
                int rc = s.try_spawn([t, c, sp, i, tp] {
                    if (t.text == tp[i]) (*c)++;
                    if (i == 1000) sp->cancel();
                });
                if (rc) {
                    CHECK_EQ(rc, ECANCELED);
                    refused++;
                    first_refused = std::min(first_refused, i);
                }
            }
            int st = s.wait_status();
            size_t twice = 0, refused_ran = 0;
            for (size_t i = 0; i < m; i++) {
                twice += ran[i].load() > 1;
                if (i >= first_refused) refused_ran += ran[i].load() != 0;
            }
            CHECK_EQ(twice, 0);
            CHECK_EQ(refused_ran, 0);
            CHECK(first_refused > 1000);
            if (refused) CHECK_EQ(refused, m - first_refused); /* refused from the cancel on */
            CHECK(ran[1000].load() == 1);
            /* The cancel came from task 1000, which ran: ECANCELED. */
            CHECK_EQ(st, ECANCELED);
            CHECK_EQ(tracked::live.load(), live_before);
            CHECK(!s.cancelled());
        }
        destroy_pool(p);
    }

    /* Cancel, exactly: one worker held by a gate, every other task queued. */
    pool *one = make_pool(1);
    {
        pool *p = one;
        pool_cpp::scope s(p);
        CHECK(s.c_scope() != nullptr);
        CHECK(!s.cancelled());
        std::atomic<int> gate_in(0), gate_open(0), ran(0);
        bool saw_cancelled = false, c_saw_cancelled = false;
        pool_cpp::scope *sp = &s;
        s.spawn([&, sp] {
            gate_in.store(1);
            while (!gate_open.load()) std::this_thread::yield();
            saw_cancelled = sp->cancelled();
            c_saw_cancelled = pool_scope_cancelled(sp->c_scope()) != 0;
        });
        CHECK(spin_until(gate_in, 10.0));
        long live_before = tracked::live.load();
        for (int i = 0; i < 500; i++) {
            tracked t(i);
            s.spawn([t, &ran] { ran += t.key >= 0; }); /* heap */
            s.spawn([&ran] { ran++; });                /* copied */
        }
        CHECK_EQ(tracked::live.load(), live_before + 500); /* held by the queued tasks */
        /* A C task through c_scope(), in memory of exactly its size (ASan
           sees any access past it): skipped, not run, left alone. */
        pool_task *c_task = static_cast<pool_task *>(std::malloc(sizeof(pool_task)));
        *c_task = POOL_TASK_INIT(c_task_run);
        CHECK_EQ(pool_scope_spawn(s.c_scope(), c_task), 0);
        s.cancel();
        CHECK(s.cancelled());
        CHECK(pool_scope_cancelled(s.c_scope()) != 0);
        s.cancel(); /* twice is once */
        /* Refused now: nothing runs, the heap task's capture is destroyed. */
        {
            tracked t(-1);
            CHECK_EQ(s.try_spawn([t, &ran] { ran += t.key == -1 ? 1000 : 2000; }), ECANCELED);
            CHECK_EQ(s.try_spawn([&ran] { ran += 1000; }), ECANCELED);
            int code = 0;
            try {
                s.spawn([t, &ran] { ran += t.key == -1 ? 1000 : 2000; });
            } catch (const std::system_error &e) {
                code = e.code().value();
            }
            CHECK_EQ(code, ECANCELED);
            code = 0;
            try {
                s.spawn([&ran] { ran += 1000; });
            } catch (const std::system_error &e) {
                code = e.code().value();
            }
            CHECK_EQ(code, ECANCELED);
        }
        CHECK_EQ(tracked::live.load(), live_before + 500);
        gate_open.store(1);
        CHECK_EQ(s.wait_status(), ECANCELED);
        CHECK(saw_cancelled);
        CHECK(c_saw_cancelled);
        CHECK_EQ(ran.load(), 0);                     /* every queued task was skipped */
        CHECK_EQ(tracked::live.load(), live_before); /* and its capture destroyed */
        CHECK_EQ(c_task_runs.load(), 0);
        CHECK(c_task->run == c_task_run);
        CHECK(!s.cancelled());
        /* The next round starts afresh. */
        for (int i = 0; i < 100; i++) {
            tracked t(i);
            s.spawn([t, &ran] { ran += t.key >= 0; });
            s.spawn([&ran] { ran++; });
        }
        CHECK_EQ(pool_scope_spawn(s.c_scope(), c_task), 0); /* and run, in a round not cancelled */
        CHECK_EQ(s.wait_status(), 0);
        CHECK_EQ(ran.load(), 200);
        CHECK_EQ(c_task_runs.load(), 1);
        CHECK_EQ(tracked::live.load(), live_before);
        std::free(c_task);
        /* A cancelled round whose tasks are all done: wait reports it. */
        s.cancel();
        s.wait();
        CHECK(!s.cancelled());
        CHECK_EQ(s.wait_status(), 0);
    }
    destroy_pool(one);

    /* The default pool. */
    {
        std::atomic<int> ran(0);
        pool_cpp::scope s;
        for (int i = 0; i < 1000; i++) s.spawn([&ran] { ran++; });
        std::string text(64, 't');
        for (int i = 0; i < 1000; i++) s.spawn([&ran, text] { ran += (int)text.size() / 64; });
        s.wait();
        CHECK_EQ(ran.load(), 2000);
    }
}

/* ------------------------------------------------------------------------ */

struct part {
    const char *name;
    void (*fn)();
};

static const part parts[] = {
    {"join", part_join},     {"join_throw", part_join_throw},
    {"call", part_call},     {"parallel_for", part_parallel_for},
    {"reduce", part_reduce}, {"sort", part_sort},
    {"scope", part_scope},
};

int main(int argc, char **argv) {
    bool any = false;
    std::setvbuf(stdout, nullptr, _IOLBF, 0); /* a crash shows the part it was in */
    for (const part &pt : parts) {
        if (argc >= 2 && std::strcmp(argv[1], pt.name) != 0) continue;
        any = true;
        pt.fn();
        std::fflush(stdout);
    }
    if (!any) {
        std::fprintf(stderr, "test_cpp: no part named %s\n", argv[1]);
        return 2;
    }
    long f = failures.load();
    if (f) {
        std::printf("test_cpp: %ld check(s) FAILED\n", f);
        return 1;
    }
    std::printf("test_cpp: all checks passed\n");
    return 0;
}
