/* tests/model/heart.pml - the heartbeat's stop and resume (pool.h, lazy
 * joins section: pool__any_busy, pool__heart_should_beat,
 * pool__heartbeat_resume; the monitor thread's loop), for spin.
 *
 * Each worker is busy, idle (counted in `inactive`) or parked in a wait
 * (counted in `parked`). The monitor, holding its lock, reads the two
 * counts one after the other (pool__any_busy reads them apart too); with a
 * worker busy it beats, which means a timed wait that lets go of the lock,
 * and looks again. With none busy it sets heart_idle, reads the counts
 * again, and blocks on its condition variable, which lets go of the lock;
 * it may also wake without a signal. A worker that becomes busy changes
 * its count (a read-modify-write), then reads heart_idle and, if set,
 * clears it and signals under the lock (pool__heartbeat_resume). The
 * counts and heart_idle are a store-load pair (seq_cst in pool.h; spin
 * interleaves sequentially consistently).
 *
 * Workers make STEPS moves from busy to idle or parked, each followed by a
 * move back, and end busy (a task that runs on). Property, when nothing
 * can move: if the monitor is blocked in its wait, no worker is busy.
 *
 * BROKEN_ORDER plants a worker that reads heart_idle before it changes its
 * count; BROKEN_NO_RECHECK a monitor that blocks without reading the counts
 * again after setting heart_idle. tests/model/check.sh makes sure spin
 * finds both.
 */

#ifndef WORKERS
#define WORKERS 2
#endif
#ifndef STEPS
#define STEPS 2
#endif

#define BUSY 0
#define IDLE 1
#define PARKED 2

byte inactive, parked;  /* the counts pool__any_busy reads */
byte state[WORKERS];
bool heart_idle;        /* the monitor found nobody busy and waits */
bool lock;              /* the monitor's mutex */
bool waiting;           /* the monitor is in its condition wait */
bool signaled;          /* a signal for that wait */
bool blocked;           /* ... and it is blocked there */
byte spurious = 2;      /* wake-ups without a signal the wait may have */

inline lock_acquire() { atomic { !lock -> lock = 1 } }
inline lock_release() { lock = 0 }

/* pool__heartbeat_resume */
inline resume() {
    if
    :: heart_idle ->
        lock_acquire();
        if
        :: heart_idle -> heart_idle = 0;
            if :: waiting -> signaled = 1 :: else -> skip fi
        :: else -> skip
        fi;
        lock_release()
    :: else -> skip
    fi
}

/* Back to busy from idle (pool__leave_idle) or parked (pool__park_end). */
inline become_busy(me) {
#ifdef BROKEN_ORDER
    bool seen = heart_idle;
    atomic { if :: state[me] == IDLE -> inactive-- :: else -> parked-- fi; state[me] = BUSY }
    if :: seen -> resume() :: else -> skip fi
#else
    atomic { if :: state[me] == IDLE -> inactive-- :: else -> parked-- fi; state[me] = BUSY }
    resume()
#endif
}

proctype worker(byte me) {
    byte k = 0;
    do
    :: k < STEPS && state[me] == BUSY -> atomic { inactive++; state[me] = IDLE }; k++
    :: k < STEPS && state[me] == BUSY -> atomic { parked++; state[me] = PARKED }; k++
    :: state[me] != BUSY -> become_busy(me)
    :: k == STEPS && state[me] == BUSY -> break
    od
}

proctype monitor() {
    byte a, b;
    lock_acquire();
end_loop:
    do
    :: a = inactive; b = parked;                 /* pool__any_busy */
        if
        :: WORKERS > a + b ->                    /* beat: a timed wait */
            lock_release();
            lock_acquire()
        :: else ->
            heart_idle = 1;                      /* pool__heart_should_beat */
#ifndef BROKEN_NO_RECHECK
            a = inactive; b = parked;
            if
            :: WORKERS > a + b -> heart_idle = 0
            :: else ->
#endif
                atomic { waiting = 1; blocked = 1; lock_release() } /* pool__cond_wait */
                if
                :: atomic { signaled -> signaled = 0; waiting = 0; blocked = 0 }
                :: atomic { spurious > 0 -> spurious--; waiting = 0; blocked = 0 }
                fi;
                lock_acquire()
#ifndef BROKEN_NO_RECHECK
            fi
#endif
        fi
    od
}

init {
    atomic {
        byte w = 0;
        do
        :: w < WORKERS -> run worker(w); w++
        :: else -> break
        od;
        run monitor()
    }
}

/* When nothing can move: a monitor blocked in its wait has no busy worker. */
active proctype check() {
    timeout -> assert(!blocked || inactive + parked == WORKERS)
}
