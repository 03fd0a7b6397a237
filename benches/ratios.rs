//! The targets table (BENCHMARKS.md, "Host: against the peers"): tailguard against its
//! peers, as ratios measured in one process with interleaved rounds.
//!
//! ```sh
//! cargo bench --bench ratios                          # every row, both data sets (< 1 min)
//! TG_RATIO_QUICK=1 cargo bench --bench ratios         # fewer rounds, a quarter of the data
//! cargo bench --bench ratios -- quantile              # the rows whose path contains "quantile"
//! bash .ci/ratios.sh                                  # runs under both profiles, compared
//! ```
//!
//! Environment (all optional):
//!
//! * `TG_RATIO_ROUNDS`: rounds per row (default 15; 7 with `TG_RATIO_QUICK`).
//! * `TG_RATIO_QUICK=1`: 2^18 values per record round, fewer queries, merges and calls.
//! * `TG_RATIO_DATA`: `workload-a` or `heavy-tail`, one data set only.
//! * `TG_RATIO_FILTER` (or the first argument after `--`): only rows whose path contains it.
//! * `TG_RATIO_CHUNK`: the slice length of the batch row (default 1,000).
//! * `TG_RATIO_VERBOSE=1`: also print each row's per-round ratios.
//!
//! Method. A row times the same work on both sides: round `r` runs tailguard then the peer
//! when `r` is even, the peer then tailguard when it is odd (so a drift in the machine's
//! speed does not favour one side), after one untimed warm-up round each. Each round gives
//! one ratio, tailguard's time over the peer's; the table prints the median of those
//! ratios, their range, and each side's median time per operation. Rounds run on the
//! thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`, which leaves out the time spent waiting
//! for a core on a loaded machine). A merge round is timed in batches of `MERGE_BATCH`
//! merges (the copies they merge into are made between batches, untimed); reading the CPU
//! clock is a system call, so each batch's time has the clock's own cost (measured at the
//! start, the median of 1,001 empty readings) taken off.
//!
//! Code placement. On some CPUs (an AMD EPYC, Zen 4, here) a peer's hot loop runs up to
//! 1.6x slower at some addresses than at others, so one build can show the peer slower than
//! another build of the same source (BENCHMARKS.md, "A second machine"). Which placement a
//! build gets depends on the whole binary, not on one flag: builds that differ only in
//! `RUSTFLAGS` (`-C llvm-args=-align-loops=32` or `=64`, each with a `CARGO_TARGET_DIR` of
//! its own) or in an unrelated change usually land the loop elsewhere. Compare the peer
//! columns of a few builds before reading a ratio.
//!
//! Values are opaque to the optimizer: each round passes its slice through `black_box`, each
//! sketch goes through `black_box` after its round, each query's argument and answer too.
//!
//! Only tailguard's public API is used (and the peers' public APIs), so that the harness
//! keeps measuring while the library's insides change. Run without `--bench` (as
//! `cargo test --benches` does), it is a smoke run: one round each on a few values.
//!
//! Peers, configured as in benches/tailguard.rs (about 1 % relative accuracy):
//!
//! * hdrhistogram 7: 1 µs .. 100 s, 2 significant digits (bins of 1/128, as `IntLatency`).
//! * sketches-ddsketch 0.4: alpha 1 %, at most 2,048 bins, values up to 1 µs in its zero bin.
//! * quantile-sketch 0.1: `ConcurrentDDSketch::with_err_and_range(0.01, 1, 1e11)` (its
//!   `insert` panics outside its range; every value here is inside).
//! * opentelemetry_sdk 0.33, the peer of `ExponentialSketch` (issue 28): a `Histogram<u64>`
//!   of a `SdkMeterProvider` read by a `ManualReader`, its view's aggregation
//!   `Base2ExponentialHistogram { max_size: 160, max_scale: 20, record_min_max: true }`,
//!   `record(v, &[])` (no attributes: the SDK's cheapest path). Each round records into an
//!   empty histogram on both sides. Before its first round, a row collects the SDK's data
//!   point once and checks it is an exponential histogram of every value, at the scale and
//!   offset of tailguard's sketch (so the row does not time a no-op; the buckets that differ
//!   are counted on stderr).

use std::hint::black_box;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use opentelemetry::metrics::{Histogram as OtelHistogram, MeterProvider as _};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{
    Aggregation, Instrument, InstrumentKind, ManualReader, Pipeline, SdkMeterProvider, Stream,
    Temporality,
};
use quantile_sketch::ConcurrentDDSketch;
use sketches_ddsketch::{Config, DDSketch as DdPeer};
use tailguard::clock::ManualClock;
use tailguard::hedge::{Decision, HedgeConfig, Hedger};
use tailguard::sketch::{presets, AtomicSketch, DDSketch, ExponentialSketch, IndexMapping};
use tailguard::window::{ExponentialWindow, Window, WindowConfig};
use tailguard_support::data_set::{filled, DataSet, DATA_SETS};

/// The quantile of the quantile rows.
const P99: f64 = 0.99;
/// Merges timed between two CPU-clock reads (the targets are cloned before, untimed):
/// enough that the clock's own cost (a system call, subtracted anyway) stays small, few
/// enough that the copies stay in cache.
const MERGE_BATCH: usize = 64;

/// What a run does, from the environment.
struct Opts {
    rounds: usize,
    /// Values per record round (at most the data set's length).
    values: usize,
    /// Queries per quantile round.
    queries: usize,
    /// Merges per merge round.
    merges: usize,
    /// Calls per `should_hedge` round.
    calls: usize,
    chunk: usize,
    filter: Option<String>,
    data: Option<String>,
    verbose: bool,
    smoke: bool,
}

impl Opts {
    fn from_env() -> Opts {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let num = |k: &str| env(k).and_then(|v| v.parse::<usize>().ok());
        let args: Vec<String> = std::env::args().skip(1).collect();
        // `cargo bench` passes `--bench`; `cargo test --benches` does not.
        let smoke = !args.iter().any(|a| a == "--bench");
        let quick = env("TG_RATIO_QUICK").is_some_and(|v| v != "0");
        let arg_filter = args.into_iter().find(|a| !a.starts_with('-'));
        let (rounds, values, queries, merges, calls) = if smoke {
            (1, 4_096, 100, 16, 1_000)
        } else if quick {
            (7, 1 << 18, 5_000, 1_024, 200_000)
        } else {
            (15, usize::MAX, 20_000, 4_096, 1_000_000)
        };
        Opts {
            rounds: num("TG_RATIO_ROUNDS").unwrap_or(rounds).max(1),
            values,
            queries,
            merges,
            calls,
            chunk: num("TG_RATIO_CHUNK").unwrap_or(1_000).max(1),
            filter: env("TG_RATIO_FILTER").or(arg_filter),
            data: env("TG_RATIO_DATA"),
            verbose: env("TG_RATIO_VERBOSE").is_some_and(|v| v != "0"),
            smoke,
        }
    }

    fn wants(&self, path: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| path.contains(f))
    }
}

/// The thread's CPU time (wall time where there is no such clock).
#[cfg(unix)]
fn cpu_now() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec.unsigned_abs(), t.tv_nsec.unsigned_abs() as u32)
}

#[cfg(not(unix))]
fn cpu_now() -> Duration {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed()
}

/// How long `f` takes on the CPU clock.
fn cpu_timed(f: impl FnOnce()) -> Duration {
    let start = cpu_now();
    f();
    cpu_now().saturating_sub(start)
}

/// One record round: every value of `values`, in order, into `state`.
fn record_round<S, V: Copy>(state: &mut S, values: &[V], rec: impl Fn(&mut S, V)) -> Duration {
    let values = black_box(values);
    let t = cpu_timed(|| {
        for &v in values {
            rec(state, v);
        }
    });
    black_box(state);
    t
}

/// One batch round: `values` in slices of `chunk`, each passed to `rec`.
fn slice_round<S, V>(
    state: &mut S,
    values: &[V],
    chunk: usize,
    mut rec: impl FnMut(&mut S, &[V]),
) -> Duration {
    let values = black_box(values);
    let t = cpu_timed(|| {
        for c in values.chunks(chunk) {
            rec(state, c);
        }
    });
    black_box(state);
    t
}

/// One record round into an empty `S`, made (and dropped) untimed.
fn fresh_round<S>(new: impl FnOnce() -> S, values: &[u64], rec: impl Fn(&mut S, u64)) -> Duration {
    let mut state = new();
    record_round(&mut state, values, rec)
}

/// A float record into a tailguard sketch (an error, for a value it refuses, is not timed
/// apart: the data sets hold none).
fn record_f64<M: IndexMapping, const N: usize>(s: &mut DDSketch<M, N>, v: f64) {
    let _ = s.record(v);
}

/// The p99 of `tg` against the peer's, on sketches holding the same values.
fn p99_pair<M: IndexMapping, const N: usize>(
    runner: &mut Runner,
    path: &'static str,
    set: DataSet,
    tg: &DDSketch<M, N>,
    dd: &DdPeer,
) {
    let queries = runner.opts.queries;
    runner.pair(
        path,
        set,
        Target::Ratio(0.35),
        queries,
        || query_round(queries, || tg.quantile(black_box(P99))),
        || query_round(queries, || dd.quantile(black_box(P99))),
    );
}

/// One query round: `n` calls of `query`, each answer kept.
fn query_round<R>(n: usize, mut query: impl FnMut() -> R) -> Duration {
    cpu_timed(|| {
        for _ in 0..n {
            black_box(query());
        }
    })
}

/// What timing nothing reads on the CPU clock: the median of 1,001 tries.
fn clock_cost() -> Duration {
    let mut t: Vec<Duration> = (0..1_001).map(|_| cpu_timed(|| {})).collect();
    t.sort();
    t[t.len() / 2]
}

/// One merge round: `n` merges of `other` into fresh copies of `target`, the copies made
/// before each timed batch; `clock` (see [`clock_cost`]) is taken off each batch.
fn merge_round<S: Clone>(
    target: &S,
    other: &S,
    n: usize,
    clock: Duration,
    merge: impl Fn(&mut S, &S) -> bool,
) -> Duration {
    let (mut total, mut left, mut ok) = (Duration::ZERO, n, true);
    while left > 0 {
        let batch = left.min(MERGE_BATCH);
        let mut accs: Vec<S> = (0..batch).map(|_| target.clone()).collect();
        let other = black_box(other);
        let t = cpu_timed(|| {
            for acc in &mut accs {
                ok &= merge(acc, other);
            }
        });
        total += t.saturating_sub(clock);
        black_box(&accs);
        left -= batch;
    }
    assert!(ok, "a merge failed");
    total
}

/// What a row promises (its target ratio).
#[derive(Clone, Copy)]
enum Target {
    /// The median ratio at most this.
    Ratio(f64),
    /// tailguard's time per operation at most this many ns.
    Ns(f64),
    /// No target: shown for context.
    Info,
}

impl Target {
    fn text(self) -> String {
        match self {
            Target::Ratio(r) => format!("<= {r}x"),
            Target::Ns(ns) => format!("<= {ns} ns"),
            Target::Info => "-".into(),
        }
    }

    fn met(self, ns: f64, ratio: Option<f64>) -> &'static str {
        let yes = |b: bool| if b { "yes" } else { "no" };
        match (self, ratio) {
            (Target::Ratio(r), Some(x)) => yes(x <= r),
            (Target::Ns(t), _) => yes(ns <= t),
            _ => "-",
        }
    }
}

/// One line of the table.
struct Row {
    path: &'static str,
    data: &'static str,
    /// Median ns per operation over the rounds.
    tg_ns: f64,
    peer_ns: Option<f64>,
    /// Per-round ratios (empty for an absolute row).
    ratios: Vec<f64>,
    /// Per-round ns (absolute rows: their range is printed instead of the ratios').
    tg_rounds: Vec<f64>,
    target: Target,
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn range(xs: &[f64]) -> (f64, f64) {
    xs.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// ns per operation, at least a picosecond (a smoke run's round may read as 0 ns).
fn per_op(t: Duration, ops: usize) -> f64 {
    (t.as_nanos() as f64 / ops.max(1) as f64).max(1e-3)
}

struct Runner {
    opts: Opts,
    rows: Vec<Row>,
}

impl Runner {
    /// Times `tg` against `peer`, interleaved; each closure runs one round of `ops`
    /// operations and returns how long it took.
    fn pair(
        &mut self,
        path: &'static str,
        data: DataSet,
        target: Target,
        ops: usize,
        mut tg: impl FnMut() -> Duration,
        mut peer: impl FnMut() -> Duration,
    ) {
        if !self.opts.wants(path) {
            return;
        }
        if !self.opts.smoke {
            tg();
            peer();
        }
        let (mut tg_ns, mut peer_ns) = (Vec::new(), Vec::new());
        for r in 0..self.opts.rounds {
            let (a, b) = if r % 2 == 0 {
                let a = tg();
                (a, peer())
            } else {
                let b = peer();
                (tg(), b)
            };
            tg_ns.push(per_op(a, ops));
            peer_ns.push(per_op(b, ops));
        }
        let ratios = tg_ns.iter().zip(&peer_ns).map(|(a, b)| a / b).collect();
        self.rows.push(Row {
            path,
            data: data.name(),
            tg_ns: median(&tg_ns),
            peer_ns: Some(median(&peer_ns)),
            ratios,
            tg_rounds: tg_ns,
            target,
        });
    }

    /// Times `tg` alone (an absolute target).
    fn solo(
        &mut self,
        path: &'static str,
        data: DataSet,
        target: Target,
        ops: usize,
        mut tg: impl FnMut() -> Duration,
    ) {
        if !self.opts.wants(path) {
            return;
        }
        if !self.opts.smoke {
            tg();
        }
        let rounds: Vec<f64> = (0..self.opts.rounds).map(|_| per_op(tg(), ops)).collect();
        self.rows.push(Row {
            path,
            data: data.name(),
            tg_ns: median(&rounds),
            peer_ns: None,
            ratios: Vec::new(),
            tg_rounds: rounds,
            target,
        });
    }

    fn print(&self) {
        let ns = |x: f64| {
            if x < 10.0 {
                format!("{x:.2}")
            } else if x < 1000.0 {
                format!("{x:.1}")
            } else {
                format!("{x:.0}")
            }
        };
        println!("| path | data set | tailguard ns | peer ns | median ratio | min..max ratio | target | met? |");
        println!("|---|---|---|---|---|---|---|---|");
        for r in &self.rows {
            let (ratio, spread, met) = if r.ratios.is_empty() {
                let (lo, hi) = range(&r.tg_rounds);
                (
                    "-".to_string(),
                    format!("({} .. {} ns)", ns(lo), ns(hi)),
                    r.target.met(r.tg_ns, None),
                )
            } else {
                let m = median(&r.ratios);
                let (lo, hi) = range(&r.ratios);
                (
                    format!("{m:.2}"),
                    format!("{lo:.2} .. {hi:.2}"),
                    r.target.met(r.tg_ns, Some(m)),
                )
            };
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                r.path,
                r.data,
                ns(r.tg_ns),
                r.peer_ns.map_or("-".into(), ns),
                ratio,
                spread,
                r.target.text(),
                met,
            );
        }
        if self.opts.verbose {
            println!();
            for r in self.rows.iter().filter(|r| !r.ratios.is_empty()) {
                let each: Vec<String> = r.ratios.iter().map(|x| format!("{x:.2}")).collect();
                println!("{} | {}: {}", r.path, r.data, each.join(" "));
            }
        }
    }
}

fn hdr_peer() -> Histogram<u64> {
    Histogram::new_with_bounds(1_000, 100_000_000_000, 2).expect("valid hdrhistogram bounds")
}

fn dd_peer() -> DdPeer {
    DdPeer::new(Config::new(0.01, 2048, 1e3))
}

fn concurrent_peer() -> ConcurrentDDSketch {
    ConcurrentDDSketch::with_err_and_range(0.01, 1.0, 1e11)
}

/// A `ManualReader` that the bench keeps as well as the provider (which takes its reader by
/// value), to collect from it.
#[derive(Clone, Debug)]
struct SharedReader(Arc<ManualReader>);

impl MetricReader for SharedReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline)
    }

    fn collect(&self, rm: &mut ResourceMetrics) -> OTelSdkResult {
        self.0.collect(rm)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.0.temporality(kind)
    }
}

/// The OpenTelemetry SDK's exponential histogram, sized as `ExponentialSketch<_, 160>`
/// (the SDKs' default `max_size`), with the SDKs' default `max_scale` (tailguard's finest
/// is 8: wide data downscales below both).
struct OtelPeer {
    histogram: OtelHistogram<u64>,
    reader: SharedReader,
    _provider: SdkMeterProvider,
}

impl OtelPeer {
    fn new() -> OtelPeer {
        let reader = SharedReader(Arc::new(ManualReader::builder().build()));
        let provider = SdkMeterProvider::builder()
            .with_reader(reader.clone())
            .with_view(|_: &Instrument| {
                let aggregation = Aggregation::Base2ExponentialHistogram {
                    max_size: 160,
                    max_scale: 20,
                    record_min_max: true,
                };
                Stream::builder().with_aggregation(aggregation).build().ok()
            })
            .build();
        let histogram = provider.meter("ratios").u64_histogram("latency").build();
        OtelPeer {
            histogram,
            reader,
            _provider: provider,
        }
    }

    fn record(&mut self, v: u64) {
        self.histogram.record(v, &[]);
    }

    /// The one data point, collected: its count, scale, offset and positive buckets.
    fn collect(&self) -> (usize, i32, i32, Vec<u64>) {
        let mut rm = ResourceMetrics::default();
        self.reader
            .collect(&mut rm)
            .expect("the ManualReader collects");
        let metric = rm
            .scope_metrics()
            .flat_map(|s| s.metrics())
            .next()
            .expect("the histogram's metric");
        let AggregatedMetrics::U64(MetricData::ExponentialHistogram(h)) = metric.data() else {
            panic!("the SDK aggregated {:?}, not exponentially", metric.data());
        };
        let p = h.data_points().next().expect("one data point");
        let b = p.positive_bucket();
        let counts = b.counts().collect();
        (p.count(), p.scale().into(), b.offset(), counts)
    }
}

/// Records `u` into the SDK and into `ExponentialSketch<u32, 160>`, collects, and checks
/// that the SDK holds every value in the buckets tailguard's sketch has (its scale and
/// offset; bucket counts may differ only where the SDK's `ln` misplaces a value beside an
/// edge, see `ExponentialSketch`).
fn check_otel_peer(u: &[u64]) {
    let mut peer = OtelPeer::new();
    let mut tg = ExponentialSketch::<u32, 160>::new();
    for &v in u {
        peer.record(v);
        tg.record_u64(v);
    }
    let (count, scale, offset, counts) = peer.collect();
    assert_eq!(count, u.len(), "the SDK's count");
    assert_eq!(
        (scale, offset),
        (tg.scale(), tg.offset()),
        "the SDK's scale and offset"
    );
    let differ = counts
        .iter()
        .zip(tg.bucket_counts())
        .filter(|(a, b)| **a != *b)
        .count();
    // The largest bucket tells whether a `u16` sketch saturates within one round.
    let largest = counts.iter().max().copied().unwrap_or(0);
    eprintln!(
        "check_otel_peer: {count} values at scale {scale}, offset {offset}, {differ} of {} \
         buckets differ from tailguard's, the largest holds {largest}",
        counts.len()
    );
}

/// A row against the OpenTelemetry SDK's exponential histogram: each round records `u`
/// into an empty `S` (made by `new`, with `rec`) and into an empty SDK histogram, so that
/// a counter narrower than the rounds' total (`u16`) does not saturate.
fn otel_pair<S>(
    runner: &mut Runner,
    path: &'static str,
    set: DataSet,
    target: Target,
    u: &[u64],
    new: impl Fn() -> S,
    rec: impl Fn(&mut S, u64),
) {
    if !runner.opts.wants(path) {
        return;
    }
    check_otel_peer(u);
    runner.pair(
        path,
        set,
        target,
        u.len(),
        || fresh_round(&new, u, &rec),
        || fresh_round(OtelPeer::new, u, OtelPeer::record),
    );
}

/// Every row on one data set.
fn run(runner: &mut Runner, set: DataSet) {
    let all = set.ns();
    let n = runner.opts.values.min(all.len());
    let u: &[u64] = &all[..n];
    let f: Vec<f64> = u.iter().map(|&v| v as f64).collect();
    let f = &f[..];
    let (merges, calls, chunk) = (runner.opts.merges, runner.opts.calls, runner.opts.chunk);

    // Single-value records, one pass over the values per round.
    let (mut tg, mut peer) = (presets::int_latency(), hdr_peer());
    runner.pair(
        "int record: `IntLatency::record_u64` vs hdrhistogram (2 digits)",
        set,
        Target::Ratio(0.7),
        n,
        || record_round(&mut tg, u, |s, v| s.record_u64(v)),
        || record_round(&mut peer, u, |s, v| s.saturating_record(v)),
    );
    let (mut tg, mut peer) = (presets::int_latency(), dd_peer());
    runner.pair(
        "int record: `IntLatency::record_u64` vs sketches-ddsketch `add`",
        set,
        Target::Info,
        n,
        || record_round(&mut tg, u, |s, v| s.record_u64(v)),
        || record_round(&mut peer, f, |s, v| s.add(v)),
    );
    let (mut tg, mut peer) = (presets::cubic_latency(), hdr_peer());
    runner.pair(
        "cubic record: `CubicLatency::record` (f64) vs hdrhistogram (2 digits, u64)",
        set,
        Target::Ratio(1.0),
        n,
        || record_round(&mut tg, f, record_f64),
        || record_round(&mut peer, u, |s, v| s.saturating_record(v)),
    );
    let (mut tg, mut peer) = (presets::log_latency(), dd_peer());
    runner.pair(
        "log record: `LogLatency::record` vs sketches-ddsketch `add`",
        set,
        Target::Ratio(0.5),
        n,
        || record_round(&mut tg, f, record_f64),
        || record_round(&mut peer, f, |s, v| s.add(v)),
    );

    // The batch records: the same values, in slices, against hdrhistogram's one by one,
    // and against tailguard's own one by one (a batch must never be slower).
    let (mut tg, mut peer) = (presets::int_latency(), hdr_peer());
    runner.pair(
        "batch record: `IntLatency::record_u64_slice` per value vs hdrhistogram record",
        set,
        Target::Ratio(0.5),
        n,
        || slice_round(&mut tg, u, chunk, |s, c| s.record_u64_slice(c)),
        || record_round(&mut peer, u, |s, v| s.saturating_record(v)),
    );
    let (mut tg, mut peer) = (presets::cubic_latency(), hdr_peer());
    runner.pair(
        "batch record: `CubicLatency::record_slice` (f64) per value vs hdrhistogram record",
        set,
        Target::Ratio(0.5),
        n,
        || {
            slice_round(&mut tg, f, chunk, |s, c| {
                let _ = s.record_slice(c);
            })
        },
        || record_round(&mut peer, u, |s, v| s.saturating_record(v)),
    );
    let (mut tg, mut one) = (presets::int_latency(), presets::int_latency());
    runner.pair(
        "batch vs one by one: `IntLatency::record_u64_slice` vs `record_u64`",
        set,
        Target::Ratio(1.0),
        n,
        || slice_round(&mut tg, u, chunk, |s, c| s.record_u64_slice(c)),
        || record_round(&mut one, u, |s, v| s.record_u64(v)),
    );
    let (mut tg, mut one) = (presets::cubic_latency(), presets::cubic_latency());
    runner.pair(
        "batch vs one by one: `CubicLatency::record_slice` vs `record`",
        set,
        Target::Ratio(1.0),
        n,
        || {
            slice_round(&mut tg, f, chunk, |s, c| {
                let _ = s.record_slice(c);
            })
        },
        || record_round(&mut one, f, record_f64),
    );

    // The lock-free records, uncontended.
    let (tg, peer) = (
        AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT),
        concurrent_peer(),
    );
    runner.pair(
        "atomic record: `AtomicSketch::record_u64` (int) vs quantile-sketch `insert`",
        set,
        Target::Ratio(0.65),
        n,
        || record_round(&mut &tg, u, |s, v| s.record_u64(v)),
        || record_round(&mut &peer, f, |s, v| s.insert(v)),
    );

    // The auto-scaling sketch against the OpenTelemetry SDK's exponential histogram: one
    // line per contender (issue 28's atomic form: `Target::Ratio(0.1)`).
    otel_pair(
        runner,
        "exponential record: `ExponentialSketch::<u32, 160>::record_u64` vs opentelemetry_sdk `Histogram<u64>::record` (160 buckets)",
        set,
        Target::Info,
        u,
        ExponentialSketch::<u32, 160>::new,
        |s, v| s.record_u64(v),
    );
    otel_pair(
        runner,
        "exponential record: `ExponentialSketch::<u16, 160>::record_u64` vs opentelemetry_sdk `Histogram<u64>::record` (160 buckets)",
        set,
        Target::Info,
        u,
        ExponentialSketch::<u16, 160>::new,
        |s, v| s.record_u64(v),
    );

    // Issue 28's atomic form: the exponential window's record (clock reading included),
    // against the SDK and against the fixed-range atomic sketch.
    let clock = ManualClock::new();
    let interval = core::time::Duration::from_secs(30);
    otel_pair(
        runner,
        "exponential window record: `ExponentialWindow::<_, u16, 128>::record_u64` vs opentelemetry_sdk `Histogram<u64>::record` (160 buckets)",
        set,
        Target::Ratio(0.1),
        u,
        || ExponentialWindow::<_, u16, 128>::new(&clock, interval).expect("valid window"),
        |w, v| w.record_u64(v),
    );
    let window = ExponentialWindow::<_, u32, 160>::new(&clock, interval).expect("valid window");
    let atomic = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    runner.pair(
        "exponential window record: `ExponentialWindow::<_, u32, 160>::record_u64` vs `AtomicSketch::record_u64` (int)",
        set,
        Target::Ratio(1.2),
        n,
        || record_round(&mut &window, u, |w, v| w.record_u64(v)),
        || record_round(&mut &atomic, u, |s, v| s.record_u64(v)),
    );

    // The floor of any lock-free record: a bucket from the exponent and two mantissa bits,
    // and one atomic add to it (a locked instruction on x86-64), nothing else: no clock,
    // no extremes, no sum. What issue 28's 0.1x of the SDK asks of a whole record.
    otel_pair(
        runner,
        "floor: one `AtomicU32::fetch_add` per value (256 log-linear counters) vs opentelemetry_sdk `Histogram<u64>::record` (160 buckets)",
        set,
        Target::Info,
        u,
        || -> [AtomicU32; 256] { std::array::from_fn(|_| AtomicU32::new(0)) },
        |c, v| {
            let exponent = 63 - (v | 1).leading_zeros() as usize;
            let bucket = (exponent << 2) | ((v << (63 - exponent)) >> 61 & 3) as usize;
            c[bucket & 255].fetch_add(1, Relaxed);
        },
    );

    let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, WindowConfig::new())
        .expect("valid window");
    let atomic = AtomicSketch::with_layout(presets::INT_LATENCY_LAYOUT);
    runner.pair(
        "window record: `Window::record_u64` vs `AtomicSketch::record_u64` (int, ManualClock)",
        set,
        Target::Ratio(1.5),
        n,
        || record_round(&mut &window, u, |w, v| w.record_u64(v)),
        || record_round(&mut &atomic, u, |s, v| s.record_u64(v)),
    );

    // p99 of a sketch holding every value.
    let dd = filled(dd_peer(), f, |s, v| s.add(v));
    let log = filled(presets::log_latency(), u, |s, v| s.record_u64(v));
    let int = filled(presets::int_latency(), u, |s, v| s.record_u64(v));
    let cubic = filled(presets::cubic_latency(), u, |s, v| s.record_u64(v));
    let path = "quantile p99: `LogLatency::quantile` vs sketches-ddsketch";
    p99_pair(runner, path, set, &log, &dd);
    let path = "quantile p99: `IntLatency::quantile` vs sketches-ddsketch";
    p99_pair(runner, path, set, &int, &dd);
    let path = "quantile p99: `CubicLatency::quantile` vs sketches-ddsketch";
    p99_pair(runner, path, set, &cubic, &dd);

    // Merging a sketch of one half of the values into a copy of one of the other half.
    let (a, b) = u.split_at(n / 2);
    let cubic_of = |vs: &[u64]| filled(presets::cubic_latency(), vs, |s, v| s.record_u64(v));
    let dd_of = |vs: &[u64]| filled(dd_peer(), vs, |s, v| s.add(v as f64));
    let (tg_a, tg_b, dd_a, dd_b) = (cubic_of(a), cubic_of(b), dd_of(a), dd_of(b));
    let clock = clock_cost();
    runner.pair(
        "merge: `CubicLatency::merge` vs sketches-ddsketch",
        set,
        Target::Ratio(0.33),
        merges,
        || merge_round(&tg_a, &tg_b, merges, clock, |acc, o| acc.merge(o).is_ok()),
        || merge_round(&dd_a, &dd_b, merges, clock, |acc, o| acc.merge(o).is_ok()),
    );

    // The hedge decision on a warm hedger, before the delay: the Wait path.
    let clock = ManualClock::new();
    let hedger = Hedger::new(&clock, HedgeConfig::new()).expect("valid hedger");
    u.iter()
        .take(100_000)
        .for_each(|&v| hedger.record(Duration::from_nanos(v)));
    hedger.window().refresh();
    let mut ticket = hedger.start();
    let first = hedger.should_hedge(&mut ticket);
    let path = if matches!(first, Decision::Wait(_)) {
        "should_hedge: warm, Wait path (ManualClock)"
    } else {
        eprintln!("should_hedge answered {first:?}, not Wait: the row times that path");
        "should_hedge: warm, NOT the Wait path (see stderr)"
    };
    runner.solo(path, set, Target::Ns(10.0), calls, || {
        query_round(calls, || hedger.should_hedge(black_box(&mut ticket)))
    });
}

fn main() {
    let opts = Opts::from_env();
    let load = || {
        std::fs::read_to_string("/proc/loadavg")
            .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|_| "unknown".into())
    };
    let sets: Vec<DataSet> = DATA_SETS
        .into_iter()
        .filter(|s| opts.data.as_deref().is_none_or(|d| d == s.name()))
        .collect();
    println!(
        "ratios: {} rounds per row{}, a CPU-clock read costs {} ns, load average before: {}",
        opts.rounds,
        if opts.smoke { " (smoke run)" } else { "" },
        clock_cost().as_nanos(),
        load()
    );
    let started = Instant::now();
    let mut runner = Runner {
        opts,
        rows: Vec::new(),
    };
    for set in sets {
        run(&mut runner, set);
    }
    println!();
    runner.print();
    println!(
        "\n{} rows in {:.1} s, load average after: {}",
        runner.rows.len(),
        started.elapsed().as_secs_f64(),
        load()
    );
}
