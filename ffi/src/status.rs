//! Status codes: what every function returns, and their names.

use core::ffi::c_char;

/// A function's outcome: `TG_OK` (0) or a negative error code.
#[allow(non_camel_case_types)]
pub type tg_status = i32;

/// Success.
pub const TG_OK: tg_status = 0;
/// A pointer argument was null.
pub const TG_ERR_NULL: tg_status = -1;
/// A pointer argument was not aligned for what it points to (storage: `TG_ALIGN`).
pub const TG_ERR_MISALIGNED: tg_status = -2;
/// The storage is smaller than the object.
pub const TG_ERR_SIZE: tg_status = -3;
/// The object (or ticket) was not initialised by its `_init` (its magic word is wrong).
pub const TG_ERR_UNINIT: tg_status = -4;
/// An unknown preset, or one this object or codec does not support.
pub const TG_ERR_PRESET: tg_status = -5;
/// A value was refused: NaN or negative, or a constant out of its range (a convention, an
/// attempt number, a count, a buffer length above PTRDIFF_MAX).
pub const TG_ERR_VALUE: tg_status = -6;
/// A quantile outside [0, 1] (or NaN).
pub const TG_ERR_QUANTILE: tg_status = -7;
/// No answer: the sketch or window is empty, or the hedger has no delay yet.
pub const TG_ERR_EMPTY: tg_status = -8;
/// Two objects of different presets (a merge, a snapshot), or a ticket of another hedger.
pub const TG_ERR_MISMATCH: tg_status = -9;
/// The output buffer is too small; the length needed is written to `*written`.
pub const TG_ERR_BUFFER: tg_status = -10;
/// The bytes to decode are not a message this sketch can take.
pub const TG_ERR_DECODE: tg_status = -11;
/// A configuration the library refuses (a rate, a ratio, an interval, a percentile...).
pub const TG_ERR_CONFIG: tg_status = -12;

/// Inside the crate: a result whose error is a status code.
pub(crate) type Result<T> = core::result::Result<T, tg_status>;

/// The status of `r`.
pub(crate) fn status_of(r: Result<()>) -> tg_status {
    match r {
        Ok(()) => TG_OK,
        Err(e) => e,
    }
}

/// The name of a status, as a static NUL-terminated string (`"TG_ERR_NULL"`);
/// `"TG_UNKNOWN"` for a code that is not one. The one function that returns no status.
#[no_mangle]
pub extern "C" fn tg_status_str(status: tg_status) -> *const c_char {
    let name: &'static core::ffi::CStr = match status {
        TG_OK => c"TG_OK",
        TG_ERR_NULL => c"TG_ERR_NULL",
        TG_ERR_MISALIGNED => c"TG_ERR_MISALIGNED",
        TG_ERR_SIZE => c"TG_ERR_SIZE",
        TG_ERR_UNINIT => c"TG_ERR_UNINIT",
        TG_ERR_PRESET => c"TG_ERR_PRESET",
        TG_ERR_VALUE => c"TG_ERR_VALUE",
        TG_ERR_QUANTILE => c"TG_ERR_QUANTILE",
        TG_ERR_EMPTY => c"TG_ERR_EMPTY",
        TG_ERR_MISMATCH => c"TG_ERR_MISMATCH",
        TG_ERR_BUFFER => c"TG_ERR_BUFFER",
        TG_ERR_DECODE => c"TG_ERR_DECODE",
        TG_ERR_CONFIG => c"TG_ERR_CONFIG",
        _ => c"TG_UNKNOWN",
    };
    name.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ffi::CStr;

    fn name(s: tg_status) -> &'static str {
        // SAFETY: tg_status_str returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(tg_status_str(s)) }
            .to_str()
            .unwrap()
    }

    #[test]
    fn every_status_has_its_name() {
        assert_eq!(name(TG_OK), "TG_OK");
        assert_eq!(name(TG_ERR_NULL), "TG_ERR_NULL");
        assert_eq!(name(TG_ERR_CONFIG), "TG_ERR_CONFIG");
        for s in TG_ERR_CONFIG..=TG_OK {
            assert!(name(s).starts_with("TG_") && name(s) != "TG_UNKNOWN");
        }
        assert_eq!(name(1), "TG_UNKNOWN");
        assert_eq!(name(i32::MIN), "TG_UNKNOWN");
    }
}
