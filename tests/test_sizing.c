/* test_sizing.c - the default number of threads.
 *
 * pool_create with num_threads 0 takes $POOL_NUM_THREADS if set, else the
 * CPUs of the process's affinity mask, capped by the cgroup v2 CPU quota
 * (ceil(quota / period) of cpu.max, the smallest along the path from the
 * process's cgroup to the root). The cgroup files are read through two
 * test hooks that point at a fake tree under /tmp:
 *  - no /proc/self/cgroup, a v1-only file, no cpu.max, "max 100000":
 *    no cap;
 *  - "50000 100000" (half a CPU) -> 1; "100000 100000" -> 1;
 *    "150000 100000" -> 2 (capped by the CPU count);
 *  - a quota on a parent binds a child without one, and the smaller of
 *    two quotas wins;
 *  - malformed files are ignored;
 *  - $POOL_NUM_THREADS overrides all of it; a bad value is ignored;
 *  - an affinity mask of one CPU gives 1 thread.
 */
#if !defined(__linux__)
#include <stdio.h>
int main(void) {
    printf("test_sizing: skipped: the affinity mask and the cgroup quota are read on Linux only\n");
    return 0;
}
#else
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <sched.h>
static const char *test_cgroup_root = "/nonexistent";
static const char *test_proc_self_cgroup = "/nonexistent";
#define POOL__CGROUP_ROOT test_cgroup_root
#define POOL__PROC_SELF_CGROUP test_proc_self_cgroup
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

#include <sys/stat.h>

static char tree[256], proc_file[300];

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* A fake cgroup tree: tree/a/b, with the process in `cgroup_line`. */
static void make_tree(const char *cgroup_line, const char *root_max, const char *a_max,
                      const char *b_max) {
    char path[400];
    snprintf(path, sizeof path, "rm -rf %s", tree);
    CHECK(system(path) == 0);
    CHECK(mkdir(tree, 0700) == 0);
    snprintf(path, sizeof path, "%s/a", tree);
    CHECK(mkdir(path, 0700) == 0);
    snprintf(path, sizeof path, "%s/a/b", tree);
    CHECK(mkdir(path, 0700) == 0);
    if (root_max) snprintf(path, sizeof path, "%s/cpu.max", tree), write_file(path, root_max);
    if (a_max) snprintf(path, sizeof path, "%s/a/cpu.max", tree), write_file(path, a_max);
    if (b_max) snprintf(path, sizeof path, "%s/a/b/cpu.max", tree), write_file(path, b_max);
    write_file(proc_file, cgroup_line);
}

static int default_threads(void) {
    pool *p;
    int n;
    if (pool_create(&p, NULL) != 0) return -1;
    n = pool_num_threads(p);
    pool_destroy(p);
    return n;
}

static int min_int(int a, int b) { return a < b ? a : b; }

int main(void) {
    int cpus;
    char msg[700];
    cpu_set_t set, one;
    test_watchdog(60, "test_sizing");
    unsetenv("POOL_NUM_THREADS");
    snprintf(tree, sizeof tree, "/tmp/pool-test-cgroup-%d", (int)getpid());
    snprintf(proc_file, sizeof proc_file, "%s-proc", tree);
    test_cgroup_root = tree;
    test_proc_self_cgroup = proc_file;

    CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
    cpus = CPU_COUNT(&set);
    CHECK(cpus >= 1);

    /* No cgroup information at all. */
    test_proc_self_cgroup = "/nonexistent";
    CHECK_EQ_I64(default_threads(), cpus);
    test_proc_self_cgroup = proc_file;

    /* A v1-only process: no "0::" line. */
    make_tree("3:cpu,cpuacct:/a/b\n", NULL, NULL, "50000 100000\n");
    CHECK_EQ_I64(default_threads(), cpus);

    /* v2, no cpu.max anywhere, then "max". */
    make_tree("0::/a/b\n", NULL, NULL, NULL);
    CHECK_EQ_I64(default_threads(), cpus);
    make_tree("0::/a/b\n", NULL, NULL, "max 100000\n");
    CHECK_EQ_I64(default_threads(), cpus);

    /* Quotas on the process's own cgroup. */
    make_tree("0::/a/b\n", NULL, NULL, "50000 100000\n");
    CHECK_EQ_I64(default_threads(), 1);
    make_tree("0::/a/b\n", NULL, NULL, "100000 100000\n");
    CHECK_EQ_I64(default_threads(), 1);
    make_tree("0::/a/b\n", NULL, NULL, "150000 100000\n");
    CHECK_EQ_I64(default_threads(), min_int(cpus, 2));

    /* A parent's quota binds; the smallest wins; the root counts too. */
    make_tree("0::/a/b\n", NULL, "100000 100000\n", NULL);
    CHECK_EQ_I64(default_threads(), 1);
    make_tree("0::/a/b\n", NULL, "100000 100000\n", "300000 100000\n");
    CHECK_EQ_I64(default_threads(), 1);
    make_tree("0::/a/b\n", "100000 100000\n", NULL, "max 100000\n");
    CHECK_EQ_I64(default_threads(), 1);

    /* Other controllers' lines before the v2 one; a trailing slash. */
    make_tree("5:memory:/x\n0::/a/b/\n", NULL, NULL, "50000 100000\n");
    CHECK_EQ_I64(default_threads(), 1);

    /* A process in the root cgroup. */
    make_tree("0::/\n", "50000 100000\n", NULL, NULL);
    CHECK_EQ_I64(default_threads(), 1);

    /* Malformed files are no limit. */
    make_tree("0::/a/b\n", NULL, NULL, "garbage\n");
    CHECK_EQ_I64(default_threads(), cpus);
    make_tree("0::/a/b\n", NULL, NULL, "50000 0\n");
    CHECK_EQ_I64(default_threads(), cpus);
    make_tree("0::/a/b\n", NULL, NULL, "-5 100000\n");
    CHECK_EQ_I64(default_threads(), cpus);

    /* $POOL_NUM_THREADS beats the quota; a bad value does not. */
    make_tree("0::/a/b\n", NULL, NULL, "50000 100000\n");
    setenv("POOL_NUM_THREADS", "7", 1);
    CHECK_EQ_I64(default_threads(), 7);
    setenv("POOL_NUM_THREADS", "7x", 1);
    CHECK_EQ_I64(default_threads(), 1);
    setenv("POOL_NUM_THREADS", "0", 1);
    CHECK_EQ_I64(default_threads(), 1);
    setenv("POOL_NUM_THREADS", "70000", 1);
    CHECK_EQ_I64(default_threads(), 1);
    unsetenv("POOL_NUM_THREADS");

    /* The affinity mask: one CPU allowed, one thread. */
    test_proc_self_cgroup = "/nonexistent";
    CPU_ZERO(&one);
    {
        int cpu;
        for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set); cpu++) continue;
        CPU_SET(cpu, &one);
    }
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
    CHECK_EQ_I64(default_threads(), 1);
    CHECK(sched_setaffinity(0, sizeof set, &set) == 0);
    CHECK_EQ_I64(default_threads(), cpus);

    snprintf(msg, sizeof msg, "rm -rf %s %s", tree, proc_file);
    CHECK(system(msg) == 0);
    return test_finish("test_sizing");
}
#endif
