#!/bin/sh
# bench/cpp.sh -- builds bench/cpp.cpp (pool.h's C++ interface against the natural serial code,
# and its sort against oneTBB's parallel_sort and GNU's parallel mode) and runs it. `make
# bench-cpp` calls it; bench/smoke.sh runs it with -q.
#
#   CXX           the C++ compiler (default g++)
#   BUILD         where the binary goes (default build/bench)
#   arguments     passed on: [-r RUNS] [-q] [THREADS...]   (default: -r 7, threads 1 2)
#
# oneTBB's side is built only where its headers are (Debian: libtbb-dev, bench/peers/install.sh),
# GNU's parallel mode only where the compiler takes -fopenmp; the output says which are in.
cd "$(dirname "$0")/.." || exit 1
CXX=${CXX:-g++}
OUT=${BUILD:-build/bench}
mkdir -p "$OUT" || exit 1
case $OUT in /*) ;; *) OUT=./$OUT ;; esac
flags="-O2 -pthread"
libs=
peers=
if echo 'int main(){}' | $CXX -fopenmp -x c++ -o /dev/null - >/dev/null 2>&1; then
    flags="$flags -fopenmp"
    peers="$peers __gnu_parallel::sort"
fi
if [ -f /usr/include/oneapi/tbb/parallel_sort.h ]; then
    flags="$flags -DBENCH_TBB"
    libs=-ltbb
    peers="$peers tbb::parallel_sort"
fi
# shellcheck disable=SC2086  # flags and libs are lists of words
$CXX $flags ${WERROR:+-Wall -Wextra -Werror} -o "$OUT/cpp" bench/cpp.cpp $libs || exit 1
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "bench/cpp.cpp"
echo "  date      $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "  cpu       ${cpu:-unknown}, $(nproc 2>/dev/null) CPUs usable"
echo "  compiler  $($CXX --version | head -n 1), $flags $libs"
echo "  sort peers${peers:- none}"
echo "  commit    $(git rev-parse --short HEAD 2>/dev/null)"
echo "  load      $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
"$OUT/cpp" "$@"
