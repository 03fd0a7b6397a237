//! The module's exception, and how the crate's errors become Python exceptions: every
//! refusal of a caller's value is a `ValueError` (or a subclass), so Python code can catch
//! one type.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyInt;

pyo3::create_exception!(
    tailguard,
    DecodeError,
    PyValueError,
    "Bytes that are not a message the sketch can read (malformed protobuf, another \
     mapping where none can be re-binned, negative values, another scale): the sketch is \
     unchanged. A subclass of ValueError."
);

/// A `ValueError` saying `e`.
pub fn value_error(e: impl core::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A [`DecodeError`] saying `e`.
pub fn decode_error(e: impl core::fmt::Display) -> PyErr {
    DecodeError::new_err(e.to_string())
}

/// `obj` as a `u64`: a `TypeError` if it is not an `int`, a `ValueError` if it is one out
/// of range (rather than Python's `OverflowError`, which is not a `ValueError`).
pub fn to_u64(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    if !obj.is_instance_of::<PyInt>() {
        let kind = obj.get_type().name()?;
        return Err(PyTypeError::new_err(format!(
            "{what} must be an int, not {kind}"
        )));
    }
    obj.extract::<u64>()
        .map_err(|_| PyValueError::new_err(format!("{what} must be in [0, 2**64), got {obj}")))
}

/// `obj` as a `u32` count: the errors of [`to_u64`], and a `ValueError` above `2**32 - 1`.
pub fn to_count(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    let n = to_u64(obj, "n")?;
    u32::try_from(n).map_err(|_| PyValueError::new_err(format!("n must be below 2**32, got {n}")))
}
