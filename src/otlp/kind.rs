//! [`OtelSketch`]: the sketches that are OpenTelemetry exponential histograms, and so
//! travel as data points: [`DDSketch<OtelMapping, N>`](crate::sketch::DDSketch) (its
//! scale fixed) and [`ExponentialSketch<C, B>`](crate::sketch::ExponentialSketch) (its
//! scale its own).

use super::{DecodeError, Decoded, Timestamps};
use crate::wire::Writer;

pub(super) mod sealed {
    use super::{DecodeError, Decoded, Timestamps, Writer};

    /// What a data point needs of a sketch; outside the crate, nothing implements it.
    pub trait Sealed {
        /// The length of what [`write_body`](Self::write_body) writes.
        fn body_len(&self, times: Timestamps) -> usize;
        /// Writes the point's fields from `start_time_unix_nano` on (every field but the
        /// attributes, field 1, which an export request writes first to keep field
        /// order).
        fn write_body(&self, times: Timestamps, w: &mut Writer<'_>);
        /// Decodes a data point into the sketch, all or nothing.
        fn decode(&mut self, bytes: &[u8]) -> Result<Decoded, DecodeError>;
    }
}

/// A sketch that is an OpenTelemetry exponential histogram, bucket for bucket: what
/// [`encode`](super::encode), [`encoded_len`](super::encoded_len),
/// [`decode_into`](super::decode_into) and [`DataPoint`](super::DataPoint) take.
///
/// * [`DDSketch<OtelMapping, N>`](crate::sketch::DDSketch): at its mapping's scale, over
///   the range chosen for it. A point decodes into it at its scale or finer.
/// * [`ExponentialSketch<C, B>`](crate::sketch::ExponentialSketch): at whatever scale it
///   is at. A point of any scale decodes into it, downscaling whichever of the two is
///   finer (see [Decoding into an `ExponentialSketch`](super#decoding-into-an-exponentialsketch)).
///
/// Sealed: implemented for those two only.
///
/// ```
/// use tailguard::otlp::{self, OtelSketch, Timestamps};
/// use tailguard::sketch::{presets, ExponentialSketch};
///
/// fn point_len(s: &impl OtelSketch) -> usize {
///     otlp::encoded_len(s, Timestamps::default())
/// }
/// let mut fixed = presets::otel_latency();
/// let mut auto = ExponentialSketch::<u32, 160>::new();
/// fixed.record_u64(1_000);
/// auto.record_u64(1_000);
/// assert!(point_len(&fixed) > 0 && point_len(&auto) > 0);
/// ```
pub trait OtelSketch: sealed::Sealed {}

impl<T: sealed::Sealed> OtelSketch for T {}
