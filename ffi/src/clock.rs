//! Time: a clock callback the caller gives each window, token bucket and hedger.
//!
//! A callback rather than a "now" argument: one call reads the time at several points
//! (the hedger decides, measures a latency, rotates its window; a bucket refills), the
//! crate's guards against clocks that jump need the real instant each time, and one
//! object can serve an interrupt and the main loop without a shared current-time cell.

use core::ffi::c_void;

use tailguard::clock::{Clock, Instant};

use crate::status::{Result, TG_ERR_NULL};

/// A monotonic clock: `now_ns(ctx)` returns the time in nanoseconds since any fixed origin.
///
/// It is called from whatever context calls the object (an interrupt handler too), must
/// not call back into the object, and must stay callable, with `ctx`, as long as the
/// object is used. On firmware it reads a hardware timer (SysTick, a cycle counter).
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_camel_case_types)]
pub struct tg_clock {
    /// Returns the current time in nanoseconds (null: refused by `_init` with TG_ERR_NULL).
    pub now_ns: Option<unsafe extern "C" fn(ctx: *mut c_void) -> u64>,
    /// Passed to `now_ns` as is.
    pub ctx: *mut c_void,
}

/// A [`tg_clock`] whose callback is known not to be null: the crate's [`Clock`].
#[derive(Clone, Copy)]
pub(crate) struct CallbackClock {
    now_ns: unsafe extern "C" fn(ctx: *mut c_void) -> u64,
    ctx: *mut c_void,
}

/// The callback of [`CallbackClock::UNSET`]: time zero.
unsafe extern "C" fn unset_now(_ctx: *mut c_void) -> u64 {
    0
}

impl CallbackClock {
    /// The clock of the windows and hedgers in the constant images `_init` copies into the
    /// storage (see `object::Image`); `_init` replaces it with the caller's before the
    /// object is used.
    pub(crate) const UNSET: CallbackClock = CallbackClock {
        now_ns: unset_now,
        ctx: core::ptr::null_mut(),
    };

    /// The clock of `c`, or `TG_ERR_NULL` without a callback.
    pub(crate) fn new(c: tg_clock) -> Result<Self> {
        match c.now_ns {
            Some(now_ns) => Ok(CallbackClock { now_ns, ctx: c.ctx }),
            None => Err(TG_ERR_NULL),
        }
    }
}

impl Clock for CallbackClock {
    fn now(&self) -> Instant {
        // SAFETY: the caller of `_init` promised a callback that may be called with `ctx`
        // for as long as the object is used (see `tg_clock`).
        Instant::from_nanos(unsafe { (self.now_ns)(self.ctx) })
    }
}

/// `d` in whole nanoseconds, saturating at `u64::MAX` (never panics).
pub(crate) fn nanos(d: core::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use core::sync::atomic::{AtomicU64, Ordering};

    /// A manual clock for the tests: `ctx` points at an `AtomicU64` of nanoseconds.
    pub(crate) unsafe extern "C" fn manual_now(ctx: *mut c_void) -> u64 {
        // SAFETY: the tests pass a pointer to an AtomicU64 that outlives the object.
        unsafe { &*ctx.cast::<AtomicU64>() }.load(Ordering::Relaxed)
    }

    /// The `tg_clock` reading `time`.
    pub(crate) fn manual(time: &AtomicU64) -> tg_clock {
        tg_clock {
            now_ns: Some(manual_now),
            ctx: core::ptr::from_ref(time).cast_mut().cast(),
        }
    }

    #[test]
    fn the_callback_is_the_clock() {
        let time = AtomicU64::new(42);
        let clock = CallbackClock::new(manual(&time)).unwrap();
        assert_eq!(clock.now().as_nanos(), 42);
        time.store(u64::MAX, Ordering::Relaxed);
        assert_eq!(clock.now().as_nanos(), u64::MAX);
        let none = tg_clock {
            now_ns: None,
            ctx: core::ptr::null_mut(),
        };
        assert_eq!(CallbackClock::new(none).err(), Some(TG_ERR_NULL));
        assert_eq!(nanos(core::time::Duration::MAX), u64::MAX);
    }
}
