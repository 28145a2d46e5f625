/* tests/model/scope.pml - several threads waiting on one scope at once and
 * again and again, and spawning into it meanwhile (pool.h's pool__scope_wait
 * and pool_scope_spawn), for spin.
 *
 * The scope's latch word holds the round and three flags: OWNED while one
 * waiter owns the wait, DONE once the scope's tasks have finished, WAITING
 * once somebody blocks on the word. A waiter that finds OWNED clear takes
 * it with a CAS and owns the wait: it takes the scope's reference away from
 * the pending count, waits for DONE if tasks were pending, gives the
 * reference back and re-arms the latch with an exchange (next round, flags
 * clear), waking the word if WAITING was set. A waiter that finds OWNED set
 * joins: it blocks on the word until that round is done or over.
 *
 * What is modelled, with names of pool.h: the latch word (here a byte:
 * round * 8 + OWNED 4 + DONE 2 + WAITING 1, the round counted modulo 8),
 * pool__latch_park_in (the CAS that sets WAITING, then the futex wait, which
 * blocks only if the word still holds the value it expects), pool__latch_set
 * (fetch-or DONE, wake if WAITING), pool__wake_all, the pending count with
 * the reference as a flag of its own. TASKS tasks are spawned before the
 * waiters start; they finish while the first waits are under way. With
 * SPAWN (-DSPAWN), every waiter spawns a task of its own before each of its
 * waits, which may come while another thread's wait is finishing: the
 * spawn that finds the count at zero gives the reference back itself, and
 * a joiner whose round is done or over and who finds tasks unfinished (a
 * count, the reference aside) waits again once the round is over; and
 * the spawner may run its task at once itself (the spawn throttle: counted,
 * run, its count given back, all before the spawn returns). Any wait may
 * first find no task unfinished and the reference in place, and return
 * without a write (pool__scope_wait_done's first load). Both ends of a wait
 * are covered: the latch set by the last task, and the re-arm of an empty
 * scope. Every atomic step indivisible
 * and sequentially consistent (pool.h argues its orderings beside the
 * code).
 *
 * BROKEN (-DBROKEN) plants a re-arm that does not wake the word, as a plain
 * store would; BROKEN_SPLIT a joiner that reads the round apart from the
 * OWNED flag (as the old code, which kept them in two words, did), so that
 * it can block in a round that nobody owns; with SPAWN, BROKEN_LATE a spawn
 * that leaves the reference to the owner (a task of it that finishes first
 * sets the latch of a round that is done, or of the next one),
 * BROKEN_TWO_STEP a spawn that gives the reference back in a step apart
 * from its count (by then the next owner may have taken it away again),
 * and BROKEN_JOIN a joiner that returns when its round is over (its own
 * task may not have run); BROKEN_FAST a write-free return that looks at
 * the reference only, not at the count; with SPAWN and OBSERVE,
 * BROKEN_UNCOUNTED a task run at once that is not counted in the scope
 * (another waiter that saw it start returned before its end).
 * tests/model/check.sh makes sure spin finds each one.
 *
 * Properties: a wait returns only once every task spawned before the
 * scope's waiters started has finished, and the waiter's own task too
 * (assert); with OBSERVE, every other waiter's task that a waiter saw
 * start before its wait has ended when the wait returns (assert: tasks
 * count the starts and ends of their runs); a waiter that owns a wait
 * finds neither DONE nor WAITING set
 * (assert, as pool.h's POOL_ASSERT); and when no process can move any
 * more, every waiter has done all its waits (spin reports any other end
 * state as invalid).
 */

#ifndef WAITERS
#define WAITERS 3
#endif
#ifndef WAITS
#define WAITS 2 /* waits per waiter */
#endif
#ifndef TASKS
#define TASKS 1
#endif

#define WAITING 1
#define DONE 2
#define OWNED 4
#define FLAGS 7
#define ROUND 8
#define NEXT_ROUND(s) ((((s) / ROUND + 1) % 8) * ROUND)

byte word;             /* the scope's latch word */
byte pending = TASKS;  /* unfinished tasks ... */
bool unwaited = true;  /* ... plus the reference until a waiter takes it */
bool blocked[WAITERS]; /* in the futex wait */
byte finished;         /* tasks spawned before the waiters that have finished */
bool mine_done[WAITERS]; /* SPAWN: the waiter's own task of this wait has run */
#ifdef OBSERVE
byte started_gen[WAITERS]; /* the generation of waiter k's task that began its run */
byte done_gen[WAITERS];    /* ... and the last one that ended it */
#endif

/* pool__wake_all */
inline wake_all() {
    byte k;
    for (k : 0 .. WAITERS - 1) { blocked[k] = false }
}

/* pool__latch_park_until(round, ends) for waiter `me` until the round is
   over or has a flag of `ends`; `cur` and `r` are the caller's scratch. */
inline park_until(me, r, cur, ends) {
    do
    :: atomic {
           cur = word;
           if
           :: (cur & ~FLAGS) != r || (cur & ends) -> break
           :: else -> skip
           fi
       }
       /* The CAS that sets WAITING (if it is not set yet) ... */
       atomic {
           if
           :: word == cur -> word = cur | WAITING; cur = word
           :: else -> cur = 255 /* it changed under us: look again */
           fi
       }
       /* ... then the futex wait, which blocks only while the word holds
          the value it expects. */
       atomic {
           if
           :: word == cur -> blocked[me] = true
           :: else -> skip
           fi
       }
       (!blocked[me])
    od
}

/* pool__latch_park_in: until the round is done or over. */
inline park_in(me, r, cur) {
    park_until(me, r, cur, DONE)
}

/* A task's run and pool__scope_task_done; `me` is the waiter that spawned
   it, WAITERS for the first ones; `last` is scratch. */
inline task_body(me, last) {
#ifdef OBSERVE
    if
    :: me < WAITERS -> started_gen[me]++ /* its start, which others may see */
    :: else -> skip
    fi;
#endif
    if
    :: me < WAITERS -> mine_done[me] = true /* its run, before its count goes */
#ifdef OBSERVE
       ; done_gen[me] = started_gen[me]
#endif
    :: else -> skip
    fi;
    /* pool__scope_task_done: the decrement, then (a step of its own) the
       latch if it was the last count. */
    atomic {
        pending--;
        if
        :: me == WAITERS -> finished++
        :: else -> skip
        fi;
        last = pending == 0 && !unwaited
    }
    if
    :: last ->
       atomic { /* pool__latch_set */
           if
           :: word & WAITING -> word = word | DONE; wake_all()
           :: else -> word = word | DONE
           fi
       }
    :: else -> skip
    fi
}

proctype Task(byte me) {
    bool last;
    task_body(me, last)
}

proctype Waiter(byte me) {
    byte n, s, r, cur, old;
    bool zero, last;
#ifdef OBSERVE
    byte kk, want[WAITERS];
#endif
    for (n : 1 .. WAITS) {
#ifdef SPAWN
        /* pool_scope_spawn: count the task, at zero giving the reference
           back in the same step (its CAS); then post it. */
        mine_done[me] = false;
#if defined(BROKEN_LATE)
        pending++;
#elif defined(BROKEN_TWO_STEP) /* the reference back in a step of its own */
        atomic { zero = pending == 0 && !unwaited; pending++ }
        if
        :: zero -> unwaited = true
        :: else -> skip
        fi;
#elif defined(BROKEN_UNCOUNTED) /* 1f564ed: a task run at once is not counted */
        if
        :: atomic {
               if
               :: pending == 0 && !unwaited -> unwaited = true
               :: else -> skip
               fi;
               pending++
           };
           run Task(me)
        ::
#ifdef OBSERVE
           started_gen[me]++; atomic { mine_done[me] = true; done_gen[me] = started_gen[me] }
#else
           mine_done[me] = true
#endif
        fi;
        goto spawned;
#else
        atomic {
            if
            :: pending == 0 && !unwaited -> unwaited = true
            :: else -> skip
            fi;
            pending++
        }
#endif
        if
        :: run Task(me)
        :: task_body(me, last) /* the spawn throttle: run at once */
        fi;
spawned:
#endif
#ifdef OBSERVE
        /* what this waiter saw start before its wait: it must have ended
           when the wait returns */
        atomic {
            for (kk : 0 .. WAITERS - 1) {
                if
                :: kk != me && started_gen[kk] != done_gen[kk] -> want[kk] = started_gen[kk]
                :: else -> want[kk] = 0
                fi
            }
        }
#endif
        /* pool__scope_wait_done's write-free return: once, at the start
           (a joiner that waits again reloads the word, as the C does) */
        if
#ifdef BROKEN_FAST
        :: unwaited -> goto checked
#else
        :: atomic { pending == 0 && unwaited } -> goto checked
#endif
        :: else -> skip
        fi;
again:
        s = word;
        do
        :: atomic {
               if
               :: s & OWNED -> break
               :: else ->
                  assert((s & (DONE | WAITING)) == 0);
                  if
                  :: word == s -> word = s | OWNED; break
                  :: else -> s = word
                  fi
               fi
           }
        od;
        r = s & ~FLAGS;
        if
        :: s & OWNED -> /* pool__scope_wait_other */
#ifdef BROKEN_SPLIT
           r = word & ~FLAGS; /* planted: the round from a second read */
#endif
           park_in(me, r, cur);
#if defined(SPAWN) && !defined(BROKEN_JOIN)
           if
           :: pending != 0 -> /* tasks unfinished: wait again, once the round is over */
              park_until(me, r, cur, 0);
              goto again
           :: else -> skip
           fi
#endif
        :: else -> /* pool__scope_wait_owned */
           atomic { unwaited = false; old = pending }
           if
           :: old > 0 -> park_in(me, r, cur) /* the last task sets DONE */
           :: else -> skip
           fi;
           unwaited = true;
           atomic {
               old = word;
               word = NEXT_ROUND(old);
#ifndef BROKEN
               if
               :: old & WAITING -> wake_all()
               :: else -> skip
               fi
#endif
           }
        fi;
checked:
        assert(finished == TASKS);
#ifdef SPAWN
        assert(mine_done[me]);
#endif
#ifdef OBSERVE
        for (kk : 0 .. WAITERS - 1) { assert(done_gen[kk] >= want[kk]) }
#endif
    }
}

init {
    byte i;
    atomic {
        for (i : 1 .. TASKS) { run Task(WAITERS) }
        for (i : 0 .. WAITERS - 1) { run Waiter(i) }
    }
}
