//! Sketches (`tg_sketch`): DDSketch quantile sketches of the six presets, in caller storage.
//!
//! Single-owner: a sketch is mutated through `tg_sketch *` and is not reentrant (no two
//! calls on one sketch at once). For a sketch shared by an interrupt and the main loop,
//! use a window.

use tailguard::sketch::presets::{
    self, CubicLatency, IntLatency, IntLatencyCoarse, LogLatency, McuLatency, OtelLatency,
};
use tailguard::sketch::{DDSketch, IndexMapping};

use crate::object::{self, fits, Handle, HandleMut, Image, Kind, Out, Preset, Storage};
use crate::status::{
    status_of, tg_status, Result, TG_ERR_EMPTY, TG_ERR_MISMATCH, TG_ERR_QUANTILE, TG_ERR_VALUE,
};

/// A sketch in caller storage (opaque): the handle `tg_sketch_init` returns.
#[allow(non_camel_case_types)]
pub struct tg_sketch {
    _opaque: [u8; 0],
}

/// Bytes of storage a `TG_PRESET_LOG` sketch needs, on every supported target.
pub const TG_SKETCH_LOG_SIZE: usize = 3904;
/// Bytes of storage a `TG_PRESET_CUBIC` sketch needs, on every supported target.
pub const TG_SKETCH_CUBIC_SIZE: usize = 3920;
/// Bytes of storage a `TG_PRESET_INT` sketch needs, on every supported target.
pub const TG_SKETCH_INT_SIZE: usize = 6976;
/// Bytes of storage a `TG_PRESET_INT_COARSE` sketch needs, on every supported target.
pub const TG_SKETCH_INT_COARSE_SIZE: usize = 3584;
/// Bytes of storage a `TG_PRESET_MCU` sketch needs, on every supported target.
pub const TG_SKETCH_MCU_SIZE: usize = 2304;
/// Bytes of storage a `TG_PRESET_OTEL` sketch needs, on every supported target.
pub const TG_SKETCH_OTEL_SIZE: usize = 3584;

const _: () = assert!(fits::<LogLatency>(TG_SKETCH_LOG_SIZE));
const _: () = assert!(fits::<CubicLatency>(TG_SKETCH_CUBIC_SIZE));
const _: () = assert!(fits::<IntLatency>(TG_SKETCH_INT_SIZE));
const _: () = assert!(fits::<IntLatencyCoarse>(TG_SKETCH_INT_COARSE_SIZE));
const _: () = assert!(fits::<McuLatency>(TG_SKETCH_MCU_SIZE));
const _: () = assert!(fits::<OtelLatency>(TG_SKETCH_OTEL_SIZE));

impl Image for LogLatency {
    const IMAGE: Self = presets::log_latency();
}
impl Image for CubicLatency {
    const IMAGE: Self = presets::cubic_latency();
}
impl Image for IntLatency {
    const IMAGE: Self = presets::int_latency();
}
impl Image for IntLatencyCoarse {
    const IMAGE: Self = presets::int_latency_coarse();
}
impl Image for McuLatency {
    const IMAGE: Self = presets::mcu_latency();
}
impl Image for OtelLatency {
    const IMAGE: Self = presets::otel_latency();
}

/// Runs `$body` with `$s` bound to the sketch of handle `$h` as its preset's type and `$p`
/// to its preset code; `?` on a bad handle. `$h` is an [`object::Handle`] (`$get`:
/// `value`) or a mutable [`object::HandleMut`] (`value_mut`), whose constructor relied on
/// the caller's contract. One arm per preset, so that each function links the code of what
/// it calls and no more (no vtable of every operation): firmware keeps only what it uses.
macro_rules! with_sketch {
    ($h:ident, $get:ident, |$s:ident, $p:pat_param| $body:expr) => {{
        use tailguard::sketch::presets as ps;
        use $crate::object::Preset as P;
        let code = $h.preset($crate::object::Kind::Sketch)?;
        #[allow(clippy::let_unit_value, unused_variables)]
        let $p = code;
        // SAFETY (every arm): the magic names the preset, so the object is of its type.
        match P::from_u32(code)? {
            #[cfg(feature = "preset-log")]
            P::Log => {
                // SAFETY: the magic names this arm's preset (see above).
                let $s = unsafe { $h.$get::<ps::LogLatency>() };
                $body
            }
            #[cfg(feature = "preset-cubic")]
            P::Cubic => {
                // SAFETY: the magic names this arm's preset (see above).
                let $s = unsafe { $h.$get::<ps::CubicLatency>() };
                $body
            }
            #[cfg(feature = "preset-int")]
            P::Int => {
                // SAFETY: the magic names this arm's preset (see above).
                let $s = unsafe { $h.$get::<ps::IntLatency>() };
                $body
            }
            #[cfg(feature = "preset-int-coarse")]
            P::IntCoarse => {
                // SAFETY: the magic names this arm's preset (see above).
                let $s = unsafe { $h.$get::<ps::IntLatencyCoarse>() };
                $body
            }
            #[cfg(feature = "preset-mcu")]
            P::Mcu => {
                // SAFETY: the magic names this arm's preset (see above).
                let $s = unsafe { $h.$get::<ps::McuLatency>() };
                $body
            }
            #[cfg(feature = "preset-otel")]
            P::Otel => {
                // SAFETY: the magic names this arm's preset (see above).
                let $s = unsafe { $h.$get::<ps::OtelLatency>() };
                $body
            }
        }
    }};
}
pub(crate) use with_sketch;

/// The sketch of `h` as a `T`, if it is a sketch of preset `want` (whose type is `T`):
/// TG_ERR_MISMATCH for another preset.
///
/// # Safety
/// `T` is the type of preset `want`'s sketches.
pub(crate) unsafe fn same_preset<T>(h: &Handle, want: u32) -> Result<&T> {
    if h.preset(Kind::Sketch)? != want {
        return Err(TG_ERR_MISMATCH);
    }
    // SAFETY: the magic names preset `want`, whose sketches are `T`s (the contract).
    Ok(unsafe { h.value::<T>() })
}

/// [`same_preset`], exclusive.
///
/// # Safety
/// As [`same_preset`].
pub(crate) unsafe fn same_preset_mut<T>(h: &mut HandleMut, want: u32) -> Result<&mut T> {
    if h.preset(Kind::Sketch)? != want {
        return Err(TG_ERR_MISMATCH);
    }
    // SAFETY: the magic names preset `want`, whose sketches are `T`s (the contract).
    Ok(unsafe { h.value_mut::<T>() })
}

/// Initialises an empty sketch of `preset` (any `TG_PRESET_*`) in `size` bytes at
/// `storage` (aligned to `TG_ALIGN`, at least `TG_SKETCH_<PRESET>_SIZE` bytes; zeroed or
/// not) and writes its handle to `*out`. Initialising again empties it.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_SIZE or TG_ERR_PRESET.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_init(
    storage: *mut core::ffi::c_void,
    size: usize,
    preset: u32,
    out: *mut *mut tg_sketch,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `out` and the `size` bytes at `storage`.
    let (out, storage) = unsafe { (Out::new(out), Storage::new(storage, size)) };
    status_of((|| {
        let out = out?;
        let (k, p) = (Kind::Sketch, preset);
        // The preset's empty sketch, copied from its constant image (no sketch built on
        // the stack).
        let handle = match Preset::from_u32(preset)? {
            #[cfg(feature = "preset-log")]
            Preset::Log => object::init_image::<LogLatency>(storage, k, p, |_| Ok(()))?,
            #[cfg(feature = "preset-cubic")]
            Preset::Cubic => object::init_image::<CubicLatency>(storage, k, p, |_| Ok(()))?,
            #[cfg(feature = "preset-int")]
            Preset::Int => object::init_image::<IntLatency>(storage, k, p, |_| Ok(()))?,
            #[cfg(feature = "preset-int-coarse")]
            Preset::IntCoarse => object::init_image::<IntLatencyCoarse>(storage, k, p, |_| Ok(()))?,
            #[cfg(feature = "preset-mcu")]
            Preset::Mcu => object::init_image::<McuLatency>(storage, k, p, |_| Ok(()))?,
            #[cfg(feature = "preset-otel")]
            Preset::Otel => object::init_image::<OtelLatency>(storage, k, p, |_| Ok(()))?,
        };
        out.set(handle.cast());
        Ok(())
    })())
}

/// Records one value (nanoseconds, say). Zero and values below the preset's range go to
/// the zero bin, values above it (and +inf) to the top bin.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, or TG_ERR_VALUE (NaN or
/// negative: nothing recorded).
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_record(s: *mut tg_sketch, value: f64) -> tg_status {
    // SAFETY: the contract (crate docs) for `s`, a sketch no other call uses meanwhile.
    let mut s = unsafe { HandleMut::new(s) };
    status_of((|| {
        with_sketch!(s, value_mut, |sk, _| sk.record(value)).map_err(|_| TG_ERR_VALUE)
    })())
}

/// Records an integer value (nanoseconds): no float operation with the integer presets.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_record_u64(s: *mut tg_sketch, value: u64) -> tg_status {
    // SAFETY: the contract (crate docs) for `s`, a sketch no other call uses meanwhile.
    let mut s = unsafe { HandleMut::new(s) };
    status_of((|| {
        with_sketch!(s, value_mut, |sk, _| sk.record_u64(value));
        Ok(())
    })())
}

/// Records an integer value `n` times (a bin holds at most 2^32 - 1: the rest is counted
/// by `tg_sketch_saturated`).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, or TG_ERR_VALUE (`n`
/// above UINT32_MAX: nothing recorded).
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_record_u64_n(
    s: *mut tg_sketch,
    value: u64,
    n: u64,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `s`, a sketch no other call uses meanwhile.
    let mut s = unsafe { HandleMut::new(s) };
    status_of((|| {
        with_sketch!(s, value_mut, |sk, _| {
            let n = u32::try_from(n).map_err(|_| TG_ERR_VALUE)?;
            sk.record_u64_n(value, n);
        });
        Ok(())
    })())
}

/// Records a duration of `secs` seconds and `nanos` nanoseconds as whole nanoseconds,
/// saturating at UINT64_MAX (`nanos` may exceed a second: it carries, saturating too).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_record_duration(
    s: *mut tg_sketch,
    secs: u64,
    nanos: u32,
) -> tg_status {
    // What `record_duration` records, without building a Duration (whose constructor
    // panics when the carry overflows the seconds).
    let ns = secs
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::from(nanos));
    // SAFETY: the contract (crate docs) for `s`, a sketch no other call uses meanwhile.
    let mut s = unsafe { HandleMut::new(s) };
    status_of((|| {
        with_sketch!(s, value_mut, |sk, _| sk.record_u64(ns));
        Ok(())
    })())
}

/// Writes the value at quantile `q` (0 = min, 1 = max) to `*out`, within the preset's
/// relative accuracy.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, TG_ERR_QUANTILE (`q`
/// outside [0, 1] or NaN) or TG_ERR_EMPTY.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_quantile(
    s: *const tg_sketch,
    q: f64,
    out: *mut f64,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `s` and `out`.
    let (s, out) = unsafe { (Handle::new(s), Out::new(out)) };
    status_of((|| {
        let out = out?;
        let value = with_sketch!(s, value, |sk, _| sk.quantile(q)).map_err(|_| TG_ERR_QUANTILE)?;
        out.set(value.ok_or(TG_ERR_EMPTY)?);
        Ok(())
    })())
}

/// Writes to `*out` how many recorded values are at or below `v` (by their bins).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT or TG_ERR_VALUE (NaN).
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_rank(s: *const tg_sketch, v: f64, out: *mut u64) -> tg_status {
    // SAFETY: the contract (crate docs) for `s` and `out`.
    let (s, out) = unsafe { (Handle::new(s), Out::new(out)) };
    status_of((|| {
        let out = out?;
        out.set(with_sketch!(s, value, |sk, _| sk.rank(v)).map_err(|_| TG_ERR_VALUE)?);
        Ok(())
    })())
}

/// Writes `$e` (of the sketch `$sk` of the handle `$s`) to `$out` (a checked `Out`).
macro_rules! get {
    ($s:ident, $out:expr, |$sk:ident| $e:expr) => {
        status_of((|| {
            let out = $out?;
            out.set(with_sketch!($s, value, |$sk, _| $e));
            Ok(())
        })())
    };
}

/// Writes `$e` (of the sketch `$sk` of the handle `$s`, an `Option`) to `$out` (a checked
/// `Out`), or TG_ERR_EMPTY.
macro_rules! get_some {
    ($s:ident, $out:expr, |$sk:ident| $e:expr) => {
        status_of((|| {
            let out = $out?;
            out.set(with_sketch!($s, value, |$sk, _| $e).ok_or(TG_ERR_EMPTY)?);
            Ok(())
        })())
    };
}

/// Writes the number of values counted (zero bin included, saturated values excluded).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_count(s: *const tg_sketch, out: *mut u64) -> tg_status {
    // SAFETY: the contract (crate docs) for `s` and `out`.
    let (s, out) = unsafe { (Handle::new(s), Out::new(out)) };
    get!(s, out, |sk| sk.count())
}

/// Writes the number of values in the zero bin (zeros and values below the range).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_zero_count(s: *const tg_sketch, out: *mut u64) -> tg_status {
    // SAFETY: the contract (crate docs) for `s` and `out`.
    let (s, out) = unsafe { (Handle::new(s), Out::new(out)) };
    get!(s, out, |sk| u64::from(sk.zero_count()))
}

/// Writes the number of values above the range (and +inf) put in the top bin.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_clamped(s: *const tg_sketch, out: *mut u64) -> tg_status {
    // SAFETY: the contract (crate docs) for `s` and `out`.
    let (s, out) = unsafe { (Handle::new(s), Out::new(out)) };
    get!(s, out, |sk| sk.clamped())
}

/// Writes the number of values dropped because their bin was full.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_saturated(s: *const tg_sketch, out: *mut u64) -> tg_status {
    // SAFETY: the contract (crate docs) for `s` and `out`.
    let (s, out) = unsafe { (Handle::new(s), Out::new(out)) };
    get!(s, out, |sk| sk.saturated())
}

/// Writes the smallest value recorded (exact).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT or TG_ERR_EMPTY.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_min(s: *const tg_sketch, out: *mut f64) -> tg_status {
    // SAFETY: the contract (crate docs) for `s` and `out`.
    let (s, out) = unsafe { (Handle::new(s), Out::new(out)) };
    get_some!(s, out, |sk| sk.min())
}

/// Writes the largest value recorded (exact; +inf is recorded as the top of the range).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT or TG_ERR_EMPTY.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_max(s: *const tg_sketch, out: *mut f64) -> tg_status {
    // SAFETY: the contract (crate docs) for `s` and `out`.
    let (s, out) = unsafe { (Handle::new(s), Out::new(out)) };
    get_some!(s, out, |sk| sk.max())
}

/// Writes the sum of the values recorded.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT or TG_ERR_EMPTY.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_sum(s: *const tg_sketch, out: *mut f64) -> tg_status {
    // SAFETY: the contract (crate docs) for `s` and `out`.
    let (s, out) = unsafe { (Handle::new(s), Out::new(out)) };
    get_some!(s, out, |sk| (sk.count() > 0).then(|| sk.sum()))
}

/// Writes the preset's relative accuracy (0.01 for 1 %).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_relative_accuracy(
    s: *const tg_sketch,
    out: *mut f64,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `s` and `out`.
    let (s, out) = unsafe { (Handle::new(s), Out::new(out)) };
    get!(s, out, |sk| sk.relative_accuracy())
}

/// Merges `from` into `to`: one preset, so one type and layout (the merge cannot fail).
/// Not inlined, as the other per-preset paths: no frame is sized for another preset.
#[inline(never)]
fn merge<M: IndexMapping, const N: usize>(
    to: &mut DDSketch<M, N>,
    from: &DDSketch<M, N>,
) -> Result<()> {
    to.merge(from).map_err(|_| TG_ERR_MISMATCH)
}

/// Merges a sketch into itself, in place (`&mut` and `&` cannot alias, and a copy would
/// be a sketch-sized frame on a small core's stack).
#[cold]
#[inline(never)]
fn merge_self<M: IndexMapping, const N: usize>(sketch: &mut DDSketch<M, N>) -> Result<()> {
    sketch.merge_self();
    Ok(())
}

/// Empties a sketch in place (its own function per preset, as `merge`).
#[inline(never)]
fn clear<M: IndexMapping, const N: usize>(sketch: &mut DDSketch<M, N>) {
    sketch.clear();
}

/// Adds every value of `src` to `dst` (both of one preset; `src` may be `dst`).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT or TG_ERR_MISMATCH
/// (different presets: `dst` unchanged).
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_merge(dst: *mut tg_sketch, src: *const tg_sketch) -> tg_status {
    if core::ptr::eq(dst.cast_const(), src) {
        // SAFETY: the contract (crate docs) for `dst`, a sketch no other call uses
        // meanwhile, and this call's only one.
        let mut dst = unsafe { HandleMut::new(dst) };
        // One sketch as both arguments: merge a copy.
        return status_of((|| with_sketch!(dst, value_mut, |sk, _| merge_self(sk)))());
    }
    // SAFETY: the contract (crate docs) for `dst` and `src`, sketches no other call uses
    // meanwhile; two handles (checked above), so two objects: nothing read through `src`
    // is the sketch `dst` changes.
    let (mut dst, src) = unsafe { (HandleMut::new(dst), Handle::new(src)) };
    status_of((|| {
        with_sketch!(dst, value_mut, |sk, preset| merge(
            sk,
            // SAFETY: `preset` is `sk`'s, whose type `merge` takes for `src` too.
            unsafe { same_preset(&src, preset) }?
        ))
    })())
}

/// Empties the sketch.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_clear(s: *mut tg_sketch) -> tg_status {
    // SAFETY: the contract (crate docs) for `s`, a sketch no other call uses meanwhile.
    let mut s = unsafe { HandleMut::new(s) };
    status_of((|| {
        with_sketch!(s, value_mut, |sk, _| clear(sk));
        Ok(())
    })())
}

/// Writes the sketch's preset (a `TG_PRESET_*`) to `*out`.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_preset(s: *const tg_sketch, out: *mut u32) -> tg_status {
    // SAFETY: the contract (crate docs) for `s` and `out`.
    let (s, out) = unsafe { (Handle::new(s), Out::new(out)) };
    status_of((|| {
        let out = out?;
        out.set(with_sketch!(s, value, |_sk, code| code));
        Ok(())
    })())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::{TG_PRESET_INT, TG_PRESET_LOG, TG_PRESET_MCU, TG_PRESET_OTEL};
    use crate::status::{TG_ERR_NULL, TG_ERR_PRESET, TG_ERR_SIZE, TG_ERR_UNINIT, TG_OK};
    use core::ptr::{null, null_mut};

    /// A sketch of `preset` in `mem`.
    fn sketch(mem: &mut [u64], preset: u32) -> *mut tg_sketch {
        let mut s = null_mut();
        // SAFETY: `mem` is writable for its length, and outlives the handle's uses.
        let status =
            unsafe { tg_sketch_init(mem.as_mut_ptr().cast(), mem.len() * 8, preset, &mut s) };
        assert_eq!(status, TG_OK);
        s
    }

    #[test]
    fn records_and_answers_like_the_crate() {
        let mut mem = std::vec![0u64; TG_SKETCH_MCU_SIZE / 8];
        let s = sketch(&mut mem, TG_PRESET_MCU);
        let (mut q, mut n) = (0.0, 0u64);
        // SAFETY: `s` is a live sketch; the out-pointers are locals.
        unsafe {
            assert_eq!(tg_sketch_quantile(s, 0.5, &mut q), TG_ERR_EMPTY);
            for ms in 1..=10u64 {
                assert_eq!(tg_sketch_record_u64(s, ms * 1_000_000), TG_OK);
            }
            assert_eq!(tg_sketch_record(s, f64::NAN), TG_ERR_VALUE);
            assert_eq!(tg_sketch_record_u64_n(s, 1, u64::MAX), TG_ERR_VALUE);
            assert_eq!(tg_sketch_record_duration(s, u64::MAX, u32::MAX), TG_OK);
            assert_eq!(tg_sketch_count(s, &mut n), TG_OK);
            assert_eq!(n, 11);
            assert_eq!(tg_sketch_clamped(s, &mut n), TG_OK);
            assert_eq!(n, 1);
            assert_eq!(tg_sketch_quantile(s, 0.5, &mut q), TG_OK);
            assert!((q - 6e6).abs() <= 0.016 * 6e6);
            assert_eq!(tg_sketch_quantile(s, 1.01, &mut q), TG_ERR_QUANTILE);
            assert_eq!(tg_sketch_quantile(s, 0.5, null_mut()), TG_ERR_NULL);
            assert_eq!(tg_sketch_rank(s, f64::NAN, &mut n), TG_ERR_VALUE);
            assert_eq!(tg_sketch_clear(s), TG_OK);
            assert_eq!(tg_sketch_min(s, &mut q), TG_ERR_EMPTY);
        }
    }

    #[test]
    fn merge_takes_one_preset_and_itself() {
        let mut a = std::vec![0u64; TG_SKETCH_INT_SIZE / 8];
        let mut b = std::vec![0u64; TG_SKETCH_INT_SIZE / 8];
        let x = sketch(&mut a, TG_PRESET_INT);
        let y = sketch(&mut b, TG_PRESET_INT);
        let mut n = 0;
        // SAFETY: live sketches in distinct storage.
        unsafe {
            assert_eq!(tg_sketch_record_u64(y, 5_000_000), TG_OK);
            assert_eq!(tg_sketch_merge(x, y), TG_OK);
            assert_eq!(tg_sketch_merge(x, x), TG_OK);
            assert_eq!(tg_sketch_count(x, &mut n), TG_OK);
            assert_eq!(n, 2);
            let z = sketch(&mut b, TG_PRESET_LOG);
            assert_eq!(tg_sketch_merge(x, z), TG_ERR_MISMATCH);
            assert_eq!(tg_sketch_merge(x, null()), TG_ERR_NULL);
        }
    }

    #[test]
    fn storage_is_checked() {
        let mut mem = std::vec![0u64; TG_SKETCH_OTEL_SIZE / 8];
        let mut s = null_mut();
        let p = mem.as_mut_ptr().cast::<core::ffi::c_void>();
        let mut n = 0;
        // SAFETY: every call is refused before it writes, or writes within `mem`.
        unsafe {
            assert_eq!(tg_sketch_count(p.cast(), &mut n), TG_ERR_UNINIT);
            assert_eq!(tg_sketch_init(p, 64, TG_PRESET_OTEL, &mut s), TG_ERR_SIZE);
            assert_eq!(tg_sketch_init(p, mem.len() * 8, 0, &mut s), TG_ERR_PRESET);
            assert_eq!(
                tg_sketch_init(p, mem.len() * 8, TG_PRESET_OTEL, null_mut()),
                TG_ERR_NULL
            );
            assert_eq!(
                tg_sketch_init(p, mem.len() * 8, TG_PRESET_OTEL, &mut s),
                TG_OK
            );
            let mut preset = 0;
            assert_eq!(tg_sketch_preset(s, &mut preset), TG_OK);
            assert_eq!(preset, TG_PRESET_OTEL);
        }
    }
}
