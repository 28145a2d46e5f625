/* tests/model/heart.pml - the heartbeat's stop and resume (pool.h, lazy
 * joins section: pool__any_busy, pool__heart_should_beat,
 * pool__heartbeat_resume, and the monitor thread's loop), for spin.
 *
 * The monitor beats while any worker is busy. Finding none, it sets
 * heart_idle, looks once more, and blocks on its condition variable; a
 * worker that becomes busy changes the counts (a read-modify-write), then
 * reads heart_idle and, if set, clears it and signals under the monitor's
 * lock. The counts and heart_idle are a store-load pair (seq_cst in pool.h;
 * spin interleaves sequentially consistently).
 *
 * Workers go idle and busy again TOGGLES times and end busy (a task that
 * runs on). The monitor may stop looping at a moment it sees a worker busy
 * (it would beat from then on). Property, when nothing can move: if a
 * worker is busy, the monitor is not blocked.
 *
 * BROKEN_ORDER plants a worker that reads heart_idle before it counts
 * itself busy; BROKEN_NO_RECHECK a monitor that blocks without looking
 * again after setting heart_idle. tests/model/check.sh makes sure spin
 * finds both.
 */

#ifndef WORKERS
#define WORKERS 2
#endif
#ifndef TOGGLES
#define TOGGLES 2
#endif

byte busy;           /* workers counted busy (started - inactive - parked) */
bool heart_idle;     /* the monitor found nobody busy and waits */
bool lock;           /* the monitor's mutex */
bool waiting;        /* the monitor is blocked in its condition wait */
bool signaled;       /* a signal for that wait */
bool monitor_beats;  /* the monitor saw a worker busy and beats from now on */

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

proctype worker() {
    byte k = 0;
    do
    :: k < TOGGLES ->
        busy--;                                /* idle: pool__worker_loop counts it inactive */
#ifdef BROKEN_ORDER
        bool was_idle = heart_idle;            /* read before the count */
        busy++;
        if
        :: was_idle -> resume()
        :: else -> skip
        fi;
#else
        busy++;                                /* pool__leave_idle's read-modify-write */
        resume();
#endif
        k++
    :: else -> break
    od
}

proctype monitor() {
    lock_acquire();
end_loop:
    do
    :: busy > 0 -> monitor_beats = 1; lock_release(); break /* it beats from now on */
    :: busy > 0 -> skip                        /* or looks again later */
    :: busy == 0 ->
        heart_idle = 1;                        /* pool__heart_should_beat */
#ifndef BROKEN_NO_RECHECK
        if
        :: busy > 0 -> heart_idle = 0; goto end_loop
        :: else -> skip
        fi;
#endif
        atomic { waiting = 1; lock_release() } /* pool__cond_wait */
end_wait:
        atomic { signaled -> signaled = 0; waiting = 0 }
        lock_acquire()
    od
}

init {
    atomic {
        busy = WORKERS; /* every worker starts busy and goes idle first */
        byte w = 0;
        do
        :: w < WORKERS -> run worker(); w++
        :: else -> break
        od;
        run monitor()
    }
}

/* When nothing can move: with a worker busy, the monitor is beating, not
   blocked. */
active proctype check() {
    timeout -> assert(busy == 0 || monitor_beats)
}
