//! A C ABI for tailguard: quantile sketches and their codecs, rotating windows, hedge
//! budgets and the adaptive hedger, each in storage the caller provides (no heap).
//!
//! The header is `include/tailguard.h`, generated from this crate by cbindgen; the
//! README says how to build and link it. Every function returns a `tg_status` (results
//! come through out-pointers) and checks what it is given: null and misaligned pointers,
//! short storage, storage no `_init` wrote, unknown presets, values the crate refuses.
//!
//! # Safety
//!
//! One contract for every function: each non-null pointer argument points at memory valid
//! for the access its type implies (`size`, `cap` or `len` bytes for storage and buffers,
//! the object's storage for a handle) for the duration of the call, and handles stay
//! where `_init` put them. Sketches are single-owner; windows, budgets and hedgers may be
//! called from several threads or interrupt levels at once.
//!
//! Inside the crate, the contract is relied on in one place per argument: the `unsafe`
//! constructor of the wrapper each function makes of it first (`object::Out` for an
//! out-pointer, `object::In` for a configuration, `object::Handle` and `object::HandleMut`
//! for a handle, `object::Storage` for an `_init`'s storage, `object::bytes` for a buffer,
//! the hedger's ticket wrappers), in an `unsafe` block whose `SAFETY:` comment names the
//! contract. The wrappers check what they are given (null, alignment, size, magic word,
//! length) before the memory is used, and are safe to use after that.
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
// The contract above is the same for every function: stated once, not per function.
#![allow(clippy::missing_safety_doc)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects,
        clippy::undocumented_unsafe_blocks
    )
)]

// Windows and hedgers exist for four presets; a build needs one of them (an int-coarse or
// otel sketch alone still takes, say, `preset-mcu` beside it).
#[cfg(not(any(
    feature = "preset-log",
    feature = "preset-cubic",
    feature = "preset-int",
    feature = "preset-mcu"
)))]
compile_error!("tailguard-ffi needs one of preset-log, preset-cubic, preset-int or preset-mcu");

#[cfg(all(test, not(miri)))]
mod bad_input;
pub mod budget;
pub mod clock;
pub mod codec;
pub mod hedger;
mod object;
pub mod panic;
pub mod sketch;
pub mod status;
pub mod window;

pub use object::{
    TG_ALIGN, TG_PRESET_CUBIC, TG_PRESET_INT, TG_PRESET_INT_COARSE, TG_PRESET_LOG, TG_PRESET_MCU,
    TG_PRESET_OTEL,
};

/// The package's version as `major << 16 | minor << 8 | patch` (a test checks it against
/// Cargo.toml's).
const VERSION: u32 = 0x00_01_00;

/// Writes the library's version to `*out` as `major << 16 | minor << 8 | patch`.
/// Returns TG_OK, TG_ERR_NULL or TG_ERR_MISALIGNED.
#[no_mangle]
pub unsafe extern "C" fn tg_version(out: *mut u32) -> status::tg_status {
    // SAFETY: the contract (crate docs) for `out`.
    let out = unsafe { object::Out::new(out) };
    status::status_of(out.map(|out| out.set(VERSION)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_version_is_the_packages() {
        let parts: std::vec::Vec<u32> = env!("CARGO_PKG_VERSION")
            .split('.')
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(super::VERSION, parts[0] << 16 | parts[1] << 8 | parts[2]);
        let mut v = 0;
        // SAFETY: a valid out-pointer, then a null one.
        unsafe {
            assert_eq!(super::tg_version(&mut v), super::status::TG_OK);
            assert_eq!(v, super::VERSION);
            assert_eq!(
                super::tg_version(core::ptr::null_mut()),
                super::status::TG_ERR_NULL
            );
        }
    }
}
