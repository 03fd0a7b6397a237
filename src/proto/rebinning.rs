//! Reading a sketch of another mapping: [`decode_rebinned`] moves each foreign bin's count
//! to the sketch's bin of the foreign bin's representative value. See the module docs'
//! "Re-binning foreign sketches" section (docs/proto.md) for the error bound and its proof.

use super::decoding::{add_bin_valued, apply, read_mapping_of, scan};
use super::mapping::key_to_index;
use super::{decode_into, DecodeError, Decoded, IndexConvention, WireMapping};
use crate::sketch::mapping::cubic::{cubic_inverse, interpolated_exp2};
use crate::sketch::{DDSketch, IndexMapping};
use crate::wire::Tally;
use core::f64::consts::LN_2;

/// What [`decode_rebinned`] added to the sketch, and how accurate it is.
///
/// ```
/// use tailguard::proto::{decode_rebinned, encode, IndexConvention};
/// use tailguard::sketch::{presets, DDSketch, LogMapping};
///
/// // A 2 % sketch read into a 1 % one: every value is re-binned.
/// let mut coarse = DDSketch::<LogMapping, 1024>::with_relative_accuracy(0.02, 1.0).unwrap();
/// coarse.record_n(250.0, 3).unwrap();
/// let mut buf = [0u8; 256];
/// let len = encode(&coarse, IndexConvention::GoJava, &mut buf).unwrap();
/// let mut fine = presets::log_latency();
/// let report = decode_rebinned(&buf[..len], IndexConvention::GoJava, &mut fine).unwrap();
/// assert_eq!((report.added, report.rebinned, report.exact), (3, 3, false));
/// // 2 % (the writer's) + 1 % (the sketch's) + their product.
/// assert!((report.relative_error - 0.0302).abs() < 1e-9);
/// let p50 = fine.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 250.0).abs() <= report.relative_error * 250.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Rebinned {
    /// Values added to the sketch: its [`count`](DDSketch::count) grew by this much.
    pub added: u64,
    /// Of those, values moved from a foreign bin into a bin of the sketch's mapping (every
    /// value outside the zero bin when the mappings differ; none when they match).
    pub rebinned: u64,
    /// Of those added, values of bins below the sketch's range, now in its zero bin.
    pub below_range: u64,
    /// Of those added, values of bins above the sketch's range, now in its top bin (and
    /// counted by [`clamped`](DDSketch::clamped)).
    pub above_range: u64,
    /// Values dropped because their bin was full (counted by
    /// [`saturated`](DDSketch::saturated)).
    pub saturated: u64,
    /// Whether the message's mapping was the sketch's, so that it was decoded bin for
    /// bin, exactly as [`decode_into`] decodes it.
    pub exact: bool,
    /// The relative error the added values carry, within the sketch's range: the
    /// sketch's relative accuracy when `exact`, otherwise `a + b + a * b` for the
    /// writer's accuracy `a` and the sketch's `b` (see the
    /// [module docs](crate::proto#re-binning-foreign-sketches)). Far from 1 a quantile
    /// can pass it by the rounding [`DDSketch::quantile`] allows there.
    pub relative_error: f64,
}

impl Rebinned {
    /// The report of what decoding `d` added, `rebinned` of those values re-binned.
    fn of(d: Decoded, rebinned: u64, exact: bool, relative_error: f64) -> Self {
        Rebinned {
            added: d.added,
            rebinned,
            below_range: d.below_range,
            above_range: d.above_range,
            saturated: d.saturated,
            exact,
            relative_error,
        }
    }
}

/// The approximation of the logarithm a foreign mapping uses between powers of two
/// (`Log`: none, the natural logarithm).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Curve {
    Log,
    Linear,
    Quadratic,
    Cubic,
    Quartic,
}

// The polynomials of DataDog's interpolations, `log2(1 + s)` approximated on [0, 1]:
// cubic (Go, Java, Python) `A s^3 + B s^2 + C s` (the coefficients of `CubicMapping`);
// quartic (Java) `Q4 s^4 + ... + Q1 s`.
const QUARTIC: [f64; 4] = [-2.0 / 25.0, 8.0 / 25.0, -17.0 / 25.0, 36.0 / 25.0];

/// A message's mapping as the writer's library defines it: where its bins start (Go and
/// Java) or end (Python), and the representative value it answers for each.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Foreign {
    curve: Curve,
    /// Keys per unit of the approximated logarithm (natural for `Log`, base 2 otherwise).
    multiplier: f64,
    offset: f64,
    /// The writer's relative accuracy.
    alpha: f64,
    /// What the edge of a bin is multiplied by to give its representative: `1 + alpha`
    /// from the lower edge (Go, Java), `1 - alpha` from the upper one (Python).
    factor: f64,
}

impl Foreign {
    /// The writer's mapping, or [`DecodeError::UnsupportedInterpolation`].
    ///
    /// Go and Java: `key = floor(approx_log(v) * multiplier + indexOffset)` with
    /// `multiplier = ln(base) / ln(gamma)` (base e for `NONE`, 2 otherwise), and
    /// `alpha = tanh(ln(gamma) * correction / 2)` with Java's correcting factors (1,
    /// `1/ln 2`, `3/(4 ln 2)`, `7/(10 ln 2)`, `25/(36 ln 2)` for `NONE` to `QUARTIC`; Go's
    /// formulas for the three it has are the same numbers). Python: `key =
    /// ceil(approx_log(v) * multiplier) + indexOffset`, `multiplier = 1/ln(gamma)` (`NONE`,
    /// `LINEAR`) or `7/(10 ln(gamma))` (`CUBIC`), `alpha = (gamma - 1)/(gamma + 1)`.
    fn new(wire: &WireMapping, convention: IndexConvention) -> Result<Self, DecodeError> {
        let code = wire.interpolation_code();
        let unsupported = DecodeError::UnsupportedInterpolation { found: code };
        // read_mapping_of checked gamma > 1 and finite: ln(gamma) is positive and finite,
        // at least ln(1 + 2^-52), so every multiplier below is finite and positive.
        let ln_gamma = libm::log(wire.gamma());
        let (curve, multiplier, correction) = match convention {
            IndexConvention::GoJava => match code {
                0 => (Curve::Log, 1.0 / ln_gamma, 1.0),
                1 => (Curve::Linear, LN_2 / ln_gamma, 1.0 / LN_2),
                2 => (Curve::Quadratic, LN_2 / ln_gamma, 3.0 / (4.0 * LN_2)),
                3 => (Curve::Cubic, LN_2 / ln_gamma, 7.0 / (10.0 * LN_2)),
                4 => (Curve::Quartic, LN_2 / ln_gamma, 25.0 / (36.0 * LN_2)),
                _ => return Err(unsupported),
            },
            // Python's gamma is the exact base of its widest bin for all three.
            IndexConvention::Python => match code {
                0 => (Curve::Log, 1.0 / ln_gamma, 1.0),
                1 => (Curve::Linear, 1.0 / ln_gamma, 1.0),
                3 => (Curve::Cubic, 0.7 / ln_gamma, 1.0),
                _ => return Err(unsupported),
            },
        };
        let alpha = libm::tanh(correction * ln_gamma / 2.0);
        let factor = match convention {
            IndexConvention::GoJava => 1.0 + alpha,
            IndexConvention::Python => 1.0 - alpha,
        };
        Ok(Foreign {
            curve,
            multiplier,
            offset: wire.index_offset(),
            alpha,
            factor,
        })
    }

    /// The edge of bin `key` the writer's representative is taken from: its lower bound
    /// (Go, Java) or upper bound (Python), both `approx_exp((key - offset) / multiplier)`.
    /// `0` or `+inf` where that is beyond `f64`; never NaN (the numerator is finite, the
    /// multiplier finite and positive).
    fn edge(&self, key: i64) -> f64 {
        let x = (key as f64 - self.offset) / self.multiplier;
        if self.curve == Curve::Log {
            return libm::exp(x); // 0 and +inf at the extremes
        }
        interpolated_exp2(x, |y| self.inverse(y))
    }

    /// `s` in [0, 1] with `approx_log2(1 + s) = y`, for `y` in [0, 1): the inverse of the
    /// interpolating polynomial, each strictly increasing on [0, 1] from 0 to 1.
    fn inverse(&self, y: f64) -> f64 {
        match self.curve {
            Curve::Log | Curve::Linear => y,
            // Java's quadratic, `-(S - 5)(S - 1)/3` in `S = 1 + s`, is `s (4 - s) / 3`:
            // its root in [0, 1] is `2 - sqrt(4 - 3y)`.
            Curve::Quadratic => 2.0 - libm::sqrt(4.0 - 3.0 * y),
            Curve::Cubic => cubic_inverse(y),
            Curve::Quartic => quartic_root(y),
        }
    }

    /// The writer's representative value of bin `key`.
    fn representative(&self, key: i64) -> f64 {
        self.edge(key) * self.factor
    }
}

/// The root in [0, 1] of Java's quartic `= y`, by bisection: the quartic's derivative is
/// at least `18/25` on [0, 1], and 64 halvings reach the last bit of any root there.
fn quartic_root(y: f64) -> f64 {
    let quartic = |s: f64| QUARTIC.iter().fold(0.0, |acc, &k| (acc + k) * s);
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..64 {
        let mid = (lo + hi) / 2.0;
        if mid <= lo || mid >= hi {
            break;
        }
        if quartic(mid) <= y {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Decodes a DDSketch protobuf message of **any** mapping, written in `convention`, into
/// `sketch`: exactly as [`decode_into`] when the message's mapping is the sketch's,
/// otherwise by re-binning each foreign bin (its count goes to the sketch's bin of the
/// writer's representative value of that bin).
///
/// The message may use `NONE`, `LINEAR`, `QUADRATIC`, `CUBIC` (DataDog's Go and Java) or
/// `QUARTIC` (Java) interpolation at any gamma and index offset; with
/// [`IndexConvention::Python`], `NONE`, `LINEAR` and `CUBIC` (all Python's library has).
/// The returned [`Rebinned`] says how many values were added, re-binned, clamped and
/// saturated, and the relative error they carry (see the
/// [module docs](crate::proto#re-binning-foreign-sketches) for the bound and its proof).
/// A representative value beyond `f64` (possible only for keys outside the writer's
/// range) is below or above the sketch's range, and counted as such.
///
/// Errors as [`decode_into`] does, except for a mapping that is not the sketch's; and
/// with [`DecodeError::UnsupportedInterpolation`] for an interpolation the convention
/// does not define. On error the sketch is unchanged.
///
/// ```
/// use tailguard::proto::{decode_rebinned, encode, IndexConvention};
/// use tailguard::sketch::{presets, DDSketch, IndexMapping, IntMapping};
///
/// // A device's integer sketch (0.39 %), read into the log sketch of an aggregator (1 %).
/// let mut device = DDSketch::<IntMapping, 4096>::for_range(0.005, 1e3, 1e11).unwrap();
/// for ns in (1..=1000u64).map(|i| i * 37_000) {
///     device.record_u64(ns);
/// }
/// let mut buf = [0u8; 16384];
/// let len = encode(&device, IndexConvention::GoJava, &mut buf).unwrap();
/// let mut total = presets::log_latency();
/// let report = decode_rebinned(&buf[..len], IndexConvention::GoJava, &mut total).unwrap();
/// assert_eq!(report.added, 1000);
/// assert!(!report.exact);
/// let bound = report.relative_error; // 0.39 % + 1 % + 0.0039 %
/// let exact = 500.0 * 37_000.0; // sorted[floor(0.5 * 999)]
/// let p50 = total.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - exact).abs() <= bound * exact);
/// ```
pub fn decode_rebinned<M: IndexMapping, const N: usize>(
    bytes: &[u8],
    convention: IndexConvention,
    sketch: &mut DDSketch<M, N>,
) -> Result<Rebinned, DecodeError> {
    // Pass 1 (validation) as decode_into; the mapping decides which decoding follows.
    let found = scan(bytes)?;
    let wire = read_mapping_of(&found)?;
    let target_alpha = sketch.relative_accuracy();
    match key_to_index(&wire, sketch.mapping(), convention) {
        Ok(_) => {
            // The sketch's own mapping: decode_into itself, so bin for bin the same.
            let d = decode_into(bytes, convention, sketch)?;
            return Ok(Rebinned::of(d, 0, true, target_alpha));
        }
        Err(DecodeError::Interpolation { .. } | DecodeError::Gamma { .. })
        | Err(DecodeError::Offset { .. }) => {}
        Err(other) => return Err(other),
    }
    let foreign = Foreign::new(&wire, convention)?;
    if found.negative {
        return Err(DecodeError::NegativeValues);
    }

    // Pass 2 cannot fail: the sketch changes all or not at all.
    let mut tally = Tally::default();
    let mut rebinned = 0u64;
    apply(
        bytes,
        &found,
        sketch,
        &mut tally,
        &mut |sketch, key, n, tally| {
            let before = tally.added;
            rebin(sketch, foreign.representative(key), n, tally);
            rebinned = rebinned.saturating_add(tally.added.saturating_sub(before));
        },
    );
    let relative_error = foreign.alpha + target_alpha + foreign.alpha * target_alpha;
    Ok(Rebinned::of(
        Decoded::of(tally),
        rebinned,
        false,
        relative_error,
    ))
}

/// Adds `n` values of representative `value` as `record_n` would: the sketch's bin of
/// it, min, max and sum at it; beyond `f64` (0 or +inf) below or above the range.
fn rebin<M: IndexMapping, const N: usize>(
    sketch: &mut DDSketch<M, N>,
    value: f64,
    n: u64,
    tally: &mut Tally,
) {
    if (f64::MIN_POSITIVE..=f64::MAX).contains(&value) {
        let index = sketch.mapping().index(value);
        add_bin_valued(sketch, i64::from(index), n, value, tally);
    } else if value > f64::MAX {
        let top = sketch.max_trackable();
        add_bin_valued(sketch, i64::MAX, n, top, tally);
    } else {
        // 0 or subnormal (NaN cannot occur, see `Foreign::edge`; `max` would make it 0).
        add_bin_valued(sketch, i64::MIN, n, value.max(0.0), tally);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::test_msg::{encode_vec, entry, log, Msg};
    use crate::sketch::mapping::cubic::{CUBIC_A, CUBIC_B, CUBIC_C};
    use crate::sketch::{CubicMapping, IntMapping, LogMapping};

    fn foreign(gamma: f64, offset: f64, interpolation: u64, c: IndexConvention) -> Foreign {
        let msg = Msg::default().message(
            1,
            Msg::default()
                .double(1, gamma)
                .double(2, offset)
                .uint(3, interpolation),
        );
        let wire = crate::proto::read_mapping(&msg.0).unwrap();
        Foreign::new(&wire, c).unwrap()
    }

    /// The key the writer's library gives `v` (Go/Java floor, Python ceil), straight
    /// from the definitions, to check the inverses against.
    fn key_of(f: &Foreign, v: f64, c: IndexConvention) -> f64 {
        let bits = v.to_bits();
        let e = ((bits >> 52) & 0x7ff) as f64 - 1023.0;
        let s = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52)) - 1.0;
        let approx = match f.curve {
            Curve::Log => libm::log(v),
            Curve::Linear => e + s,
            Curve::Quadratic => e - (s + 1.0 - 5.0) * s / 3.0,
            Curve::Cubic => e + ((CUBIC_A * s + CUBIC_B) * s + CUBIC_C) * s,
            Curve::Quartic => e + QUARTIC.iter().fold(0.0, |acc, &k| (acc + k) * s),
        };
        match c {
            IndexConvention::GoJava => libm::floor(approx * f.multiplier + f.offset),
            IndexConvention::Python => libm::ceil(approx * f.multiplier) + f.offset,
        }
    }

    #[test]
    fn representatives_are_within_the_writers_alpha_of_their_bin() {
        for c in [IndexConvention::GoJava, IndexConvention::Python] {
            for code in 0..=4u64 {
                if c == IndexConvention::Python && (code == 2 || code == 4) {
                    continue;
                }
                for gamma in [1.013959948367022, 1.02, 1.05, 1.3] {
                    // Python truncates `ceil(...) + offset` to an integer: only whole
                    // offsets mean anything there.
                    let offset = if c == IndexConvention::Python {
                        3.0
                    } else {
                        0.25
                    };
                    let f = foreign(gamma, offset, code, c);
                    let mut v = 1e-5;
                    while v < 1e9 {
                        let key = key_of(&f, v, c);
                        let rep = f.representative(key as i64);
                        assert!(
                            (rep - v).abs() <= f.alpha * v * (1.0 + 1e-9),
                            "{c:?} {code} {gamma} v={v} key={key} rep={rep} alpha={}",
                            f.alpha
                        );
                        // The edge is the bin's: lower (Go/Java) or upper (Python).
                        let edge = f.edge(key as i64);
                        let back = key_of(&f, edge * (1.0 + 1e-12), c);
                        let back_low = key_of(&f, edge * (1.0 - 1e-12), c);
                        match c {
                            IndexConvention::GoJava => assert_eq!(back, key, "{code} {v}"),
                            IndexConvention::Python => assert_eq!(back_low, key, "{code} {v}"),
                        }
                        v *= 1.0091;
                    }
                }
            }
        }
    }

    #[test]
    fn alphas_are_the_libraries() {
        // Go: NONE 1 - 2/(1 + gamma), LINEAR 1 - 2/(1 + e^log2 gamma), CUBIC with 7/10.
        let g = 1.02f64;
        let go = IndexConvention::GoJava;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-14;
        assert!(close(foreign(g, 0.0, 0, go).alpha, 1.0 - 2.0 / (1.0 + g)));
        let e = libm::exp(libm::log2(g));
        assert!(close(foreign(g, 0.0, 1, go).alpha, 1.0 - 2.0 / (1.0 + e)));
        let e = libm::exp(0.7 * libm::log2(g));
        assert!(close(foreign(g, 0.0, 3, go).alpha, 1.0 - 2.0 / (1.0 + e)));
        // Java: (g^c - 1)/(g^c + 1) with its correcting factors.
        for (code, c) in [(2, 3.0 / (4.0 * LN_2)), (4, 1.0 / (36.0 / 25.0 * LN_2))] {
            let e = libm::pow(g, c);
            assert!(close(
                foreign(g, 0.0, code, go).alpha,
                (e - 1.0) / (e + 1.0)
            ));
        }
        for code in [0, 1, 3] {
            let f = foreign(g, 0.0, code, IndexConvention::Python);
            assert!(close(f.alpha, (g - 1.0) / (g + 1.0)));
        }
    }

    #[test]
    fn matching_mappings_decode_exactly_as_decode_into() {
        let mut s = log();
        for v in [0.0, 1.0, 3.5, 1e3, 1e3, 7e4] {
            s.record(v).unwrap();
        }
        for c in [IndexConvention::GoJava, IndexConvention::Python] {
            let bytes = encode_vec(&s, c);
            let (mut a, mut b) = (log(), log());
            a.record(2.0).unwrap();
            b.record(2.0).unwrap();
            let d = decode_into(&bytes, c, &mut a).unwrap();
            let r = decode_rebinned(&bytes, c, &mut b).unwrap();
            assert_eq!(a, b);
            assert!(r.exact);
            assert_eq!(
                (r.added, r.rebinned, r.saturated),
                (d.added, 0, d.saturated)
            );
            assert_eq!(r.relative_error, s.relative_accuracy());
        }
    }

    #[test]
    fn other_mappings_rebin_within_the_bound() {
        type Int = crate::sketch::DDSketch<IntMapping, 4096>;
        type Cubic = crate::sketch::DDSketch<CubicMapping, 1024>;
        let mut source = Cubic::with_relative_accuracy(0.02, 1.0).unwrap();
        let values: std::vec::Vec<f64> = (1..500).map(|i| f64::from(i) * 1.37).collect();
        for &v in &values {
            source.record(v).unwrap();
        }
        source.record(0.0).unwrap();
        let bytes = encode_vec(&source, IndexConvention::GoJava);
        let mut target = Int::with_relative_accuracy(0.005, 1.0).unwrap();
        let r = decode_rebinned(&bytes, IndexConvention::GoJava, &mut target).unwrap();
        assert_eq!((r.added, r.rebinned, r.exact), (500, 499, false));
        assert_eq!((r.below_range, r.above_range, r.saturated), (0, 0, 0));
        let want = 0.02 + target.relative_accuracy() + 0.02 * target.relative_accuracy();
        assert!((r.relative_error - want).abs() < 1e-12);
        assert_eq!(target.zero_count(), 1);
        let mut all = values.clone();
        all.push(0.0);
        all.sort_by(f64::total_cmp);
        for q in [0.0, 0.01, 0.3, 0.5, 0.9, 0.99, 1.0] {
            let exact = all[(q * (all.len() - 1) as f64) as usize];
            let got = target.quantile(q).unwrap().unwrap();
            assert!((got - exact).abs() <= r.relative_error * exact * (1.0 + 1e-9));
        }
    }

    #[test]
    fn go_default_linear_at_one_percent_is_read() {
        // What Go's NewLinearlyInterpolatedMapping(0.01) writes: decode_into refuses it.
        let gamma = libm::pow(1.01 / 0.99, LN_2);
        let multiplier = 1.0 / libm::log2(gamma);
        let mut store = Msg::default();
        let values = [0.5, 1.0, 7.0, 250.0, 1e6];
        for v in values {
            let bits = f64::to_bits(v);
            let e = ((bits >> 52) & 0x7ff) as f64 - 1023.0;
            let s = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52)) - 1.0;
            let key = libm::floor((e + s) * multiplier + multiplier) as i32;
            store = store.message(1, entry(key, 2.0));
        }
        let msg = Msg::default()
            .message(
                1,
                Msg::default()
                    .double(1, gamma)
                    .double(2, multiplier)
                    .uint(3, 1),
            )
            .message(2, store);
        let mut s = crate::sketch::presets::int_latency();
        assert!(decode_into(&msg.0, IndexConvention::GoJava, &mut s).is_err());
        let mut s = DDSketch::<LogMapping, 2048>::with_relative_accuracy(0.01, 0.1).unwrap();
        let r = decode_rebinned(&msg.0, IndexConvention::GoJava, &mut s).unwrap();
        assert_eq!((r.added, r.rebinned), (10, 10));
        for (i, v) in values.iter().enumerate() {
            let q = (2 * i) as f64 / 9.0;
            let got = s.quantile(q).unwrap().unwrap();
            assert!((got - v).abs() <= r.relative_error * v, "{v} {got}");
        }
    }

    #[test]
    fn extreme_keys_are_counted_below_or_above_the_range() {
        // A sparse bin at i32::MIN and one at i32::MAX, linear at gamma 1.5: 2^(-+4e9).
        let msg = Msg::default()
            .message(1, Msg::default().double(1, 1.5).uint(3, 1))
            .message(
                2,
                Msg::default()
                    .message(1, entry(i32::MIN, 2.0))
                    .message(1, entry(i32::MAX, 3.0))
                    .message(1, entry(0, 1.0)),
            );
        let mut s = log();
        let r = decode_rebinned(&msg.0, IndexConvention::GoJava, &mut s).unwrap();
        assert_eq!((r.added, r.below_range, r.above_range), (6, 2, 3));
        assert_eq!(s.zero_count(), 2);
        assert_eq!(s.clamped(), 3);
        assert_eq!(s.max(), Some(s.max_trackable()));
        assert!(s.sum().is_finite());
        // The same with NONE, whose edges go through exp.
        let msg = Msg::default()
            .message(1, Msg::default().double(1, 1e300))
            .message(2, Msg::default().packed(2, &[1.0, 1.0]).sint(3, -5));
        let mut s = log();
        let r = decode_rebinned(&msg.0, IndexConvention::Python, &mut s).unwrap();
        assert_eq!((r.added, r.below_range), (2, 2));
    }

    #[test]
    fn errors_change_nothing() {
        let mut s = log();
        s.record(5.0).unwrap();
        let before = s.clone();
        let with = |m: Msg| Msg::default().message(1, m);
        // QUADRATIC and QUARTIC are not Python's; 5 and -1 are nobody's.
        for (code, c) in [
            (2, IndexConvention::Python),
            (4, IndexConvention::Python),
            (5, IndexConvention::GoJava),
            (u64::MAX, IndexConvention::GoJava),
        ] {
            let msg = with(Msg::default().double(1, 1.02).uint(3, code));
            let err = decode_rebinned(&msg.0, c, &mut s).unwrap_err();
            assert!(matches!(err, DecodeError::UnsupportedInterpolation { .. }));
        }
        let negative = with(Msg::default().double(1, 1.05))
            .message(3, Msg::default().message(1, entry(3, 1.0)));
        assert_eq!(
            decode_rebinned(&negative.0, IndexConvention::GoJava, &mut s),
            Err(DecodeError::NegativeValues)
        );
        let bad_count = with(Msg::default().double(1, 1.05))
            .message(2, Msg::default().message(1, entry(3, 0.5)));
        assert!(matches!(
            decode_rebinned(&bad_count.0, IndexConvention::GoJava, &mut s),
            Err(DecodeError::InvalidCount { .. })
        ));
        assert_eq!(
            decode_rebinned(&[0x0a], IndexConvention::GoJava, &mut s),
            Err(DecodeError::Truncated)
        );
        assert_eq!(
            decode_rebinned(&[], IndexConvention::GoJava, &mut s),
            Err(DecodeError::InvalidMapping)
        );
        assert_eq!(s, before);
        // A LogMapping of another gamma is accepted (re-binned), not an error.
        let other = DDSketch::<LogMapping, 256>::with_relative_accuracy(0.05, 1.0).unwrap();
        let bytes = encode_vec(&other, IndexConvention::GoJava);
        assert!(
            !decode_rebinned(&bytes, IndexConvention::GoJava, &mut s)
                .unwrap()
                .exact
        );
    }
}
