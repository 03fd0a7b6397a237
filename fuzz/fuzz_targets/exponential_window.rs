//! The auto-scaling window under arbitrary operations, on one thread: windows of 2 to 64
//! buckets and 2 to 8 slots, built from arbitrary configurations (an invalid one is a
//! typed error, the one the configuration's docs name), record any `u64`, any `f64` bit
//! pattern, any duration, at the clock's time or at a stale or future reading, alone or
//! by the thousand (to fill a bucket); a manual clock creeps, steps by intervals, leaps
//! by up to 2^64 ns and goes back; maintenance, quantile queries and merges of the
//! snapshots into sketches of other sizes come in between.
//!
//! After every step the window conserves every value it accepted: `count() + expired() +
//! saturated()` is the number of records accepted (the documented equality at a quiet
//! moment; every moment is quiet here). Its snapshot holds its zero count plus its
//! buckets, its quantiles lie in [min, max] and rise with `q`, and its scale (and the
//! window's) is in OpenTelemetry's -10..=8, the snapshot's no finer than the current
//! slot's. The cached bounds are `None` past the configured quantiles, without a
//! configuration and below `min_count`; with a refresh asked by every record
//! (`refresh_records` 1) a maintenance leaves them current. While nothing expired,
//! clamped (but infinities), saturated or raced, the window holds exactly the values
//! recorded: its count, zeros, minimum and maximum are theirs, its quantiles within the
//! snapshot's relative accuracy of the exact ones, and the cached bounds at or above
//! them, by at most one bucket.
//!
//! Not checked here (not public): the hedger's rank queries (`rank_and_count_u64`) and
//! `maintain_at`, which the unit tests cover; which values a query sees once their
//! interval left the window but no rotation ran yet.
#![no_main]

mod common;

use core::time::Duration;

use libfuzzer_sys::arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use tailguard::clock::{Clock, Instant, ManualClock};
use tailguard::sketch::ExponentialSketch;
use tailguard::window::{ExponentialWindow, WindowConfig, WindowCounter, WindowError};

type Tiny<'c> = ExponentialWindow<&'c ManualClock, u16, 2, 2>;
type Small<'c> = ExponentialWindow<&'c ManualClock, u16, 5, 5>;
type Mid<'c> = ExponentialWindow<&'c ManualClock, u16, 16>;
type Wide<'c> = ExponentialWindow<&'c ManualClock, u32, 64, 8>;

/// Values an accumulating sketch may hold before the harness stops merging into it.
const ROOM: u64 = 1 << 62;

/// Where a cached bound's encoding saturates (`window::cache::encode_bound`: a 26-bit
/// significand shifted by at most 31).
const BOUND_LIMIT: u64 = ((1 << 26) - 1) << 31;

/// A quantile to cache or to query: a round one, or any bits.
#[derive(Debug, Clone, Copy)]
enum Q {
    Fraction(u16),
    Bits(u64),
}

impl Q {
    fn value(self) -> f64 {
        match self {
            Q::Fraction(k) => f64::from(k) / f64::from(u16::MAX),
            Q::Bits(b) => f64::from_bits(b),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Length {
    /// 0 to 15 ns: below 8 is refused.
    Tiny(u8),
    Nanos(u16),
    Millis(u16),
    Any(u64),
    Max,
}

impl Length {
    fn duration(self) -> Duration {
        match self {
            Length::Tiny(n) => Duration::from_nanos(u64::from(n % 16)),
            Length::Nanos(n) => Duration::from_nanos(u64::from(n)),
            Length::Millis(n) => Duration::from_millis(u64::from(n)),
            Length::Any(n) => Duration::from_nanos(n),
            Length::Max => Duration::MAX,
        }
    }
}

/// A reading relative to the clock's.
#[derive(Debug, Clone, Copy)]
enum When {
    Now,
    Behind(u32),
    Ahead(u32),
    Any(u64),
}

impl When {
    fn at(self, clock: &ManualClock) -> Instant {
        let now = clock.now().as_nanos();
        Instant::from_nanos(match self {
            When::Now => now,
            When::Behind(d) => now.saturating_sub(u64::from(d)),
            When::Ahead(d) => now.saturating_add(u64::from(d)),
            When::Any(t) => t,
        })
    }
}

/// How a window is built.
#[derive(Debug, Clone)]
struct Build {
    /// `new`, `with_origin`, `with_config` or `with_config_and_origin`.
    how: u8,
    interval: Length,
    origin: When,
    /// `None`: the default (p90); else `with_quantiles` of these (0 or 3 are refused).
    quantiles: Option<Vec<Q>>,
    refresh_records: Option<u32>,
    refresh_interval: Length,
    warmup: Option<u32>,
    min_count: Option<u32>,
    rotate: bool,
    /// `with_rotate_on_record` on the built window, overriding the configuration's.
    rotate_after: Option<bool>,
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Nanos(u16),
    /// Whole intervals of a window, plus a few nanoseconds.
    Intervals(u8, u8, u8),
    Any(u64),
    /// 2^40 ns and up.
    Leap(u8),
    Back(u32),
    Set(u64),
}

#[derive(Debug, Clone)]
enum Op {
    RecordU64(u8, u64),
    /// Near the values already recorded: `v << shift`.
    RecordNear(u8, u16, u8),
    RecordF64(u8, u64),
    RecordDuration(u8, u64, u32),
    RecordAt(u8, When, u64),
    /// The same value many times: fills a bucket up to its limit.
    RecordMany(u8, u64, u16),
    Clock(Step),
    Maintain(u8),
    Query(u8, Q),
    /// A window's snapshot into an accumulator (or, past the third, a clear of one).
    Merge(u8, u8),
    Rebuild(u8, Build),
}

// Drawn by hand (the fuzz crate has no `derive` feature of `arbitrary`): a variant byte,
// then its fields.

impl<'a> Arbitrary<'a> for Q {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(if u.arbitrary()? {
            Q::Fraction(u.arbitrary()?)
        } else {
            Q::Bits(u.arbitrary()?)
        })
    }
}

impl<'a> Arbitrary<'a> for Length {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match u.int_in_range(0u8..=4)? {
            0 => Length::Tiny(u.arbitrary()?),
            1 => Length::Nanos(u.arbitrary()?),
            2 => Length::Millis(u.arbitrary()?),
            3 => Length::Any(u.arbitrary()?),
            _ => Length::Max,
        })
    }
}

impl<'a> Arbitrary<'a> for When {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match u.int_in_range(0u8..=3)? {
            0 => When::Now,
            1 => When::Behind(u.arbitrary()?),
            2 => When::Ahead(u.arbitrary()?),
            _ => When::Any(u.arbitrary()?),
        })
    }
}

impl<'a> Arbitrary<'a> for Build {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let quantiles = if u.arbitrary()? {
            let n = u.int_in_range(0..=3usize)?;
            Some((0..n).map(|_| Q::arbitrary(u)).collect::<Result<_>>()?)
        } else {
            None
        };
        // Small counts often: refreshes asked by every record, a short warm-up.
        let small = |u: &mut Unstructured<'a>| -> Result<Option<u32>> {
            Ok(match u.int_in_range(0u8..=2)? {
                0 => None,
                1 => Some(u32::from(u.int_in_range(0u8..=40)?)),
                _ => Some(u.arbitrary()?),
            })
        };
        Ok(Build {
            how: u.arbitrary()?,
            interval: u.arbitrary()?,
            origin: u.arbitrary()?,
            quantiles,
            refresh_records: small(u)?,
            refresh_interval: u.arbitrary()?,
            warmup: small(u)?,
            min_count: small(u)?,
            rotate: u.arbitrary()?,
            rotate_after: u.arbitrary()?,
        })
    }
}

impl<'a> Arbitrary<'a> for Step {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(match u.int_in_range(0u8..=7)? {
            0 | 1 => Step::Nanos(u.arbitrary()?),
            2 | 3 => Step::Intervals(u.arbitrary()?, u.arbitrary()?, u.arbitrary()?),
            4 => Step::Any(u.arbitrary()?),
            5 => Step::Leap(u.arbitrary()?),
            6 => Step::Back(u.arbitrary()?),
            _ => Step::Set(u.arbitrary()?),
        })
    }
}

impl<'a> Arbitrary<'a> for Op {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let which: u8 = u.arbitrary()?;
        Ok(match u.int_in_range(0u8..=15)? {
            0 | 1 => Op::RecordU64(which, u.arbitrary()?),
            2 | 3 => Op::RecordNear(which, u.arbitrary()?, u.arbitrary()?),
            4 => Op::RecordF64(which, u.arbitrary()?),
            5 => Op::RecordDuration(which, u.arbitrary()?, u.arbitrary()?),
            6 => Op::RecordAt(which, u.arbitrary()?, u.arbitrary()?),
            7 => Op::RecordMany(which, u.arbitrary()?, u.arbitrary()?),
            8 | 9 => Op::Clock(u.arbitrary()?),
            10 | 11 => Op::Maintain(which),
            12 => Op::Query(which, u.arbitrary()?),
            13 => Op::Merge(which, u.arbitrary()?),
            _ => Op::Rebuild(which, u.arbitrary()?),
        })
    }
}

/// Values held: (value, its floor as a whole number, times).
type Held = Vec<(f64, u64, u64)>;

/// What the harness knows a window holds.
#[derive(Debug)]
struct Model {
    interval_ns: u64,
    /// The configuration it was built with, if any.
    config: Option<WindowConfig>,
    accepted: u64,
    infinities: u64,
    /// While nothing was expired, clamped (but infinities), saturated or raced: the values
    /// held, as (value, its floor as a whole number, times).
    values: Option<Held>,
}

impl Model {
    fn new(interval_ns: u64, config: Option<WindowConfig>) -> Self {
        Model {
            interval_ns,
            config,
            accepted: 0,
            infinities: 0,
            values: Some(Vec::new()),
        }
    }

    fn accept_u64(&mut self, v: u64, times: u64) {
        self.accepted += times;
        if let Some(values) = &mut self.values {
            values.push((v as f64, v, times));
        }
    }

    fn accept_f64(&mut self, v: f64) {
        self.accepted += 1;
        let v = if v == f64::INFINITY {
            self.infinities += 1;
            f64::MAX // as the docs say
        } else {
            v.abs() // -0.0 is a zero
        };
        if v > 0.0 && v < f64::MIN_POSITIVE {
            // A subnormal's key (the float's top 32 bits) keeps fewer than 20 bits of it,
            // none below 2^-1042: the window's minimum and maximum are then not within a
            // millionth (zero, below 2^-1042), and the quantiles clamped to them neither.
            self.values = None;
        }
        if let Some(values) = &mut self.values {
            values.push((v, v.floor() as u64, 1));
        }
    }
}

/// The nanoseconds of `d`, saturating (what the crate's conversion does).
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The error the docs promise for building `b`, if any.
fn expected_error(b: &Build) -> Option<WindowError> {
    let with_config = b.how % 4 >= 2;
    if nanos(b.interval.duration()) < 8 {
        return Some(WindowError::InvalidInterval);
    }
    if !with_config {
        return None;
    }
    let qs: Vec<f64> = match &b.quantiles {
        None => vec![0.9],
        Some(qs) => qs.iter().map(|q| q.value()).collect(),
    };
    if qs.is_empty() || qs.len() > 2 {
        return Some(WindowError::QuantileCount);
    }
    // (0, 1) exclusive; NaN, -0.0 and the negatives outside.
    if qs.iter().any(|&q| !(q > 0.0 && q < 1.0)) {
        return Some(WindowError::InvalidQuantile);
    }
    None
}

fn config_of(b: &Build) -> WindowConfig {
    let mut c = WindowConfig::new()
        .with_interval(b.interval.duration())
        .with_refresh_interval(b.refresh_interval.duration())
        .with_rotate_on_record(b.rotate);
    if let Some(qs) = &b.quantiles {
        let qs: Vec<f64> = qs.iter().map(|q| q.value()).collect();
        c = c.with_quantiles(&qs);
    }
    if let Some(r) = b.refresh_records {
        c = c.with_refresh_records(r);
    }
    if let Some(w) = b.warmup {
        c = c.with_warmup_records(w);
    }
    if let Some(m) = b.min_count {
        c = c.with_min_count(m);
    }
    c
}

/// Builds a window as `b` says: the error the docs promise, or the window and its model.
fn build<'c, K: WindowCounter, const B: usize, const S: usize>(
    clock: &'c ManualClock,
    b: &Build,
) -> Option<(ExponentialWindow<&'c ManualClock, K, B, S>, Model)> {
    let origin = b.origin.at(clock);
    let interval = b.interval.duration();
    let config = config_of(b);
    let built = match b.how % 4 {
        0 => ExponentialWindow::new(clock, interval),
        1 => ExponentialWindow::with_origin(clock, interval, origin),
        2 => ExponentialWindow::with_config(clock, config),
        _ => ExponentialWindow::with_config_and_origin(clock, config, origin),
    };
    let expected = expected_error(b);
    match built {
        Err(e) => {
            assert_eq!(Some(e), expected, "{b:?}");
            assert!(!e.to_string().is_empty());
            None
        }
        Ok(mut w) => {
            assert_eq!(expected, None, "{b:?} was built");
            if let Some(rotate) = b.rotate_after {
                w = w.with_rotate_on_record(rotate);
            }
            let config = (b.how % 4 >= 2).then_some(config);
            Some((w, Model::new(nanos(interval), config)))
        }
    }
}

/// The sorted values and their total, if the model knows them.
fn sorted(m: &Model) -> Option<(Held, u64)> {
    let mut values = m.values.clone()?;
    // Floors first: the order of the values' too (both are monotone), ties broken by value.
    values.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.total_cmp(&b.0)));
    let n = values.iter().map(|v| v.2).sum();
    Some((values, n))
}

/// The value of rank `rank` (from 0).
fn at_rank(values: &[(f64, u64, u64)], rank: u64) -> (f64, u64) {
    let mut seen = 0;
    for &(v, floor, times) in values {
        seen += times;
        if seen > rank {
            return (v, floor);
        }
    }
    unreachable!("rank {rank} past the values")
}

/// The window's promises, after any step; `maintained`: the step was a maintenance.
fn check<K: WindowCounter, const B: usize, const S: usize>(
    w: &ExponentialWindow<&ManualClock, K, B, S>,
    m: &mut Model,
    maintained: bool,
) {
    let s = w.snapshot();
    let (expired, saturated) = (u64::from(w.expired()), u64::from(w.saturated()));
    assert_eq!(
        s.count() + expired + saturated,
        m.accepted,
        "count + expired + saturated is every record: {w:?} {s:?}"
    );
    assert_eq!(w.count(), s.count());
    common::assert_exponential_invariants(&s);
    // (The snapshot's scale is the coarsest of the slots holding buckets: the current
    // slot, holding none, may be coarser, a recycled slot taking margins.)
    if let Some(scale) = w.scale() {
        assert!((-10..=8).contains(&scale), "{w:?}");
    }
    assert!(u64::from(w.clamped()) >= m.infinities, "{w:?}");
    let _ = w.rotations();
    let _ = w.rescales();

    // The cached bounds.
    let configured = m.config.map_or(0, |c| c.quantiles().len());
    let trusted = m.config.map_or(u32::MAX, |c| c.min_count().max(1));
    for i in 0..3 {
        let bound = w.cached_upper_bound_of(i);
        if i >= configured {
            assert_eq!(bound, None, "quantile {i} of {configured}");
        }
        if bound.is_some() {
            assert!(w.cached_count() >= trusted, "{w:?}");
        }
    }
    assert_eq!(w.cached_upper_bound(), w.cached_upper_bound_of(0));
    // Every record asks for a refresh (a bucket's count is always a multiple of 1), and
    // so does a rotation: a maintenance leaves the bounds current.
    let current = maintained && m.config.is_some_and(|c| c.refresh_records() == 1);
    if current {
        let n = u32::try_from(s.count()).unwrap_or(u32::MAX);
        assert_eq!(w.cached_count(), n, "{w:?}");
        if n < trusted {
            assert_eq!(w.cached_upper_bound(), None);
        }
    }

    // The exact values, while the window holds them all in their buckets.
    if m.values.is_some()
        && (expired > 0 || saturated > 0 || w.raced() > 0 || u64::from(w.clamped()) > m.infinities)
    {
        m.values = None;
    }
    let Some((values, n)) = sorted(m) else {
        return;
    };
    assert_eq!(s.count(), n);
    let zeros: u64 = values.iter().filter(|v| v.0 == 0.0).map(|v| v.2).sum();
    assert_eq!(s.zero_count(), zeros, "{s:?}");
    if n == 0 {
        return;
    }
    let accuracy = s.relative_accuracy();
    let near = |got: f64, exact: f64, tolerance: f64| {
        if exact == 0.0 {
            got == 0.0
        } else {
            (got / exact - 1.0).abs() <= tolerance
        }
    };
    let (min, max) = (at_rank(&values, 0).0, at_rank(&values, n - 1).0);
    assert!(near(s.min().unwrap(), min, 1e-6), "min {min}: {s:?}");
    assert!(near(s.max().unwrap(), max, 1e-6), "max {max}: {s:?}");
    for q in [0.0, 0.1, 0.5, 0.9, 0.99, 1.0] {
        let exact = at_rank(&values, (q * (n - 1) as f64) as u64).0;
        let got = s.quantile(q).unwrap().unwrap();
        assert!(
            near(got, exact, accuracy * (1.0 + 1e-9)),
            "q {q}: {got} vs {exact} at {accuracy}: {s:?}"
        );
    }
    if current && n >= u64::from(trusted) {
        let config = m.config.unwrap();
        for (i, &q) in config.quantiles().iter().enumerate() {
            let (exact, floor) = at_rank(&values, (q * (n - 1) as f64) as u64);
            let bound = w.cached_upper_bound_of(i).expect("a current bound");
            // The upper edge of the quantile's bucket: at or above every whole number in
            // it, a bucket above the quantile at most (26 significant bits, rounded up;
            // the encoding saturates at about 4.5 years of nanoseconds, which
            // `cached_upper_bound`'s docs do not say).
            assert!(
                bound >= floor.min(BOUND_LIMIT),
                "bound {bound} below {exact} (q {q})"
            );
            let most = exact * (1.0 + accuracy) / (1.0 - accuracy) * (1.0 + 1e-7) + 1.0;
            assert!(bound as f64 <= most, "bound {bound} above {exact} (q {q})");
        }
    }
}

struct Windows<'c> {
    tiny: (Tiny<'c>, Model),
    small: (Small<'c>, Model),
    mid: (Mid<'c>, Model),
    wide: (Wide<'c>, Model),
    acc: (
        ExponentialSketch<u32, 2>,
        ExponentialSketch<u32, 16>,
        ExponentialSketch<u32, 160>,
    ),
    scales: [i32; 3],
}

macro_rules! on {
    ($ws:expr, $which:expr, |$w:ident, $m:ident| $body:expr) => {
        match $which % 4 {
            0 => {
                let ($w, $m) = (&mut $ws.tiny.0, &mut $ws.tiny.1);
                $body
            }
            1 => {
                let ($w, $m) = (&mut $ws.small.0, &mut $ws.small.1);
                $body
            }
            2 => {
                let ($w, $m) = (&mut $ws.mid.0, &mut $ws.mid.1);
                $body
            }
            _ => {
                let ($w, $m) = (&mut $ws.wide.0, &mut $ws.wide.1);
                $body
            }
        }
    };
}

macro_rules! on_acc {
    ($ws:expr, $into:expr, |$a:ident, $scale:ident| $body:expr) => {
        match $into % 3 {
            0 => {
                let ($a, $scale) = (&mut $ws.acc.0, &mut $ws.scales[0]);
                $body
            }
            1 => {
                let ($a, $scale) = (&mut $ws.acc.1, &mut $ws.scales[1]);
                $body
            }
            _ => {
                let ($a, $scale) = (&mut $ws.acc.2, &mut $ws.scales[2]);
                $body
            }
        }
    };
}

/// Merges snapshot `s` into accumulator `a`: conserved, never finer than either.
fn merge_into<const B: usize, const B2: usize>(
    a: &mut ExponentialSketch<u32, B>,
    last_scale: &mut i32,
    s: &ExponentialSketch<u32, B2>,
) {
    let held = |x: &ExponentialSketch<u32, B>| x.count().saturating_add(x.saturated());
    let before = held(a);
    let added = s.count().saturating_add(s.saturated());
    if before.saturating_add(added) >= ROOM {
        return;
    }
    a.merge(s);
    assert_eq!(held(a), before + added, "{a:?} {s:?}");
    if !s.is_empty() {
        assert!(a.scale() <= s.scale(), "a merge cannot refine");
    }
    assert!(a.scale() <= *last_scale, "the scale rose");
    *last_scale = a.scale();
    common::assert_exponential_invariants(a);
}

fn record_into<K: WindowCounter, const B: usize, const S: usize>(
    w: &ExponentialWindow<&ManualClock, K, B, S>,
    m: &mut Model,
    clock: &ManualClock,
    op: &Op,
) {
    match *op {
        Op::RecordU64(_, v) => {
            w.record_u64(v);
            m.accept_u64(v, 1);
        }
        Op::RecordNear(_, v, shift) => {
            let v = u64::from(v) << (shift % 49);
            w.record_u64(v);
            m.accept_u64(v, 1);
        }
        Op::RecordF64(_, bits) => {
            let v = f64::from_bits(bits);
            match w.record(v) {
                Ok(()) => m.accept_f64(v),
                Err(_) => assert!(v.is_nan() || v < 0.0, "{v:?} refused"),
            }
        }
        Op::RecordDuration(_, secs, subsec) => {
            let d = Duration::new(secs, subsec % 1_000_000_000);
            w.record_duration(d);
            m.accept_u64(nanos(d), 1);
        }
        Op::RecordAt(_, when, v) => {
            w.record_u64_at(when.at(clock), v);
            m.accept_u64(v, 1);
        }
        Op::RecordMany(_, v, times) => {
            for _ in 0..times {
                w.record_u64(v);
            }
            m.accept_u64(v, u64::from(times));
        }
        _ => unreachable!(),
    }
}

fn step<'c>(ws: &mut Windows<'c>, clock: &'c ManualClock, op: &Op) {
    match op {
        Op::RecordU64(which, ..)
        | Op::RecordNear(which, ..)
        | Op::RecordF64(which, ..)
        | Op::RecordDuration(which, ..)
        | Op::RecordAt(which, ..)
        | Op::RecordMany(which, ..) => on!(ws, which, |w, m| {
            let before = (w.expired(), w.rotations(), w.rescales());
            record_into(w, m, clock, op);
            if (w.rotations(), w.rescales()) == (before.1, before.2) {
                // On one thread no clear races a record: only its own rotation or rescale
                // expires values.
                assert_eq!(w.expired(), before.0, "a record expired values: {w:?}");
            }
            check(w, m, false);
        }),
        Op::Clock(s) => {
            let now = clock.now().as_nanos();
            match *s {
                Step::Nanos(n) => clock.advance(Duration::from_nanos(u64::from(n))),
                Step::Intervals(which, k, extra) => {
                    let interval = on!(ws, which, |_w, m| m.interval_ns);
                    let d = interval
                        .saturating_mul(u64::from(k % 16))
                        .saturating_add(u64::from(extra));
                    clock.advance(Duration::from_nanos(d));
                }
                Step::Any(n) => clock.advance(Duration::from_nanos(n)),
                Step::Leap(k) => clock.advance(Duration::from_nanos(1 << (40 + k % 24))),
                Step::Back(n) => clock.set(Instant::from_nanos(now.saturating_sub(u64::from(n)))),
                Step::Set(t) => clock.set(Instant::from_nanos(t)),
            }
        }
        Op::Maintain(which) => on!(ws, which, |w, m| {
            w.maintain();
            check(w, m, true);
        }),
        Op::Query(which, q) => on!(ws, which, |w, m| {
            let q = q.value();
            let got = w.quantile(q);
            assert_eq!(got.is_ok(), (0.0..=1.0).contains(&q), "quantile({q:?})");
            if let Ok(v) = got {
                // Nothing moved since: the snapshot's answer.
                assert_eq!(v, w.snapshot().quantile(q).unwrap());
                assert_eq!(v.is_some(), w.count() > 0);
            }
            check(w, m, false);
        }),
        Op::Merge(which, into) => {
            if (3..6).contains(into) {
                on_acc!(ws, into, |a, scale| {
                    a.clear();
                    *scale = 8;
                });
            } else {
                on!(ws, which, |w, _m| {
                    let snapshot = w.snapshot();
                    on_acc!(ws, into, |a, scale| merge_into(a, scale, &snapshot));
                });
            }
        }
        Op::Rebuild(which, b) => match which % 4 {
            0 => {
                if let Some(built) = build(clock, b) {
                    ws.tiny = built;
                }
            }
            1 => {
                if let Some(built) = build(clock, b) {
                    ws.small = built;
                }
            }
            2 => {
                if let Some(built) = build(clock, b) {
                    ws.mid = built;
                }
            }
            _ => {
                if let Some(built) = build(clock, b) {
                    ws.wide = built;
                }
            }
        },
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let clock = ManualClock::new();
    let config = WindowConfig::new().with_interval(Duration::from_millis(1));
    let ms = 1_000_000;
    let mut ws = Windows {
        tiny: (
            Tiny::new(&clock, Duration::from_nanos(100)).unwrap(),
            Model::new(100, None),
        ),
        // Records that leave rotations and rescales to maintenance; every one refreshes.
        small: (
            Small::with_config(
                &clock,
                config.with_refresh_records(1).with_rotate_on_record(false),
            )
            .unwrap(),
            Model::new(ms, Some(config.with_refresh_records(1))),
        ),
        mid: (
            Mid::with_config(
                &clock,
                config.with_quantiles(&[0.5, 0.99]).with_refresh_records(1),
            )
            .unwrap(),
            Model::new(
                ms,
                Some(config.with_quantiles(&[0.5, 0.99]).with_refresh_records(1)),
            ),
        ),
        wide: (
            Wide::with_config(&clock, WindowConfig::new()).unwrap(),
            Model::new(30_000 * ms, Some(WindowConfig::new())),
        ),
        acc: Default::default(),
        scales: [8; 3],
    };
    while !u.is_empty() {
        let Ok(op) = Op::arbitrary(&mut u) else {
            break;
        };
        step(&mut ws, &clock, &op);
    }
    check(&ws.tiny.0, &mut ws.tiny.1, false);
    check(&ws.small.0, &mut ws.small.1, false);
    check(&ws.mid.0, &mut ws.mid.1, false);
    check(&ws.wide.0, &mut ws.wide.1, false);
});
