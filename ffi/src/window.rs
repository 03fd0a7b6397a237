//! Windows (`tg_window`): lock-free rotating windows of sketches, with a clock callback.
//!
//! Called through `const tg_window *`: one window may be recorded into from an interrupt
//! and queried from the main loop at once (the crate's lock-free `Window`).

use core::time::Duration;

use tailguard::clock::Instant;
use tailguard::sketch::presets;
use tailguard::sketch::{BinLayout, DDSketch, IndexMapping};
use tailguard::window::{
    CubicLatencyWindow, IntLatencyWindow, LogLatencyWindow, McuLatencyWindow, Window, WindowConfig,
};

use crate::clock::{tg_clock, CallbackClock};
use crate::object::{self, fits, Handle, HandleMut, Image, In, Kind, Out, Preset, Storage};
use crate::sketch::{same_preset_mut, tg_sketch};
use crate::status::{
    status_of, tg_status, Result, TG_ERR_CONFIG, TG_ERR_EMPTY, TG_ERR_PRESET, TG_ERR_QUANTILE,
    TG_ERR_VALUE,
};

/// A window in caller storage (opaque): the handle `tg_window_init` returns.
#[allow(non_camel_case_types)]
pub struct tg_window {
    _opaque: [u8; 0],
}

/// A window's configuration; `tg_window_config_default` fills in the defaults.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[allow(non_camel_case_types)]
pub struct tg_window_config {
    /// The length of one interval, in ns (default 30 s; at least 8 ns). The window holds
    /// two to three intervals of values.
    pub interval_ns: u64,
    /// Refresh the cached quantile when this long has passed since the last refresh, in ns
    /// (default 1 s; 0: never by time).
    pub refresh_interval_ns: u64,
    /// The cached quantile, in (0, 1) (default 0.9).
    pub quantile: f64,
    /// Refresh when a bin's count reaches a power of two or a multiple of this (default
    /// 1024; 0: never by count).
    pub refresh_records: u32,
    /// Refresh on every record while the window holds fewer values (default 32).
    pub warmup_records: u32,
    /// The fewest values a cached quantile is computed from (default 1).
    pub min_count: u32,
    /// Non-zero (the default): the record that finds the interval over rotates the window;
    /// 0: rotations wait for a query (bounded work per record, for interrupt handlers).
    pub rotate_on_record: u8,
}

impl tg_window_config {
    /// The crate's defaults.
    fn defaults() -> Self {
        let c = WindowConfig::new();
        tg_window_config {
            interval_ns: crate::clock::nanos(c.interval()),
            refresh_interval_ns: crate::clock::nanos(c.refresh_interval()),
            quantile: c.quantile(),
            refresh_records: c.refresh_records(),
            warmup_records: c.warmup_records(),
            min_count: c.min_count(),
            rotate_on_record: u8::from(c.rotate_on_record()),
        }
    }

    /// The crate's configuration (checked when the window is built).
    fn to_config(self) -> WindowConfig {
        WindowConfig::new()
            .with_interval(Duration::from_nanos(self.interval_ns))
            .with_refresh_interval(Duration::from_nanos(self.refresh_interval_ns))
            .with_quantile(self.quantile)
            .with_refresh_records(self.refresh_records)
            .with_warmup_records(self.warmup_records)
            .with_min_count(self.min_count)
            .with_rotate_on_record(self.rotate_on_record != 0)
    }
}

/// Bytes of storage a `TG_PRESET_LOG` window needs, on every supported target.
pub const TG_WINDOW_LOG_SIZE: usize = 11520;
/// Bytes of storage a `TG_PRESET_CUBIC` window needs, on every supported target.
pub const TG_WINDOW_CUBIC_SIZE: usize = 11664;
/// Bytes of storage a `TG_PRESET_INT` window needs, on every supported target.
pub const TG_WINDOW_INT_SIZE: usize = 20800;
/// Bytes of storage a `TG_PRESET_MCU` window needs, on every supported target.
pub const TG_WINDOW_MCU_SIZE: usize = 6848;

type LogW = LogLatencyWindow<CallbackClock>;
type CubicW = CubicLatencyWindow<CallbackClock>;
type IntW = IntLatencyWindow<CallbackClock>;
type McuW = McuLatencyWindow<CallbackClock>;

const _: () = assert!(fits::<LogW>(TG_WINDOW_LOG_SIZE));
const _: () = assert!(fits::<CubicW>(TG_WINDOW_CUBIC_SIZE));
const _: () = assert!(fits::<IntW>(TG_WINDOW_INT_SIZE));
const _: () = assert!(fits::<McuW>(TG_WINDOW_MCU_SIZE));

/// The empty window of `layout` that `tg_window_init` copies into the storage before it
/// gives it the caller's clock and configuration.
const fn image<M: IndexMapping, const N: usize>(
    layout: BinLayout<M, N>,
) -> Window<CallbackClock, M, N> {
    let clock = CallbackClock::UNSET;
    match Window::with_origin(clock, layout, WindowConfig::new(), Instant::ZERO) {
        Ok(window) => window,
        // The default configuration: not reached (and, at compile time, a build error).
        #[allow(clippy::panic)]
        Err(_) => panic!("the default window configuration is refused"),
    }
}

impl Image for LogW {
    const IMAGE: Self = image(presets::LOG_LATENCY_LAYOUT);
}
impl Image for CubicW {
    const IMAGE: Self = image(presets::CUBIC_LATENCY_LAYOUT);
}
impl Image for IntW {
    const IMAGE: Self = image(presets::INT_LATENCY_LAYOUT);
}
impl Image for McuW {
    const IMAGE: Self = image(presets::MCU_LATENCY_LAYOUT);
}

/// Gives the window (a copied image) the caller's clock and configuration: what
/// `with_layout` would build, in place.
fn set_up<M: IndexMapping, const N: usize>(
    window: &mut Window<CallbackClock, M, N>,
    clock: CallbackClock,
    config: WindowConfig,
) -> Result<()> {
    window.reset(clock, config).map_err(|_| TG_ERR_CONFIG)
}

/// Runs `$body` with `$w` bound to the window of the [`Handle`] `$h` as its preset's type
/// and `$p` to its preset code; `?` on a bad handle. One arm per preset (see `with_sketch`).
macro_rules! with_window {
    ($h:ident, |$w:ident, $p:pat_param| $body:expr) => {{
        let code = $h.preset(Kind::Window)?;
        #[allow(unused_variables)]
        let $p = code;
        // SAFETY (every arm): the magic names the preset, so the object is of its type; a
        // window is used through shared references only.
        match Preset::from_u32(code)? {
            #[cfg(feature = "preset-log")]
            Preset::Log => {
                // SAFETY: the magic names this arm's preset (see above).
                let $w = unsafe { $h.value::<LogW>() };
                $body
            }
            #[cfg(feature = "preset-cubic")]
            Preset::Cubic => {
                // SAFETY: the magic names this arm's preset (see above).
                let $w = unsafe { $h.value::<CubicW>() };
                $body
            }
            #[cfg(feature = "preset-int")]
            Preset::Int => {
                // SAFETY: the magic names this arm's preset (see above).
                let $w = unsafe { $h.value::<IntW>() };
                $body
            }
            #[cfg(feature = "preset-mcu")]
            Preset::Mcu => {
                // SAFETY: the magic names this arm's preset (see above).
                let $w = unsafe { $h.value::<McuW>() };
                $body
            }
            // No window or hedger of these (a preset compiled out is not in the enum).
            #[allow(unreachable_patterns)]
            _ => return Err(TG_ERR_PRESET),
        }
    }};
}

/// Replaces the sketch at `dst` with a snapshot of `w`, if it is of `w`'s preset. Not
/// inlined: the snapshot's frame is sized for its own preset, not the largest.
///
/// # Safety
/// `preset` is `w`'s.
#[inline(never)]
unsafe fn snapshot_into<M: IndexMapping, const N: usize>(
    w: &Window<CallbackClock, M, N>,
    dst: &mut HandleMut,
    preset: u32,
) -> Result<()> {
    // SAFETY: a window's preset code (`preset`, this function's contract) is its sketches'
    // preset code: `DDSketch<M, N>` is the type of that preset's sketches.
    let dst = unsafe { same_preset_mut::<DDSketch<M, N>>(dst, preset)? };
    // In place: no window-sized sketch on the stack (a preset's sketches share its layout).
    dst.clear();
    w.merge_into(dst)
        .map_err(|_| crate::status::TG_ERR_MISMATCH)
}

/// Fills `*config` with the defaults: 30 s intervals, p90 cached, refreshed every second
/// and by count, rotating on record.
/// Returns TG_OK, TG_ERR_NULL or TG_ERR_MISALIGNED.
#[no_mangle]
pub unsafe extern "C" fn tg_window_config_default(config: *mut tg_window_config) -> tg_status {
    // SAFETY: the contract (crate docs) for `config`.
    let config = unsafe { Out::new(config) };
    status_of(config.map(|config| config.set(tg_window_config::defaults())))
}

/// Initialises an empty window of `preset` (TG_PRESET_LOG, _CUBIC, _INT or _MCU) reading
/// `clock`, configured by `*config` (null: the defaults), in `size` bytes at `storage`
/// (aligned to `TG_ALIGN`, at least `TG_WINDOW_<PRESET>_SIZE`), and writes its handle to
/// `*out`. Its first interval starts at the clock's current time. No other call may use
/// the storage while this runs (an init again, to reset the window, included).
/// Returns TG_OK, TG_ERR_NULL (also for a null `clock.now_ns`), TG_ERR_MISALIGNED,
/// TG_ERR_SIZE, TG_ERR_PRESET or TG_ERR_CONFIG (the storage may then hold no object).
#[no_mangle]
pub unsafe extern "C" fn tg_window_init(
    storage: *mut core::ffi::c_void,
    size: usize,
    preset: u32,
    clock: tg_clock,
    config: *const tg_window_config,
    out: *mut *mut tg_window,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `out`, `config` and the `size` bytes at
    // `storage`.
    let (out, config, storage) =
        unsafe { (Out::new(out), In::new(config), Storage::new(storage, size)) };
    status_of((|| {
        let out = out?;
        let clock = CallbackClock::new(clock)?;
        let config = config.read_or(tg_window_config::defaults)?.to_config();
        let (k, p) = (Kind::Window, preset);
        // The preset's constant image (its layout, a placeholder clock), then the
        // caller's clock and configuration, in place: no window built on the stack.
        let handle = match Preset::from_u32(preset)? {
            #[cfg(feature = "preset-log")]
            Preset::Log => object::init_image::<LogW>(storage, k, p, |w| set_up(w, clock, config))?,
            #[cfg(feature = "preset-cubic")]
            Preset::Cubic => {
                object::init_image::<CubicW>(storage, k, p, |w| set_up(w, clock, config))?
            }
            #[cfg(feature = "preset-int")]
            Preset::Int => object::init_image::<IntW>(storage, k, p, |w| set_up(w, clock, config))?,
            #[cfg(feature = "preset-mcu")]
            Preset::Mcu => object::init_image::<McuW>(storage, k, p, |w| set_up(w, clock, config))?,
            // No window or hedger of these (a preset compiled out is not in the enum).
            #[allow(unreachable_patterns)]
            _ => return Err(TG_ERR_PRESET),
        };
        out.set(handle.cast());
        Ok(())
    })())
}

/// Records one value at the clock's current time (rotating the window when its interval
/// is over and `rotate_on_record` is set).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT or TG_ERR_VALUE (NaN or
/// negative: nothing recorded).
#[no_mangle]
pub unsafe extern "C" fn tg_window_record(w: *const tg_window, value: f64) -> tg_status {
    // SAFETY: the contract (crate docs) for `w`.
    let w = unsafe { Handle::new(w) };
    status_of((|| {
        with_window!(w, |win, _| win.record(value)).map_err(|_| TG_ERR_VALUE)
    })())
}

/// Records an integer value (nanoseconds) at the clock's current time.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_window_record_u64(w: *const tg_window, value: u64) -> tg_status {
    // SAFETY: the contract (crate docs) for `w`.
    let w = unsafe { Handle::new(w) };
    status_of((|| {
        with_window!(w, |win, _| win.record_u64(value));
        Ok(())
    })())
}

/// Writes the value at quantile `q` of the window's values (a full scan) to `*out`.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, TG_ERR_QUANTILE or
/// TG_ERR_EMPTY.
#[no_mangle]
pub unsafe extern "C" fn tg_window_quantile(
    w: *const tg_window,
    q: f64,
    out: *mut f64,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `w` and `out`.
    let (w, out) = unsafe { (Handle::new(w), Out::new(out)) };
    status_of((|| {
        let out = out?;
        let value = with_window!(w, |win, _| win.quantile(q)).map_err(|_| TG_ERR_QUANTILE)?;
        out.set(value.ok_or(TG_ERR_EMPTY)?);
        Ok(())
    })())
}

/// Writes to `*out` how many of the window's values are at or below `v`.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT or TG_ERR_VALUE (NaN).
#[no_mangle]
pub unsafe extern "C" fn tg_window_rank(w: *const tg_window, v: f64, out: *mut u64) -> tg_status {
    // SAFETY: the contract (crate docs) for `w` and `out`.
    let (w, out) = unsafe { (Handle::new(w), Out::new(out)) };
    status_of((|| {
        let out = out?;
        out.set(with_window!(w, |win, _| win.rank(v)).map_err(|_| TG_ERR_VALUE)?);
        Ok(())
    })())
}

/// Writes the number of values the window holds now.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_window_count(w: *const tg_window, out: *mut u64) -> tg_status {
    // SAFETY: the contract (crate docs) for `w` and `out`.
    let (w, out) = unsafe { (Handle::new(w), Out::new(out)) };
    status_of((|| {
        let out = out?;
        out.set(with_window!(w, |win, _| win.count()));
        Ok(())
    })())
}

/// Writes the number of rotations so far (wrapping at 2^32).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_window_rotations(w: *const tg_window, out: *mut u32) -> tg_status {
    // SAFETY: the contract (crate docs) for `w` and `out`.
    let (w, out) = unsafe { (Handle::new(w), Out::new(out)) };
    status_of((|| {
        let out = out?;
        out.set(with_window!(w, |win, _| win.rotations()));
        Ok(())
    })())
}

/// Writes the number of values expired by rotations so far (wrapping at 2^32).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_window_expired(w: *const tg_window, out: *mut u32) -> tg_status {
    // SAFETY: the contract (crate docs) for `w` and `out`.
    let (w, out) = unsafe { (Handle::new(w), Out::new(out)) };
    status_of((|| {
        let out = out?;
        out.set(with_window!(w, |win, _| win.expired()));
        Ok(())
    })())
}

/// Replaces the sketch `dst` with a snapshot of the window's values; `dst` must be a
/// sketch of the window's preset.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT or TG_ERR_MISMATCH (`dst`
/// unchanged).
#[no_mangle]
pub unsafe extern "C" fn tg_window_snapshot(w: *const tg_window, dst: *mut tg_sketch) -> tg_status {
    // SAFETY: the contract (crate docs) for `w` and `dst`, a sketch no other call uses
    // meanwhile (`dst` at `w`'s storage holds a window's magic: refused as a sketch).
    let (w, mut dst) = unsafe { (Handle::new(w), HandleMut::new(dst)) };
    status_of((|| {
        with_window!(w, |win, preset| {
            // SAFETY: the macro binds `preset` to `win`'s preset.
            unsafe { snapshot_into(win, &mut dst, preset) }
        })
    })())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::tests::manual;
    use crate::object::{TG_PRESET_MCU, TG_PRESET_OTEL};
    use crate::sketch::{tg_sketch_count, tg_sketch_init, TG_SKETCH_INT_SIZE};
    use crate::status::{TG_ERR_MISMATCH, TG_ERR_NULL, TG_ERR_UNINIT, TG_OK};
    use core::ptr::{null, null_mut};
    use core::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn the_clock_rotates_and_snapshots_take_the_same_preset() {
        let time = AtomicU64::new(5);
        let mut mem = std::vec![0u64; TG_WINDOW_MCU_SIZE / 8];
        let mut sk = std::vec![0u64; TG_SKETCH_INT_SIZE / 8];
        let (mut w, mut s) = (null_mut(), null_mut());
        let mut config = tg_window_config::defaults();
        config.interval_ns = 1_000_000_000;
        let (mut n, mut r, mut q) = (0u64, 0u32, 0.0);
        // SAFETY: storage and out-pointers are locals that outlive the handles' uses.
        unsafe {
            let p = mem.as_mut_ptr().cast();
            let size = mem.len() * 8;
            assert_eq!(
                tg_window_init(p, size, TG_PRESET_OTEL, manual(&time), &config, &mut w),
                TG_ERR_PRESET
            );
            let mut bad = config;
            bad.quantile = 1.5;
            assert_eq!(
                tg_window_init(p, size, TG_PRESET_MCU, manual(&time), &bad, &mut w),
                TG_ERR_CONFIG
            );
            assert_eq!(
                tg_window_init(p, size, TG_PRESET_MCU, manual(&time), &config, &mut w),
                TG_OK
            );
            for ms in 1..=10u64 {
                assert_eq!(tg_window_record_u64(w, ms * 1_000_000), TG_OK);
            }
            assert_eq!(tg_window_record(w, -1.0), TG_ERR_VALUE);
            assert_eq!(tg_window_quantile(w, 0.5, &mut q), TG_OK);
            assert_eq!(tg_window_rank(w, 1e12, &mut n), TG_OK);
            assert_eq!(n, 10);
            assert_eq!(
                tg_sketch_init(sk.as_mut_ptr().cast(), sk.len() * 8, TG_PRESET_MCU, &mut s),
                TG_OK
            );
            assert_eq!(tg_window_snapshot(w, s), TG_OK);
            assert_eq!(tg_sketch_count(s, &mut n), TG_OK);
            assert_eq!(n, 10);
            assert_eq!(
                tg_sketch_init(sk.as_mut_ptr().cast(), sk.len() * 8, 3, &mut s),
                TG_OK
            );
            assert_eq!(tg_window_snapshot(w, s), TG_ERR_MISMATCH);
            time.fetch_add(3_000_000_000, Ordering::Relaxed);
            assert_eq!(tg_window_count(w, &mut n), TG_OK);
            assert_eq!(n, 0);
            assert_eq!(tg_window_expired(w, &mut r), TG_OK);
            assert_eq!(r, 10);
            assert_eq!(tg_window_rotations(w, &mut r), TG_OK);
            assert!(r >= 1);
            assert_eq!(tg_window_quantile(w, 0.5, &mut q), TG_ERR_EMPTY);
            assert_eq!(tg_window_count(sk.as_ptr().cast(), &mut n), TG_ERR_UNINIT);
            assert_eq!(tg_window_count(w, null_mut()), TG_ERR_NULL);
        }
    }

    #[test]
    fn init_again_empties_and_a_refused_configuration_leaves_no_window() {
        let time = AtomicU64::new(5);
        let mut mem = std::vec![0u64; TG_WINDOW_MCU_SIZE / 8];
        let mut w = null_mut();
        let mut n = 0u64;
        let mut bad = tg_window_config::defaults();
        bad.interval_ns = 1;
        // SAFETY: storage and out-pointers are locals that outlive the handles' uses.
        unsafe {
            let (p, size) = (mem.as_mut_ptr().cast(), mem.len() * 8);
            assert_eq!(
                tg_window_init(p, size, TG_PRESET_MCU, manual(&time), null(), &mut w),
                TG_OK
            );
            assert_eq!(tg_window_record_u64(w, 2_000_000), TG_OK);
            assert_eq!(
                tg_window_init(p, size, TG_PRESET_MCU, manual(&time), null(), &mut w),
                TG_OK
            );
            assert_eq!(tg_window_count(w, &mut n), TG_OK);
            assert_eq!(n, 0);
            assert_eq!(tg_window_record_u64(w, 2_000_000), TG_OK);
            assert_eq!(tg_window_count(w, &mut n), TG_OK);
            assert_eq!(n, 1);
            assert_eq!(
                tg_window_init(p, size, TG_PRESET_MCU, manual(&time), &bad, &mut w),
                TG_ERR_CONFIG
            );
            assert_eq!(tg_window_count(w, &mut n), TG_ERR_UNINIT);
        }
    }
}
