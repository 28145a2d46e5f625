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
 * PROMOTER (-DPROMOTER) adds a busy worker with LAZY join halves recorded
 * lazily (pool.h's lazy joins section): at each of its joins it reads its
 * promote_wanted word, which the others set after a fruitless search, and
 * whether the pool has a sleeper; with either, and its deque empty, it
 * promotes a half onto its deque (`dq`, which the others search too) and
 * announces it as pool__new_moved_jobs does. Otherwise it takes the newest
 * half back as a plain call. It never takes a promoted half back: the
 * worst case, a first half that runs on forever, so a promoted half must be
 * run by another worker.
 *
 * BROKEN (-DBROKEN) plants a lost wake-up; BROKEN_PROMOTE a promotion that
 * pushes without announcing, BROKEN_ANNOUNCE one whose announce posts the
 * JEC but wakes nobody; tests/model/check.sh makes sure spin finds each,
 * so that a passing check means something.
 *
 * Property: when no process can move any more (spin's timeout), no job is
 * left queued: every posted job and every lazy half has run (a promoted
 * one by another worker), and no worker sleeps forever while there is
 * work. spin also reports any other deadlock (an invalid
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
#ifndef LAZY
#define LAZY 2 /* the promoter's lazy join halves */
#endif
#ifdef PROMOTER
#define HALVES LAZY
#else
#define HALVES 0
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
byte dq;                  /* promoted halves on the promoter's deque */
bool wanted;              /* the promoter's promote_wanted */

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
    :: atomic { injector > 0 || dq > 0 ->                   /* pool__find_work found a job */
            if :: injector > 0 -> injector-- :: dq > 0 -> dq-- fi }  /* ... or stole a half */
        if
        :: idle ->                                          /* pool__leave_idle */
            atomic { inactive--; }
            if
            :: injector > 0 || dq > 0 -> wake_one(i, woke)  /* work still visible */
            :: else -> skip
            fi;
            idle = 0
        :: else -> skip
        fi;
        ran++;
        goto search
    :: atomic { injector == 0 && dq == 0 -> if :: !idle -> inactive++; idle = 1 :: else -> skip fi }
#ifdef PROMOTER
        wanted = 1;                                         /* pool__want_promotions */
#endif
    fi;
    /* pool__jec_announce_sleepy */
    atomic { if :: jec % 2 == 1 -> jec++ :: else -> skip fi; myjec = jec }
    /* the search after the announce */
    if
    :: injector > 0 || dq > 0 -> goto search
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

/* pool__jec_post, then pool__wake_for_jobs(p, c, 1, was_empty) */
inline announce_one(was_empty, i, woke, c_sleeping, c_inactive, awake_idle, to_wake) {
        atomic {
            if :: jec % 2 == 0 -> jec++ :: else -> skip fi;
            c_sleeping = sleeping;
            c_inactive = inactive
        }
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
        c_sleeping = 0; c_inactive = 0; awake_idle = 0; to_wake = 0; was_empty = 0
}

proctype poster() {
    byte k = 0, i, woke, c_sleeping, c_inactive, awake_idle, to_wake;
    bool was_empty;
    do
    :: k < JOBS ->
        atomic { was_empty = (injector == 0); injector++ }   /* pool__injector_push */
        announce_one(was_empty, i, woke, c_sleeping, c_inactive, awake_idle, to_wake);
        k++
    :: else -> break
    od
}

/* A worker busy in the first halves of its joins (pool__join_local). */
proctype promoter() {
    byte lazy = LAZY, i, woke, c_sleeping, c_inactive, awake_idle, to_wake;
    bool was_empty, reason;
    do
    :: lazy > 0 ->
        /* A join's start reads promote_wanted and pool__wants_threads; a
           join's end reads promote_wanted only. */
        if
        :: atomic { reason = wanted || sleeping > 0 }
        :: atomic { reason = wanted }
        fi;
        if
        :: reason ->
            wanted = 0;                                      /* pool__promote */
            if
            :: atomic { dq == 0 -> dq++; lazy-- }            /* onto an empty deque */
#if defined(BROKEN_PROMOTE)
                skip
#elif defined(BROKEN_ANNOUNCE)
                atomic { if :: jec % 2 == 0 -> jec++ :: else -> skip fi }
#else
                was_empty = 1;                               /* pool__new_moved_jobs */
                announce_one(was_empty, i, woke, c_sleeping, c_inactive, awake_idle, to_wake)
#endif
            :: atomic { dq > 0 -> skip }                     /* not empty: nothing */
            fi
        :: else -> atomic { lazy--; ran++ }                  /* taken back: a plain call */
        fi;
        reason = 0
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
        od;
#ifdef PROMOTER
        run promoter()
#endif
    }
}

/* When nothing can move: every job ran, none is left queued. */
active proctype monitor() {
    timeout -> assert(injector == 0 && dq == 0 && ran == POSTERS * JOBS + HALVES)
}
