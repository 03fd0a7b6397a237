//! What can go wrong encoding: [`EncodeError`].

use core::fmt;

/// Why a sketch could not be written as a Prometheus metric family. Nothing useful was
/// written into the buffer.
///
/// A sketch whose mapping is not [`OtelMapping`](crate::sketch::OtelMapping) (a
/// DataDog-mapped one: `LogMapping`, `CubicMapping`, `IntMapping`...) is refused before
/// this: the encoders take only `DDSketch<OtelMapping, N>`, so it does not compile. Its
/// bins are not Prometheus's buckets, and re-binning one would spread each bin over two
/// or more buckets, inventing where its values were.
///
/// ```
/// use tailguard::prometheus::{encode_metric_family, EncodeError};
/// use tailguard::sketch::{DDSketch, OtelMapping};
///
/// // Scale -5: a bucket per 32 powers of two, coarser than Prometheus's schema -4.
/// let coarse: DDSketch<OtelMapping, 64> =
///     DDSketch::new(OtelMapping::with_scale(-5).unwrap(), 1.0).unwrap();
/// let mut buf = [0u8; 256];
/// let err = encode_metric_family("rpc_ns", "", &coarse, &[], &mut buf);
/// assert_eq!(err, Err(EncodeError::ScaleTooCoarse { scale: -5 }));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum EncodeError {
    /// The buffer is shorter than the encoding: `needed` bytes (nothing was written past
    /// the buffer; what is in it is not a complete message).
    BufferTooSmall {
        /// The length of the whole encoding.
        needed: usize,
    },
    /// The sketch's scale is below Prometheus's coarsest schema, `-4`: one of its
    /// buckets would straddle two of Prometheus's, which cannot be split without
    /// inventing a distribution. (Scales above 8 are downscaled exactly.)
    ScaleTooCoarse {
        /// The sketch's OpenTelemetry scale.
        scale: i32,
    },
    /// The metric name is not `[a-zA-Z_:][a-zA-Z0-9_:]*`, or a label name is not
    /// `[a-zA-Z_][a-zA-Z0-9_]*`, is `le` (the text format's bucket label), starts with `__`
    /// (reserved for Prometheus's own labels) or stands twice in one series' labels.
    InvalidName,
    /// Two series of one [`Family`](super::Family) have the same label set (in any
    /// order), or two families of one scrape the same name, or one family's name another's
    /// with `_bucket`, `_count` or `_sum` appended (the text format's samples of a
    /// histogram): Prometheus's parsers would refuse the scrape.
    DuplicateSeries,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::BufferTooSmall { needed } => {
                write!(
                    f,
                    "buffer too small: the metric family needs {needed} bytes"
                )
            }
            EncodeError::ScaleTooCoarse { scale } => write!(
                f,
                "scale {scale} is coarser than Prometheus's coarsest schema (-4)"
            ),
            EncodeError::InvalidName => f.write_str(concat!(
                "not a valid Prometheus name: a metric's is [a-zA-Z_:][a-zA-Z0-9_:]*, a label's ",
                "[a-zA-Z_][a-zA-Z0-9_]*, not `le`, not starting `__`, once per series"
            )),
            EncodeError::DuplicateSeries => {
                f.write_str("two series with the same name and labels in one scrape")
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
        let e = EncodeError::ScaleTooCoarse { scale: -7 };
        assert!(std::format!("{e}").contains("-7"));
        let e = EncodeError::BufferTooSmall { needed: 42 };
        assert!(std::format!("{e}").contains("42"));
        // What is allowed, not only that it was not.
        let e = std::format!("{}", EncodeError::InvalidName);
        assert!(e.contains("[a-zA-Z_:][a-zA-Z0-9_:]*") && e.contains("`le`"));
    }
}
