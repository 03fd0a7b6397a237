//! Every primitive built at compile time into a `static` is the object its run-time
//! constructor builds: the same mapping bits and layout, and the same answers after the same
//! records, rotations and decisions.

use core::time::Duration;

use tailguard::budget::{Budget, RatioBudget, TokenBucket};
use tailguard::clock::{Instant, ManualClock};
use tailguard::hedge::{Decision, HedgeConfig, Hedger, IntHedger};
use tailguard::sketch::presets;
use tailguard::sketch::{AtomicSketch, CubicMapping, IndexMapping, IntMapping, LogMapping};
use tailguard::window::{IntLatencyCoarseWindow, IntLatencyWindow, Window, WindowConfig};
use tailguard_support::Xorshift64;

/// Unwraps a constructor's result in a `const` initialiser: an error is a compile error.
macro_rules! built {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(_) => panic!("invalid configuration"),
        }
    };
}

/// Values in ns from 1 µs to 100 s and beyond (the range and both ends of it), and zero.
fn latencies() -> impl Iterator<Item = u64> {
    let mut rng = Xorshift64(0x2545_f491_4f6c_dd1d);
    (0..5_000).map(move |i| {
        let x = rng.next_u64();
        match i % 50 {
            0 => 0,
            1 => 10,
            2 => 1 << 40,
            _ => 1_000 + x % (1 << (10 + i % 27)),
        }
    })
}

fn same_mapping<M: IndexMapping>(a: &M, b: &M) {
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert_eq!(a.gamma().to_bits(), b.gamma().to_bits());
    assert_eq!(
        a.relative_accuracy().to_bits(),
        b.relative_accuracy().to_bits()
    );
}

static LOG_SKETCH: presets::AtomicLogLatency =
    AtomicSketch::with_layout(presets::LOG_LATENCY_LAYOUT);
static CUBIC_SKETCH: presets::AtomicCubicLatency =
    AtomicSketch::with_layout(presets::CUBIC_LATENCY_LAYOUT);

#[test]
fn static_sketches_are_the_run_time_ones() {
    let log = AtomicSketch::<LogMapping, { presets::LOG_LATENCY_BINS }>::new(
        LogMapping::with_relative_accuracy(0.01).unwrap(),
        presets::MIN_LATENCY_NS,
    )
    .unwrap();
    let cubic = AtomicSketch::<CubicMapping, { presets::CUBIC_LATENCY_BINS }>::new(
        CubicMapping::with_relative_accuracy(0.01).unwrap(),
        presets::MIN_LATENCY_NS,
    )
    .unwrap();
    same_mapping(LOG_SKETCH.layout().mapping(), log.layout().mapping());
    same_mapping(CUBIC_SKETCH.layout().mapping(), cubic.layout().mapping());
    assert_eq!(LOG_SKETCH.layout().min_index(), log.layout().min_index());
    assert_eq!(
        CUBIC_SKETCH.layout().min_index(),
        cubic.layout().min_index()
    );
    for v in latencies() {
        LOG_SKETCH.record_u64(v);
        log.record_u64(v);
        CUBIC_SKETCH.record_u64(v);
        cubic.record_u64(v);
    }
    assert_eq!(LOG_SKETCH.snapshot(), log.snapshot());
    assert_eq!(CUBIC_SKETCH.snapshot(), cubic.snapshot());
    for q in [0.0, 0.5, 0.9, 0.99, 1.0] {
        assert_eq!(LOG_SKETCH.quantile(q), log.quantile(q));
        assert_eq!(CUBIC_SKETCH.quantile(q), cubic.quantile(q));
    }
}

const WINDOW_CONFIG: WindowConfig = WindowConfig::new()
    .with_interval(Duration::from_secs(10))
    .with_quantile(0.95);

static WINDOW_CLOCK: ManualClock = ManualClock::new();
static WINDOW: IntLatencyCoarseWindow<&ManualClock> = built!(Window::with_origin(
    &WINDOW_CLOCK,
    presets::INT_LATENCY_COARSE_LAYOUT,
    WINDOW_CONFIG,
    Instant::ZERO,
));

fn same_window<const N: usize>(
    a: &Window<&ManualClock, IntMapping, N>,
    b: &Window<&ManualClock, IntMapping, N>,
) {
    a.maintain();
    b.maintain();
    assert_eq!(a.count(), b.count());
    assert_eq!(a.expired(), b.expired());
    assert_eq!(a.cached_quantile(), b.cached_quantile());
    assert_eq!(a.cached_count(), b.cached_count());
    assert_eq!(a.snapshot(), b.snapshot());
    for q in [0.0, 0.5, 0.99, 1.0] {
        assert_eq!(a.quantile(q), b.quantile(q));
    }
}

#[test]
fn a_static_window_is_the_run_time_one() {
    let clock = ManualClock::new();
    let window =
        Window::with_layout(&clock, presets::INT_LATENCY_COARSE_LAYOUT, WINDOW_CONFIG).unwrap();
    same_mapping(WINDOW.snapshot().mapping(), window.snapshot().mapping());
    // Records across rotations, jumps of several intervals and a clock that went back.
    for (i, v) in latencies().enumerate() {
        if i % 700 == 0 {
            let step = Duration::from_millis([3_000, 9_000, 25_000, 41_000][i / 700 % 4]);
            WINDOW_CLOCK.advance(step);
            clock.advance(step);
            same_window(&WINDOW, &window);
        }
        WINDOW.record_u64(v);
        window.record_u64(v);
    }
    same_window(&WINDOW, &window);
    assert_eq!(WINDOW.rotations(), window.rotations());
    assert!(window.rotations() > 3 && window.count() > 0);
}

/// A window built at the clock's zero and first used at 95 s answers as one built then:
/// only its rotation count tells them apart.
#[test]
fn a_window_first_used_long_after_its_origin() {
    let late = ManualClock::starting_at(Instant::from_nanos(95_000_000_000));
    let early = ManualClock::starting_at(Instant::from_nanos(95_000_000_000));
    let made_then: IntLatencyWindow<_> = Window::with_origin(
        &early,
        presets::INT_LATENCY_LAYOUT,
        WINDOW_CONFIG,
        Instant::ZERO,
    )
    .unwrap();
    let made_now = Window::with_layout(&late, presets::INT_LATENCY_LAYOUT, WINDOW_CONFIG).unwrap();
    for v in latencies().take(1_000) {
        made_then.record_u64(v);
        made_now.record_u64(v);
    }
    same_window(&made_then, &made_now);
    assert_eq!(made_then.expired(), 0);
    assert_eq!(made_then.rotations(), made_now.rotations() + 1);
    // Without rotation on record, one maintenance first makes it the same window.
    let quiet = WINDOW_CONFIG.with_rotate_on_record(false);
    let made_then: IntLatencyWindow<_> =
        Window::with_origin(&early, presets::INT_LATENCY_LAYOUT, quiet, Instant::ZERO).unwrap();
    let made_now = Window::with_layout(&late, presets::INT_LATENCY_LAYOUT, quiet).unwrap();
    made_then.maintain();
    for v in latencies().take(1_000) {
        made_then.record_u64(v);
        made_now.record_u64(v);
    }
    same_window(&made_then, &made_now);
    assert_eq!(made_then.expired(), 0);
}

static BUDGET: RatioBudget = built!(RatioBudget::new(0.05, 3));

#[test]
fn a_static_budget_is_the_run_time_one() {
    let budget = RatioBudget::new(0.05, 3).unwrap();
    assert_eq!(BUDGET.ratio(), budget.ratio());
    assert_eq!(BUDGET.cap(), budget.cap());
    for i in 0..500 {
        BUDGET.on_request();
        budget.on_request();
        if i % 7 == 0 {
            assert_eq!(BUDGET.try_acquire(), budget.try_acquire());
        }
    }
    assert_eq!(BUDGET.balance(), budget.balance());
    assert_eq!(
        (BUDGET.granted(), BUDGET.denied()),
        (budget.granted(), budget.denied())
    );
}

/// The `const` rounding of the ratio is `round` (half away from zero), as before.
#[test]
fn ratios_round_to_the_nearest_millionth() {
    let mut ratios = vec![
        0.0,
        1e-6,
        0.5e-6,
        1.5e-6,
        2.5e-6,
        0.1234565,
        999.9999995,
        1000.0,
    ];
    let mut rng = Xorshift64(0x9e37_79b9_7f4a_7c15);
    for _ in 0..100_000 {
        let x = rng.next_u64();
        // Whole and half millionths, and arbitrary ratios, in [0, 1000].
        let half = (x % 2_000_000_001) as f64 / 2e6 / 1e6 * 1000.0;
        ratios.push(half);
        ratios.push(f64::from_bits(x >> 12 | 0x3f00_0000_0000_0000) % 1000.0);
    }
    for ratio in ratios {
        let ppm = (ratio * 1e6).round() as u32;
        let expected = RatioBudget::from_parts_per_million(ppm, 1).unwrap();
        assert_eq!(
            RatioBudget::new(ratio, 1).unwrap().ratio(),
            expected.ratio(),
            "{ratio}"
        );
    }
}

static BUCKET_CLOCK: ManualClock = ManualClock::new();
static BUCKET: TokenBucket<&ManualClock> = built!(TokenBucket::new(&BUCKET_CLOCK, 7.5, 4));

#[test]
fn a_static_token_bucket_is_the_run_time_one() {
    let clock = ManualClock::new();
    let bucket = TokenBucket::new(&clock, 7.5, 4).unwrap();
    assert_eq!(BUCKET.rate(), bucket.rate());
    for i in 0..300u64 {
        let step = Duration::from_millis(i * 37 % 190);
        BUCKET_CLOCK.advance(step);
        clock.advance(step);
        assert_eq!(BUCKET.try_acquire(), bucket.try_acquire(), "{i}");
    }
}

static HEDGE_CLOCK: ManualClock = ManualClock::new();
static HEDGE_BUDGET: RatioBudget = built!(RatioBudget::new(0.1, 5));
const HEDGE_CONFIG: HedgeConfig = HedgeConfig::new()
    .with_min_samples(20)
    .with_min_delay(Duration::from_micros(50));
static HEDGER: IntHedger<&ManualClock, &RatioBudget> = built!(IntHedger::with_origin(
    &HEDGE_CLOCK,
    HEDGE_CONFIG,
    &HEDGE_BUDGET,
    presets::INT_LATENCY_LAYOUT,
    Instant::ZERO,
));

#[test]
fn a_static_hedger_is_the_run_time_one() {
    let clock = ManualClock::new();
    let budget = RatioBudget::new(0.1, 5).unwrap();
    let hedger: IntHedger<_, _> =
        Hedger::with_budget(&clock, HEDGE_CONFIG, &budget, presets::INT_LATENCY_LAYOUT).unwrap();
    let mut hedges = 0;
    for (i, v) in latencies().take(3_000).enumerate() {
        let (mut a, mut b) = (HEDGER.start(), hedger.start());
        let wait = Duration::from_nanos(v % 20_000_000_000); // some past the delay
        HEDGE_CLOCK.advance(wait);
        clock.advance(wait);
        let decision = HEDGER.should_hedge(&mut a);
        assert_eq!(decision, hedger.should_hedge(&mut b), "{i}");
        hedges += usize::from(decision == Decision::Hedge);
        HEDGER.record(Duration::from_nanos(v));
        hedger.record(Duration::from_nanos(v));
        assert_eq!(HEDGER.delay(), hedger.delay(), "{i}");
    }
    assert_eq!(HEDGER.stats(), hedger.stats());
    assert!(hedges > 0);
}
