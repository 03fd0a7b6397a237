//! Downscaling in place: the OpenTelemetry SDKs' rule for how many halvings of the scale
//! make a range of bucket indices fit, and the collapse of a ring of buckets by that many.

use super::counter::Counter;

/// How many halvings of the scale make the indices `low..=high` fit in `size` buckets: the
/// SDKs' `getScaleChange` (shift both ends right until `high - low < size`). With
/// `size >= 2` it ends within 32 halvings, as every index then is 0 or -1.
pub(crate) fn scale_change(mut low: i32, mut high: i32, size: usize) -> u32 {
    let size = i64::try_from(size).unwrap_or(i64::MAX);
    let mut change = 0u32;
    // In i64: the span of two i32s cannot overflow.
    while i64::from(high).wrapping_sub(i64::from(low)) >= size && change < 32 {
        high >>= 1;
        low >>= 1;
        change = change.wrapping_add(1);
    }
    change
}

/// The position in a ring of `len` buckets whose position 0 holds bucket `base` of the
/// bucket `index`, for `index - base` in `(-len, len)` (the ring's occupied buckets span
/// fewer than `len` and include `base`): one subtraction and one conditional add, no
/// division, in 32 bits (every index is within +-2^19, `len` at most 2^20).
#[inline(always)]
pub(super) fn position(index: i32, base: i32, len: usize) -> usize {
    let offset = index.wrapping_sub(base);
    let offset = if offset < 0 {
        offset.wrapping_add(len as i32)
    } else {
        offset
    };
    // Out of the ring (never, by the invariant above) maps to `len`: no bucket.
    usize::try_from(offset).unwrap_or(len)
}

/// Collapses the occupied buckets `start..=end` of a ring (bucket `i` at
/// [`position`]`(i, base)`) by `change` halvings, in place: afterwards bucket `j` of the
/// coarser scale holds the sum of the buckets `i` with `i >> change == j`, the ring's base
/// is the new start, and the new `(start, end)` is returned. What a sum cannot hold (a
/// counter saturates) is passed to `lost` with the coarser bucket's index, and dropped.
///
/// The SDKs' `Buckets.downscale`: rotate the ring so that the start is at position 0,
/// then merge forward, each bucket into the position of its coarser bucket, which is never
/// after its own.
pub(super) fn collapse<C: Counter>(
    counts: &mut [C],
    base: i32,
    (start, end): (i32, i32),
    change: u32,
    mut lost: impl FnMut(i32, u64),
) -> (i32, i32) {
    let len = counts.len();
    counts.rotate_left(position(start, base, len).min(len));
    if change == 0 {
        return (start, end);
    }
    let new_start = start >> change;
    // end - start < len: the positions 0..=span are the ring's.
    let span = usize::try_from(i64::from(end).wrapping_sub(i64::from(start))).unwrap_or(0);
    for pos in 0..=span.min(len.saturating_sub(1)) {
        let index = start.wrapping_add(pos as i32) >> change; // start + pos <= end
        let out = usize::try_from(index.wrapping_sub(new_start)).unwrap_or(0); // <= pos
        if out == pos {
            continue;
        }
        let Some(n) = counts
            .get_mut(pos)
            .map(|c| core::mem::replace(c, C::ZERO).get())
        else {
            continue;
        };
        let added = counts.get_mut(out).map_or(0, |c| c.add_saturating(n));
        if added < n {
            lost(index, n.wrapping_sub(added));
        }
    }
    (new_start, end >> change)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn the_change_is_the_sdks() {
        // The SDK's loop, written as it is written.
        let sdk = |mut low: i64, mut high: i64, size: i64| {
            let mut change = 0;
            while high - low >= size {
                high >>= 1;
                low >>= 1;
                change += 1;
            }
            change
        };
        let ends = [
            -261_633, -70_000, -1025, -257, -256, -255, -2, -1, 0, 1, 2, 159, 160, 161, 4096,
            262_143,
        ];
        for size in [2usize, 3, 16, 64, 160, 161, 16_384] {
            for &low in &ends {
                for &high in ends.iter().filter(|&&h| h >= low) {
                    assert_eq!(
                        scale_change(low, high, size),
                        sdk(i64::from(low), i64::from(high), size as i64),
                        "{low}..={high} in {size}"
                    );
                }
            }
        }
        // The whole float range at scale 8 fits in 2 buckets after 18 halvings (scale -10).
        assert_eq!(scale_change(-261_633, 262_143, 2), 18);
    }

    #[test]
    fn collapsing_a_wrapped_ring_merges_pairs_in_place() {
        // Buckets -3..=4 in a ring of 8 whose base is 1: positions hold 1, 2, 3, 4, -3, -2, -1, 0.
        let mut ring: [u16; 8] = [11, 12, 13, 14, 5, 6, 7, 10];
        let (start, end) = collapse(&mut ring, 1, (-3, 4), 1, |_, _| panic!("nothing lost"));
        assert_eq!((start, end), (-2, 2));
        // -3 -> -2; -2, -1 -> -1; 0, 1 -> 0; 2, 3 -> 1; 4 -> 2.
        assert_eq!(ring, [5, 13, 21, 25, 14, 0, 0, 0]);
        // By two more halvings: -2..=2 -> -1..=0.
        let (start, end) = collapse(&mut ring, start, (start, end), 2, |_, _| panic!());
        assert_eq!((start, end), (-1, 0));
        assert_eq!(&ring[..2], &[5 + 13, 21 + 25 + 14]);
        assert!(ring[2..].iter().all(|&c| c == 0));
    }

    #[test]
    fn a_sum_that_overflows_a_counter_is_lost_and_told() {
        let mut ring: [u8; 4] = [200, 100, 255, 1];
        let mut lost = Vec::new();
        let (start, end) = collapse(&mut ring, 0, (0, 3), 1, |i, n| lost.push((i, n)));
        assert_eq!((start, end), (0, 1));
        assert_eq!(ring, [255, 255, 0, 0]);
        assert_eq!(lost, [(0, 45), (1, 1)]);
    }
}
