#!/bin/sh
# bench/mpi.sh -- examples/mpi/nqueens_mpi.c on one machine: the same count as 1 rank x 1
# thread, 1 rank x 2 threads and 2 ranks x 1 thread, interleaved, against the serial count
# timed in the same run (rank 0 of every run counts serially first with -s). Prints each run's
# time and the medians. Installs MPI through tests/need.sh if it can (`make bench-mpi`).
#
#   N=15 REPS=7 sh bench/mpi.sh
#
# Binding: 2 ranks x 1 thread are bound to a core each (--bind-to core), and each pool takes
# the CPUs of its rank's mask (threads 0 would give 1 here; 1 is passed to say so); 1 rank x
# 2 threads is unbound (--bind-to none), so that its two workers may use both cores.
cd "$(dirname "$0")/.." || exit 1
N=${N:-15}
REPS=${REPS:-7}
OUT=${BUILD:-build/bench}
mkdir -p "$OUT" || exit 1
if ! sh tests/need.sh mpicc libopenmpi-dev mpirun openmpi-bin >/dev/null 2>&1; then
    echo "bench/mpi.sh: MPI is not installed (Debian: libopenmpi-dev, openmpi-bin)" >&2
    exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
mpicc -O2 -pthread -o "$OUT/nqueens_mpi" examples/mpi/nqueens_mpi.c || exit 1
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "nqueens_mpi N=$N, $REPS interleaved runs of each shape"
echo "  cpu     ${cpu:-unknown}, $(nproc) CPUs usable; $(mpirun --version | head -n 1)"
echo "  commit  $(git rev-parse --short HEAD 2>/dev/null)"
echo "  load    $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
run() { # name ranks threads binding
    line=$(mpirun -np "$2" --bind-to "$4" "$OUT/nqueens_mpi" "$N" "$3" -s) || {
        echo "bench/mpi.sh: $1 failed" >&2
        exit 1
    }
    t=$(echo "$line" | sed -n 's/.* solutions in \([0-9.]*\) s .*/\1/p' | head -n 1)
    s=$(echo "$line" | sed -n 's/^serial: .* in \([0-9.]*\) s;.*/\1/p')
    echo "  $1: $t s (serial in the same run: $s s)"
    echo "$t" >>"$OUT/mpi_$1.times"
    echo "$s" >>"$OUT/mpi_serial.times"
}
rm -f "$OUT"/mpi_*.times
i=0
while [ "$i" -lt "$REPS" ]; do
    run 1x1 1 1 none
    run 1x2 1 2 none
    run 2x1 2 1 core
    i=$((i + 1))
done
serial=$(median <"$OUT/mpi_serial.times")
echo "medians (serial: $serial s)"
for shape in 1x1 1x2 2x1; do
    m=$(median <"$OUT/mpi_$shape.times")
    echo "  ranks x threads $shape: $m s, $(echo "$m $serial" | awk '{ printf "%.3f", $1 / $2 }')x serial"
done
