//! [`Recorder`]: a `metrics` recorder of a fixed number of sketch histograms.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use ::metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, SharedString, Unit};

use super::histogram::SketchHistogram;
use super::layout::OTEL_SECONDS_LAYOUT;
use crate::sketch::presets::OTEL_LATENCY_BINS;
use crate::sketch::{BinLayout, IndexMapping, OtelMapping};

/// A slot: empty until a key claims it, then that key's histogram for good.
type Slot<M, const N: usize> = OnceLock<(Key, Arc<SketchHistogram<M, N>>)>;

/// A [`metrics::Recorder`](::metrics::Recorder) whose histograms are atomic sketches: up
/// to `CAP` of them, each of `N` bins of mapping `M`.
///
/// * **Recording** through a handle (`metrics::histogram!(..).record(v)`, or a handle
///   kept from it) is lock-free: the handle holds an `Arc` of the key's
///   [`SketchHistogram`], whose record is the sketch's atomic adds. NaN and negative
///   values are counted in [`SketchHistogram::rejected`], not recorded.
/// * **Registration** (every `histogram!` call that does not keep its handle) finds the
///   key by probing the slots from its hash; a new key claims the first empty slot it
///   probes (the claim is a `OnceLock`: a thread probing that slot meanwhile waits for
///   it, the only wait there is). Keys are never removed, so a key has one slot and
///   registering it again returns the same histogram.
/// * **A full recorder** refuses a new key: its handle is a no-op, and the refusal is
///   counted in [`refused`](Self::refused). It never panics or evicts.
/// * **Counters and gauges** are not kept: their handles are no-ops (descriptions and
///   units too). Pair the recorder with another for them (metrics-util's `Fanout`).
/// * **Reading**: [`histograms`](Self::histograms) lists every key with its histogram,
///   for the crate's encoders (Prometheus, OTLP, DataDog).
///
/// The default, [`OtelRecorder`] from [`new`](Recorder::new), has OpenTelemetry's
/// buckets over 1 µs .. 100 s in seconds ([`OTEL_SECONDS_LAYOUT`]), which the
/// Prometheus and OTLP exports take as they are. Each histogram takes about 3.5 KiB of
/// heap, allocated when its key is registered.
///
/// ```
/// use tailguard::metrics::OtelRecorder;
/// use tailguard::prometheus;
///
/// let recorder: OtelRecorder<16> = OtelRecorder::new();
/// metrics::with_local_recorder(&recorder, || {
///     for ms in [4.0, 5.0, 5.0, 48.0] {
///         metrics::histogram!("http_request_duration_seconds", "route" => "/a").record(ms / 1e3);
///     }
///     metrics::histogram!("http_request_duration_seconds", "route" => "/b").record(f64::NAN);
/// });
///
/// // Every histogram, exported as Prometheus native histograms (text format here): one
/// // family per name with a series per label set, since Prometheus takes a name's HELP
/// // and TYPE lines once (encoding each key on its own would repeat them).
/// let held: Vec<_> = recorder
///     .histograms()
///     .map(|(key, h)| {
///         let labels: Vec<(&str, &str)> = key.labels().map(|l| (l.key(), l.value())).collect();
///         (key.name(), labels, h.sketch().snapshot())
///     })
///     .collect();
/// let mut names: Vec<&str> = held.iter().map(|(name, ..)| *name).collect();
/// names.sort_unstable();
/// names.dedup();
/// let series: Vec<Vec<prometheus::Series<'_, _>>> = names
///     .iter()
///     .map(|&name| {
///         held.iter()
///             .filter(|(n, ..)| *n == name)
///             .map(|(_, labels, sketch)| prometheus::Series { sketch, labels })
///             .collect()
///     })
///     .collect();
/// let families: Vec<_> = names
///     .iter()
///     .zip(&series)
///     .map(|(&name, series)| prometheus::Family { name, help: "Request latency.", series })
///     .collect();
/// let answer = prometheus::scrape("text/plain", &families).unwrap(); // the Accept header's format
/// let body = String::from_utf8(answer.body).unwrap();
/// assert!(body.contains(r#"http_request_duration_seconds_count{route="/a"} 4"#));
/// // One HELP and one TYPE line for the name's two series: Prometheus refuses a second.
/// assert_eq!(body.matches("# TYPE http_request_duration_seconds histogram").count(), 1);
/// assert_eq!(body.matches("# HELP").count(), 1);
///
/// let b = metrics::Key::from_parts("http_request_duration_seconds", &[("route", "/b")]);
/// assert_eq!(recorder.get(&b).unwrap().rejected(), 1); // the NaN
/// ```
///
/// A full recorder refuses new keys, and counts them, rather than evicting or panicking:
///
/// ```
/// use tailguard::metrics::{OtelRecorder, OTEL_SECONDS_LAYOUT};
///
/// let recorder: OtelRecorder<2> = OtelRecorder::new();
/// assert!(recorder.is_empty() && recorder.capacity() == 2);
/// // Seconds, 1 µs .. 100 s.
/// assert_eq!(recorder.layout().min_index(), OTEL_SECONDS_LAYOUT.min_index());
/// assert!((recorder.layout().min_trackable() - 1e-6).abs() < 1e-8);
/// metrics::with_local_recorder(&recorder, || {
///     for route in ["/a", "/b", "/c", "/a"] {
///         metrics::histogram!("latency_seconds", "route" => route).record(0.004);
///     }
/// });
/// // Two routes fit; "/c" was refused (its handle a no-op), and "/a" found again.
/// assert_eq!((recorder.len(), recorder.refused()), (2, 1));
/// let a = metrics::Key::from_parts("latency_seconds", &[("route", "/a")]);
/// assert_eq!(recorder.get(&a).unwrap().sketch().count(), 2);
/// ```
pub struct Recorder<M, const N: usize, const CAP: usize> {
    layout: BinLayout<M, N>,
    slots: [Slot<M, N>; CAP],
    refused: AtomicU64,
}

/// The default recorder: OpenTelemetry's buckets at scale 5 (1.08 %) over 1 µs .. 100 s
/// in seconds, up to `CAP` histograms.
///
/// ```
/// use tailguard::metrics::{OtelRecorder, OTEL_SECONDS_LAYOUT};
///
/// let recorder: OtelRecorder<64> = OtelRecorder::new(); // up to 64 histograms
/// assert_eq!(recorder.layout().max_trackable(), OTEL_SECONDS_LAYOUT.max_trackable());
/// metrics::with_local_recorder(&recorder, || {
///     metrics::histogram!("db_query_seconds").record(0.0125);
/// });
/// let key = metrics::Key::from_name("db_query_seconds");
/// let p50 = recorder.get(&key).unwrap().sketch().quantile(0.5).unwrap().unwrap();
/// assert!((p50 - 0.0125).abs() <= 0.0109 * 0.0125); // scale 5: within 1.08 %
/// ```
pub type OtelRecorder<const CAP: usize> = Recorder<OtelMapping, OTEL_LATENCY_BINS, CAP>;

impl<const CAP: usize> Recorder<OtelMapping, OTEL_LATENCY_BINS, CAP> {
    /// An empty recorder of [`OTEL_SECONDS_LAYOUT`] histograms (values in seconds).
    pub fn new() -> Self {
        Self::with_layout(OTEL_SECONDS_LAYOUT)
    }
}

impl<const CAP: usize> Default for Recorder<OtelMapping, OTEL_LATENCY_BINS, CAP> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M: IndexMapping, const N: usize, const CAP: usize> Recorder<M, N, CAP> {
    /// An empty recorder whose histograms have `layout`'s bins
    /// ([`presets::OTEL_LATENCY_LAYOUT`](crate::sketch::presets::OTEL_LATENCY_LAYOUT) for
    /// nanoseconds, say).
    ///
    /// ```
    /// use tailguard::metrics::Recorder;
    /// use tailguard::sketch::{presets, IntMapping};
    ///
    /// // Nanoseconds, with integer buckets: record `Duration`s' nanoseconds as they are.
    /// let recorder: Recorder<IntMapping, { presets::INT_LATENCY_BINS }, 8> =
    ///     Recorder::with_layout(presets::INT_LATENCY_LAYOUT);
    /// metrics::with_local_recorder(&recorder, || {
    ///     metrics::histogram!("rpc_nanos").record(250_000.0);
    /// });
    /// let key = metrics::Key::from_name("rpc_nanos");
    /// assert_eq!(recorder.get(&key).unwrap().sketch().max(), Some(250_000.0));
    /// assert_eq!(recorder.layout().mapping(), presets::INT_LATENCY_LAYOUT.mapping());
    /// ```
    pub fn with_layout(layout: BinLayout<M, N>) -> Self {
        Recorder {
            layout,
            slots: core::array::from_fn(|_| OnceLock::new()),
            refused: AtomicU64::new(0),
        }
    }

    /// `key`'s histogram, registered if it is new; `None` if it is new and the recorder
    /// is full (counted in [`refused`](Self::refused)).
    ///
    /// To record a batch on it, call `record_many` through `&*` the `Arc` (or through a
    /// `metrics::Histogram`): with `metrics::HistogramFn` in scope, `arc.record_many(..)`
    /// resolves to the `metrics` crate's impl for `Arc<T>`, which does not forward it and
    /// records the values one at a time (a count of `usize::MAX` would not return), where
    /// [`SketchHistogram`]'s takes one step.
    ///
    /// ```
    /// use tailguard::metrics::OtelRecorder;
    ///
    /// let recorder: OtelRecorder<1> = OtelRecorder::new();
    /// let key = metrics::Key::from_name("queue_wait_seconds");
    /// let h = recorder.histogram(&key).unwrap(); // registered: a handle to keep
    /// h.sketch().record(0.5).unwrap();
    /// let again = recorder.histogram(&key).unwrap(); // the same histogram
    /// assert_eq!(again.sketch().count(), 1);
    /// // Full: a new key is refused and counted, never evicting the first.
    /// assert!(recorder.histogram(&metrics::Key::from_name("other")).is_none());
    /// assert_eq!((recorder.len(), recorder.refused()), (1, 1));
    /// ```
    pub fn histogram(&self, key: &Key) -> Option<Arc<SketchHistogram<M, N>>> {
        let found = self.probe(key, true);
        if found.is_none() {
            self.refused.fetch_add(1, Ordering::Relaxed);
        }
        found.map(Arc::clone)
    }

    /// `key`'s histogram if it is registered (registers nothing).
    pub fn get(&self, key: &Key) -> Option<&SketchHistogram<M, N>> {
        self.probe(key, false).map(|h| &**h)
    }

    /// Every registered key with its histogram, in slot order (not registration order).
    pub fn histograms(&self) -> impl Iterator<Item = (&Key, &SketchHistogram<M, N>)> {
        self.slots
            .iter()
            .filter_map(|slot| slot.get().map(|(key, h)| (key, &**h)))
    }

    /// How many keys are registered.
    pub fn len(&self) -> usize {
        self.histograms().count()
    }

    /// Whether no key is registered.
    pub fn is_empty(&self) -> bool {
        self.histograms().next().is_none()
    }

    /// How many histograms the recorder holds at most: `CAP`.
    pub const fn capacity(&self) -> usize {
        CAP
    }

    /// How many registrations of a new key a full recorder refused (each `histogram!`
    /// call of such a key counts once).
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// The layout of every histogram.
    pub fn layout(&self) -> BinLayout<M, N> {
        self.layout
    }

    /// The slot of `key`: probed from its hash, claiming the first empty slot if `claim`.
    fn probe(&self, key: &Key, claim: bool) -> Option<&Arc<SketchHistogram<M, N>>> {
        // CAP == 0: no slot (`checked_rem` is `None`).
        let start = key.get_hash().checked_rem(CAP as u64)?;
        let (before, from) = self.slots.split_at_checked(usize::try_from(start).ok()?)?;
        for slot in from.iter().chain(before) {
            let entry = if claim {
                // The first empty slot on a key's probe sequence is where it goes: every
                // slot before it holds another key for good, so a second registration of
                // the key probes the same filled slots and finds it here.
                Some(slot.get_or_init(|| {
                    (
                        key.clone(),
                        Arc::new(SketchHistogram::with_layout(self.layout)),
                    )
                }))
            } else {
                slot.get()
            };
            match entry {
                Some((k, h)) if k == key => return Some(h),
                Some(_) => {}
                // Not claiming, and an empty slot: the key would have been here.
                None => return None,
            }
        }
        None
    }
}

impl<M, const N: usize, const CAP: usize> ::metrics::Recorder for Recorder<M, N, CAP>
where
    M: IndexMapping + Send + Sync + 'static,
{
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
        Counter::noop()
    }

    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        match self.histogram(key) {
            Some(h) => Histogram::from_arc(h),
            None => Histogram::noop(),
        }
    }
}

impl<M: IndexMapping, const N: usize, const CAP: usize> core::fmt::Debug for Recorder<M, N, CAP> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Recorder")
            .field("len", &self.len())
            .field("capacity", &CAP)
            .field("refused", &self.refused())
            .finish_non_exhaustive()
    }
}
