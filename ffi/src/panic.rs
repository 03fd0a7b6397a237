//! The last resort: the panic handler of the staticlib and cdylib.
//!
//! The library never panics by design (its lints deny `unwrap`, panicking indexing and
//! overflowing arithmetic on every path a caller's data reaches). Should a panic happen
//! anyway, the handler calls the function given to `tg_set_panic_handler` (to log, reset
//! the device, or abort the process), then spins: it never returns into Rust code.

use core::sync::atomic::{AtomicPtr, Ordering};

use crate::status::{tg_status, TG_OK};

/// The registered handler as a pointer (null: none). Load and store only, so the cores
/// without compare-and-swap have it too.
static HANDLER: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());

/// Registers `handler` (null: none) to be called if the library ever panics, before it
/// spins forever; `handler` may abort or reset instead of returning.
/// Returns TG_OK.
#[no_mangle]
pub extern "C" fn tg_set_panic_handler(handler: Option<extern "C" fn()>) -> tg_status {
    let ptr = handler.map_or(core::ptr::null_mut(), |f| f as *mut ());
    HANDLER.store(ptr, Ordering::Release);
    TG_OK
}

/// The registered handler, if any.
fn handler() -> Option<extern "C" fn()> {
    let ptr = HANDLER.load(Ordering::Acquire);
    if ptr.is_null() {
        return None;
    }
    // SAFETY: only `tg_set_panic_handler` stores a non-null value, and it stores an
    // `extern "C" fn()` cast to a pointer; function and data pointers have one size on
    // every supported target.
    Some(unsafe { core::mem::transmute::<*mut (), extern "C" fn()>(ptr) })
}

#[cfg(not(test))]
#[panic_handler]
fn on_panic(_: &core::panic::PanicInfo<'_>) -> ! {
    if let Some(f) = handler() {
        f();
    }
    #[allow(clippy::empty_loop)]
    loop {}
}

/// The unwinder's personality routine, which the host's prebuilt `core` refers to
/// (its unwinding tables) though nothing here unwinds: with `panic = "abort"` it is never
/// called. Bare-metal targets' `core` is built for abort and needs none.
#[cfg(all(not(test), not(target_os = "none")))]
#[no_mangle]
extern "C" fn rust_eh_personality() {}

#[cfg(test)]
mod tests {
    use super::*;
    use core::sync::atomic::AtomicU32;

    static CALLS: AtomicU32 = AtomicU32::new(0);

    extern "C" fn count() {
        CALLS.fetch_add(1, Ordering::Relaxed);
    }

    #[test]
    fn the_handler_is_stored_and_cleared() {
        assert_eq!(tg_set_panic_handler(Some(count)), TG_OK);
        handler().unwrap()();
        assert_eq!(CALLS.load(Ordering::Relaxed), 1);
        assert_eq!(tg_set_panic_handler(None), TG_OK);
        assert!(handler().is_none());
    }
}
