#!/bin/sh
# tests/test_install.sh - `make install` and `make uninstall` into a temporary prefix, and a
# program built against the installed pool.h three ways: plain `cc -I`, `pkg-config --cflags
# --libs pool`, and CMake (`find_package(pool 0.3 REQUIRED)`, linking pool::pool). Installs
# Debian's pkg-config and cmake through tests/need.sh where it can; a way whose tool is still
# missing is skipped with a message, and the test passes on the ways it could try. Checks that
# the program runs, that the version the packages give is pool.h's, that CMake accepts no
# version and pool.h's and refuses another, and that uninstall removes every file install wrote.
#
# Environment: CC, CFLAGS, BUILD (run.sh sets them). Run from the repository root.
CC=${CC:-cc}
BUILD=${BUILD:-build/tests/test_install.d}
case "$BUILD" in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
rm -rf "$BUILD"
mkdir -p "$BUILD/src" || exit 2
PREFIX=$BUILD/prefix
fail=0
ways=0 # how many ways built the consumer

say_fail() {
    echo "FAILED: $*"
    fail=1
}

sh tests/need.sh pkg-config pkg-config cmake cmake >"$BUILD/need.log" 2>&1

if ! make --no-print-directory install PREFIX="$PREFIX" >"$BUILD/install.log" 2>&1; then
    cat "$BUILD/install.log"
    echo "FAILED: make install"
    exit 1
fi
version=$(sed -n 's/^#define POOL_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' pool.h | paste -sd.)

# The consumer: the implementation and a use of it, in one file, as README's quick start.
cat >"$BUILD/src/consumer.c" <<'C'
#define POOL_IMPLEMENTATION
#include <pool.h>
static void square(void *arg) { *(long *)arg *= *(long *)arg; }
int main(void) {
    long n = 12;
    pool_call(NULL, square, &n);
    return n == 144 ? 0 : 1;
}
C

# 1. cc -I
ways=$((ways + 1))
if $CC ${CFLAGS:--O2} -I"$PREFIX/include" -pthread -o "$BUILD/by_include" "$BUILD/src/consumer.c" &&
    "$BUILD/by_include"; then
    echo "ok: cc -I$PREFIX/include"
else
    say_fail "cc -I: the consumer did not build or run"
fi

# 2. pkg-config
if command -v pkg-config >/dev/null 2>&1; then
    ways=$((ways + 1))
    flags=$(PKG_CONFIG_PATH=$PREFIX/share/pkgconfig pkg-config --cflags --libs pool)
    pc_version=$(PKG_CONFIG_PATH=$PREFIX/share/pkgconfig pkg-config --modversion pool)
    [ "$pc_version" = "$version" ] || say_fail "pkg-config says version '$pc_version', pool.h $version"
    # shellcheck disable=SC2086  # flags is a list of words
    if $CC ${CFLAGS:--O2} $flags -o "$BUILD/by_pkgconfig" "$BUILD/src/consumer.c" &&
        "$BUILD/by_pkgconfig"; then
        echo "ok: pkg-config --cflags --libs pool: $flags"
    else
        say_fail "pkg-config: the consumer did not build or run with '$flags'"
    fi
else
    echo "skipped: pkg-config (not installed; Debian: pkg-config)"
fi

# 3. CMake: a project that finds the package, and one asking for a version pool.h is not.
cmake_project() { # DIR VERSION
    mkdir -p "$1"
    cp "$BUILD/src/consumer.c" "$1/"
    cat >"$1/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.13)
project(consumer C)
find_package(pool $2 REQUIRED)
add_executable(consumer consumer.c)
target_link_libraries(consumer PRIVATE pool::pool)
CMAKE
    cmake -S "$1" -B "$1/build" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_C_COMPILER="$CC" \
        >"$1.log" 2>&1 && cmake --build "$1/build" >>"$1.log" 2>&1
}
if command -v cmake >/dev/null 2>&1; then
    ways=$((ways + 1))
    if cmake_project "$BUILD/cmake" "$version" && "$BUILD/cmake/build/consumer"; then
        echo "ok: cmake find_package(pool $version) and pool::pool"
    else
        cat "$BUILD/cmake.log"
        say_fail "cmake: the consumer did not configure, build or run"
    fi
    if cmake_project "$BUILD/cmake_any" "" && "$BUILD/cmake_any/build/consumer"; then
        echo "ok: cmake find_package(pool) with no version"
    else
        cat "$BUILD/cmake_any.log"
        say_fail "cmake: find_package(pool) with no version failed"
    fi
    if cmake_project "$BUILD/cmake_wrong" 9.0; then
        say_fail "cmake accepted find_package(pool 9.0) from pool.h $version"
    else
        echo "ok: cmake refuses find_package(pool 9.0)"
    fi
else
    echo "skipped: cmake (not installed; Debian: cmake)"
fi

make --no-print-directory uninstall PREFIX="$PREFIX" >"$BUILD/uninstall.log" 2>&1 ||
    say_fail "make uninstall"
left=$(find "$PREFIX" -type f 2>/dev/null)
[ -z "$left" ] || say_fail "uninstall left: $left"

[ "$fail" -eq 0 ] || exit 1
echo "test_install: $ways way(s) built and ran a program against the installed pool.h"
