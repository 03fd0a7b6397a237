//! The two wire formats on a preset sketch: DataDog's DDSketch protobuf (`tailguard::proto`,
//! with re-binning of foreign mappings) and OpenTelemetry's exponential histogram data
//! point (`tailguard::otlp`, the `otel` preset only), and the reports their decoders give.

use pyo3::prelude::*;
use tailguard::otlp::{self, Timestamps};
use tailguard::proto::{self, IndexConvention};

use crate::errors::{decode_error, value_error};
use crate::preset::{each, AnySketch};

/// A convention's name as Python passes it: `"go_java"` (DataDog's Go and Java libraries,
/// and tailguard) or `"python"` (DataDog's Python `ddsketch`).
pub fn convention(name: &str) -> PyResult<IndexConvention> {
    match name {
        "go_java" => Ok(IndexConvention::GoJava),
        "python" => Ok(IndexConvention::Python),
        _ => Err(value_error(format!(
            "convention must be 'go_java' or 'python', got {name:?}"
        ))),
    }
}

/// What `merge_ddsketch` added (`tailguard.proto.Rebinned`).
#[pyclass(
    module = "tailguard",
    name = "Rebinned",
    frozen,
    get_all,
    skip_from_py_object
)]
#[derive(Clone, Copy)]
pub struct PyRebinned {
    /// Values added: `count` grew by this much.
    pub added: u64,
    /// Of those, values moved from a bin of another mapping (0 when the mapping was the
    /// sketch's own).
    pub rebinned: u64,
    /// Of those added, values below the sketch's range, now in its zero bin.
    pub below_range: u64,
    /// Of those added, values above the sketch's range, now in its top bin.
    pub above_range: u64,
    /// Values dropped because their bin was full.
    pub saturated: u64,
    /// Whether the message's mapping was the sketch's (decoded bin for bin).
    pub exact: bool,
    /// The relative error the added values carry within the sketch's range: the sketch's
    /// accuracy when exact, else `a + b + a * b` (the writer's `a`, the sketch's `b`).
    pub relative_error: f64,
}

#[pymethods]
impl PyRebinned {
    fn __repr__(&self) -> String {
        format!(
            "Rebinned(added={}, rebinned={}, below_range={}, above_range={}, saturated={}, \
             exact={}, relative_error={})",
            self.added,
            self.rebinned,
            self.below_range,
            self.above_range,
            self.saturated,
            if self.exact { "True" } else { "False" },
            self.relative_error
        )
    }
}

/// What `merge_otlp` added (`tailguard.otlp.Decoded`).
#[pyclass(
    module = "tailguard",
    name = "OtlpDecoded",
    frozen,
    get_all,
    skip_from_py_object
)]
#[derive(Clone, Copy)]
pub struct PyOtlpDecoded {
    /// Values added: `count` grew by this much.
    pub added: u64,
    /// Of those, values below the sketch's range, now in its zero bin.
    pub below_range: u64,
    /// Of those, values above the sketch's range, now in its top bin.
    pub above_range: u64,
    /// Values dropped because their bin was full.
    pub saturated: u64,
    /// Of those added, zero-bucket values whose threshold reaches the sketch's bins.
    pub wide_zero: u64,
    /// The data point's scale (the sketch's, or finer).
    pub scale: i32,
    /// Whether min, max and sum are the data point's exact ones.
    pub exact_stats: bool,
    /// The data point's `start_time_unix_nano` (0 if absent).
    pub start_unix_ns: u64,
    /// The data point's `time_unix_nano` (0 if absent).
    pub end_unix_ns: u64,
}

#[pymethods]
impl PyOtlpDecoded {
    fn __repr__(&self) -> String {
        format!(
            "OtlpDecoded(added={}, below_range={}, above_range={}, saturated={}, \
             wide_zero={}, scale={}, exact_stats={}, start_unix_ns={}, end_unix_ns={})",
            self.added,
            self.below_range,
            self.above_range,
            self.saturated,
            self.wide_zero,
            self.scale,
            if self.exact_stats { "True" } else { "False" },
            self.start_unix_ns,
            self.end_unix_ns
        )
    }
}

/// `sketch` as a DDSketch protobuf message in `convention`.
pub fn to_ddsketch(sketch: &AnySketch, convention: IndexConvention) -> PyResult<Vec<u8>> {
    each!(sketch, s => {
        let mut buf = vec![0u8; proto::encoded_len(s, convention)];
        let len = proto::encode(s, convention, &mut buf).map_err(value_error)?;
        buf.truncate(len);
        Ok(buf)
    })
}

/// Adds the DDSketch protobuf message `bytes`, of any mapping, to `sketch` (re-binned when
/// the mapping is not the sketch's). On error `sketch` is unchanged.
pub fn merge_ddsketch(
    sketch: &mut AnySketch,
    bytes: &[u8],
    convention: IndexConvention,
) -> PyResult<PyRebinned> {
    let r =
        each!(sketch, s => proto::decode_rebinned(bytes, convention, s)).map_err(decode_error)?;
    Ok(PyRebinned {
        added: r.added,
        rebinned: r.rebinned,
        below_range: r.below_range,
        above_range: r.above_range,
        saturated: r.saturated,
        exact: r.exact,
        relative_error: r.relative_error,
    })
}

/// The OTLP codecs need OpenTelemetry's mapping: the `otel` preset.
fn otel_only(what: &str, preset: &str) -> PyErr {
    value_error(format!(
        "{what} needs a sketch of the 'otel' preset (OpenTelemetry's buckets), not {preset:?}"
    ))
}

/// `sketch` as an OTLP `ExponentialHistogramDataPoint`.
pub fn to_otlp(sketch: &AnySketch, start_unix_ns: u64, end_unix_ns: u64) -> PyResult<Vec<u8>> {
    let AnySketch::Otel(s) = sketch else {
        return Err(otel_only("to_otlp", sketch.name()));
    };
    let times = Timestamps::new(start_unix_ns, end_unix_ns);
    let mut buf = vec![0u8; otlp::encoded_len(s, times)];
    let len = otlp::encode(s, times, &mut buf).map_err(value_error)?;
    buf.truncate(len);
    Ok(buf)
}

/// Adds the OTLP `ExponentialHistogramDataPoint` `bytes` (of the sketch's scale or finer) to
/// `sketch`. On error `sketch` is unchanged.
pub fn merge_otlp(sketch: &mut AnySketch, bytes: &[u8]) -> PyResult<PyOtlpDecoded> {
    let name = sketch.name();
    let AnySketch::Otel(s) = sketch else {
        return Err(otel_only("merge_otlp", name));
    };
    let d = otlp::decode_into(bytes, s).map_err(decode_error)?;
    Ok(PyOtlpDecoded {
        added: d.added,
        below_range: d.below_range,
        above_range: d.above_range,
        saturated: d.saturated,
        wide_zero: d.wide_zero,
        scale: d.scale,
        exact_stats: d.exact_stats,
        start_unix_ns: d.times.start_unix_nano,
        end_unix_ns: d.times.time_unix_nano,
    })
}
