#!/bin/sh
# bench/peers/scaling.sh - how pool.h, oneTBB and Rayon scale from 1 to 16 threads on three of
# the workloads of bench/peers/workloads.h (fib, utree, sum), on a machine that may have no
# compiler and no network: the programs are built here into a bundle that carries every shared
# library they load and the dynamic loader, and are run there through that loader
# (`lib/ld-linux-x86-64.so.2 --inhibit-cache --library-path lib bin/PROGRAM ...`), so that the
# other machine's glibc, libstdc++ and oneTBB (if any) do not matter.
#
#   sh bench/peers/scaling.sh build          here: builds the bundle in build/scaling
#   sh bench/peers/scaling.sh run            there, from the repository root (or, without the
#                                            repository, sh build/scaling/scaling.sh run: the
#                                            bundle holds a copy of this script)
#   sh bench/peers/scaling.sh summary [FILE] the tables, from FILE (default
#                                            build/scaling/out/scaling-runs.txt); needs awk
#
# build: pool.h-bench (cc -O3 -pthread bench/peers/pool_h.c), tbb-bench (g++ -O3 -ltbb) and
# rayon-bench (Debian's cargo, build --release --offline), the flags of bench/peers/run.sh, and
# serial-bench (bench/peers/serial.c at -O2: the natural serial code of the three workloads),
# stripped, into build/scaling/bin; every shared object they load (ldd, and what a short run of
# each loads with dlopen, such as oneTBB's libtbbmalloc) and the loader into build/scaling/lib.
# Then it runs every program through the bundled loader, checks that nothing came from outside
# the bundle, and prints the bundle's size. The cargo build directory is build/scaling-cargo
# (not part of the bundle).
#
# run needs only sh, coreutils (date, timeout, nproc, uname, cat, tee, mkdir, rm, chmod,
# dirname) and the bundle (x86-64 Linux, glibc 2.36 bundled: kernel 3.2 or later); awk only for
# the summary at the end (without awk it says so: run `summary` elsewhere on the runs file).
# It prints what machine this is, then REPS repetitions, each complete before the next starts:
# the serial baseline of every workload, then for each thread count, each workload, every
# runtime (their order rotating from one repetition to the next). Each program run is a fresh
# process that does one untimed warm-up run and then up to 10 timed runs (at most 0.5 s of
# them, but at least one) and prints their median: see workloads.h. Once BUDGET_S seconds have
# passed since the start, no new program run starts (and a run in progress is stopped when the
# budget ends), the summary is printed all the same. A run that fails (exit status, timeout, no
# output) is recorded as a FAILED line and the others go on.
#
#   THREADS="1 2 4 8 16"    the thread counts
#   WORKLOADS="fib utree sum"   any of workloads.h's fork-join and loop workloads (the serial
#                           baseline exists for fib, utree and sum only)
#   RUNTIMES="pool.h tbb rayon"
#   SERIAL=1                run the serial baseline (SERIAL=0: not)
#   REPS=3                  repetitions
#   SIZES="fib=32 utree=30" other sizes than workloads.h's defaults (fib 30, utree 34, sum 1e8)
#   BUDGET_S=420            seconds after which no new program run starts (one still going
#                           then is stopped, and recorded as CUT, not as a failure)
#   TIMEOUT=60              seconds one program run may take (less when the budget ends
#                           sooner); one that times out is not run again in later repetitions
#                           (same runtime, workload and thread count), nor is a runtime run
#                           at all whose preflight (fib 20 on 2 threads, first thing) failed
#   BUNDLE=build/scaling    the bundle (relative to the repository root)
#   OUT=$BUNDLE/out         where scaling-runs.txt (every output line, "rep=N " in front, and
#                           the FAILED lines), scaling-stderr.txt and scaling-meta.txt go
#   CC, CXX, WERROR=1       build: the compilers (cc, g++), and warnings as errors
#   SERIAL_FLAGS=-O2        build: serial.c's optimization (gcc 12 does not vectorize the sum's
#                           loop at -O2, as it does at -O3, which the runtimes' programs use)
#
# The summary: per workload and size, a markdown table with one row per thread count, the
# median over the repetitions (the mean of the middle two for an even count) of each runtime's
# value in ms, and each runtime's speedup over pool.h's own 1-thread figure and over the serial
# baseline; then whether the checksums of every runtime, thread count and repetition agree,
# and the failed runs. Exit status of run and summary: non-zero if a run failed or a checksum
# mismatched.

# Where am I: the copy in the bundle (next to bin/ and lib/) or bench/peers in the repository.
here=$(cd "$(dirname "$0")" && pwd) || exit 1
if [ -d "$here/bin" ] && [ -d "$here/lib" ] && [ ! -f "$here/workloads.h" ]; then
    BUNDLE=${BUNDLE:-$here}
else
    cd "$here/../.." || exit 1
    BUNDLE=${BUNDLE:-build/scaling}
fi
case $BUNDLE in /*) ;; *) BUNDLE=$(pwd)/$BUNDLE ;; esac
BIN=$BUNDLE/bin
LIB=$BUNDLE/lib
LOADER=$LIB/ld-linux-x86-64.so.2
OUT=${OUT:-$BUNDLE/out}
RUNTIMES=${RUNTIMES:-pool.h tbb rayon}
WORKLOADS=${WORKLOADS:-fib utree sum}
THREADS=${THREADS:-1 2 4 8 16}
REPS=${REPS:-3}
SERIAL=${SERIAL:-1}
BUDGET_S=${BUDGET_S:-420}
TIMEOUT=${TIMEOUT:-60}
MAX_MIB=60   # the bundle must stay well under this

# The runtimes' own knobs: unset, so that every runtime runs with its defaults (as run.sh does).
for k in OMP_NUM_THREADS OMP_WAIT_POLICY OMP_PROC_BIND OMP_PLACES RAYON_NUM_THREADS \
         POOL_NUM_THREADS POOL_SPIN_US LD_LIBRARY_PATH LD_PRELOAD; do
    unset "$k"
done

die() {
    echo "scaling.sh: $*" >&2
    exit 1
}

# ---- build (here) ------------------------------------------------------------------------------

# lib_paths FILE...: the shared objects (paths) that the loader's debug output FILE names as
# initialized ("calling init: PATH"), the loader included.
lib_paths() {
    sed -n 's/^.*calling init: \(\/.*\)$/\1/p' "$@"
}

# The small runs that show what each program loads (dlopen included): every workload at a tiny
# size on 2 threads.
probe_args() {
    case $1 in
    fib) echo "fib 2 20" ;; utree) echo "utree 2 12" ;; sum) echo "sum 2 100000" ;;
    esac
}

# shellcheck disable=SC2086  # $FLAGS is a list of words on purpose
build_mode() {
    [ -f bench/peers/pool_h.c ] || die "build runs in the repository: sh bench/peers/scaling.sh build"
    FLAGS="-O3 -Wall -Wextra${WERROR:+ -Werror}"
    SERIAL_FLAGS=${SERIAL_FLAGS:--O2}
    # shellcheck source=bench/peers/rust_toolchain.sh
    . bench/peers/rust_toolchain.sh
    cargo_dir=${BUNDLE%/}-cargo
    failed=
    rm -rf "$BIN" "$LIB" || exit 1
    mkdir -p "$BIN" "$LIB" "$cargo_dir" || exit 1

    echo "== building into $BUNDLE"
    for rt in $RUNTIMES serial; do
        [ "$rt" = serial ] && [ "$SERIAL" = 0 ] && continue
        case $rt in
        pool.h) set -- "${CC:-cc}" $FLAGS -pthread bench/peers/pool_h.c -o "$BIN/pool.h-bench" ;;
        tbb) set -- "${CXX:-g++}" $FLAGS bench/peers/tbb.cpp -o "$BIN/tbb-bench" -ltbb ;;
        serial) set -- "${CC:-cc}" $SERIAL_FLAGS -Wall -Wextra${WERROR:+ -Werror} bench/peers/serial.c \
                    -o "$BIN/serial-bench" ;;
        rayon)
            echo "(cd bench/peers/rayon && CARGO_TARGET_DIR=$cargo_dir $CARGO build --release --offline)"
            if (cd bench/peers/rayon && CARGO_TARGET_DIR="$cargo_dir" RUSTC=$RUSTC \
                    RUSTFLAGS="${WERROR:+-D warnings}" $CARGO build --release --offline --quiet) &&
               cp "$cargo_dir/release/rayon-bench" "$BIN/rayon-bench"; then
                continue
            fi
            failed="$failed rayon"
            continue
            ;;
        *) die "unknown runtime '$rt' (known: pool.h tbb rayon)" ;;
        esac
        echo "$*"
        "$@" || failed="$failed $rt"
    done
    strip "$BIN"/* || die "strip failed"

    # The shared objects: what ldd lists, and what the probe runs initialize (dlopen included).
    # Copied under the name they are asked for (the soname: ldd's left side, dlopen's file name).
    echo "== collecting the shared libraries"
    dbg=$BUNDLE/.ld-debug
    rm -rf "$dbg" && mkdir -p "$dbg" || exit 1
    for b in "$BIN"/*; do
        ldd "$b" | sed -n 's/^[[:space:]]*\([^[:space:]]*\) => \(\/[^[:space:]]*\).*/\2/p; s/^[[:space:]]*\(\/[^[:space:]]*ld-linux[^[:space:]]*\) .*/\1/p' \
            >>"$dbg/ldd.txt"
        for w in fib utree sum; do
            f=$dbg/$(basename "$b").$w
            args=$(probe_args "$w")
            # shellcheck disable=SC2086  # the probe's arguments are words
            LD_DEBUG=libs LD_DEBUG_OUTPUT=$f "$b" $args >/dev/null ||
                echo "scaling.sh: probe run of $(basename "$b") $w failed" >&2
        done
    done
    for p in $(cat "$dbg/ldd.txt"; lib_paths "$dbg"/*-bench.*); do
        echo "$p"
    done | sort -u >"$dbg/all.txt"
    while read -r p; do
        name=$(basename "$p")
        case $name in ld-linux*) name=ld-linux-x86-64.so.2 ;; esac
        cp -L "$p" "$LIB/$name" || die "cannot copy $p"
        chmod u+w "$LIB/$name"
    done <"$dbg/all.txt"
    chmod +x "$LOADER" 2>/dev/null || die "no loader found (ldd did not list ld-linux-x86-64.so.2)"
    (cd "$LIB" && ls -l) | sed 's/^/   /'

    # What the run needs to know about this build, in the bundle.
    {
        echo "built: $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(uname -n), $(sed -n 's/^PRETTY_NAME="\(.*\)"/\1/p' /etc/os-release 2>/dev/null)"
        echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo none)$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' (with uncommitted changes)')"
        echo "pool.h as built: git blob $(git hash-object pool.h 2>/dev/null || echo ?)$(git diff --quiet HEAD -- pool.h 2>/dev/null || echo ', differs from HEAD')"
        echo "pool.h: v$(sed -n 's/^#define POOL_VERSION_MAJOR //p' pool.h).$(sed -n 's/^#define POOL_VERSION_MINOR //p' pool.h).$(sed -n 's/^#define POOL_VERSION_PATCH //p' pool.h), $(${CC:-cc} --version | head -n 1), $FLAGS -pthread"
        echo "tbb: libtbb-dev $(dpkg-query -W -f='${Version}' libtbb-dev 2>/dev/null), $(${CXX:-g++} --version | head -n 1), $FLAGS"
        echo "rayon: $(sed -n '/^name = "rayon"/{n;s/version = "\(.*\)"/rayon \1/p}' bench/peers/rayon/Cargo.lock 2>/dev/null), $($RUSTC --version), cargo build --release"
        echo "serial: $(${CC:-cc} --version | head -n 1), $SERIAL_FLAGS"
        echo "glibc (bundled): $(ldd --version | head -n 1)"
    } >"$BUNDLE/build-info.txt"
    sed 's/^/   /' "$BUNDLE/build-info.txt"
    cp bench/peers/scaling.sh "$BUNDLE/scaling.sh" || exit 1

    # Every program through the bundled loader, as the run will call it: it must run, and load
    # nothing from outside lib/.
    echo "== checking the bundle through its loader"
    for b in "$BIN"/*; do
        for w in fib utree sum; do
            f=$dbg/check.$(basename "$b").$w
            args=$(probe_args "$w")
            # shellcheck disable=SC2086
            if ! LD_DEBUG=libs LD_DEBUG_OUTPUT=$f "$LOADER" --inhibit-cache --library-path "$LIB" \
                    "$b" $args >"$dbg/check.out" 2>&1; then
                echo "scaling.sh: $(basename "$b") $w fails through the bundled loader:" >&2
                sed 's/^/   /' "$dbg/check.out" >&2
                failed="$failed check"
            fi
            loaded=$(lib_paths "$f".*)
            outside=$(echo "$loaded" | grep -v "^$LIB/")
            if [ -z "$loaded" ]; then
                echo "scaling.sh: no loader debug output for $(basename "$b") $w" >&2
                failed="$failed check"
            elif [ -n "$outside" ]; then
                echo "scaling.sh: $(basename "$b") $w loads from outside the bundle: $outside" >&2
                failed="$failed outside"
            fi
        done
    done
    rm -rf "$dbg"

    kib=$(du -sk "$BUNDLE" | cut -f1)
    echo "bundle: $BUNDLE, $(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }') MiB ($(du -sk "$BIN" | cut -f1) KiB programs, $(du -sk "$LIB" | cut -f1) KiB libraries)"
    [ "$kib" -gt $((MAX_MIB * 1024)) ] && failed="$failed size(>${MAX_MIB}MiB)"
    if [ -n "$failed" ]; then
        echo "scaling.sh: build FAILED:$failed" >&2
        exit 1
    fi
    echo "run it there with:  sh bench/peers/scaling.sh run   (or sh build/scaling/scaling.sh run)"
}

# ---- run (there): sh, coreutils, no awk ----------------------------------------------------------

# rotate WORD...: the words with the first moved to the end.
rotate() {
    first=$1
    shift
    echo "$* $first"
}

# size_of WORKLOAD: its size from SIZES, or nothing (the program's default).
size_of() {
    for kv in ${SIZES:-}; do
        [ "${kv%%=*}" = "$1" ] && echo "${kv#*=}"
    done
}

# run_one REP RUNTIME WORKLOAD THREADS: one program run through the bundled loader; its output
# lines go to $runs with "rep=REP " in front, a failure as a FAILED line. Sets $value to what it
# printed (or FAILED, or - when nothing ran); returns 1 when the budget is over (nothing run).
# A runtime in $skip (it failed the preflight) is not run, nor a runtime, workload and thread
# count in $skip as RUNTIME/WORKLOAD/THREADS (it timed out in an earlier repetition): each such
# run is recorded as FAILED, why=skipped.
run_one() {
    r_rep=$1 r_rt=$2 r_w=$3 r_th=$4
    r_size=$(size_of "$r_w")
    left=$((BUDGET_S - ($(date +%s) - start)))
    if [ "$left" -le 0 ]; then
        value=-
        return 1
    fi
    t=$TIMEOUT
    [ "$left" -lt "$t" ] && t=$left
    b=$BIN/$r_rt-bench
    tag="runtime=$r_rt workload=$r_w threads=$r_th size=${r_size:-default}"
    why=
    [ -f "$b" ] || why=no-binary
    case " $skip " in
    *" $r_rt "*) why="skipped(preflight-failed)" ;;
    *" $r_rt/$r_w/$r_th "*) why="skipped(timed-out-before)" ;;
    esac
    if [ -n "$why" ]; then
        echo "rep=$r_rep FAILED $tag rc=- why=$why" >>"$runs"
        nfail=$((nfail + 1))
        value=FAILED
        return 0
    fi
    t0=$(date +%s)
    # shellcheck disable=SC2086  # an empty size is no argument
    out=$($TIMEOUT_CMD $t "$LOADER" --inhibit-cache --library-path "$LIB" "$b" "$r_w" "$r_th" \
          $r_size 2>"$OUT/.stderr")
    rc=$?
    took=$(($(date +%s) - t0))
    value=
    if [ "$rc" -eq 0 ]; then
        printf '%s\n' "$out" | while IFS= read -r line; do
            [ -n "$line" ] && echo "rep=$r_rep $line"
        done >>"$runs"
        case $out in
        *" value="*) value=${out#* value=}; value=${value%% *} ;;
        esac
    fi
    if [ "$rc" -ne 0 ] || [ -z "$value" ]; then
        why=exit-status
        [ "$rc" -eq 0 ] && why=no-output
        # GNU timeout exits with 124, busybox's with the child's 143 (SIGTERM): go by the clock
        if [ "$rc" -ne 0 ] && [ "$took" -ge "$t" ]; then
            if [ "$t" -lt "$TIMEOUT" ]; then
                # not the program's fault: recorded as CUT, not as a failure
                echo "rep=$r_rep CUT $tag rc=$rc why=budget-ended(${t}s)" >>"$runs"
                { echo "== rep=$r_rep $tag rc=$rc (cut by the budget)"; cat "$OUT/.stderr"; } >>"$err"
                value=CUT
                return 0
            else
                why="timeout(${t}s)"
                skip="$skip $r_rt/$r_w/$r_th"
            fi
        fi
        echo "rep=$r_rep FAILED $tag rc=$rc why=$why" >>"$runs"
        nfail=$((nfail + 1))
        value=FAILED
    else
        npass=$((npass + 1))
    fi
    if [ -s "$OUT/.stderr" ] || [ "$value" = FAILED ]; then
        { echo "== rep=$r_rep $tag rc=$rc"; cat "$OUT/.stderr"; } >>"$err"
    fi
    return 0
}

run_mode() {
    { [ -d "$BIN" ] && [ -f "$LOADER" ]; } || die "no bundle in $BUNDLE (sh bench/peers/scaling.sh build makes it)"
    [ -x "$LOADER" ] || chmod +x "$LOADER" || die "$LOADER is not executable"
    mkdir -p "$OUT" || exit 1
    runs=$OUT/scaling-runs.txt
    err=$OUT/scaling-stderr.txt
    meta=$OUT/scaling-meta.txt
    : >"$runs" && : >"$err" || exit 1
    start=$(date +%s)
    npass=0
    nfail=0
    if command -v timeout >/dev/null 2>&1; then
        TIMEOUT_CMD=timeout
    else
        TIMEOUT_CMD=no_timeout
        echo "scaling.sh: no timeout command: runs are not limited (the budget still holds between runs)" >&2
    fi

    # What machine this is: /proc/cpuinfo's first CPU, read by the shell (no grep, no awk).
    cpu=''
    siblings=''
    cores=''
    while IFS= read -r l; do
        case $l in
        "model name"*) [ -z "$cpu" ] && cpu=${l#*: } ;;
        siblings*) [ -z "$siblings" ] && siblings=${l#*: } ;;
        "cpu cores"*) [ -z "$cores" ] && cores=${l#*: } ;;
        "") [ -n "$cpu" ] && break ;;
        esac
    done </proc/cpuinfo
    mem=
    while IFS= read -r l; do
        case $l in MemTotal*) mem=${l#MemTotal:}; mem=${mem#"${mem%%[! ]*}"}; break ;; esac
    done </proc/meminfo
    read -r load _ </proc/loadavg
    {
        echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        echo "cpu: ${cpu:-unknown} (siblings ${siblings:-?}, cpu cores ${cores:-?} per package)"
        echo "nproc: $(nproc) (all: $(nproc --all 2>/dev/null || echo ?)), online: $(cat /sys/devices/system/cpu/online 2>/dev/null)"
        [ -r /sys/fs/cgroup/cpu.max ] && echo "cgroup cpu.max: $(cat /sys/fs/cgroup/cpu.max)"
        echo "memory: $mem"
        echo "kernel: $(uname -srm)"
        echo "load before: $load"
        echo "threads: $THREADS; workloads: $WORKLOADS; sizes: ${SIZES:-default}; runtimes: $RUNTIMES; serial: $SERIAL"
        echo "reps: $REPS; budget: ${BUDGET_S} s; timeout per run: ${TIMEOUT} s"
        [ -f "$BUNDLE/build-info.txt" ] && cat "$BUNDLE/build-info.txt"
    } >"$meta"
    cat "$meta"
    while IFS= read -r l; do echo "# $l"; done <"$meta" >>"$runs"
    for th in $THREADS; do
        [ "$th" -gt "$(nproc)" ] && echo "scaling.sh: note: $th threads > nproc ($(nproc))"
    done

    # A tiny run of every program first: the loader works here, and the files are in the cache.
    pre=
    skip=
    for rt in $RUNTIMES serial; do
        [ "$rt" = serial ] && [ "$SERIAL" = 0 ] && continue
        if out=$($TIMEOUT_CMD 30 "$LOADER" --inhibit-cache --library-path "$LIB" \
                 "$BIN/$rt-bench" fib 2 20 2>&1); then
            pre="$pre $rt ok"
        else
            pre="$pre $rt FAILED"
            skip="$skip $rt"
            echo "scaling.sh: $rt does not run: $out" >&2
            { echo "== preflight $rt"; echo "$out"; } >>"$err"
        fi
    done
    echo "preflight (fib 20):$pre" | tee -a "$meta"

    order=$RUNTIMES
    rep=1
    stopped=
    while [ "$rep" -le "$REPS" ] && [ -z "$stopped" ]; do
        if [ "$SERIAL" != 0 ]; then
            line="rep $rep/$REPS serial:"
            for w in $WORKLOADS; do
                case $w in fib | utree | sum) ;; *) continue ;; esac
                run_one "$rep" serial "$w" 1 || { stopped="rep=$rep serial $w"; break; }
                line="$line $w $value"
            done
            echo "$line ms  [$(($(date +%s) - start)) s]"
        fi
        for th in $THREADS; do
            [ -n "$stopped" ] && break
            for w in $WORKLOADS; do
                line="rep $rep/$REPS $th threads $w:"
                for rt in $order; do
                    run_one "$rep" "$rt" "$w" "$th" || { stopped="rep=$rep threads=$th $w $rt"; break; }
                    line="$line $rt $value"
                done
                echo "$line ms  [$(($(date +%s) - start)) s]"
                [ -n "$stopped" ] && break
            done
        done
        # shellcheck disable=SC2086  # a list of words
        order=$(rotate $order)
        rep=$((rep + 1))
    done
    if [ -n "$stopped" ]; then
        echo "# budget of $BUDGET_S s over: stopped before $stopped" | tee -a "$runs"
    fi
    read -r load _ </proc/loadavg
    echo "load after: $load" >>"$meta"
    echo "$npass runs passed, $nfail failed, in $(($(date +%s) - start)) s; every line in $runs"
    rm -f "$OUT/.stderr"
    if command -v awk >/dev/null 2>&1; then
        summary_mode "$runs" || nfail=$((nfail + 1))
    else
        echo "no awk here: fetch $runs and run: sh bench/peers/scaling.sh summary FILE"
    fi
    [ "$nfail" -eq 0 ]
}

# Runs a command without a time limit (where there is no timeout command): no_timeout SECS CMD...
no_timeout() {
    shift
    "$@"
}

# ---- summary (anywhere with awk) -----------------------------------------------------------------

summary_mode() {
    f=${1:-$OUT/scaling-runs.txt}
    [ -r "$f" ] || die "no runs file $f"
    awk -v order="pool.h $RUNTIMES" '
    function fmt(v) { return v >= 100 ? sprintf("%.1f", v) : v >= 10 ? sprintf("%.2f", v) : sprintf("%.3f", v) }
    # the median of the n values a[key, 1..n] (the mean of the middle two when n is even)
    function median(key, n,    i, j, t, v) {
        for (i = 1; i <= n; i++) v[i] = a[key, i]
        for (i = 2; i <= n; i++)
            for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    /^# budget/ { budget = $0; next }
    /^# / { print; next }
    /^rep=[0-9]+ CUT / { cut = cut "\n  " $0; next }
    /^rep=[0-9]+ FAILED / { failed[++nfailed] = $0; next }
    /^rep=[0-9]+ metric=/ {
        split("", f)
        for (i = 1; i <= NF; i++) { eq = index($i, "="); f[substr($i, 1, eq - 1)] = substr($i, eq + 1) }
        w = f["metric"] " (size " f["size"] ")"
        if (!(w in seen)) { seen[w] = 1; ws[++nws] = w }
        rt = f["runtime"]
        if (!(rt in rtseen)) { rtseen[rt] = 1; rts[++nrts] = rt }
        th = rt == "serial" ? 0 : f["threads"] + 0
        if (!((w, th) in thseen)) { thseen[w, th] = 1; ths[w, ++nths[w]] = th }
        k = w SUBSEP rt SUBSEP th
        a[k, ++n[k]] = f["value"] + 0
        unit[w] = f["unit"]
        c = f["checksum"]
        if (!((w, c) in csseen)) { csseen[w, c] = 1; css[w, ++ncs[w]] = c }
        if (!((w, c, rt) in csrt)) { csrt[w, c, rt] = 1; cswho[w, c] = cswho[w, c] " " rt }
        csn[w, c]++
    }
    END {
        # the runtimes in the order asked for, then any other; the serial baseline apart
        no = split(order, o, " ")
        for (i = 1; i <= no; i++) if (o[i] in rtseen && !(o[i] in col)) { col[o[i]] = 1; cols[++ncols] = o[i] }
        for (i = 1; i <= nrts; i++) if (!(rts[i] in col) && rts[i] != "serial") { col[rts[i]] = 1; cols[++ncols] = rts[i] }
        bad = 0
        for (wi = 1; wi <= nws; wi++) {
            w = ws[wi]
            # thread counts in increasing order
            m = 0
            for (i = 1; i <= nths[w]; i++) if (ths[w, i] > 0) t[++m] = ths[w, i]
            for (i = 2; i <= m; i++) for (j = i; j > 1 && t[j - 1] > t[j]; j--) { x = t[j]; t[j] = t[j - 1]; t[j - 1] = x }
            maxn = 0
            for (ci = 1; ci <= ncols; ci++) for (i = 1; i <= m; i++) {
                k = w SUBSEP cols[ci] SUBSEP t[i]; if (n[k] > maxn) maxn = n[k]
            }
            ks = w SUBSEP "serial" SUBSEP 0
            serial = n[ks] ? median(ks, n[ks]) : 0
            kp = w SUBSEP "pool.h" SUBSEP 1
            p1 = n[kp] ? median(kp, n[kp]) : 0
            print ""
            print "### " w ": median " unit[w] " over the repetitions (up to " maxn ")"
            print ""
            printf "serial baseline: %s\n", serial ? fmt(serial) " " unit[w] " (median of " n[ks] ")" : "none"
            printf "pool.h at 1 thread: %s\n", p1 ? fmt(p1) " " unit[w] : "none"
            print "speed-ups (the columns \"X vs pool.h@1\" and \"X vs serial\"): that time divided by X'"'"'s;"
            print "above 1x, X is faster"
            print ""
            hdr = "| threads |"; sep = "|--:|"
            for (ci = 1; ci <= ncols; ci++) { hdr = hdr " " cols[ci] " |"; sep = sep "--:|" }
            for (ci = 1; ci <= ncols; ci++) { hdr = hdr " " cols[ci] " vs pool.h@1 |"; sep = sep "--:|" }
            if (serial) for (ci = 1; ci <= ncols; ci++) { hdr = hdr " " cols[ci] " vs serial |"; sep = sep "--:|" }
            if (m) { print hdr; print sep }
            else print "(no runs with threads in this file)"
            for (i = 1; i <= m; i++) {
                row = "| " t[i] " |"; r1 = ""; r2 = ""
                for (ci = 1; ci <= ncols; ci++) {
                    k = w SUBSEP cols[ci] SUBSEP t[i]
                    if (!n[k]) { row = row " - |"; r1 = r1 " - |"; r2 = r2 " - |"; continue }
                    v = median(k, n[k])
                    row = row " " fmt(v) (n[k] < maxn ? " (n=" n[k] ")" : "") " |"
                    r1 = r1 " " (p1 && v > 0 ? sprintf("%.2fx", p1 / v) : "-") " |"
                    r2 = r2 " " (v > 0 ? sprintf("%.2fx", serial / v) : "-") " |"
                }
                print row r1 (serial ? r2 : "")
            }
            print ""
            if (ncs[w] == 1) print "checksums: all " csn[w, css[w, 1]] " equal (" css[w, 1] ")"
            else {
                bad = 1
                printf "CHECKSUM MISMATCH:"
                for (i = 1; i <= ncs[w]; i++) printf " %s from%s (%d lines);", css[w, i], cswho[w, css[w, i]], csn[w, css[w, i]]
                print ""
            }
        }
        print ""
        if (nfailed) {
            print nfailed " failed runs:"
            for (i = 1; i <= nfailed && i <= 30; i++) print "  " failed[i]
            if (nfailed > 30) print "  ... and " nfailed - 30 " more" 
            bad = 1
        } else print "no failed runs"
        if (budget != "") print substr(budget, 3) (cut != "" ? "; the run in progress was stopped:" cut : "")
        exit bad
    }' "$f"
}

case ${1:-} in
build) build_mode ;;
run) run_mode ;;
summary) summary_mode "${2:-}" ;;
*) echo "usage: sh bench/peers/scaling.sh build | run | summary [FILE]" >&2
   exit 2 ;;
esac
