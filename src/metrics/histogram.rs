//! [`SketchHistogram`]: one registered histogram, an atomic sketch and a count of the
//! values it refused.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::sketch::{AtomicSketch, BinLayout, IndexMapping};

/// What a `metrics::Histogram` handle from a [`Recorder`](super::Recorder) records into:
/// an [`AtomicSketch`] and the number of values it refused.
///
/// Recording is lock-free (the sketch's atomic adds). NaN and negative values are not
/// recorded and are counted in [`rejected`](Self::rejected), so none vanishes silently.
///
/// ```
/// use std::sync::Arc;
/// use tailguard::metrics::{SketchHistogram, OTEL_SECONDS_LAYOUT};
///
/// let histogram = Arc::new(SketchHistogram::with_layout(OTEL_SECONDS_LAYOUT));
/// let handle = metrics::Histogram::from_arc(Arc::clone(&histogram));
/// handle.record(0.005); // 5 ms, in seconds
/// handle.record_many(0.020, 3);
/// handle.record(f64::NAN);
/// assert_eq!((histogram.sketch().count(), histogram.rejected()), (4, 1));
/// ```
pub struct SketchHistogram<M, const N: usize> {
    sketch: AtomicSketch<M, N>,
    rejected: AtomicU64,
}

impl<M: IndexMapping, const N: usize> SketchHistogram<M, N> {
    /// An empty histogram with `layout`'s bins.
    ///
    /// ```
    /// use tailguard::metrics::SketchHistogram;
    /// use tailguard::sketch::presets::{OTEL_LATENCY_BINS, OTEL_LATENCY_LAYOUT};
    /// use tailguard::sketch::OtelMapping;
    ///
    /// // Nanoseconds rather than the recorder's seconds; `const`, so it can be a `static`.
    /// static NANOS: SketchHistogram<OtelMapping, OTEL_LATENCY_BINS> =
    ///     SketchHistogram::with_layout(OTEL_LATENCY_LAYOUT);
    /// NANOS.record(1.5e6);
    /// let p50 = NANOS.sketch().quantile(0.5).unwrap().unwrap();
    /// assert!((p50 - 1.5e6).abs() <= 0.0109 * 1.5e6);
    /// ```
    pub const fn with_layout(layout: BinLayout<M, N>) -> Self {
        SketchHistogram {
            sketch: AtomicSketch::with_layout(layout),
            rejected: AtomicU64::new(0),
        }
    }

    /// Records `value`; a NaN or negative one is counted in [`rejected`](Self::rejected)
    /// instead.
    ///
    /// ```
    /// use tailguard::metrics::{SketchHistogram, OTEL_SECONDS_LAYOUT};
    ///
    /// let histogram = SketchHistogram::with_layout(OTEL_SECONDS_LAYOUT);
    /// histogram.record(0.25);
    /// histogram.record(-0.5); // refused
    /// histogram.record(f64::NAN); // refused
    /// assert_eq!((histogram.sketch().count(), histogram.rejected()), (1, 2));
    /// ```
    pub fn record(&self, value: f64) {
        if self.sketch.record(value).is_err() {
            self.reject(1);
        }
    }

    /// Counts `n` refused values, saturating at `u64::MAX`: the count never wraps (a
    /// `record_many` of `usize::MAX` NaNs would wrap a plain add back to a small number).
    fn reject(&self, n: u64) {
        // fetch_update never fails with a closure that always returns Some.
        let _ = self
            .rejected
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| {
                Some(r.saturating_add(n))
            });
    }

    /// The sketch the values went into: [`snapshot`](AtomicSketch::snapshot) it to
    /// export it, or query it in place.
    ///
    /// ```
    /// use tailguard::metrics::{SketchHistogram, OTEL_SECONDS_LAYOUT};
    ///
    /// let histogram = SketchHistogram::with_layout(OTEL_SECONDS_LAYOUT);
    /// (1..=100).for_each(|ms| histogram.record(f64::from(ms) / 1e3));
    /// let p99 = histogram.sketch().quantile(0.99).unwrap().unwrap(); // in place
    /// assert!((p99 - 0.099).abs() <= 0.0109 * 0.099);
    /// let snapshot = histogram.sketch().snapshot(); // a `DDSketch`, to export
    /// assert_eq!(snapshot.count(), 100);
    /// ```
    pub fn sketch(&self) -> &AtomicSketch<M, N> {
        &self.sketch
    }

    /// How many values were NaN or negative, and so not recorded (saturating at
    /// `u64::MAX`: it never wraps).
    ///
    /// ```
    /// use metrics::HistogramFn;
    /// use tailguard::metrics::{SketchHistogram, OTEL_SECONDS_LAYOUT};
    ///
    /// let histogram = SketchHistogram::with_layout(OTEL_SECONDS_LAYOUT);
    /// histogram.record(-1.0);
    /// assert_eq!(histogram.rejected(), 1);
    /// histogram.record_many(f64::NAN, usize::MAX);
    /// histogram.record_many(f64::NAN, usize::MAX);
    /// assert_eq!(histogram.rejected(), u64::MAX); // saturated, not wrapped
    /// assert!(histogram.sketch().is_empty());
    /// ```
    pub fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }
}

impl<M: IndexMapping, const N: usize> ::metrics::HistogramFn for SketchHistogram<M, N> {
    fn record(&self, value: f64) {
        SketchHistogram::record(self, value);
    }

    fn record_many(&self, value: f64, count: usize) {
        // One step however large the count (`AtomicSketch::record_n`): a count past
        // `u32::MAX` is past what a bin (2^31) and the saturated counter (which stops at
        // 2^31) can hold, so it records as `u32::MAX`.
        let n = u32::try_from(count).unwrap_or(u32::MAX);
        if self.sketch.record_n(value, n).is_err() {
            // A bad value is refused `count` times.
            self.reject(u64::try_from(count).unwrap_or(u64::MAX));
        }
    }
}

impl<M: IndexMapping, const N: usize> core::fmt::Debug for SketchHistogram<M, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SketchHistogram")
            .field("count", &self.sketch.count())
            .field("rejected", &self.rejected())
            .finish_non_exhaustive()
    }
}
