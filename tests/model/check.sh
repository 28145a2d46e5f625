#!/bin/sh
# tests/model/check.sh [exhaustive|bitstate] - model-checks with spin the
# sleep protocol (tests/model/sleep.pml, 3 workers and 2 posters; with a
# worker promoting lazy join halves, 2 workers, every state; with an
# external slot's holder that pushes jobs and parks, leaving them to the
# workers, 2 workers every state; with a poster too, bitstate; both that
# and 3 workers every state in exhaustive mode), the
# heartbeat's stop and resume (tests/model/heart.pml, every state), and a
# worker parked in a wait with the spare that stands in for it
# (tests/model/park.pml), threads waiting for one run of a graph while
# the first back runs it again (tests/model/graph.pml, every state in both
# modes, longer in exhaustive mode), and threads waiting on one scope at once and
# again and again, also spawning into it (tests/model/scope.pml, every
# state in both modes: up to 9 million states, seconds; exhaustive mode
# adds 3 threads spawning and waiting twice each, 135 million states and
# 5 minutes).
#
#   exhaustive  (make model) every state: about 80 million for the sleep
#               protocol (2 minutes and 4.2 GB of memory here), 60 million
#               for a 2-thread pool with a parked worker, 50 million for 3
#               workers and a slot's holder (2 minutes, 3 GB), 50 million
#               for 3 runs of a graph, any refused (2 minutes, 2.6 GB)
#   bitstate    (CI) the same searches with bitstate hashing: 99.9% of the
#               states in 260 MB and under a minute each, not a proof; the
#               1-thread park model exhaustively (under a million states)
#
# First it checks that spin finds each planted bug (-DBROKEN...), so that a
# passing check means something. Installs spin with apt-get if it is
# missing. Ends with the line "N passed, N failed".
MODE=${1:-exhaustive}
cd "$(dirname "$0")" || exit 2
sh ../need.sh spin spin || { echo "0 passed, 1 failed"; exit 1; }
CC=${CC:-cc}
WORK=$(mktemp -d) || exit 2
trap 'rm -rf "$WORK"' EXIT
cp sleep.pml park.pml scope.pml heart.pml graph.pml "$WORK/" && cd "$WORK" || exit 2
passed=0
failed=0

# verify NAME EXPECT SPIN_DEFINES CC_DEFINES PAN_OPTIONS [MODEL]: EXPECT is
# the number of errors pan must report; MODEL defaults to sleep.pml.
verify() {
    name=$1 expect=$2
    spin $3 -a "${6:-sleep.pml}" >/dev/null && $CC -O2 -DSAFETY $4 -o pan pan.c || {
        echo "FAIL $name (could not build the verifier)"
        failed=$((failed + 1))
        return
    }
    ./pan -m100000 $5 >pan.log 2>&1
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log)
    stored=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log)
    if [ "$errors" = "$expect" ]; then
        echo "PASS $name ($stored states, $errors errors)"
        passed=$((passed + 1))
    else
        echo "FAIL $name (expected $expect errors, pan says ${errors:-nothing})"
        grep -E 'violated|error|invalid' pan.log | head -n 5
        failed=$((failed + 1))
    fi
}

verify "planted lost wake-up is found (2 workers, 1 poster, 2 jobs)" 1 \
    "-DBROKEN -DWORKERS=2 -DPOSTERS=1 -DJOBS=2" "" ""
verify "planted promotion without an announce is found (2 workers, 1 poster, 2 lazy halves)" 1 \
    "-DPROMOTER -DBROKEN_PROMOTE -DWORKERS=2 -DPOSTERS=1 -DJOBS=1 -DLAZY=2" "" ""
verify "planted promotion that announces but wakes nobody is found" 1 \
    "-DPROMOTER -DBROKEN_ANNOUNCE -DWORKERS=2 -DPOSTERS=1 -DJOBS=1 -DLAZY=2" "" ""
verify "lazy joins promoted while the others fall asleep, every state (2 workers, 1 poster, 2 halves)" 0 \
    "-DPROMOTER -DWORKERS=2 -DPOSTERS=1 -DJOBS=1 -DLAZY=2" "" ""
verify "planted slot holder that parks without posting its deque is found (2 workers, 2 jobs)" 1 \
    "-DSLOT -DBROKEN_SLOT_PARK -DWORKERS=2 -DPOSTERS=0 -DSLOTJOBS=2" "" ""
verify "planted slot holder that posts its deque with no store-load barrier is found" 1 \
    "-DSLOT -DBROKEN_SLOT_BARRIER -DWORKERS=2 -DPOSTERS=0 -DSLOTJOBS=2" "" ""
verify "planted searches that skip the slot's deque are found" 1 \
    "-DSLOT -DBROKEN_SLOT_SCAN -DWORKERS=2 -DPOSTERS=0 -DSLOTJOBS=2" "" ""
verify "a parked slot holder's jobs run while the workers fall asleep, every state (2 workers, 2 jobs)" 0 \
    "-DSLOT -DWORKERS=2 -DPOSTERS=0 -DSLOTJOBS=2" "" ""
verify "planted worker that reads heart_idle before it counts itself busy is found" 1 \
    "-DBROKEN_ORDER" "" "" heart.pml
verify "planted monitor that blocks without looking again is found" 1 \
    "-DBROKEN_NO_RECHECK" "" "" heart.pml
verify "the heartbeat's stop and resume, every state (3 workers idling or parking twice each)" 0 \
    "-DWORKERS=3 -DSTEPS=2" "" "" heart.pml
verify "planted parker that ignores the queue is found (1 thread, 2 posters)" 1 \
    "-DBROKEN" "" "" park.pml
verify "planted posters that ignore the park are found (1 thread, 2 posters)" 1 \
    "-DBROKEN_POSTER" "" "" park.pml
verify "a parked worker's stand-in, every state (1 thread and 1 spare, 2 posters)" 0 \
    "-DNUM_THREADS=1 -DMAX_WORKERS=2 -DPOSTERS=2" "" "" park.pml
verify "planted scope re-arm without a wake is found (3 waiters)" 1 \
    "-DBROKEN" "" "" scope.pml
verify "planted joiner that reads the round apart from OWNED is found (3 waiters)" 1 \
    "-DBROKEN_SPLIT" "" "" scope.pml
verify "3 threads waiting twice each on one scope, every state" 0 \
    "-DWAITERS=3 -DWAITS=2 -DTASKS=1" "" "" scope.pml
verify "planted spawn that leaves the reference to a finishing wait is found" 1 \
    "-DSPAWN -DBROKEN_LATE -DWAITERS=2" "" "" scope.pml
verify "planted spawn that gives the reference back in a second step is found" 1 \
    "-DSPAWN -DBROKEN_TWO_STEP -DWAITERS=2" "" "" scope.pml
verify "planted joiner that returns before its own task ran is found" 1 \
    "-DSPAWN -DBROKEN_JOIN -DWAITERS=2" "" "" scope.pml
verify "planted write-free wait that ignores the count is found" 1 \
    "-DBROKEN_FAST -DWAITERS=2" "" "" scope.pml
verify "planted task run at once without a count is found (a waiter saw it start)" 1 \
    "-DSPAWN -DOBSERVE -DBROKEN_UNCOUNTED -DWAITERS=2" "" "" scope.pml
verify "2 threads spawning and waiting twice each on one scope, every state" 0 \
    "-DSPAWN -DOBSERVE -DWAITERS=2 -DWAITS=2 -DTASKS=1" "" "" scope.pml
verify "3 threads spawning and waiting on one scope, every state" 0 \
    "-DSPAWN -DWAITERS=3 -DWAITS=1 -DTASKS=1" "-DCOLLAPSE" "" scope.pml
verify "planted graph waiter that reads the run before it counts itself is found" 1 \
    "-DREFUSE -DRUNS=2 -DBROKEN_ORDER" "" "" graph.pml
verify "planted graph run moved on without a wake is found" 1 \
    "-DREFUSE -DRUNS=2 -DBROKEN_NOWAKE" "" "" graph.pml
verify "planted graph waiters that all wait for the scope (the next run too) are found" 1 \
    "-DREFUSE -DRUNS=2 -DBROKEN_SCOPE" "" "" graph.pml
verify "planted graph waiter that takes a run being started for none is found" 1 \
    "-DREFUSE -DRUNS=2 -DBROKEN_STARTING" "" "" graph.pml
verify "3 threads waiting for 2 runs of a graph, either refused, every state" 0 \
    "-DREFUSE -DRUNS=2 -DTRIES=2" "-DCOLLAPSE" "" graph.pml
verify "3 threads waiting for 3 runs of a graph, once each for the others, every state" 0 \
    "-DRUNS=3 -DTRIES=1" "-DCOLLAPSE" "" graph.pml
case $MODE in
exhaustive)
    verify "lazy joins promoted while the others fall asleep, every state (2 workers, 1 poster, 3 halves)" 0 \
        "-DPROMOTER -DWORKERS=2 -DPOSTERS=1 -DJOBS=1 -DLAZY=3" "-DCOLLAPSE" ""
    verify "sleep protocol, every state (3 workers, 2 posters)" 0 \
        "-DWORKERS=3 -DPOSTERS=2 -DJOBS=1" "-DCOLLAPSE -DMEMLIM=8000" ""
    verify "a parked slot holder's jobs, every state (2 workers, 1 poster, 2 jobs in the slot)" 0 \
        "-DSLOT -DWORKERS=2 -DPOSTERS=1 -DJOBS=1 -DSLOTJOBS=2" "-DCOLLAPSE" ""
    verify "a parked slot holder's jobs, every state (3 workers, 2 jobs in the slot)" 0 \
        "-DSLOT -DWORKERS=3 -DPOSTERS=0 -DSLOTJOBS=2" "-DCOLLAPSE -DMEMLIM=8000" ""
    verify "a parked worker's stand-in, every state (2 threads and 1 spare, 2 posters)" 0 \
        "-DNUM_THREADS=2 -DMAX_WORKERS=3 -DPOSTERS=2" "-DCOLLAPSE -DMEMLIM=8000" "" park.pml
    verify "3 threads spawning and waiting twice each on one scope, every state" 0 \
        "-DSPAWN -DWAITERS=3 -DWAITS=2 -DTASKS=1" "-DCOLLAPSE -DMEMLIM=8000" "" scope.pml
    verify "3 threads waiting for 3 runs of a graph, any refused, twice each for the others, every state" 0 \
        "-DREFUSE -DRUNS=3 -DTRIES=2" "-DCOLLAPSE -DMEMLIM=8000" "" graph.pml
    ;;
bitstate)
    verify "sleep protocol, bitstate search (3 workers, 2 posters)" 0 \
        "-DWORKERS=3 -DPOSTERS=2 -DJOBS=1" "-DBITSTATE" "-w31"
    verify "a parked slot holder's jobs, bitstate search (2 workers, 1 poster, 2 jobs in the slot)" 0 \
        "-DSLOT -DWORKERS=2 -DPOSTERS=1 -DJOBS=1 -DSLOTJOBS=2" "-DBITSTATE" "-w31"
    verify "a parked worker's stand-in, bitstate search (2 threads and 1 spare, 2 posters)" 0 \
        "-DNUM_THREADS=2 -DMAX_WORKERS=3 -DPOSTERS=2" "-DBITSTATE" "-w31" park.pml
    ;;
*)
    echo "check.sh: mode must be exhaustive or bitstate" >&2
    failed=$((failed + 1))
    ;;
esac
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
