//! A recorder for the [`metrics`](https://docs.rs/metrics/0.24) facade whose histograms
//! are atomic sketches (feature `metrics`).
//!
//! Code that already calls `metrics::histogram!(..).record(v)` gets DDSketch accuracy
//! (every quantile within the layout's relative error) and the crate's exports, with no
//! lock on the record path: install a [`Recorder`] (`metrics::set_global_recorder`, or
//! `metrics::with_local_recorder` in tests), then read its histograms with
//! [`Recorder::histograms`] and encode each snapshot with [`prometheus`](crate::prometheus),
//! [`otlp`](crate::otlp) (an OpenTelemetry-bucket layout, as the default is) or
//! [`proto`](crate::proto) (DataDog).
//!
//! This module uses the heap (an `Arc` per histogram) and `std`'s `OnceLock`: the
//! feature implies `std`. Only histograms are kept; counters and gauges are no-ops.
//! Recording speed against metrics-exporter-prometheus's storage is in BENCHMARKS.md,
//! "The metrics recorder".
//!
//! ```
//! use tailguard::metrics::OtelRecorder;
//!
//! let recorder: OtelRecorder<4> = OtelRecorder::new();
//! metrics::with_local_recorder(&recorder, || {
//!     metrics::histogram!("db_query_seconds").record(0.012);
//!     metrics::counter!("db_queries").increment(1); // not kept
//! });
//! let histograms: Vec<_> = recorder.histograms().collect();
//! assert_eq!(histograms.len(), 1);
//! let (key, histogram) = histograms[0];
//! assert_eq!(key.name(), "db_query_seconds");
//! let p50 = histogram.sketch().quantile(0.5).unwrap().unwrap();
//! assert!((p50 - 0.012).abs() <= 0.0109 * 0.012);
//! ```

mod histogram;
mod layout;
mod recorder;

pub use histogram::SketchHistogram;
pub use layout::OTEL_SECONDS_LAYOUT;
pub use recorder::{OtelRecorder, Recorder};
