//! The "count K operations" image: repeats one operation `TG_COUNT_K` times (both set at
//! build time, see build.rs) and exits. Run under QEMU with the instruction-counting
//! plugin for K and 2K: the difference divided by K is the cost of one operation plus the
//! loop; the `none` operation measures the loop alone.

use core::hint::black_box;
use tailguard::sketch::presets;

use crate::workload::Rng;

const K: u32 = parse(env!("TG_COUNT_K"));
const OP: &str = env!("TG_COUNT_OP");

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
fn next(rng: &mut Rng) -> u64 {
    1_000_000 + u64::from(rng.next_u32() & 0x7f_ffff)
}

pub fn run() {
    let mut rng = Rng(0x1234_5678);
    match OP.as_bytes() {
        b"none" => {
            let mut acc = 0u64;
            for _ in 0..K {
                acc ^= next(&mut rng);
            }
            black_box(acc);
        }
        b"int" => {
            let mut s = presets::int_latency();
            for _ in 0..K {
                s.record_u64(next(&mut rng));
            }
            black_box(&s);
        }
        b"cubic" => {
            let mut s = presets::cubic_latency();
            for _ in 0..K {
                let _ = s.record(next(&mut rng) as f64);
            }
            black_box(&s);
        }
        _ => panic!("unknown TG_COUNT_OP"),
    }
}
