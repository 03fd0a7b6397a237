//! Hedge budgets (`tg_token_bucket`, `tg_ratio_budget`): lock-free caps on extra load.
//!
//! Called through `const` handles: one budget may be used from an interrupt and the main
//! loop at once (the crate's lock-free `TokenBucket` and `RatioBudget`).

use tailguard::budget::{Budget, RatioBudget, TokenBucket};

use crate::clock::{tg_clock, CallbackClock};
use crate::object::{self, fits, Handle, Kind, Out, Storage};
use crate::status::{status_of, tg_status, Result, TG_ERR_CONFIG};

/// A token bucket in caller storage (opaque): the handle `tg_token_bucket_init` returns.
#[allow(non_camel_case_types)]
pub struct tg_token_bucket {
    _opaque: [u8; 0],
}

/// A ratio budget in caller storage (opaque): the handle `tg_ratio_budget_init` returns.
#[allow(non_camel_case_types)]
pub struct tg_ratio_budget {
    _opaque: [u8; 0],
}

/// Bytes of storage a token bucket needs, on every supported target.
pub const TG_TOKEN_BUCKET_SIZE: usize = 128;
/// Bytes of storage a ratio budget needs, on every supported target.
pub const TG_RATIO_BUDGET_SIZE: usize = 128;

type Bucket = TokenBucket<CallbackClock>;

const _: () = assert!(fits::<Bucket>(TG_TOKEN_BUCKET_SIZE));
const _: () = assert!(fits::<RatioBudget>(TG_RATIO_BUDGET_SIZE));

/// Budgets have no preset: their magic's preset field is 0.
const NO_PRESET: u32 = 0;

/// The token bucket behind a handle.
fn token_bucket(h: &Handle) -> Result<&Bucket> {
    h.preset(Kind::TokenBucket)?;
    // SAFETY: the magic names a token bucket, whose objects are `Bucket`s (`_init`).
    Ok(unsafe { h.value::<Bucket>() })
}

/// The ratio budget behind a handle.
fn ratio_budget(h: &Handle) -> Result<&RatioBudget> {
    h.preset(Kind::RatioBudget)?;
    // SAFETY: the magic names a ratio budget, whose objects are `RatioBudget`s (`_init`).
    Ok(unsafe { h.value::<RatioBudget>() })
}

/// Initialises a token bucket in `size` bytes at `storage` (aligned to `TG_ALIGN`, at
/// least `TG_TOKEN_BUCKET_SIZE`): `rate_per_s` tokens a second (in (0, 10^6]) up to
/// `burst` (1 to 1024, and at most 2^51 ns, about 26 days, of refill: `burst / rate_per_s`),
/// refilled from `clock`; it starts full. Writes the handle to `*out`.
/// Returns TG_OK, TG_ERR_NULL (also for a null `clock.now_ns`), TG_ERR_MISALIGNED,
/// TG_ERR_SIZE or TG_ERR_CONFIG.
#[no_mangle]
pub unsafe extern "C" fn tg_token_bucket_init(
    storage: *mut core::ffi::c_void,
    size: usize,
    clock: tg_clock,
    rate_per_s: f64,
    burst: u32,
    out: *mut *mut tg_token_bucket,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `out` and the `size` bytes at `storage`.
    let (out, storage) = unsafe { (Out::new(out), Storage::new(storage, size)) };
    status_of((|| {
        let out = out?;
        let clock = CallbackClock::new(clock)?;
        let handle = object::init(storage, Kind::TokenBucket, NO_PRESET, || {
            Bucket::new(clock, rate_per_s, burst).map_err(|_| TG_ERR_CONFIG)
        })?;
        out.set(handle.cast());
        Ok(())
    })())
}

/// Initialises a ratio budget in `size` bytes at `storage` (aligned to `TG_ALIGN`, at
/// least `TG_RATIO_BUDGET_SIZE`): each request deposits `ratio` of a token (in [0, 1000]),
/// up to `cap` tokens (1 to 4294); it starts full. Writes the handle to `*out`.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_SIZE or TG_ERR_CONFIG.
#[no_mangle]
pub unsafe extern "C" fn tg_ratio_budget_init(
    storage: *mut core::ffi::c_void,
    size: usize,
    ratio: f64,
    cap: u32,
    out: *mut *mut tg_ratio_budget,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `out` and the `size` bytes at `storage`.
    let (out, storage) = unsafe { (Out::new(out), Storage::new(storage, size)) };
    status_of((|| {
        let out = out?;
        let handle = object::init(storage, Kind::RatioBudget, NO_PRESET, || {
            RatioBudget::new(ratio, cap).map_err(|_| TG_ERR_CONFIG)
        })?;
        out.set(handle.cast());
        Ok(())
    })())
}

/// Takes one token for a hedge from the token bucket: `*granted` is true if one was taken,
/// false (nothing taken) if it is empty.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_token_bucket_try_acquire(
    b: *const tg_token_bucket,
    granted: *mut bool,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `b` and `granted`.
    let (b, out) = unsafe { (Handle::new(b), Out::new(granted)) };
    status_of((|| {
        let out = out?;
        out.set(token_bucket(&b)?.try_acquire());
        Ok(())
    })())
}

/// Tells the token bucket a request was made: nothing (it refills from its clock).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_token_bucket_on_request(b: *const tg_token_bucket) -> tg_status {
    // SAFETY: the contract (crate docs) for `b`.
    let b = unsafe { Handle::new(b) };
    status_of((|| {
        token_bucket(&b)?.on_request();
        Ok(())
    })())
}

/// Removes up to `tokens` tokens from the token bucket (back-pressure: an HTTP 429, say).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_token_bucket_penalize(
    b: *const tg_token_bucket,
    tokens: u32,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `b`.
    let b = unsafe { Handle::new(b) };
    status_of((|| {
        token_bucket(&b)?.penalize(tokens);
        Ok(())
    })())
}

/// Removes every token of the token bucket available now.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_token_bucket_drain(b: *const tg_token_bucket) -> tg_status {
    // SAFETY: the contract (crate docs) for `b`.
    let b = unsafe { Handle::new(b) };
    status_of((|| {
        token_bucket(&b)?.drain();
        Ok(())
    })())
}

/// Writes the tokens the token bucket has now to `*out`.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_token_bucket_balance(
    b: *const tg_token_bucket,
    out: *mut f64,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `b` and `out`.
    let (b, out) = unsafe { (Handle::new(b), Out::new(out)) };
    status_of((|| {
        let out = out?;
        out.set(token_bucket(&b)?.balance());
        Ok(())
    })())
}

/// Writes the hedges the token bucket granted so far (wrapping at 2^32).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_token_bucket_granted(
    b: *const tg_token_bucket,
    out: *mut u32,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `b` and `out`.
    let (b, out) = unsafe { (Handle::new(b), Out::new(out)) };
    status_of((|| {
        let out = out?;
        out.set(token_bucket(&b)?.granted());
        Ok(())
    })())
}

/// Writes the hedges the token bucket denied so far (wrapping at 2^32).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_token_bucket_denied(
    b: *const tg_token_bucket,
    out: *mut u32,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `b` and `out`.
    let (b, out) = unsafe { (Handle::new(b), Out::new(out)) };
    status_of((|| {
        let out = out?;
        out.set(token_bucket(&b)?.denied());
        Ok(())
    })())
}

/// Takes one token for a hedge from the ratio budget: `*granted` is true if one was taken,
/// false (nothing taken) if it is empty.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_ratio_budget_try_acquire(
    b: *const tg_ratio_budget,
    granted: *mut bool,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `b` and `granted`.
    let (b, out) = unsafe { (Handle::new(b), Out::new(granted)) };
    status_of((|| {
        let out = out?;
        out.set(ratio_budget(&b)?.try_acquire());
        Ok(())
    })())
}

/// Tells the ratio budget a request was made: it deposits its ratio of a token.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_ratio_budget_on_request(b: *const tg_ratio_budget) -> tg_status {
    // SAFETY: the contract (crate docs) for `b`.
    let b = unsafe { Handle::new(b) };
    status_of((|| {
        ratio_budget(&b)?.on_request();
        Ok(())
    })())
}

/// Removes up to `tokens` tokens from the ratio budget (back-pressure: an HTTP 429, say).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_ratio_budget_penalize(
    b: *const tg_ratio_budget,
    tokens: u32,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `b`.
    let b = unsafe { Handle::new(b) };
    status_of((|| {
        ratio_budget(&b)?.penalize(tokens);
        Ok(())
    })())
}

/// Removes every token of the ratio budget available now.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_ratio_budget_drain(b: *const tg_ratio_budget) -> tg_status {
    // SAFETY: the contract (crate docs) for `b`.
    let b = unsafe { Handle::new(b) };
    status_of((|| {
        ratio_budget(&b)?.drain();
        Ok(())
    })())
}

/// Writes the tokens the ratio budget has now to `*out`.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_ratio_budget_balance(
    b: *const tg_ratio_budget,
    out: *mut f64,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `b` and `out`.
    let (b, out) = unsafe { (Handle::new(b), Out::new(out)) };
    status_of((|| {
        let out = out?;
        out.set(ratio_budget(&b)?.balance());
        Ok(())
    })())
}

/// Writes the hedges the ratio budget granted so far (wrapping at 2^32).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_ratio_budget_granted(
    b: *const tg_ratio_budget,
    out: *mut u32,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `b` and `out`.
    let (b, out) = unsafe { (Handle::new(b), Out::new(out)) };
    status_of((|| {
        let out = out?;
        out.set(ratio_budget(&b)?.granted());
        Ok(())
    })())
}

/// Writes the hedges the ratio budget denied so far (wrapping at 2^32).
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED or TG_ERR_UNINIT.
#[no_mangle]
pub unsafe extern "C" fn tg_ratio_budget_denied(
    b: *const tg_ratio_budget,
    out: *mut u32,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `b` and `out`.
    let (b, out) = unsafe { (Handle::new(b), Out::new(out)) };
    status_of((|| {
        let out = out?;
        out.set(ratio_budget(&b)?.denied());
        Ok(())
    })())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::tests::manual;
    use crate::status::{TG_ERR_SIZE, TG_ERR_UNINIT, TG_OK};
    use core::ptr::null_mut;
    use core::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn the_bucket_refills_from_the_clock_and_the_ratio_from_requests() {
        let time = AtomicU64::new(0);
        let mut mem = [0u64; TG_TOKEN_BUCKET_SIZE / 8];
        let mut rmem = [0u64; TG_RATIO_BUDGET_SIZE / 8];
        let (mut b, mut r) = (null_mut(), null_mut());
        let (mut granted, mut n, mut balance) = (false, 0u32, 0.0);
        // SAFETY: storage and out-pointers are locals that outlive the handles' uses.
        unsafe {
            let p = mem.as_mut_ptr().cast();
            assert_eq!(
                tg_token_bucket_init(p, 8, manual(&time), 10.0, 1, &mut b),
                TG_ERR_SIZE
            );
            assert_eq!(
                tg_token_bucket_init(p, 128, manual(&time), f64::NAN, 1, &mut b),
                TG_ERR_CONFIG
            );
            assert_eq!(
                tg_token_bucket_init(p, 128, manual(&time), 10.0, 1, &mut b),
                TG_OK
            );
            assert_eq!(tg_token_bucket_try_acquire(b, &mut granted), TG_OK);
            assert!(granted);
            assert_eq!(tg_token_bucket_try_acquire(b, &mut granted), TG_OK);
            assert!(!granted);
            time.fetch_add(100_000_000, Ordering::Relaxed);
            assert_eq!(tg_token_bucket_on_request(b), TG_OK);
            assert_eq!(tg_token_bucket_balance(b, &mut balance), TG_OK);
            assert!((balance - 1.0).abs() < 1e-6);
            assert_eq!(tg_token_bucket_penalize(b, 1), TG_OK);
            assert_eq!(tg_token_bucket_drain(b), TG_OK);
            assert_eq!(tg_token_bucket_granted(b, &mut n), TG_OK);
            assert_eq!(n, 1);
            assert_eq!(tg_token_bucket_denied(b, &mut n), TG_OK);
            assert_eq!(n, 1);

            let p = rmem.as_mut_ptr().cast();
            assert_eq!(tg_ratio_budget_init(p, 128, -1.0, 1, &mut r), TG_ERR_CONFIG);
            assert_eq!(tg_ratio_budget_init(p, 128, 0.5, 1, &mut r), TG_OK);
            assert_eq!(tg_ratio_budget_drain(r), TG_OK);
            assert_eq!(tg_ratio_budget_on_request(r), TG_OK);
            assert_eq!(tg_ratio_budget_on_request(r), TG_OK);
            assert_eq!(tg_ratio_budget_try_acquire(r, &mut granted), TG_OK);
            assert!(granted);
            assert_eq!(tg_ratio_budget_penalize(r, 1), TG_OK);
            assert_eq!(tg_ratio_budget_balance(r, &mut balance), TG_OK);
            assert_eq!(tg_ratio_budget_granted(r, &mut n), TG_OK);
            assert_eq!(tg_ratio_budget_denied(r, &mut n), TG_OK);
            // One kind's handle is not another's.
            assert_eq!(tg_ratio_budget_drain(b.cast()), TG_ERR_UNINIT);
            assert_eq!(tg_token_bucket_drain(r.cast()), TG_ERR_UNINIT);
        }
    }
}
