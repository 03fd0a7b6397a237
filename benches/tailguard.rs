//! tailguard against its peers, on the same data, in one process.
//!
//! ```sh
//! cargo bench --bench tailguard              # every group
//! cargo bench --bench tailguard -- record/   # one group (criterion filter)
//! ```
//!
//! Medians land in `target/criterion/<group>/<id>/new/estimates.json`; BENCHMARKS.md
//! holds today's figures and what each id measures.
//!
//! The data: two data sets of latencies in nanoseconds (support's `data_set`), each drawn
//! once from a seeded generator before anything is timed, and every group runs on both:
//!
//! * `workload-a`: 10^6 values, log-normal with mean 5 ms and sd 2 ms, 5 % of them times 10
//!   (docs/reference.md, workload A). Its groups keep their plain names (`record`, ...).
//! * `heavy-tail`: 2^20 values, a log-normal body around 3 ms (sigma 1) with a 3 % Pareto
//!   tail (from 30 ms, shape 1.2), 1 µs .. 100 s. Its groups are `<group>/heavy-tail`
//!   (`record/heavy-tail`, ...).
//!
//! Every peer is configured for about 1 % relative accuracy over the presets' range:
//!
//! * tailguard: the presets (1 µs .. 100 s; `IntLatency` is 0.78 %).
//! * sketches-ddsketch 0.4: `Config::new(0.01, 2048, 1e3)`: alpha 1 %, at most 2,048 bins
//!   (its default), values up to 1 µs in its zero bin like ours.
//! * hdrhistogram 7: `Histogram::<u64>::new_with_bounds(1_000, 100_000_000_000, 2)`: two
//!   significant digits, that is 128 linear sub-buckets per power of two, a relative
//!   resolution of 1/128 = 0.78 % (the same bin widths as tailguard's `IntLatency`).
//! * quantile-sketch 0.1 (the lock-free peer of `AtomicSketch`):
//!   `ConcurrentDDSketch::with_err_and_range(0.01, 1, 1e11)`, a cubic mapping at 1 %.
//!
//! Time: `record` and `quantile` (and any group on `c.cpu`) measure the thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`), which leaves out the time the bench waits for a core while
//! other work runs on a shared machine; `merge` times short batches in wall time (`c.wall`),
//! as reading the CPU clock is a system call of about a microsecond.
//!
//! Adding a group: write `fn name(c: &mut Benches, data: &Data)` (use `c.cpu` or
//! `c.wall`, and name the group `data.group("name")`) and list it in `GROUPS`.
//!
//! `benches/ratios.rs` measures the targets table from the same data sets, as
//! medians of per-round ratios with interleaved rounds (`cargo bench --bench ratios`).

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{BatchSize, BenchmarkGroup, Criterion, Throughput};
use hdrhistogram::Histogram;
use quantile_sketch::ConcurrentDDSketch;
use sketches_ddsketch::{Config, DDSketch as PeerSketch};
use tailguard::budget::{Budget, RatioBudget, TokenBucket};
use tailguard::clock::ManualClock;
use tailguard::hedge::{HedgeConfig, Hedger};
use tailguard::sketch::{presets, AtomicSketch};
use tailguard::window::{Window, WindowConfig};
use tailguard_support::data_set::{filled, DataSet, DATA_SETS};

/// How many values one timed iteration of a `record` bench records.
const BATCH: usize = 1_000;
/// The quantile the `quantile` group asks for.
const P99: f64 = 0.99;

/// The groups, run in this order.
const GROUPS: &[fn(&mut Benches, &Data)] = &[record, batch, quantile, merge, hedge];

/// The two criterion runners, one per clock.
pub struct Benches {
    cpu: Criterion<CpuTime>,
    wall: Criterion<WallTime>,
}

/// The calling thread's CPU time, as criterion's measurement.
#[cfg(unix)]
pub struct CpuTime;

#[cfg(unix)]
impl CpuTime {
    fn now() -> Duration {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        Duration::new(t.tv_sec.unsigned_abs(), t.tv_nsec.unsigned_abs() as u32)
    }
}

#[cfg(unix)]
impl Measurement for CpuTime {
    type Intermediate = Duration;
    type Value = Duration;

    fn start(&self) -> Duration {
        Self::now()
    }
    fn end(&self, start: Duration) -> Duration {
        Self::now().saturating_sub(start)
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, v: &Duration) -> f64 {
        v.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        static WALL: WallTime = WallTime; // the same units: nanoseconds
        WALL.formatter()
    }
}

/// Elsewhere, wall time.
#[cfg(not(unix))]
pub type CpuTime = WallTime;

/// One data set's pre-generated latencies, in the two forms the sketches take.
pub struct Data {
    set: DataSet,
    ns: Vec<u64>,
    ns_f64: Vec<f64>,
}

impl Data {
    fn generate(set: DataSet) -> Data {
        let ns = set.ns();
        let ns_f64 = ns.iter().map(|&v| v as f64).collect();
        Data { set, ns, ns_f64 }
    }

    /// The criterion group `name` on this data set: workload A keeps the plain names (the
    /// ids every earlier figure in BENCHMARKS.md has), the others add `/<data set>`.
    fn group(&self, name: &str) -> String {
        match self.set {
            DataSet::WorkloadA => name.to_string(),
            other => format!("{name}/{}", other.name()),
        }
    }

    /// The first or second half of the data, as integers.
    fn half(&self, second: bool) -> &[u64] {
        let (a, b) = self.ns.split_at(self.ns.len() / 2);
        if second {
            b
        } else {
            a
        }
    }
}

fn ddsketch_peer() -> PeerSketch {
    PeerSketch::new(Config::new(0.01, 2048, 1e3))
}

fn concurrent_peer() -> ConcurrentDDSketch {
    // `insert` panics outside the range: every value of both data sets is in 1 .. 1e11.
    ConcurrentDDSketch::with_err_and_range(0.01, 1.0, 1e11)
}

fn hdr_peer() -> Histogram<u64> {
    Histogram::new_with_bounds(1_000, 100_000_000_000, 2).expect("valid hdrhistogram bounds")
}

/// One bench of a `record` group: each iteration records the next `BATCH` values of
/// `values` into `state` (wrapping around), so criterion reports time per value.
fn record_batch<S, V: Copy, M: Measurement>(
    g: &mut BenchmarkGroup<'_, M>,
    id: &str,
    mut state: S,
    values: &[V],
    mut rec: impl FnMut(&mut S, V),
) {
    let mut chunks = values.chunks_exact(BATCH).cycle();
    g.bench_function(id, |b| {
        b.iter(|| {
            let chunk = chunks.next().unwrap_or_default();
            for &v in chunk {
                rec(&mut state, v);
            }
        })
    });
    black_box(&state);
}

fn record(c: &mut Benches, data: &Data) {
    let mut g = c.cpu.benchmark_group(data.group("record"));
    g.throughput(Throughput::Elements(BATCH as u64));
    let (f, u) = (&data.ns_f64[..], &data.ns[..]);
    record_batch(
        &mut g,
        "tailguard/log",
        presets::log_latency(),
        f,
        |s, v| {
            let _ = s.record(v);
        },
    );
    record_batch(
        &mut g,
        "tailguard/cubic",
        presets::cubic_latency(),
        f,
        |s, v| {
            let _ = s.record(v);
        },
    );
    record_batch(
        &mut g,
        "tailguard/int",
        presets::int_latency(),
        u,
        |s, v| s.record_u64(v),
    );
    // The lock-free versions, uncontended: one relaxed add on a 32-bit bin (and the
    // window's clock read, epoch check and refresh pacing; its clock is a ManualClock, so
    // the read is an atomic load, not a system call).
    record_batch(
        &mut g,
        "tailguard/atomic",
        AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT),
        u,
        |s, v| s.record_u64(v),
    );
    let clock = ManualClock::new();
    let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, WindowConfig::new())
        .expect("valid window");
    record_batch(&mut g, "tailguard/window", &window, u, |w, v| {
        w.record_u64(v)
    });
    // The lock-free peer of `tailguard/atomic`, uncontended (f64 values: its only input).
    record_batch(&mut g, "quantile-sketch", &concurrent_peer(), f, |s, v| {
        s.insert(v)
    });
    record_batch(&mut g, "sketches-ddsketch", ddsketch_peer(), f, |s, v| {
        s.add(v)
    });
    record_batch(&mut g, "hdrhistogram", hdr_peer(), u, |s, v| {
        s.saturating_record(v)
    });
    g.finish();
}

/// The slice records: each iteration records the next `BATCH` values with one call,
/// beside the same values one by one (tailguard's and hdrhistogram's per-value record),
/// so criterion reports time per value for all of them.
fn batch(c: &mut Benches, data: &Data) {
    let mut g = c.cpu.benchmark_group(data.group("batch"));
    g.throughput(Throughput::Elements(BATCH as u64));
    let (f, u) = (&data.ns_f64[..], &data.ns[..]);
    let mut slices = u.chunks_exact(BATCH).cycle();
    let mut int = presets::int_latency();
    g.bench_function("tailguard/int/slice", |b| {
        b.iter(|| int.record_u64_slice(slices.next().unwrap_or_default()))
    });
    black_box(&int);
    let mut float_slices = f.chunks_exact(BATCH).cycle();
    let mut cubic = presets::cubic_latency();
    g.bench_function("tailguard/cubic/slice", |b| {
        b.iter(|| cubic.record_slice(float_slices.next().unwrap_or_default()))
    });
    black_box(&cubic);
    let atomic = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    g.bench_function("tailguard/atomic/slice", |b| {
        b.iter(|| atomic.record_u64_slice(slices.next().unwrap_or_default()))
    });
    black_box(&atomic);
    record_batch(
        &mut g,
        "tailguard/int/one-by-one",
        presets::int_latency(),
        u,
        |s, v| s.record_u64(v),
    );
    record_batch(&mut g, "hdrhistogram", hdr_peer(), u, |s, v| {
        s.saturating_record(v)
    });
    g.finish();
}

/// p99 of a sketch holding all the data.
fn quantile(c: &mut Benches, data: &Data) {
    let mut g = c.cpu.benchmark_group(data.group("quantile"));
    // `tailguard`: LogLatency, the peer's mapping (and its representative value, an exp).
    // The other presets answer through their own mappings: `tailguard/int` (bit
    // operations) and `tailguard/cubic` (a cube root), measured alongside.
    let (mut log, mut int, mut cubic) = (
        presets::log_latency(),
        presets::int_latency(),
        presets::cubic_latency(),
    );
    let mut dd = ddsketch_peer();
    let mut hdr = hdr_peer();
    for &v in &data.ns {
        log.record_u64(v);
        int.record_u64(v);
        cubic.record_u64(v);
        dd.add(v as f64);
        hdr.saturating_record(v);
    }
    g.bench_function("tailguard", |b| b.iter(|| log.quantile(black_box(P99))));
    g.bench_function("tailguard/int", |b| b.iter(|| int.quantile(black_box(P99))));
    g.bench_function("tailguard/cubic", |b| {
        b.iter(|| cubic.quantile(black_box(P99)))
    });
    // The same p99 from an `AtomicSketch` (`LogLatency` layout), and a window's refresh
    // of its cached p90 (three `IntLatency` slots, all the data in the current one).
    let atomic = AtomicSketch::with_layout(presets::LOG_LATENCY_LAYOUT);
    let clock = ManualClock::new();
    let config = WindowConfig::new()
        .with_refresh_records(0)
        .with_refresh_interval(Duration::ZERO);
    let window =
        Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).expect("valid window");
    for &v in &data.ns {
        atomic.record_u64(v);
        window.record_u64(v);
    }
    g.bench_function("tailguard/atomic", |b| {
        b.iter(|| atomic.quantile(black_box(P99)))
    });
    g.bench_function("tailguard/window/refresh", |b| b.iter(|| window.refresh()));
    g.bench_function("sketches-ddsketch", |b| {
        b.iter(|| dd.quantile(black_box(P99)))
    });
    g.bench_function("hdrhistogram", |b| {
        b.iter(|| hdr.value_at_quantile(black_box(P99)))
    });
    g.finish();
}

/// Merging one full sketch (half the data) into another (the other half). Each timed
/// merge gets a fresh copy of the target, cloned outside the timing in batches of
/// `MERGE_BATCH` (so the copies stay in cache).
fn merge(c: &mut Benches, data: &Data) {
    let mut g = c.wall.benchmark_group(data.group("merge"));
    let (a, b) = (data.half(false), data.half(true));

    let fill = |values: &[u64]| filled(presets::log_latency(), values, |s, v| s.record_u64(v));
    merge_bench(&mut g, "tailguard", fill(a), fill(b), |acc, other| {
        acc.merge(other).is_ok()
    });

    let fill = |values: &[u64]| filled(ddsketch_peer(), values, |s, v| s.add(v as f64));
    merge_bench(
        &mut g,
        "sketches-ddsketch",
        fill(a),
        fill(b),
        |acc, other| acc.merge(other).is_ok(),
    );

    let fill = |values: &[u64]| filled(hdr_peer(), values, |s, v| s.saturating_record(v));
    merge_bench(&mut g, "hdrhistogram", fill(a), fill(b), |acc, other| {
        acc.add(other).is_ok()
    });
    g.finish();
}

/// How many merge targets are cloned before each timed batch.
const MERGE_BATCH: u64 = 8;

fn merge_bench<S: Clone, M: Measurement>(
    g: &mut BenchmarkGroup<'_, M>,
    id: &str,
    target: S,
    other: S,
    merge: impl Fn(&mut S, &S) -> bool,
) {
    g.bench_function(id, |b| {
        b.iter_batched_ref(
            || target.clone(),
            |acc| merge(acc, black_box(&other)),
            BatchSize::NumIterations(MERGE_BATCH),
        )
    });
}

fn main() {
    let mut c = Benches {
        cpu: config(Criterion::default().with_measurement(cpu_time())),
        wall: config(Criterion::default()),
    };
    for set in DATA_SETS {
        let data = Data::generate(set);
        for group in GROUPS {
            group(&mut c, &data);
        }
    }
    c.cpu.final_summary();
    c.wall.final_summary();
}

fn config<M: Measurement>(c: Criterion<M>) -> Criterion<M> {
    c.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50)
        .configure_from_args()
}

#[cfg(unix)]
fn cpu_time() -> CpuTime {
    CpuTime
}

#[cfg(not(unix))]
fn cpu_time() -> CpuTime {
    WallTime
}

/// The per-request decision path, uncontended: the cached threshold (one load), a full
/// `should_hedge` on a warm hedger, and the budgets' `try_acquire`. The budgets are
/// refilled between iterations outside the timing where they would run dry.
fn hedge(c: &mut Benches, data: &Data) {
    let mut g = c.wall.benchmark_group(data.group("hedge"));
    let clock = ManualClock::new();
    let hedger = Hedger::new(&clock, HedgeConfig::new()).expect("valid hedger");
    for &v in data.ns.iter().take(100_000) {
        hedger.record(Duration::from_nanos(v));
    }
    hedger.window().refresh();
    // The threshold the hedger reads: the integer upper edge of the cached percentile's bin.
    g.bench_function("threshold", |b| {
        b.iter(|| black_box(hedger.window().cached_upper_bound()))
    });
    g.bench_function("should_hedge", |b| {
        let mut ticket = hedger.start();
        b.iter(|| black_box(hedger.should_hedge(black_box(&mut ticket))))
    });
    let ratio = RatioBudget::new(0.1, RatioBudget::MAX_CAP).expect("valid budget");
    g.bench_function("ratio_budget/try_acquire", |b| {
        b.iter_batched(
            || {
                for _ in 0..10 {
                    ratio.on_request();
                }
            },
            |()| black_box(ratio.try_acquire()),
            BatchSize::SmallInput,
        )
    });
    let bucket = TokenBucket::new(&clock, 1e6, 1024).expect("valid bucket");
    g.bench_function("token_bucket/try_acquire", |b| {
        b.iter_batched(
            || clock.advance(Duration::from_micros(1)),
            |()| black_box(bucket.try_acquire()),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}
