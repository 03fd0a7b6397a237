//! A cell written once in thread mode, before the interrupt that reads it is enabled, and
//! only shared after that: how this image puts a `Window`, a `Hedger` and the budgets in
//! statics while their constructors are not `const fn` (issue 13 item 1 will let them be
//! plain `static`s).

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicBool, Ordering};

pub struct Once<T> {
    value: UnsafeCell<MaybeUninit<T>>,
    /// Set (release) once the value is written; never cleared.
    ready: AtomicBool,
}

// SAFETY: the value is written once, by `init`, in a critical section (so no interrupt
// can run, nor call `init` or `get`, during the write) while `ready` is false, and `get`
// hands out references only after `ready` is set: from then on every access is through
// `&T`, so sharing the cell between thread mode and interrupt handlers shares `&T`, which
// `T: Sync` allows.
unsafe impl<T: Sync> Sync for Once<T> {}

impl<T> Once<T> {
    pub const fn new() -> Self {
        Once {
            value: UnsafeCell::new(MaybeUninit::uninit()),
            ready: AtomicBool::new(false),
        }
    }

    /// Stores what `make` returns and returns it for the rest of the program, or `None`
    /// (without calling `make`) if the cell already holds a value. `make` runs with
    /// interrupts off; its result is written straight into the cell where the compiler
    /// can, which saves a copy of the object on the stack.
    pub fn init_with(&'static self, make: impl FnOnce() -> T) -> Option<&'static T> {
        cortex_m::interrupt::free(|_| {
            if self.ready.load(Ordering::Relaxed) {
                return None;
            }
            // SAFETY: not ready, so no reference to the value exists (`get` gave none) and,
            // interrupts being off, none can be made while we write; the cell is 'static.
            let slot: &'static mut MaybeUninit<T> = unsafe { &mut *self.value.get() };
            let value: &'static T = slot.write(make());
            self.ready.store(true, Ordering::Release);
            Some(value)
        })
    }

    /// The value, once stored.
    #[inline]
    pub fn get(&'static self) -> Option<&'static T> {
        if self.ready.load(Ordering::Acquire) {
            // SAFETY: ready: written once and never again (see `init`), so shared
            // references to it are all that exist.
            Some(unsafe { (*self.value.get()).assume_init_ref() })
        } else {
            None
        }
    }
}
