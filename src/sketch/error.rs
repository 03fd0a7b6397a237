//! The sketches' errors: a refused configuration, value, slice, quantile, rank query or
//! merge.

use core::fmt;

/// Why a sketch configuration was refused.
///
/// ```
/// use tailguard::sketch::{ConfigError, DDSketch, LogMapping};
///
/// type Sketch = DDSketch<LogMapping, 64>;
/// assert_eq!(Sketch::with_relative_accuracy(1.0, 1.0).err(), Some(ConfigError::InvalidAccuracy));
/// let e = Sketch::with_relative_accuracy(0.01, -1.0).err();
/// assert_eq!(e, Some(ConfigError::InvalidMinValue));
/// let e = Sketch::for_range(0.01, 1.0, 1e6).err().unwrap();
/// assert!(matches!(e, ConfigError::TooFewBins { needed } if needed > 64));
/// // The message says what was wrong and what is allowed.
/// assert_eq!(
///     ConfigError::InvalidAccuracy.to_string(),
///     "relative accuracy must be in (0, 1), and no finer than the mapping supports"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ConfigError {
    /// The relative accuracy is not in (0, 1), or a mapping's gamma is not above 1, or
    /// the mapping supports no accuracy that fine.
    InvalidAccuracy,
    /// The smallest trackable value is not a positive normal finite number, or its bin is
    /// zero's. Subnormals are refused: [`CubicMapping`](super::CubicMapping) and
    /// [`IntMapping`](super::IntMapping) read the float's exponent field, which a subnormal
    /// does not have, and would put it in the wrong bin; and with a mapping coarse enough
    /// (alpha near 1), a value near `f64::MIN_POSITIVE` shares its bin with zero.
    InvalidMinValue,
    /// The largest value of a range ([`DDSketch::for_range`](super::DDSketch::for_range)) is NaN, infinite or below
    /// the smallest.
    InvalidMaxValue,
    /// The requested range needs more bins than the sketch has.
    TooFewBins {
        /// The number of bins the range needs.
        needed: usize,
    },
    /// The bin indices of the range do not fit in an `i32`.
    RangeOverflow,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::InvalidAccuracy => f.write_str(
                "relative accuracy must be in (0, 1), and no finer than the mapping supports",
            ),
            ConfigError::InvalidMinValue => f.write_str(concat!(
                "smallest trackable value must be a positive normal finite number, ",
                "in a bin other than zero's"
            )),
            ConfigError::InvalidMaxValue => {
                f.write_str("largest value of the range must be finite and at least the smallest")
            }
            ConfigError::TooFewBins { needed } => {
                write!(f, "the range needs {needed} bins, more than the sketch has")
            }
            ConfigError::RangeOverflow => f.write_str(
                "bin indices of the range overflow i32: the lowest bin's index plus N must fit",
            ),
        }
    }
}

impl core::error::Error for ConfigError {}

/// Why a value was not recorded. Nothing was changed.
///
/// ```
/// use tailguard::sketch::{presets, RecordError};
///
/// let mut s = presets::cubic_latency();
/// assert_eq!(s.record(f64::NAN), Err(RecordError::NaN));
/// assert_eq!(s.record(-1e-9), Err(RecordError::Negative));
/// assert_eq!(s.record(f64::NEG_INFINITY), Err(RecordError::Negative));
/// assert!(s.is_empty()); // nothing was changed
/// assert!(s.record(-0.0).is_ok()); // a zero
/// // The message says what was wrong and what is allowed.
/// assert_eq!(
///     RecordError::Negative.to_string(),
///     "value is negative; a sketch records 0, positive values and +inf"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum RecordError {
    /// The value is NaN.
    NaN,
    /// The value is negative (including `-inf`).
    Negative,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::NaN => {
                f.write_str("value is NaN; a sketch records 0, positive values and +inf")
            }
            RecordError::Negative => {
                f.write_str("value is negative; a sketch records 0, positive values and +inf")
            }
        }
    }
}

impl core::error::Error for RecordError {}

/// Why a slice of values was not recorded ([`DDSketch::record_slice`](super::DDSketch::record_slice),
/// [`AtomicSketch::record_slice`](super::AtomicSketch::record_slice)): the first bad value and where it is. Nothing was
/// recorded, not even the values before it.
///
/// To record the good values anyway, record `&values[..position]` and go on after it:
///
/// ```
/// use tailguard::sketch::{presets, RecordError};
/// let mut s = presets::log_latency();
/// let mut rest: &[f64] = &[1e6, 2e6, f64::NAN, 3e6];
/// let mut skipped = 0;
/// while let Err(e) = s.record_slice(rest) {
///     assert_eq!(e.error, RecordError::NaN);
///     let (good, bad) = rest.split_at(e.position);
///     s.record_slice(good).unwrap(); // all good: cannot fail
///     rest = bad.get(1..).unwrap_or_default();
///     skipped += 1;
/// }
/// assert_eq!((s.count(), skipped), (3, 1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RecordSliceError {
    /// The position of the first bad value in the slice.
    pub position: usize,
    /// What is wrong with it.
    pub error: RecordError,
}

impl fmt::Display for RecordSliceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at position {}: {}", self.position, self.error)
    }
}

impl core::error::Error for RecordSliceError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// The first NaN or negative value of `values`, as [`record`](super::DDSketch::record) would
/// refuse it. One branch-free pass over the slice (it vectorises) in the common case of
/// no bad value.
#[inline]
pub(crate) fn check_slice(values: &[f64]) -> Result<(), RecordSliceError> {
    // `v >= 0.0` is false for NaN and every negative value (-0.0 passes, as in `record`).
    if values.iter().fold(true, |ok, &v| ok & (v >= 0.0)) {
        return Ok(());
    }
    let position = values
        .iter()
        .position(|&v| v.is_nan() || v < 0.0)
        .unwrap_or(0);
    let error = match values.get(position) {
        Some(v) if v.is_nan() => RecordError::NaN,
        _ => RecordError::Negative,
    };
    Err(RecordSliceError { position, error })
}

/// The quantile asked for is not in [0, 1] (or is NaN).
///
/// ```
/// use tailguard::sketch::{presets, InvalidQuantile};
///
/// let mut s = presets::cubic_latency();
/// s.record_u64(1_000_000);
/// assert_eq!(s.quantile(1.5), Err(InvalidQuantile));
/// assert_eq!(s.quantile(f64::NAN), Err(InvalidQuantile));
/// assert!(s.quantile(1.0).unwrap().is_some()); // both ends are allowed
/// assert_eq!(InvalidQuantile.to_string(), "quantile must be in [0, 1]");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct InvalidQuantile;

impl fmt::Display for InvalidQuantile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("quantile must be in [0, 1]")
    }
}

impl core::error::Error for InvalidQuantile {}

/// The value a rank query asked about ([`DDSketch::rank`](super::DDSketch::rank) and the
/// like) is NaN: no recorded value is at or below it, nor above it.
///
/// ```
/// use tailguard::sketch::{presets, InvalidValue};
/// let s = presets::cubic_latency();
/// assert_eq!(s.rank(f64::NAN), Err(InvalidValue));
/// assert_eq!(InvalidValue.to_string(), "value is NaN; a rank query needs a number");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct InvalidValue;

impl fmt::Display for InvalidValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("value is NaN; a rank query needs a number")
    }
}

impl core::error::Error for InvalidValue {}

/// Why two sketches could not be merged. The target was left unchanged.
///
/// ```
/// use tailguard::sketch::{DDSketch, LogMapping, MergeError};
///
/// let mut a = DDSketch::<LogMapping, 256>::with_relative_accuracy(0.01, 1.0).unwrap();
/// a.record(5.0).unwrap();
/// let mut b = DDSketch::<LogMapping, 256>::with_relative_accuracy(0.02, 1.0).unwrap();
/// b.record(7.0).unwrap();
/// assert_eq!(a.merge(&b), Err(MergeError::Mapping));
/// assert_eq!(a.count(), 1); // the target was left unchanged
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum MergeError {
    /// The mappings differ in gamma (so in relative accuracy).
    Mapping,
    /// The mappings differ in index offset.
    Offset,
    /// The sketches track different ranges (different smallest bin).
    Range,
    /// The sketches have different numbers of bins.
    BinCount,
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MergeError::Mapping => "sketches use different mappings (gamma or accuracy)",
            MergeError::Offset => "sketches use different index offsets",
            MergeError::Range => "sketches track different ranges",
            MergeError::BinCount => "sketches have different numbers of bins",
        })
    }
}

impl core::error::Error for MergeError {}
