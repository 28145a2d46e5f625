/* test_spin.c - the idle policy: pool_config.spin_us and $POOL_SPIN_US.
 *
 *  - default: no spin at all (pool_stats.spin_ns stays 0);
 *  - a budget longer than the gap: work posted 2 ms after the pool went
 *    idle starts without any worker having slept (sleeps unchanged), and
 *    the spin shows in spin_ns;
 *  - a short budget ends: after it the workers sleep, each idle spell spins
 *    its budget and no more, and the pool then burns no CPU;
 *  - a sleep called off by a post once the budget has run out does not
 *    begin a second budget in the same spell;
 *  - $POOL_SPIN_US is the default when spin_us is 0; anything that is not a
 *    number up to 1000000 is ignored.
 * spin_us > 1000000 (EINVAL) is a row of test_badinput.
 */
#define POOL_IMPLEMENTATION
#include "../pool.h"

#include "test.h"

static void nothing(void *arg) { (void)arg; }

static pool *spin_pool(int threads, unsigned spin_us) {
    pool_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.num_threads = threads;
    cfg.spin_us = spin_us;
    return test_pool_cfg(&cfg);
}

/* Work for every worker, so that each has an idle spell after it. */
static void burst(pool *p) {
    test_fib_arg f;
    test_fib_pool = p;
    f.n = 22;
    pool_call_on_worker(p, test_fib, &f);
    CHECK_EQ_I64(f.result, 17711);
}

static pool_stats stats(pool *p) {
    pool_stats st;
    pool_stats_get(p, &st);
    return st;
}

static void test_default_none(void) {
    pool *p;
    test_watchdog(30, "test_spin: default");
    printf("  default: no spin\n");
    test_setenv("POOL_SPIN_US", "");
    p = spin_pool(2, 0);
    burst(p);
    test_sleep_us(20000);
    burst(p);
    test_sleep_us(20000);
    CHECK_EQ_I64(stats(p).spin_ns, 0);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* With a 1 s budget, a 2 ms gap is spun through: the worker does not sleep.
   One worker, so that it runs every task and each of its spells is one
   gap long, however slowly a sanitizer or an emulator runs the rounds. */
static void test_long_budget(void) {
    pool *p = spin_pool(1, 1000000);
    pool_stats before, after;
    int round;
    test_watchdog(60, "test_spin: long budget");
    printf("  1 s budget, work every 2 ms: the worker never sleeps\n");
    burst(p); /* starts the worker */
    test_sleep_us(5000);
    before = stats(p);
    for (round = 0; round < 20; round++) {
        test_sleep_us(2000);
        pool_call_on_worker(p, nothing, NULL);
    }
    after = stats(p);
    CHECK_MSG(after.sleeps == before.sleeps, "%" PRIu64 " sleeps within the budget",
              after.sleeps - before.sleeps);
    CHECK_MSG(after.spin_ns > before.spin_ns, "spin_ns did not grow: %" PRIu64, after.spin_ns);
    CHECK_EQ_I64(pool_destroy(p), 0);
}

/* A 20 ms budget: each worker's idle spell spins 20 ms, then it sleeps, and
   the idle pool costs nothing more. */
#define SHORT_US 20000

/* The upper bound: after a burst each worker spins its budget once and no
   more, plus what it spun during the burst (at most the burst's length),
   plus 10 ms for a yield's overshoot. How far a spin overshoots is a
   scheduling delay (a worker preempted in its last yield counts the time
   it waited for the CPU), which a machine busy with other work can stretch
   by tens of ms in one round; a budget misread, or restarted within a
   spell, overshoots in every round. So a round over the bound is tried
   again, and only the last of SPIN_ROUNDS fails the check. */
#define SPIN_ROUNDS 3

/* Whether a worker spun more than the bound; fails the check if `last`. */
static int spun_too_long(pool *p, const pool_worker_stats *w_before, double burst_ns, int last) {
    pool_worker_stats w;
    double bound = SHORT_US * 1e3 + burst_ns + 10e6;
    int i, over = 0;
    for (i = 0; i < 2; i++) {
        uint64_t spun;
        CHECK(pool_worker_stats_get(p, i, &w) == 0);
        spun = w.spin_ns - w_before[i].spin_ns;
        if ((double)spun <= bound) continue;
        over = 1;
        if (last)
            CHECK_MSG((double)spun <= bound,
                      "worker %d spun %" PRIu64 " ns after a burst of %.0f ns, budget %d us per "
                      "spell, in each of %d rounds",
                      i, spun, burst_ns, SHORT_US, SPIN_ROUNDS);
        else
            printf("    worker %d spun %" PRIu64 " ns after a burst of %.0f ns: once more\n", i,
                   spun, burst_ns);
    }
    return over;
}

static void test_short_budget(void) {
    pool *p = spin_pool(2, SHORT_US);
    pool_stats before, after;
    pool_worker_stats w, w_before[2];
    double cpu0, cpu1, t0, burst_ns;
    int i, round;
    test_watchdog(60, "test_spin: short budget");
    burst(p);
    test_sleep_us(300000); /* the first spells, from the threads' start, are over */
    for (round = 1; round <= SPIN_ROUNDS; round++) {
        before = stats(p);
        for (i = 0; i < 2; i++) CHECK(pool_worker_stats_get(p, i, &w_before[i]) == 0);
        t0 = test_now();
        burst(p);
        burst_ns = (test_now() - t0) * 1e9;
        test_sleep_us(300000);
        after = stats(p);
        /* spin_ns grows only when a spin ends. A spin that never ends on
           its own is counted when work ends it: the burst ends the spell
           that spun through the idle window before it, over the bound in
           every round; and the idle pool neither sleeps nor stops burning
           CPU, which the checks below catch at once. Emulators and valgrind
           stretch a yield too far for a bound. */
        if (test_under_valgrind() || test_runner()[0]) break;
        if (!spun_too_long(p, w_before, burst_ns, round == SPIN_ROUNDS)) break;
    }
    /* Each started worker had one spell after the burst (and short ones
       during it, while it looked for work to steal), however often it was
       woken for nothing afterwards. */
    CHECK_MSG(after.spin_ns - before.spin_ns >= (uint64_t)SHORT_US * 1000,
              "spun %" PRIu64 " ns after a burst, budget %d us", after.spin_ns - before.spin_ns,
              SHORT_US);
    CHECK_MSG(after.sleeps > before.sleeps, "no worker slept after its budget");
    for (i = 0; i < 2; i++) {
        CHECK(pool_worker_stats_get(p, i, &w) == 0);
        /* Whole spells of SHORT_US each, plus one yield's overshoot at most
           (generous under sanitizers and emulators). */
        CHECK_MSG(w.spin_ns >= (uint64_t)SHORT_US * 1000, "worker %d spun %" PRIu64 " ns", i,
                  w.spin_ns);
    }
    if (!test_under_valgrind() && !test_runner()[0]) {
        cpu0 = test_cpu_time();
        test_sleep_us(300000);
        cpu1 = test_cpu_time();
        printf("  20 ms budget: spun %.1f ms over 2 workers after a burst; idle after it: %.2f ms "
               "CPU in 300 ms\n",
               (double)(after.spin_ns - before.spin_ns) / 1e6, (cpu1 - cpu0) * 1e3);
        CHECK_MSG((cpu1 - cpu0) * 1e3 < 10.0, "the pool burned %.2f ms of CPU after its budget",
                  (cpu1 - cpu0) * 1e3);
    }
    CHECK_EQ_I64(pool_destroy(p), 0);
}

static void test_env(void) {
    pool *p;
    double until;
    test_watchdog(60, "test_spin: environment");
    printf("  $POOL_SPIN_US\n");
    test_setenv("POOL_SPIN_US", "5000");
    p = spin_pool(1, 0);
    burst(p);
    /* The spell is counted as it ends, 5 ms after the burst at the least:
       later when the machine is slow (10 s at the most). */
    until = test_now() + 10;
    while (stats(p).spin_ns < 5000000 && test_now() < until) test_sleep_us(1000);
    CHECK_MSG(stats(p).spin_ns >= 5000000, "POOL_SPIN_US=5000: spun %" PRIu64 " ns",
              stats(p).spin_ns);
    CHECK_EQ_I64(pool_destroy(p), 0);
    {
        static const char *const ignored[] = {"abc", "-1", "1000001", "5000x"};
        size_t k;
        for (k = 0; k < sizeof ignored / sizeof *ignored; k++) {
            test_setenv("POOL_SPIN_US", ignored[k]);
            p = spin_pool(1, 0);
            burst(p);
            test_sleep_us(10000);
            CHECK_MSG(stats(p).spin_ns == 0, "POOL_SPIN_US=%s: spun %" PRIu64 " ns", ignored[k],
                      stats(p).spin_ns);
            CHECK_EQ_I64(pool_destroy(p), 0);
        }
    }
    test_setenv("POOL_SPIN_US", "");
}

/* A spell spins its budget once. Once the budget has run out, a sleep
   that a post calls off starts the rounds over (pool__sleep), and the round
   that spins must not begin a second budget: the worker would otherwise
   spin a whole budget again each time a post it does not get calls its
   sleep off. Driven on an external slot, which no thread runs while no
   call holds it: pool__spinning reads the pool's budget and the idle
   state it is given, and adds to the slot's spin_ns when the budget runs
   out, a counter only the slot's holder writes (nobody holds it here). */
static void test_called_off(void) {
    pool *p = spin_pool(1, SHORT_US);
    pool__worker *w;
    pool__idle idle;
    test_watchdog(30, "test_spin: a sleep called off");
    printf("  a sleep called off after the budget does not spin again\n");
    CHECK(p->num_slots > 0);
    w = pool__slot(p, 0);
    memset(&idle, 0, sizeof idle);
    CHECK_MSG(pool__spinning(w, &idle), "the first fruitless search did not spin");
    idle.spin_from -= (uint64_t)SHORT_US * 1000 + 1; /* the budget has passed */
    CHECK_MSG(!pool__spinning(w, &idle), "spun past the budget");
    idle.rounds = 0; /* as pool__sleep leaves it when a post calls the sleep off */
    CHECK_MSG(!pool__spinning(w, &idle), "a second budget within one idle spell");
    CHECK_EQ_I64(pool_destroy(p), 0);
}

int main(int argc, char **argv) {
    static const test_part parts[] = {
        {"default", test_default_none},  {"long", test_long_budget},
        {"short", test_short_budget},    {"env", test_env},
        {"called-off", test_called_off},
    };
    printf("test_spin: the idle spin budget\n");
    test_run_parts(argc, argv, parts, sizeof parts / sizeof *parts);
    return test_finish("test_spin");
}
