//! Python bindings of tailguard's sketches, with PyO3: the module `tailguard`, whose
//! `Sketch` class is a preset DDSketch that records, merges, answers quantiles and ranks,
//! and reads and writes DataDog's DDSketch protobuf and OpenTelemetry's exponential
//! histogram. Built by maturin (`pyproject.toml`); see README.md.

#![forbid(unsafe_code)]

use pyo3::prelude::*;
use pyo3::types::PyTuple;

mod codecs;
mod errors;
mod preset;
mod sketch;

/// Sketches that fleets of devices and servers merge: tailguard's DDSketch presets, with
/// DataDog's DDSketch protobuf and OpenTelemetry's exponential histograms.
#[pymodule]
#[pyo3(name = "tailguard")]
fn tailguard_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<sketch::Sketch>()?;
    m.add_class::<codecs::PyRebinned>()?;
    m.add_class::<codecs::PyOtlpDecoded>()?;
    m.add("DecodeError", m.py().get_type::<errors::DecodeError>())?;
    m.add("PRESETS", PyTuple::new(m.py(), preset::NAMES)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
