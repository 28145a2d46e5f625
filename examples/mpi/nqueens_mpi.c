/* examples/mpi/nqueens_mpi.c - N-queens counted across MPI ranks, each rank running its share on
 * its own pool.h pool: the usual MPI+threads shape, one process per node (or per socket) and a
 * pool of threads inside each.
 *
 *     mpicc -O2 -pthread examples/mpi/nqueens_mpi.c -o nqueens_mpi
 *     mpirun -np 2 ./nqueens_mpi 14          two ranks, each pool as wide as its CPUs
 *     mpirun -np 2 ./nqueens_mpi 14 1 -s     one thread per rank, and time the serial count too
 *
 * Arguments: N (default 12), threads per rank (default 0: the CPUs of the rank's affinity mask,
 * so that ranks bound to disjoint cores by mpirun get disjoint pools), and -s to count serially
 * on rank 0 first, check the parallel count against it and print both times.
 *
 * Work split: the placements of the first rows (a prefix; as many rows as give 256 prefixes per
 * rank) are numbered in one order on every rank, and rank r takes prefixes r, r + size,
 * r + 2 size, ... Nothing is sent to hand the work out; cyclic dealing spreads the expensive
 * prefixes (the middle columns) over the ranks. Inside
 * a rank, pool_parallel_reduce splits the rank's prefixes over its workers, and idle workers
 * steal, so the unequal subtrees balance within the rank. One MPI_Reduce adds the counts.
 *
 * Thread level: MPI_THREAD_FUNNELED. Only main calls MPI, before and after the pool computes;
 * no worker ever does. That is all this bulk-synchronous shape needs, every MPI library provides
 * it, and it costs no lock inside MPI (MPI_THREAD_MULTIPLE would, in every call). The pool is
 * made with POOL_EXTERNAL_SLOTS_NONE, so main blocks in the reduce while the workers compute:
 * a rank uses exactly its threads, and main is free for MPI the moment the reduce returns.
 *
 * Needs MPI (Debian: libopenmpi-dev and openmpi-bin); tests/test_example_mpi.sh builds and runs
 * it under mpirun -np 2, and says so when MPI is missing.
 */
#define POOL_IMPLEMENTATION
#include "../../pool.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prefixes wanted per rank: enough that dealing them out evens out the ranks, and that each
   rank's pool has many per thread to balance by stealing. bench/mpi_model.c shows what too few
   cost at 64 ranks of 16 threads. */
#define PREFIXES_PER_RANK 256

/* The counts of OEIS A000170 for N = 0 .. 18. */
static const long long known[] = {1,      1,       0,        0,        2,        10,    4,
                                  40,     92,      352,      724,      2680,     14200, 73712,
                                  365596, 2279184, 14772512, 95815104, 666090624};

/* A partial board: the columns taken and the diagonals attacked on the next row. */
struct board {
    unsigned cols, left, right;
};

struct job {
    int n;
    const struct board *prefixes; /* this rank's share */
};

/* The plain serial count, the baseline the pool is measured against. */
static long long queens(unsigned all, unsigned cols, unsigned left, unsigned right) {
    long long count = 0;
    unsigned free_cols;
    if (cols == all) return 1;
    free_cols = all & ~(cols | left | right);
    while (free_cols) {
        unsigned bit = free_cols & -free_cols;
        free_cols ^= bit;
        count += queens(all, cols | bit, ((left | bit) << 1) & all, (right | bit) >> 1);
    }
    return count;
}

/* Every placement of the first `rows` rows, in one order on every rank; the ones whose number
   is `first` modulo `every` go to out[kept..] (out NULL: only counted). Returns the new kept. */
static size_t deal(unsigned all, struct board b, int rows, size_t *index, size_t first,
                   size_t every, struct board *out, size_t kept) {
    unsigned free_cols;
    if (rows == 0 || b.cols == all) {
        if (*index % every == first) {
            if (out) out[kept] = b;
            kept++;
        }
        ++*index;
        return kept;
    }
    free_cols = all & ~(b.cols | b.left | b.right);
    while (free_cols) {
        unsigned bit = free_cols & -free_cols;
        struct board next = {b.cols | bit, ((b.left | bit) << 1) & all, (b.right | bit) >> 1};
        free_cols ^= bit;
        kept = deal(all, next, rows - 1, index, first, every, out, kept);
    }
    return kept;
}

/* The fewest first rows (3 to 6) whose placements number PREFIXES_PER_RANK per rank; the
   same on every rank, since it depends on n and the rank count only. */
static int prefix_rows(unsigned all, int ranks) {
    struct board empty = {0, 0, 0};
    int rows;
    for (rows = 3; rows < 6; rows++) {
        size_t index = 0;
        deal(all, empty, rows, &index, 0, 1, NULL, 0);
        if (index >= (size_t)PREFIXES_PER_RANK * (size_t)ranks) break;
    }
    return rows;
}

static void fold(void *arg, void *acc, size_t lo, size_t hi) {
    const struct job *job = arg;
    unsigned all = (1u << job->n) - 1;
    long long *count = acc;
    for (size_t i = lo; i < hi; i++)
        *count += queens(all, job->prefixes[i].cols, job->prefixes[i].left, job->prefixes[i].right);
}

static void combine(void *arg, void *acc, const void *later) {
    (void)arg;
    *(long long *)acc += *(const long long *)later;
}

static int usage(int rank) {
    if (rank == 0) fprintf(stderr, "usage: nqueens_mpi [N (1..30)] [threads per rank] [-s]\n");
    return 2;
}

int main(int argc, char **argv) {
    static const long long zero = 0;
    const pool_reducer count_reducer = {sizeof(long long), &zero, fold, combine};
    int provided, rank, ranks, n = 12, threads = 0, serial = 0, rows, rc;
    long long serial_count = -1, mine = 0, total = 0;
    double serial_s = 0, start, mine_s, slowest_s, all_s;
    struct pool_config cfg;
    struct board empty = {0, 0, 0};
    struct job job;
    struct board *prefixes;
    size_t index = 0, count;
    pool *p;

    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (provided < MPI_THREAD_FUNNELED) {
        if (rank == 0) fprintf(stderr, "this MPI gives no MPI_THREAD_FUNNELED\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-s") == 0) serial = 1;
        else if (i == 1) n = atoi(argv[i]);
        else if (i == 2) threads = atoi(argv[i]);
        else return MPI_Finalize(), usage(rank);
    }
    if (n < 1 || n > 30 || threads < 0) return MPI_Finalize(), usage(rank);

    if (serial && rank == 0) {
        start = MPI_Wtime();
        serial_count = queens((1u << n) - 1, 0, 0, 0);
        serial_s = MPI_Wtime() - start;
    }

    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    cfg.external_slots = POOL_EXTERNAL_SLOTS_NONE;
    if ((rc = pool_create(&p, &cfg)) != 0) {
        fprintf(stderr, "rank %d: pool_create: %s\n", rank, strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    MPI_Barrier(MPI_COMM_WORLD); /* every rank starts the clock together */
    start = MPI_Wtime();
    rows = prefix_rows((1u << n) - 1, ranks);
    count = deal((1u << n) - 1, empty, rows, &index, (size_t)rank, (size_t)ranks, NULL, 0);
    prefixes = malloc((count ? count : 1) * sizeof *prefixes);
    if (!prefixes) MPI_Abort(MPI_COMM_WORLD, 1);
    index = 0;
    deal((1u << n) - 1, empty, rows, &index, (size_t)rank, (size_t)ranks, prefixes, 0);
    job.n = n;
    job.prefixes = prefixes;
    rc = pool_parallel_reduce(p, 0, count, 1, &count_reducer, &job, &mine);
    if (rc != 0) {
        fprintf(stderr, "rank %d: pool_parallel_reduce: %s\n", rank, strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    mine_s = MPI_Wtime() - start;
    /* Only main calls MPI (MPI_THREAD_FUNNELED): the workers are done with this round. */
    MPI_Reduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    all_s = MPI_Wtime() - start;
    MPI_Reduce(&mine_s, &slowest_s, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    rc = 0;
    if (rank == 0) {
        long long expected = n < (int)(sizeof known / sizeof known[0]) ? known[n] : serial_count;
        printf("N=%d ranks=%d threads/rank=%d prefixes=%zu of %d rows: %lld solutions in %.6f s "
               "(slowest rank computed %.6f s)\n",
               n, ranks, pool_num_threads(p), index, rows, total, all_s, slowest_s);
        if (serial)
            printf("serial: %lld solutions in %.6f s; parallel/serial time %.3f\n", serial_count,
                   serial_s, all_s / serial_s);
        if (expected >= 0 && total != expected) {
            fprintf(stderr, "WRONG: expected %lld\n", expected);
            rc = 1;
        }
        if (serial && total != serial_count) {
            fprintf(stderr, "WRONG: the serial count is %lld\n", serial_count);
            rc = 1;
        }
    }
    pool_destroy(p);
    free(prefixes);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
