//! bench/peers/rayon -- the eight workloads of bench/peers/workloads.h on Rayon.
//!
//!     rayon-bench WORKLOAD THREADS [SIZE]
//!
//! A line-by-line re-implementation of workloads.h (its comment says what each workload is; the
//! same names are used here), with the same output. One rayon::ThreadPool of THREADS threads;
//! the main thread is not one of them. Fork-join work enters with ThreadPool::install (the main
//! thread blocks until it is done); joins are rayon::join, the nqueens tasks rayon::scope with
//! one spawn per legal column, the loop par_iter().map().sum(). The submit and wake workloads
//! use ThreadPool::in_place_scope: its closure runs on the main thread, whose spawns are injected
//! into the pool from outside, and the scope's end waits for them (the main thread blocks: it
//! is not a worker and does not help).
//!
//! The sort kernels index without bounds checks, as the C ones do, so that the comparison is of
//! the runtimes, not of bounds checks.

use rayon::prelude::*;
use std::process::exit;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

const MAX_RUNS: usize = 10;
const BUDGET_NS: u64 = 500_000_000;
const WAKE_GAP_NS: u64 = 2_000_000;
const IDLE_BURST_NS: u64 = 300_000_000;
const IDLE_BURST_FIB: u32 = 24;
const INSERTION_SORT_BELOW: usize = 32;
const SEED: u32 = 2463534242;
const UTREE_ROOT: u64 = 53;
const UTREE_MAX_CHILDREN: u64 = 3;
const UTREE_WORK_ROUNDS: u32 = 22;
const UTREE_CHECKSUM_34: u64 = 0xf54e6cb5a24a3c78;
const QUICKSORT_CHECKSUM_10M: u64 = 0x6232d0320638d099;
const SUM_100M: u64 = 214739865049436510;

const NAMES: [&str; 8] = ["fib", "nqueens", "utree", "quicksort", "sum", "submit", "wake", "idle"];
const DEFAULT_SIZE: [u64; 8] = [30, 11, 34, 10_000_000, 100_000_000, 1_000_000, 2000, 1000];

// ---- clocks ----

fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec; the clock ids used here always exist on Linux.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

fn cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn sleep_ns(ns: u64) {
    std::thread::sleep(Duration::from_nanos(ns)); // nanosleep, resumed after signals
}

fn fail(msg: String) -> ! {
    eprintln!("rayon: FAILED: {}", msg);
    exit(1);
}

// ---- fib ----

fn fib_expected(n: u32) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        let t = a.wrapping_add(b);
        a = b;
        b = t;
    }
    a
}

fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (a, b) = rayon::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

// ---- nqueens ----

#[derive(Clone, Copy, Default)]
struct Queens {
    row: u32,
    cols: u32,
    diag_l: u32,
    diag_r: u32,
    solutions: u64,
    calls: u64,
}

impl Queens {
    fn leaf(&mut self, n: u32) -> bool {
        self.calls = 1;
        self.solutions = (self.row == n) as u64;
        self.row == n
    }

    fn free(&self, n: u32) -> u32 {
        !(self.cols | self.diag_l | self.diag_r) & ((1u32 << n) - 1)
    }

    fn child(&self, free: &mut u32, n: u32) -> Queens {
        let mask = (1u32 << n) - 1;
        let b = *free & free.wrapping_neg();
        *free ^= b;
        Queens {
            row: self.row + 1,
            cols: self.cols | b,
            diag_l: ((self.diag_l | b) << 1) & mask,
            diag_r: (self.diag_r | b) >> 1,
            solutions: 0,
            calls: 0,
        }
    }

    fn add(&mut self, c: &Queens) {
        self.solutions += c.solutions;
        self.calls += c.calls;
    }
}

fn queens_serial(q: &mut Queens, n: u32) {
    if q.leaf(n) {
        return;
    }
    let mut free = q.free(n);
    while free != 0 {
        let mut c = q.child(&mut free, n);
        queens_serial(&mut c, n);
        q.add(&c);
    }
}

fn queens(q: &mut Queens, n: u32) {
    if q.leaf(n) {
        return;
    }
    let mut children = [Queens::default(); 16];
    let mut k = 0;
    let mut free = q.free(n);
    while free != 0 {
        children[k] = q.child(&mut free, n);
        k += 1;
    }
    rayon::scope(|s| {
        for c in children[..k].iter_mut() {
            s.spawn(move |_| queens(c, n));
        }
    });
    for c in &children[..k] {
        q.add(c);
    }
}

const QUEENS_KNOWN: [u64; 16] = [
    1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184,
];

// ---- utree ----

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

#[derive(Clone, Copy, Default)]
struct Subtree {
    nodes: u64,
    work_sum: u64,
}

impl Subtree {
    fn add(&mut self, u: &Subtree) {
        self.nodes = self.nodes.wrapping_add(u.nodes);
        self.work_sum = self.work_sum.wrapping_add(u.work_sum);
    }
}

/// Visits node (id, depth): returns (h, child count, the node alone); children are h + 1 + i.
#[inline]
fn utree_visit(id: u64, depth: u32, max_depth: u32) -> (u64, u32, Subtree) {
    let h = splitmix64(id);
    let mut work = h;
    for _ in 1..UTREE_WORK_ROUNDS {
        work = splitmix64(work);
    }
    let children = if depth < max_depth { (h % (UTREE_MAX_CHILDREN + 1)) as u32 } else { 0 };
    (h, children, Subtree { nodes: 1, work_sum: work })
}

fn utree_serial(id: u64, depth: u32, max_depth: u32) -> Subtree {
    let (h, children, mut t) = utree_visit(id, depth, max_depth);
    for i in 0..children {
        t.add(&utree_serial(h + 1 + i as u64, depth + 1, max_depth));
    }
    t
}

/// Children first_id .. first_id + count - 1 at `depth`: one child is visited, a longer range
/// split in two halves run with rayon::join.
fn utree_range(first_id: u64, count: u32, depth: u32, max_depth: u32) -> Subtree {
    if count == 1 {
        return utree_walk(first_id, depth, max_depth);
    }
    let left = count / 2;
    let (mut a, b) = rayon::join(
        || utree_range(first_id, left, depth, max_depth),
        || utree_range(first_id + left as u64, count - left, depth, max_depth),
    );
    a.add(&b);
    a
}

fn utree_walk(id: u64, depth: u32, max_depth: u32) -> Subtree {
    let (h, children, mut t) = utree_visit(id, depth, max_depth);
    if children > 0 {
        t.add(&utree_range(h + 1, children, depth + 1, max_depth));
    }
    t
}

// ---- quicksort and sum input ----

fn fill(a: &mut [u32]) -> (u64, u32) {
    let (mut sum, mut xor) = (0u64, 0u32);
    let mut x = SEED;
    for v in a.iter_mut() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *v = x;
        sum = sum.wrapping_add(x as u64);
        xor ^= x;
    }
    (sum, xor)
}

fn insertion_sort(a: &mut [u32]) {
    for i in 1..a.len() {
        // SAFETY: 0 <= j - 1 < j <= i < a.len().
        unsafe {
            let v = *a.get_unchecked(i);
            let mut j = i;
            while j > 0 && *a.get_unchecked(j - 1) > v {
                *a.get_unchecked_mut(j) = *a.get_unchecked(j - 1);
                j -= 1;
            }
            *a.get_unchecked_mut(j) = v;
        }
    }
}

/// Median-of-three Hoare partition, a.len() >= 3: returns k, 0 < k < n, a[..k] <= a[k..].
fn partition(a: &mut [u32]) -> usize {
    let n = a.len();
    let mid = (n - 1) / 2;
    if a[mid] < a[0] {
        a.swap(mid, 0);
    }
    if a[n - 1] < a[0] {
        a.swap(n - 1, 0);
    }
    if a[n - 1] < a[mid] {
        a.swap(n - 1, mid);
    }
    let pivot = a[mid];
    let (mut i, mut j) = (0usize, n - 1);
    // SAFETY: Hoare's invariants keep i and j inside [0, n): the first scan stops at the pivot
    // or at an element >= it that an earlier swap put in front of j, the second likewise.
    unsafe {
        loop {
            while *a.get_unchecked(i) < pivot {
                i += 1;
            }
            while *a.get_unchecked(j) > pivot {
                j -= 1;
            }
            if i >= j {
                return j + 1;
            }
            let p = a.as_mut_ptr();
            std::ptr::swap(p.add(i), p.add(j));
            i += 1;
            j -= 1;
        }
    }
}

fn sort(a: &mut [u32]) {
    if a.len() < INSERTION_SORT_BELOW {
        insertion_sort(a);
        return;
    }
    let k = partition(a);
    let (left, right) = a.split_at_mut(k);
    rayon::join(|| sort(left), || sort(right));
}

fn check_sorted(a: &[u32], input: (u64, u32)) -> u64 {
    let (mut sum, mut xor, mut checksum) = (0u64, 0u32, 0u64);
    for (i, &v) in a.iter().enumerate() {
        if i > 0 && a[i - 1] > v {
            fail(format!("quicksort: a[{}] > a[{}]", i - 1, i));
        }
        sum = sum.wrapping_add(v as u64);
        xor ^= v;
        checksum = checksum.wrapping_add((i as u64 + 1).wrapping_mul(v as u64));
    }
    if (sum, xor) != input {
        fail(format!("quicksort: the elements changed: sum {}, want {}", sum, input.0));
    }
    checksum
}

// ---- wake ----

#[derive(Default)]
struct Probe {
    submit_ns: AtomicU64,
    start_ns: AtomicU64,
    done: AtomicU32,
}

impl Probe {
    fn run(&self) {
        self.start_ns.store(now_ns(), Ordering::Relaxed);
        self.done.store(1, Ordering::Release);
    }

    fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire) != 0
    }
}

fn wake_rounds(pool: &rayon::ThreadPool, probes: &[Probe]) {
    pool.in_place_scope(|s| {
        for (i, p) in probes.iter().enumerate() {
            sleep_ns(WAKE_GAP_NS);
            if i > 0 {
                while !probes[i - 1].is_done() {
                    std::thread::yield_now(); // a spawned job has nothing to wait on alone
                }
            }
            p.submit_ns.store(now_ns(), Ordering::Relaxed);
            s.spawn(move |_| p.run());
        }
    });
}

// ---- the harness ----

struct Ctx {
    pool: rayon::ThreadPool,
    threads: usize,
    size: u64,
}

fn quantile(v: &mut [u64], q: f64) -> u64 {
    v.sort_unstable();
    let rank = (q * v.len() as f64) as usize;
    v[rank.min(v.len() - 1)]
}

fn print(ctx: &Ctx, metric: &str, value: f64, unit: &str, runs: usize, min: f64, checksum: &str) {
    println!(
        "metric={} runtime=rayon threads={} size={} value={:.4} unit={} runs={} min={:.4} checksum={}",
        metric, ctx.threads, ctx.size, value, unit, runs, min, checksum
    );
}

struct Job {
    which: usize,
    a: Vec<u32>,
    input: (u64, u32),
}

/// One timed run; returns (nanoseconds, checksum).
fn run_once(ctx: &Ctx, j: &mut Job) -> (u64, String) {
    let pool = &ctx.pool;
    let size = ctx.size;
    if j.which == 3 {
        j.input = fill(&mut j.a);
    } else if j.which == 5 {
        j.a.iter_mut().for_each(|r| *r = 0);
    }
    let t0 = now_ns();
    match j.which {
        0 => {
            let n = size as u32;
            let got = pool.install(|| fib(n));
            let t1 = now_ns();
            if got != fib_expected(n) {
                fail(format!("fib = {}, want {}", got, fib_expected(n)));
            }
            (t1 - t0, got.to_string())
        }
        1 => {
            let n = size as u32;
            let mut root = Queens::default();
            pool.install(|| queens(&mut root, n));
            let t1 = now_ns();
            let mut r = Queens::default();
            queens_serial(&mut r, n);
            if r.solutions != QUEENS_KNOWN[n as usize] {
                fail(format!("nqueens: the serial count is {}", r.solutions));
            }
            if root.solutions != r.solutions || root.calls != r.calls {
                fail(format!("nqueens: {}/{}, want {}/{}", root.solutions, root.calls, r.solutions, r.calls));
            }
            (t1 - t0, format!("{}/{}", root.solutions, root.calls))
        }
        2 => {
            let d = size as u32;
            let t = pool.install(|| utree_walk(UTREE_ROOT, 0, d));
            let t1 = now_ns();
            let got = t.nodes.wrapping_add(t.work_sum);
            let want = if d == 34 {
                UTREE_CHECKSUM_34
            } else {
                let r = utree_serial(UTREE_ROOT, 0, d);
                r.nodes.wrapping_add(r.work_sum)
            };
            if got != want {
                fail(format!("utree: checksum {:016x}, want {:016x}", got, want));
            }
            (t1 - t0, format!("{:016x}", got))
        }
        3 => {
            let a = &mut j.a;
            pool.install(|| sort(a));
            let t1 = now_ns();
            let got = check_sorted(&j.a, j.input);
            if j.a.len() == 10_000_000 && got != QUICKSORT_CHECKSUM_10M {
                fail(format!("quicksort: checksum {:016x}", got));
            }
            (t1 - t0, format!("{:016x}", got))
        }
        4 => {
            let a = &j.a;
            let got = pool.install(|| a.par_iter().map(|&x| x as u64).sum::<u64>());
            let t1 = now_ns();
            if got != j.input.0 {
                fail(format!("sum = {}, want {}", got, j.input.0));
            }
            (t1 - t0, got.to_string())
        }
        5 => {
            let runs = &mut j.a;
            pool.in_place_scope(|s| {
                for r in runs.iter_mut() {
                    s.spawn(move |_| *r += 1);
                }
            });
            let t1 = now_ns();
            if let Some(i) = j.a.iter().position(|&r| r != 1) {
                fail(format!("submit: task {} ran {} times", i, j.a[i]));
            }
            (t1 - t0, j.a.len().to_string())
        }
        _ => unreachable!(),
    }
}

fn timed(ctx: &Ctx, j: &mut Job) {
    run_once(ctx, j); // warm-up: starts the threads, faults memory in
    let mut ns = Vec::new();
    let mut total = 0u64;
    let mut checksum = String::new();
    while ns.len() < MAX_RUNS && (ns.is_empty() || total < BUDGET_NS) {
        let (t, c) = run_once(ctx, j);
        ns.push(t);
        total += t;
        checksum = c;
    }
    let median = quantile(&mut ns, 0.5);
    print(ctx, NAMES[j.which], median as f64 / 1e6, "ms", ns.len(), ns[0] as f64 / 1e6, &checksum);
}

fn wake(ctx: &Ctx, rounds: usize) {
    let warm: Vec<Probe> = (0..rounds.min(20)).map(|_| Probe::default()).collect();
    wake_rounds(&ctx.pool, &warm); // warm-up rounds: they start the pool's threads
    let probes: Vec<Probe> = (0..rounds).map(|_| Probe::default()).collect();
    let (c0, m0, w0) = (cpu_ns(), thread_cpu_ns(), now_ns());
    wake_rounds(&ctx.pool, &probes);
    let (w1, m1, c1) = (now_ns(), thread_cpu_ns(), cpu_ns());
    let mut lat: Vec<u64> = Vec::with_capacity(rounds);
    for (i, p) in probes.iter().enumerate() {
        let (s, t) = (p.submit_ns.load(Ordering::Relaxed), p.start_ns.load(Ordering::Relaxed));
        if !p.is_done() || t < s {
            fail(format!("wake: round {} did not run", i));
        }
        lat.push(t - s);
    }
    let other = ((c1 - c0) as f64 - (m1 - m0) as f64) / 1e6 / ((w1 - w0) as f64 / 1e9);
    let median = quantile(&mut lat, 0.5);
    let p99 = quantile(&mut lat, 0.99);
    let c = rounds.to_string();
    let min = lat[0] as f64 / 1e3;
    print(ctx, "wake_median", median as f64 / 1e3, "us", rounds, min, &c);
    print(ctx, "wake_p99", p99 as f64 / 1e3, "us", rounds, min, &c);
    print(ctx, "wake_cpu", other, "ms/s", 1, other, &c);
}

fn idle(ctx: &Ctx, idle_ms: u64) {
    let burst_ns = if idle_ms >= 1000 { IDLE_BURST_NS } else { IDLE_BURST_NS / 10 };
    let want = fib_expected(IDLE_BURST_FIB);
    let start = now_ns();
    let mut got;
    loop {
        got = ctx.pool.install(|| fib(IDLE_BURST_FIB));
        if got != want {
            fail(format!("idle: burst fib = {}, want {}", got, want));
        }
        if now_ns() - start >= burst_ns {
            break;
        }
    }
    let (c0, w0) = (cpu_ns(), now_ns());
    sleep_ns(idle_ms * 1_000_000);
    let (c1, w1) = (cpu_ns(), now_ns());
    let v = (c1 - c0) as f64 / 1e6 / ((w1 - w0) as f64 / 1e9);
    print(ctx, "idle", v, "ms/s", 1, v, &got.to_string());
}

fn usage() -> ! {
    let list: Vec<String> =
        NAMES.iter().zip(DEFAULT_SIZE.iter()).map(|(n, s)| format!("{} ({})", n, s)).collect();
    eprintln!("usage: rayon-bench WORKLOAD THREADS [SIZE]\nworkloads (default size): {}", list.join(" "));
    exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 || args.len() > 4 {
        usage();
    }
    let which = NAMES.iter().position(|&n| n == args[1]).unwrap_or_else(|| usage());
    let threads: usize = match args[2].parse() {
        Ok(t) if (1..=4096).contains(&t) => t,
        _ => usage(),
    };
    let size: u64 = if args.len() == 4 {
        match args[3].parse() {
            Ok(s) if s > 0 => s,
            _ => usage(),
        }
    } else {
        DEFAULT_SIZE[which]
    };
    if (which == 0 && size > 45) || (which == 1 && size > 15) || (which == 2 && size > 60) || (which == 6 && size > 1_000_000) {
        eprintln!("rayon: size {} too large for {}", size, NAMES[which]);
        exit(2);
    }
    let mut job = Job { which, a: Vec::new(), input: (0, 0) };
    if which == 3 || which == 4 || which == 5 {
        job.a = vec![0u32; size as usize];
        if which == 4 {
            job.input = fill(&mut job.a);
            if size == 100_000_000 && job.input.0 != SUM_100M {
                fail(format!("sum: the input sums to {}, want {}", job.input.0, SUM_100M));
            }
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap_or_else(|e| fail(format!("ThreadPoolBuilder::build: {}", e)));
    let ctx = Ctx { pool, threads, size };
    match which {
        6 => wake(&ctx, size as usize),
        7 => idle(&ctx, size),
        _ => timed(&ctx, &mut job),
    }
}
