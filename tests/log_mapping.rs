//! `LogMapping::index` computes its key through a fast logarithm with a proven error bound and
//! calls `libm::log` only where that bound cannot decide the bin. These tests hold it to the
//! key of the plain computation it replaced, `floor(libm::log(v) * multiplier + offset)`
//! with DataDog's floor, on every kind of input: random doubles over the whole positive
//! range, every bin edge of several gammas (found to the last bit) and its neighbours,
//! powers of two, subnormals, 1.0 and its neighbours, zero and +inf, and mappings with
//! offsets, huge and infinite multipliers.

use proptest::prelude::*;
use tailguard::sketch::{IndexMapping, LogMapping};

/// DataDog's floor (Go's and Java's `(int) x - 1` for negative `x`), saturating.
fn datadog_floor(x: f64) -> i32 {
    let t = x as i32;
    if x < 0.0 {
        t.saturating_sub(1)
    } else {
        t
    }
}

/// The key as `LogMapping` computed it before the fast logarithm: `libm::log`, times the
/// multiplier Java derives from gamma, plus the offset.
fn libm_key(m: &LogMapping, v: f64) -> i32 {
    let multiplier = 1.0 / libm::log1p(m.gamma() - 1.0);
    datadog_floor(libm::log(v) * multiplier + m.index_offset())
}

fn check(m: &LogMapping, v: f64) {
    assert_eq!(
        m.index(v),
        libm_key(m, v),
        "value {v:e} ({:#x}), gamma {}, offset {}",
        v.to_bits(),
        m.gamma(),
        m.index_offset()
    );
}

/// The mappings of the presets (1 %) and other common accuracies.
fn common() -> Vec<LogMapping> {
    [0.001, 0.005, 0.01, 0.02, 0.05]
        .iter()
        .map(|&a| LogMapping::with_relative_accuracy(a).unwrap())
        .collect()
}

/// Mappings at the edges of what the constructors accept: offsets (fractional, negative,
/// large enough to saturate), a huge multiplier and a tiny one. (An infinite one, of an
/// alpha whose gamma rounds to 1, is refused: `review_core::an_alpha_whose_gamma_rounds_to_one_is_refused`.)
fn unusual() -> Vec<LogMapping> {
    let g = LogMapping::with_relative_accuracy(0.01).unwrap().gamma();
    vec![
        LogMapping::from_gamma_offset(g, 0.5).unwrap(),
        LogMapping::from_gamma_offset(g, -1234.25).unwrap(),
        LogMapping::from_gamma_offset(g, f64::from(i32::MAX) - 600.0).unwrap(),
        LogMapping::from_gamma_offset(g, 4e9).unwrap(),
        LogMapping::from_gamma_offset(g, -1e300).unwrap(),
        LogMapping::from_gamma_offset(1.0 + f64::EPSILON, 0.0).unwrap(),
        LogMapping::with_relative_accuracy(1e-9).unwrap(),
        LogMapping::with_relative_accuracy(0.999).unwrap(),
        LogMapping::from_gamma_offset(1e300, 3.0).unwrap(),
    ]
}

/// The double nearest `v` that is `steps` units in the last place above it (below for
/// negative steps), for positive `v`, staying within the positive doubles.
fn ulps(v: f64, steps: i64) -> f64 {
    f64::from_bits(v.to_bits().saturating_add_signed(steps).max(1))
}

/// The smallest double at which `libm_key` reaches `key`, searched near `guess` (the first
/// double of the bin as `lower_bound` puts it, within a few thousand units in the last
/// place of the exact edge): `None` if the key is not reached there.
fn exact_edge(m: &LogMapping, key: i32, guess: f64) -> Option<f64> {
    let (mut lo, mut hi) = (
        guess.to_bits().saturating_sub(1 << 14).max(1),
        guess
            .to_bits()
            .saturating_add(1 << 14)
            .min(f64::MAX.to_bits()),
    );
    let at = |bits: u64| libm_key(m, f64::from_bits(bits));
    if at(lo) >= key || at(hi) < key {
        return None;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if at(mid) >= key {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(f64::from_bits(hi))
}

/// Every bin edge of the normal doubles' range, found to the last bit, and the doubles up
/// to four units in the last place either side, where the fast path has to step aside.
#[test]
fn every_bin_edge_and_its_neighbours() {
    for m in common() {
        let (first, last) = (m.index(f64::MIN_POSITIVE), m.index(f64::MAX));
        let mut edges = 0;
        for key in first + 1..=last {
            let guess = m.lower_bound(key);
            let Some(edge) = exact_edge(&m, key, guess) else {
                panic!("no edge for key {key} near {guess:e}, gamma {}", m.gamma());
            };
            edges += 1;
            for step in -4..=4 {
                check(&m, ulps(edge, step));
                check(&m, ulps(guess, step));
            }
        }
        assert!(edges > 1000, "{edges} edges");
    }
}

/// The same near the edges of the unusual mappings (a sample of keys: some span billions).
#[test]
fn bin_edges_of_unusual_mappings() {
    for m in unusual() {
        for v in [1e-300, 1e-9, 0.5, 1.0, 3.0, 1e3, 1e6, 1e9, 1e300] {
            let key = m.index(v);
            let guess = m.lower_bound(key);
            if !(guess.is_normal()) {
                continue;
            }
            let edge = exact_edge(&m, key, guess).unwrap_or(guess);
            for step in -4..=4 {
                check(&m, ulps(edge, step));
                check(&m, ulps(guess, step));
                check(&m, ulps(v, step));
            }
        }
    }
}

/// Powers of two (the exponent term alone), 1.0 and its neighbours (the key changes sign
/// there: DataDog's floor), subnormals, the ends of the normal range, zero and +inf.
#[test]
fn special_values() {
    let mut values = vec![0.0, f64::INFINITY, f64::MAX, f64::MIN_POSITIVE, 1.0];
    values.extend((-1074..=1023).map(|e| libm::ldexp(1.0, e)));
    values.extend((1..=64).flat_map(|s| [ulps(1.0, s), ulps(1.0, -s)]));
    values.extend((0..52).map(|s| f64::from_bits(1u64 << s))); // subnormals
    values.extend((0..52).map(|s| f64::from_bits((1u64 << s) - 1 + (1 << 52) / 3)));
    values.extend([ulps(f64::MIN_POSITIVE, -1), ulps(f64::MIN_POSITIVE, 1)]);
    values.extend([ulps(f64::MAX, -1), ulps(f64::MAX, -4)]);
    for m in common().iter().chain(&unusual()) {
        for &v in &values {
            for step in -2..=2 {
                check(m, ulps(v, step));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Any positive double (every bit pattern up to +inf: subnormals and the whole exponent
    /// range), under the common and the unusual mappings.
    #[test]
    fn any_positive_double(bits in 0u64..=f64::INFINITY.to_bits()) {
        let v = f64::from_bits(bits);
        for m in common().iter().chain(&unusual()) {
            check(m, v);
        }
    }

    /// Realistic latencies (whole and fractional nanoseconds, and in seconds) under any
    /// accuracy and offset.
    #[test]
    fn latencies_under_any_accuracy(
        alpha in 1e-6f64..0.5,
        offset in prop_oneof![Just(0.0), -1e4f64..1e4],
        ns in 1u64..100_000_000_000,
        frac in 0.0f64..1.0,
    ) {
        let g = LogMapping::with_relative_accuracy(alpha).unwrap().gamma();
        let m = LogMapping::from_gamma_offset(g, offset).unwrap();
        check(&m, ns as f64);
        check(&m, ns as f64 + frac);
        check(&m, (ns as f64) * 1e-9);
    }
}
