//! The fields tailguard writes, numbered as in Prometheus's own
//! `prompb/io/prometheus/client/metrics.proto` (older `client_model` copies number the
//! native-histogram fields differently).

// MetricFamily
pub(crate) const FAMILY_NAME: u32 = 1;
pub(crate) const FAMILY_HELP: u32 = 2;
pub(crate) const FAMILY_TYPE: u32 = 3;
pub(crate) const FAMILY_METRIC: u32 = 4;
/// `MetricType.HISTOGRAM`.
pub(crate) const TYPE_HISTOGRAM: u64 = 4;

// Metric
pub(crate) const METRIC_LABEL: u32 = 1;
pub(crate) const METRIC_HISTOGRAM: u32 = 7;

// LabelPair
pub(crate) const LABEL_NAME: u32 = 1;
pub(crate) const LABEL_VALUE: u32 = 2;

// Histogram
pub(crate) const SAMPLE_COUNT: u32 = 1;
pub(crate) const SAMPLE_SUM: u32 = 2;
pub(crate) const SCHEMA: u32 = 5;
pub(crate) const ZERO_THRESHOLD: u32 = 6;
pub(crate) const ZERO_COUNT: u32 = 7;
pub(crate) const POSITIVE_SPAN: u32 = 12;
/// Packed `sint64`.
pub(crate) const POSITIVE_DELTA: u32 = 13;

// BucketSpan
pub(crate) const SPAN_OFFSET: u32 = 1;
pub(crate) const SPAN_LENGTH: u32 = 2;
