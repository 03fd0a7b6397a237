//! A window's quantiles are its snapshot's: clamped into the window's min and max, as
//! `DDSketch::quantile` and `AtomicSketch::quantile` clamp theirs, so that they rise with
//! `q` and never answer a value below the least recorded (the zero bin's 0 when no zero was
//! recorded) or above the largest.

use core::time::Duration;
use tailguard::clock::ManualClock;
use tailguard::sketch::{presets, AtomicSketch, IndexMapping};
use tailguard::window::{Window, WindowConfig};

const QS: [f64; 9] = [0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0];

/// Values below the range (the zero bin), above it (the top bin) and one in it alone: the
/// window answers each quantile as its snapshot and an atomic sketch of the same values do.
#[test]
fn a_windows_quantiles_are_its_snapshots_within_min_and_max() {
    let cases: [&[f64]; 5] = [
        &[26.0],             // below the range: the zero bin, no zero recorded
        &[26.0, 400.0],      // both below it
        &[1e12],             // above it: the top bin
        &[2e11, 5e11, 1e12], // all above it
        &[1_234_567.0],      // in it, alone: the bin's representative is not the value
    ];
    for values in cases {
        let clock = ManualClock::new();
        let config = WindowConfig::new().with_interval(Duration::from_secs(10));
        let w = Window::with_layout(&clock, presets::CUBIC_LATENCY_LAYOUT, config).unwrap();
        let atomic = AtomicSketch::with_layout(presets::CUBIC_LATENCY_LAYOUT);
        for (i, &v) in values.iter().enumerate() {
            if i == 1 {
                clock.advance(Duration::from_secs(10)); // in two slots
            }
            w.record(v).unwrap();
            atomic.record(v).unwrap();
        }
        let snapshot = w.snapshot();
        let (min, max) = (snapshot.min().unwrap(), snapshot.max().unwrap());
        let mut last = 0.0;
        for q in QS {
            let got = w.quantile(q).unwrap().unwrap();
            assert_eq!(
                Some(got),
                snapshot.quantile(q).unwrap(),
                "{values:?} q = {q}"
            );
            assert_eq!(Some(got), atomic.quantile(q).unwrap(), "{values:?} q = {q}");
            assert!(min <= got && got <= max, "{values:?} q = {q}: {got}");
            assert!(got >= last, "{values:?} q = {q}: {got} below {last}");
            last = got;
        }
    }
}

/// The cached quantile is its bin's representative rounded to `f32` (as `cached_quantile`
/// says): within alpha of the values of the bin but for that rounding, `2^-24` of it. On a
/// bin's first value, exactly alpha below the representative, the rounding up goes past
/// alpha (a third of the preset's edges), never past alpha and `2^-24`.
#[test]
fn a_cached_quantile_is_within_alpha_and_its_f32_rounding() {
    let clock = ManualClock::new();
    let config = WindowConfig::new()
        .with_quantile(0.5)
        .with_warmup_records(0);
    let layout = presets::LOG_LATENCY_LAYOUT;
    let m = *layout.mapping();
    let mut beyond_alpha = 0;
    for i in layout.min_index()..layout.min_index() + layout.bin_count() as i32 {
        // The first value of bin i, by bisection near its computed edge.
        let edge = m.lower_bound(i);
        let (mut below, mut first) = ((edge * 0.999).to_bits(), (edge * 1.001).to_bits());
        while first - below > 1 {
            let mid = below + (first - below) / 2;
            if m.index(f64::from_bits(mid)) >= i {
                first = mid;
            } else {
                below = mid;
            }
        }
        let v = f64::from_bits(first);
        let w = Window::with_layout(&clock, layout, config).unwrap();
        w.record(v).unwrap();
        w.maintain();
        let got = w.cached_quantile().unwrap();
        let alpha = w.relative_accuracy();
        let err = (got - v).abs() / v;
        assert!(err <= alpha + f64::from(f32::EPSILON) / 2.0, "{v}: {got}");
        beyond_alpha += usize::from(err > alpha);
    }
    assert!(beyond_alpha > 0);
}
