//! The DDSketch protobuf wire format: encode a [`DDSketch`] into a caller's buffer, decode
//! DataDog's sketches (Go, Java, Python) into one. No heap, no panics on any input.
//!
//! The message is `ddsketch.proto` from DataDog's sketches repositories:
//!
//! ```text
//! DDSketch     { IndexMapping mapping = 1; Store positiveValues = 2; Store negativeValues = 3;
//!                double zeroCount = 4; }
//! IndexMapping { double gamma = 1; double indexOffset = 2;
//!                enum Interpolation interpolation = 3; }   // NONE 0, LINEAR 1, QUADRATIC 2, CUBIC 3
//! Store        { map<sint32, double> binCounts = 1; repeated double contiguousBinCounts = 2 [packed];
//!                sint32 contiguousBinIndexOffset = 3; }
//! ```
//!
//! ```
//! use tailguard::proto::{self, IndexConvention};
//! use tailguard::sketch::presets;
//!
//! let mut device = presets::cubic_latency();
//! for ns in [4_000_000u64, 5_000_000, 48_000_000] {
//!     device.record_u64(ns);
//! }
//! let mut buf = [0u8; 2048];
//! let len = proto::encode(&device, IndexConvention::GoJava, &mut buf).unwrap();
//! assert_eq!(len, proto::encoded_len(&device, IndexConvention::GoJava));
//!
//! // On the aggregator: merge it into a sketch of the same configuration.
//! let mut total = presets::cubic_latency();
//! let report = proto::decode_into(&buf[..len], IndexConvention::GoJava, &mut total).unwrap();
//! assert_eq!(report.added, 3);
//! assert!(total.bins().eq(device.bins()));
//! ```
//!
//! # Index conventions: what tailguard writes, and reading Python's sketches
//!
//! Nothing in the message says how a key was computed, and DataDog's libraries disagree:
//!
//! | | Go, Java, tailguard ([`IndexConvention::GoJava`]) | Python `ddsketch` 3.x ([`IndexConvention::Python`]) |
//! |---|---|---|
//! | key of `v` | `floor(approx_log(v) * multiplier + indexOffset)` | `ceil(approx_log(v) * multiplier) + indexOffset` |
//! | value of a key | `lower_bound * (1 + alpha)` | `upper_bound * (1 - alpha)` |
//! | `gamma`, `NONE` | `(1 + alpha) / (1 - alpha)` | the same |
//! | `gamma`, `LINEAR` | `2^(1 / multiplier)` | `e^(1 / multiplier)` |
//! | `gamma`, `CUBIC` | `2^(1 / multiplier)` | `e^(7 / (10 * multiplier))` |
//!
//! (`approx_log` is `log2` interpolated between powers of two, `e + m` for `LINEAR`, and
//! `multiplier` is the number of keys per unit of it.) So:
//!
//! * A Python-written `NONE` sketch read with the Go/Java convention (by Go, Java, or by
//!   tailguard with [`IndexConvention::GoJava`]) reads **one bin high**, about `+2 alpha`;
//!   a Go-written one read by Python one bin low. Python's `LINEAR` and `CUBIC` gammas
//!   mean a different bin width altogether, so those sketches do not interoperate with Go
//!   or Java at all: tailguard reports a [`DecodeError::Gamma`] rather than misreading.
//! * With [`IndexConvention::Python`], [`encode`] writes exactly what Python's library
//!   writes for the same bins (its gamma, `indexOffset` 0, keys one higher), and
//!   [`decode_into`] converts Python's gamma and reads key `k` as tailguard's bin `k - 1`:
//!   every value then stays in its bin, and quantiles agree with Python's bin for bin.
//!   The representative values differ by design (`lower * (1 + alpha)` against
//!   `upper * (1 - alpha)`); both are within `alpha` of every value of the bin, and for
//!   `NONE` they are the same number.
//!
//! tailguard writes the Go/Java convention by default (what DataDog's agent and backends
//! use). For `LINEAR` ([`IntMapping`](crate::sketch::IntMapping), `gamma = 2^(2^-k)`) it
//! writes the layout Go's and Java's own mapping of that gamma has, `indexOffset = 2^k`
//! with keys `2^k` above tailguard's indices (their `approx_log(1)` is 1, not 0), which
//! is what their mapping equality, and so their merge, compares; `indexOffset = 0` with
//! tailguard's own indices describes the same bins and is accepted as well.
//!
//! # Matching a sketch's mapping
//!
//! [`decode_into`] accepts a message whose interpolation is the sketch's, whose `gamma`
//! (converted to the Go/Java convention) is within a relative `1e-12` of the sketch's
//! (DataDog's own tolerance: gamma travels through `exp`/`log` in other languages and
//! rarely round-trips to the last bit), and whose `indexOffset` differs from the sketch's
//! by a whole number of bins (to `1e-9`): the keys are then renumbered. Anything else is
//! a typed error and leaves the sketch unchanged.
//!
//! # Decoding rules
//!
//! * Sparse (`binCounts`) and contiguous (`contiguousBinCounts`) bins are both read and
//!   summed, as are keys repeated in `binCounts` (protobuf would keep the last; no DataDog
//!   library writes duplicates). Repeated occurrences of a message merge as protobuf says
//!   (scalars: the last wins; repeated fields: concatenated). Packed and unpacked
//!   `contiguousBinCounts` are both accepted. Unknown fields are skipped; groups (wire
//!   types 3 and 4, absent from proto3) are a [`DecodeError::WireType`].
//! * Counts are doubles on the wire. A count must be a whole, non-negative, finite number
//!   ([`DecodeError::InvalidCount`] otherwise, fractional weights included). A count above
//!   what a bin holds (`u32::MAX`) fills the bin; the rest is counted by
//!   [`saturated`](DDSketch::saturated), as merging does.
//! * `negativeValues` with any non-zero count is [`DecodeError::NegativeValues`]:
//!   tailguard records no negative values. `zeroCount` goes to the zero bin.
//! * Bins outside the sketch's range are **clamped and counted**, as `record` does with
//!   values: bins below it go to the zero bin, bins above it to the top bin and
//!   [`clamped`](DDSketch::clamped). [`Decoded`] reports how many of each, so a caller
//!   that wants strictness can refuse them.
//! * Decoding is all or nothing: the whole message is validated before the sketch is
//!   touched.
//!
//! # Count, min, max and sum
//!
//! The message carries none of them. Decoded bins add to [`count`](DDSketch::count), and
//! enter min, max and sum at their *representative value* (the value [`quantile`] answers
//! for the bin; `0` for `zeroCount`): after a decode, min and max are within `alpha` of
//! the true ones (bins outside the range enter at their own bin's value, or the edge of
//! the range if that overflows), sum is within `alpha` of the true sum, and `quantile(0)`
//! and `quantile(1)`, which answer min and max, keep the sketch's accuracy guarantee.
//! Merged with values recorded locally, the exact local min and max still count.
//!
//! [`quantile`]: DDSketch::quantile
//!
//! # Encoding
//!
//! [`encode`] writes the mapping, then the positive values as one contiguous run from the
//! lowest to the highest non-empty bin (as Go does, and the only encoding Python's library
//! reads), an empty `negativeValues` and `zeroCount` when non-zero. [`encoded_len`] says
//! how many bytes that takes: 8 per bin of the run plus at most 50 for the mapping and
//! the framing.

use core::fmt;

use crate::sketch::{DDSketch, IndexMapping, Interpolation};

/// Relative tolerance on gamma when matching a message's mapping with a sketch's.
const GAMMA_TOLERANCE: f64 = 1e-12;
/// Absolute tolerance on the difference of index offsets (in bins) from a whole number.
const OFFSET_TOLERANCE: f64 = 1e-9;
/// Largest renumbering of keys accepted (offsets further apart are not the same sketch).
const MAX_OFFSET_SHIFT: f64 = (1u64 << 32) as f64;
/// `7 / 10`: how Python's cubic mapping scales its multiplier (its `1 / C`).
const PYTHON_CUBIC_FACTOR: f64 = 0.7;

/// How the keys and gamma of a message are to be read or written. See the
/// [module docs](self#index-conventions-what-tailguard-writes-and-reading-pythons-sketches).
///
/// ```
/// use tailguard::proto::IndexConvention;
/// assert_eq!(IndexConvention::default(), IndexConvention::GoJava);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum IndexConvention {
    /// DataDog's Go and Java libraries, and tailguard: `floor`, Go/Java gammas.
    #[default]
    GoJava,
    /// DataDog's Python library (`ddsketch` 3.x): `ceil`, Python's gammas.
    Python,
}

impl IndexConvention {
    /// `gamma` as this convention writes it, from the Go/Java gamma.
    fn gamma_from_go(self, interpolation: Interpolation, gamma: f64) -> f64 {
        match (self, interpolation) {
            (IndexConvention::Python, Interpolation::Linear) => libm::exp(libm::log2(gamma)),
            (IndexConvention::Python, Interpolation::Cubic) => {
                libm::exp(PYTHON_CUBIC_FACTOR * libm::log2(gamma))
            }
            _ => gamma,
        }
    }

    /// The Go/Java gamma of a `gamma` written in this convention.
    fn gamma_to_go(self, interpolation: Interpolation, gamma: f64) -> f64 {
        match (self, interpolation) {
            (IndexConvention::Python, Interpolation::Linear) => libm::exp2(libm::log(gamma)),
            (IndexConvention::Python, Interpolation::Cubic) => {
                libm::exp2(libm::log(gamma) / PYTHON_CUBIC_FACTOR)
            }
            _ => gamma,
        }
    }

    /// How much higher this convention's key of a value is than the Go/Java key, for the
    /// same `indexOffset`.
    fn key_shift(self) -> i64 {
        match self {
            IndexConvention::GoJava => 0,
            IndexConvention::Python => 1,
        }
    }
}

/// Why a message could not be decoded into a sketch. The sketch was left unchanged.
///
/// ```
/// use tailguard::proto::{decode_into, DecodeError, IndexConvention};
/// use tailguard::sketch::presets;
///
/// let mut s = presets::log_latency();
/// // A mapping field (1) whose length runs past the end of the input.
/// let err = decode_into(&[0x0a, 0x09, 0x09], IndexConvention::GoJava, &mut s);
/// assert_eq!(err, Err(DecodeError::Truncated));
/// assert!(s.is_empty());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ends inside a field (or a packed run of doubles is not a multiple of 8
    /// bytes long).
    Truncated,
    /// A varint is longer than 10 bytes or does not fit in 64 bits (or a tag in 32).
    VarintOverflow,
    /// A field number is 0.
    InvalidFieldNumber,
    /// A wire type is invalid, a group (unsupported), or not the one of a known field.
    WireType {
        /// The field number, within its message.
        field: u32,
        /// The wire type found.
        wire_type: u8,
    },
    /// The mapping is missing, or its gamma is not a finite number above 1, or its
    /// offset is not finite.
    InvalidMapping,
    /// The interpolation is not the sketch's.
    Interpolation {
        /// The value on the wire (0 NONE, 1 LINEAR, 2 QUADRATIC, 3 CUBIC, ...).
        found: i32,
        /// The sketch's.
        expected: i32,
    },
    /// gamma is not the sketch's (relative tolerance `1e-12`).
    Gamma {
        /// gamma on the wire.
        found: f64,
        /// The sketch's gamma, in the convention decoded with.
        expected: f64,
    },
    /// The index offset is not the sketch's up to a whole number of bins.
    Offset {
        /// `indexOffset` on the wire.
        found: f64,
        /// The sketch's offset (any offset a whole number away is accepted).
        expected: f64,
    },
    /// The message holds negative values; tailguard sketches hold none.
    NegativeValues,
    /// A count is negative, not finite or not a whole number.
    InvalidCount {
        /// The count on the wire.
        count: f64,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated => f.write_str("truncated protobuf message"),
            DecodeError::VarintOverflow => f.write_str("protobuf varint overflows"),
            DecodeError::InvalidFieldNumber => f.write_str("protobuf field number 0"),
            DecodeError::WireType { field, wire_type } => {
                write!(f, "unexpected wire type {wire_type} for field {field}")
            }
            DecodeError::InvalidMapping => f.write_str("missing or invalid index mapping"),
            DecodeError::Interpolation { found, expected } => write!(
                f,
                "interpolation {found} does not match the sketch's ({expected})"
            ),
            DecodeError::Gamma { found, expected } => {
                write!(f, "gamma {found} does not match the sketch's ({expected})")
            }
            DecodeError::Offset { found, expected } => write!(
                f,
                "index offset {found} is not the sketch's ({expected}) plus a whole number"
            ),
            DecodeError::NegativeValues => {
                f.write_str("the sketch holds negative values, which tailguard does not record")
            }
            DecodeError::InvalidCount { count } => write!(
                f,
                "bin count {count} is not a whole, non-negative, finite number"
            ),
        }
    }
}

impl core::error::Error for DecodeError {}

/// Why a sketch could not be encoded. Nothing useful was written.
///
/// ```
/// use tailguard::proto::{encode, EncodeError, IndexConvention};
/// use tailguard::sketch::presets;
///
/// let mut s = presets::log_latency();
/// s.record(1e6).unwrap();
/// let mut small = [0u8; 8];
/// let err = encode(&s, IndexConvention::GoJava, &mut small).unwrap_err();
/// let EncodeError::BufferTooSmall { needed } = err else { unreachable!() };
/// assert!(needed > 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum EncodeError {
    /// The buffer is shorter than the message.
    BufferTooSmall {
        /// The length of the message ([`encoded_len`]).
        needed: usize,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::BufferTooSmall { needed } => {
                write!(f, "buffer too small: the message needs {needed} bytes")
            }
        }
    }
}

impl core::error::Error for EncodeError {}

/// What [`decode_into`] added to the sketch.
///
/// ```
/// use tailguard::proto::{decode_into, encode, IndexConvention};
/// use tailguard::sketch::{DDSketch, LogMapping};
///
/// // A sketch of a wide range, decoded into one of a narrower range.
/// let mut wide = DDSketch::<LogMapping, 1024>::with_relative_accuracy(0.02, 1e-3).unwrap();
/// for v in [1e-2, 5.0, 6.0, 1e6] {
///     wide.record(v).unwrap();
/// }
/// let mut buf = [0u8; 8192];
/// let len = encode(&wide, IndexConvention::GoJava, &mut buf).unwrap();
/// let mut narrow = DDSketch::<LogMapping, 256>::with_relative_accuracy(0.02, 1.0).unwrap();
/// let report = decode_into(&buf[..len], IndexConvention::GoJava, &mut narrow).unwrap();
/// assert_eq!((report.added, report.below_range, report.above_range), (4, 1, 1));
/// assert_eq!(narrow.zero_count(), 1);
/// assert_eq!(narrow.clamped(), 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub struct Decoded {
    /// Values added to the sketch: its [`count`](DDSketch::count) grew by this much.
    pub added: u64,
    /// Of those, values of bins below the sketch's range, now in its zero bin.
    pub below_range: u64,
    /// Of those, values of bins above the sketch's range, now in its top bin (and counted
    /// by [`clamped`](DDSketch::clamped)).
    pub above_range: u64,
    /// Values dropped because their bin was full (counted by
    /// [`saturated`](DDSketch::saturated)).
    pub saturated: u64,
}

/// The `IndexMapping` of a message, as written on the wire: see [`read_mapping`].
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
/// assert_eq!(m.gamma(), s.mapping().gamma());
/// assert_eq!(m.index_offset(), 64.0); // Go's layout for this gamma
/// let alpha = m.relative_accuracy(IndexConvention::GoJava).unwrap();
/// assert!((alpha - s.relative_accuracy()).abs() < 1e-15);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct WireMapping {
    gamma: f64,
    index_offset: f64,
    interpolation: i32,
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

// ---------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------

// Field tags: (field number << 3) | wire type.
const TAG_MAPPING: u8 = 0x0a; // DDSketch.mapping = 1, LEN
const TAG_POSITIVE: u8 = 0x12; // DDSketch.positiveValues = 2, LEN
const TAG_NEGATIVE: u8 = 0x1a; // DDSketch.negativeValues = 3, LEN
const TAG_ZERO_COUNT: u8 = 0x21; // DDSketch.zeroCount = 4, I64
const TAG_GAMMA: u8 = 0x09; // IndexMapping.gamma = 1, I64
const TAG_INDEX_OFFSET: u8 = 0x11; // IndexMapping.indexOffset = 2, I64
const TAG_INTERPOLATION: u8 = 0x18; // IndexMapping.interpolation = 3, VARINT
const TAG_CONTIGUOUS_COUNTS: u8 = 0x12; // Store.contiguousBinCounts = 2, LEN (packed)
const TAG_CONTIGUOUS_OFFSET: u8 = 0x18; // Store.contiguousBinIndexOffset = 3, VARINT

/// What [`encode`] writes, worked out once.
struct Layout {
    gamma: f64,
    index_offset: f64,
    interpolation: i32,
    /// The wire key of the lowest non-empty bin.
    first_key: i32,
    /// tailguard's index of the lowest non-empty bin.
    first_index: i32,
    /// Bins from the lowest to the highest non-empty one (0 if none).
    run: usize,
    zero_count: u32,
}

impl Layout {
    fn of<M: IndexMapping, const N: usize>(
        sketch: &DDSketch<M, N>,
        convention: IndexConvention,
    ) -> Layout {
        let mapping = sketch.mapping();
        let interpolation = M::INTERPOLATION;
        let (first, last) = sketch
            .bins()
            .fold(None, |span, bin| match span {
                None => Some((bin.index, bin.index)),
                Some((first, _)) => Some((first, bin.index)),
            })
            .unwrap_or((0, -1));
        // Both indices are inside the sketch, whose indices fit in an i32.
        let run = i64::from(last)
            .wrapping_sub(i64::from(first))
            .wrapping_add(1);
        let run = usize::try_from(run).unwrap_or(0);
        let offset = mapping.index_offset();
        // The wire key of a bin is its index plus `shift`, written with `index_offset`.
        let (shift, index_offset) = match convention {
            IndexConvention::GoJava => {
                let shift = go_layout_shift(mapping);
                (shift, offset + f64::from(shift))
            }
            IndexConvention::Python => (1, offset),
        };
        let (first_key, index_offset) = match first.checked_add(shift) {
            Some(key) => (key, index_offset),
            // Out of sint32: renumber through the offset instead (same bins).
            None => (first, index_offset - f64::from(shift)),
        };
        Layout {
            gamma: convention.gamma_from_go(interpolation, mapping.gamma()),
            index_offset,
            interpolation: interpolation as i32,
            first_key,
            first_index: first,
            run,
            zero_count: sketch.zero_count(),
        }
    }

    fn mapping_len(&self) -> usize {
        let mut len: usize = 9; // gamma
        if self.index_offset != 0.0 {
            len = len.saturating_add(9);
        }
        if self.interpolation != 0 {
            len = len.saturating_add(varint_field_len(self.interpolation as u64));
        }
        len
    }

    fn packed_len(&self) -> usize {
        self.run.saturating_mul(8)
    }

    fn positive_len(&self) -> usize {
        if self.run == 0 {
            return 0;
        }
        let mut len = len_field_len(self.packed_len());
        if self.first_key != 0 {
            len = len.saturating_add(varint_field_len(u64::from(zigzag(self.first_key))));
        }
        len
    }

    fn total_len(&self) -> usize {
        let mut len = len_field_len(self.mapping_len())
            .saturating_add(len_field_len(self.positive_len()))
            .saturating_add(2); // empty negativeValues
        if self.zero_count > 0 {
            len = len.saturating_add(9);
        }
        len
    }
}

/// For `LINEAR`, the key shift of Go's and Java's default layout: they write
/// `indexOffset = multiplier` (their `approx_log(1)` is 1), so their keys are
/// `multiplier` above tailguard's when that is a whole number (`2^k` for `IntMapping`).
fn go_layout_shift<M: IndexMapping>(mapping: &M) -> i32 {
    if M::INTERPOLATION != Interpolation::Linear {
        return 0;
    }
    let multiplier = 1.0 / libm::log2(mapping.gamma());
    let whole = libm::round(multiplier);
    if (multiplier - whole).abs() <= OFFSET_TOLERANCE && (1.0..=1e9).contains(&whole) {
        whole as i32
    } else {
        0
    }
}

fn varint_len(mut v: u64) -> usize {
    let mut len: usize = 1;
    while v >= 0x80 {
        v >>= 7;
        len = len.wrapping_add(1); // at most 10
    }
    len
}

/// A one-byte tag and a varint.
fn varint_field_len(v: u64) -> usize {
    varint_len(v).saturating_add(1)
}

/// A one-byte tag, a length and `body` bytes.
fn len_field_len(body: usize) -> usize {
    varint_field_len(body as u64).saturating_add(body)
}

fn zigzag(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

fn unzigzag(v: u32) -> i32 {
    ((v >> 1) as i32) ^ ((v & 1) as i32).wrapping_neg()
}

/// Writes into a slice known to be long enough; never panics if it is not.
struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl Writer<'_> {
    fn byte(&mut self, b: u8) {
        if let Some(slot) = self.buf.get_mut(self.pos) {
            *slot = b;
        }
        self.pos = self.pos.saturating_add(1);
    }

    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.byte((v as u8) | 0x80);
            v >>= 7;
        }
        self.byte(v as u8);
    }

    fn double(&mut self, v: f64) {
        for b in v.to_le_bytes() {
            self.byte(b);
        }
    }
}

/// The length of the message [`encode`] writes for `sketch`.
///
/// ```
/// use tailguard::proto::{encoded_len, IndexConvention};
/// use tailguard::sketch::presets;
/// let mut s = presets::log_latency();
/// let empty = encoded_len(&s, IndexConvention::GoJava);
/// s.record(1e6).unwrap();
/// // One bin: its count (8 bytes), the run's tag and length, the key offset (3 bytes).
/// assert_eq!(encoded_len(&s, IndexConvention::GoJava), empty + 13);
/// ```
pub fn encoded_len<M: IndexMapping, const N: usize>(
    sketch: &DDSketch<M, N>,
    convention: IndexConvention,
) -> usize {
    Layout::of(sketch, convention).total_len()
}

/// Writes `sketch` into `buf` as a DDSketch protobuf message in `convention`, and returns
/// the number of bytes written ([`encoded_len`]). See the [module docs](self#encoding).
///
/// ```
/// use tailguard::proto::{encode, IndexConvention};
/// use tailguard::sketch::{DDSketch, LogMapping};
///
/// let mut s = DDSketch::<LogMapping, 512>::with_relative_accuracy(0.01, 1.0).unwrap();
/// s.record(1.0).unwrap();
/// let mut buf = [0u8; 64];
/// let len = encode(&s, IndexConvention::GoJava, &mut buf).unwrap();
/// // mapping {gamma}, positiveValues {one count at key 0}, negativeValues {}
/// assert_eq!(buf[0], 0x0a);
/// assert_eq!(&buf[11..len], &[0x12, 0x0a, 0x12, 0x08, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x1a, 0x00]);
/// ```
pub fn encode<M: IndexMapping, const N: usize>(
    sketch: &DDSketch<M, N>,
    convention: IndexConvention,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let layout = Layout::of(sketch, convention);
    let needed = layout.total_len();
    if buf.len() < needed {
        return Err(EncodeError::BufferTooSmall { needed });
    }
    let mut w = Writer { buf, pos: 0 };
    w.byte(TAG_MAPPING);
    w.varint(layout.mapping_len() as u64);
    w.byte(TAG_GAMMA);
    w.double(layout.gamma);
    if layout.index_offset != 0.0 {
        w.byte(TAG_INDEX_OFFSET);
        w.double(layout.index_offset);
    }
    if layout.interpolation != 0 {
        w.byte(TAG_INTERPOLATION);
        w.varint(layout.interpolation as u64);
    }
    w.byte(TAG_POSITIVE);
    w.varint(layout.positive_len() as u64);
    if layout.run > 0 {
        w.byte(TAG_CONTIGUOUS_COUNTS);
        w.varint(layout.packed_len() as u64);
        let mut next = i64::from(layout.first_index);
        for bin in sketch.bins() {
            while next < i64::from(bin.index) {
                w.double(0.0);
                next = next.saturating_add(1);
            }
            w.double(f64::from(bin.count));
            next = i64::from(bin.index).saturating_add(1);
        }
        if layout.first_key != 0 {
            w.byte(TAG_CONTIGUOUS_OFFSET);
            w.varint(u64::from(zigzag(layout.first_key)));
        }
    }
    w.byte(TAG_NEGATIVE);
    w.byte(0);
    if layout.zero_count > 0 {
        w.byte(TAG_ZERO_COUNT);
        w.double(f64::from(layout.zero_count));
    }
    Ok(w.pos)
}

// ---------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WireType {
    Varint,
    I64,
    Len,
    I32,
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.bytes.split_first().ok_or(DecodeError::Truncated)?;
            self.bytes = rest;
            let bits = u64::from(byte & 0x7f);
            // The 10th byte may only hold the 64th bit.
            if shift == 63 && bits > 1 {
                return Err(DecodeError::VarintOverflow);
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(DecodeError::VarintOverflow)
    }

    fn fixed64(&mut self) -> Result<u64, DecodeError> {
        let (bytes, rest) = self
            .bytes
            .split_first_chunk::<8>()
            .ok_or(DecodeError::Truncated)?;
        self.bytes = rest;
        Ok(u64::from_le_bytes(*bytes))
    }

    fn double(&mut self) -> Result<f64, DecodeError> {
        self.fixed64().map(f64::from_bits)
    }

    fn len_delimited(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.varint()?;
        let len = usize::try_from(len).map_err(|_| DecodeError::Truncated)?;
        let (field, rest) = self
            .bytes
            .split_at_checked(len)
            .ok_or(DecodeError::Truncated)?;
        self.bytes = rest;
        Ok(field)
    }

    fn tag(&mut self) -> Result<(u32, WireType), DecodeError> {
        let tag = u32::try_from(self.varint()?).map_err(|_| DecodeError::VarintOverflow)?;
        let field = tag >> 3;
        if field == 0 {
            return Err(DecodeError::InvalidFieldNumber);
        }
        let wire_type = match tag & 7 {
            0 => WireType::Varint,
            1 => WireType::I64,
            2 => WireType::Len,
            5 => WireType::I32,
            other => {
                return Err(DecodeError::WireType {
                    field,
                    wire_type: other as u8,
                })
            }
        };
        Ok((field, wire_type))
    }

    fn skip(&mut self, wire_type: WireType) -> Result<(), DecodeError> {
        match wire_type {
            WireType::Varint => self.varint().map(drop),
            WireType::I64 => self.fixed64().map(drop),
            WireType::Len => self.len_delimited().map(drop),
            WireType::I32 => {
                let (_, rest) = self
                    .bytes
                    .split_first_chunk::<4>()
                    .ok_or(DecodeError::Truncated)?;
                self.bytes = rest;
                Ok(())
            }
        }
    }
}

fn wrong_type(field: u32, wire_type: WireType) -> DecodeError {
    DecodeError::WireType {
        field,
        wire_type: match wire_type {
            WireType::Varint => 0,
            WireType::I64 => 1,
            WireType::Len => 2,
            WireType::I32 => 5,
        },
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoreKind {
    Positive,
    Negative,
}

/// One field of interest, in wire order.
#[derive(Debug, Clone, Copy)]
enum Event {
    Gamma(f64),
    IndexOffset(f64),
    Interpolation(i32),
    /// A `binCounts` entry.
    Sparse {
        store: StoreKind,
        key: i32,
        count: f64,
    },
    /// The `position`-th count of `contiguousBinCounts` (over every occurrence of the store).
    Contiguous {
        store: StoreKind,
        position: u64,
        count: f64,
    },
    ContiguousOffset {
        store: StoreKind,
        offset: i32,
    },
    ZeroCount(f64),
}

/// Walks a `DDSketch` message, calling `visit` for every field of interest.
fn walk<F>(bytes: &[u8], visit: &mut F) -> Result<(), DecodeError>
where
    F: FnMut(Event) -> Result<(), DecodeError>,
{
    let mut r = Reader { bytes };
    let (mut positive, mut negative) = (0u64, 0u64);
    while !r.is_empty() {
        match r.tag()? {
            (1, WireType::Len) => walk_mapping(r.len_delimited()?, visit)?,
            (2, WireType::Len) => walk_store(
                r.len_delimited()?,
                StoreKind::Positive,
                &mut positive,
                visit,
            )?,
            (3, WireType::Len) => walk_store(
                r.len_delimited()?,
                StoreKind::Negative,
                &mut negative,
                visit,
            )?,
            (4, WireType::I64) => visit(Event::ZeroCount(r.double()?))?,
            (field @ 1..=4, wire_type) => return Err(wrong_type(field, wire_type)),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Ok(())
}

fn walk_mapping<F>(bytes: &[u8], visit: &mut F) -> Result<(), DecodeError>
where
    F: FnMut(Event) -> Result<(), DecodeError>,
{
    let mut r = Reader { bytes };
    while !r.is_empty() {
        match r.tag()? {
            (1, WireType::I64) => visit(Event::Gamma(r.double()?))?,
            (2, WireType::I64) => visit(Event::IndexOffset(r.double()?))?,
            // An enum is an int32: a negative one is sign-extended to 64 bits.
            (3, WireType::Varint) => visit(Event::Interpolation(r.varint()? as i32))?,
            (field @ 1..=3, wire_type) => return Err(wrong_type(field, wire_type)),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Ok(())
}

fn walk_store<F>(
    bytes: &[u8],
    store: StoreKind,
    position: &mut u64,
    visit: &mut F,
) -> Result<(), DecodeError>
where
    F: FnMut(Event) -> Result<(), DecodeError>,
{
    let mut r = Reader { bytes };
    let mut contiguous = |count: f64, visit: &mut F| {
        let event = Event::Contiguous {
            store,
            position: *position,
            count,
        };
        *position = position.saturating_add(1);
        visit(event)
    };
    while !r.is_empty() {
        match r.tag()? {
            (1, WireType::Len) => {
                let (key, count) = read_entry(r.len_delimited()?)?;
                visit(Event::Sparse { store, key, count })?
            }
            (2, WireType::Len) => {
                let packed = r.len_delimited()?;
                let chunks = packed.chunks_exact(8);
                if !chunks.remainder().is_empty() {
                    return Err(DecodeError::Truncated);
                }
                for chunk in chunks {
                    let mut bytes = [0u8; 8];
                    bytes.copy_from_slice(chunk);
                    contiguous(f64::from_le_bytes(bytes), visit)?;
                }
            }
            (2, WireType::I64) => contiguous(r.double()?, visit)?,
            (3, WireType::Varint) => {
                // An int32 field keeps the low 32 bits of the varint.
                let offset = unzigzag(r.varint()? as u32);
                visit(Event::ContiguousOffset { store, offset })?
            }
            (field @ 1..=3, wire_type) => return Err(wrong_type(field, wire_type)),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Ok(())
}

/// A `binCounts` map entry: `key = 1` (sint32), `value = 2` (double); absent ones are 0.
fn read_entry(bytes: &[u8]) -> Result<(i32, f64), DecodeError> {
    let mut r = Reader { bytes };
    let (mut key, mut count) = (0, 0.0);
    while !r.is_empty() {
        match r.tag()? {
            (1, WireType::Varint) => key = unzigzag(r.varint()? as u32),
            (2, WireType::I64) => count = r.double()?,
            (field @ 1..=2, wire_type) => return Err(wrong_type(field, wire_type)),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Ok((key, count))
}

fn check_count(count: f64) -> Result<u64, DecodeError> {
    if count.is_finite() && count >= 0.0 && libm::trunc(count) == count {
        // Saturating: a count of 2^64 or more is more than any bin holds anyway.
        Ok(count as u64)
    } else {
        Err(DecodeError::InvalidCount { count })
    }
}

/// What the validating pass learns: the final value of every scalar.
#[derive(Debug, Clone, Copy, Default)]
struct Scan {
    mapping: Option<WireMapping>,
    positive_offset: i32,
    negative: bool,
    zero_count: u64,
}

fn scan(bytes: &[u8]) -> Result<Scan, DecodeError> {
    let mut s = Scan::default();
    let empty = WireMapping {
        gamma: 0.0,
        index_offset: 0.0,
        interpolation: 0,
    };
    walk(bytes, &mut |event| {
        match event {
            Event::Gamma(g) => s.mapping.get_or_insert(empty).gamma = g,
            Event::IndexOffset(o) => s.mapping.get_or_insert(empty).index_offset = o,
            Event::Interpolation(i) => s.mapping.get_or_insert(empty).interpolation = i,
            Event::Sparse { store, count, .. } | Event::Contiguous { store, count, .. } => {
                if check_count(count)? > 0 && store == StoreKind::Negative {
                    s.negative = true;
                }
            }
            Event::ContiguousOffset {
                store: StoreKind::Positive,
                offset,
            } => s.positive_offset = offset,
            Event::ContiguousOffset { .. } => {}
            Event::ZeroCount(c) => s.zero_count = check_count(c)?,
        }
        Ok(())
    })?;
    Ok(s)
}

/// Reads the `IndexMapping` of a message (checking the whole message is well formed), to
/// pick the configuration of the sketch to decode it into.
///
/// Errors on a malformed message or an invalid count, and with
/// [`DecodeError::InvalidMapping`] if the mapping is missing, its gamma is not a finite
/// number above 1 or its offset is not finite.
///
/// ```
/// use tailguard::proto::{encode, read_mapping, IndexConvention};
/// use tailguard::sketch::{presets, Interpolation};
///
/// let s = presets::cubic_latency();
/// let mut buf = [0u8; 64];
/// let len = encode(&s, IndexConvention::GoJava, &mut buf).unwrap();
/// let m = read_mapping(&buf[..len]).unwrap();
/// assert_eq!(m.interpolation(), Some(Interpolation::Cubic));
/// let alpha = m.relative_accuracy(IndexConvention::GoJava).unwrap();
/// assert!((alpha - 0.01).abs() < 1e-12);
/// ```
pub fn read_mapping(bytes: &[u8]) -> Result<WireMapping, DecodeError> {
    let mapping = scan(bytes)?.mapping.ok_or(DecodeError::InvalidMapping)?;
    if mapping.gamma > 1.0 && mapping.gamma.is_finite() && mapping.index_offset.is_finite() {
        Ok(mapping)
    } else {
        Err(DecodeError::InvalidMapping)
    }
}

/// How much to add to a wire key (read in `convention`) to get the sketch's index, or why
/// the message's mapping is not the sketch's.
fn key_to_index<M: IndexMapping>(
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

/// Decodes a DDSketch protobuf message written in `convention` and adds its bins to
/// `sketch`, as [`DDSketch::merge`] would add another sketch's.
///
/// To decode into a fresh sketch, pass an empty sketch of the writer's configuration
/// (its mapping, and a range; [`read_mapping`] tells the mapping). The message's mapping
/// must be the sketch's (see the [module docs](self#matching-a-sketchs-mapping)); bins
/// outside the sketch's range are clamped and counted; the returned [`Decoded`] says how
/// many values were added and how many of them were clamped or saturated. On error
/// the sketch is unchanged.
///
/// ```
/// use tailguard::proto::{decode_into, encode, DecodeError, IndexConvention};
/// use tailguard::sketch::{DDSketch, LogMapping};
///
/// type Sketch = DDSketch<LogMapping, 1024>;
/// let mut a = Sketch::with_relative_accuracy(0.01, 1.0).unwrap();
/// for v in 1..=100 {
///     a.record(f64::from(v)).unwrap();
/// }
/// let mut buf = [0u8; 4096];
/// let len = encode(&a, IndexConvention::GoJava, &mut buf).unwrap();
///
/// let mut b = Sketch::with_relative_accuracy(0.01, 1.0).unwrap();
/// decode_into(&buf[..len], IndexConvention::GoJava, &mut b).unwrap();
/// assert!(b.bins().eq(a.bins()));
/// let p50 = b.quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 50.0).abs() <= 0.01 * 50.0);
///
/// // Another accuracy is another mapping: an error, and nothing changes.
/// let mut c = Sketch::with_relative_accuracy(0.02, 1.0).unwrap();
/// let err = decode_into(&buf[..len], IndexConvention::GoJava, &mut c).unwrap_err();
/// assert!(matches!(err, DecodeError::Gamma { .. }));
/// assert!(c.is_empty());
/// ```
pub fn decode_into<M: IndexMapping, const N: usize>(
    bytes: &[u8],
    convention: IndexConvention,
    sketch: &mut DDSketch<M, N>,
) -> Result<Decoded, DecodeError> {
    // Pass 1 validates everything and learns the scalars (which may come last); pass 2,
    // over the same bytes, cannot fail, so the sketch is changed all or not at all.
    let found = scan(bytes)?;
    let wire = read_mapping_of(&found)?;
    let shift = key_to_index(&wire, sketch.mapping(), convention)?;
    if found.negative {
        return Err(DecodeError::NegativeValues);
    }

    let mut report = Decoded::default();
    let first = i64::from(found.positive_offset);
    let applied = walk(bytes, &mut |event| {
        let (key, count) = match event {
            Event::Sparse {
                store: StoreKind::Positive,
                key,
                count,
            } => (i64::from(key), count),
            Event::Contiguous {
                store: StoreKind::Positive,
                position,
                count,
            } => (
                first.saturating_add(i64::try_from(position).unwrap_or(i64::MAX)),
                count,
            ),
            _ => return Ok(()),
        };
        let n = check_count(count)?;
        if n > 0 {
            add_bin(sketch, key.saturating_add(shift), n, &mut report);
        }
        Ok(())
    });
    // Pass 1 accepted these bytes, so pass 2 does too.
    applied?;
    let added = sketch.add_bin_count(i32::MIN, found.zero_count, 0.0);
    report.added = report.added.saturating_add(added);
    report.saturated = report
        .saturated
        .saturating_add(found.zero_count.saturating_sub(added));
    Ok(report)
}

fn read_mapping_of(found: &Scan) -> Result<WireMapping, DecodeError> {
    match found.mapping {
        Some(m) if m.gamma > 1.0 && m.gamma.is_finite() && m.index_offset.is_finite() => Ok(m),
        _ => Err(DecodeError::InvalidMapping),
    }
}

/// Adds `n` values of the sketch's bin `index` (any i64: clamped as `record` clamps).
fn add_bin<M: IndexMapping, const N: usize>(
    sketch: &mut DDSketch<M, N>,
    index: i64,
    n: u64,
    report: &mut Decoded,
) {
    let min = i64::from(sketch.min_index());
    // min_index + N fits in an i32 (the sketch's constructors check it).
    let end = min.saturating_add(i64::try_from(N).unwrap_or(i64::MAX));
    let index32 = i32::try_from(index).unwrap_or(if index < 0 { i32::MIN } else { i32::MAX });
    let value = sketch.mapping().value(index32);
    let value = if value.is_finite() && value >= 0.0 {
        value
    } else if index < min {
        0.0
    } else {
        sketch.max_trackable()
    };
    // Below the range the index goes to the zero bin: i32::MIN is always below it.
    let index32 = if index < min { i32::MIN } else { index32 };
    let added = sketch.add_bin_count(index32, n, value);
    report.added = report.added.saturating_add(added);
    report.saturated = report.saturated.saturating_add(n.saturating_sub(added));
    if index < min {
        report.below_range = report.below_range.saturating_add(added);
    } else if index >= end {
        report.above_range = report.above_range.saturating_add(added);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::{CubicMapping, IntMapping, LogMapping};
    use std::vec::Vec;

    type Log = DDSketch<LogMapping, 512>;

    fn log() -> Log {
        Log::with_relative_accuracy(0.01, 1.0).unwrap()
    }

    fn encode_vec<M: IndexMapping, const N: usize>(
        s: &DDSketch<M, N>,
        convention: IndexConvention,
    ) -> Vec<u8> {
        let mut buf = std::vec![0u8; encoded_len(s, convention)];
        let len = encode(s, convention, &mut buf).unwrap();
        assert_eq!(len, buf.len());
        buf
    }

    /// A hand-written protobuf encoder for test messages.
    #[derive(Default)]
    struct Msg(Vec<u8>);

    impl Msg {
        fn varint(mut self, mut v: u64) -> Self {
            while v >= 0x80 {
                self.0.push(v as u8 | 0x80);
                v >>= 7;
            }
            self.0.push(v as u8);
            self
        }
        fn tag(self, field: u32, wire_type: u8) -> Self {
            self.varint(u64::from(field << 3 | u32::from(wire_type)))
        }
        fn double(mut self, field: u32, v: f64) -> Self {
            self = self.tag(field, 1);
            self.0.extend_from_slice(&v.to_le_bytes());
            self
        }
        fn uint(self, field: u32, v: u64) -> Self {
            self.tag(field, 0).varint(v)
        }
        fn sint(self, field: u32, v: i32) -> Self {
            self.uint(field, u64::from(zigzag(v)))
        }
        fn message(mut self, field: u32, body: Msg) -> Self {
            self = self.tag(field, 2).varint(body.0.len() as u64);
            self.0.extend_from_slice(&body.0);
            self
        }
        fn packed(self, field: u32, values: &[f64]) -> Self {
            let mut body = Msg::default();
            for v in values {
                body.0.extend_from_slice(&v.to_le_bytes());
            }
            self.message(field, body)
        }
        fn raw(mut self, bytes: &[u8]) -> Self {
            self.0.extend_from_slice(bytes);
            self
        }
    }

    fn mapping_of<M: IndexMapping>(m: &M) -> Msg {
        Msg::default()
            .double(1, m.gamma())
            .double(2, m.index_offset())
            .uint(3, M::INTERPOLATION as u64)
    }

    fn entry(key: i32, count: f64) -> Msg {
        Msg::default().sint(1, key).double(2, count)
    }

    #[test]
    fn round_trips_every_mapping_and_convention() {
        fn check<M: IndexMapping, const N: usize>(mut s: DDSketch<M, N>) {
            for v in [0.0, 1.0, 1.5, 2.0, 3.0, 4.0, 100.0, 100.0, 1e4, 7e5] {
                s.record(v).unwrap();
            }
            assert_eq!(s.clamped(), 0);
            for convention in [IndexConvention::GoJava, IndexConvention::Python] {
                let bytes = encode_vec(&s, convention);
                let mut t = s.clone();
                t.clear();
                let report = decode_into(&bytes, convention, &mut t).unwrap();
                assert_eq!(report.added, 10);
                assert_eq!((report.below_range, report.above_range), (0, 0));
                assert!(t.bins().eq(s.bins()), "{convention:?} {:?}", s.mapping());
                assert_eq!(t.zero_count(), 1);
                assert_eq!(t.count(), s.count());
                // min and max are the representatives of the end bins (0 for zeros).
                assert_eq!(t.min(), Some(0.0));
                let top = s.bins().last().unwrap().index;
                assert_eq!(t.max(), Some(s.mapping().value(top)));
                for q in [0.1, 0.5, 0.9, 0.99] {
                    assert_eq!(t.quantile(q), s.quantile(q));
                }
                let alpha = s.relative_accuracy();
                assert!((t.sum() - s.sum()).abs() <= alpha * s.sum());
                // The other convention reads it differently, or not at all.
                let other = match convention {
                    IndexConvention::GoJava => IndexConvention::Python,
                    IndexConvention::Python => IndexConvention::GoJava,
                };
                let mut u = t.clone();
                u.clear();
                match decode_into(&bytes, other, &mut u) {
                    Ok(_) => assert!(!u.bins().eq(s.bins())),
                    Err(e) => assert!(matches!(e, DecodeError::Gamma { .. })),
                }
            }
        }
        check(DDSketch::<LogMapping, 1024>::with_relative_accuracy(0.01, 1.0).unwrap());
        check(DDSketch::<CubicMapping, 1024>::with_relative_accuracy(0.01, 1.0).unwrap());
        check(DDSketch::<IntMapping, 2048>::with_relative_accuracy(0.01, 1.0).unwrap());
        check(DDSketch::<IntMapping, 4096>::with_relative_accuracy(0.005, 1.0).unwrap());
    }

    #[test]
    fn empty_sketch_encodes_mapping_and_empty_stores() {
        let s = log();
        let bytes = encode_vec(&s, IndexConvention::GoJava);
        // mapping {gamma}, positiveValues {}, negativeValues {}
        assert_eq!(bytes.len(), 2 + 9 + 2 + 2);
        let mut t = log();
        assert_eq!(
            decode_into(&bytes, IndexConvention::GoJava, &mut t),
            Ok(Decoded::default())
        );
        assert!(t.is_empty());
        assert_eq!(t.min(), None);
    }

    #[test]
    fn int_mapping_writes_go_default_layout() {
        let mut s = DDSketch::<IntMapping, 1024>::with_relative_accuracy(0.01, 1.0).unwrap();
        s.record(1.0).unwrap(); // index 0
        let bytes = encode_vec(&s, IndexConvention::GoJava);
        let m = read_mapping(&bytes).unwrap();
        assert_eq!(m.gamma(), libm::exp2(1.0 / 64.0));
        assert_eq!(m.index_offset(), 64.0);
        assert_eq!(m.interpolation_code(), 1);
        // The key on the wire is 64: Go's floor((e + 1 + m) * 64) for 1.0.
        let store = Msg::default().packed(2, &[1.0]).sint(3, 64);
        let expected = Msg::default()
            .message(
                1,
                Msg::default()
                    .double(1, m.gamma())
                    .double(2, 64.0)
                    .uint(3, 1),
            )
            .message(2, store)
            .message(3, Msg::default());
        assert_eq!(bytes, expected.0);
        // Offset 0 with tailguard's own keys describes the same bins.
        let zero_offset = Msg::default()
            .message(1, Msg::default().double(1, m.gamma()).uint(3, 1))
            .message(2, Msg::default().packed(2, &[1.0]));
        let mut t = s.clone();
        t.clear();
        decode_into(&zero_offset.0, IndexConvention::GoJava, &mut t).unwrap();
        assert!(t.bins().eq(s.bins()));
    }

    #[test]
    fn python_convention_keys_are_one_higher_with_python_gamma() {
        let mut s = log();
        s.record(1.0).unwrap(); // bin 0 = [1, gamma) here, Python's key 1 = (1, gamma]
        let bytes = encode_vec(&s, IndexConvention::Python);
        let expected = Msg::default()
            .message(1, Msg::default().double(1, s.mapping().gamma()))
            .message(2, Msg::default().packed(2, &[1.0]).sint(3, 1))
            .message(3, Msg::default());
        assert_eq!(bytes, expected.0);

        let mut i = DDSketch::<IntMapping, 1024>::with_relative_accuracy(0.01, 1.0).unwrap();
        i.record(1.0).unwrap();
        let m = read_mapping(&encode_vec(&i, IndexConvention::Python)).unwrap();
        // Python's LINEAR gamma is e^(1 / multiplier).
        assert!((m.gamma() - libm::exp(1.0 / 64.0)).abs() < 1e-15);
        assert_eq!(m.index_offset(), 0.0);
        let alpha = m.relative_accuracy(IndexConvention::Python).unwrap();
        assert!((alpha - i.relative_accuracy()).abs() < 1e-15);

        let c = CubicMapping::with_relative_accuracy(0.01).unwrap();
        let py = IndexConvention::Python.gamma_from_go(Interpolation::Cubic, c.gamma());
        // Python's CUBIC gamma is (1 + alpha) / (1 - alpha).
        assert!((py - 1.01 / 0.99).abs() < 1e-14);
        let back = IndexConvention::Python.gamma_to_go(Interpolation::Cubic, py);
        assert!((back - c.gamma()).abs() <= 1e-15 * c.gamma());
    }

    #[test]
    fn sparse_and_contiguous_bins_add_up() {
        let m = log();
        let base = m.mapping().index(10.0);
        let msg = Msg::default()
            .message(
                2,
                Msg::default()
                    .message(1, entry(base, 2.0))
                    .message(1, entry(base + 5, 1.0))
                    .message(1, entry(base, 3.0)) // a repeated key adds
                    .packed(2, &[1.0, 0.0, 4.0])
                    .sint(3, base),
            )
            .message(1, mapping_of(m.mapping())) // the mapping may come last
            .double(4, 7.0);
        let mut s = log();
        let report = decode_into(&msg.0, IndexConvention::GoJava, &mut s).unwrap();
        assert_eq!(report.added, 2 + 1 + 3 + 1 + 4 + 7);
        let bins: Vec<_> = s.bins().map(|b| (b.index - base, b.count)).collect();
        assert_eq!(bins, [(0, 6), (2, 4), (5, 1)]);
        assert_eq!(s.zero_count(), 7);
    }

    #[test]
    fn repeated_messages_merge_as_protobuf_says() {
        let m = log();
        let base = m.mapping().index(10.0);
        // Two positiveValues: the counts concatenate, the last offset wins.
        let msg = Msg::default()
            .message(1, Msg::default().double(1, 3.0)) // overridden below
            .message(2, Msg::default().packed(2, &[1.0]).sint(3, 999))
            .message(2, Msg::default().double(2, 2.0).sint(3, base)) // unpacked
            .message(1, mapping_of(m.mapping()))
            .double(4, 1.0)
            .double(4, 0.0); // the last zeroCount wins
        let mut s = log();
        decode_into(&msg.0, IndexConvention::GoJava, &mut s).unwrap();
        let bins: Vec<_> = s.bins().map(|b| (b.index - base, b.count)).collect();
        assert_eq!(bins, [(0, 1), (1, 2)]);
        assert_eq!(s.zero_count(), 0);
    }

    #[test]
    fn unknown_fields_are_skipped() {
        let m = log();
        let msg = Msg::default()
            .uint(9, 12345)
            .message(
                1,
                mapping_of(m.mapping())
                    .raw(&[0x25, 1, 2, 3, 4]) // field 4, fixed32
                    .double(7, 1.0),
            )
            .message(15, Msg::default().uint(1, 1))
            .message(
                2,
                Msg::default()
                    .message(1, entry(m.mapping().index(5.0), 1.0).uint(3, 1))
                    .uint(100, 3),
            );
        let mut s = log();
        assert_eq!(
            decode_into(&msg.0, IndexConvention::GoJava, &mut s)
                .unwrap()
                .added,
            1
        );
    }

    #[test]
    fn malformed_input_is_a_typed_error_and_changes_nothing() {
        let mut s = log();
        s.record(3.0).unwrap();
        let before = s.clone();
        let good = encode_vec(&s, IndexConvention::GoJava);
        let cases: &[(&[u8], DecodeError)] = &[
            (&[], DecodeError::InvalidMapping),
            (&[0x0a], DecodeError::Truncated),
            (&[0x0a, 0x05, 0x09, 0, 0], DecodeError::Truncated),
            (&[0x21, 0, 0], DecodeError::Truncated),
            (
                &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02],
                DecodeError::VarintOverflow,
            ),
            (
                &[
                    0x88, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
                ],
                DecodeError::VarintOverflow,
            ),
            (&[0x80, 0x80, 0x80, 0x80, 0x20], DecodeError::VarintOverflow), // tag > u32
            (&[0x00], DecodeError::InvalidFieldNumber),
            (
                &[0x0b],
                DecodeError::WireType {
                    field: 1,
                    wire_type: 3,
                },
            ),
            (
                &[0x0e],
                DecodeError::WireType {
                    field: 1,
                    wire_type: 6,
                },
            ),
            (
                &[0x09, 0, 0, 0, 0, 0, 0, 0, 0],
                DecodeError::WireType {
                    field: 1,
                    wire_type: 1,
                },
            ),
            (
                &[0x20, 0x01],
                DecodeError::WireType {
                    field: 4,
                    wire_type: 0,
                },
            ),
            (&[0x12, 0x03, 0x12, 0x01, 0x00], DecodeError::Truncated), // short packed run
        ];
        for (bytes, want) in cases {
            assert_eq!(
                decode_into(bytes, IndexConvention::GoJava, &mut s),
                Err(*want),
                "{bytes:x?}"
            );
            assert_eq!(s, before);
        }
        // Every prefix of a good message fails or decodes; none panics or half-applies.
        for cut in 0..good.len() {
            let mut t = before.clone();
            if decode_into(&good[..cut], IndexConvention::GoJava, &mut t).is_err() {
                assert_eq!(t, before);
            }
        }
    }

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

    #[test]
    fn bad_counts_are_errors() {
        let m = log();
        let key = m.mapping().index(10.0);
        for count in [
            -1.0,
            0.5,
            1e10 + 0.5,
            f64::NAN,
            f64::INFINITY,
            -f64::INFINITY,
        ] {
            for store in [
                Msg::default().message(1, entry(key, count)),
                Msg::default().packed(2, &[1.0, count]),
            ] {
                let msg = Msg::default()
                    .message(1, mapping_of(m.mapping()))
                    .message(2, store);
                let mut s = log();
                let err = decode_into(&msg.0, IndexConvention::GoJava, &mut s).unwrap_err();
                assert!(matches!(err, DecodeError::InvalidCount { .. }), "{count}");
                assert!(s.is_empty());
            }
            let zero = Msg::default()
                .message(1, mapping_of(m.mapping()))
                .double(4, count);
            let mut s = log();
            assert!(decode_into(&zero.0, IndexConvention::GoJava, &mut s).is_err());
        }
        // -0.0 is zero.
        let msg = Msg::default()
            .message(1, mapping_of(m.mapping()))
            .message(2, Msg::default().packed(2, &[-0.0]))
            .double(4, -0.0);
        let mut s = log();
        assert_eq!(
            decode_into(&msg.0, IndexConvention::GoJava, &mut s),
            Ok(Decoded::default())
        );
    }

    #[test]
    fn negative_values_are_an_error_unless_empty() {
        let m = log();
        let key = m.mapping().index(10.0);
        let with_negative = |store: Msg| {
            Msg::default()
                .message(1, mapping_of(m.mapping()))
                .message(2, Msg::default().message(1, entry(key, 1.0)))
                .message(3, store)
                .0
        };
        let mut s = log();
        for store in [
            Msg::default().message(1, entry(key, 1.0)),
            Msg::default().packed(2, &[0.0, 2.0]).sint(3, -4),
        ] {
            assert_eq!(
                decode_into(&with_negative(store), IndexConvention::GoJava, &mut s),
                Err(DecodeError::NegativeValues)
            );
            assert!(s.is_empty());
        }
        // An empty negative store, or one of zeros (Python pads its stores), is fine.
        for store in [Msg::default(), Msg::default().packed(2, &[0.0, 0.0])] {
            let mut s = log();
            assert_eq!(
                decode_into(&with_negative(store), IndexConvention::GoJava, &mut s)
                    .unwrap()
                    .added,
                1
            );
        }
    }

    #[test]
    fn out_of_range_bins_are_clamped_and_counted() {
        let mut s = log();
        let m = *s.mapping();
        let below = s.min_index() - 10;
        let above = s.min_index() + 512 + 10;
        let msg = Msg::default().message(1, mapping_of(&m)).message(
            2,
            Msg::default()
                .message(1, entry(below, 2.0))
                .message(1, entry(above, 3.0))
                .message(1, entry(i32::MAX, 1.0))
                .message(1, entry(i32::MIN, 1.0))
                .message(1, entry(s.min_index(), 4.0)),
        );
        let report = decode_into(&msg.0, IndexConvention::GoJava, &mut s).unwrap();
        assert_eq!(report.added, 11);
        assert_eq!(report.below_range, 3);
        assert_eq!(report.above_range, 4);
        assert_eq!(s.zero_count(), 3);
        assert_eq!(s.clamped(), 4);
        assert_eq!(s.count(), 11);
        // Stats: the value of each original bin, or the edge of the range.
        assert_eq!(s.min(), Some(m.value(i32::MIN)));
        assert_eq!(s.max(), Some(m.value(above))); // above max_trackable, stood for i32::MAX
        assert!(s.sum().is_finite());
        // Keys beyond i32 through a large offset shift clamp the same way.
        let shifted = LogMapping::from_gamma_offset(m.gamma(), 4e9).unwrap();
        let msg = Msg::default()
            .message(1, mapping_of(&shifted))
            .message(2, Msg::default().message(1, entry(i32::MIN, 1.0)));
        let mut t = log();
        let report = decode_into(&msg.0, IndexConvention::GoJava, &mut t).unwrap();
        assert_eq!(report.below_range, 1);
        let far = LogMapping::from_gamma_offset(m.gamma(), 1e10).unwrap();
        let msg = Msg::default().message(1, mapping_of(&far));
        assert!(matches!(
            decode_into(&msg.0, IndexConvention::GoJava, &mut t),
            Err(DecodeError::Offset { .. })
        ));
    }

    #[test]
    fn huge_counts_saturate_and_are_counted() {
        let m = log();
        let key = m.mapping().index(10.0);
        let msg = Msg::default()
            .message(1, mapping_of(m.mapping()))
            .message(
                2,
                Msg::default()
                    .message(1, entry(key, 5e9))
                    .message(1, entry(key + 1, 1e15)),
            )
            .double(4, 4294967296.0);
        let mut s = log();
        let report = decode_into(&msg.0, IndexConvention::GoJava, &mut s).unwrap();
        let full = u64::from(u32::MAX);
        assert_eq!(report.added, 3 * full);
        assert_eq!(
            report.saturated,
            (5_000_000_000 - full) + (1_000_000_000_000_000 - full) + 1
        );
        assert_eq!(s.saturated(), report.saturated);
        assert_eq!(s.count(), 3 * full);
        assert_eq!(s.zero_count(), u32::MAX);
    }

    #[test]
    fn decoded_min_max_keep_quantiles_within_alpha() {
        let mut a = log();
        for v in [3.0, 3.0, 10.0, 250.0] {
            a.record(v).unwrap();
        }
        let bytes = encode_vec(&a, IndexConvention::GoJava);
        let mut b = log();
        decode_into(&bytes, IndexConvention::GoJava, &mut b).unwrap();
        for (q, exact) in [(0.0, 3.0), (0.5, 3.0), (0.7, 10.0), (1.0, 250.0)] {
            let got = b.quantile(q).unwrap().unwrap();
            assert!((got - exact).abs() <= 0.01 * exact, "q={q}: {got}");
        }
        // Merged with local values, the exact local extremes still count.
        b.record(1.5).unwrap();
        assert_eq!(b.min(), Some(1.5));
    }

    #[test]
    fn encode_reports_the_size_needed() {
        let mut s = log();
        for v in [1.0, 50.0, 400.0] {
            s.record(v).unwrap();
        }
        s.record(0.0).unwrap();
        for convention in [IndexConvention::GoJava, IndexConvention::Python] {
            let needed = encoded_len(&s, convention);
            let mut buf = std::vec![0u8; needed - 1];
            assert_eq!(
                encode(&s, convention, &mut buf),
                Err(EncodeError::BufferTooSmall { needed })
            );
            let mut buf = std::vec![0u8; needed + 5];
            assert_eq!(encode(&s, convention, &mut buf), Ok(needed));
            // 8 per bin of the run, at most 50 more (as the module docs say).
            let run = Layout::of(&s, convention).run;
            assert!(needed - 8 * run <= 50, "{needed} for {run} bins");
        }
    }

    #[test]
    fn extreme_indices_still_encode() {
        // A sketch whose top bin is i32::MAX - 1: Python's key shift still fits.
        let m = LogMapping::with_relative_accuracy(0.01).unwrap();
        let shifted =
            LogMapping::from_gamma_offset(m.gamma(), f64::from(i32::MAX) - 600.0).unwrap();
        let mut s = DDSketch::<LogMapping, 64>::new(shifted, 1.0).unwrap();
        s.record(1e300).unwrap(); // clamped into the top bin
        for convention in [IndexConvention::GoJava, IndexConvention::Python] {
            let bytes = encode_vec(&s, convention);
            let mut t = s.clone();
            t.clear();
            decode_into(&bytes, convention, &mut t).unwrap();
            assert!(t.bins().eq(s.bins()));
        }
    }

    /// `IntMapping` with every index moved up to just below `i32::MAX`.
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct NearTop(IntMapping);

    const NEAR_TOP: i32 = i32::MAX - 70;

    impl IndexMapping for NearTop {
        const INTERPOLATION: Interpolation = Interpolation::Linear;
        fn with_relative_accuracy(alpha: f64) -> Result<Self, crate::sketch::ConfigError> {
            IntMapping::with_relative_accuracy(alpha).map(NearTop)
        }
        fn relative_accuracy(&self) -> f64 {
            self.0.relative_accuracy()
        }
        fn gamma(&self) -> f64 {
            self.0.gamma()
        }
        fn index_offset(&self) -> f64 {
            f64::from(NEAR_TOP)
        }
        fn index(&self, value: f64) -> i32 {
            self.0.index(value).saturating_add(NEAR_TOP)
        }
        fn lower_bound(&self, index: i32) -> f64 {
            self.0.lower_bound(index - NEAR_TOP)
        }
    }

    #[test]
    fn keys_beyond_sint32_move_into_the_offset() {
        let mut s = DDSketch::<NearTop, 64>::with_relative_accuracy(0.01, 1.0).unwrap();
        s.record(1.94).unwrap(); // bin 60 of the octave: Go's key would pass i32::MAX
        assert!(s.bins().next().unwrap().index > i32::MAX - 64);
        let bytes = encode_vec(&s, IndexConvention::GoJava);
        assert_eq!(
            read_mapping(&bytes).unwrap().index_offset(),
            f64::from(NEAR_TOP)
        );
        let mut t = s.clone();
        t.clear();
        decode_into(&bytes, IndexConvention::GoJava, &mut t).unwrap();
        assert!(t.bins().eq(s.bins()));
    }

    #[test]
    fn varints_and_zigzag() {
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let bytes = Msg::default().varint(v).0;
            assert_eq!(bytes.len(), varint_len(v));
            assert_eq!(Reader { bytes: &bytes }.varint(), Ok(v));
        }
        for v in [0, 1, -1, 64, -65, i32::MAX, i32::MIN] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn errors_display() {
        let e = DecodeError::Gamma {
            found: 1.5,
            expected: 1.02,
        };
        assert!(std::format!("{e}").contains("1.5"));
        let e = EncodeError::BufferTooSmall { needed: 42 };
        assert!(std::format!("{e}").contains("42"));
    }
}
