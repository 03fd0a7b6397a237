//! Two arbitrary value lists -> sketches: merging equals recording everything, merging
//! commutes, the wire format merges the same way, the merged quantiles rise from the min
//! to the max, and incompatible sketches are refused without changing the target.
//!
//! With a selector byte of 0xc0 or more, the rest draws two sketches with
//! `arbitrary::Arbitrary` (feature `arbitrary`): any configuration, bins up to
//! saturation, clamped and zero-bin values; merging them conserves every value (in a bin
//! or as saturated), gives the same bins either way round and through the wire.
#![no_main]

mod common;

use common::{assert_quantiles_rise, assert_same, record, values, Value};
use libfuzzer_sys::arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use tailguard::proto::{self, IndexConvention};
use tailguard::sketch::{CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    if selector >= 0xc0 {
        let mut u = Unstructured::new(rest);
        let _ = match selector % 3 {
            0 => arbitrary_pair::<LogMapping, 512>(&mut u),
            1 => arbitrary_pair::<CubicMapping, 256>(&mut u),
            _ => arbitrary_pair::<IntMapping, 1024>(&mut u),
        };
        return;
    }
    let all = values(rest);
    let cut = if all.is_empty() {
        0
    } else {
        usize::from(selector) % (all.len() + 1)
    };
    let (a, b) = all.split_at(cut);
    match selector % 3 {
        0 => check::<LogMapping, 512>(0.01, 1.0, a, b),
        1 => check::<CubicMapping, 256>(0.02, 0.5, a, b),
        _ => check::<IntMapping, 1024>(0.01, 1e-3, a, b),
    }
});

fn sketch_of<M: IndexMapping, const N: usize>(
    alpha: f64,
    min: f64,
    values: &[Value],
) -> DDSketch<M, N> {
    let mut s = DDSketch::<M, N>::with_relative_accuracy(alpha, min).unwrap();
    for &v in values {
        record(&mut s, v);
    }
    s
}

fn check<M: IndexMapping, const N: usize>(alpha: f64, min: f64, a: &[Value], b: &[Value]) {
    let sa = sketch_of::<M, N>(alpha, min, a);
    let sb = sketch_of::<M, N>(alpha, min, b);
    let mut everything = sa.clone();
    for &v in b {
        record(&mut everything, v);
    }

    let mut ab = sa.clone();
    ab.merge(&sb).unwrap();
    assert_same(&ab, &everything);
    let mut ba = sb.clone();
    ba.merge(&sa).unwrap();
    assert_same(&ab, &ba);

    // Through the wire, in either convention: the same bins.
    for convention in [IndexConvention::GoJava, IndexConvention::Python] {
        let mut buf = vec![0u8; proto::encoded_len(&sb, convention)];
        proto::encode(&sb, convention, &mut buf).unwrap();
        let mut wired = sa.clone();
        let report = proto::decode_into(&buf, convention, &mut wired).unwrap();
        assert_eq!(report.added, sb.count());
        assert!(wired.bins().eq(ab.bins()));
        assert_eq!(wired.zero_count(), ab.zero_count());
        assert_eq!(wired.count(), ab.count());
        assert_quantiles_rise(&wired);
    }
    assert_quantiles_rise(&ab);

    // Incompatible sketches: refused, target unchanged.
    let before = sa.clone();
    let mut target = sa.clone();
    let other_alpha = sketch_of::<M, N>(alpha / 2.0, min, b);
    let other_range = sketch_of::<M, N>(alpha, min * 1e3, b);
    let other_size = sketch_of::<M, 16>(alpha, min, b);
    if other_alpha.mapping() != sa.mapping() {
        assert!(target.merge(&other_alpha).is_err());
    }
    assert!(target.merge(&other_range).is_err());
    assert!(target.merge(&other_size).is_err());
    assert!(target == before);
    // Nor through the wire, with another accuracy.
    if other_alpha.mapping().gamma() != sa.mapping().gamma() {
        let mut buf = vec![0u8; proto::encoded_len(&other_alpha, IndexConvention::GoJava)];
        proto::encode(&other_alpha, IndexConvention::GoJava, &mut buf).unwrap();
        assert!(proto::decode_into(&buf, IndexConvention::GoJava, &mut target).is_err());
        assert!(target == before);
    }
}

/// Two arbitrary sketches of one layout: merged either way round and through the wire,
/// the same bins, and every value counted once.
fn arbitrary_pair<'a, M, const N: usize>(
    u: &mut Unstructured<'a>,
) -> libfuzzer_sys::arbitrary::Result<()>
where
    M: IndexMapping + Arbitrary<'a>,
{
    let a = DDSketch::<M, N>::arbitrary(u)?;
    let b = DDSketch::<M, N>::arbitrary_with_layout(u, a.layout())?;
    let all = |s: &DDSketch<M, N>| u128::from(s.count()) + u128::from(s.saturated());
    let mut ab = a.clone();
    ab.merge(&b).unwrap();
    // `saturated` stops at u64::MAX (arbitrary sketches can be merged up to it): past it,
    // dropped values are undercounted, never invented.
    let ceiling = u128::from(ab.count()) + u128::from(u64::MAX);
    assert_eq!(
        all(&ab),
        (all(&a) + all(&b)).min(ceiling),
        "values lost or invented"
    );
    let mut ba = b.clone();
    ba.merge(&a).unwrap();
    assert!(ab.bins().eq(ba.bins()));
    assert_eq!((ab.count(), ab.zero_count()), (ba.count(), ba.zero_count()));
    assert_eq!(all(&ab), all(&ba));
    assert_eq!((ab.min(), ab.max()), (ba.min(), ba.max()));
    // Merged through the wire, in either convention: the same bins.
    for convention in [IndexConvention::GoJava, IndexConvention::Python] {
        let mut buf = vec![0u8; proto::encoded_len(&b, convention)];
        proto::encode(&b, convention, &mut buf).unwrap();
        let mut wired = a.clone();
        let report = proto::decode_into(&buf, convention, &mut wired).unwrap();
        assert_eq!(
            u128::from(report.added) + u128::from(report.saturated),
            u128::from(b.count())
        );
        assert!(wired.bins().eq(ab.bins()));
        assert_eq!(
            (wired.count(), wired.zero_count()),
            (ab.count(), ab.zero_count())
        );
        assert_quantiles_rise(&wired);
    }
    assert_quantiles_rise(&ab);
    Ok(())
}
