//! The property test of the whole ABI with bad input: random storage bytes, random sizes
//! and offsets (misaligned), nulls, short output buffers, random bytes to decode. Nothing
//! crashes, and each refusal is the documented status. (Native only: miri runs the unit
//! tests.)

use core::ffi::c_void;
use core::ptr::{null, null_mut};
use core::sync::atomic::AtomicU64;

use proptest::prelude::*;

use crate::budget::*;
use crate::clock::tests::manual;
use crate::codec::*;
use crate::hedger::*;
use crate::sketch::*;
use crate::status::*;
use crate::window::*;

/// Word-aligned storage for the largest object, and the byte pointer `offset` into it.
fn storage(words: &mut [u64], offset: usize) -> *mut c_void {
    words.as_mut_ptr().cast::<u8>().wrapping_add(offset).cast()
}

const WORDS: usize = TG_HEDGER_INT_SIZE / 8 + 2;

/// What init must answer for `offset` and `size`, given the object's byte size `needed`.
fn expected_init(offset: usize, size: usize, needed: usize) -> tg_status {
    if !offset.is_multiple_of(8) {
        TG_ERR_MISALIGNED
    } else if size < needed {
        TG_ERR_SIZE
    } else {
        TG_OK
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Storage no `_init` wrote (random bytes, not a magic word) is refused by every
    /// object's functions, and changes nothing.
    #[test]
    fn random_storage_is_uninitialised(words in proptest::collection::vec(any::<u64>(), 8), v in any::<f64>()) {
        let mut words = words;
        prop_assume!(words[0] >> 32 != 0x5447_4f42);
        let before = words.clone();
        let p = words.as_mut_ptr();
        let (mut d, mut u, mut n, mut b) = (0.0, 0u64, 0u32, false);
        let mut t = tg_ticket { opaque: [0; TG_TICKET_WORDS] };
        let mut dec = tg_decision { kind: 0, skip_reason: 0, wait_ns: 0 };
        // SAFETY: `words` holds 64 readable bytes; every call refuses it before writing.
        unsafe {
            let s = p.cast::<tg_sketch>();
            prop_assert_eq!(tg_sketch_record(s, v), TG_ERR_UNINIT);
            prop_assert_eq!(tg_sketch_record_u64_n(s, 1, 1), TG_ERR_UNINIT);
            prop_assert_eq!(tg_sketch_quantile(s, 0.5, &mut d), TG_ERR_UNINIT);
            prop_assert_eq!(tg_sketch_merge(s, s), TG_ERR_UNINIT);
            prop_assert_eq!(tg_sketch_decode_ddsketch(s, 0, null(), 0), TG_ERR_UNINIT);
            prop_assert_eq!(tg_sketch_encode_otlp(s, 0, 0, null_mut(), 0, &mut 0), TG_ERR_UNINIT);
            let w = p.cast::<tg_window>();
            prop_assert_eq!(tg_window_record(w, v), TG_ERR_UNINIT);
            prop_assert_eq!(tg_window_count(w, &mut u), TG_ERR_UNINIT);
            prop_assert_eq!(tg_token_bucket_try_acquire(p.cast(), &mut b), TG_ERR_UNINIT);
            prop_assert_eq!(tg_ratio_budget_granted(p.cast(), &mut n), TG_ERR_UNINIT);
            let h = p.cast::<tg_hedger>();
            prop_assert_eq!(tg_hedger_start(h, &mut t), TG_ERR_UNINIT);
            prop_assert_eq!(tg_hedger_should_hedge(h, &mut t, &mut dec), TG_ERR_UNINIT);
        }
        prop_assert_eq!(words, before);
    }

    /// Init at any offset and size: misaligned, short and good storage, any preset.
    #[test]
    fn init_checks_offset_size_and_preset(offset in 0usize..16, size in 0usize..TG_HEDGER_INT_SIZE + 64, preset in 0u32..8) {
        let mut words = std::vec![0u64; WORDS];
        let p = storage(&mut words, offset);
        let time = AtomicU64::new(1);
        let known = (1..=6).contains(&preset);
        let hedged = matches!(preset, 1 | 2 | 3 | 5);
        let sketch_size = [0, TG_SKETCH_LOG_SIZE, TG_SKETCH_CUBIC_SIZE, TG_SKETCH_INT_SIZE, TG_SKETCH_INT_COARSE_SIZE, TG_SKETCH_MCU_SIZE, TG_SKETCH_OTEL_SIZE, 0];
        // SAFETY: `p` has `WORDS * 8 - offset` writable bytes, more than `size`.
        unsafe {
            let mut s = null_mut();
            let got = tg_sketch_init(p, size, preset, &mut s);
            if !known {
                prop_assert_eq!(got, TG_ERR_PRESET);
            } else {
                // The header's size is an upper bound: good at or above it.
                prop_assert!(matches!(got, TG_OK | TG_ERR_SIZE | TG_ERR_MISALIGNED));
                if offset.is_multiple_of(8) && size >= sketch_size[preset as usize] {
                    prop_assert_eq!(got, TG_OK);
                }
                prop_assert_eq!(got == TG_ERR_MISALIGNED, !offset.is_multiple_of(8));
            }
            let mut h = null_mut();
            let got = tg_hedger_init(p, size, preset, manual(&time), null(), &mut h);
            if !hedged {
                prop_assert_eq!(got, TG_ERR_PRESET);
            } else {
                prop_assert!(matches!(got, TG_OK | TG_ERR_SIZE | TG_ERR_MISALIGNED));
                prop_assert_eq!(got == TG_ERR_MISALIGNED, !offset.is_multiple_of(8));
            }
            let mut w = null_mut();
            let got = tg_window_init(p, size, preset, manual(&time), null(), &mut w);
            prop_assert_eq!(got == TG_ERR_PRESET, !hedged);
            let mut b = null_mut();
            let got = tg_token_bucket_init(p, size, manual(&time), 10.0, 2, &mut b);
            prop_assert_eq!(got, expected_init(offset, size, core::mem::size_of::<crate::object::Object<tailguard::budget::TokenBucket<crate::clock::CallbackClock>>>()));
            let mut r = null_mut();
            let got = tg_ratio_budget_init(p, size, 0.1, 10, &mut r);
            prop_assert_eq!(got, expected_init(offset, size, core::mem::size_of::<crate::object::Object<tailguard::budget::RatioBudget>>()));
            // Null storage and null out-pointers.
            prop_assert_eq!(tg_sketch_init(null_mut(), size, preset, &mut s), if known { TG_ERR_NULL } else { TG_ERR_PRESET });
            prop_assert_eq!(tg_ratio_budget_init(p, size, 0.1, 10, null_mut()), TG_ERR_NULL);
        }
    }

    /// Values and constants out of range: NaN, infinities, negatives, quantiles, counts,
    /// conventions, attempts.
    #[test]
    fn values_are_checked(v in any::<f64>(), q in any::<f64>(), n in any::<u64>(), convention in any::<u32>(), attempt in any::<u32>()) {
        let mut words = std::vec![0u64; WORDS];
        let time = AtomicU64::new(1);
        let mut s = null_mut();
        let mut h = null_mut();
        let mut d = 0.0;
        let mut t = tg_ticket { opaque: [0; TG_TICKET_WORDS] };
        // SAFETY: the storage is large and aligned; out-pointers are locals.
        unsafe {
            prop_assert_eq!(tg_sketch_init(storage(&mut words, 0), WORDS * 8, crate::TG_PRESET_CUBIC, &mut s), TG_OK);
            let want = if v.is_nan() || v < 0.0 { TG_ERR_VALUE } else { TG_OK };
            prop_assert_eq!(tg_sketch_record(s, v), want);
            let got = tg_sketch_quantile(s, q, &mut d);
            if !(0.0..=1.0).contains(&q) {
                prop_assert_eq!(got, TG_ERR_QUANTILE);
            } else {
                prop_assert_eq!(got, if want == TG_OK { TG_OK } else { TG_ERR_EMPTY });
            }
            prop_assert_eq!(tg_sketch_record_u64_n(s, 7, n), if n > u64::from(u32::MAX) { TG_ERR_VALUE } else { TG_OK });
            prop_assert_eq!(tg_sketch_record_duration(s, n, attempt), TG_OK);
            let got = tg_sketch_encode_ddsketch(s, convention, null_mut(), 0, &mut 0);
            prop_assert_eq!(got, if convention > 1 { TG_ERR_VALUE } else { TG_ERR_BUFFER });

            prop_assert_eq!(tg_hedger_init(storage(&mut words, 0), WORDS * 8, crate::TG_PRESET_MCU, manual(&time), null(), &mut h), TG_OK);
            prop_assert_eq!(tg_hedger_start(h, &mut t), TG_OK);
            prop_assert_eq!(tg_hedger_on_success(h, &t, attempt, null_mut()), if attempt > 255 { TG_ERR_VALUE } else { TG_OK });
            prop_assert_eq!(tg_hedger_on_rate_limited_for(h, n), TG_OK);
            prop_assert_eq!(tg_hedger_record(h, n), TG_OK);
        }
    }

    /// Short output buffers get TG_ERR_BUFFER and the length needed; a buffer of that
    /// length is enough.
    #[test]
    fn short_buffers_report_the_length_needed(values in proptest::collection::vec(any::<u64>(), 0..40), cap in 0usize..600) {
        let mut words = std::vec![0u64; TG_SKETCH_OTEL_SIZE / 8];
        let mut s = null_mut();
        let mut buf = std::vec![0u8; 600];
        // SAFETY: the storage is the OTEL sketch's; `buf` has 600 writable bytes.
        unsafe {
            prop_assert_eq!(tg_sketch_init(storage(&mut words, 0), TG_SKETCH_OTEL_SIZE, crate::TG_PRESET_OTEL, &mut s), TG_OK);
            for v in &values {
                prop_assert_eq!(tg_sketch_record_u64(s, *v), TG_OK);
            }
            for convention in [TG_CONVENTION_GO_JAVA, TG_CONVENTION_PYTHON] {
                let mut needed = 0;
                prop_assert_eq!(tg_sketch_encode_ddsketch(s, convention, null_mut(), 0, &mut needed), TG_ERR_BUFFER);
                let mut len = 0;
                let got = tg_sketch_encode_ddsketch(s, convention, buf.as_mut_ptr(), cap, &mut len);
                prop_assert_eq!(got, if cap >= needed { TG_OK } else { TG_ERR_BUFFER });
                prop_assert_eq!(len, needed);
            }
            let mut needed = 0;
            prop_assert_eq!(tg_sketch_encode_otlp(s, 1, 2, null_mut(), 0, &mut needed), TG_ERR_BUFFER);
            let mut len = 0;
            let got = tg_sketch_encode_otlp(s, 1, 2, buf.as_mut_ptr(), cap, &mut len);
            prop_assert_eq!(got, if cap >= needed { TG_OK } else { TG_ERR_BUFFER });
            prop_assert_eq!(len, needed);
            prop_assert_eq!(tg_sketch_encode_otlp(s, 1, 2, buf.as_mut_ptr(), cap, null_mut()), TG_ERR_NULL);
        }
    }

    /// Random bytes to decode: decoded or TG_ERR_DECODE, and a refused message changes
    /// nothing.
    #[test]
    fn random_bytes_decode_or_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..200), preset in 1u32..=6, convention in 0u32..2) {
        let mut words = std::vec![0u64; TG_SKETCH_INT_SIZE / 8];
        let mut s = null_mut();
        let (mut before, mut after) = (0, 0);
        // SAFETY: the storage is large enough for every sketch; `bytes` is readable.
        unsafe {
            prop_assert_eq!(tg_sketch_init(storage(&mut words, 0), TG_SKETCH_INT_SIZE, preset, &mut s), TG_OK);
            prop_assert_eq!(tg_sketch_record_u64(s, 3_000_000), TG_OK);
            prop_assert_eq!(tg_sketch_count(s, &mut before), TG_OK);
            let got = tg_sketch_decode_ddsketch(s, convention, bytes.as_ptr(), bytes.len());
            prop_assert!(matches!(got, TG_OK | TG_ERR_DECODE));
            prop_assert_eq!(tg_sketch_count(s, &mut after), TG_OK);
            if got == TG_ERR_DECODE {
                prop_assert_eq!(after, before);
            }
            let got = tg_sketch_decode_otlp(s, bytes.as_ptr(), bytes.len());
            if preset == crate::TG_PRESET_OTEL {
                prop_assert!(matches!(got, TG_OK | TG_ERR_DECODE));
            } else {
                prop_assert_eq!(got, TG_ERR_PRESET);
            }
        }
    }

    /// Random tickets (zeroed, garbage, or a real one with a flipped owner) are refused.
    #[test]
    fn random_tickets_are_refused(opaque in proptest::array::uniform8(any::<u64>())) {
        let mut words = std::vec![0u64; TG_HEDGER_MCU_SIZE / 8];
        let time = AtomicU64::new(1);
        let mut h = null_mut();
        let mut t = tg_ticket { opaque };
        prop_assume!(opaque[0] >> 32 != 0x5447_4f42);
        let mut dec = tg_decision { kind: 0, skip_reason: 0, wait_ns: 0 };
        // SAFETY: the storage is the MCU hedger's; the ticket is a local.
        unsafe {
            prop_assert_eq!(tg_hedger_init(storage(&mut words, 0), TG_HEDGER_MCU_SIZE, crate::TG_PRESET_MCU, manual(&time), null(), &mut h), TG_OK);
            prop_assert_eq!(tg_hedger_should_hedge(h, &mut t, &mut dec), TG_ERR_UNINIT);
            prop_assert_eq!(tg_hedger_on_success(h, &t, 0, null_mut()), TG_ERR_UNINIT);
            prop_assert_eq!(tg_hedger_on_error(h, &mut t, 0), TG_ERR_UNINIT);
            prop_assert_eq!(tg_hedger_on_deadline_exceeded(h, &t), TG_ERR_UNINIT);
            let mut real = tg_ticket { opaque: [0; TG_TICKET_WORDS] };
            prop_assert_eq!(tg_hedger_start(h, &mut real), TG_OK);
            real.opaque[1] ^= opaque[1] | 1;
            prop_assert_eq!(tg_hedger_should_hedge(h, &mut real, &mut dec), TG_ERR_MISMATCH);
        }
    }
}
