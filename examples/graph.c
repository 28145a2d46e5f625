/* examples/graph.c - a small build as a task graph: four source files are compiled in parallel,
 * each object after its headers are generated, the program linked after every object, and two
 * tests run after the link. The graph is built once and run twice. In the first run one
 * compilation fails: it cancels the run with pool_graph_cancel, the steps that had not started
 * do not run, the long ones already running stop early (they ask pool_graph_cancelled), and
 * pool_graph_wait says ECANCELED. In the second run, with the error fixed, every step runs.
 *
 *     cc -O2 -pthread examples/graph.c && ./a.out
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#define SOURCES 4

struct step {
    pool_graph_node node; /* first: the node's address is the step's */
    const char *name;
    int work;        /* units of simulated work; the graph is asked between units */
    int broken;      /* fails after its work */
    int done;        /* 1: ran to the end; -1: failed or stopped early; 0: did not run */
    unsigned digest; /* what the work computed */
};

static pool_graph build;

/* Simulated work: a hash over s->work units, asking between them whether
   the build was cancelled, as a long step should. Returns 1 once done, -1
   if it stopped early. */
static int work_for(struct step *s) {
    unsigned h = 2166136261u;
    int unit, i;
    for (unit = 0; unit < s->work; unit++) {
        if (pool_graph_cancelled(&build)) return -1;
        for (i = 0; i < 200000; i++) h = (h ^ (unsigned)i) * 16777619u;
        s->digest = h;
    }
    return 1;
}

static void step_run(pool_graph_node *n) {
    struct step *s = (struct step *)n; /* the node is the step's first member */
    s->done = work_for(s);
    if (s->done > 0 && s->broken) {
        printf("  %-10s error: cancelling the build\n", s->name);
        pool_graph_cancel(&build);
        s->done = -1;
    } else if (s->done < 0) {
        printf("  %-10s stopped early\n", s->name);
    }
}

static struct step headers = {POOL_GRAPH_NODE_INIT(step_run), "headers", 2, 0, 0, 0};
static struct step objects[SOURCES] = {
    {POOL_GRAPH_NODE_INIT(step_run), "main.o", 6, 0, 0, 0},
    {POOL_GRAPH_NODE_INIT(step_run), "parse.o", 40, 0, 0, 0},
    {POOL_GRAPH_NODE_INIT(step_run), "eval.o", 40, 0, 0, 0},
    {POOL_GRAPH_NODE_INIT(step_run), "print.o", 10, 1, 0, 0}, /* broken in the first run */
};
static struct step link_step = {POOL_GRAPH_NODE_INIT(step_run), "link", 3, 0, 0, 0};
static struct step tests[2] = {
    {POOL_GRAPH_NODE_INIT(step_run), "test-unit", 4, 0, 0, 0},
    {POOL_GRAPH_NODE_INIT(step_run), "test-e2e", 6, 0, 0, 0},
};

/* The graph's edges, one pool_graph_edge each: headers -> every object ->
   link -> every test. */
static pool_graph_edge edges[2 * SOURCES + 2];

static struct step *all_steps[] = {&headers,    &objects[0], &objects[1], &objects[2],
                                   &objects[3], &link_step,  &tests[0],   &tests[1]};
#define STEPS (sizeof all_steps / sizeof all_steps[0])

static int make_graph(void) {
    size_t i;
    int e = 0, rc = 0;
    pool_graph_init(&build, NULL); /* the default pool */
    for (i = 0; i < STEPS && !rc; i++) rc = pool_graph_add(&build, &all_steps[i]->node);
    for (i = 0; i < SOURCES && !rc; i++) {
        rc = pool_graph_link(&build, &edges[e++], &headers.node, &objects[i].node);
        if (!rc) rc = pool_graph_link(&build, &edges[e++], &objects[i].node, &link_step.node);
    }
    for (i = 0; i < 2 && !rc; i++)
        rc = pool_graph_link(&build, &edges[e++], &link_step.node, &tests[i].node);
    return rc;
}

/* Runs the build once; prints what each step did; returns the wait's result. */
static int run_build(void) {
    size_t i;
    int rc;
    for (i = 0; i < STEPS; i++) all_steps[i]->done = 0;
    rc = pool_graph_run(&build);
    if (rc == 0) rc = pool_graph_wait(&build);
    for (i = 0; i < STEPS; i++) {
        struct step *s = all_steps[i];
        if (s->done > 0) printf("  %-10s built (%08x)\n", s->name, s->digest);
        else printf("  %-10s %s\n", s->name, s->done == 0 ? "not run" : "failed or stopped early");
    }
    return rc;
}

int main(void) {
    int rc = make_graph(), i, built = 0;
    if (rc) {
        printf("building the graph failed: %d\n", rc);
        return 1;
    }
    printf("first build, print.o broken:\n");
    rc = run_build();
    printf("-> %s\n", rc == ECANCELED ? "cancelled (ECANCELED)" : "not cancelled?");
    if (rc != ECANCELED || link_step.done != 0 || tests[0].done != 0 || tests[1].done != 0)
        return 1; /* the link and the tests come after the broken step */

    printf("second build, print.o fixed:\n");
    objects[3].broken = 0;
    rc = run_build();
    printf("-> %s\n", rc == 0 ? "every step built" : "failed?");
    for (i = 0; i < (int)STEPS; i++) built += all_steps[i]->done > 0;
    return rc == 0 && built == (int)STEPS ? 0 : 1;
}
