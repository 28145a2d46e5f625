#!/bin/sh
# tests/test_example_uv.sh - examples/uv/completion_uv.c: a libuv loop drains a completion queue
# through a uv_poll_t on its handle. Installs Debian's libuv1-dev through tests/need.sh where it
# can; where libuv is still missing, or this compiler cannot use it, says so and exits 77 (run.sh
# reports SKIP, not PASS).
#
# Environment: CC, CFLAGS, BUILD (run.sh sets them). Run from the repository root.
CC=${CC:-cc}
BUILD=${BUILD:-build/tests/test_example_uv.d}
mkdir -p "$BUILD" || exit 2
if ! sh tests/need.sh /usr/include/uv.h libuv1-dev >"$BUILD/need.log" 2>&1; then
    echo "skipped: libuv is not installed (Debian: libuv1-dev) and could not be installed"
    exit 77
fi
# A compiler with its own headers and libraries (musl-gcc) cannot use the system's libuv: a
# program that only asks libuv its version tells, so that the example's own errors still fail.
printf '#include <uv.h>\nint main(void) { return uv_version() == 0; }\n' >"$BUILD/probe.c"
if ! $CC -o "$BUILD/probe" "$BUILD/probe.c" -luv >"$BUILD/probe.log" 2>&1; then
    echo "skipped: libuv is installed but $CC cannot build against it (see $BUILD/probe.log)"
    exit 77
fi
# shellcheck disable=SC2086  # CFLAGS is a list of words
$CC ${CFLAGS:--O2} -Wall -Wextra -Werror -pthread -o "$BUILD/completion_uv" \
    examples/uv/completion_uv.c -luv || exit 1
"$BUILD/completion_uv" || { echo "examples/uv/completion_uv.c failed"; exit 1; }
