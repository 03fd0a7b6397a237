//! The auto-scaling sketch under arbitrary operations: records (u64 and any f64 bit
//! pattern, NaN and infinities included), merges between sketches of different sizes and
//! scales (and arbitrary sketches drawn by `Arbitrary`), clears, and OTLP round trips and
//! decodes. After every step, every sketch conserves its values (count is the zero count
//! plus its buckets; count plus saturated grows by exactly what was added), its quantiles
//! lie in [min, max], and its scale never rises but by a clear.
#![no_main]

mod common;

use libfuzzer_sys::arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use tailguard::otlp::{self, Timestamps};
use tailguard::sketch::ExponentialSketch;

type Small = ExponentialSketch<u16, 2>;
type Mid = ExponentialSketch<u16, 16>;
type Large = ExponentialSketch<u16, 160>;

/// Values a sketch may hold before the harness stops adding (its own sums saturate at
/// `u64::MAX`, which the exact equalities below do not model).
const ROOM: u64 = 1 << 62;

/// What every sketch keeps, whatever was done to it, and its scale never rises.
fn check<const B: usize>(s: &ExponentialSketch<u16, B>, last_scale: &mut i32) {
    common::assert_exponential_invariants(s);
    assert!(
        s.scale() <= *last_scale,
        "the scale rose: {} to {}",
        last_scale,
        s.scale()
    );
    *last_scale = s.scale();
}

/// Values held or dropped: what no operation but a clear takes away.
fn held<const B: usize>(s: &ExponentialSketch<u16, B>) -> u64 {
    s.count().saturating_add(s.saturated())
}

/// The sketch's point decodes into an empty one of its size: the same buckets, counts
/// and exact statistics; and it re-encodes to the same bytes.
fn round_trip<const B: usize>(s: &ExponentialSketch<u16, B>) -> Vec<u8> {
    let times = Timestamps::new(1, 2);
    let mut buf = vec![0u8; otlp::encoded_len(s, times)];
    let len = otlp::encode(s, times, &mut buf).unwrap();
    assert_eq!(len, buf.len());
    let mut back = ExponentialSketch::<u16, B>::new();
    let report = otlp::decode_into(&buf, &mut back).unwrap();
    assert_eq!((report.added, report.saturated), (s.count(), 0));
    assert!(report.exact_stats || s.is_empty(), "{s:?}");
    assert_eq!((back.scale(), back.offset()), (s.scale(), s.offset()));
    assert!(back.bucket_counts().eq(s.bucket_counts()));
    assert_eq!(
        (back.count(), back.zero_count()),
        (s.count(), s.zero_count())
    );
    if report.exact_stats {
        assert_eq!((back.min(), back.max()), (s.min(), s.max()));
        assert_eq!(back.sum().to_bits(), s.sum().to_bits());
        let mut again = vec![0u8; otlp::encoded_len(&back, times)];
        otlp::encode(&back, times, &mut again).unwrap();
        assert_eq!(again, buf, "a fixed point");
    }
    buf
}

/// Decodes `point` (of `count` values) into `s`: conserved, and its scale at most the
/// point's when the point has buckets.
fn decode<const B: usize>(s: &mut ExponentialSketch<u16, B>, point: &[u8], count: u64) {
    let before = held(s);
    let copy = s.clone();
    let report = otlp::decode_into(point, s).unwrap();
    assert_eq!(report.added + report.saturated, count);
    assert_eq!(held(s), before + count, "{copy:?} {s:?} {report:?}");
}

struct Sketches {
    small: Box<Small>,
    mid: Box<Mid>,
    large: Box<Large>,
    scales: [i32; 3],
}

macro_rules! on {
    ($sk:expr, $which:expr, |$s:ident| $body:expr) => {
        match $which {
            0 => {
                let $s = &mut *$sk.small;
                $body
            }
            1 => {
                let $s = &mut *$sk.mid;
                $body
            }
            _ => {
                let $s = &mut *$sk.large;
                $body
            }
        }
    };
}

fn step(sk: &mut Sketches, u: &mut Unstructured<'_>) -> libfuzzer_sys::arbitrary::Result<()> {
    let which = u.int_in_range(0..=2usize)?;
    match u.int_in_range(0u8..=11)? {
        0..=3 => {
            let v = f64::from_bits(u64::arbitrary(u)?);
            on!(sk, which, |s| {
                let (before, copy) = (held(s), s.clone());
                match s.record(v) {
                    Ok(()) if before < ROOM => assert_eq!(held(s), before + 1),
                    Ok(()) => {}
                    Err(_) => {
                        assert!(v.is_nan() || v < 0.0);
                        assert!(*s == copy, "a refused value changed the sketch");
                    }
                }
            });
        }
        4..=6 => {
            // Near the sketch's values, or anywhere.
            let v = if u.ratio(1u8, 2)? {
                u64::arbitrary(u)?
            } else {
                u64::from(u16::arbitrary(u)?) + 1_000_000
            };
            on!(sk, which, |s| {
                let before = held(s);
                s.record_u64(v);
                if before < ROOM {
                    assert_eq!(held(s), before + 1);
                }
            });
        }
        7 => {
            // A merge of one sketch into another (or into itself, through a copy).
            let from = u.int_in_range(0..=2usize)?;
            let (added, scale) = match from {
                0 => (held(&sk.small), sk.small.scale()),
                1 => (held(&sk.mid), sk.mid.scale()),
                _ => (held(&sk.large), sk.large.scale()),
            };
            let (small, mid, large) = ((*sk.small).clone(), (*sk.mid).clone(), (*sk.large).clone());
            on!(sk, which, |s| {
                let before = held(s);
                if before.saturating_add(added) >= ROOM {
                    return Ok(()); // self-merges double the zero count: stop short of u64
                }
                match from {
                    0 => s.merge(&small),
                    1 => s.merge(&mid),
                    _ => s.merge(&large),
                }
                assert_eq!(held(s), before + added);
                // An empty sketch is at scale 8: this holds for it too.
                assert!(s.scale() <= scale, "a merge cannot refine");
            });
        }
        8 => {
            // An arbitrary sketch of another size merges in.
            let other = Mid::arbitrary(u)?;
            on!(sk, which, |s| {
                let before = held(s);
                if before.saturating_add(held(&other)) >= ROOM {
                    return Ok(());
                }
                s.merge(&other);
                assert_eq!(held(s), before + held(&other));
            });
        }
        9 => {
            // Round trip, then the point decodes into every sketch.
            let most = held(&sk.small).max(held(&sk.mid)).max(held(&sk.large));
            if most >= ROOM / 2 {
                return Ok(()); // the point and the sketches stay below u64::MAX
            }
            let (bytes, count) = on!(sk, which, |s| (round_trip(s), s.count()));
            decode(&mut sk.small, &bytes, count);
            decode(&mut sk.mid, &bytes, count);
            decode(&mut sk.large, &bytes, count);
        }
        10 => {
            on!(sk, which, |s| s.clear());
            sk.scales[which] = 8;
        }
        _ => {
            // Any bytes: a typed error changes nothing; a point decodes whole.
            let len = u.int_in_range(0..=64usize)?;
            let bytes: &[u8] = u.bytes(len)?;
            on!(sk, which, |s| {
                let (before, copy) = (held(s), s.clone());
                match otlp::decode_into(bytes, s) {
                    // Arbitrary counts may saturate `count`: conserved up to u64::MAX.
                    Ok(r) => assert_eq!(held(s), before.saturating_add(r.added + r.saturated)),
                    Err(_) => assert!(*s == copy, "a refused point changed the sketch"),
                }
            });
        }
    }
    check(&sk.small, &mut sk.scales[0]);
    check(&sk.mid, &mut sk.scales[1]);
    check(&sk.large, &mut sk.scales[2]);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mut sk = Sketches {
        small: Box::default(),
        mid: Box::default(),
        large: Box::default(),
        scales: [8; 3],
    };
    while !u.is_empty() {
        if step(&mut sk, &mut u).is_err() {
            break;
        }
    }
});
