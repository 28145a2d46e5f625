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
 * promote_wanted word, which the others set after a fruitless search and
 * once more as they fall asleep (after they count as asleep); with it set,
 * and its deque empty, it promotes a half onto its deque (`dq`, which the
 * others search too) and announces it as pool__new_moved_jobs does; after
 * it, the flag is set again while the pool has a sleeper.
 * Otherwise it takes the newest half back as a plain call. It never takes
 * a promoted half back: the worst case, a first half that runs on forever,
 * so a promoted half must be run by another worker. The sleeper's ask is
 * what brings a lazy half to a sleeper soon; without it every job still
 * runs (the promoter takes back what it never promoted), so this model
 * cannot tell it is missing: tests/test_lazy.c checks it.
 *
 * SLOT (-DSLOT) adds the holder of an external slot (pool.h's external
 * slots section): a thread that is not one of the workers, not counted in
 * the counters, never sleeps there and is never woken by pool__wake_any.
 * It pushes SLOTJOBS jobs onto the slot's deque (`sdq`, which the workers'
 * searches scan as they scan the others, pool__steal_work), announcing
 * each as a local push does (pool__new_local_jobs), then parks for good
 * (the worst case: it waits for a half a worker stole, which runs on
 * forever) and never pops its jobs back; before it parks it posts what is
 * left on its deque as pool__park_begin does, with the seq_cst pairing of
 * pool__new_moved_jobs. Its jobs must be run by the workers. Its pushes
 * are eager ones, each with the cheap announce: a lazy half it promotes
 * is announced with pool__new_moved_jobs, the stronger case. A sleeper's
 * last check before blocking reads the injector only (pool__sleep), so
 * the slot's jobs reach it through the JEC or a wake-up.
 * The local push has no store-load pair, so unlike the rest of the model
 * its store is not sequentially consistent: the push's release store of
 * bottom goes to `pending`, the holder's store buffer, and reaches the
 * others (`sdq`) one push at a time whenever the process store_buffer
 * runs, and at the latest at the holder's next seq_cst read-modify-write
 * of the counters (pool__jec_post_from's CAS, pool__new_moved_jobs'
 * fetch_add): anyone who reads the counters after that write reads from
 * it and synchronises with it, and every worker reads them (its announce,
 * its JEC check) before it sleeps. The seq_cst load of the counters in
 * pool__jec_post may come before the store is seen: the lost wake-up that
 * the post at the park is there for. A searcher's relaxed read of
 * slots_taken, which may miss the slot until such a write, is folded into
 * this: the slot is taken before anything is pushed, so missing the slot
 * is missing its pushes.
 *
 * BROKEN (-DBROKEN) plants a lost wake-up; BROKEN_PROMOTE a promotion that
 * pushes without announcing, BROKEN_ANNOUNCE one whose announce posts the
 * JEC but wakes nobody; BROKEN_SLOT_PARK a slot's holder that parks
 * without posting what is left on its deque (only its pushes' local
 * announces), BROKEN_SLOT_BARRIER one that posts it at the park with a
 * seq_cst load of the counters in place of pool__new_moved_jobs'
 * fetch_add (the post of a local push, no store-load pair),
 * BROKEN_SLOT_SCAN workers whose searches skip the slot's deque;
 * tests/model/check.sh makes sure spin finds each, so that a passing
 * check means something.
 *
 * Property: when no process can move any more (spin's timeout), no job is
 * left queued: every posted job, every lazy half and every job of the
 * slot's holder has run (a promoted half or a slot's job by a worker
 * other than its owner), and no worker sleeps forever while there is
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
#ifndef SLOTJOBS
#define SLOTJOBS 2 /* the slot holder's pushes */
#endif
#ifdef SLOT
#define SLOTRAN SLOTJOBS
#else
#define SLOTRAN 0
#endif

/* What a worker's search sees queued (pool__find_work; pool__work_visible
   for pool__leave_idle, which scans the slots in use too). */
#if defined(SLOT) && !defined(BROKEN_SLOT_SCAN)
#define QUEUED (injector > 0 || dq > 0 || sdq > 0)
#else
#define QUEUED (injector > 0 || dq > 0)
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
#ifdef SLOT
byte sdq;                 /* jobs on the slot's deque that the workers see */
byte pending;             /* the holder's pushes not seen yet (its store buffer) */
#endif

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
    :: atomic { QUEUED ->                                   /* pool__find_work found a job */
            if
            :: injector > 0 -> injector--
            :: dq > 0 -> dq--                               /* ... or stole a half */
#if defined(SLOT) && !defined(BROKEN_SLOT_SCAN)
            :: sdq > 0 -> sdq--                             /* ... or a slot's job */
#endif
            fi }
        if
        :: idle ->                                          /* pool__leave_idle */
            atomic { inactive--; }
            if
            :: QUEUED -> wake_one(i, woke)                  /* work still visible */
            :: else -> skip
            fi;
            idle = 0
        :: else -> skip
        fi;
        ran++;
        goto search
    :: atomic { !QUEUED -> if :: !idle -> inactive++; idle = 1 :: else -> skip fi }
#ifdef PROMOTER
        wanted = 1;                                         /* pool__want_promotions */
#endif
    fi;
    /* pool__jec_announce_sleepy */
    atomic { if :: jec % 2 == 1 -> jec++ :: else -> skip fi; myjec = jec }
    /* the search after the announce */
    if
    :: QUEUED -> goto search
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
#ifdef PROMOTER
    wanted = 1;                                              /* the sleeper's ask */
#endif
end_asleep:
    latch[me] == SET;                                        /* the futex wait */
    latch[me] = UNSET;                                       /* pool__core_latch_reset */
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
        /* A join's start and end read promote_wanted, nothing else. */
        reason = wanted;
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
            fi;
            /* the ask stands while the pool has a sleeper */
            atomic { if :: sleeping > 0 -> wanted = 1 :: else -> skip fi }
        :: else -> atomic { lazy--; ran++ }                  /* taken back: a plain call */
        fi;
        reason = 0
    :: else -> break
    od
}

#ifdef SLOT
/* pool__wake_for_jobs(p, c, n, was_empty) for the counters c_sleeping,
   c_inactive that the caller read, then pool__wake_any(p, to_wake). All
   the workers are started, so pool__spawn is never called for. */
inline wake_for_jobs(n, was_empty, i, woke, c_sleeping, c_inactive, awake_idle, to_wake) {
        if
        :: c_inactive > c_sleeping -> awake_idle = c_inactive - c_sleeping
        :: else -> awake_idle = 0
        fi;
        if
        :: !was_empty -> to_wake = n
        :: was_empty && awake_idle < n -> to_wake = n - awake_idle
        :: else -> to_wake = 0
        fi;
        if
        :: to_wake > c_sleeping -> to_wake = c_sleeping
        :: else -> skip
        fi;
        i = 0;
        woke = 0;
        do
        :: i < WORKERS && woke < to_wake ->                 /* pool__wake_sleeper */
            atomic {
                if
                :: latch[i] == SLEEPY -> latch[i] = SET; woke++
                :: latch[i] == SLEEPING -> latch[i] = SET; sleeping--; woke++
                :: else -> skip
                fi
            }
            i++
        :: else -> break
        od;
        i = 0; woke = 0; c_sleeping = 0; c_inactive = 0; awake_idle = 0; to_wake = 0; was_empty = 0
}

/* The holder's pushes reach the workers in their own time, in order. */
proctype store_buffer() {
end_drained:
    do
    :: atomic { pending > 0 -> pending--; sdq++ }
    od
}

/* The holder of an external slot: it pushes its jobs, then parks. */
proctype holder() {
    byte k = 0, left, i, woke, c_sleeping, c_inactive, awake_idle, to_wake;
    bool was_empty, c_even;
    do
    :: k < SLOTJOBS ->
        pending++;                   /* pool__deque_push: release store of bottom */
        /* pool__new_local_jobs: pool__jec_post, a seq_cst load of the
           counters and, only if the JEC is even, a seq_cst CAS that makes
           it odd (the CAS loop is one step: it ends when the JEC is odd,
           ours or another's post). The load may come before the push is
           seen; the CAS, a read-modify-write, publishes it. */
        atomic {
            if
            :: jec % 2 == 0 -> jec++; sdq = sdq + pending; pending = 0
            :: else -> skip
            fi;
            c_sleeping = sleeping;
            c_inactive = inactive
        }
        if
        :: c_sleeping > 0 ->
            /* pool__deque_len of its own deque: it sees its own pushes */
            was_empty = (sdq + pending <= 1);
            wake_for_jobs(1, was_empty, i, woke, c_sleeping, c_inactive, awake_idle, to_wake)
        :: else ->                   /* nobody asleep, every thread started: return */
            c_sleeping = 0; c_inactive = 0
        fi;
        k++
    :: else -> break
    od;
    /* pool__park_begin: a slot does not count in parked */
    left = sdq + pending;            /* pool__deque_len of its own deque */
#ifndef BROKEN_SLOT_PARK
    if
    :: left > 0 ->
        /* pool__new_moved_jobs: fetch_add(counters, 0), seq_cst: the
           store-load barrier; the pushes are seen by whoever reads the
           counters from here on */
        atomic {
#ifndef BROKEN_SLOT_BARRIER
            sdq = sdq + pending;
            pending = 0;
#endif
            c_even = (jec % 2 == 0);
            c_sleeping = sleeping;
            c_inactive = inactive
        }
        /* pool__jec_post_from: the seq_cst CAS if the JEC was even */
        if
        :: c_even ->
            atomic {
                if :: jec % 2 == 0 -> jec++; sdq = sdq + pending; pending = 0 :: else -> skip fi;
                c_sleeping = sleeping;
                c_inactive = inactive
            }
        :: else -> skip
        fi;
        c_even = 0;
        was_empty = (sdq + pending <= left);
        wake_for_jobs(left, was_empty, i, woke, c_sleeping, c_inactive, awake_idle, to_wake)
    :: else -> skip                  /* a slot wakes nobody for work elsewhere */
    fi;
#else
    /* The self-check of check.sh: the holder parks with its jobs announced
       only by the local pushes. spin must find the lost wake-up. */
#endif
    left = 0;
end_parked:
    false                            /* pool__latch_park, never set here */
}
#endif

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
        run promoter();
#endif
#ifdef SLOT
        run holder();
        run store_buffer();
#endif
    }
}

/* When nothing can move: every job ran, none is left queued. */
active proctype monitor() {
#ifdef SLOT
    timeout -> assert(injector == 0 && dq == 0 && sdq == 0 && pending == 0 &&
                      ran == POSTERS * JOBS + HALVES + SLOTRAN)
#else
    timeout -> assert(injector == 0 && dq == 0 && ran == POSTERS * JOBS + HALVES)
#endif
}
