//! The `metrics` recorder (feature `metrics`): exact counts from several threads, one
//! histogram per key, counted refusals and rejected values.

use std::sync::Arc;

use metrics::{HistogramFn, Key};
use tailguard::metrics::{OtelRecorder, Recorder, SketchHistogram, OTEL_SECONDS_LAYOUT};
use tailguard::sketch::presets;

const ROUTES: [&str; 4] = ["/a", "/b", "/c", "/d"];

fn key(route: &'static str) -> Key {
    Key::from_parts("latency_seconds", &[("route", route)])
}

#[test]
fn several_threads_record_exact_counts_per_key() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = if cfg!(miri) { 200 } else { 100_000 };
    let recorder: OtelRecorder<8> = OtelRecorder::new();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let recorder = &recorder;
            s.spawn(move || {
                metrics::with_local_recorder(recorder, || {
                    for i in 0..PER_THREAD {
                        let route = ROUTES[(i + t) % ROUTES.len()];
                        let ms = 1 + (i % 500) as u64;
                        metrics::histogram!("latency_seconds", "route" => route)
                            .record(ms as f64 / 1e3);
                    }
                });
            });
        }
    });
    assert_eq!(recorder.len(), ROUTES.len());
    assert_eq!(recorder.refused(), 0);
    let per_key = (THREADS * PER_THREAD / ROUTES.len()) as u64;
    for route in ROUTES {
        let h = recorder.get(&key(route)).unwrap();
        assert_eq!(h.sketch().count(), per_key, "{route}");
        assert_eq!(h.rejected(), 0);
        assert_eq!(h.sketch().clamped(), 0);
    }
    let total: u64 = recorder.histograms().map(|(_, h)| h.sketch().count()).sum();
    assert_eq!(total, (THREADS * PER_THREAD) as u64);
}

#[test]
fn threads_registering_the_same_keys_share_one_histogram_each() {
    // Every thread races to claim the same keys' slots, filling the recorder exactly.
    let recorder: OtelRecorder<4> = OtelRecorder::new();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..1_000 {
                    for route in ROUTES {
                        recorder.histogram(&key(route)).unwrap().record(0.005);
                    }
                }
            });
        }
    });
    assert_eq!(recorder.len(), 4);
    assert_eq!(recorder.refused(), 0);
    for route in ROUTES {
        assert_eq!(recorder.get(&key(route)).unwrap().sketch().count(), 4_000);
    }
}

#[test]
fn registering_a_key_twice_returns_the_same_histogram() {
    let recorder: OtelRecorder<4> = OtelRecorder::new();
    let first = recorder.histogram(&key("/a")).unwrap();
    let second = recorder.histogram(&key("/a")).unwrap();
    assert!(Arc::ptr_eq(&first, &second));
    metrics::with_local_recorder(&recorder, || {
        metrics::histogram!("latency_seconds", "route" => "/a").record(0.004);
        metrics::histogram!("latency_seconds", "route" => "/a").record(0.006);
    });
    assert_eq!(recorder.len(), 1);
    assert_eq!(first.sketch().count(), 2);
    // Another label value, or another name, is another key.
    assert!(!Arc::ptr_eq(
        &first,
        &recorder.histogram(&key("/b")).unwrap()
    ));
    assert!(recorder
        .histogram(&Key::from_name("latency_seconds"))
        .is_some());
    assert_eq!(recorder.len(), 3);
}

#[test]
fn a_full_recorder_refuses_new_keys_and_counts_them() {
    let recorder: OtelRecorder<2> = OtelRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        for route in ROUTES {
            metrics::histogram!("latency_seconds", "route" => route).record(0.001);
        }
        // A refused key's records go nowhere, each registration counted.
        metrics::histogram!("latency_seconds", "route" => "/d").record(0.001);
    });
    assert_eq!(recorder.len(), 2);
    assert_eq!(recorder.refused(), 3);
    assert!(recorder.histogram(&key("/a")).is_some());
    assert!(recorder.histogram(&key("/b")).is_some());
    assert!(recorder.get(&key("/c")).is_none());
    let total: u64 = recorder.histograms().map(|(_, h)| h.sketch().count()).sum();
    assert_eq!(total, 2);

    let none: OtelRecorder<0> = OtelRecorder::new();
    assert!(none.histogram(&key("/a")).is_none());
    assert_eq!(none.refused(), 1);
    assert!(none.is_empty());
}

#[test]
fn nan_and_negative_values_are_counted_as_rejected() {
    let recorder: OtelRecorder<4> = OtelRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        let h = metrics::histogram!("latency_seconds", "route" => "/a");
        h.record(f64::NAN);
        h.record(-1.0);
        h.record(0.002);
        h.record_many(f64::NAN, 3);
        h.record_many(0.003, 3);
    });
    let h = recorder.get(&key("/a")).unwrap();
    assert_eq!(h.rejected(), 5);
    assert_eq!(h.sketch().count(), 4);
}

#[test]
fn an_empty_batch_records_nothing() {
    let recorder: OtelRecorder<4> = OtelRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        let h = metrics::histogram!("batch_seconds");
        h.record_many(0.25, 0);
        h.record_many(500.0, 0); // above the range: not clamped either
        h.record_many(f64::NAN, 0);
        h.record_many(0.25, 2);
    });
    let h = recorder
        .get(&metrics::Key::from_name("batch_seconds"))
        .unwrap();
    assert_eq!(h.sketch().count(), 2);
    assert_eq!(h.sketch().clamped(), 0);
    assert_eq!(h.rejected(), 0);
    assert_eq!(h.sketch().max(), Some(0.25));
}

#[test]
fn counters_and_gauges_are_no_ops() {
    let recorder: OtelRecorder<4> = OtelRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        metrics::counter!("requests").increment(1);
        metrics::gauge!("in_flight").set(3.0);
    });
    assert!(recorder.is_empty());
    assert_eq!(recorder.refused(), 0);
}

#[test]
fn a_nanosecond_layout_records_nanoseconds() {
    let recorder: Recorder<_, { presets::OTEL_LATENCY_BINS }, 4> =
        Recorder::with_layout(presets::OTEL_LATENCY_LAYOUT);
    metrics::with_local_recorder(&recorder, || {
        for ns in [1e6, 2e6, 3e6] {
            metrics::histogram!("latency_ns").record(ns);
        }
    });
    let h = recorder.get(&Key::from_name("latency_ns")).unwrap();
    let median = h.sketch().quantile(0.5).unwrap().unwrap();
    assert!((median - 2e6).abs() <= h.sketch().relative_accuracy() * 2e6);
}

/// `rejected` never wraps: a batch of `usize::MAX` NaNs on top of earlier rejections
/// saturates at `u64::MAX` (a plain `fetch_add` wrapped it back to 9, losing every one).
#[test]
fn rejected_saturates_instead_of_wrapping() {
    let h = SketchHistogram::with_layout(OTEL_SECONDS_LAYOUT);
    h.record_many(f64::NAN, 5);
    h.record_many(-1.0, 4);
    h.record(f64::NEG_INFINITY);
    assert_eq!(h.rejected(), 10);
    h.record_many(f64::NAN, usize::MAX);
    assert_eq!(h.rejected(), u64::MAX);
    h.record(f64::NAN);
    assert_eq!(h.rejected(), u64::MAX);
    assert_eq!(h.sketch().count(), 0);
}

/// A huge valid batch takes one step, not `count` records (it looped `count` times, which
/// for `usize::MAX` would not end): a bin takes 2^31 and the rest counts as saturated.
#[test]
fn a_huge_batch_is_one_step_and_saturates() {
    let h = SketchHistogram::with_layout(OTEL_SECONDS_LAYOUT);
    h.record_many(0.25, usize::MAX);
    h.record_many(0.5, 3);
    assert_eq!(h.sketch().count(), (1 << 31) + 3);
    assert_eq!(h.sketch().saturated(), (1 << 31) - 1); // u32::MAX less the bin's 2^31
    assert_eq!(h.rejected(), 0);
    assert_eq!(h.sketch().max(), Some(0.5));
}
