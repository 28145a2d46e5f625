#!/bin/sh
# bench/peers/run.sh - pool.h against GNU OpenMP, LLVM OpenMP, oneTBB and Rayon on the eight
# workloads of bench/peers/workloads.h, in one run, and pool.h once more with an idle spin budget
# (pool.h-spin, see RUNTIMES). `make bench-peers` installs what is missing
# (bench/peers/install.sh) and calls this.
#
#   THREADS=2     threads per runtime
#   REPS=5        measured repetitions (each a fresh process per workload and runtime, which
#                 itself does a warm-up run and then up to 10 timed runs, reporting their median;
#                 the table shows the median over the repetitions)
#   RUNTIMES="pool.h pool.h-spin gnu-omp llvm-omp tbb rayon"   which ones (pool.h and
#                 pool.h-spin need only a C compiler). pool.h-spin is the pool.h program run with
#                 the idle spin budget POOL_SPIN_US=5000 (longer than wake's 2 ms gap), so that
#                 the table shows what a spin buys on wake and costs on idle next to pool.h's
#                 default. It is pool.h with another setting, not a peer: the report never
#                 takes it as the best peer, its ratio stays pool.h / best peer (pool.h-spin's
#                 own ratio to that peer is a column of its own), and the chart leaves it out.
#   WORKLOADS="fib nqueens utree quicksort sum submit wake idle"   which ones
#   QUICK=1       tiny sizes and one repetition, results under build/: a smoke test (CI)
#   SIZES="fib=25 sum=10000000"   other sizes than the issue's for some workloads (the SIZE
#                 argument of workloads.h; results under build/)
#   OUT=bench/results   where latest.csv, latest-runs.csv, latest-meta.txt and the chart go
#   BUILD=build   build directory (the programs go to $BUILD/peers)
#   CC, CXX       the C compiler for pool.h (cc) and the C++ compiler for oneTBB (g++); GNU
#                 OpenMP is always gcc, LLVM OpenMP clang
#   WERROR=1      build with -Werror (Rust: -D warnings)
#
# Order: one pass of every runtime on every workload at tiny sizes first (checks that everything
# runs and warms the binaries and the page cache; not measured), then REPS repetitions, each
# running every workload on every runtime, interleaved (the runtimes' order rotates from one
# repetition to the next), so that anything else the machine does hits all of them alike.
# Every program checks its own results; the checksums of all runtimes and repetitions must be
# equal for each workload, or the run fails. The runtimes' tuning knobs are unset (their
# defaults are used) and recorded, with what the OpenMP runtimes report, in latest-meta.txt.
# The last line says how many program runs passed their checks: "N passed, N failed" (a
# checksum mismatch or a build failure counts as one more failure).
# Exit status: non-zero if anything failed to build, failed its check, or mismatched.

cd "$(dirname "$0")/../.." || exit 1

ALL_RUNTIMES="pool.h pool.h-spin gnu-omp llvm-omp tbb rayon"
# pool.h-spin's budget, in microseconds: longer than wake's 2 ms gap, so that its workers are
# still awake when the next task arrives.
SPIN_US=5000
THREADS=${THREADS:-2}
RUNTIMES=${RUNTIMES:-$ALL_RUNTIMES}
WORKLOADS=${WORKLOADS:-fib nqueens utree quicksort sum submit wake idle}
B=${BUILD:-build}/peers
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
if [ -n "${QUICK:-}" ] && [ "$QUICK" != 0 ]; then
    QUICK=1
    REPS=${REPS:-1}
else
    QUICK=
    REPS=${REPS:-5}
fi
# bench/results holds the committed results of a full run: only a full run of every runtime
# writes there unless OUT says otherwise.
if [ -z "$QUICK" ] && [ -z "${SIZES:-}" ] && [ "$RUNTIMES" = "$ALL_RUNTIMES" ] &&
   [ "$WORKLOADS" = "fib nqueens utree quicksort sum submit wake idle" ]; then
    OUT=${OUT:-bench/results}
else
    OUT=${OUT:-$B/results}
fi
FLAGS="-O3 -Wall -Wextra${WERROR:+ -Werror}"
TIMEOUT=${TIMEOUT:-300}   # seconds per program run
mkdir -p "$B" "$OUT" || exit 1

# The runtimes' own knobs: unset, so that every runtime runs with its defaults.
KNOBS="OMP_NUM_THREADS OMP_WAIT_POLICY OMP_PROC_BIND OMP_PLACES OMP_DYNAMIC OMP_SCHEDULE
OMP_STACKSIZE OMP_MAX_ACTIVE_LEVELS OMP_THREAD_LIMIT GOMP_SPINCOUNT GOMP_CPU_AFFINITY
KMP_BLOCKTIME KMP_LIBRARY KMP_AFFINITY KMP_HW_SUBSET RAYON_NUM_THREADS POOL_NUM_THREADS POOL_SPIN_US"
knobs_were_set=
for k in $KNOBS; do
    if eval "[ -n \"\${$k+x}\" ]"; then
        knobs_were_set="$knobs_were_set $k=$(eval "echo \"\$$k\"")"
        unset "$k"
    fi
done

quick_size() {
    case $1 in
    fib) echo 20 ;; nqueens) echo 8 ;; utree) echo 20 ;; quicksort) echo 100000 ;;
    sum) echo 1000000 ;; submit) echo 10000 ;; wake) echo 50 ;; idle) echo 100 ;;
    esac
}

binary() {
    case $1 in
    pool.h-spin) echo "$B/pool.h-bench" ;;
    rayon) echo "$B/cargo/release/rayon-bench" ;;
    *) echo "$B/$1-bench" ;;
    esac
}

# shellcheck source=bench/peers/rust_toolchain.sh
. bench/peers/rust_toolchain.sh

# shellcheck disable=SC2086  # $FLAGS is a list of words on purpose
build() {
    case $1 in
    pool.h | pool.h-spin) set -- "${CC:-cc}" $FLAGS -pthread bench/peers/pool_h.c -o "$B/pool.h-bench" ;;
    gnu-omp) set -- gcc $FLAGS -fopenmp bench/peers/omp.c -o "$B/gnu-omp-bench" ;;
    llvm-omp) set -- clang $FLAGS -fopenmp bench/peers/omp.c -o "$B/llvm-omp-bench" ;;
    tbb) set -- "${CXX:-g++}" $FLAGS bench/peers/tbb.cpp -o "$B/tbb-bench" -ltbb ;;
    rayon)
        echo "(cd bench/peers/rayon && $CARGO build --release --offline)"
        (cd bench/peers/rayon && CARGO_TARGET_DIR="$B/cargo" RUSTC=$RUSTC \
            RUSTFLAGS="${WERROR:+-D warnings}" $CARGO build --release --offline --quiet)
        return
        ;;
    *) echo "run.sh: unknown runtime '$1' (known: pool.h pool.h-spin gnu-omp llvm-omp tbb rayon)" >&2
       return 1 ;;
    esac
    echo "$*"
    "$@"
}

echo "== building"
for rt in $RUNTIMES; do
    # pool.h-spin runs pool.h's program: built once when both are in the list.
    if [ "$rt" = pool.h-spin ]; then
        case " $RUNTIMES " in *" pool.h "*) continue ;; esac
    fi
    if ! build "$rt"; then
        echo "run.sh: building $rt failed (bench/peers/install.sh installs what the peers need)" >&2
        echo "0 passed, 1 failed"
        exit 1
    fi
done

# ---- what this run is ----
meta=$OUT/latest-meta.txt
pkgver() {
    v=$(dpkg-query -W -f='${Version}' "$1" 2>/dev/null)
    echo "${v:-not installed}"
}
# Before the block below: its redirection empties the committed latest-meta.txt first, which
# would always count as an uncommitted change.
commit="$(git rev-parse --short HEAD 2>/dev/null || echo none)$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' (with uncommitted changes)')"
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "cpu: $(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n 1)"
    echo "cpus: $(nproc)"
    echo "threads: $THREADS"
    echo "reps: $REPS"
    echo "quick: ${QUICK:-0}"
    echo "sizes: ${SIZES:-default}"
    # shellcheck disable=SC1091
    echo "os: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), kernel $(uname -r)"
    echo "commit: $commit"
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "runtimes: $RUNTIMES"
    echo "flags: C and C++ $FLAGS; Rust: cargo build --release (opt-level 3)"
    for rt in $RUNTIMES; do
        case $rt in
        pool.h-spin) echo "pool.h-spin: the pool.h program with POOL_SPIN_US=$SPIN_US" ;;
        pool.h) echo "pool.h: pool.h v$(sed -n 's/^#define POOL_VERSION_MAJOR //p' pool.h).$(sed -n 's/^#define POOL_VERSION_MINOR //p' pool.h).$(sed -n 's/^#define POOL_VERSION_PATCH //p' pool.h), $(${CC:-cc} --version | head -n 1)" ;;
        gnu-omp) echo "gnu-omp: libgomp of $(gcc --version | head -n 1) (package gcc $(pkgver gcc))" ;;
        llvm-omp) echo "llvm-omp: libomp-dev $(pkgver libomp-dev), $(clang --version | head -n 1)" ;;
        tbb) echo "tbb: libtbb-dev $(pkgver libtbb-dev), $(${CXX:-g++} --version | head -n 1)" ;;
        rayon) echo "rayon: $(sed -n '/^name = "rayon"/{n;s/version = "\(.*\)"/rayon \1/p}' bench/peers/rayon/Cargo.lock), $(sed -n '/^name = "rayon-core"/{n;s/version = "\(.*\)"/rayon-core \1/p}' bench/peers/rayon/Cargo.lock) (librust-rayon-dev $(pkgver librust-rayon-dev)), $($RUSTC --version), $($CARGO --version)" ;;
        esac
    done
    echo "knobs unset for the run:${knobs_were_set:- none was set}"
    # The one knob the run sets itself, for pool.h-spin's runs only (results_md.sh quotes it
    # in its "runtime settings" line, which otherwise says every runtime ran with its defaults).
    case " $RUNTIMES " in
    *" pool.h-spin "*) echo "knobs set for the run: POOL_SPIN_US=$SPIN_US for pool.h-spin only" ;;
    esac
    for rt in gnu-omp llvm-omp; do
        case " $RUNTIMES " in *" $rt "*) ;; *) continue ;; esac
        echo "$rt defaults: $(OMP_DISPLAY_ENV=verbose "$(binary "$rt")" fib 1 2 2>&1 |
            grep -E 'OMP_WAIT_POLICY|GOMP_SPINCOUNT|KMP_BLOCKTIME|KMP_LIBRARY' |
            sed "s/^ *//; s/\[host\] //; s/'//g; s/ = /=/" | tr '\n' ' ' | sed 's/ $//')"
    done
} >"$meta"
cat "$meta"

# ---- the runs ----
raw=$B/runs.txt
: >"$raw"
failures=0
passes=0
err=$B/stderr.txt

# run_one RUNTIME WORKLOAD [SIZE]: runs one program; appends its lines to $raw with $TAG in
# front (nothing when TAG is empty).
run_one() {
    one_rt=$1
    one_w=$2
    shift 2
    if [ "$one_rt" = pool.h-spin ]; then
        out=$(POOL_SPIN_US=$SPIN_US timeout "$TIMEOUT" "$(binary "$one_rt")" "$one_w" "$THREADS" "$@" 2>"$err")
        rc=$?
        out=$(echo "$out" | sed 's/runtime=pool\.h /runtime=pool.h-spin /')
    else
        out=$(timeout "$TIMEOUT" "$(binary "$one_rt")" "$one_w" "$THREADS" "$@" 2>"$err")
        rc=$?
    fi
    if [ "$rc" -ne 0 ]; then
        echo "!! $one_rt $one_w $THREADS $*: exit status $rc$( [ "$rc" -eq 124 ] && echo " (timed out after $TIMEOUT s)")"
        sed 's/^/!!   /' "$err"
        failures=$((failures + 1))
        return 1
    fi
    [ -n "$TAG" ] && echo "$out" | sed "s/^/$TAG /" >>"$raw"
    passes=$((passes + 1))
    return 0
}

# Prints what repetition REP gave for WORKLOAD on each runtime (wake: median/p99).
summarize() {
    awk -v rep="$1" -v w="$2" '
        $1 == "rep=" rep {
            for (i = 2; i <= NF; i++) { eq = index($i, "="); f[substr($i, 1, eq - 1)] = substr($i, eq + 1) }
            v = sprintf("%.4g", f["value"])
            if (f["metric"] == w) s = s " " f["runtime"] " " v f["unit"]
            else if (w == "wake" && f["metric"] == "wake_median") s = s " " f["runtime"] " " v
            else if (w == "wake" && f["metric"] == "wake_p99") s = s "/" v f["unit"]
            else if (w == "wake" && f["metric"] == "floor_median") s = s " (os-floor " v
            else if (w == "wake" && f["metric"] == "floor_p99") s = s "/" v f["unit"] ")"
            else if (w == "idle" && f["metric"] == "floor_idle") s = s " (os-floor " v f["unit"] ")"
        }
        END { print s }' "$raw"
}

if [ -z "$QUICK" ]; then
    echo
    echo "== one pass at tiny sizes first (not measured)"
    TAG=
    for w in $WORKLOADS; do
        for rt in $RUNTIMES; do
            run_one "$rt" "$w" "$(quick_size "$w")"
        done
    done
fi

floor_rt=
for rt in $RUNTIMES; do
    case $rt in pool.h | pool.h-spin | gnu-omp | llvm-omp | tbb) floor_rt=${floor_rt:-$rt} ;; esac
done

start=$(date +%s)
echo
echo "== $REPS repetitions, $THREADS threads"
order=$RUNTIMES
rep=1
while [ "$rep" -le "$REPS" ]; do
    for w in $WORKLOADS; do
        size=
        [ -n "$QUICK" ] && size=$(quick_size "$w")
        for kv in ${SIZES:-}; do
            [ "${kv%%=*}" = "$w" ] && size=${kv#*=}
        done
        TAG="rep=$rep"
        for rt in $order; do
            # shellcheck disable=SC2086  # an empty size is no argument
            run_one "$rt" "$w" $size
        done
        # For reference, the same rounds on a plain thread blocked on a condition variable: the
        # floor for waking a thread that sleeps (any C program of the run measures it) ...
        if [ "$w" = wake ] && [ -n "$floor_rt" ]; then
            # shellcheck disable=SC2086
            run_one "$floor_rt" floor $size
        fi
        # ... and idle's sleep in a process whose runtime never ran: what measuring it costs.
        if [ "$w" = idle ] && [ -n "$floor_rt" ]; then
            # shellcheck disable=SC2086
            run_one "$floor_rt" idlefloor $size
        fi
        echo "rep $rep/$REPS $w:$(summarize "$rep" "$w")"
    done
    # rotate: the first runtime of this repetition goes last in the next
    # shellcheck disable=SC2086  # a list of words
    set -- $order
    first=$1
    shift
    order="$* $first"
    rep=$((rep + 1))
done
echo "(the repetitions took $(( $(date +%s) - start )) s)"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$meta"

# ---- results ----
awk -v runtimes="$RUNTIMES" -v out="$OUT" -f bench/peers/fmt.awk -f bench/peers/report.awk "$raw"
rc=$?
[ "$rc" -ne 0 ] && failures=$((failures + 1))

# The chart needs pool.h and at least one peer (pool.h-spin is not one: plot.sh leaves it out).
npeers=0
for rt in $RUNTIMES; do
    case $rt in pool.h*) ;; *) npeers=$((npeers + 1)) ;; esac
done
if [ -s "$OUT/latest.csv" ] && case " $RUNTIMES " in *" pool.h "*) true ;; *) false ;; esac &&
   [ "$npeers" -gt 0 ]; then
    if command -v gnuplot >/dev/null 2>&1; then
        if sh bench/peers/plot.sh "$OUT"; then
            echo "chart: $OUT/ratios.png, $OUT/ratios.svg"
        else
            echo "run.sh: gnuplot failed" >&2
            failures=$((failures + 1))
        fi
    else
        echo "run.sh: no gnuplot, no chart (bench/peers/install.sh installs gnuplot-nox)" >&2
    fi
fi

[ "$failures" -ne 0 ] && echo "run.sh: see the lines starting with !! above"
echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
