#!/bin/sh
# tests/test_example_mpi.sh - examples/mpi/nqueens_mpi.c under `mpirun -np 2 --oversubscribe`:
# N-queens split across two ranks, each on its own pool, for every N from 1 to 11 with one and
# two threads per rank; the count must equal both the serial count (-s, on rank 0) and the
# published one. Three ranks once, so that a rank count that does not divide the work is tried.
# Installs Debian's libopenmpi-dev and openmpi-bin through tests/need.sh where it can; where MPI
# is still missing, says so and exits 77 (run.sh reports SKIP, not PASS). Built with mpicc, so
# with the compiler MPI was built for, whatever CC says.
#
# Environment: CFLAGS, BUILD (run.sh sets them). Run from the repository root.
BUILD=${BUILD:-build/tests/test_example_mpi.d}
mkdir -p "$BUILD" || exit 2
if ! sh tests/need.sh mpicc libopenmpi-dev mpirun openmpi-bin >"$BUILD/need.log" 2>&1; then
    echo "skipped: MPI is not installed (Debian: libopenmpi-dev, openmpi-bin) and could not be installed"
    exit 77
fi
# Open MPI refuses to start as root without these; CI containers run as root.
if [ "$(id -u)" -eq 0 ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
# shellcheck disable=SC2086  # CFLAGS is a list of words
mpicc ${CFLAGS:--O2} -Wall -Wextra -Werror -pthread -o "$BUILD/nqueens_mpi" \
    examples/mpi/nqueens_mpi.c || exit 1
if command -v timeout >/dev/null 2>&1; then TIMEOUT="timeout 120"; else TIMEOUT=; fi
run() { # ranks n threads
    if ! $TIMEOUT mpirun -np "$1" --oversubscribe "$BUILD/nqueens_mpi" "$2" "$3" -s \
        >"$BUILD/run.log" 2>&1; then
        cat "$BUILD/run.log"
        echo "FAILED: mpirun -np $1 nqueens_mpi $2 $3 -s (exit status or timeout)"
        exit 1
    fi
    grep -q "^N=$2 ranks=$1 threads/rank=$3 " "$BUILD/run.log" || {
        cat "$BUILD/run.log"
        echo "FAILED: mpirun -np $1 nqueens_mpi $2 $3 -s printed no result line"
        exit 1
    }
}
for n in 1 2 3 4 5 6 7 8 9 10 11; do
    run 2 "$n" 1
    run 2 "$n" 2
done
run 3 12 1
echo "nqueens_mpi: N = 1..11 on 2 ranks of 1 and 2 threads, N = 12 on 3 ranks: counts right"
