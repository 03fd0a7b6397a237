//! The fixed-range rotating `Window`, driven through arbitrary sequences of records (any
//! `u64`, any `f64` bits, durations, records at a stale or future `now`), queries,
//! maintenance, refreshes, resets and clock readings (0, the last nanosecond, going back a
//! little or by years, leaps of any size), for intervals from 8 ns to `Duration::MAX` and
//! 2 to 8 slots, against a model that keeps which records are in which interval and which
//! have expired under the rules of docs/window.md ("Rotation", "Clocks that jump", "The
//! cached quantile"). After every step: `count + expired + saturated` is the number of
//! records, and the count, the quantiles (rank `floor(q (n - 1))`, within the relative
//! accuracy), the ranks and the cached quantile's freshness are what the docs promise.
//!
//! Where the rules leave a choice (a record that does not rotate, made more than one
//! interval ahead of the published one, may be kept or expired), the model only counts the
//! records until the window is emptied, and checks conservation meanwhile.
//!
//! `TAILGUARD_MODEL_CASES` sets the number of property cases (default 48 per layout and
//! slot count); `TAILGUARD_MODEL_SEED` the seed (fixed by default, so a run is repeatable).

use core::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use tailguard::clock::{Clock, Instant, ManualClock};
use tailguard::sketch::{presets, BinLayout, IndexMapping};
use tailguard::window::{Window, WindowConfig};

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// How often each kind of check ran with something to check (`TAILGUARD_MODEL_STATS=1`
/// prints them), so that a model that stops checking shows.
static CHECKED: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];
const FULL: usize = 0;
const MUST_REFRESH: usize = 1;
const CACHED_VALUE: usize = 2;
const QUANTILE: usize = 3;
const RANK: usize = 4;
const HALF: usize = 5;

fn checked(kind: usize) {
    CHECKED[kind].fetch_add(1, Relaxed);
}

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000 * MS;
const YEAR: u64 = 365 * 86_400 * SEC;
/// The refresh clock's tick (docs/window.md: about 1 ms).
const REFRESH_UNIT: u64 = 1 << 20;

fn cases() -> u32 {
    std::env::var("TAILGUARD_MODEL_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

fn seed() -> u64 {
    std::env::var("TAILGUARD_MODEL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x7a11_6a2d)
}

fn proptest_config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        rng_seed: RngSeed::Fixed(seed()),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[derive(Debug, Clone, Copy)]
struct Cfg {
    interval: Duration,
    quantiles: ([f64; 2], usize),
    refresh_records: u32,
    refresh_interval: Duration,
    warmup: u32,
    min_count: u32,
    rotate: bool,
}

impl Cfg {
    fn config(&self) -> WindowConfig {
        WindowConfig::new()
            .with_interval(self.interval)
            .with_quantiles(&self.quantiles.0[..self.quantiles.1])
            .with_refresh_records(self.refresh_records)
            .with_refresh_interval(self.refresh_interval)
            .with_warmup_records(self.warmup)
            .with_min_count(self.min_count)
            .with_rotate_on_record(self.rotate)
    }
}

fn cfg() -> impl Strategy<Value = Cfg> {
    let interval = prop_oneof![
        Just(Duration::from_nanos(8)),
        Just(Duration::from_nanos(9)),
        (8u64..10_000).prop_map(Duration::from_nanos),
        Just(Duration::from_millis(1)),
        Just(Duration::from_secs(30)),
        Just(Duration::from_nanos(YEAR)),
        Just(Duration::from_nanos(u64::MAX)),
        Just(Duration::MAX),
    ];
    let quantiles = prop_oneof![
        (1e-9f64..1.0).prop_map(|q| ([q, q], 1)),
        Just(([0.5, 0.99], 2)),
        Just(([0.9, 0.9], 1)),
        Just(([f64::MIN_POSITIVE, 1.0 - f64::EPSILON / 2.0], 2)),
    ];
    // Mostly none by time, so that the record triggers alone keep the cached quantile.
    let refresh_interval = prop_oneof![
        5 => Just(Duration::ZERO),
        1 => Just(Duration::from_nanos(1)),
        1 => Just(Duration::from_millis(3)),
        1 => Just(Duration::from_secs(1)),
        1 => Just(Duration::from_secs(20 * 86_400)),
        1 => Just(Duration::MAX),
    ];
    (
        interval,
        quantiles,
        prop_oneof![Just(0u32), Just(1), Just(3), Just(1024), Just(u32::MAX)],
        refresh_interval,
        prop_oneof![3 => Just(0u32), 1 => 0u32..40, 1 => Just(u32::MAX)],
        prop_oneof![Just(0u32), Just(1), 2u32..10],
        any::<bool>(),
    )
        .prop_map(
            |(
                interval,
                quantiles,
                refresh_records,
                refresh_interval,
                warmup,
                min_count,
                rotate,
            )| {
                Cfg {
                    interval,
                    quantiles,
                    refresh_records,
                    refresh_interval,
                    warmup,
                    min_count,
                    rotate,
                }
            },
        )
}

#[derive(Debug, Clone, Copy)]
enum Value {
    U64(u64),
    Bits(u64),
    Float(f64),
    Dur(Duration),
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => (1u64..10_000 * MS).prop_map(Value::U64),
        // Repeated values: bins past their first powers of two, whose records do not ask.
        6 => prop_oneof![Just(5 * MS), Just(5 * MS + 1), Just(7 * MS), Just(900)].prop_map(Value::U64),
        1 => prop_oneof![Just(0u64), Just(1), Just(u64::MAX), any::<u64>()].prop_map(Value::U64),
        1 => any::<u64>().prop_map(Value::Bits),
        2 => prop_oneof![
            1e3f64..1e10,
            Just(f64::INFINITY),
            Just(-0.0),
            Just(f64::NAN),
            Just(-1.0),
            Just(f64::MAX),
            Just(f64::MIN_POSITIVE),
        ]
        .prop_map(Value::Float),
        1 => prop_oneof![
            (0u64..SEC).prop_map(Duration::from_nanos),
            Just(Duration::MAX),
        ]
        .prop_map(Value::Dur),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Forward(u64),
    Back(u64),
    Set(u64),
    Record(Value),
    /// `record_duration_at` a reading this far behind (negative: ahead of) the clock.
    RecordAt(i128, Duration),
    Maintain,
    Refresh,
    Quantile(f64),
    Rank(u64),
    Snapshot,
    Reset(Cfg),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u64..20 * MS).prop_map(Op::Forward),
        2 => prop_oneof![0u64..100, 1u64..100_000, (1u64..10).prop_map(|k| k * 30 * SEC)]
            .prop_map(Op::Forward),
        1 => (0u64..20 * YEAR).prop_map(Op::Forward),
        // Gaps of one to a few eras (2^32 ns) of the coarse clock: the horizon of 8 ns ticks.
        1 => ((1u64 << 31)..(1u64 << 35)).prop_map(Op::Forward),
        1 => ((1u64 << 31)..(1u64 << 35)).prop_map(Op::Back),
        1 => prop_oneof![0u64..200, 0u64..60 * SEC, 0u64..20 * YEAR].prop_map(Op::Back),
        1 => prop_oneof![
            Just(0u64),
            Just(u64::MAX),
            (u64::MAX - 100 * SEC)..=u64::MAX,
            any::<u64>()
        ]
        .prop_map(Op::Set),
        12 => value().prop_map(Op::Record),
        2 => (
            prop_oneof![-100i128..100, 0i128..(60 * SEC) as i128, -(YEAR as i128)..(20 * YEAR) as i128],
            (0u64..SEC).prop_map(Duration::from_nanos)
        )
            .prop_map(|(back, d)| Op::RecordAt(back, d)),
        3 => Just(Op::Maintain),
        1 => Just(Op::Refresh),
        2 => prop_oneof![Just(0.0), Just(1.0), Just(0.5), 0.0f64..=1.0].prop_map(Op::Quantile),
        2 => prop_oneof![Just(0u64), 0u64..10_000 * MS, Just(5 * MS), Just(u64::MAX)].prop_map(Op::Rank),
        1 => Just(Op::Snapshot),
        1 => cfg().prop_map(Op::Reset),
    ]
}

/// What the docs say the window holds.
#[derive(Debug)]
struct Model {
    cfg: Cfg,
    origin: u64,
    unit: u64,
    slots: i128,
    /// The published interval.
    epoch: u64,
    /// The values held, with their intervals.
    held: Vec<(u64, f64)>,
    expired: u64,
    total: u64,
    /// A record went where the docs leave open (kept or expired): only conservation is
    /// checked until the window empties.
    open: bool,
    /// The refresh clock's readings of every maintenance since the window was (re)built:
    /// the last refresh was at one of them.
    maintained: Option<(u64, u64)>,
    /// A record rotated the window since the last maintenance or refresh: the cached
    /// quantile is withdrawn ("a rotation withdraws it at once").
    withdrawn: bool,
}

impl Model {
    fn new(cfg: Cfg, origin: u64) -> Self {
        Model {
            cfg,
            origin,
            unit: nanos(cfg.interval).max(8),
            slots: 0,
            epoch: 0,
            held: Vec::new(),
            expired: 0,
            total: 0,
            open: false,
            maintained: None,
            withdrawn: true,
        }
    }

    /// The interval of reading `t`: a reading before the origin counts as the origin.
    fn interval(&self, t: u64) -> u64 {
        t.saturating_sub(self.origin) / self.unit
    }

    fn refresh_tick(&self, t: u64) -> u64 {
        t.saturating_sub(self.origin) / REFRESH_UNIT
    }

    /// -1 behind the window, 0 in it, 1 ahead of the published interval.
    fn place(&self, r: u64) -> i8 {
        let d = i128::from(r) - i128::from(self.epoch);
        if d > 0 {
            1
        } else if d > 1 - self.slots {
            0
        } else {
            -1
        }
    }

    fn clear_all(&mut self, r: u64) {
        self.expired += self.held.len() as u64;
        self.held.clear();
        // Every slot cleared: whatever was open is expired.
        self.expired = self.total;
        self.open = false;
        self.epoch = r;
    }

    /// The rotation to reading `r` ahead of the window, or the restart behind it.
    fn rotate(&mut self, r: u64) {
        match self.place(r) {
            0 => {}
            1 => {
                let d = i128::from(r) - i128::from(self.epoch);
                if d >= self.slots {
                    self.clear_all(r);
                } else {
                    let first = i128::from(r) - (self.slots - 2);
                    let before = self.held.len();
                    self.held.retain(|&(i, _)| i128::from(i) >= first);
                    self.expired += (before - self.held.len()) as u64;
                    self.epoch = r;
                }
            }
            _ => self.clear_all(r),
        }
    }
}

fn exact_rank(sorted: &[f64], q: f64) -> f64 {
    let rank = (q * (sorted.len() - 1) as f64).floor() as usize;
    sorted[rank]
}

fn at_or_below(sorted: &[f64], x: f64) -> u64 {
    sorted.iter().filter(|&&v| v <= x).count() as u64
}

struct Run<'a, M: IndexMapping, const N: usize, const S: usize> {
    clock: &'a ManualClock,
    window: Window<&'a ManualClock, M, N, S>,
    model: Model,
    layout: BinLayout<M, N>,
    step: usize,
}

impl<'a, M: IndexMapping + Copy, const N: usize, const S: usize> Run<'a, M, N, S> {
    fn now(&self) -> u64 {
        self.clock.now().as_nanos()
    }

    /// What a maintenance does to the model at the clock's reading, and whether the
    /// docs say it must refresh (a rotation, warm-up, `refresh_interval` passed).
    fn maintain_model(&mut self, cached_before: u32) -> bool {
        let t = self.now();
        let r = self.model.interval(t);
        let rotates = self.model.place(r) != 0;
        self.model.rotate(r);
        let tick = self.model.refresh_tick(t);
        let every = nanos(self.model.cfg.refresh_interval) / REFRESH_UNIT;
        let every = if every == 0 && !self.model.cfg.refresh_interval.is_zero() {
            1
        } else {
            every
        };
        let by_time = every > 0
            && match self.model.maintained {
                None => true,
                Some((lo, hi)) => {
                    tick >= hi.saturating_add(every) || tick.saturating_add(every) <= lo
                }
            };
        self.model.maintained = Some(match self.model.maintained {
            None => (tick, tick),
            Some((lo, hi)) => (lo.min(tick), hi.max(tick)),
        });
        rotates || cached_before < self.model.cfg.warmup || by_time
    }

    fn sorted(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self.model.held.iter().map(|&(_, v)| v).collect();
        v.sort_by(f64::total_cmp);
        v
    }

    fn in_range(&self, x: f64) -> bool {
        x >= self.layout.min_trackable() && x < self.layout.max_trackable()
    }

    /// The checks that load and change nothing.
    fn light(&self) -> Result<(), TestCaseError> {
        let w = &self.window;
        prop_assert_eq!(
            w.cached_quantile().is_some(),
            w.cached_upper_bound().is_some()
        );
        prop_assert_eq!(w.cached_upper_bound(), w.cached_upper_bound_of(0));
        if self.model.cfg.quantiles.1 < 2 {
            prop_assert_eq!(w.cached_upper_bound_of(1), None);
        } else if let (Some(a), Some(b)) = (w.cached_upper_bound_of(0), w.cached_upper_bound_of(1))
        {
            prop_assert!(a <= b, "bounds fall with their quantiles: {} > {}", a, b);
        }
        if !self.model.open {
            prop_assert_eq!(u64::from(w.expired()), self.model.expired % (1 << 32));
        }
        prop_assert_eq!(w.saturated(), 0);
        if self.model.withdrawn {
            prop_assert_eq!(w.cached_quantile(), None, "withdrawn by a rotation");
            prop_assert_eq!(w.cached_upper_bound_of(1), None);
        }
        Ok(())
    }

    /// A maintenance and every check after it.
    fn full(&mut self, must_refresh: bool) -> Result<(), TestCaseError> {
        let w = &self.window;
        let count = w.count(); // a maintenance more: nothing left to do after the one before
        prop_assert_eq!(
            count + u64::from(w.expired()) + u64::from(w.saturated()),
            self.model.total,
            "conservation"
        );
        self.light()?;
        if self.model.open {
            return Ok(());
        }
        prop_assert_eq!(count, self.model.held.len() as u64, "count");
        if count > 0 {
            checked(FULL);
        }
        let cached = u64::from(w.cached_count());
        prop_assert!(cached <= count, "cached {} of {}", cached, count);
        if must_refresh {
            prop_assert_eq!(cached, count, "a refresh was due");
            checked(MUST_REFRESH);
        }
        let min_count = u64::from(self.model.cfg.min_count.max(1));
        prop_assert_eq!(
            w.cached_quantile().is_some(),
            cached >= min_count,
            "cached {}",
            cached
        );
        if self.model.cfg.refresh_records != 0 && count > 0 {
            prop_assert!(
                2 * cached > count,
                "cached {} of {}: more than half",
                cached,
                count
            );
            if cached < count {
                checked(HALF);
            }
        }
        let sorted = self.sorted();
        let alpha = w.relative_accuracy();
        if cached == count && count >= min_count {
            let (qs, k) = self.model.cfg.quantiles;
            let exact = exact_rank(&sorted, qs[0]);
            let got = w.cached_quantile().unwrap();
            if self.in_range(exact) && sorted.iter().all(|&v| v < self.layout.max_trackable()) {
                let slack = alpha * exact + exact * 2f64.powi(-24);
                prop_assert!((got - exact).abs() <= slack, "cached {} for {}", got, exact);
                checked(CACHED_VALUE);
            }
            for (i, &q) in qs[..k].iter().enumerate() {
                let exact = exact_rank(&sorted, q);
                let bound = w.cached_upper_bound_of(i).unwrap();
                if self.in_range(exact) && exact < 4.0e17 {
                    prop_assert!(
                        bound as f64 >= exact,
                        "bound {} below {} (q {})",
                        bound,
                        exact,
                        q
                    );
                }
            }
        }
        // Quantiles.
        for q in [0.0, 0.25, 0.5, 0.9, 0.99, 1.0] {
            let got = w.quantile(q).unwrap();
            if sorted.is_empty() {
                prop_assert_eq!(got, None);
                continue;
            }
            let got = got.unwrap();
            let exact = exact_rank(&sorted, q);
            if self.in_range(exact) && sorted.iter().all(|&v| v < self.layout.max_trackable()) {
                prop_assert!(
                    (got - exact).abs() <= alpha * exact,
                    "q {} got {} exact {} (alpha {})",
                    q,
                    got,
                    exact,
                    alpha
                );
                checked(QUANTILE);
            }
        }
        Ok(())
    }

    fn check_rank(&self, v: u64) -> Result<(), TestCaseError> {
        let w = &self.window;
        let rank = w.rank_u64(v);
        let count = self.model.held.len() as u64;
        if self.model.open {
            return Ok(());
        }
        prop_assert!(rank <= count);
        prop_assert_eq!(w.rank(f64::INFINITY).unwrap(), count);
        prop_assert_eq!(w.rank(-1.0).unwrap(), 0);
        prop_assert!(w.rank(f64::NAN).is_err());
        let sorted = self.sorted();
        let x = v as f64;
        let alpha = w.relative_accuracy();
        let u = x * (1.0 + alpha) / (1.0 - alpha) * (1.0 + 1e-9);
        // Below the top bin (which also holds the values above the range).
        if self.in_range(x) && u < self.layout.max_trackable() {
            let lo = at_or_below(&sorted, x);
            let hi = at_or_below(&sorted, u);
            prop_assert!(
                lo <= rank && rank <= hi,
                "rank({}) = {} not in [{}, {}]",
                v,
                rank,
                lo,
                hi
            );
            checked(RANK);
        }
        Ok(())
    }

    /// A record that lands, at reading `t` (the clock's or a passed `now`).
    fn record_model(&mut self, t: u64, stale: bool, v: f64) {
        let mut r = self.model.interval(t);
        if self.model.cfg.rotate {
            if self.model.place(r) < 0 && stale {
                r = self.model.interval(self.now()); // read again
            }
            if self.model.place(r) != 0 {
                self.model.withdrawn = true;
            }
            self.model.rotate(r);
            self.model.held.push((r, v));
            self.model.total += 1;
            return;
        }
        match self.model.place(r) {
            0 => self.model.held.push((r, v)),
            1 if r == self.model.epoch + 1 => self.model.held.push((r, v)),
            _ => self.model.open = true,
        }
        self.model.total += 1;
    }

    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        self.step += 1;
        let cached_before = self.window.cached_count();
        if matches!(
            op,
            Op::Maintain | Op::Refresh | Op::Quantile(_) | Op::Rank(_) | Op::Snapshot
        ) {
            self.model.withdrawn = false;
        }
        match *op {
            Op::Forward(d) => self
                .clock
                .set(Instant::from_nanos(self.now().saturating_add(d))),
            Op::Back(d) => self
                .clock
                .set(Instant::from_nanos(self.now().saturating_sub(d))),
            Op::Set(t) => self.clock.set(Instant::from_nanos(t)),
            Op::Record(v) => {
                let t = self.now();
                match v {
                    Value::U64(x) => {
                        self.window.record_u64(x);
                        self.record_model(t, false, x as f64);
                    }
                    Value::Dur(d) => {
                        self.window.record_duration(d);
                        self.record_model(t, false, nanos(d) as f64);
                    }
                    Value::Bits(_) | Value::Float(_) => {
                        let x = match v {
                            Value::Bits(b) => f64::from_bits(b),
                            Value::Float(x) => x,
                            _ => unreachable!(),
                        };
                        let result = self.window.record(x);
                        prop_assert_eq!(result.is_err(), x.is_nan() || x < 0.0, "record({})", x);
                        if result.is_ok() {
                            self.record_model(t, false, x);
                        }
                    }
                }
            }
            Op::RecordAt(back, d) => {
                let t = (i128::from(self.now()) - back).clamp(0, i128::from(u64::MAX)) as u64;
                self.window.record_duration_at(Instant::from_nanos(t), d);
                self.record_model(t, true, nanos(d) as f64);
            }
            Op::Maintain => {
                self.window.maintain();
                let must = self.maintain_model(cached_before);
                return self.full(must);
            }
            Op::Refresh => {
                self.window.refresh();
                // No rotation: the scan is of the slots as they are.
                if !self.model.open {
                    let tick = self.model.refresh_tick(self.now());
                    self.model.maintained = Some(match self.model.maintained {
                        None => (tick, tick),
                        Some((lo, hi)) => (lo.min(tick), hi.max(tick)),
                    });
                    let held = self.model.held.len() as u64;
                    prop_assert_eq!(
                        u64::from(self.window.cached_count()),
                        held.min(u64::from(u32::MAX))
                    );
                }
            }
            Op::Quantile(q) => {
                let got = self.window.quantile(q);
                let must = self.maintain_model(cached_before);
                prop_assert!(got.is_ok());
                return self.full(must);
            }
            Op::Rank(v) => {
                let must = self.maintain_model(cached_before);
                self.check_rank(v)?;
                return self.full(must);
            }
            Op::Snapshot => {
                let snapshot = self.window.snapshot();
                let _ = self.maintain_model(cached_before);
                if !self.model.open {
                    prop_assert_eq!(snapshot.count(), self.model.held.len() as u64);
                }
            }
            Op::Reset(cfg) => {
                let origin = self.now();
                if self.window.reset(self.clock, cfg.config()).is_ok() {
                    self.model = Model::new(cfg, origin);
                    self.model.slots = S as i128;
                }
            }
        }
        self.light()
    }
}

fn run<M: IndexMapping + Copy, const N: usize, const S: usize>(
    layout: BinLayout<M, N>,
    cfg: Cfg,
    start: u64,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let clock = ManualClock::starting_at(Instant::from_nanos(start));
    let Ok(window) = Window::<_, M, N, S>::with_origin(&clock, layout, cfg.config(), clock.now())
    else {
        return Ok(());
    };
    let mut model = Model::new(cfg, start);
    model.slots = S as i128;
    let mut run = Run {
        clock: &clock,
        window,
        model,
        layout,
        step: 0,
    };
    for op in ops {
        run.step(op)
            .map_err(|e| TestCaseError::fail(format!("step {} ({:?}): {}", run.step, op, e)))?;
    }
    run.model.withdrawn = false; // the maintenance below publishes again
    let must = run.maintain_model(run.window.cached_count());
    run.full(must)?;
    if std::env::var_os("TAILGUARD_MODEL_STATS").is_some() {
        let counts: Vec<u64> = CHECKED.iter().map(|c| c.load(Relaxed)).collect();
        eprintln!("checked [full, must_refresh, cached value, quantile, rank, half]: {counts:?}");
    }
    Ok(())
}

fn start() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        0u64..YEAR,
        Just(u64::MAX),
        (u64::MAX - 100 * SEC)..=u64::MAX,
        any::<u64>()
    ]
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(op(), 1..120)
}

proptest! {
    #![proptest_config(proptest_config())]

    #[test]
    fn an_int_window_of_3_slots_keeps_every_promise(cfg in cfg(), start in start(), ops in ops()) {
        run::<_, { presets::INT_LATENCY_BINS }, 3>(presets::INT_LATENCY_LAYOUT, cfg, start, &ops)?;
    }

    #[test]
    fn an_int_window_of_2_slots_keeps_every_promise(cfg in cfg(), start in start(), ops in ops()) {
        run::<_, { presets::INT_LATENCY_BINS }, 2>(presets::INT_LATENCY_LAYOUT, cfg, start, &ops)?;
    }

    #[test]
    fn a_log_window_of_5_slots_keeps_every_promise(cfg in cfg(), start in start(), ops in ops()) {
        run::<_, { presets::LOG_LATENCY_BINS }, 5>(presets::LOG_LATENCY_LAYOUT, cfg, start, &ops)?;
    }

    #[test]
    fn an_mcu_window_of_8_slots_keeps_every_promise(cfg in cfg(), start in start(), ops in ops()) {
        run::<_, { presets::MCU_LATENCY_BINS }, 8>(presets::MCU_LATENCY_LAYOUT, cfg, start, &ops)?;
    }
}
