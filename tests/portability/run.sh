#!/bin/sh
# tests/portability/run.sh - the portability matrix (issue 7); run from the
# repository root, after tests/portability/install.sh (`make portability`
# does both).
#
# Prints one line per combination, "PASS <combination>" or
# "FAIL <combination>: <reason>" (the end of a failing combination's log
# goes to stderr, indented), then exactly one final line
# "N passed, N failed". Exits non-zero if any combination failed.
#
#   lang ...        impl.c (POOL_IMPLEMENTATION) and user.c (pool.h alone),
#                   -Wall -Wextra -Wpedantic -Werror, linked and run
#   mixed ...       the same, one TU as C and the other as C++
#   POOL_STATIC     two static copies in one program, each its own library
#   POOL_MALLOC ... the allocator override with its user pointer, and the
#                   #error when only one of the two is defined
#   symbols         tests/test_symbols.sh: only pool_* names exported
#   tests ...       every tests/test_*.c (tests/run.sh) in that build:
#                   musl, POOL_NO_FUTEX, arm64 under qemu-aarch64,
#                   Windows (mingw-w64) under wine
#
# Environment:
#   BUILD              where everything goes (default build/portability)
#   PORTABILITY_ONLY   run only the combinations matching this shell
#                      pattern, e.g. 'lang *' or '*arm64*' (default: all)
#   PORTABILITY_SKIP   skip the combinations matching these patterns, a list
#                      separated by ';' (.ci/run skips the slowest
#                      combinations that other combinations or stages cover)
#   TEST_TIMEOUT       seconds per test program (default 600)

BUILD=${BUILD:-build/portability}
ONLY=${PORTABILITY_ONLY:-*}
SKIP=${PORTABILITY_SKIP:-}
WFLAGS="-Wall -Wextra -Wpedantic -Werror"
DIR=tests/portability

if [ ! -f pool.h ] || [ ! -d "$DIR" ]; then
    echo "portability/run.sh: run me from the repository root (where pool.h is)" >&2
    echo "0 passed, 1 failed"
    exit 2
fi
mkdir -p "$BUILD" || { echo "0 passed, 1 failed"; exit 2; }
case "$BUILD" in
/*) ABS_BUILD=$BUILD ;;
*) ABS_BUILD=$(pwd)/$BUILD ;;
esac

passed=0
failed=0
skipped=0
start=$(date +%s)

# ---------------------------------------------------------------------------
# Running one combination

# skipped_by_request NAME: whether a pattern of PORTABILITY_SKIP matches NAME.
skipped_by_request() {
    [ -n "$SKIP" ] || return 1
    skip_name=$1
    old_ifs=$IFS
    IFS=';'
    # shellcheck disable=SC2086  # split at the semicolons, and only there
    set -- $SKIP
    IFS=$old_ifs
    for pattern in "$@"; do
        # shellcheck disable=SC2254  # the patterns are meant as patterns
        case "$skip_name" in $pattern) return 0 ;; esac
    done
    return 1
}

# combo NAME FUNCTION ARGS...: runs FUNCTION ARGS with its output in a log
# of its own; FUNCTION returns 0 for a pass, or sets REASON and returns 1.
# failure_excerpt LOG: what tells why a combination failed: each failing
# test's line with its own log tail, which run.sh indents beneath it (the
# tail of the whole log shows only the tests that passed after it), or the
# log's tail when no test line says FAIL (a build or tool error).
failure_excerpt() {
    if grep -q '^FAIL ' "$1"; then
        awk '/^FAIL /{show=1; print; next} /^    \| /{if (show) print; next} {show=0}' "$1" |
            head -n 120
    else
        tail -n 15 "$1"
    fi
}

combo() {
    name=$1
    shift
    # shellcheck disable=SC2254  # the patterns are meant as patterns
    case "$name" in $ONLY) ;; *) return 0 ;; esac
    if skipped_by_request "$name"; then
        skipped=$((skipped + 1))
        echo "SKIP $name (PORTABILITY_SKIP)"
        return 0
    fi
    slug=$(echo "$name" | tr -c 'A-Za-z0-9_.+=-' '_' | sed 's/_*$//')
    WORK=$BUILD/$slug
    LOG=$BUILD/$slug.log
    rm -rf "$WORK"
    mkdir -p "$WORK"
    REASON=
    t0=$(date +%s)
    if "$@" >"$LOG" 2>&1; then
        echo "PASS $name ($(($(date +%s) - t0)) s)"
        # Tests the runner failed to start or lost, run again (tests/run.sh).
        grep 'run again: ' "$LOG" | sed 's/^/    | /'
        passed=$((passed + 1))
    else
        [ -n "$REASON" ] || REASON="see $LOG"
        echo "FAIL $name: $REASON"
        failure_excerpt "$LOG" | sed 's/^/    | /' >&2
        failed=$((failed + 1))
    fi
}

# need TOOL...: REASON and failure if a tool is missing.
need() {
    for tool in "$@"; do
        case "$tool" in
        /*) [ -x "$tool" ] && continue ;;
        *) command -v "$tool" >/dev/null 2>&1 && continue ;;
        esac
        REASON="$tool is missing (sh tests/portability/install.sh installs it)"
        echo "$REASON"
        return 1
    done
}

# The programs a runner command uses ("taskset -c 0 qemu-aarch64": taskset,
# qemu-aarch64).
tools_of() {
    for word in $1; do
        case "$word" in -* | [0-9]*) ;; *) echo "$word" ;; esac
    done
}

# The first compiler error in a log, without the directory in front.
first_error() {
    grep -m 1 -E '(error|Error)[: ]' "$1" | sed "s|$(pwd)/||g; s|^\./||"
}

# compile LOG CC ARGS...: runs the compiler, echoing the command; on failure
# REASON is its first error.
compile() {
    echo "+ $*"
    if ! "$@" >"$WORK/cc.out" 2>&1; then
        cat "$WORK/cc.out"
        REASON="does not compile: $(first_error "$WORK/cc.out")"
        return 1
    fi
    cat "$WORK/cc.out"
}

# run_prog [RUNNER...] PROGRAM: runs it (60 s at most); REASON on failure.
run_prog() {
    echo "+ $*"
    timeout 120 "$@" >"$WORK/run.out" 2>&1
    rc=$?
    cat "$WORK/run.out"
    [ "$rc" -eq 0 ] && return 0
    REASON="exit status $rc: $(tail -n 1 "$WORK/run.out")"
    return 1
}

# ---------------------------------------------------------------------------
# Languages

# lang_pair IMPL_CC IMPL_FLAGS USER_CC USER_FLAGS LINK_CC [RUNNER]: impl.c and
# user.c each compiled warning-free, linked, run.
lang_pair() {
    icc=$1 iflags=$2 ucc=$3 uflags=$4 lcc=$5 runner=${6:-}
    need "$icc" "$ucc" "$lcc" $(tools_of "$runner") || return 1
    # shellcheck disable=SC2086  # flag lists
    compile $icc $iflags $WFLAGS -I. -I$DIR -c $DIR/impl.c -o "$WORK/impl.o" || return 1
    # shellcheck disable=SC2086
    compile $ucc $uflags $WFLAGS -I. -I$DIR -c $DIR/user.c -o "$WORK/user.o" || return 1
    compile $lcc $LINKFLAGS -pthread "$WORK/impl.o" "$WORK/user.o" -o "$WORK/prog$EXE" || return 1
    # shellcheck disable=SC2086
    run_prog $runner "$WORK/prog$EXE"
}

# lang CC STD: both TUs in one language ("-x c++" for a C++ compiler).
lang() {
    case "$1" in
    *++) x="-x c++" ;;
    *) x= ;;
    esac
    lang_pair "$1" "$x -std=$2" "$1" "$x -std=$2" "$1" "${3:-}"
}

LINKFLAGS=
EXE=
for cc in gcc clang; do
    case $cc in gcc) cxx=g++ ;; clang) cxx=clang++ ;; esac
    for std in c99 c11 c17 c2x; do combo "lang $cc -std=$std" lang $cc $std; done
    for std in c++11 c++17 c++20; do combo "lang $cxx -std=$std" lang $cxx $std; done
    combo "mixed $cc -std=c99 implementation, $cxx -std=c++17 user" \
        lang_pair $cc "-std=c99" $cxx "-x c++ -std=c++17" $cxx
    combo "mixed $cxx -std=c++17 implementation, $cc -std=c99 user" \
        lang_pair $cxx "-x c++ -std=c++17" $cc "-std=c99" $cxx
done

# ---------------------------------------------------------------------------
# stb options

# static_twice CC FLAGS: static.c compiled twice, linked, run; and neither
# object exports a pool name.
static_twice() {
    cc=$1 flags=$2
    need "$cc" nm || return 1
    for tu in a b; do
        # shellcheck disable=SC2086
        compile $cc $flags $WFLAGS -DPORT_TU=$tu -I. -c $DIR/static.c -o "$WORK/static_$tu.o" ||
            return 1
    done
    exported=$(nm -g --defined-only "$WORK/static_a.o" "$WORK/static_b.o" | awk 'NF >= 3 { print $3 }' |
        grep -i '^_*pool')
    if [ -n "$exported" ]; then
        REASON="POOL_STATIC objects export: $(echo $exported)"
        return 1
    fi
    compile $cc -pthread "$WORK/static_a.o" "$WORK/static_b.o" $DIR/static_main.c \
        -o "$WORK/prog" || return 1
    run_prog "$WORK/prog"
}

# options CC: POOL_MALLOC + POOL_FREE with a user pointer, and POOL_ASSERT with POOL_DEBUG.
options() {
    need "$1" || return 1
    compile "$1" -std=c99 $WFLAGS -I. -pthread $DIR/options.c -o "$WORK/prog" || return 1
    run_prog "$WORK/prog"
}

# only_one CC DEFINE: defining one of POOL_MALLOC / POOL_FREE is an #error.
only_one() {
    need "$1" || return 1
    echo "+ $1 -std=c99 $2 -I. -c $DIR/one_alloc.c"
    if "$1" -std=c99 $2 -I. -c $DIR/one_alloc.c -o "$WORK/one.o" >"$WORK/cc.out" 2>&1; then
        REASON="compiles, but must stop at pool.h's #error"
        return 1
    fi
    cat "$WORK/cc.out"
    if ! grep -q 'define both POOL_MALLOC and POOL_FREE' "$WORK/cc.out"; then
        REASON="fails, but not with pool.h's #error: $(first_error "$WORK/cc.out")"
        return 1
    fi
}

symbols() {
    need "$1" nm || return 1
    if ! CC=$1 CFLAGS="-O2 -g -Werror" BUILD=$WORK sh tests/test_symbols.sh; then
        REASON=$(grep -m 1 -E 'exported but|not exported|POOL_STATIC exports|compile|could not' "$LOG")
        return 1
    fi
}

for cc in gcc clang; do
    combo "POOL_STATIC $cc -std=c99, two copies in one program" static_twice $cc "-std=c99"
done
combo "POOL_STATIC g++ -std=c++17, two copies in one program" static_twice g++ "-x c++ -std=c++17"
for cc in gcc clang; do
    combo "POOL_MALLOC+POOL_FREE+POOL_ASSERT $cc -std=c99" options $cc
    combo "POOL_MALLOC alone is an #error ($cc)" only_one $cc -DPORT_ONLY_MALLOC
    combo "POOL_FREE alone is an #error ($cc)" only_one $cc -DPORT_ONLY_FREE
    combo "symbols $cc: only pool_* exported" symbols $cc
done

# ---------------------------------------------------------------------------
# The test suite on each platform

# suite CC CFLAGS [RUNNER]: every tests/test_*.c through tests/run.sh, and of
# the shell tests test_waiting_slots, which builds C tests with CC and
# CFLAGS. The others check the C++ interface (with g++ and clang++ whatever
# CC is), the install, the docs and the examples: `make test` runs them, and
# each of the four native suites ran them again, some 250 s apiece on the
# 2-core CI machine.
suite() {
    cc=$1 cflags=$2 runner=${3:-}
    need "$cc" $(tools_of "$runner") timeout || return 1
    scale=${POOL_TEST_SCALE:-1}
    [ -z "$runner" ] || scale=${POOL_TEST_SCALE:-$EMULATED_SCALE}
    CC=$cc CFLAGS=$cflags BUILD=$WORK TEST_RUNNER=$runner EXE=$EXE TEST_SCRIPTS=test_waiting_slots \
        POOL_TEST_SCALE=$scale TEST_TIMEOUT=${TEST_TIMEOUT:-$SUITE_TIMEOUT} sh tests/run.sh
    rc=$?
    [ "$rc" -eq 0 ] && return 0
    fails=$(grep '^FAIL ' "$LOG" | sed 's/^FAIL \([^ ]*\).*/\1/' | tr '\n' ' ' | sed 's/ $//')
    total=$(grep -m 1 -E '^[0-9]+ passed, [0-9]+ failed' "$LOG")
    REASON="${total:-run.sh exit status $rc}: ${fails}"
    err=$(cat "$WORK"/*.log 2>/dev/null | grep -m 1 -E 'pool\.h:[0-9]+:[0-9]+: (fatal )?error' |
        sed "s|$(pwd)/||g; s|tests/\.\./||; s|^\./||")
    [ -n "$err" ] && REASON="$REASON; first pool.h error: $err"
    return 1
}

# Under an emulator the tests run every scenario with half the rounds
# (POOL_TEST_SCALE, unless set): those runs check the build and its code on
# that ISA or OS, one host CPU at a time for arm64, where the rounds add no
# interleavings the native suites lack, and took 500 s each at full size.
EMULATED_SCALE=0.5

# 600 s a program natively too: test_cpp.sh builds and runs the C++ tests in
# every language mode and under two sanitizers within it, which took 230 s of
# a 300 s limit on the 2-core CI machine when nothing else ran, and ran out
# of it when something did. A test that hangs is caught by its own watchdog
# long before.
SUITE_TIMEOUT=600
combo "tests linux-x86_64 glibc gcc" suite gcc "-O2 -g -Werror"
combo "tests linux-x86_64 glibc clang" suite clang "-O2 -g -Werror"
combo "tests linux-x86_64 glibc gcc POOL_NO_FUTEX" suite gcc "-O2 -g -Werror -DPOOL_NO_FUTEX"
combo "lang musl-gcc -std=c99" lang musl-gcc c99
combo "tests linux-x86_64 musl musl-gcc" suite musl-gcc "-O2 -g -Werror"
combo "tests linux-x86_64 musl musl-gcc POOL_NO_FUTEX" suite musl-gcc "-O2 -g -Werror -DPOOL_NO_FUTEX"

# arm64: dynamically linked (test_alloc replaces malloc, which a static
# glibc does not allow), run by qemu-aarch64 with the cross sysroot, pinned
# to one host CPU: on an x86 host qemu-user lets a store-release pass a
# later load-acquire (STLR; LDAR), which ARMv8 forbids and the deque and
# sleep protocols rely on (see sb_litmus.c; unpinned, test_deque fails now
# and then). So these runs check the arm64 build and its code, not weak
# memory ordering, which no emulator here reproduces.
SUITE_TIMEOUT=600
QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
export QEMU_LD_PREFIX
QEMU="taskset -c 0 qemu-aarch64"
combo "lang aarch64-linux-gnu-gcc -std=c11 (qemu-aarch64)" lang aarch64-linux-gnu-gcc c11 "$QEMU"
combo "tests linux-arm64 glibc aarch64-linux-gnu-gcc (qemu-aarch64, one host CPU)" \
    suite aarch64-linux-gnu-gcc "-O2 -g -Werror" "$QEMU"
combo "tests linux-arm64 glibc clang --target=aarch64-linux-gnu (qemu-aarch64, one host CPU)" \
    suite clang "--target=aarch64-linux-gnu -O2 -g -Werror" "$QEMU"

# Windows: mingw-w64 (winpthreads linked statically), run by wine in a
# prefix of our own.
WINE=${WINE:-/usr/lib/wine/wine64}
WINEPREFIX=$ABS_BUILD/wineprefix
WINEDEBUG=-all
WINEDLLOVERRIDES="mscoree,mshtml=" # no Mono or Gecko install prompt on a new prefix
export WINEPREFIX WINEDEBUG WINEDLLOVERRIDES
EXE=.exe
LINKFLAGS=-static
combo "lang x86_64-w64-mingw32-gcc -std=c11 (wine)" lang x86_64-w64-mingw32-gcc c11 "$WINE"
combo "tests windows-x86_64 mingw-w64 x86_64-w64-mingw32-gcc (wine)" \
    suite x86_64-w64-mingw32-gcc "-O2 -g -Werror -static" "$WINE"
EXE=
LINKFLAGS=
# wineserver lingers a few seconds after the last program; do not leave it.
[ -x /usr/lib/wine/wineserver ] && [ -d "$WINEPREFIX" ] && /usr/lib/wine/wineserver -k 2>/dev/null

# ---------------------------------------------------------------------------
# macOS and FreeBSD cannot run here, and their SDKs are not Debian packages.
# Their branches of pool.h (wait/wake, thread names, the condvar clock) are
# compiled with clang against glibc's headers plus stubs, in
# tests/portability/stubs/, of the few system declarations they use, written
# from the systems' manual pages: a check of pool.h's code and of the calls'
# shapes, not of the real SDKs.

# stub_syntax OS_DEFINE STUBS STD [EXTRA...]: impl.c checked, -fsyntax-only.
stub_syntax() {
    os=$1 stubs=$2 std=$3
    shift 3
    need clang || return 1
    compile clang -std="$std" -fsyntax-only -Wall -Wextra -Wpedantic -Werror \
        -U__linux__ -U__linux -Ulinux -D"$os" -I"tests/portability/stubs/$stubs" "$@" \
        -I. tests/portability/impl.c
}
combo "syntax FreeBSD branch, clang -std=gnu11 (stub headers)" stub_syntax __FreeBSD__=14 freebsd gnu11
combo "syntax macOS branch, clang -std=gnu11 (stub headers)" stub_syntax __APPLE__ macos gnu11 \
    -include tests/portability/stubs/macos/apple_pthread.h
combo "syntax macOS branch, clang++ -std=c++17 (stub headers)" stub_syntax __APPLE__ macos c++17 \
    -x c++ -include tests/portability/stubs/macos/apple_pthread.h

echo "portability matrix: $(($(date +%s) - start)) s${SKIP:+, $skipped skipped}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
