/* tests/model/park.pml - a worker that parks in a wait, and the spare
 * thread its pool starts in its place (pool.h's waiting section), for spin.
 *
 * The worst case for a parked worker: what it waits for finishes only
 * after every job posted to its pool has run (a task waiting for a
 * blocking job that waits for those jobs, say). Worker 0 starts out
 * running such a task; posters post jobs; the wait ends when all of them
 * have run. With NUM_THREADS workers wanted and worker 0 parked, somebody
 * must start a spare, or wake a sleeper, for the jobs: the parker itself
 * if it sees them queued (pool__park_begin), or the poster if it sees the
 * park (pool__wake_for_jobs with pool__threads_wanted). Both read the
 * other's write after their own, seq_cst, so at least one of them sees it.
 *
 * What is modelled, with names of pool.h: the sleep protocol of sleep.pml
 * (counters, CoreLatch, the injector check before blocking), threads
 * started on demand (pool__spawn, up to pool__threads_wanted), the parked
 * count, and the park itself. Abstractions as in sleep.pml: every atomic
 * step indivisible and sequentially consistent, jobs a count, the
 * progressive sleep one search.
 *
 * BROKEN (-DBROKEN) plants the bug of a parker that does not look at the
 * queue after counting itself parked, BROKEN_POSTER that of posters that
 * do not count parked workers; tests/model/check.sh makes sure spin finds
 * the hang each one causes: both halves of the pair are needed.
 *
 * Property: when no process can move any more (spin's timeout), every
 * posted job has run and the parked worker has resumed.
 */

#ifndef NUM_THREADS
#define NUM_THREADS 1 /* workers wanted, besides spares */
#endif
#ifndef MAX_WORKERS
#define MAX_WORKERS 2 /* workers and spares at most */
#endif
#ifndef POSTERS
#define POSTERS 2
#endif

#define UNSET 0
#define SLEEPY 1
#define SLEEPING 2
#define SET 3

byte injector;            /* queued jobs */
byte ran;                 /* jobs run */
byte sleeping, inactive;  /* the counters word ... */
byte jec;                 /* ... and its jobs event counter */
byte latch[MAX_WORKERS];
byte started;             /* threads started: workers, then spares */
byte parked;              /* workers parked in a wait */
bool wait_done;           /* what the parked worker waits for has finished */

/* pool__threads_wanted */
#ifndef BROKEN_POSTER
#define WANTED ((NUM_THREADS + parked) < MAX_WORKERS -> (NUM_THREADS + parked) : MAX_WORKERS)
#else
#define WANTED NUM_THREADS /* planted: posters ignore the park */
#endif

inline wake_one(i, woke) {
    i = 0;
    woke = 0;
    do
    :: i < started && !woke ->
        atomic {
            if
            :: latch[i] == SLEEPY -> latch[i] = SET; woke = 1
            :: latch[i] == SLEEPING -> latch[i] = SET; sleeping--; woke = 1
            :: else -> skip
            fi
        }
        i++
    :: else -> break
    od;
    i = 0
}

/* pool__wake_for_jobs(p, c, 1, was_empty) with the counters read in the
   same atomic step as the caller's post, then pool__spawn. */
inline wake_for_job(was_empty, c_sleeping, c_inactive, awake_idle, to_wake, i, woke, limit) {
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
    woke = 0;
    if
    :: to_wake > 0 -> wake_one(i, woke)
    :: else -> skip
    fi;
    if
    :: awake_idle + woke < 1 ->
        limit = WANTED;                                      /* pool__threads_wanted */
        atomic {                                             /* pool__spawn, under its lock */
            if
            :: started < limit -> run worker(started); started++
            :: else -> skip
            fi
        }
    :: else -> skip
    fi;
    awake_idle = 0; to_wake = 0; woke = 0; c_sleeping = 0; c_inactive = 0; limit = 0
}

proctype worker(byte me) {
    bool idle = 1;
    byte myjec, i, woke, c_sleeping, c_inactive, awake_idle, to_wake, limit;
    bool was_empty;
    atomic { inactive++ }                                    /* a new worker searches */
    if
    :: me == 0 ->                                            /* runs the task that waits */
        atomic { inactive--; idle = 0 }
        atomic { parked++ }                                  /* pool__park_begin */
#ifndef BROKEN
        was_empty = (injector == 0);                         /* pool__work_visible */
        atomic { c_sleeping = sleeping; c_inactive = inactive }
        if
        :: !was_empty -> wake_for_job(0, c_sleeping, c_inactive, awake_idle, to_wake, i, woke, limit)
        :: else -> skip
        fi;
#endif
end_parked:
        wait_done;                                           /* pool__latch_park */
        atomic { parked-- }                                  /* pool__park_end */
        atomic { inactive++; idle = 1 }
    :: else -> skip
    fi;
search:
    if
    :: atomic { injector > 0 -> injector-- }                 /* pool__find_work */
        if
        :: idle ->                                           /* pool__leave_idle */
            atomic { inactive--; was_empty = (injector == 0); c_sleeping = sleeping; c_inactive = inactive }
            if
            :: !was_empty -> wake_for_job(1, c_sleeping, c_inactive, awake_idle, to_wake, i, woke, limit)
            :: else -> skip
            fi;
            idle = 0
        :: else -> skip
        fi;
        ran++;
        goto search
    :: atomic { injector == 0 -> if :: !idle -> inactive++; idle = 1 :: else -> skip fi }
    fi;
    atomic { if :: jec % 2 == 1 -> jec++ :: else -> skip fi; myjec = jec }
    if
    :: injector > 0 -> goto search
    :: else -> skip
    fi;
    atomic {
        if
        :: latch[me] == UNSET -> latch[me] = SLEEPY
        :: else -> latch[me] = UNSET; goto search
        fi
    }
    atomic {
        if
        :: jec != myjec -> latch[me] = UNSET; goto search
        :: else -> sleeping++
        fi
    }
    atomic {
        if
        :: injector > 0 -> sleeping--; latch[me] = UNSET; goto search
        :: else -> skip
        fi
    }
    atomic {
        if
        :: latch[me] == SLEEPY -> latch[me] = SLEEPING
        :: else -> sleeping--; latch[me] = UNSET; goto search
        fi
    }
end_asleep:
    latch[me] == SET;
    latch[me] = UNSET;
    goto search
}

proctype poster() {
    byte i, woke, c_sleeping, c_inactive, awake_idle, to_wake, limit;
    bool was_empty;
    atomic { was_empty = (injector == 0); injector++ }       /* pool__injector_push */
    atomic {                                                 /* pool__jec_post, counters read */
        if :: jec % 2 == 0 -> jec++ :: else -> skip fi;
        c_sleeping = sleeping;
        c_inactive = inactive
    }
    wake_for_job(was_empty, c_sleeping, c_inactive, awake_idle, to_wake, i, woke, limit)
}

/* What worker 0 waits for finishes after every posted job has run. */
proctype waited_for() {
    ran == POSTERS;
    wait_done = 1
}

init {
    byte k = 0;
    atomic {
        jec = 1;
        run worker(0);
        started = 1;
        run waited_for();
        do
        :: k < POSTERS -> run poster(); k++
        :: else -> break
        od
    }
}

active proctype monitor() {
    timeout -> assert(injector == 0 && ran == POSTERS && wait_done && parked == 0)
}
