/* tests/model/graph.pml - several threads waiting for one run of a graph
 * (pool.h's "Waiting for a run", in the graphs section), for spin.
 *
 * Main runs the graph RUNS times and waits for each run as soon as it has
 * started it; two other threads wait for whatever run they find under
 * way, TRIES times each. The first waiter of a run claims it and alone
 * waits for the run's nodes (the scope's wait, checked by scope.pml, here
 * one step that waits for the count to be zero), then ends the run; the
 * others block on the run word until it leaves their run. A worker runs
 * each run's nodes, but only once no thread is still waiting for an
 * earlier run: the nodes of a run that wait for the waiters of the last
 * one, the case where a waiter that waited for the next run too would
 * hang. The nodes may run, and the first waiter see them start, before
 * main publishes the run; a waiter that finds it being started blocks
 * until it is published or (with REFUSE) refused: main may refuse any
 * run, as pool_graph_run does a run with a cycle or on a pool being
 * destroyed.
 *
 * What is modelled, with names of pool.h: the run's word pool__run (a
 * generation times 4 plus the state: IDLE, STARTING, RUNNING, CLAIMED),
 * pool__blocked, and the word wait of pool__wait (blocks only while the
 * word holds the value it was given; woken by pool__wake_all). Every
 * atomic step is indivisible and sequentially consistent, as the
 * protocol's seq_cst operations are.
 *
 * Planted bugs, each of which tests/model/check.sh makes sure spin finds:
 * BROKEN_ORDER, a blocked waiter that reads the run word before it counts
 * itself; BROKEN_NOWAKE, a move of the word that wakes nobody;
 * BROKEN_SCOPE, waiters that find the run claimed wait for the scope
 * instead, as before this protocol (one of them then returns before the
 * run has ended, or waits for the next run too); BROKEN_STARTING, a
 * waiter that takes a run being started for none (it returns while the
 * nodes it saw start still run).
 *
 * Properties: a waiter returns only once its run's nodes have all run
 * (or the run was refused), and once a run whose node it saw start has
 * finished; a run is ended once, after its nodes, and the next starts
 * only after that (main's wait of a run ended it); when no process can
 * move any more (spin's timeout), every process has finished.
 */

#ifndef RUNS
#define RUNS 3
#endif
#define WAITERS 2 /* EARLIER_WAITER names each thread */
#ifndef TRIES
#define TRIES 2
#endif
#define THREADS (WAITERS + 1)

#define IDLE 0
#define STARTING 1
#define RUNNING 2
#define CLAIMED 3
#define STATE(word) ((word) % 4)
#define BASE(word) ((word) - (word) % 4)

byte word_of_run;          /* pool__run */
byte blocked;              /* pool__blocked */
byte count;                /* the scope's count: the run's nodes not yet run */
byte started;              /* the id (BASE + 1) of the last run whose node started */
byte finished;             /* ... and of the last run whose nodes have all run */
bool refused[8];           /* by generation (BASE / 4): the runs refused */
byte waiting_for[THREADS]; /* the id of the run each thread waits for; 0: none */
bool asleep[THREADS];      /* blocked in the word wait */
bool main_done;

/* Whether a thread still waits for a run before the one of id `id`. */
#define EARLIER_WAITER(id) \
    ((waiting_for[0] != 0 && waiting_for[0] < id) || \
     (waiting_for[1] != 0 && waiting_for[1] < id) || \
     (waiting_for[2] != 0 && waiting_for[2] < id))

/* pool__graph_move: the word moved on, then the waiters woken. */
inline graph_move(to) {
    word_of_run = to;
#ifndef BROKEN_NOWAKE
    if
    :: blocked > 0 ->
        atomic { byte k = 0; do :: k < THREADS -> asleep[k] = false; k++ :: else -> break od }
    :: else
    fi
#endif
}

/* pool__graph_block: until the word leaves `word`; `word` is then the
   word it found. */
inline graph_block(me, word) {
#ifndef BROKEN_ORDER
    blocked++;
    do
    :: atomic { word_of_run == word -> asleep[me] = true }; /* pool__wait compares */
       !asleep[me]
    :: atomic { word_of_run != word -> word = word_of_run; break }
    od;
#else
    do
    :: word_of_run == word ->
       blocked++;
       atomic { asleep[me] = true }; /* blocks without looking again */
       !asleep[me];
       blocked--
    :: atomic { word_of_run != word -> word = word_of_run; blocked++; break }
    od;
#endif
    blocked--
}

inline graph_wait(me) {
    if /* the first waiter: a run it saw start (through a node) must be over */
    :: me == 1 -> seen = started
    :: else
    fi;
    word = word_of_run;
    claimed = BASE(word) + CLAIMED;
    if
    :: STATE(word) != IDLE ->
        waiting_for[me] = BASE(word) + 1;
#ifndef BROKEN_STARTING
        if
        :: STATE(word) == STARTING -> graph_block(me, word)
        :: else
        fi;
#endif
        if
        :: BASE(word) != BASE(claimed) || STATE(word) == IDLE /* refused, or ended */
#ifdef BROKEN_STARTING
        :: BASE(word) == BASE(claimed) && STATE(word) == STARTING /* taken for no run */
#endif
        :: BASE(word) == BASE(claimed) && STATE(word) >= RUNNING ->
            atomic {
                if
                :: word_of_run == BASE(word) + RUNNING -> word_of_run = claimed; is_claimant = true
                :: else -> word = word_of_run; is_claimant = false
                fi
            }
            if
            :: is_claimant ->
                count == 0; /* the scope's wait */
                atomic {
                    assert(word_of_run == claimed);        /* only the claimant moves it on */
                    assert(finished == BASE(claimed) + 1); /* after the run's nodes */
                };
                graph_move(BASE(claimed) + 4)
            :: !is_claimant && word == claimed ->
#ifdef BROKEN_SCOPE
                count == 0
#else
                graph_block(me, word)
#endif
            :: !is_claimant && word != claimed /* ended meanwhile */
            fi
        fi;
        /* returned only once its run's nodes ran, unless it was refused */
        assert(finished >= BASE(claimed) + 1 || refused[BASE(claimed) / 4]);
        waiting_for[me] = 0
    :: else /* no run to wait for */
    fi;
    assert(finished >= seen);
    word = 0; claimed = 0; seen = 0; is_claimant = false /* dead: fewer states */
}

active proctype main_thread() {
    byte r = 0, word, claimed, seen;
    bool is_claimant;
    do
    :: r < RUNS ->
        atomic {
            assert(STATE(word_of_run) == IDLE); /* its last wait ended the last run */
            word_of_run = word_of_run + STARTING
        }
        if
#ifdef REFUSE
        :: refused[BASE(word_of_run) / 4] = true; graph_move(BASE(word_of_run) + 4)
#endif
        :: count = 1;                                 /* the roots, counted and posted */
           graph_move(BASE(word_of_run) + RUNNING); /* published */
           graph_wait(0)
        fi;
        r++
    :: else -> break
    od;
    main_done = true
}

active [WAITERS] proctype waiter() {
    byte t = 0, word, claimed, seen;
    bool is_claimant;
    do
    :: t < TRIES -> graph_wait(_pid); t++
    :: else -> break
    od
}

/* Runs each run's node (its nodes, as one), once nobody waits for an
   earlier run; it may start, and be seen to, before the run is published. */
active proctype worker() {
    byte id;
    do
    :: atomic {
           count == 1 && started != BASE(word_of_run) + 1 &&
           !EARLIER_WAITER(BASE(word_of_run) + 1) ->
           id = BASE(word_of_run) + 1;
           started = id
       };
       atomic { finished = id; count = 0; id = 0 }
    :: main_done && count == 0 -> break
    od
}
