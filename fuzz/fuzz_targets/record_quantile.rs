//! Arbitrary f64s (NaN, infinities, subnormals, negatives, huge) and integers -> record:
//! never panics, rejects exactly NaN and negatives; every quantile whose exact value is
//! inside the trackable range (or zero) is within alpha of it, with no more slack than
//! docs/guarantees.md states for values far from 1, whatever else was clamped; one whose
//! exact value was clamped answers at its end of the range.
#![no_main]

mod common;

use common::{assert_quantiles_rise, record, values};
use libfuzzer_sys::fuzz_target;
use tailguard::sketch::{CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    // Two quantiles of the fuzzer's choosing, besides the fixed ones.
    let extra = [
        f64::from(selector) / 255.0,
        f64::from(selector.reverse_bits()) / 255.0,
    ];
    match selector % 4 {
        0 => check::<LogMapping, 2048>(0.01, 1e-3, rest, extra),
        1 => check::<CubicMapping, 2048>(0.01, 1e-3, rest, extra),
        2 => check::<IntMapping, 4096>(0.01, 1e-3, rest, extra),
        _ => check::<LogMapping, 32>(0.05, 1.0, rest, extra), // mostly out of range
    }
});

fn check<M: IndexMapping, const N: usize>(alpha: f64, min: f64, bytes: &[u8], extra: [f64; 2]) {
    let mut s = DDSketch::<M, N>::with_relative_accuracy(alpha, min).unwrap();
    let mut accepted: Vec<f64> = values(bytes)
        .into_iter()
        .filter_map(|v| record(&mut s, v))
        .collect();
    assert_eq!(s.count(), accepted.len() as u64);
    assert_eq!(s.saturated(), 0);
    let alpha = s.relative_accuracy();
    let (lo, hi) = (s.min_trackable(), s.max_trackable());
    accepted.sort_by(f64::total_cmp);
    for q in [
        0.0, 0.01, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0, extra[0], extra[1],
    ] {
        let got = s.quantile(q).unwrap();
        let Some(got) = got else {
            assert!(accepted.is_empty());
            continue;
        };
        assert!(!got.is_nan(), "q={q}");
        let (min, max) = (s.min().unwrap(), s.max().unwrap());
        assert!(
            min <= got && got <= max,
            "q={q}: {got} outside [{min}, {max}]"
        );
        // Clamping keeps the order (below the range is the zero bin, above it the top
        // bin), so the rank's exact value decides what the answer promises.
        let want = accepted[(q * (accepted.len() - 1) as f64) as usize];
        if want == 0.0 || (lo..hi).contains(&want) {
            let err = (got - want).abs();
            assert!(
                err <= (alpha + rounding_slack(want)) * want,
                "q={q}: got {got}, exact {want}, alpha {alpha}"
            );
        } else if want < lo {
            // The zero bin's 0, raised to the exact min at most.
            assert!(got <= want, "q={q}: got {got} for {want} below the range");
        } else {
            // The top bin's representative is within alpha of its last value, below `hi`.
            let last = hi.next_down();
            let floor = last * (1.0 - alpha - rounding_slack(last));
            assert!(got >= floor, "q={q}: got {got} for {want} above the range");
        }
    }
    assert_quantiles_rise(&s);
    for q in [f64::NAN, -0.5, 1.5, f64::INFINITY] {
        assert!(s.quantile(q).is_err());
    }
    if let Some(mean) = s.mean() {
        assert!(mean >= 0.0);
    }
}

/// docs/guarantees.md's bound on how far beyond `relative_accuracy()` the keys' and
/// representatives' rounding may answer a value on a bin edge: 2^-38 from 2^-20 to 2^64
/// (the latency presets' ranges, every mapping), 2^-33 over every normal float.
fn rounding_slack(v: f64) -> f64 {
    if (2f64.powi(-20)..2f64.powi(64)).contains(&v) {
        2f64.powi(-38)
    } else {
        2f64.powi(-33)
    }
}
