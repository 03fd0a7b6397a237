//! The atomics every lock-free type uses: portable-atomic's normally, loom's under
//! `--cfg loom` so the model checker can explore their interleavings.
//!
//! Only 16- and 32-bit atomics (and `AtomicBool`) appear here on purpose: they are native
//! on every supported target (on cores without compare-and-swap, the firmware's
//! critical-section implementation makes their read-modify-writes atomic), so hot paths
//! stay lock-free and interrupt-safe (portable-atomic's 64-bit atomics on thumbv7em are a
//! seqlock that an interrupt handler can deadlock on).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU16, AtomicU32, Ordering};
#[cfg(not(loom))]
pub(crate) use portable_atomic::{fence, AtomicBool, AtomicU16, AtomicU32, Ordering};

/// `N` zeroed counters.
#[cfg(not(loom))]
pub(crate) const fn zeroed<const N: usize>() -> [AtomicU32; N] {
    [const { AtomicU32::new(0) }; N]
}

/// `N` zeroed counters (loom's atomics have no `const` constructor).
#[cfg(loom)]
pub(crate) fn zeroed<const N: usize>() -> [AtomicU32; N] {
    core::array::from_fn(|_| AtomicU32::new(0))
}

/// Defines a function that is `const` except under `--cfg loom`, whose atomics have no
/// `const` constructor: the constructors of the lock-free types, so that they can build
/// `static`s, while the loom models still build them at run time.
macro_rules! const_unless_loom {
    ($(#[$attr:meta])* $vis:vis fn $($rest:tt)*) => {
        #[cfg(not(loom))]
        $(#[$attr])*
        $vis const fn $($rest)*
        #[cfg(loom)]
        $(#[$attr])*
        $vis fn $($rest)*
    };
}
pub(crate) use const_unless_loom;
