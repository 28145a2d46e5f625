#!/bin/sh
# tests/test_example_trace.sh - examples/trace.c writes a trace that
# Perfetto's format accepts: built as its header says (-O2 -pthread), run,
# and its file checked by examples/tools/trace2svg.c --check (the strict
# JSON parser and Chrome-trace checker of examples/tools/trace_json.h: every event,
# the order of each lane, the nesting of its spans), then drawn.
#
# Environment: CC, CFLAGS, BUILD (run.sh sets them). Run from the
# repository root; run.sh runs it as part of `make test`.
CC=${CC:-cc}
BUILD=${BUILD:-build/tests/test_example_trace.d}
mkdir -p "$BUILD" || exit 2
# shellcheck disable=SC2086  # CFLAGS is a list of words
$CC ${CFLAGS:--O2} -Wall -Wextra -pthread -o "$BUILD/trace" examples/trace.c || exit 1
# shellcheck disable=SC2086
$CC ${CFLAGS:--O2} -Wall -Wextra -o "$BUILD/trace2svg" examples/tools/trace2svg.c || exit 1
rm -f "$BUILD/trace.json" "$BUILD/trace.svg"
"$BUILD/trace" "$BUILD/trace.json" || { echo "examples/trace.c failed"; exit 1; }
"$BUILD/trace2svg" --check "$BUILD/trace.json" || { echo "the trace is not valid"; exit 1; }
"$BUILD/trace2svg" "$BUILD/trace.json" "$BUILD/trace.svg" || { echo "drawing failed"; exit 1; }
# A worker lane with jobs, and the outside thread's injections, must be there.
grep -q '"name":"job","cat":"pool","ph":"B"' "$BUILD/trace.json" || { echo "no job spans"; exit 1; }
grep -q '"name":"inject"' "$BUILD/trace.json" || { echo "no injections"; exit 1; }
grep -q '<svg' "$BUILD/trace.svg" || { echo "no SVG"; exit 1; }
echo "examples/trace.c: a valid trace of $(grep -c '"ph":"B"' "$BUILD/trace.json") spans"
