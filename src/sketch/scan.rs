//! The quantile scan's chunks: sums of bins that vectorise, and the search for the bin
//! where a cumulative count passes a rank, a part of a chunk at a time.
//!
//! The running totals are added without a saturation test: a scan covers fewer than
//! `i32::MAX` bins (the layout's bound on `N`) of at most `u32::MAX` each, below 2^63.

/// How many bins the quantile scan sums at once (vectorised) before looking inside. 32
/// rather than 64: the chunk that holds the bin is summed again a part at a time, and
/// with 64 that cost more than the fewer reductions saved (a heavy-tailed p99 on the
/// Zen 4 host, the code otherwise the same: 45-49 ns against 49.5-55 ns); 16, 48 and 128
/// were slower still.
pub(super) const SCAN_CHUNK: usize = 32;

/// How many bins of a chunk the scan sums at once, once it knows the bin it looks for is
/// in that chunk, before it goes bin by bin: at most 4 parts and 8 bins instead of 32
/// bins one after another.
const SCAN_PART: usize = 8;

/// The sum of `bins`, summed in 32-bit lanes, which vectorise on every SIMD unit (a sum
/// widened to 64 bits per bin compiled to one scalar add per bin on x86-64).
///
/// `NARROW`: the sketch holds fewer than 2^32 values, so no sum of its bins overflows 32
/// bits. Otherwise the low and high 16 bits of the bins are summed apart, and neither of
/// those sums can overflow (`L * 0xffff` fits, checked below for the longest `L`). A
/// constant, so that the scan's loop is compiled once for each case, without the test.
#[inline(always)]
pub(super) fn bin_sum<const NARROW: bool, const L: usize>(bins: &[u32; L]) -> u64 {
    const { assert!(L.is_multiple_of(4)) };
    // Four lanes written out: a 64-bin fold is unrolled before it is vectorised, and then
    // compiles to 64 scalar adds.
    let (quads, _) = bins.as_chunks::<4>(); // nothing left over
    let lane_sum = |lanes: [u32; 4]| lanes.iter().fold(0u32, |sum, &x| sum.wrapping_add(x));
    if NARROW {
        let mut lanes = [0u32; 4];
        for quad in quads {
            for (lane, &b) in lanes.iter_mut().zip(quad) {
                *lane = lane.wrapping_add(b);
            }
        }
        return u64::from(lane_sum(lanes));
    }
    let (mut low, mut high) = ([0u32; 4], [0u32; 4]);
    for quad in quads {
        for ((l, h), &b) in low.iter_mut().zip(&mut high).zip(quad) {
            *l = l.wrapping_add(b & 0xffff);
            *h = h.wrapping_add(b >> 16);
        }
    }
    u64::from(lane_sum(low)).wrapping_add(u64::from(lane_sum(high)) << 16)
}
const _: () = assert!(SCAN_CHUNK as u64 * 0xffff <= u32::MAX as u64);
const _: () = assert!(SCAN_CHUNK.is_multiple_of(SCAN_PART));

/// Adds `bins` to `below` from the first up, and returns the position of the first bin
/// that takes it past `rank`.
#[inline]
pub(super) fn scan_up(bins: &[u32], rank: u64, below: &mut u64) -> Option<usize> {
    bins.iter().position(|&b| {
        *below = below.wrapping_add(u64::from(b));
        *below > rank
    })
}

/// Adds `bins` to `above` from the last down, and returns the position of the first bin
/// that takes it to `need` or more.
#[inline]
pub(super) fn scan_down(bins: &[u32], need: u64, above: &mut u64) -> Option<usize> {
    bins.iter().rposition(|&b| {
        *above = above.wrapping_add(u64::from(b));
        *above >= need
    })
}

/// [`scan_up`] on a chunk, a part at a time until the part that holds the bin.
#[inline(always)]
pub(super) fn scan_up_chunk<const NARROW: bool>(
    chunk: &[u32; SCAN_CHUNK],
    rank: u64,
    below: &mut u64,
) -> Option<usize> {
    let (parts, _) = chunk.as_chunks::<SCAN_PART>(); // nothing left over
    for (k, part) in parts.iter().enumerate() {
        let next = below.wrapping_add(bin_sum::<NARROW, SCAN_PART>(part));
        if next > rank {
            return scan_up(part, rank, below).map(|i| k.wrapping_mul(SCAN_PART) | i);
        }
        *below = next;
    }
    None
}

/// [`scan_down`] on a chunk, a part at a time until the part that holds the bin.
#[inline(always)]
pub(super) fn scan_down_chunk<const NARROW: bool>(
    chunk: &[u32; SCAN_CHUNK],
    need: u64,
    above: &mut u64,
) -> Option<usize> {
    let (parts, _) = chunk.as_chunks::<SCAN_PART>(); // nothing left over
    for (k, part) in parts.iter().enumerate().rev() {
        let next = above.wrapping_add(bin_sum::<NARROW, SCAN_PART>(part));
        if next >= need {
            return scan_down(part, need, above).map(|i| k.wrapping_mul(SCAN_PART) | i);
        }
        *above = next;
    }
    None
}

/// The first chunk, from the first up, whose sum takes `below` past `rank` (`below` then
/// holds the sum of the chunks before it), or `None` (`below` holds them all).
///
/// Out of line and generic over `NARROW` only: one loop per case for every preset, compiled
/// alike whatever the caller and the build profile (inlined into a quantile's caller under
/// `codegen-units = 1` the loop was compiled differently, and much slower).
#[inline(never)]
pub(super) fn chunk_up<const NARROW: bool>(
    chunks: &[[u32; SCAN_CHUNK]],
    rank: u64,
    below: &mut u64,
) -> Option<usize> {
    let mut total = *below;
    let found = chunks.iter().position(|chunk| {
        let next = total.wrapping_add(bin_sum::<NARROW, SCAN_CHUNK>(chunk));
        if next > rank {
            return true;
        }
        total = next;
        false
    });
    *below = total;
    found
}

/// The first chunk, from the last down, whose sum takes `above` to `need` or more
/// (`above` then holds the sum of the chunks after it), or `None` (`above` holds them
/// all). Out of line for the reason [`chunk_up`] is.
#[inline(never)]
pub(super) fn chunk_down<const NARROW: bool>(
    chunks: &[[u32; SCAN_CHUNK]],
    need: u64,
    above: &mut u64,
) -> Option<usize> {
    let mut total = *above;
    let found = chunks.iter().rposition(|chunk| {
        let next = total.wrapping_add(bin_sum::<NARROW, SCAN_CHUNK>(chunk));
        if next >= need {
            return true;
        }
        total = next;
        false
    });
    *above = total;
    found
}
