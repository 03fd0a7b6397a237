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

/// An object's storage: the `storage` and `size` arguments of an `_init`, vouched for by
/// the caller's contract (crate docs) when made, and checked (null, alignment, size) by
/// [`init`] and [`init_image`], which write the object.
pub(crate) struct Storage {
    ptr: *mut u8,
    size: usize,
}

impl Storage {
    /// The storage at `ptr`, of `size` bytes; nothing is checked yet.
    ///
    /// # Safety
    /// The caller's contract for an `_init`'s storage: `ptr`, if not null, is valid for
    /// writes of `size` bytes, and nothing else uses those bytes while `_init` runs or
    /// while the object lives.
    pub(crate) unsafe fn new(ptr: *mut core::ffi::c_void, size: usize) -> Self {
        Storage {
            ptr: ptr.cast(),
            size,
        }
    }

    /// The storage as an `Object<T>`: not null, aligned to TG_ALIGN and large enough, or
    /// the status that refuses it.
    fn object<T>(&self) -> Result<*mut Object<T>> {
        check_ptr(self.ptr, TG_ALIGN)?;
        if self.size < core::mem::size_of::<Object<T>>() {
            return Err(TG_ERR_SIZE);
        }
        Ok(self.ptr.cast())
    }
}

/// Checks `storage` for an `Object<T>`, then writes the value `make` returns with `kind`
/// and `preset`'s magic, and returns the handle (the storage's address). Nothing is made
/// or written if a check fails.
pub(crate) fn init<T>(
    storage: Storage,
    kind: Kind,
    preset: u32,
    make: impl FnOnce() -> Result<T>,
) -> Result<*mut u8> {
    let object = storage.object::<T>()?;
    let object_value = Object {
        magic: magic(kind, preset),
        value: make()?,
    };
    // SAFETY: `object` is not null, aligned to TG_ALIGN (at least `Object<T>`'s
    // alignment, const-asserted by each kind) and large enough (checked by
    // `Storage::object`); writable and used by nothing else (`Storage::new`'s contract). A
    // write does not read the old bytes.
    unsafe { object.write(object_value) };
    Ok(storage.ptr)
}

/// A type whose objects start as a constant image: an empty object of one preset (windows
/// and hedgers with [`CallbackClock::UNSET`](crate::clock::CallbackClock::UNSET) for a
/// clock), which [`init_image`] copies into the storage and then sets up in place.
pub(crate) trait Image: Sized {
    /// The image (evaluated at compile time; on a microcontroller, it lives in flash).
    const IMAGE: Self;
}

/// Checks `storage` for an `Object<T>`, then writes `T::IMAGE` there, lets `setup`
/// finish the value in place (give it the caller's clock and configuration), and writes
/// `kind` and `preset`'s magic; returns the handle. Unlike [`init`], no `T` is built on the
/// stack: the image is copied straight into the storage, so the stack this needs does not
/// grow with the object. Nothing is written if the pointer or the size is refused; after
/// that the magic is cleared first and written last, so storage whose `setup` failed holds
/// no object (`TG_ERR_UNINIT`).
///
/// Not inlined: each type (each preset) has a function of its own, whose frame is sized
/// for its own set-up only.
#[inline(never)]
pub(crate) fn init_image<T: Image>(
    storage: Storage,
    kind: Kind,
    preset: u32,
    setup: impl FnOnce(&mut T) -> Result<()>,
) -> Result<*mut u8> {
    let object = storage.object::<T>()?;
    // SAFETY: `object` is not null, aligned to TG_ALIGN (at least `Object<T>`'s
    // alignment, const-asserted by each kind) and large enough (checked by
    // `Storage::object`); writable and used by nothing else (`Storage::new`'s contract).
    // Writes do not read the old bytes; once the image is written the value is a valid
    // `T`, so the reference `setup` gets is to a valid value.
    unsafe {
        core::ptr::addr_of_mut!((*object).magic).write(0);
        let value = core::ptr::addr_of_mut!((*object).value);
        value.write(T::IMAGE);
        setup(&mut *value)?;
        core::ptr::addr_of_mut!((*object).magic).write(magic(kind, preset));
    }
    Ok(storage.ptr)
}

/// The magic word of the object at `handle`, checked to be of `kind`: returns its preset.
///
/// # Safety
/// `handle`, if not null and aligned, is valid for reads of 8 bytes.
unsafe fn preset_of(handle: *const u8, kind: Kind) -> Result<u32> {
    check_ptr(handle, TG_ALIGN)?;
    // SAFETY: not null and 8-aligned (checked); readable by the contract. Objects write
    // their magic only in `_init`, which no other call may overlap (the C contract,
    // README's "Concurrency"), so this read races with nothing.
    let word = unsafe { handle.cast::<u64>().read() };
    if word & !0xffff != magic(kind, 0) {
        return Err(TG_ERR_UNINIT);
    }
    Ok((word & 0xffff) as u32)
}

/// A handle argument, shared: vouched for by the caller's contract (crate docs) when made,
/// checked (null, alignment, magic) by [`preset`](Self::preset) before its value is used.
pub(crate) struct Handle(*const u8);

impl Handle {
    /// The handle `ptr`; nothing is checked yet.
    ///
    /// # Safety
    /// The caller's contract for a handle: `ptr` is null, misaligned, or valid for reads
    /// of 8 bytes; if those hold an object's magic word, `ptr` is where the `_init` that
    /// wrote it put the object, which stays there while the `Handle` lives and is not
    /// mutated meanwhile except through shared references (windows, budgets and hedgers:
    /// atomics).
    pub(crate) unsafe fn new<H>(ptr: *const H) -> Self {
        Handle(ptr.cast())
    }

    /// The handle's address (what tickets name their hedger by).
    pub(crate) fn addr(&self) -> usize {
        self.0 as usize
    }

    /// The preset of the object, checked to be of `kind` (TG_ERR_NULL, TG_ERR_MISALIGNED,
    /// TG_ERR_UNINIT).
    pub(crate) fn preset(&self, kind: Kind) -> Result<u32> {
        // SAFETY: `Handle::new`'s contract: null and misaligned pointers are refused, any
        // other is readable for 8 bytes.
        unsafe { preset_of(self.0, kind) }
    }

    /// The value of the object, shared.
    ///
    /// # Safety
    /// [`preset`](Self::preset) returned the preset, for the kind, whose objects are `T`s.
    pub(crate) unsafe fn value<T>(&self) -> &T {
        // SAFETY: the magic names `T` (this function's contract), so `Handle::new`'s
        // contract makes this an `Object<T>` that `_init` wrote, mutated only through
        // shared references while `self` lives.
        unsafe { &(*self.0.cast::<Object<T>>()).value }
    }
}

/// A handle argument, exclusive: [`Handle`] for an object nothing else refers to meanwhile
/// (a sketch: single-owner).
pub(crate) struct HandleMut(*mut u8);

impl HandleMut {
    /// The handle `ptr`; nothing is checked yet.
    ///
    /// # Safety
    /// As [`Handle::new`], and no other reference to the object lives while the
    /// `HandleMut` does (no other call uses it, nor another handle argument of this call).
    pub(crate) unsafe fn new<H>(ptr: *mut H) -> Self {
        HandleMut(ptr.cast())
    }

    /// The preset of the object, checked to be of `kind` (as [`Handle::preset`]).
    pub(crate) fn preset(&self, kind: Kind) -> Result<u32> {
        // SAFETY: `HandleMut::new`'s contract: null and misaligned pointers are refused,
        // any other is readable for 8 bytes.
        unsafe { preset_of(self.0, kind) }
    }

    /// The value of the object, exclusive.
    ///
    /// # Safety
    /// [`preset`](Self::preset) returned the preset, for the kind, whose objects are `T`s.
    pub(crate) unsafe fn value_mut<T>(&mut self) -> &mut T {
        // SAFETY: the magic names `T` (this function's contract), so `HandleMut::new`'s
        // contract makes this an `Object<T>` that `_init` wrote and nothing else refers
        // to; `&mut self` keeps this the only reference made through the handle.
        unsafe { &mut (*self.0.cast::<Object<T>>()).value }
    }
}

/// An out-pointer argument, checked (not null, aligned) before anything changes.
pub(crate) struct Out<T>(*mut T);

impl<T> Out<T> {
    /// Checks `ptr`.
    ///
    /// # Safety
    /// The caller's contract for an out-pointer: `ptr`, if not null and aligned, is valid
    /// for a write of a `T` while the `Out` lives.
    pub(crate) unsafe fn new(ptr: *mut T) -> Result<Self> {
        check_ptr(ptr, core::mem::align_of::<T>())?;
        Ok(Out(ptr))
    }

    /// Writes the result.
    pub(crate) fn set(self, value: T) {
        // SAFETY: not null and aligned (checked by `new`), writable by `new`'s contract.
        unsafe { self.0.write(value) }
    }

    /// The checked pointer: not null, aligned for `T`, and valid for a write of a `T`.
    pub(crate) fn into_ptr(self) -> *mut T {
        self.0
    }
}

/// An optional input-pointer argument (a configuration): null for the defaults.
pub(crate) struct In<T>(*const T);

impl<T: Copy> In<T> {
    /// The input `ptr`; nothing is checked yet.
    ///
    /// # Safety
    /// The caller's contract for an input pointer: `ptr`, if not null and aligned, is
    /// valid for a read of a `T`.
    pub(crate) unsafe fn new(ptr: *const T) -> Self {
        In(ptr)
    }

    /// The value at the pointer, or `default()` if it is null; TG_ERR_MISALIGNED if it is
    /// not aligned for `T`.
    pub(crate) fn read_or(self, default: impl FnOnce() -> T) -> Result<T> {
        if self.0.is_null() {
            return Ok(default());
        }
        check_ptr(self.0, core::mem::align_of::<T>())?;
        // SAFETY: not null, aligned (checked), and readable by `new`'s contract.
        Ok(unsafe { self.0.read() })
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
        let base = words.as_mut_ptr().cast::<core::ffi::c_void>();
        // SAFETY: `words` is 32 writable bytes; the checks refuse the rest before any write.
        let storage = |offset: usize, size| unsafe { Storage::new(base.byte_add(offset), size) };
        // SAFETY: null storage is refused before any write.
        let null = unsafe { Storage::new(core::ptr::null_mut(), 32) };
        assert_eq!(init(null, Kind::Sketch, 1, || Ok(7u64)), Err(TG_ERR_NULL));
        assert_eq!(
            init(storage(1, 31), Kind::Sketch, 1, || Ok(7u64)),
            Err(TG_ERR_MISALIGNED)
        );
        assert_eq!(
            init(storage(0, 8), Kind::Sketch, 1, || Ok(7u64)),
            Err(TG_ERR_SIZE)
        );
        // SAFETY: `words` is readable (zeroes: no magic).
        let zeroed = unsafe { Handle::new(base.cast_const()) };
        assert_eq!(zeroed.preset(Kind::Sketch), Err(TG_ERR_UNINIT));
        let written = init(storage(0, 32), Kind::Sketch, 3, || Ok(7u64)).unwrap();
        assert_eq!(written, base.cast::<u8>());
        // SAFETY: `words` holds the object `init` wrote, and nothing else changes it.
        let handle = unsafe { Handle::new(written.cast_const()) };
        assert_eq!(handle.preset(Kind::Sketch), Ok(3));
        assert_eq!(handle.preset(Kind::Window), Err(TG_ERR_UNINIT));
        // SAFETY: the magic names a preset-3 "sketch", which this test made a u64.
        assert_eq!(unsafe { *handle.value::<u64>() }, 7);
    }

    #[test]
    fn null_out_pointers_and_buffers() {
        // SAFETY: null and misaligned out-pointers are refused, never written.
        unsafe {
            assert_eq!(
                Out::<u64>::new(core::ptr::null_mut()).err(),
                Some(TG_ERR_NULL)
            );
            let mut w = [0u64; 2];
            let odd = w.as_mut_ptr().cast::<u8>().wrapping_add(4).cast::<u64>();
            assert_eq!(Out::new(odd).err(), Some(TG_ERR_MISALIGNED));
        }
        // SAFETY: null with a length is refused before it is read; zero lengths read nothing.
        unsafe {
            assert_eq!(bytes(core::ptr::null(), 1), Err(TG_ERR_NULL));
            assert_eq!(bytes(core::ptr::null(), 0), Ok(&[][..]));
            assert!(bytes_mut(core::ptr::null_mut(), 3).is_err());
        }
    }
}
