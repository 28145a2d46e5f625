#!/bin/sh
# tests/run.sh - build and run every tests/test_*.c; run from the repository root.
#
#   sh tests/run.sh                 # -O2 -g
#   SANITIZE=thread sh tests/run.sh # ThreadSanitizer, -O1 -g, smaller loops
#   SANITIZE=address sh tests/run.sh   # AddressSanitizer + UBSan
#   SANITIZE=valgrind sh tests/run.sh  # valgrind memcheck, tiny loops
#
# Environment:
#   CC, CFLAGS        compiler and flags (default: cc, -O2 -g; -O1 -g with SANITIZE)
#   SANITIZE          thread | address
#   BUILD             where binaries and logs go (default build/tests)
#   POOL_TEST_SCALE   loop-size factor read by the tests (default 1; 0.5 with
#                     SANITIZE unless set)
#   TEST_TIMEOUT      seconds per test program (default 600: test_cpp.sh,
#                     which builds the C++ tests in every language mode and
#                     under two sanitizers, took 256 s on the 2-core CI
#                     machine; the C tests' own watchdogs catch a hang)
#   TEST_SCRIPTS      the tests/test_*.sh to run, by name (default: every
#                     one); the builds that only vary the C flags run
#                     test_waiting_slots alone, the one script that tests
#                     the build it is given rather than the build as such
#   VALGRIND_SKIP     tests not run under valgrind (default: test_wakeup,
#                     which measures idle CPU time, meaningless under
#                     valgrind's one-thread-at-a-time scheduling)
#   TEST_RUNNER       a command that runs each test program, for a
#                     cross build: "qemu-aarch64", "wine" (default: none)
#   EXE               the programs' file name suffix (".exe" for Windows)
#   JOBS              compilers at once (default: the CPUs online); the
#                     tests themselves run one at a time
#
# Besides the C programs, every tests/test_*.sh is a test too (a shell
# script given CC, CFLAGS and BUILD in its environment, passing if it exits
# 0, skipped with its last line as the reason if it exits 77). They check
# the build itself, so they run only in the plain native build (no
# SANITIZE, no TEST_RUNNER).
# Prints one line per test, "PASS name (seconds it ran)" or "FAIL name (reason)" on stdout
# (a failing test's log tail goes to stderr), then exactly one final line
# "N passed, N failed". Exits non-zero if any test failed.

CC=${CC:-cc}
BUILD=${BUILD:-build/tests}
# Tests that spawn from main into tasks that wait for main's next step
# would deadlock with it on; test_throttle turns it on where it tests it.
unset POOL_SPAWN_THROTTLE_OUTSIDE
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
JOBS=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
EXE=${EXE:-}
RUNNER=${TEST_RUNNER:-}
# Tests read it (test_runner() in test.h) to leave out what an emulator
# cannot do.
POOL_TEST_RUNNER=$RUNNER
export POOL_TEST_RUNNER

case "${SANITIZE:-}" in
"")
    SANFLAGS=
    CFLAGS=${CFLAGS:--O2 -g}
    ;;
thread)
    SANFLAGS="-fsanitize=thread"
    CFLAGS=${CFLAGS:--O1 -g}
    POOL_TEST_SCALE=${POOL_TEST_SCALE:-0.5}
    ;;
address)
    SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all"
    CFLAGS=${CFLAGS:--O1 -g}
    POOL_TEST_SCALE=${POOL_TEST_SCALE:-0.5}
    ;;
valgrind)
    SANFLAGS=
    CFLAGS=${CFLAGS:--O1 -g}
    POOL_TEST_SCALE=${POOL_TEST_SCALE:-0.05}
    # Definite and indirect leaks are errors; "possibly lost" is the test
    # watchdog's detached thread. --fair-sched=yes: valgrind runs one thread
    # at a time, and its default lock lets a thread that spins without
    # system calls take it back at once, for seconds on end; a test whose
    # main thread must post while a worker spins (test_priority's deque
    # part) then hit its watchdog. The fair lock hands it round in order.
    RUNNER="${RUNNER:+$RUNNER }valgrind -q --fair-sched=yes --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect"
    VALGRIND_SKIP=${VALGRIND_SKIP:-test_wakeup}
    ;;
*)
    echo "run.sh: SANITIZE must be thread, address or valgrind, not '$SANITIZE'" >&2
    echo "0 passed, 1 failed"
    exit 2
    ;;
esac
if [ -n "${POOL_TEST_SCALE:-}" ]; then export POOL_TEST_SCALE; fi
# Fail on the first sanitizer report, with the report in the log.
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1 abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1 halt_on_error=1}"

if [ ! -f pool.h ] || [ ! -d tests ]; then
    echo "run.sh: run me from the repository root (where pool.h is)" >&2
    echo "0 passed, 1 failed"
    exit 2
fi

mkdir -p "$BUILD" || { echo "0 passed, 1 failed"; exit 2; }

if command -v timeout >/dev/null 2>&1; then
    TIMEOUT="timeout $TEST_TIMEOUT"
else
    TIMEOUT=
fi

passed=0
failed=0

# Shows the end of a failing test's log on stderr, indented.
# awk ends every line, the last one of a log cut short included, so the
# next PASS or FAIL line starts a line of its own; a carriage return (a
# Windows program's line end) is dropped.
show_log() {
    tail -n 30 "$1" | awk '{ sub(/\r$/, ""); print "    | " $0 }' >&2
}

# Whether test $1 is left out of this run.
left_out() {
    case " ${VALGRIND_SKIP:-} " in
    *" $1 "*) return 0 ;;
    esac
    return 1
}

# The program of test $1, as a path (a relative BUILD too, not via $PATH).
program_of() {
    case "$BUILD" in
    /*) echo "$BUILD/$1$EXE" ;;
    *) echo "./$BUILD/$1$EXE" ;;
    esac
}

# Every program is compiled first, JOBS at a time: compiling pool.h takes
# longer than most tests run. Then each runs alone, since many of them
# measure time or CPU. A compiler's messages start the test's log, and its
# status is in $BUILD/NAME.build.rc.
rm -f "$BUILD"/*.build.rc
compiling=0
for src in tests/test_*.c; do
    [ -f "$src" ] || continue
    name=$(basename "$src" .c)
    left_out "$name" && continue
    if [ "$compiling" -ge "$JOBS" ]; then
        wait
        compiling=0
    fi
    (
        # shellcheck disable=SC2086  # the flag variables are lists of words
        $CC $CFLAGS $SANFLAGS -Wall -Wextra -pthread -I. -o "$(program_of "$name")" "$src" \
            >"$BUILD/$name.log" 2>&1
        echo $? >"$BUILD/$name.build.rc"
    ) &
    compiling=$((compiling + 1))
done
wait

for src in tests/test_*.c; do
    [ -f "$src" ] || continue
    name=$(basename "$src" .c)
    if left_out "$name"; then
        echo "SKIP $name (not under valgrind)"
        continue
    fi
    bin=$(program_of "$name")
    log="$BUILD/$name.log"
    if [ "$(cat "$BUILD/$name.build.rc" 2>/dev/null)" != 0 ]; then
        echo "FAIL $name (compile error, see $log)"
        show_log "$log"
        failed=$((failed + 1))
        continue
    fi
    started=$(date +%s)
    # shellcheck disable=SC2086
    $TIMEOUT ${RUNNER:-} "$bin" >>"$log" 2>&1
    rc=$?
    # Every test prints its verdict, so a run that failed with an empty log
    # never got as far as the program: an emulator that did not start (wine
    # now and then, with a busy wineserver). A run that printed nothing but
    # wine's own "wine client error" lost its connection to the wineserver,
    # and its buffered output with it (3 times in 2500 back-to-back runs of
    # test_cancel here, and once in a whole CI run with no other wine
    # program running): the emulator failed, whatever the program did. Those two, and only those, are
    # tried again once; the first run's log is kept as NAME.log.first, and
    # the PASS or FAIL line says so.
    rerun=
    if [ "$rc" -ne 0 ] && [ -n "$RUNNER" ] && ! grep -qv '^wine client error:' "$log"; then
        mv "$log" "$log.first"
        if [ -s "$log.first" ]; then said="only wine client errors"; else said="nothing"; fi
        rerun="; run again: the runner failed with status $rc and printed $said"
        # shellcheck disable=SC2086
        $TIMEOUT ${RUNNER:-} "$bin" >"$log" 2>&1
        rc=$?
    fi
    if [ "$rc" -eq 0 ]; then
        echo "PASS $name ($(($(date +%s) - started)) s$rerun)"
        passed=$((passed + 1))
        continue
    fi
    if [ "$rc" -eq 124 ] && [ -n "$TIMEOUT" ]; then
        reason="timed out after $TEST_TIMEOUT s"
    elif [ "$rc" -eq 3 ] && grep -q '^WATCHDOG:' "$log"; then
        reason=$(grep '^WATCHDOG:' "$log" | head -n 1 | tr -d '\r')
    elif [ "$rc" -gt 128 ]; then
        reason="killed by signal $((rc - 128))"
    else
        reason="exit status $rc"
    fi
    echo "FAIL $name ($reason$rerun, see $log)"
    show_log "$log"
    failed=$((failed + 1))
done

for src in tests/test_*.sh; do
    [ -f "$src" ] || continue
    name=$(basename "$src" .sh)
    if [ -n "${SANITIZE:-}" ] || [ -n "${TEST_RUNNER:-}" ]; then
        echo "SKIP $name (checks the plain native build only)"
        continue
    fi
    if [ -n "${TEST_SCRIPTS+set}" ]; then
        case " $TEST_SCRIPTS " in
        *" $name "*) ;;
        *)
            echo "SKIP $name (not in TEST_SCRIPTS)"
            continue
            ;;
        esac
    fi
    log="$BUILD/$name.log"
    started=$(date +%s)
    CC="$CC" CFLAGS="$CFLAGS" BUILD="$BUILD/$name.d" $TIMEOUT sh "$src" >"$log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then
        echo "PASS $name ($(($(date +%s) - started)) s)"
        passed=$((passed + 1))
    elif [ "$rc" -eq 77 ]; then # what it needs is missing: it says what in its last line
        echo "SKIP $name ($(tail -n 1 "$log"))"
    else
        echo "FAIL $name ($(tail -n 1 "$log"), see $log)"
        show_log "$log"
        failed=$((failed + 1))
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
