#!/bin/sh
# tests/test_waiting_slots.sh - the waiting rule's scenarios (test_waiting)
# and the contract's (test_contract), with their callers from outside working
# in external slots (built with -DCALL_IN=pool_call) instead of waiting for a
# worker: a helping caller in a slot follows the same rule. The white-box
# parts, which assert which worker or spare ran what, run only in the
# tests themselves.
#
# Environment: CC, CFLAGS, BUILD (run.sh sets them). Run from the
# repository root; run.sh runs it as part of `make test`.
CC=${CC:-cc}
BUILD=${BUILD:-build/tests/test_waiting_slots.d}
mkdir -p "$BUILD" || exit 2
for t in waiting contract; do
    # shellcheck disable=SC2086  # CFLAGS is a list of words
    $CC ${CFLAGS:--O2} -Wall -Wextra -pthread -DCALL_IN=pool_call -DCALLERS_IN_SLOTS -o "$BUILD/$t" "tests/test_$t.c" -lm ||
        exit 1
done
for part in nesting_call nesting_blocking nesting_call16 cycle_blocking_job cycle_scope \
    busy_while_waiting cycles2 cycles16; do
    "$BUILD/waiting" "$part" || { echo "test_waiting $part failed with callers in slots"; exit 1; }
done
for part in job_queued_twice job_resubmits_itself threadless retry fairness \
    destroy_other_from_worker scope_waiters scope_waiters_loop scope_spawn_waiters \
    waits_below_run_base stats_print_full; do
    "$BUILD/contract" "$part" || { echo "test_contract $part failed with callers in slots"; exit 1; }
done
echo "the waiting and contract scenarios passed with callers in external slots"
