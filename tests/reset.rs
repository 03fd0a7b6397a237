//! `Window::reset` and `Hedger::reset`: a used object, reset, behaves exactly as a fresh
//! one built at the same time with the same configuration, on the same inputs.

use core::time::Duration;

use tailguard::budget::{Budget, RatioBudget};
use tailguard::clock::ManualClock;
use tailguard::hedge::{Attempt, ColdStart, Decision, HedgeConfig, Hedger, McuHedger};
use tailguard::sketch::presets;
use tailguard::window::{McuLatencyWindow, Window, WindowConfig};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A latency of 100 us .. about 20 ms, with a slow tail.
    fn latency(&mut self) -> Duration {
        let r = self.next();
        let us = 100 + r % 2_000 + if r.is_multiple_of(16) { r % 20_000 } else { 0 };
        Duration::from_micros(us)
    }
}

/// Two windows answer alike: counts, quantiles, ranks, the cached quantile, rotations.
fn assert_same_window(a: &McuLatencyWindow<&ManualClock>, b: &McuLatencyWindow<&ManualClock>) {
    assert_eq!(a.count(), b.count());
    assert_eq!(a.rotations(), b.rotations());
    assert_eq!(a.expired(), b.expired());
    for q in [0.0, 0.5, 0.9, 0.99, 1.0] {
        assert_eq!(a.quantile(q), b.quantile(q));
    }
    assert_eq!(a.rank(1e6), b.rank(1e6));
    assert_eq!(a.cached_quantile(), b.cached_quantile());
    assert_eq!(a.snapshot(), b.snapshot());
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

#[test]
fn a_reset_window_behaves_as_a_fresh_one() {
    let clock = ManualClock::new();
    let layout = presets::MCU_LATENCY_LAYOUT;
    let old = WindowConfig::new()
        .with_interval(Duration::from_secs(1))
        .with_quantile(0.5)
        .with_rotate_on_record(false);
    let mut used: McuLatencyWindow<_> = Window::with_layout(&clock, layout, old).unwrap();
    let mut rng = Rng(7);
    for _ in 0..500 {
        used.record_duration(rng.latency());
        clock.advance(Duration::from_millis(rng.next() % 50));
        used.maintain();
    }
    assert!(used.rotations() > 0 && used.count() > 0);

    // A refused configuration changes nothing.
    let count = used.count();
    let bad = WindowConfig::new().with_interval(Duration::from_nanos(1));
    assert!(used.reset(&clock, bad).is_err());
    assert_eq!(used.count(), count);
    assert_eq!(used.config().interval(), Duration::from_secs(1));

    let config = WindowConfig::new()
        .with_interval(Duration::from_secs(10))
        .with_quantiles(&[0.9, 0.99])
        .with_refresh_records(64);
    let fresh: McuLatencyWindow<_> = Window::with_layout(&clock, layout, config).unwrap();
    used.reset(&clock, config).unwrap();
    assert_same_window(&fresh, &used);
    for i in 0..3_000u32 {
        let d = rng.latency();
        fresh.record_duration(d);
        used.record_duration(d);
        clock.advance(Duration::from_millis(rng.next() % 40));
        if i.is_multiple_of(7) {
            fresh.maintain();
            used.maintain();
        }
        if i.is_multiple_of(100) {
            assert_same_window(&fresh, &used);
        }
    }
    assert!(fresh.rotations() > 0);
    assert_same_window(&fresh, &used);
}

#[test]
fn a_reset_hedger_behaves_as_a_fresh_one() {
    let clock = ManualClock::new();
    let layout = presets::MCU_LATENCY_LAYOUT;
    let old = HedgeConfig::new()
        .with_min_samples(5)
        .with_interval(Duration::from_secs(2));
    let mut used: McuHedger<_> = Hedger::with_layout(&clock, old, layout).unwrap();
    let mut rng = Rng(11);
    for _ in 0..300 {
        let mut t = used.start();
        let _ = used.should_hedge(&mut t);
        clock.advance(rng.latency());
        used.on_success(&t, Attempt::Primary);
    }
    used.on_rate_limited_for(Duration::from_secs(5));
    assert!(used.stats().requests > 0);

    let config = HedgeConfig::new()
        .with_min_samples(20)
        .with_min_delay(Duration::from_micros(100))
        .with_max_hedges(2)
        .with_cold_start(ColdStart::Delay(Duration::from_millis(3)))
        .with_on_time_chance(0.9)
        .with_budget_cap(20);
    let budget = || RatioBudget::new(config.budget_ratio(), config.budget_cap()).unwrap();

    // A refused configuration changes nothing.
    let bad = config.with_max_hedges(0);
    assert!(used.reset(&clock, bad, budget()).is_err());
    assert_eq!(used.config(), old);

    let fresh: McuHedger<_> = Hedger::with_budget(&clock, config, budget(), layout).unwrap();
    used.reset(&clock, config, budget()).unwrap();
    assert_eq!(used.stats(), fresh.stats());
    assert_eq!(used.budget().balance(), fresh.budget().balance());
    let mut decisions = 0;
    for i in 0..2_000u32 {
        let (mut a, mut b) = (fresh.start(), used.start());
        assert_eq!(a, b);
        let latency = rng.latency();
        let mut waited = Duration::ZERO;
        loop {
            let d = fresh.should_hedge(&mut a);
            assert_eq!(d, used.should_hedge(&mut b));
            assert_eq!(a, b);
            decisions += 1;
            match d {
                Decision::Wait(w) if waited + w < latency => {
                    clock.advance(w);
                    waited += w;
                }
                _ => break,
            }
        }
        clock.advance(latency.saturating_sub(waited));
        let winner = if a.hedges() > 0 && i.is_multiple_of(3) {
            Attempt::Hedge(1)
        } else {
            Attempt::Primary
        };
        fresh.on_success(&a, winner);
        used.on_success(&b, winner);
        if i == 1_000 {
            fresh.on_rate_limited();
            used.on_rate_limited();
        }
        assert_eq!(used.stats(), fresh.stats());
        assert_eq!(used.budget().balance(), fresh.budget().balance());
        assert_eq!(used.delay(), fresh.delay());
    }
    assert!(fresh.stats().hedges > 0 && decisions > 2_000);
    assert_eq!(format!("{fresh:?}"), format!("{used:?}"));
}
