//! The atomics every lock-free type uses: portable-atomic's normally, loom's under
//! `--cfg loom` so the model checker can explore their interleavings.
//!
//! Only 32-bit atomics (and `AtomicBool`) appear here on purpose: they are native on every
//! supported target, so hot paths stay lock-free and interrupt-safe (portable-atomic's
//! 64-bit atomics on thumbv7em are a seqlock that an interrupt handler can deadlock on).

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU32, Ordering};
#[cfg(not(loom))]
pub(crate) use portable_atomic::{fence, AtomicBool, AtomicU32, Ordering};

/// `N` zeroed counters.
pub(crate) fn zeroed<const N: usize>() -> [AtomicU32; N] {
    core::array::from_fn(|_| AtomicU32::new(0))
}
