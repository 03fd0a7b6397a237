//! Objects in caller storage: the magic word each starts with, the presets it names, and
//! the checks that turn a caller's pointer into a reference.
//!
//! Every object is an [`Object`]: a magic word, then the crate's value. The magic names
//! the kind (sketch, window...) and the preset, is written by `_init`, and is read by every
//! call before anything else, so storage that no `_init` wrote (zeroed, garbage, an object
//! of another kind) is refused with `TG_ERR_UNINIT`. It detects mistakes, not forgery:
//! bytes that copy a magic word but not an object are undefined behaviour, as in C.

use crate::status::{
    Result, TG_ERR_MISALIGNED, TG_ERR_NULL, TG_ERR_PRESET, TG_ERR_SIZE, TG_ERR_UNINIT, TG_ERR_VALUE,
};

/// The alignment every object's storage needs (a `uint64_t` array has it).
pub const TG_ALIGN: usize = 8;

/// The logarithmic 1 % preset (`LogLatency`): sketches, windows and hedgers.
pub const TG_PRESET_LOG: u32 = 1;
/// The cubic 1 % preset (`CubicLatency`, the hedger's default): sketches, windows, hedgers.
pub const TG_PRESET_CUBIC: u32 = 2;
/// The integer 0.78 % preset (`IntLatency`): sketches, windows and hedgers.
pub const TG_PRESET_INT: u32 = 3;
/// The integer 1.56 % preset (`IntLatencyCoarse`): sketches only.
pub const TG_PRESET_INT_COARSE: u32 = 4;
/// The microcontroller preset, 100 us .. 10 s (`McuLatency`): sketches, windows, hedgers.
pub const TG_PRESET_MCU: u32 = 5;
/// OpenTelemetry's buckets at scale 5 (`OtelLatency`): sketches only (OTLP's codec).
pub const TG_PRESET_OTEL: u32 = 6;

/// A preset, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Preset {
    #[cfg(feature = "preset-log")]
    Log,
    #[cfg(feature = "preset-cubic")]
    Cubic,
    #[cfg(feature = "preset-int")]
    Int,
    #[cfg(feature = "preset-int-coarse")]
    IntCoarse,
    #[cfg(feature = "preset-mcu")]
    Mcu,
    #[cfg(feature = "preset-otel")]
    Otel,
}

impl Preset {
    /// The preset of a `TG_PRESET_*` constant, or `TG_ERR_PRESET`.
    pub(crate) fn from_u32(code: u32) -> Result<Self> {
        match code {
            #[cfg(feature = "preset-log")]
            TG_PRESET_LOG => Ok(Preset::Log),
            #[cfg(feature = "preset-cubic")]
            TG_PRESET_CUBIC => Ok(Preset::Cubic),
            #[cfg(feature = "preset-int")]
            TG_PRESET_INT => Ok(Preset::Int),
            #[cfg(feature = "preset-int-coarse")]
            TG_PRESET_INT_COARSE => Ok(Preset::IntCoarse),
            #[cfg(feature = "preset-mcu")]
            TG_PRESET_MCU => Ok(Preset::Mcu),
            #[cfg(feature = "preset-otel")]
            TG_PRESET_OTEL => Ok(Preset::Otel),
            _ => Err(TG_ERR_PRESET),
        }
    }
}

/// What an object is; part of its magic word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Sketch = 1,
    Window = 2,
    TokenBucket = 3,
    RatioBudget = 4,
    Hedger = 5,
    Ticket = 6,
}

/// The high half of every magic word ("TGOB"): zeroed storage never has it.
const MAGIC_HIGH: u64 = 0x5447_4f42 << 32;

/// The magic word of an object of `kind` and `preset` (0 for the budgets, which have none).
pub(crate) const fn magic(kind: Kind, preset: u32) -> u64 {
    MAGIC_HIGH | ((kind as u64) << 16) | (preset as u64 & 0xffff)
}

/// An object in caller storage: its magic word, then the value.
#[repr(C)]
pub(crate) struct Object<T> {
    magic: u64,
    value: T,
}

/// `Object<T>` fits `size` bytes at `TG_ALIGN` on every target; a const assertion per type.
pub(crate) const fn fits<T>(size: usize) -> bool {
    core::mem::size_of::<Object<T>>() <= size && core::mem::align_of::<Object<T>>() <= TG_ALIGN
}

/// Checks a pointer: not null, aligned for `align`.
pub(crate) fn check_ptr<T>(ptr: *const T, align: usize) -> Result<()> {
    if ptr.is_null() {
        Err(TG_ERR_NULL)
    } else if !(ptr as usize).is_multiple_of(align) {
        Err(TG_ERR_MISALIGNED)
    } else {
        Ok(())
    }
}

/// Checks `size` bytes at `storage` for an `Object<T>`, then writes the value `make`
/// returns with `kind` and `preset`'s magic, and returns the handle (the storage's
/// address). Nothing is made or written if a check fails.
///
/// # Safety
/// `storage`, if not null, must be valid for writes of `size` bytes, and not used by
/// anything else while the object lives.
pub(crate) unsafe fn init<T>(
    storage: *mut u8,
    size: usize,
    kind: Kind,
    preset: u32,
    make: impl FnOnce() -> Result<T>,
) -> Result<*mut u8> {
    check_ptr(storage, TG_ALIGN)?;
    if size < core::mem::size_of::<Object<T>>() {
        return Err(TG_ERR_SIZE);
    }
    let object = Object {
        magic: magic(kind, preset),
        value: make()?,
    };
    // SAFETY: `storage` is not null, aligned to TG_ALIGN (at least `Object<T>`'s alignment,
    // const-asserted by each kind) and, by the caller's contract, valid for `size` bytes,
    // which hold an `Object<T>` (checked above). A write does not read the old bytes.
    unsafe { storage.cast::<Object<T>>().write(object) };
    Ok(storage)
}

/// A type whose objects start as a constant image: an empty object of one preset (windows
/// and hedgers with [`CallbackClock::UNSET`](crate::clock::CallbackClock::UNSET) for a
/// clock), which [`init_image`] copies into the storage and then sets up in place.
pub(crate) trait Image: Sized {
    /// The image (evaluated at compile time; on a microcontroller, it lives in flash).
    const IMAGE: Self;
}

/// Checks `size` bytes at `storage` for an `Object<T>`, then writes `T::IMAGE` there, lets
/// `setup` finish the value in place (give it the caller's clock and configuration), and
/// writes `kind` and `preset`'s magic; returns the handle. Unlike [`init`], no `T` is
/// built on the stack: the image is copied straight into the storage, so the stack this
/// needs does not grow with the object. Nothing is written if the pointer or the size is
/// refused; after that the magic is cleared first and written last, so storage whose
/// `setup` failed holds no object (`TG_ERR_UNINIT`).
///
/// Not inlined: each type (each preset) has a function of its own, whose frame is sized
/// for its own set-up only.
///
/// # Safety
/// As [`init`].
#[inline(never)]
pub(crate) unsafe fn init_image<T: Image>(
    storage: *mut u8,
    size: usize,
    kind: Kind,
    preset: u32,
    setup: impl FnOnce(&mut T) -> Result<()>,
) -> Result<*mut u8> {
    check_ptr(storage, TG_ALIGN)?;
    if size < core::mem::size_of::<Object<T>>() {
        return Err(TG_ERR_SIZE);
    }
    let object = storage.cast::<Object<T>>();
    // SAFETY: `storage` is not null, aligned to TG_ALIGN (at least `Object<T>`'s
    // alignment, const-asserted by each kind) and, by the caller's contract, valid for
    // `size` bytes, which hold an `Object<T>` (checked above) that nothing else uses.
    // Writes do not read the old bytes; once the image is written the value is a valid
    // `T`, so the reference `setup` gets is to a valid value.
    unsafe {
        core::ptr::addr_of_mut!((*object).magic).write(0);
        let value = core::ptr::addr_of_mut!((*object).value);
        value.write(T::IMAGE);
        setup(&mut *value)?;
        core::ptr::addr_of_mut!((*object).magic).write(magic(kind, preset));
    }
    Ok(storage)
}

/// The magic word of the object at `handle`, checked to be of `kind`: returns its preset.
///
/// # Safety
/// `handle`, if not null and aligned, must be valid for reads of 8 bytes.
pub(crate) unsafe fn preset_of(handle: *const u8, kind: Kind) -> Result<u32> {
    check_ptr(handle, TG_ALIGN)?;
    // SAFETY: not null and 8-aligned (checked); readable by the caller's contract. Objects
    // write their magic only in `init`, which no other call may overlap (the C contract,
    // README's "Concurrency"), so this read races with nothing.
    let word = unsafe { handle.cast::<u64>().read() };
    if word & !0xffff != magic(kind, 0) {
        return Err(TG_ERR_UNINIT);
    }
    Ok((word & 0xffff) as u32)
}

/// The value of the object at `handle`, shared.
///
/// # Safety
/// The object's magic was checked by [`preset_of`] to name `T` (kind and preset), and it
/// is not mutated through another reference while the returned one lives (windows,
/// budgets and hedgers are mutated through shared references only: atomics).
pub(crate) unsafe fn value<'a, T>(handle: *const u8) -> &'a T {
    // SAFETY: by the contract, `handle` points at an `Object<T>` that `init` wrote.
    unsafe { &(*handle.cast::<Object<T>>()).value }
}

/// The value of the object at `handle`, exclusive.
///
/// # Safety
/// As [`value`], and no other reference to the object lives meanwhile.
pub(crate) unsafe fn value_mut<'a, T>(handle: *mut u8) -> &'a mut T {
    // SAFETY: by the contract, `handle` points at an `Object<T>` that `init` wrote, and
    // nothing else refers to it.
    unsafe { &mut (*handle.cast::<Object<T>>()).value }
}

/// An out-pointer, checked (not null, aligned) before anything changes.
pub(crate) struct Out<T>(*mut T);

impl<T> Out<T> {
    /// Checks `ptr`.
    pub(crate) fn new(ptr: *mut T) -> Result<Self> {
        check_ptr(ptr, core::mem::align_of::<T>())?;
        Ok(Out(ptr))
    }

    /// Writes the result.
    ///
    /// # Safety
    /// The pointer given to [`new`](Self::new) is valid for a write of a `T`.
    pub(crate) unsafe fn set(self, value: T) {
        // SAFETY: not null and aligned (checked by `new`), writable by the contract.
        unsafe { self.0.write(value) }
    }

    /// The checked pointer (not null, aligned for `T`).
    pub(crate) fn into_ptr(self) -> *mut T {
        self.0
    }
}

/// The longest buffer there can be: no object is larger than `isize::MAX` (C's
/// `PTRDIFF_MAX`) bytes, and a slice longer than that is undefined behaviour even if only
/// a few of its bytes are used. A longer length (`SIZE_MAX`, say) is `TG_ERR_VALUE`.
const MAX_LEN: usize = isize::MAX as usize;

/// The bytes at `ptr` (null is an empty slice only when `len` is 0); `TG_ERR_VALUE` for a
/// `len` above [`MAX_LEN`].
///
/// # Safety
/// `ptr`, if not null, is valid for reads of `len` bytes that nothing writes meanwhile.
pub(crate) unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(TG_ERR_NULL);
    }
    if len > MAX_LEN {
        return Err(TG_ERR_VALUE);
    }
    // SAFETY: not null, `len` (at most isize::MAX) readable bytes by the contract (u8: no
    // alignment).
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// The writable bytes at `ptr` (null is an empty slice only when `cap` is 0);
/// `TG_ERR_VALUE` for a `cap` above [`MAX_LEN`].
///
/// # Safety
/// `ptr`, if not null, is valid for writes of `cap` bytes that nothing else uses meanwhile.
pub(crate) unsafe fn bytes_mut<'a>(ptr: *mut u8, cap: usize) -> Result<&'a mut [u8]> {
    if cap == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(TG_ERR_NULL);
    }
    if cap > MAX_LEN {
        return Err(TG_ERR_VALUE);
    }
    // SAFETY: not null, `cap` (at most isize::MAX) writable bytes by the contract (u8: no
    // alignment).
    Ok(unsafe { core::slice::from_raw_parts_mut(ptr, cap) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_round_trip_and_others_are_refused() {
        assert_eq!(Preset::from_u32(TG_PRESET_LOG), Ok(Preset::Log));
        assert_eq!(Preset::from_u32(TG_PRESET_OTEL), Ok(Preset::Otel));
        for code in [0, 7, u32::MAX] {
            assert_eq!(Preset::from_u32(code), Err(TG_ERR_PRESET));
        }
    }

    #[test]
    fn storage_is_checked_before_it_is_written() {
        let mut words = [0u64; 4];
        let base = words.as_mut_ptr().cast::<u8>();
        // SAFETY: the checks refuse each of these before any write.
        unsafe {
            assert_eq!(
                init(core::ptr::null_mut(), 32, Kind::Sketch, 1, || Ok(7u64)),
                Err(TG_ERR_NULL)
            );
            assert_eq!(
                init(base.add(1), 31, Kind::Sketch, 1, || Ok(7u64)),
                Err(TG_ERR_MISALIGNED)
            );
            assert_eq!(
                init(base, 8, Kind::Sketch, 1, || Ok(7u64)),
                Err(TG_ERR_SIZE)
            );
            assert_eq!(preset_of(base, Kind::Sketch), Err(TG_ERR_UNINIT));
            let handle = init(base, 32, Kind::Sketch, 3, || Ok(7u64)).unwrap();
            assert_eq!(preset_of(handle, Kind::Sketch), Ok(3));
            assert_eq!(preset_of(handle, Kind::Window), Err(TG_ERR_UNINIT));
            assert_eq!(*value::<u64>(handle), 7);
        }
    }

    #[test]
    fn null_out_pointers_and_buffers() {
        assert_eq!(
            Out::<u64>::new(core::ptr::null_mut()).err(),
            Some(TG_ERR_NULL)
        );
        let mut w = [0u64; 2];
        let odd = w.as_mut_ptr().cast::<u8>().wrapping_add(4).cast::<u64>();
        assert_eq!(Out::new(odd).err(), Some(TG_ERR_MISALIGNED));
        // SAFETY: null with a length is refused before it is read; zero lengths read nothing.
        unsafe {
            assert_eq!(bytes(core::ptr::null(), 1), Err(TG_ERR_NULL));
            assert_eq!(bytes(core::ptr::null(), 0), Ok(&[][..]));
            assert!(bytes_mut(core::ptr::null_mut(), 3).is_err());
        }
    }
}
