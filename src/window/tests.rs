//! The fixed-range window's unit tests: rotation, expiry, the cached quantile and its
//! refreshes, saturation, maintenance and the configuration's checks.

use super::*;
use crate::clock::ManualClock;
use crate::sketch::{presets, ConfigError, IntMapping, LogMapping};

type TestWindow<'a> = CubicLatencyWindow<&'a ManualClock>;

fn window(clock: &ManualClock, config: WindowConfig) -> TestWindow<'_> {
    Window::with_layout(clock, presets::CUBIC_LATENCY_LAYOUT, config).unwrap()
}

const SEC: Duration = Duration::from_secs(1);

#[test]
fn quantiles_see_the_current_and_previous_interval() {
    let clock = ManualClock::new();
    let w = window(&clock, WindowConfig::new().with_interval(10 * SEC));
    w.record_duration(Duration::from_millis(1)); // interval 0
    clock.advance(10 * SEC);
    w.record_duration(Duration::from_millis(2)); // interval 1
    assert_eq!(w.count(), 2);
    assert_eq!(w.quantile(0.0).unwrap(), Some(1e6));
    clock.advance(10 * SEC); // interval 2: interval 0 leaves
    assert_eq!(w.count(), 1);
    assert_eq!(w.expired(), 1);
    assert_eq!(w.quantile(0.0).unwrap(), Some(2e6));
    w.record_duration(Duration::from_millis(3));
    clock.advance(9 * SEC); // still interval 2
    assert_eq!(w.count(), 2);
    clock.advance(SEC); // interval 3: interval 1 leaves
    assert_eq!(w.count(), 1);
    assert_eq!(w.quantile(1.0).unwrap(), Some(3e6));
    assert_eq!(w.expired(), 2);
    assert_eq!(w.rotations(), 3);
}

#[test]
fn a_long_jump_empties_the_window_and_the_cached_quantile() {
    let clock = ManualClock::new();
    let w = window(&clock, WindowConfig::new());
    for ms in 1..=50 {
        w.record_duration(Duration::from_millis(ms));
    }
    w.maintain();
    assert!(w.cached_quantile().is_some());
    clock.advance(Duration::from_secs(3600 * 24 * 365));
    w.maintain();
    assert_eq!(w.count(), 0);
    assert_eq!(w.cached_quantile(), None);
    assert_eq!(w.cached_count(), 0);
    assert_eq!(w.expired(), 50);
}

#[test]
fn a_clock_a_little_behind_records_into_its_own_interval() {
    let origin = 1u64 << 40;
    let clock = ManualClock::starting_at(Instant::from_nanos(origin));
    let w = window(&clock, WindowConfig::new());
    clock.advance(45 * SEC); // interval 1
    w.record_duration(Duration::from_millis(5));
    clock.set(Instant::from_nanos(origin + 25_000_000_000)); // interval 0: in the window
    w.record_duration(Duration::from_millis(6));
    clock.set(Instant::ZERO); // before the origin: reads as the origin, interval 0
    w.record_duration(Duration::from_millis(7));
    assert_eq!((w.count(), w.expired(), w.rotations()), (3, 0, 1));
    clock.set(Instant::from_nanos(origin + 65_000_000_000)); // interval 2: 0 leaves
    assert_eq!((w.count(), w.expired()), (1, 2));
    assert_eq!(w.quantile(1.0).unwrap(), Some(5e6));
}

#[test]
fn a_clock_that_goes_back_past_the_window_restarts_it() {
    let origin = 1u64 << 40;
    let clock = ManualClock::starting_at(Instant::from_nanos(origin));
    let w = window(&clock, WindowConfig::new());
    clock.advance(300 * SEC); // interval 10
    w.record_duration(Duration::from_millis(5));
    w.record_duration(Duration::from_millis(5));
    clock.set(Instant::from_nanos(origin + 30_000_000_000)); // interval 1: far behind
    w.record_duration(Duration::from_millis(9));
    assert_eq!((w.count(), w.expired()), (1, 2));
    assert_eq!(w.quantile(0.0).unwrap(), Some(9e6));
    // It now forgets at the pace of the clock it follows.
    clock.advance(30 * SEC);
    assert_eq!(w.count(), 1);
    clock.advance(30 * SEC);
    assert_eq!((w.count(), w.expired()), (0, 3));
}

#[test]
fn a_stale_reading_behind_the_window_expires_nothing() {
    let clock = ManualClock::starting_at(Instant::from_nanos(1 << 40));
    let w = window(&clock, WindowConfig::new());
    let stale = clock.now();
    clock.advance(300 * SEC);
    w.record_duration(Duration::from_millis(5));
    // A `now` read long ago (a caller delayed after reading the clock): the clock is
    // read again, and the record goes to the current interval.
    w.record_duration_at(stale, Duration::from_millis(6));
    assert_eq!((w.count(), w.expired()), (2, 0));
}

#[test]
fn quantile_is_cached_and_refreshed_by_count_time_and_rotation() {
    let clock = ManualClock::new();
    let config = WindowConfig::new()
        .with_refresh_records(0)
        .with_refresh_interval(Duration::ZERO)
        .with_warmup_records(10);
    let w = window(&clock, config);
    for _ in 0..10 {
        w.record_duration(Duration::from_millis(5));
    }
    // Records ask, maintenance scans: nothing is cached until then.
    assert_eq!(w.cached_quantile(), None);
    w.maintain();
    let warm = w.cached_quantile().unwrap();
    assert!((warm - 5e6).abs() <= 0.01 * 5e6);
    for _ in 0..1000 {
        w.record_duration(Duration::from_millis(50));
    }
    w.maintain();
    assert_eq!(
        w.cached_quantile(),
        Some(warm),
        "no refresh configured: still cached"
    );
    assert_eq!(w.cached_count(), 10);
    w.refresh();
    assert!((w.cached_quantile().unwrap() - 50e6).abs() <= 0.01 * 50e6);

    let by_count = window(&clock, config.with_refresh_records(100));
    for _ in 0..200 {
        by_count.record_duration(Duration::from_millis(7));
        by_count.maintain();
    }
    assert_eq!(
        by_count.cached_count(),
        128,
        "refreshed when the bin reached 128"
    );

    let by_time = window(&clock, config.with_refresh_interval(SEC));
    for _ in 0..20 {
        by_time.record_duration(Duration::from_millis(7));
        by_time.maintain();
    }
    assert_eq!(by_time.cached_count(), 10);
    clock.advance(SEC);
    by_time.record_duration(Duration::from_millis(7));
    assert_eq!(by_time.cached_count(), 10, "a record never scans");
    by_time.maintain();
    assert_eq!(by_time.cached_count(), 21);
    clock.advance(30 * SEC);
    by_time.maintain();
    assert_eq!(by_time.cached_count(), 21, "refreshed at rotation");
}

/// A shift into many new bins, each filled with fewer than 16 values, still refreshes
/// the cached quantile: no bin more than doubles unasked, so once the records stop,
/// what the last refresh missed is fewer than it counted, and the cached quantile is
/// a rank of the current values that bound allows.
#[test]
fn a_shift_into_sparse_bins_refreshes_the_cached_quantile() {
    let clock = ManualClock::new();
    let config = WindowConfig::new().with_refresh_interval(Duration::ZERO);
    let w: IntLatencyWindow<_> =
        Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    for _ in 0..100 {
        w.record_duration(Duration::from_millis(5));
    }
    w.maintain();
    for i in 0..40 {
        let ns = (1e9 * 1.02f64.powi(i)) as u64;
        for _ in 0..15 {
            w.record_u64(ns);
            w.maintain();
        }
    }
    clock.advance(25 * SEC); // the same interval: no rotation refreshes
    w.maintain();
    let (cached, counted, count) = (w.cached_quantile().unwrap(), w.cached_count(), w.count());
    let missed = count - u64::from(counted);
    assert!(missed < u64::from(counted), "{missed} missed of {count}");
    // The cached p90 is the value at rank floor(0.9 * (counted - 1)) of the values
    // counted; among all of them its rank is that, plus at most what was missed.
    let rank = (0.9 * f64::from(counted - 1)).floor();
    let at = |r: f64| w.quantile(r / (count - 1) as f64).unwrap().unwrap();
    assert!(
        at(rank) <= cached && cached <= at(rank + missed as f64),
        "cached {cached} from {counted} of {count}"
    );
    // Here the last refresh missed only the last bin's values past 8.
    assert_eq!(counted, 700 - 7);
    let fresh = w.quantile(0.9).unwrap().unwrap();
    assert!((cached / fresh - 1.0).abs() < 0.03, "{cached} vs {fresh}");
}

/// Records a full bin refuses are counted by `saturated()`, and still are once the
/// rotation that clears their slot hands its count over: `count() + expired() +
/// saturated()` is every record, before and after.
#[test]
fn records_a_full_bin_refuses_stay_counted_across_rotations() {
    const BIN_LIMIT: u32 = 1 << 31; // a full bin
    let clock = ManualClock::new();
    let w = window(&clock, WindowConfig::new());
    let v = 5_000_000;
    let total = |w: &TestWindow<'_>| w.count() + u64::from(w.expired()) + u64::from(w.saturated());
    // As if 2^31 - 1 records had come: interval 0's slot is slot 0.
    w.slot(0).set_bin_count(v, BIN_LIMIT - 1);
    for _ in 0..3 {
        w.record_u64(v); // the first fills the bin; the others are refused
    }
    assert_eq!((w.count(), w.saturated()), (u64::from(BIN_LIMIT), 2));
    clock.advance(30 * SEC); // interval 1: slot 0 stays in the window
    w.slot(1).set_bin_count(v, BIN_LIMIT);
    w.record_u64(v);
    assert_eq!(w.saturated(), 3);
    let recorded = u64::from(BIN_LIMIT) + 2 + u64::from(BIN_LIMIT) + 1;
    assert_eq!(total(&w), recorded);
    clock.advance(30 * SEC); // interval 2: slot 0 leaves, its refusals stay counted
    w.maintain();
    assert_eq!((w.expired(), w.saturated()), (BIN_LIMIT, 3));
    assert_eq!(total(&w), recorded);
    clock.advance(60 * SEC); // every slot leaves
    w.maintain();
    assert_eq!((w.count(), w.saturated()), (0, 3));
    assert_eq!(total(&w) % (1 << 32), recorded % (1 << 32)); // `expired` wraps
    assert!(std::format!("{w:?}").contains("saturated: 3"));
}

/// A refresh interval past the refresh clock's horizon, (2^18 - 1) * 2^32 ns (about
/// 13.03 days), acts as the horizon: a last refresh that old no longer has an age in
/// ticks, and is due (at most 8.6 s past the horizon).
#[test]
fn a_refresh_interval_past_the_horizon_refreshes_at_the_horizon() {
    const HORIZON_NS: u64 = ((1 << 18) - 1) << 32;
    let clock = ManualClock::new();
    let config = WindowConfig::new()
        .with_interval(Duration::from_secs(365 * 86_400))
        .with_refresh_records(0)
        .with_warmup_records(0)
        .with_refresh_interval(Duration::from_secs(30 * 86_400));
    let w = window(&clock, config);
    w.record_duration(Duration::from_millis(5));
    w.maintain(); // the first refresh
    assert_eq!(w.cached_count(), 1);
    w.record_duration(Duration::from_millis(5));
    clock.advance(Duration::from_nanos(HORIZON_NS - 1));
    w.maintain();
    assert_eq!(
        w.cached_count(),
        1,
        "inside the horizon: an exact age, not due"
    );
    clock.advance(Duration::from_nanos(8_600_000_001));
    w.maintain();
    assert_eq!(w.cached_count(), 2, "past it: due, 30 days or not");
    assert_eq!(w.rotations(), 0);
}

/// With `rotate_on_record(false)` no record rotates, whatever the clock does; records
/// past the window go to their own interval's slot, behind it to the published one,
/// and the maintenance that rotates conserves them all.
#[test]
fn records_that_do_not_rotate_are_kept_until_maintenance() {
    let origin = 1u64 << 40;
    let clock = ManualClock::starting_at(Instant::from_nanos(origin));
    let w = window(&clock, WindowConfig::new().with_rotate_on_record(false));
    w.record_duration(Duration::from_millis(1)); // interval 0
    clock.advance(30 * SEC); // interval 1: one ahead of the published interval
    w.record_duration(Duration::from_millis(2));
    clock.advance(300 * SEC); // interval 11: far ahead
    w.record_duration(Duration::from_millis(3));
    clock.set(Instant::from_nanos(origin - 1)); // behind the origin: interval 0
    w.record_duration(Duration::from_millis(4));
    assert_eq!(w.rotations(), 0, "no record rotated");
    assert_eq!(w.expired(), 0);
    clock.set(Instant::from_nanos(origin + 30_000_000_000)); // interval 1
    w.maintain();
    // The record of interval 11 was in interval 2's slot, which leaves now: expired.
    assert_eq!((w.rotations(), w.count(), w.expired()), (1, 3, 1));
    clock.advance(300 * SEC); // interval 11: every slot leaves
    w.maintain();
    assert_eq!((w.count(), w.expired()), (0, 4));
    assert_eq!(w.cached_quantile(), None);
}

/// The integer threshold is the upper edge of the cached quantile's bin, `None` exactly
/// when the cached quantile is, withdrawn by a rotation with it, and follows refreshes.
#[test]
fn the_cached_upper_bound_is_the_cached_bins_edge() {
    let clock = ManualClock::new();
    let w = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    assert_eq!(w.cached_upper_bound(), None);
    for ms in 1..=100 {
        w.record_duration(Duration::from_millis(ms));
    }
    w.maintain();
    let q = w.cached_quantile().unwrap();
    let bound = w.cached_upper_bound().unwrap();
    let m = IntMapping::K6;
    let edge = m.upper_bound_u64(m.index(q));
    assert!(
        bound >= edge && bound - edge <= edge >> 25,
        "{bound} vs {edge}"
    );
    assert!(
        bound as f64 > q && (bound as f64) < q * 1.01,
        "{bound} vs {q}"
    );
    // A rotation withdraws both; the next maintenance publishes both again.
    clock.advance(Duration::from_secs(30));
    w.record_duration(Duration::from_millis(7));
    assert_eq!((w.cached_quantile(), w.cached_upper_bound()), (None, None));
    w.maintain();
    let q = w.cached_quantile().unwrap();
    assert!((q - 90e6).abs() <= 0.01 * 90e6, "{q}"); // the previous interval's p90
    assert_eq!(w.cached_upper_bound(), Some(m.upper_bound_u64(m.index(q))));
    // Values in the zero bin: a bound of 0.
    let z = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, WindowConfig::new()).unwrap();
    z.record_u64(0);
    z.maintain();
    assert_eq!(
        (z.cached_quantile(), z.cached_upper_bound()),
        (Some(0.0), Some(0))
    );
}

/// Every configured quantile is cached from the same scan: each bound is its
/// quantile's bin edge, they rise with the quantiles, a rotation withdraws them all,
/// and unconfigured ones are `None`.
#[test]
fn several_quantiles_are_cached_together() {
    let clock = ManualClock::new();
    let config = WindowConfig::new().with_quantiles(&[0.5, 0.99]);
    let w = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    assert_eq!(w.config().quantiles(), &[0.5, 0.99]);
    for ms in 1..=100 {
        w.record_duration(Duration::from_millis(ms));
    }
    w.maintain();
    let m = IntMapping::K6;
    for (i, q) in [(0, 50e6), (1, 99e6)] {
        let edge = m.upper_bound_u64(m.index(q));
        assert_eq!(w.cached_upper_bound_of(i), Some(edge), "{i}");
        assert_eq!(
            w.quantile(q / 100e6).unwrap().map(|v| m.index(v)),
            Some(m.index(q))
        );
    }
    assert_eq!(w.cached_upper_bound_of(0), w.cached_upper_bound());
    assert_eq!(w.cached_upper_bound_of(2), None);
    clock.advance(Duration::from_secs(30));
    w.record_duration(Duration::from_millis(7));
    assert_eq!(
        (w.cached_upper_bound_of(0), w.cached_upper_bound_of(1)),
        (None, None)
    );
    w.maintain();
    assert!(w.cached_upper_bound_of(0) < w.cached_upper_bound_of(1));
    // One quantile configured: only the first is read.
    let one = window(&clock, WindowConfig::new());
    one.record_u64(5_000_000);
    one.maintain();
    assert!(one.cached_upper_bound_of(0).is_some());
    assert_eq!(one.cached_upper_bound_of(1), None);
}

#[test]
fn bad_configurations_are_errors() {
    let clock = ManualClock::new();
    let bad = |config| {
        Window::<_, LogMapping, 64>::new(
            &clock,
            LogMapping::with_relative_accuracy(0.01).unwrap(),
            1.0,
            config,
        )
        .err()
    };
    assert_eq!(
        bad(WindowConfig::new().with_interval(Duration::ZERO)),
        Some(WindowError::InvalidInterval)
    );
    assert_eq!(
        bad(WindowConfig::new().with_quantiles(&[])),
        Some(WindowError::QuantileCount)
    );
    assert_eq!(
        bad(WindowConfig::new().with_quantiles(&[0.5, 0.9, 0.99])),
        Some(WindowError::QuantileCount)
    );
    assert_eq!(
        bad(WindowConfig::new().with_quantiles(&[0.5, 1.0])),
        Some(WindowError::InvalidQuantile)
    );
    for q in [0.0, 1.0, f64::NAN, -1.0] {
        assert_eq!(
            bad(WindowConfig::new().with_quantile(q)),
            Some(WindowError::InvalidQuantile)
        );
    }
    let w = Window::<_, LogMapping, 64>::new(
        &clock,
        LogMapping::with_relative_accuracy(0.01).unwrap(),
        -1.0,
        WindowConfig::new(),
    );
    assert_eq!(
        w.err(),
        Some(WindowError::Sketch(ConfigError::InvalidMinValue))
    );
    let w = window(&clock, WindowConfig::new());
    assert_eq!(w.record(f64::NAN), Err(RecordError::NaN));
    assert_eq!(w.quantile(1.5), Err(InvalidQuantile));
    assert_eq!(w.count(), 0);
}

#[test]
fn snapshot_merges_every_slot() {
    let clock = ManualClock::new();
    let w = window(&clock, WindowConfig::new());
    w.record_duration(Duration::from_millis(1));
    clock.advance(30 * SEC);
    w.record_duration(Duration::from_millis(2));
    let s = w.snapshot();
    assert_eq!(s.count(), 2);
    assert_eq!(s.min(), Some(1e6));
    assert_eq!(s.max(), Some(2e6));
    // merge_into adds the same values in place, and refuses another layout.
    let mut added = DDSketch::with_layout(w.slot(0).layout());
    added.record_u64(5_000_000);
    w.merge_into(&mut added).unwrap();
    let mut want = s.clone();
    want.record_u64(5_000_000);
    assert_eq!(added, want);
    let shifted = BinLayout::from_min_index(crate::sketch::CubicMapping::ONE_PERCENT, 0);
    let mut other = DDSketch::with_layout(shifted.unwrap());
    assert!(w.merge_into(&mut other).is_err());
    assert_eq!(other.count(), 0);
}

/// A refused value (NaN, negative) changes nothing: not even the rotation a record at that
/// time would have done, which would expire values and withdraw the cached quantile.
#[test]
fn a_refused_value_changes_nothing_not_even_the_rotation() {
    let clock = ManualClock::new();
    let config = WindowConfig::new().with_interval(Duration::from_secs(10));
    let window = Window::with_layout(&clock, presets::INT_LATENCY_LAYOUT, config).unwrap();
    window.record_u64(1_000_000);
    window.maintain();
    let cached = window.cached_quantile();
    assert!(cached.is_some());
    clock.advance(Duration::from_secs(100)); // a record now would empty the window
    for refused in [f64::NAN, -1.0, f64::NEG_INFINITY] {
        assert!(window.record(refused).is_err());
    }
    assert_eq!((window.expired(), window.rotations()), (0, 0));
    assert_eq!(window.cached_quantile(), cached);
}

/// A clock reset before the window's origin (a timer that wrapped, on a window built with
/// the clock well past zero) restarts the window in its first interval, which lasts until
/// the clock passes the origin again: nothing recorded meanwhile is forgotten. With the
/// origin at zero the window forgets at the pace of the clock after the reset.
#[test]
fn a_clock_reset_before_the_origin_holds_the_first_interval() {
    let origin = 1u64 << 50; // about 13 days of uptime
    let clock = ManualClock::starting_at(Instant::from_nanos(origin));
    let w = window(&clock, WindowConfig::new());
    clock.advance(300 * SEC);
    w.record_duration(Duration::from_millis(5));
    clock.set(Instant::from_nanos(5)); // the timer wrapped
    w.record_duration(Duration::from_millis(9));
    assert_eq!((w.count(), w.expired()), (1, 1));
    clock.advance(3_600 * SEC); // an hour of the new clock: still the first interval
    assert_eq!((w.count(), w.expired()), (1, 1));

    let clock = ManualClock::starting_at(Instant::from_nanos(origin));
    let config = WindowConfig::new();
    let w: Window<_, IntMapping, { presets::INT_LATENCY_BINS }, 3> =
        Window::with_origin(&clock, presets::INT_LATENCY_LAYOUT, config, Instant::ZERO).unwrap();
    clock.advance(300 * SEC);
    w.record_duration(Duration::from_millis(5));
    clock.set(Instant::from_nanos(5));
    w.record_duration(Duration::from_millis(9));
    assert_eq!((w.count(), w.expired()), (1, 1));
    clock.advance(60 * SEC); // two intervals: forgotten
    assert_eq!((w.count(), w.expired()), (0, 2));
}
