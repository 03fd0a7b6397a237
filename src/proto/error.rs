//! What can go wrong: [`DecodeError`] and [`EncodeError`].

use crate::wire::WireError;
use core::fmt;

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
    /// The interpolation is not one the convention defines (re-binning reads `NONE`,
    /// `LINEAR`, `QUADRATIC`, `CUBIC` and `QUARTIC` in the Go/Java convention, `NONE`,
    /// `LINEAR` and `CUBIC` in Python's).
    UnsupportedInterpolation {
        /// The value on the wire.
        found: i32,
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
            DecodeError::InvalidMapping => f.write_str(
                "missing or invalid index mapping: gamma must be finite and above 1, the offset finite",
            ),
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
            DecodeError::UnsupportedInterpolation { found } => {
                write!(
                    f,
                    "interpolation {found} is not supported in this convention"
                )
            }
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

impl From<WireError> for DecodeError {
    fn from(e: WireError) -> Self {
        match e {
            WireError::Truncated => DecodeError::Truncated,
            WireError::VarintOverflow => DecodeError::VarintOverflow,
            WireError::InvalidFieldNumber => DecodeError::InvalidFieldNumber,
            WireError::WireType { field, wire_type } => DecodeError::WireType { field, wire_type },
        }
    }
}

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
        /// The length of the encoding ([`proto::encoded_len`](crate::proto::encoded_len) or
        /// [`otlp::encoded_len`](crate::otlp::encoded_len)).
        needed: usize,
    },
    /// The sketch's mapping has no DDSketch protobuf form: its gamma is not a finite
    /// number (OpenTelemetry's scale -10, whose base is `2^1024`). Nothing is written
    /// rather than a message every reader refuses.
    UnrepresentableMapping,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::BufferTooSmall { needed } => {
                write!(f, "buffer too small: the encoding needs {needed} bytes")
            }
            EncodeError::UnrepresentableMapping => {
                f.write_str("the mapping's gamma is not finite: no DDSketch message can hold it")
            }
        }
    }
}

impl core::error::Error for EncodeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_display() {
        let e = DecodeError::Gamma {
            found: 1.5,
            expected: 1.02,
        };
        assert!(std::format!("{e}").contains("1.5"));
        let e = EncodeError::BufferTooSmall { needed: 42 };
        assert!(std::format!("{e}").contains("42"));
        let e = DecodeError::InvalidMapping;
        assert!(std::format!("{e}").contains("gamma must be finite and above 1"));
    }
}
