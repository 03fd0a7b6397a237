//! A message's `IndexMapping` as written ([`WireMapping`]), and whether it is a sketch's
//! mapping: the same interpolation, gamma within DataDog's tolerance, and an offset a
//! whole number of bins away ([`key_to_index`]).

use super::{DecodeError, IndexConvention};
use crate::sketch::{IndexMapping, Interpolation};

/// Relative tolerance on gamma when matching a message's mapping with a sketch's.
const GAMMA_TOLERANCE: f64 = 1e-12;
/// Absolute tolerance on the difference of index offsets (in bins) from a whole number.
const OFFSET_TOLERANCE: f64 = 1e-9;
/// Largest renumbering of keys accepted (offsets further apart are not the same sketch).
const MAX_OFFSET_SHIFT: f64 = (1u64 << 32) as f64;

/// The `IndexMapping` of a message, as written on the wire: see
/// [`read_mapping`](crate::proto::read_mapping).
///
/// ```
/// use tailguard::proto::{encode, read_mapping, IndexConvention};
/// use tailguard::sketch::{presets, IndexMapping, Interpolation};
///
/// let s = presets::int_latency(); // IntMapping, 64 bins per power of two
/// let mut buf = [0u8; 64];
/// let len = encode(&s, IndexConvention::GoJava, &mut buf).unwrap();
/// let m = read_mapping(&buf[..len]).unwrap();
/// assert_eq!(m.interpolation(), Some(Interpolation::Linear));
/// assert_eq!(m.interpolation_code(), 1); // LINEAR's number, known or not
/// assert_eq!(m.gamma(), s.mapping().gamma());
/// assert_eq!(m.index_offset(), 64.0); // Go's layout for this gamma
/// let alpha = m.relative_accuracy(IndexConvention::GoJava).unwrap();
/// assert!((alpha - s.mapping().relative_accuracy()).abs() < 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct WireMapping {
    pub(super) gamma: f64,
    pub(super) index_offset: f64,
    pub(super) interpolation: i32,
}

impl WireMapping {
    /// `gamma` as written (0 if absent).
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// `indexOffset` as written.
    pub fn index_offset(&self) -> f64 {
        self.index_offset
    }

    /// The interpolation, or `None` for a value tailguard does not know (Java's
    /// `QUARTIC` = 4, for one).
    pub fn interpolation(&self) -> Option<Interpolation> {
        interpolation_of(self.interpolation)
    }

    /// The interpolation's value on the wire.
    pub fn interpolation_code(&self) -> i32 {
        self.interpolation
    }

    /// The relative accuracy (alpha) the writer's library gives this mapping, by its
    /// convention; `None` if gamma is not a finite number above 1 or the interpolation
    /// is not `NONE`, `LINEAR` or `CUBIC`.
    pub fn relative_accuracy(&self, convention: IndexConvention) -> Option<f64> {
        let interpolation = self.interpolation()?;
        if !(self.gamma > 1.0 && self.gamma.is_finite()) {
            return None;
        }
        let ln_gamma = libm::log(convention.gamma_to_go(interpolation, self.gamma));
        // The width of the widest bin in natural-log space; alpha = tanh(width / 2).
        let width = match interpolation {
            Interpolation::None => ln_gamma,
            // LINEAR: the multiplier is 1 / log2(gamma), corrected by 1 / ln 2.
            Interpolation::Linear => ln_gamma / core::f64::consts::LN_2,
            // CUBIC: corrected by 7 / (10 ln 2).
            Interpolation::Cubic => 0.7 * ln_gamma / core::f64::consts::LN_2,
            Interpolation::Quadratic => return None,
        };
        Some(libm::tanh(width / 2.0))
    }
}

fn interpolation_of(code: i32) -> Option<Interpolation> {
    match code {
        0 => Some(Interpolation::None),
        1 => Some(Interpolation::Linear),
        2 => Some(Interpolation::Quadratic),
        3 => Some(Interpolation::Cubic),
        _ => None,
    }
}

/// How much to add to a wire key (read in `convention`) to get the sketch's index, or why
/// the message's mapping is not the sketch's.
pub(super) fn key_to_index<M: IndexMapping>(
    wire: &WireMapping,
    mapping: &M,
    convention: IndexConvention,
) -> Result<i64, DecodeError> {
    let interpolation = M::INTERPOLATION;
    if wire.interpolation != interpolation as i32 {
        return Err(DecodeError::Interpolation {
            found: wire.interpolation,
            expected: interpolation as i32,
        });
    }
    let ours = mapping.gamma();
    let theirs = convention.gamma_to_go(interpolation, wire.gamma);
    let close = (theirs - ours).abs() <= GAMMA_TOLERANCE * ours; // false for NaN
    if !close {
        return Err(DecodeError::Gamma {
            found: wire.gamma,
            expected: convention.gamma_from_go(interpolation, ours),
        });
    }
    // Both conventions add `indexOffset` to the (floor or ceil of the) scaled log: an
    // offset a whole number `d` above the sketch's numbers every bin `d` higher.
    let d = wire.index_offset - mapping.index_offset();
    let whole = libm::round(d);
    if !((d - whole).abs() <= OFFSET_TOLERANCE && whole.abs() <= MAX_OFFSET_SHIFT) {
        return Err(DecodeError::Offset {
            found: wire.index_offset,
            expected: mapping.index_offset(),
        });
    }
    // |whole| <= 2^32 and the shift is 0 or 1: no overflow.
    Ok((whole as i64)
        .saturating_add(convention.key_shift())
        .saturating_neg())
}

#[cfg(test)]
mod tests {
    use crate::proto::test_msg::{entry, log, mapping_of, Msg};
    use crate::proto::{decode_into, DecodeError, IndexConvention};
    use crate::sketch::{CubicMapping, IndexMapping, LogMapping};

    #[test]
    fn mismatched_mappings_are_typed_errors() {
        let mut s = log();
        let m = *s.mapping();
        let with = |mapping: Msg| Msg::default().message(1, mapping).0;
        let cubic = CubicMapping::with_relative_accuracy(0.01).unwrap();
        assert_eq!(
            decode_into(&with(mapping_of(&cubic)), IndexConvention::GoJava, &mut s),
            Err(DecodeError::Interpolation {
                found: 3,
                expected: 0
            })
        );
        let other = LogMapping::with_relative_accuracy(0.011).unwrap();
        assert!(matches!(
            decode_into(&with(mapping_of(&other)), IndexConvention::GoJava, &mut s),
            Err(DecodeError::Gamma { .. })
        ));
        let half = LogMapping::from_gamma_offset(m.gamma(), 0.5).unwrap();
        assert_eq!(
            decode_into(&with(mapping_of(&half)), IndexConvention::GoJava, &mut s),
            Err(DecodeError::Offset {
                found: 0.5,
                expected: 0.0
            })
        );
        for gamma in [1.0, 0.5, -2.0, f64::NAN, f64::INFINITY] {
            let bad = Msg::default().double(1, gamma);
            assert_eq!(
                decode_into(&with(bad), IndexConvention::GoJava, &mut s),
                Err(DecodeError::InvalidMapping)
            );
        }
        let bad_offset = Msg::default().double(1, m.gamma()).double(2, f64::NAN);
        assert_eq!(
            decode_into(&with(bad_offset), IndexConvention::GoJava, &mut s),
            Err(DecodeError::InvalidMapping)
        );
        let quartic = Msg::default().double(1, m.gamma()).uint(3, 4);
        assert!(matches!(
            decode_into(&with(quartic), IndexConvention::GoJava, &mut s),
            Err(DecodeError::Interpolation { found: 4, .. })
        ));
        let negative_enum = Msg::default().double(1, m.gamma()).uint(3, u64::MAX);
        assert!(matches!(
            decode_into(&with(negative_enum), IndexConvention::GoJava, &mut s),
            Err(DecodeError::Interpolation { found: -1, .. })
        ));
        assert!(s.is_empty());
    }

    #[test]
    fn gamma_within_tolerance_and_whole_offsets_are_accepted() {
        let mut s = log();
        let m = *s.mapping();
        let key = m.index(10.0);
        // gamma off by 1e-13 (relative) and an offset 3 bins up: keys renumbered.
        let near = Msg::default()
            .double(1, m.gamma() * (1.0 + 1e-13))
            .double(2, 3.0 + 1e-12);
        let msg = Msg::default()
            .message(1, near)
            .message(2, Msg::default().message(1, entry(key + 3, 2.0)));
        decode_into(&msg.0, IndexConvention::GoJava, &mut s).unwrap();
        assert_eq!(s.bins().next().map(|b| (b.index, b.count)), Some((key, 2)));
        let far = Msg::default().double(1, m.gamma() * (1.0 + 1e-11));
        assert!(matches!(
            decode_into(
                &Msg::default().message(1, far).0,
                IndexConvention::GoJava,
                &mut s
            ),
            Err(DecodeError::Gamma { .. })
        ));
    }
}
