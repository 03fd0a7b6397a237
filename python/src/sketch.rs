//! The Python `Sketch` class: a preset sketch, its records, queries, merge and codecs.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

use crate::codecs::{self, PyOtlpDecoded, PyRebinned};
use crate::errors::{to_count, to_f64, to_f64_or_infinite, to_u64, value_error};
use crate::preset::{each, AnySketch, NAMES};

/// A DDSketch of one of tailguard's presets, in nanoseconds (1 µs to 100 s, or 100 µs to
/// 10 s for "mcu"): record latencies, merge sketches, read quantiles, and exchange them as
/// DataDog's DDSketch protobuf or OpenTelemetry's exponential histogram.
///
/// Presets: "log" (1 %), "cubic" (1 %), "int" (0.78 %, integer input path), "int_coarse"
/// (1.56 %, the firmware's), "mcu" (1.56 %, 100 µs to 10 s) and "otel" (1.08 %,
/// OpenTelemetry's scale-5 buckets).
#[pyclass(module = "tailguard", name = "Sketch", skip_from_py_object)]
#[derive(Clone)]
pub struct Sketch {
    inner: AnySketch,
}

fn preset_sketch(name: &str) -> PyResult<AnySketch> {
    AnySketch::new(name).ok_or_else(|| {
        value_error(format!(
            "unknown preset {name:?}: one of {}",
            NAMES.map(|n| format!("{n:?}")).join(", ")
        ))
    })
}

#[pymethods]
impl Sketch {
    /// An empty sketch of preset `preset`.
    #[new]
    #[pyo3(signature = (preset = "log"))]
    fn new(preset: &str) -> PyResult<Self> {
        Ok(Sketch {
            inner: preset_sketch(preset)?,
        })
    }

    /// Records `value` (a float, nanoseconds) `n` times. ValueError if it is NaN or
    /// negative (nothing is recorded); values beyond the range go to the end bins.
    #[pyo3(signature = (value, n = None))]
    fn record(&mut self, value: &Bound<'_, PyAny>, n: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let value = to_f64(value)?;
        let n = n.map(to_count).transpose()?.unwrap_or(1);
        each!(&mut self.inner, s => s.record_n(value, n)).map_err(value_error)
    }

    /// Records the integer `value` (nanoseconds, in [0, 2**64)) `n` times, on the integer
    /// path (exact sum). TypeError if it is not an int, ValueError if out of range.
    #[pyo3(signature = (value, n = None))]
    fn record_int(
        &mut self,
        value: &Bound<'_, PyAny>,
        n: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let value = to_u64(value, "value")?;
        let n = n.map(to_count).transpose()?.unwrap_or(1);
        each!(&mut self.inner, s => s.record_u64_n(value, n));
        Ok(())
    }

    /// Records every float of `values` (any iterable), all or nothing: ValueError naming
    /// the first NaN or negative value (and nothing recorded).
    fn record_many(&mut self, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let values = values
            .try_iter()?
            .map(|v| to_f64(&v?))
            .collect::<PyResult<Vec<f64>>>()?;
        each!(&mut self.inner, s => s.record_slice(&values)).map_err(value_error)
    }

    /// Records every int of `values` (any iterable; nanoseconds, each in [0, 2**64)), all
    /// or nothing.
    fn record_many_int(&mut self, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let values = values
            .try_iter()?
            .map(|v| to_u64(&v?, "every value"))
            .collect::<PyResult<Vec<u64>>>()?;
        each!(&mut self.inner, s => s.record_u64_slice(&values));
        Ok(())
    }

    /// The value at quantile `q` in [0, 1] (0 = min, 1 = max), within the relative accuracy
    /// of the exact `sorted[floor(q * (count - 1))]` when that value is within the range
    /// (`min_trackable` to `max_trackable`): one below it is answered from the zero bin,
    /// one above it from the top bin, each clamped into [min, max]. None if empty.
    /// ValueError on a `q` outside [0, 1] or NaN (an int too large for a float included).
    fn quantile(&self, q: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
        let q = to_f64(q)?;
        each!(&self.inner, s => s.quantile(q)).map_err(value_error)
    }

    /// `[self.quantile(q) for q in qs]`.
    fn quantiles(&self, qs: &Bound<'_, PyAny>) -> PyResult<Vec<Option<f64>>> {
        qs.try_iter()?.map(|q| self.quantile(&q?)).collect()
    }

    /// How many recorded values are at most `v`, counted by bins: at least the exact count
    /// at `v`; for `v` from `min_trackable` to below `max_trackable`, at most the exact count
    /// at `v * (1 + alpha) / (1 - alpha)` (alpha being `relative_accuracy`), plus `clamped`
    /// if `v` is in the top bin. Below `min_trackable` the whole zero bin counts (values
    /// below the range are not told apart); from `max_trackable` up, every value. Exact
    /// below the minimum (0) and from the maximum up (`count`). ValueError if `v` is NaN;
    /// an int too large for a float is beyond every value (or, negative, below).
    fn rank(&self, v: &Bound<'_, PyAny>) -> PyResult<u64> {
        let v = to_f64_or_infinite(v)?;
        each!(&self.inner, s => s.rank(v)).map_err(value_error)
    }

    /// The fraction of recorded values at most `v` (`rank(v) / count`); None if empty.
    fn fraction_at_or_below(&self, v: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
        let v = to_f64_or_infinite(v)?;
        each!(&self.inner, s => s.fraction_at_or_below(v)).map_err(value_error)
    }

    /// Adds `other`'s values (a Sketch of the same preset, possibly `self`). ValueError if
    /// it is another preset (nothing changes), TypeError if it is not a Sketch,
    /// RuntimeError if either is in use (by another thread, or by an iterator a
    /// `record_many` is reading): nothing changes then either.
    fn merge(slf: &Bound<'_, Self>, other: &Bound<'_, Self>) -> PyResult<()> {
        let in_use =
            |e: &dyn std::fmt::Display| PyRuntimeError::new_err(format!("sketch in use: {e}"));
        // `s.merge(s)` would borrow one object mutably and shared at once: copy it first.
        let copy;
        let borrowed;
        let other: &AnySketch = if slf.is(other) {
            copy = slf.try_borrow().map_err(|e| in_use(&e))?.inner.clone();
            &copy
        } else {
            borrowed = other.try_borrow().map_err(|e| in_use(&e))?;
            &borrowed.inner
        };
        let mut this = slf.try_borrow_mut().map_err(|e| in_use(&e))?;
        if this.inner.merge(other) {
            Ok(())
        } else {
            Err(PyValueError::new_err(format!(
                "cannot merge a sketch of preset {:?} into one of preset {:?}",
                other.name(),
                this.inner.name()
            )))
        }
    }

    /// Empties the sketch (same preset).
    fn clear(&mut self) {
        each!(&mut self.inner, s => s.clear());
    }

    /// An independent copy.
    fn copy(&self) -> Self {
        self.clone()
    }

    fn __copy__(&self) -> Self {
        self.clone()
    }

    fn __deepcopy__(&self, memo: &Bound<'_, PyAny>) -> Self {
        let _ = memo; // nothing shared to record: a sketch holds no Python objects
        self.clone()
    }

    /// The non-empty bins, lowest first, as `(index, count)` pairs (the mapping's index,
    /// which is DataDog's Go/Java bin key); the zero bin is `zero_count`.
    fn bins(&self) -> Vec<(i32, u32)> {
        each!(&self.inner, s => s.bins().map(|b| (b.index, b.count)).collect())
    }

    /// The preset's name.
    #[getter]
    fn preset(&self) -> &'static str {
        self.inner.name()
    }

    /// How many values the sketch holds (the zero bin and every bin).
    #[getter]
    fn count(&self) -> u64 {
        each!(&self.inner, s => s.count())
    }

    /// Values in the zero bin: zeros and values below the range.
    #[getter]
    fn zero_count(&self) -> u32 {
        each!(&self.inner, s => s.zero_count())
    }

    /// Values above the range, held by the top bin.
    #[getter]
    fn clamped(&self) -> u64 {
        each!(&self.inner, s => s.clamped())
    }

    /// Values dropped because their bin was full (2**32 - 1).
    #[getter]
    fn saturated(&self) -> u64 {
        each!(&self.inner, s => s.saturated())
    }

    /// The smallest value recorded (None if empty).
    #[getter]
    fn min(&self) -> Option<f64> {
        each!(&self.inner, s => s.min())
    }

    /// The largest value recorded (None if empty).
    #[getter]
    fn max(&self) -> Option<f64> {
        each!(&self.inner, s => s.max())
    }

    /// The sum of the values recorded (0.0 if empty).
    #[getter]
    fn sum(&self) -> f64 {
        each!(&self.inner, s => s.sum())
    }

    /// The mean of the values recorded (None if empty).
    #[getter]
    fn mean(&self) -> Option<f64> {
        each!(&self.inner, s => s.mean())
    }

    /// The relative accuracy of every quantile within the range.
    #[getter]
    fn relative_accuracy(&self) -> f64 {
        each!(&self.inner, s => s.relative_accuracy())
    }

    /// The lowest value of the lowest bin (below it: the zero bin).
    #[getter]
    fn min_trackable(&self) -> f64 {
        each!(&self.inner, s => s.min_trackable())
    }

    /// The highest value of the top bin (above it: clamped).
    #[getter]
    fn max_trackable(&self) -> f64 {
        each!(&self.inner, s => s.max_trackable())
    }

    /// The sketch as DataDog's DDSketch protobuf (bytes), keys and gamma as `convention`
    /// writes them: "go_java" (DataDog's Go and Java libraries, tailguard) or "python"
    /// (DataDog's Python `ddsketch`, which reads it with `DDSketchProto.from_proto`).
    #[pyo3(signature = (convention = "go_java"))]
    fn to_ddsketch<'py>(&self, py: Python<'py>, convention: &str) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = codecs::to_ddsketch(&self.inner, codecs::convention(convention)?)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A new sketch of preset `preset` holding the DDSketch protobuf message `data` (any
    /// mapping: a foreign one is re-binned). DecodeError on bytes it cannot read.
    #[classmethod]
    #[pyo3(signature = (data, preset = "log", convention = "go_java"))]
    fn from_ddsketch(
        _cls: &Bound<'_, PyType>,
        data: &[u8],
        preset: &str,
        convention: &str,
    ) -> PyResult<Self> {
        let mut s = Sketch::new(preset)?;
        s.merge_ddsketch(data, convention)?;
        Ok(s)
    }

    /// Adds the DDSketch protobuf message `data`, written in `convention`, of any mapping:
    /// bin for bin when it is this sketch's, else each foreign bin's count goes to this
    /// sketch's bin of that bin's value. Returns a Rebinned report (with the relative
    /// error the added values carry). DecodeError on bytes it cannot read (unchanged).
    #[pyo3(signature = (data, convention = "go_java"))]
    fn merge_ddsketch(&mut self, data: &[u8], convention: &str) -> PyResult<PyRebinned> {
        codecs::merge_ddsketch(&mut self.inner, data, codecs::convention(convention)?)
    }

    /// The sketch as an OpenTelemetry `ExponentialHistogramDataPoint` (protobuf bytes),
    /// with the given start and end times. The "otel" preset only (ValueError otherwise).
    #[pyo3(signature = (start_unix_ns = None, end_unix_ns = None))]
    fn to_otlp<'py>(
        &self,
        py: Python<'py>,
        start_unix_ns: Option<&Bound<'_, PyAny>>,
        end_unix_ns: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let start = start_unix_ns
            .map(|t| to_u64(t, "start_unix_ns"))
            .transpose()?;
        let end = end_unix_ns.map(|t| to_u64(t, "end_unix_ns")).transpose()?;
        let (start, end) = (start.unwrap_or(0), end.unwrap_or(0));
        let bytes = codecs::to_otlp(&self.inner, start, end)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Adds an OTLP `ExponentialHistogramDataPoint` of this sketch's scale or finer. The
    /// "otel" preset only (ValueError otherwise); DecodeError on bytes it cannot read.
    fn merge_otlp(&mut self, data: &[u8]) -> PyResult<PyOtlpDecoded> {
        codecs::merge_otlp(&mut self.inner, data)
    }

    fn __repr__(&self) -> String {
        format!(
            "<tailguard.Sketch {:?} count={}>",
            self.inner.name(),
            self.count()
        )
    }
}
