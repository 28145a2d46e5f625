/* bench/mpi_model.c -- what examples/mpi/nqueens_mpi.c's work split would give on more ranks
 * than one machine has: a model, not a measurement. It counts the nodes of every prefix's
 * subtree (the work of that piece, in the example's own recursion), deals the prefixes out as
 * the example does (prefix i to rank i mod RANKS), gives each rank's share to its THREADS in
 * order, each piece to the least loaded thread (what stealing from a halved range comes to),
 * and prints the efficiency: the total work over RANKS x THREADS x the most loaded thread's.
 *
 *     cc -O2 bench/mpi_model.c -o mpi_model && ./mpi_model 16
 *     usage: mpi_model N [ROWS...]          defaults: rows 3 4
 *
 * It leaves out what a real run adds: the launch, one MPI_Reduce, the pool's own costs, and
 * differences between nodes. README's "Beyond one machine" reads it.
 */
#include <stdio.h>
#include <stdlib.h>

#define MAX_PREFIXES 200000
#define MAX_THREADS 16

static unsigned all_cols;
static long long cost[MAX_PREFIXES];
static int prefixes;

/* Nodes of the search below a partial board, the board itself included. */
static long long nodes(unsigned cols, unsigned left, unsigned right) {
    long long n = 1;
    unsigned free_cols = all_cols & ~(cols | left | right);
    while (free_cols) {
        unsigned bit = free_cols & -free_cols;
        free_cols ^= bit;
        n += nodes(cols | bit, ((left | bit) << 1) & all_cols, (right | bit) >> 1);
    }
    return n;
}

/* The prefixes of `rows` rows, in the example's order, each with its cost. */
static void deal(unsigned cols, unsigned left, unsigned right, int rows) {
    unsigned free_cols;
    if (rows == 0 || cols == all_cols) {
        if (prefixes == MAX_PREFIXES) {
            fprintf(stderr, "mpi_model: more than %d prefixes\n", MAX_PREFIXES);
            exit(2);
        }
        cost[prefixes++] = nodes(cols, left, right);
        return;
    }
    free_cols = all_cols & ~(cols | left | right);
    while (free_cols) {
        unsigned bit = free_cols & -free_cols;
        free_cols ^= bit;
        deal(cols | bit, ((left | bit) << 1) & all_cols, (right | bit) >> 1, rows - 1);
    }
}

/* The most loaded thread's work, over every rank. */
static long long busiest(int ranks, int threads) {
    long long worst = 0;
    int rank, i, t;
    for (rank = 0; rank < ranks; rank++) {
        long long load[MAX_THREADS] = {0};
        for (i = rank; i < prefixes; i += ranks) {
            int least = 0;
            for (t = 1; t < threads; t++)
                if (load[t] < load[least]) least = t;
            load[least] += cost[i];
        }
        for (t = 0; t < threads; t++)
            if (load[t] > worst) worst = load[t];
    }
    return worst;
}

int main(int argc, char **argv) {
    static const int ranks[] = {1, 2, 8, 64}, threads[] = {1, 2, 16};
    static const char *default_rows[] = {"3", "4"};
    int n = argc > 1 ? atoi(argv[1]) : 0, a, r, t;
    const char **rows_arg = argc > 2 ? (const char **)argv + 2 : default_rows;
    int rows_count = argc > 2 ? argc - 2 : 2;
    if (n < 4 || n > 20) {
        fprintf(stderr, "usage: mpi_model N [ROWS...]   (N 4 to 20, rows 1 to 6)\n");
        return 2;
    }
    all_cols = (1u << n) - 1;
    for (a = 0; a < rows_count; a++) {
        int rows = atoi(rows_arg[a]);
        long long total = 0, largest = 0;
        int i;
        if (rows < 1 || rows > 6) {
            fprintf(stderr, "mpi_model: rows %s: not 1 to 6\n", rows_arg[a]);
            return 2;
        }
        prefixes = 0;
        deal(0, 0, 0, rows);
        for (i = 0; i < prefixes; i++) {
            total += cost[i];
            if (cost[i] > largest) largest = cost[i];
        }
        printf("N=%d, prefixes of %d rows: %d, %lld nodes; the largest is %.4f%% of the work\n", n,
               rows, prefixes, total, 100.0 * (double)largest / (double)total);
        for (r = 0; r < 4; r++)
            for (t = 0; t < 3; t++)
                printf("  %2d ranks x %2d threads: %4d prefixes per rank, efficiency %.3f\n",
                       ranks[r], threads[t], prefixes / ranks[r],
                       (double)total /
                           ((double)ranks[r] * threads[t] * (double)busiest(ranks[r], threads[t])));
    }
    return 0;
}
