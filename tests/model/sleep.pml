/* tests/model/sleep.pml - the sleep protocol of pool.h, for spin.
 *
 * What is modelled: the counters word (sleeping, inactive, JEC), each
 * worker's CoreLatch, the check of the injector before blocking, the
 * posters' wake decision (pool__wake_for_jobs) and the wake-one of a worker
 * that leaves idle (pool__leave_idle). Names in the comments are the
 * functions of pool.h each step stands for.
 *
 * Abstractions:
 *  - Every atomic operation is one indivisible step, and spin interleaves
 *    them sequentially consistently. pool.h makes the pairs that need it
 *    seq_cst (see its sleep section); this model checks the protocol's
 *    logic, not the memory orders.
 *  - Jobs are a count in the injector. A worker takes one at a time; in
 *    pool.h it takes all and moves the rest to its deque, announcing them
 *    as a poster would (pool__new_moved_jobs), which this model folds
 *    into leaving them in the injector.
 *  - Progressive sleep's 32 yielding searches are one search: more
 *    searches only add chances to find work.
 *
 * BROKEN (-DBROKEN) plants a lost wake-up; tests/model/check.sh makes sure
 * spin finds it, so that a passing check means something.
 *
 * Property: when no process can move any more (spin's timeout), no job is
 * left queued: every posted job has run, and no worker sleeps forever
 * while there is work. spin also reports any other deadlock (an invalid
 * end state) and any assertion failure.
 */

#ifndef WORKERS
#define WORKERS 3
#endif
#ifndef POSTERS
#define POSTERS 2
#endif
#ifndef JOBS
#define JOBS 2 /* per poster */
#endif

#define UNSET 0
#define SLEEPY 1
#define SLEEPING 2
#define SET 3

byte injector;            /* queued jobs */
byte ran;                 /* jobs run */
byte sleeping, inactive;  /* the counters word ... */
byte jec;                 /* ... and its jobs event counter */
byte latch[WORKERS];

/* pool__wake_sleeper over workers 0.. until one is woken (pool__wake_any(p, 1)). */
inline wake_one(i, woke) {
    i = 0;
    woke = 0;
    do
    :: i < WORKERS && !woke ->
        atomic {
            if
            :: latch[i] == SLEEPY -> latch[i] = SET; woke = 1           /* sleeper un-counts itself */
            :: latch[i] == SLEEPING -> latch[i] = SET; sleeping--; woke = 1 /* waker un-counts it */
            :: else -> skip
            fi
        }
        i++
    :: else -> break
    od;
    i = 0;
    woke = 0
}

proctype worker(byte me) {
    bool idle = 0;
    byte myjec, i, woke;
search:
    if
    :: atomic { injector > 0 -> injector--; }               /* pool__find_work found a job */
        if
        :: idle ->                                          /* pool__leave_idle */
            atomic { inactive--; }
            if
            :: injector > 0 -> wake_one(i, woke)            /* work still visible */
            :: else -> skip
            fi;
            idle = 0
        :: else -> skip
        fi;
        ran++;
        goto search
    :: atomic { injector == 0 -> if :: !idle -> inactive++; idle = 1 :: else -> skip fi }
    fi;
    /* pool__jec_announce_sleepy */
    atomic { if :: jec % 2 == 1 -> jec++ :: else -> skip fi; myjec = jec }
    /* the search after the announce */
    if
    :: injector > 0 -> goto search
    :: else -> skip
    fi;
    /* pool__sleep: UNSET -> SLEEPY, or consume a SET and search again */
    atomic {
        if
        :: latch[me] == UNSET -> latch[me] = SLEEPY
        :: else -> latch[me] = UNSET; goto search
        fi
    }
    /* register as sleeping unless a job was posted since the announce */
    atomic {
        if
        :: jec != myjec -> latch[me] = UNSET; goto search
        :: else -> sleeping++
        fi
    }
    /* the injector check, then SLEEPY -> SLEEPING */
#ifndef BROKEN
    atomic {
        if
        :: injector > 0 -> sleeping--; latch[me] = UNSET; goto search
        :: else -> skip
        fi
    }
    atomic {
        if
        :: latch[me] == SLEEPY -> latch[me] = SLEEPING
        :: else -> sleeping--; latch[me] = UNSET; goto search   /* a waker set SET */
        fi
    }
#else
    /* The self-check of check.sh: no injector check, and a store that
       overwrites a waker's SET. spin must find the lost wake-up. */
    latch[me] = SLEEPING;
#endif
end_asleep:
    latch[me] == SET;                                        /* the futex wait */
    latch[me] = UNSET;                                       /* pool__latch_reset */
    goto search
}

proctype poster() {
    byte k = 0, i, woke, c_sleeping, c_inactive, awake_idle, to_wake;
    bool was_empty;
    do
    :: k < JOBS ->
        atomic { was_empty = (injector == 0); injector++ }   /* pool__injector_push */
        atomic {                                             /* pool__jec_post */
            if :: jec % 2 == 0 -> jec++ :: else -> skip fi;
            c_sleeping = sleeping;
            c_inactive = inactive
        }
        /* pool__wake_for_jobs(p, c, 1, was_empty) */
        if
        :: c_inactive > c_sleeping -> awake_idle = c_inactive - c_sleeping
        :: else -> awake_idle = 0
        fi;
        if
        :: !was_empty -> to_wake = 1
        :: was_empty && awake_idle < 1 -> to_wake = 1
        :: else -> to_wake = 0
        fi;
        if
        :: to_wake > c_sleeping -> to_wake = c_sleeping
        :: else -> skip
        fi;
        if
        :: to_wake > 0 -> wake_one(i, woke)
        :: else -> skip
        fi;
        c_sleeping = 0; c_inactive = 0; awake_idle = 0; to_wake = 0; was_empty = 0;
        k++
    :: else -> break
    od
}

init {
    byte w = 0;
    atomic {
        jec = 1; /* odd: active */
        do
        :: w < WORKERS -> run worker(w); w++
        :: else -> break
        od;
        w = 0;
        do
        :: w < POSTERS -> run poster(); w++
        :: else -> break
        od
    }
}

/* When nothing can move: every job ran, none is left queued. */
active proctype monitor() {
    timeout -> assert(injector == 0 && ran == POSTERS * JOBS)
}
