//! The module's exception, and how the crate's errors become Python exceptions: a value
//! refused is a `ValueError` (or a subclass), so Python code can catch one type; a value
//! of the wrong type is a `TypeError`, as Python's own functions raise.

use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;

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

/// `obj` as a `u64` (any integer: an `int`, or what has `__index__`, such as NumPy's): a
/// `TypeError` if it is not one, a `ValueError` if it is one out of range (rather than
/// Python's `OverflowError`, which is not a `ValueError`).
pub fn to_u64(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    obj.extract::<u64>().map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(obj.py()) {
            PyValueError::new_err(format!("{what} must be in [0, 2**64), got {obj}"))
        } else {
            e
        }
    })
}

/// `obj` as an `f64` (a `float`, or what has `__float__` or `__index__`): a `TypeError`
/// if it is not one, a `ValueError` for an integer too large for a float.
pub fn to_f64(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    obj.extract::<f64>().map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(obj.py()) {
            PyValueError::new_err(format!("value is too large for a float: {obj}"))
        } else {
            e
        }
    })
}

/// `obj` as an `f64` to compare values with: as [`to_f64`], but an int too large for a
/// float is `+inf` (or, negative, `-inf`), beyond every value, as it is.
pub fn to_f64_or_infinite(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    obj.extract::<f64>().or_else(|e| {
        if e.is_instance_of::<PyOverflowError>(obj.py()) {
            let negative = obj.lt(0)?;
            Ok(if negative {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            })
        } else {
            Err(e)
        }
    })
}

/// `obj` as a `u32` count: the errors of [`to_u64`], and a `ValueError` above `2**32 - 1`.
pub fn to_count(obj: &Bound<'_, PyAny>) -> PyResult<u32> {
    let n = to_u64(obj, "n")?;
    u32::try_from(n).map_err(|_| PyValueError::new_err(format!("n must be below 2**32, got {n}")))
}
