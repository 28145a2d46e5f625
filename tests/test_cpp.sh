#!/bin/sh
# tests/test_cpp.sh - the C++ interface (namespace pool_cpp) in every build shape it promises.
#
#  1. tests/test_cpp.cpp built with g++ and clang++, each at -std=c++11, -std=c++17 and
#     -std=c++20 (-Wall -Wextra -Werror), and run. A compiler that is missing is skipped with
#     a message; with neither, the test is skipped (exit 77).
#  2. The same program with the first C++ compiler at -std=c++17 under -fsanitize=thread and
#     under -fsanitize=address,undefined ($POOL_TEST_SCALE 0.5 unless set). A sanitizer that
#     cannot build and run a trivial program here is skipped with a message.
#  3. Mixed: the implementation compiled as C ($CC -std=c99 -c, POOL_IMPLEMENTATION) and
#     linked with a C++ file that includes pool.h without it and uses pool_cpp::join, call,
#     parallel_for, scope and sort. On a worker of its pool that file's thread-local
#     pool__join_current_v3 (the C object's) is a view whose home is the pool: the join there
#     takes the inline path.
#  4. POOL_STATIC: two C++ files, each with POOL_STATIC and POOL_IMPLEMENTATION, each joining
#     on a pool of its own copy (inline on its own workers, through pool_join from the other
#     copy's), linked into one program that runs both; neither object defines a global
#     symbol that names pool (nm, where present).
#  5. -fno-exceptions: a C++ file with the implementation that uses join, call,
#     parallel_for, parallel_reduce, sort and scope builds and runs. And one program of a
#     file built with exceptions (the implementation, a task that throws) and one without
#     (scope, join, parallel_for), at -O0 so that their inline functions are not inlined
#     away, under AddressSanitizer where it runs: pool_cpp's classes differ in layout with
#     and without exceptions, and must not share one definition across the two (one
#     scope's constructor from the other file wrote past the object).
#  6. A sort of std::vector<bool> (proxy iterators, whose references are objects of their own)
#     does not compile, and the compiler's message is pool_cpp::sort's static_assert; the same
#     file sorting a std::vector<char> compiles (so the refusal is the proxy's, not a mistake
#     of the file's).
#
# Everything is compiled first, JOBS compilers at a time (test_cpp.cpp takes some 10 s of CPU
# per build), then each program runs in turn under `timeout 120` where timeout exists. Prints
# a PASS, FAIL or SKIP line per build and a summary last.
#
# Compiling test_cpp.cpp is most of this test's time (on the 2-core machine, g++ took 30 s at -O2
# and 21 s at -O1; with AddressSanitizer, 75 s at -O1 and 27 s at -O0). So the builds of 1 at
# C++11 and C++20 use -O1 (OTHER_STD_CXXFLAGS), which keeps the warnings that need the optimiser's
# analysis, the C++17 builds CXXFLAGS, the ThreadSanitizer build -O1 and the AddressSanitizer
# build -O0, where no optimisation can hide an access it checks.
#
# Environment: CC, CFLAGS (the C side of 3; default -O2 -g), CXXFLAGS (default -O2; the
# sanitizer builds use -O1 -g and -O0 -g), OTHER_STD_CXXFLAGS (default -O1), BUILD (default build/tests/test_cpp.d), JOBS (default: the
# CPUs online), POOL_TEST_SCALE (for the sanitizer runs; default 0.5). run.sh sets CC, CFLAGS
# and BUILD. Run from the repository root.
CC=${CC:-cc}
CFLAGS=${CFLAGS:--O2 -g}
CXXFLAGS=${CXXFLAGS:--O2}
OTHER_STD_CXXFLAGS=${OTHER_STD_CXXFLAGS:--O1}
JOBS=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
BUILD=${BUILD:-build/tests/test_cpp.d}
mkdir -p "$BUILD" || exit 2
rm -f "$BUILD"/*.build.rc # no verdict of an earlier run's build counts
if [ ! -f pool.h ] || [ ! -f tests/test_cpp.cpp ]; then
    echo "run me from the repository root (where pool.h is)"
    exit 2
fi
if command -v timeout >/dev/null 2>&1; then
    TIMEOUT="timeout 120"
else
    TIMEOUT=
fi
WARN="-Wall -Wextra -Werror"

passed=0
failed=0
skipped=0
pass() {
    echo "PASS $1"
    passed=$((passed + 1))
}
fail() {
    echo "FAIL $1"
    failed=$((failed + 1))
}
skip() {
    echo "SKIP $1"
    skipped=$((skipped + 1))
}

# Runs a built program ($2, with arguments after) under the timeout, its output in $1.log;
# reports it by the name $1.
run_prog() {
    name=$1
    shift
    start=$(date +%s)
    # shellcheck disable=SC2086  # TIMEOUT is a command and its argument
    $TIMEOUT "$@" >"$BUILD/$name.log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    if [ "$rc" -eq 0 ]; then
        pass "$name ($secs s)"
    else
        if [ "$rc" -eq 124 ] && [ -n "$TIMEOUT" ]; then why="timed out after 120 s"
        elif [ "$rc" -eq 3 ] && grep -q '^WATCHDOG:' "$BUILD/$name.log"; then
            why=$(grep '^WATCHDOG:' "$BUILD/$name.log" | head -n 1)
        elif [ "$rc" -gt 128 ]; then why="killed by signal $((rc - 128))"
        else why="exit status $rc"; fi
        fail "$name ($why, see $BUILD/$name.log)"
        tail -n 30 "$BUILD/$name.log" | sed 's/^/    | /'
    fi
}

# Compiles in the background with the command after $1 (the build's name), its messages in
# $1.build.log and its status in $1.build.rc; at most JOBS at a time: a build waits, a second at
# a time, for one of those running to finish. (The builds take from seconds to a minute and a
# half; started in batches of JOBS, the quick ones left CPUs idle beside the slow.)
started_builds=0
build() {
    name=$1
    shift
    while [ $((started_builds - $(finished_builds))) -ge "$JOBS" ]; do sleep 1; done
    (
        "$@" >"$BUILD/$name.build.log" 2>&1
        echo $? >"$BUILD/$name.build.rc"
    ) &
    started_builds=$((started_builds + 1))
}

# How many builds have finished.
finished_builds() {
    ls "$BUILD" | grep -c '\.build\.rc$'
}

# Whether build $1 succeeded (after `wait`); reports the failure if not.
built() {
    if [ "$(cat "$BUILD/$1.build.rc" 2>/dev/null)" = 0 ]; then return 0; fi
    fail "$1 (does not build, see $BUILD/$1.build.log)"
    tail -n 30 "$BUILD/$1.build.log" | sed 's/^/    | /'
    return 1
}

cxxs=
for cxx in g++ clang++; do
    if command -v "$cxx" >/dev/null 2>&1; then
        cxxs="$cxxs $cxx"
    else
        echo "SKIP $cxx: not installed"
    fi
done
if [ -z "$cxxs" ]; then
    echo "skipped: no C++ compiler (g++ or clang++) is installed"
    exit 77
fi
# shellcheck disable=SC2086  # a list of words
set -- $cxxs
first_cxx=$1

# ---- The sources of 3, 4 and 5 ----
printf '#define POOL_IMPLEMENTATION\n#include "pool.h"\n' >"$BUILD/mixed_impl.c"
cat >"$BUILD/mixed_use.cpp" <<'EOF'
/* Uses pool_cpp without the implementation: pool.h's C object provides it. */
#include "pool.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

static int failures;
#define CHECK(c) \
    do { \
        if (!(c)) { \
            std::printf("%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
            failures++; \
        } \
    } while (0)

static long fib(pool *p, int n) {
    if (n < 2) return n;
    long x = 0, y = 0;
    pool_cpp::join(
        p, [&] { x += fib(p, n - 1); }, [&] { y += fib(p, n - 2); });
    return x + y;
}

int main() {
    pool_config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    cfg.external_slots = POOL_EXTERNAL_SLOTS_NONE; /* a call from outside runs on a worker */
    pool *p = nullptr;
    if (pool_create(&p, &cfg) != 0) return 2;
    CHECK(pool__join_current_v3 == nullptr);
    CHECK(fib(p, 22) == 17711);
    /* On a worker: this file reads the C object's thread-local, the worker's view, whose home
       is the pool, so join takes the inline path (join_inline: no call into the C join). */
    bool inline_path = false, in_a = false;
    long r = pool_cpp::call(p, [&] {
        pool__join_view *v = pool__join_current_v3;
        inline_path = v != nullptr && v->home == p && pool_worker_index() >= 0;
        long x = 0;
        pool_cpp::join(
            p,
            [&] {
                /* Inside a: the inline join's frame is the view's newest. */
                in_a = v != nullptr && pool__join_current_v3 == v && v->newest != nullptr;
                x += fib(p, 20);
            },
            [&] { x += 1000000; });
        return x;
    });
    CHECK(inline_path);
    CHECK(in_a);
    CHECK(r == 6765 + 1000000);
    std::vector<std::atomic<int>> counts(10000);
    for (auto &c : counts) c.store(0);
    pool_cpp::parallel_for(p, 0, counts.size(), [&](size_t i) { counts[i]++; });
    int bad = 0;
    for (auto &c : counts) bad += c.load() != 1;
    CHECK(bad == 0);
    std::atomic<int> ran(0);
    {
        pool_cpp::scope s(p);
        std::string text(100, 's');
        for (int i = 0; i < 1000; i++) s.spawn([&ran] { ran++; });
        for (int i = 0; i < 1000; i++) s.spawn([&ran, text] { ran += (int)text.size() / 100; });
        s.wait();
    }
    CHECK(ran.load() == 2000);
    std::vector<unsigned> v(100000);
    unsigned x = 12345;
    for (auto &e : v) e = x = x * 1103515245u + 12345u;
    pool_cpp::sort(p, v.begin(), v.end());
    bool sorted = true;
    for (size_t i = 1; i < v.size(); i++) sorted &= v[i - 1] <= v[i];
    CHECK(sorted);
    bool caught = false;
    try {
        pool_cpp::call(p, [&] { pool_cpp::join(p, [] {}, [] { throw 7; }); });
    } catch (int e) {
        caught = e == 7;
    }
    CHECK(caught);
    CHECK(pool_destroy(p) == 0);
    std::printf("mixed: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
EOF

for side in a b; do
    other=$([ $side = a ] && echo b || echo a)
    cat >"$BUILD/static_$side.cpp" <<EOF
/* A POOL_STATIC copy of the implementation and of pool_cpp, private to this file. */
#define POOL_STATIC
#define POOL_IMPLEMENTATION
#include "pool.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

static long fib(pool *p, int n) {
    if (n < 2) return n;
    long x = 0, y = 0;
    pool_cpp::join(
        p, [&] { x += fib(p, n - 1); }, [&] { y += fib(p, n - 2); });
    return x + y;
}

static pool *the_pool;

void start_$side() {
    pool_config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    if (pool_create(&the_pool, &cfg) != 0) {
        std::printf("static_$side: pool_create failed\n");
        std::_Exit(2);
    }
}

void stop_$side() { pool_destroy(the_pool); }

/* fib(n) joined on this file's pool from whatever thread calls it; *inline_here: this
   file's view is its pool's inside the call (the inline path). */
long fib_$side(int n, bool *inline_here) {
    return pool_cpp::call(the_pool, [&] {
        *inline_here = pool__join_current_v3 && pool__join_current_v3->home == the_pool;
        return fib(the_pool, n);
    });
}

/* On a worker of this file's pool, a join on the other file's pool: this file's
   thread-local is its own, the other copy's is NULL here. */
long fib_$side(int n, bool *inline_here);
long fib_$other(int n, bool *inline_here);
long cross_$side(int n, bool *other_inline, bool *mine_inline) {
    return pool_cpp::call(the_pool, [&] {
        *mine_inline = pool__join_current_v3 && pool__join_current_v3->home == the_pool;
        long x = 0, y = 0;
        pool_cpp::join(
            the_pool, [&] { x += fib_$other(n, other_inline); }, [&] { y += fib(the_pool, n); });
        return x + y;
    });
}
EOF
done

cat >"$BUILD/static_main.cpp" <<'EOF'
#include <cstdio>
void start_a();
void start_b();
void stop_a();
void stop_b();
long fib_a(int n, bool *inline_here);
long fib_b(int n, bool *inline_here);
long cross_a(int n, bool *other_inline, bool *mine_inline);
long cross_b(int n, bool *other_inline, bool *mine_inline);

int main() {
    int failures = 0;
    bool ia = false, ib = false, oa = false, ma = false, ob = false, mb = false;
    start_a();
    start_b();
    long a = fib_a(21, &ia), b = fib_b(22, &ib);
    long ca = cross_a(20, &oa, &ma), cb = cross_b(19, &ob, &mb);
    if (a != 10946 || b != 17711) failures++, std::printf("fib: %ld %ld\n", a, b);
    if (ca != 2 * 6765 || cb != 2 * 4181) failures++, std::printf("cross: %ld %ld\n", ca, cb);
    if (!ia || !ib || !oa || !ma || !ob || !mb)
        failures++, std::printf("inline views: %d %d %d %d %d %d\n", ia, ib, oa, ma, ob, mb);
    stop_a();
    stop_b();
    std::printf("static: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
EOF

cat >"$BUILD/noexcept.cpp" <<'EOF'
#define POOL_IMPLEMENTATION
#include "pool.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <vector>

static long fib(pool *p, int n) {
    if (n < 2) return n;
    long x = 0, y = 0;
    pool_cpp::join(
        p, [&] { x += fib(p, n - 1); }, [&] { y += fib(p, n - 2); });
    return x + y;
}

int main() {
    int failures = 0;
    pool_config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    pool *p = nullptr;
    if (pool_create(&p, &cfg) != 0) return 2;
    if (fib(p, 20) != 6765) failures++;
    if (pool_cpp::call(p, [&] { return fib(p, 21); }) != 10946) failures++;
    std::vector<std::atomic<int>> counts(5000);
    for (auto &c : counts) c.store(0);
    pool_cpp::parallel_for(p, 0, counts.size(), [&](size_t i) { counts[i]++; });
    pool_cpp::parallel_for(p, 0, counts.size(), 7, [&](size_t i) { counts[i]++; });
    for (auto &c : counts) failures += c.load() != 2;
    long sum = pool_cpp::parallel_reduce(
        p, 0, 1000, 10, 0L,
        [](size_t lo, size_t hi, const long &init) {
            long s = init;
            for (size_t i = lo; i < hi; i++) s += (long)i;
            return s;
        },
        [](long a, long b) { return a + b; });
    if (sum != 499500) failures++;
    std::vector<int> v(20000);
    for (size_t i = 0; i < v.size(); i++) v[i] = (int)((i * 7919) % 20011);
    pool_cpp::sort(p, v.begin(), v.end());
    for (size_t i = 1; i < v.size(); i++) failures += v[i - 1] > v[i];
    std::atomic<int> ran(0);
    {
        pool_cpp::scope s(p);
        for (int i = 0; i < 1000; i++) s.spawn([&ran] { ran++; });
        if (s.try_spawn([&ran] { ran++; }) != 0) failures++;
        s.wait();
        s.cancel();
        if (s.try_spawn([&ran] { ran += 1000; }) != ECANCELED) failures++;
        if (s.wait_status() != ECANCELED) failures++;
    }
    if (ran.load() != 1001) failures++;
    if (pool_destroy(p) != 0) failures++;
    std::printf("no exceptions: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
EOF

cat >"$BUILD/mixexc_noexc.cpp" <<'EOF'
/* Built with -fno-exceptions, without the implementation. */
#include "pool.h"

#include <atomic>

long without_exceptions(pool *p) {
    std::atomic<long> ran(0);
    {
        pool_cpp::scope s(p);
        for (int i = 0; i < 100; i++) s.spawn([&ran] { ran++; });
        s.wait();
    }
    long x = 0, y = 0;
    pool_cpp::join(
        p, [&] { x += 1; }, [&] { y += 2; });
    pool_cpp::parallel_for(p, 0, 100, [&](size_t) { ran++; });
    return ran.load() + x + y;
}
EOF
cat >"$BUILD/proxy_sort.cpp" <<'EOF'
/* With PROXY, a sort pool_cpp::sort must refuse when compiled. */
#include "pool.h"

#include <vector>

#ifdef PROXY
typedef bool element;
#else
typedef char element;
#endif

void sort_them(pool *p, std::vector<element> &v) { pool_cpp::sort(p, v.begin(), v.end()); }
EOF

cat >"$BUILD/mixexc_main.cpp" <<'EOF'
/* Built with exceptions, with the implementation. */
#define POOL_IMPLEMENTATION
#include "pool.h"

#include <atomic>
#include <cstdio>
#include <cstring>

long without_exceptions(pool *p);

int main() {
    pool_config cfg;
    std::memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = 2;
    pool *p = nullptr;
    if (pool_create(&p, &cfg) != 0) return 2;
    int caught = 0;
    {
        pool_cpp::scope s(p);
        s.spawn([] { throw 5; });
        try {
            s.wait();
        } catch (int e) {
            caught = e;
        }
    }
    long x = 0;
    try {
        pool_cpp::join(
            p, [&] { x += 1; }, [] { throw 6; });
    } catch (int e) {
        caught += e;
    }
    long w = without_exceptions(p);
    pool_destroy(p);
    std::printf("with and without exceptions: caught %d (11), %ld (203)\n", caught, w);
    return !(caught == 11 && x == 1 && w == 203);
}
EOF

# ---- Every build, JOBS at a time ----
# 2. The sanitizers, where a trivial program builds and runs with them: first, as the slowest
# builds.
printf 'int main() { return 0; }\n' >"$BUILD/probe.cpp"
sans=
for san in address,undefined thread; do
    flags="-O1 -g -fsanitize=$san"
    [ "$san" = thread ] || flags="-O0 -g -fsanitize=$san -fno-sanitize-recover=all"
    # shellcheck disable=SC2086
    if ! $first_cxx $flags -o "$BUILD/probe-$san" "$BUILD/probe.cpp" >"$BUILD/probe-$san.log" 2>&1 ||
        ! "$BUILD/probe-$san" >>"$BUILD/probe-$san.log" 2>&1; then
        skip "test_cpp-$first_cxx-c++17-$san ($first_cxx cannot build or run a program with -fsanitize=$san here, see $BUILD/probe-$san.log)"
        continue
    fi
    sans="$sans $san"
    # shellcheck disable=SC2086
    build "test_cpp-$first_cxx-c++17-$san" $first_cxx -std=c++17 $flags $WARN -pthread \
        -o "$BUILD/test_cpp-$first_cxx-c++17-$san" tests/test_cpp.cpp
done
# 1. tests/test_cpp.cpp, every compiler and standard.
for cxx in $cxxs; do
    for std in c++11 c++17 c++20; do
        flags=$CXXFLAGS
        [ "$std" = c++17 ] || flags=$OTHER_STD_CXXFLAGS
        # shellcheck disable=SC2086  # flag lists
        build "test_cpp-$cxx-$std" $cxx -std=$std $flags $WARN -pthread \
            -o "$BUILD/test_cpp-$cxx-$std" tests/test_cpp.cpp
    done
done
# 3. The C object first (the C++ programs link it).
# shellcheck disable=SC2086
build mixed-c99-impl $CC $CFLAGS -std=c99 $WARN -I. -c -o "$BUILD/mixed_impl.o" "$BUILD/mixed_impl.c"
# 4. Two objects and a link per compiler, in one job.
static_build() {
    # shellcheck disable=SC2086  # flag lists
    $1 -std=c++11 $CXXFLAGS $WARN -I. -c -o "$BUILD/static_a-$1.o" "$BUILD/static_a.cpp" &&
        $1 -std=c++11 $CXXFLAGS $WARN -I. -c -o "$BUILD/static_b-$1.o" "$BUILD/static_b.cpp" &&
        $1 -std=c++11 $CXXFLAGS -pthread -o "$BUILD/static-$1-c++11" "$BUILD/static_main.cpp" \
            "$BUILD/static_a-$1.o" "$BUILD/static_b-$1.o"
}
for cxx in $cxxs; do
    build "static-$cxx-c++11" static_build "$cxx"
done
# 5. -fno-exceptions alone.
for cxx in $cxxs; do
    # shellcheck disable=SC2086
    build "noexcept-$cxx-c++11" $cxx -std=c++11 -fno-exceptions $CXXFLAGS $WARN -I. -pthread \
        -o "$BUILD/noexcept-$cxx-c++11" "$BUILD/noexcept.cpp"
done
# 5. With and without exceptions in one program; ASan where it runs (see 2), to see a
# write past an object.
mixflags=
case " $sans " in *" address,undefined "*) mixflags="-fsanitize=address" ;; esac
mixexc_build() {
    # shellcheck disable=SC2086
    $1 -std=c++11 -O0 -g $mixflags -fno-exceptions $WARN -I. -c -o "$BUILD/mixexc_noexc-$1.o" \
        "$BUILD/mixexc_noexc.cpp" &&
        $1 -std=c++11 -O0 -g $mixflags $WARN -I. -c -o "$BUILD/mixexc_main-$1.o" \
            "$BUILD/mixexc_main.cpp" &&
        $1 $mixflags -pthread -o "$BUILD/mixexc-$1-c++11" "$BUILD/mixexc_main-$1.o" \
            "$BUILD/mixexc_noexc-$1.o"
}
for cxx in $cxxs; do
    build "mixexc-$cxx-c++11" mixexc_build "$cxx"
done
wait
# 3's C++ side, once its object is there.
if built mixed-c99-impl; then
    for cxx in $cxxs; do
        # shellcheck disable=SC2086
        build "mixed-$cxx-c++11" $cxx -std=c++11 $CXXFLAGS $WARN -I. -pthread \
            -o "$BUILD/mixed-$cxx-c++11" "$BUILD/mixed_use.cpp" "$BUILD/mixed_impl.o"
    done
fi
wait

# ---- Every run, one at a time ----
for cxx in $cxxs; do
    for std in c++11 c++17 c++20; do
        name="test_cpp-$cxx-$std"
        built "$name" && run_prog "$name" "$BUILD/$name"
    done
done
for san in $sans; do
    name="test_cpp-$first_cxx-c++17-$san"
    built "$name" && run_prog "$name" env POOL_TEST_SCALE="${POOL_TEST_SCALE:-0.5}" \
        TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}" \
        ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1 abort_on_error=0}" \
        UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1 halt_on_error=1}" "$BUILD/$name"
done
if [ "$(cat "$BUILD/mixed-c99-impl.build.rc" 2>/dev/null)" = 0 ]; then
    for cxx in $cxxs; do
        name="mixed-$cxx-c++11"
        built "$name" && run_prog "$name" "$BUILD/$name"
    done
fi
for cxx in $cxxs; do
    name="static-$cxx-c++11"
    built "$name" || continue
    if command -v nm >/dev/null 2>&1; then
        # POOL_STATIC gives the implementation and pool_cpp internal linkage: no global
        # definition in either object may name pool (the files' own functions do not).
        globals=$(nm -C -g --defined-only "$BUILD/static_a-$cxx.o" "$BUILD/static_b-$cxx.o" |
            awk 'NF >= 3 { $1 = ""; $2 = ""; print }' | grep pool)
        if [ -n "$globals" ]; then
            fail "$name (the POOL_STATIC objects define global symbols: $(echo "$globals" | head -n 5 | tr '\n' ';'))"
            continue
        fi
    fi
    run_prog "$name" "$BUILD/$name"
done
for cxx in $cxxs; do
    name="noexcept-$cxx-c++11"
    built "$name" && run_prog "$name" "$BUILD/$name"
done
for cxx in $cxxs; do
    name="mixexc-$cxx-c++11"
    built "$name" && run_prog "$name" env ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" "$BUILD/$name"
done

# 6. At the end, one compiler at a time: each takes a second or two.
for cxx in $cxxs; do
    name="proxy-sort-$cxx-c++11"
    # shellcheck disable=SC2086  # flag lists
    if ! $cxx -std=c++11 $WARN -I. -fsyntax-only "$BUILD/proxy_sort.cpp" >"$BUILD/$name.log" 2>&1; then
        fail "$name (the std::vector<char> control does not compile, see $BUILD/$name.log)"
    elif $cxx -std=c++11 $WARN -I. -DPROXY -fsyntax-only "$BUILD/proxy_sort.cpp" >"$BUILD/$name.log" 2>&1; then
        fail "$name (a sort of std::vector<bool> compiles)"
    elif ! grep -q "not proxies" "$BUILD/$name.log"; then
        fail "$name (the refusal is not pool_cpp::sort's static_assert, see $BUILD/$name.log)"
    else
        pass "$name"
    fi
done

echo "test_cpp.sh: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
