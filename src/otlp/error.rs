//! What can go wrong decoding: [`DecodeError`] (encoding fails as the DDSketch encoder does:
//! [`EncodeError`](crate::proto::EncodeError)).

use crate::wire::WireError;
use core::fmt;

/// Why an OTLP data point could not be decoded into a sketch. The sketch was left
/// unchanged.
///
/// ```
/// use tailguard::otlp::{decode_into, DecodeError};
/// use tailguard::sketch::presets;
///
/// let mut s = presets::otel_latency(); // scale 5
/// // scale = 3 (field 6, zigzag 6), one count in positive bucket 700: coarser than 5.
/// let msg = [0x21, 1, 0, 0, 0, 0, 0, 0, 0, 0x30, 6, 0x42, 6, 0x08, 0xf8, 0x0a, 0x12, 1, 1];
/// let err = decode_into(&msg, &mut s);
/// assert_eq!(err, Err(DecodeError::CoarserScale { found: 3, expected: 5 }));
/// assert!(s.is_empty());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum DecodeError {
    /// The bytes are not a well-formed protobuf message, or a field tailguard reads has
    /// the wrong wire type: what the protobuf reader found (one of
    /// [`Truncated`](crate::proto::DecodeError::Truncated),
    /// [`VarintOverflow`](crate::proto::DecodeError::VarintOverflow),
    /// [`InvalidFieldNumber`](crate::proto::DecodeError::InvalidFieldNumber) and
    /// [`WireType`](crate::proto::DecodeError::WireType)).
    Malformed(crate::proto::DecodeError),
    /// The scale is outside OpenTelemetry's `-10..=20`.
    InvalidScale {
        /// The scale on the wire.
        scale: i32,
    },
    /// The data point's buckets are coarser than the sketch's (a smaller scale): each
    /// would straddle several of the sketch's bins. Decode it into a sketch of the
    /// message's scale ([`read_scale`](crate::otlp::read_scale)), or coarser.
    CoarserScale {
        /// The message's scale.
        found: i32,
        /// The sketch's scale.
        expected: i32,
    },
    /// The negative buckets hold values; tailguard sketches hold none.
    NegativeValues,
    /// A non-empty positive bucket lies beyond the floats' range (below the bucket of
    /// `2^-1022` or above that of `f64::MAX`, at the point's scale): no span of an
    /// [`ExponentialSketch`](crate::sketch::ExponentialSketch)'s buckets reaches it at
    /// any scale down to -10, where every float fits in two buckets. Only decoding into
    /// an `ExponentialSketch` refuses it (a `DDSketch` clamps such buckets into its range).
    BeyondFloats {
        /// The point's scale.
        scale: i32,
    },
    /// `count` is not the zero count plus every bucket count.
    Count {
        /// `count` on the wire.
        count: u64,
        /// The zero count plus every bucket count (saturating at `u64::MAX`).
        buckets: u64,
    },
}

impl From<crate::proto::DecodeError> for DecodeError {
    fn from(e: crate::proto::DecodeError) -> Self {
        DecodeError::Malformed(e)
    }
}

impl From<WireError> for DecodeError {
    fn from(e: WireError) -> Self {
        DecodeError::Malformed(e.into())
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Malformed(e) => write!(f, "malformed OTLP data point: {e}"),
            DecodeError::InvalidScale { scale } => {
                write!(f, "scale {scale} is outside OpenTelemetry's -10..=20")
            }
            DecodeError::CoarserScale { found, expected } => write!(
                f,
                "the data point's scale {found} is coarser than the sketch's ({expected})"
            ),
            DecodeError::BeyondFloats { scale } => write!(
                f,
                "a bucket of the data point (scale {scale}) lies beyond the floats' range"
            ),
            DecodeError::NegativeValues => {
                f.write_str("the data point holds negative values, which tailguard does not record")
            }
            DecodeError::Count { count, buckets } => write!(
                f,
                "count {count} is not the sum of the zero count and the buckets ({buckets})"
            ),
        }
    }
}

impl core::error::Error for DecodeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_display() {
        let e = DecodeError::CoarserScale {
            found: 2,
            expected: 7,
        };
        assert!(std::format!("{e}").contains("7"));
        let e = DecodeError::from(crate::proto::DecodeError::Truncated);
        assert!(std::format!("{e}").contains("truncated"));
    }
}
