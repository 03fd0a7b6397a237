//! The recorder's default layout: OpenTelemetry's buckets over 1 µs .. 100 s in seconds.

use crate::sketch::presets::{OTEL_LATENCY_BINS, OTEL_LATENCY_LAYOUT};
use crate::sketch::{BinLayout, OtelMapping};

/// The bins of [`OtelLatency`](crate::sketch::presets::OtelLatency) (OpenTelemetry's
/// buckets at scale 5, 1.08 %) moved to values in **seconds**, 1 µs .. 100 s: the unit the
/// `metrics` and Prometheus conventions give durations. The recorder's default
/// ([`Recorder::new`](super::Recorder::new)); sketches of it export to OTLP and
/// Prometheus with nothing re-binned.
///
/// For nanoseconds, pass [`presets::OTEL_LATENCY_LAYOUT`](crate::sketch::presets::OTEL_LATENCY_LAYOUT)
/// to [`Recorder::with_layout`](super::Recorder::with_layout); for any other range,
/// [`BinLayout::from_min_index`].
///
/// ```
/// use tailguard::metrics::OTEL_SECONDS_LAYOUT;
/// use tailguard::sketch::DDSketch;
///
/// assert!(OTEL_SECONDS_LAYOUT.min_trackable() <= 1e-6);
/// assert!(OTEL_SECONDS_LAYOUT.max_trackable() >= 100.0);
/// assert_eq!(OTEL_SECONDS_LAYOUT.mapping().scale(), 5);
/// let mut s = DDSketch::with_layout(OTEL_SECONDS_LAYOUT);
/// s.record(1.5e-3).unwrap(); // 1.5 ms, in seconds
/// s.record(90.0).unwrap(); // 90 s: still in range
/// let p0 = s.quantile(0.0).unwrap().unwrap();
/// assert!((p0 - 1.5e-3).abs() <= 0.0109 * 1.5e-3);
/// assert_eq!((s.zero_count(), s.clamped()), (0, 0));
/// ```
pub const OTEL_SECONDS_LAYOUT: BinLayout<OtelMapping, OTEL_LATENCY_BINS> =
    // The preset's mapping (scale 5); -638 is its index of 1e-6, checked by a test.
    BinLayout::with_min_index(*OTEL_LATENCY_LAYOUT.mapping(), -638);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::IndexMapping;

    #[test]
    fn the_seconds_layout_spans_a_microsecond_to_a_hundred_seconds() {
        assert_eq!(
            OTEL_SECONDS_LAYOUT.mapping().index(1e-6),
            OTEL_SECONDS_LAYOUT.min_index()
        );
        assert!(OTEL_SECONDS_LAYOUT.min_trackable() <= 1e-6);
        assert!(OTEL_SECONDS_LAYOUT.max_trackable() >= 100.0);
        assert_eq!(OTEL_SECONDS_LAYOUT.mapping().scale(), 5);
    }
}
