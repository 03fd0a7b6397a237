//! The "count K operations" image: repeats one operation `TG_COUNT_K` times (both set at
//! build time, see build.rs) and exits. Run under QEMU with the instruction-counting
//! plugin for K and 2K: the difference divided by K is the cost of one operation plus the
//! loop; the `none` operation measures the loop alone.

use core::hint::black_box;
use tailguard::sketch::{presets, DDSketch, IntMapping};

use tailguard_support::firmware::{record_latencies, LATENCIES};
use tailguard_support::Xorshift32;

const K: u32 = parse(env!("TG_COUNT_K"));
const OP: &str = env!("TG_COUNT_OP");

mod clock;
mod exponential;
mod size;
mod window;

/// Whether `s` contains `word` (at build time: `OP` is a constant, so each image keeps only
/// the code of its own operation).
const fn contains(s: &str, word: &str) -> bool {
    let (s, w) = (s.as_bytes(), word.as_bytes());
    let mut i = 0;
    while i + w.len() <= s.len() {
        let mut j = 0;
        while j < w.len() && s[i + j] == w[j] {
            j += 1;
        }
        if j == w.len() {
            return true;
        }
        i += 1;
    }
    false
}

/// Whether `s` starts with `prefix` (at build time, as [`contains`]).
const fn starts_with(s: &str, prefix: &str) -> bool {
    let (s, p) = (s.as_bytes(), prefix.as_bytes());
    if p.len() > s.len() {
        return false;
    }
    let mut i = 0;
    while i < p.len() {
        if s[i] != p[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The microcontroller-size sketch (as the embassy firmware's): the integer mapping at
/// 32 bins per octave (1.56 %), 300 bins from 100 µs, up to about 66 ms.
fn mcu_sketch() -> DDSketch<IntMapping, 300> {
    match DDSketch::new(IntMapping::K5, 100_000.0) {
        Ok(s) => s,
        Err(_) => panic!("sketch configuration"),
    }
}

const fn parse(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut i = 0;
    let mut n: u32 = 0;
    while i < b.len() {
        assert!(b[i].is_ascii_digit(), "TG_COUNT_K must be a number");
        n = n * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    n
}

/// The latency recorded in iteration `rng`: 1 ms to ~9.4 ms, in range for every preset.
#[inline(always)]
fn next(rng: &mut Xorshift32) -> u64 {
    1_000_000 + u64::from(rng.next_u32() & 0x7f_ffff)
}

/// Runs `op` `k` times on `state`, each time with the next value. Seed, count, value and
/// state are opaque to the compiler (`black_box`): it cannot run the loop at build time,
/// exploit the values' range, or keep the sketch's fields in registers across records, as
/// it could not in a program that records latencies from a timer into a static sketch.
#[inline(always)]
fn repeat<S>(state: &mut S, mut op: impl FnMut(&mut S, u64)) {
    let mut rng = Xorshift32(black_box(0x1234_5678));
    for _ in 0..black_box(K) {
        let v = black_box(next(&mut rng));
        op(black_box(&mut *state), v);
    }
}

pub fn run() {
    // A constant test, so that a size image links none of the operations below at any
    // optimisation level (its flash is what the primitive adds).
    if const { contains(OP, "size-") } {
        size::run();
        return;
    }
    if window::run() || exponential::run() {
        return;
    }
    match OP.as_bytes() {
        b"none" => repeat(&mut (), |_, _| {}),
        b"int" => repeat(&mut presets::int_latency(), |s, v| s.record_u64(v)),
        b"cubic" => repeat(&mut presets::cubic_latency(), |s, v| {
            let _ = s.record(v as f64);
        }),
        // The sketch holds the checks' 4,000 latencies; each operation asks it for p99.
        b"int-p99" => {
            let mut s = presets::int_latency();
            record_latencies(&mut s, 0, LATENCIES);
            repeat(&mut s, |s, _| {
                black_box(s.quantile(0.99).ok());
            })
        }
        // Merges a sketch of 2,000 latencies into one of the other 2,000, K times (the
        // target's counts grow; no bin comes near saturation).
        b"int-merge" => {
            let mut a = presets::int_latency_coarse();
            record_latencies(&mut a, 0, LATENCIES / 2);
            let mut b = presets::int_latency_coarse();
            record_latencies(&mut b, LATENCIES / 2, LATENCIES);
            repeat(&mut a, |a, _| {
                black_box(a.merge(&b).is_ok());
            })
        }
        _ => panic!("unknown TG_COUNT_OP"),
    }
}
