//! A sketch's bins (`(OpenTelemetry index, count)`, ascending) as Prometheus's native-histogram buckets: the [`Schema`] (the scale,
//! downscaled to at most 8), the [`Buckets`] (downscaled, their indices shifted by one),
//! and the [`Spans`] and [`dense`] counts the protobuf message and the text format write.

use super::EncodeError;
use crate::sketch::OtelMapping;
use core::iter::{self, Peekable};

/// Prometheus's finest schema: 256 buckets per power of two.
pub(crate) const MAX_SCHEMA: i32 = 8;
/// Prometheus's coarsest schema: one bucket per 16 powers of two.
pub(crate) const MIN_SCHEMA: i32 = -4;
/// A run of at most this many empty buckets stays inside a span (as zero counts):
/// client_golang's rule, a zero delta being cheaper than a new span.
pub(crate) const MAX_GAP: i64 = 2;

/// The schema a sketch is written at, and how far its bins are downscaled to reach it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Schema {
    pub(crate) schema: i32,
    /// `scale - schema`: bin `i` is in bucket `(i >> shift) + 1`.
    pub(crate) shift: u32,
}

impl Schema {
    pub(crate) fn of(mapping: &OtelMapping) -> Result<Schema, EncodeError> {
        let scale = mapping.scale();
        if scale < MIN_SCHEMA {
            return Err(EncodeError::ScaleTooCoarse { scale });
        }
        let schema = scale.min(MAX_SCHEMA);
        // 0 <= scale - schema <= 20 - 8.
        let shift = u32::try_from(scale.wrapping_sub(schema)).unwrap_or(0);
        Ok(Schema { schema, shift })
    }
}

/// The non-empty buckets, ascending: `(Prometheus index, count)`. OpenTelemetry's bucket
/// `i` is `(b^i, b^(i+1)]`, Prometheus's `(b^(i-1), b^i]`: the index is the
/// (downscaled) OpenTelemetry index plus one.
pub(crate) struct Buckets<I: Iterator<Item = (i32, u64)>> {
    bins: Peekable<I>,
    shift: u32,
}

impl<I: Iterator<Item = (i32, u64)>> Buckets<I> {
    pub(crate) fn new(bins: I, schema: Schema) -> Self {
        Buckets {
            bins: bins.peekable(),
            shift: schema.shift,
        }
    }
}

impl<I: Iterator<Item = (i32, u64)>> Iterator for Buckets<I> {
    type Item = (i32, u64);

    fn next(&mut self) -> Option<(i32, u64)> {
        let (first, mut count) = self.bins.next()?;
        // Exact downscaling: 2^shift consecutive bins make one bucket (an arithmetic
        // shift floors, negative indices included).
        let index = first.wrapping_shr(self.shift);
        let shift = self.shift;
        while let Some((_, n)) = self
            .bins
            .next_if(|&(bin, _)| bin.wrapping_shr(shift) == index)
        {
            count = count.saturating_add(n);
        }
        // OpenTelemetry's indices of finite floats are far from i32::MAX.
        Some((index.saturating_add(1), count))
    }
}

/// The spans of the buckets: `(offset, length)`, the first offset the first bucket's
/// index, each next one the number of empty buckets since the previous span. A gap of
/// at most [`MAX_GAP`] empty buckets does not end a span.
pub(crate) struct Spans<I: Iterator<Item = (i32, u64)>> {
    buckets: Peekable<Buckets<I>>,
    last: Option<i32>,
}

impl<I: Iterator<Item = (i32, u64)>> Spans<I> {
    pub(crate) fn new(bins: I, schema: Schema) -> Self {
        Spans {
            buckets: Buckets::new(bins, schema).peekable(),
            last: None,
        }
    }
}

/// Empty buckets strictly between indices `from` and `to` (`from < to`).
fn gap(from: i32, to: i32) -> i64 {
    i64::from(to).wrapping_sub(i64::from(from)).wrapping_sub(1)
}

impl<I: Iterator<Item = (i32, u64)>> Iterator for Spans<I> {
    type Item = (i32, u32);

    fn next(&mut self) -> Option<(i32, u32)> {
        let (start, _) = self.buckets.next()?;
        let offset = match self.last {
            None => start,
            // Both are bucket indices of one sketch: the gap fits in an i32.
            Some(last) => i32::try_from(gap(last, start)).unwrap_or(i32::MAX),
        };
        let mut end = start;
        while let Some(&(index, _)) = self.buckets.peek() {
            if gap(end, index) > MAX_GAP {
                break;
            }
            end = index;
            self.buckets.next();
        }
        self.last = Some(end);
        let len = i64::from(end)
            .wrapping_sub(i64::from(start))
            .wrapping_add(1);
        Some((offset, u32::try_from(len).unwrap_or(u32::MAX)))
    }
}

/// The counts of the spans' buckets, ascending: each non-empty bucket's, and a 0 for
/// each empty bucket inside a span.
pub(crate) fn dense<I: Iterator<Item = (i32, u64)>>(
    bins: I,
    schema: Schema,
) -> impl Iterator<Item = u64> {
    let mut last: Option<i32> = None;
    Buckets::new(bins, schema).flat_map(move |(index, count)| {
        let zeros = match last {
            Some(prev) if gap(prev, index) <= MAX_GAP => gap(prev, index),
            _ => 0,
        };
        last = Some(index);
        iter::repeat_n(0, usize::try_from(zeros).unwrap_or(0)).chain(iter::once(count))
    })
}

/// The deltas Prometheus's spans carry: the first count, then each count minus the one
/// before it.
pub(crate) fn deltas<I: Iterator<Item = (i32, u64)>>(
    bins: I,
    schema: Schema,
) -> impl Iterator<Item = i64> {
    let mut prev: i64 = 0;
    dense(bins, schema).map(move |count| {
        // A count above i64::MAX (a sketch of u64 counters could hold one) is written
        // as i64::MAX.
        let count = i64::try_from(count).unwrap_or(i64::MAX);
        let delta = count.wrapping_sub(prev);
        prev = count;
        delta
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn bins(pairs: &[(i32, u32)]) -> impl Iterator<Item = (i32, u64)> + '_ {
        pairs
            .iter()
            .map(|&(index, count)| (index, u64::from(count)))
    }

    const SAME: Schema = Schema {
        schema: 3,
        shift: 0,
    };

    #[test]
    fn indices_are_one_above_opentelemetrys() {
        let b: Vec<_> = Buckets::new(bins(&[(-1, 2), (0, 1), (7, 4)]), SAME).collect();
        assert_eq!(b, [(0, 2), (1, 1), (8, 4)]);
    }

    #[test]
    fn downscaling_adds_bins_that_share_a_bucket() {
        // Scale 10 -> 8: four bins a bucket; -5 >> 2 = -2 and -4 >> 2 = -1 (floors).
        let s = Schema {
            schema: 8,
            shift: 2,
        };
        let pairs = [(-5, 1), (-4, 2), (-1, 3), (0, 4), (3, 5), (4, 6), (1023, 7)];
        let b: Vec<_> = Buckets::new(bins(&pairs), s).collect();
        assert_eq!(b, [(-1, 1), (0, 5), (1, 9), (2, 6), (256, 7)]);
    }

    #[test]
    fn gaps_of_three_or_more_start_a_span() {
        // Prometheus 1, 2 | 6 (gap 3) | 9, 12 (gaps of 2 stay in the span) | 21 (gap 8).
        let pairs = [(0, 5), (1, 3), (5, 1), (8, 2), (11, 2), (20, 1)];
        let spans: Vec<_> = Spans::new(bins(&pairs), SAME).collect();
        assert_eq!(spans, [(1, 2), (3, 7), (8, 1)]);
        let dense: Vec<_> = dense(bins(&pairs), SAME).collect();
        assert_eq!(dense, [5, 3, 1, 0, 0, 2, 0, 0, 2, 1]);
        let deltas: Vec<_> = deltas(bins(&pairs), SAME).collect();
        assert_eq!(deltas, [5, -2, -2, -1, 0, 2, -2, 0, 2, -1]);
        let spanned: u32 = spans.iter().map(|&(_, len)| len).sum();
        assert_eq!(spanned as usize, dense.len());
    }

    #[test]
    fn schemas() {
        let at = |scale| Schema::of(&OtelMapping::with_scale(scale).unwrap());
        assert_eq!(
            at(5),
            Ok(Schema {
                schema: 5,
                shift: 0
            })
        );
        assert_eq!(
            at(-4),
            Ok(Schema {
                schema: -4,
                shift: 0
            })
        );
        assert_eq!(
            at(20),
            Ok(Schema {
                schema: 8,
                shift: 12
            })
        );
        assert_eq!(at(-5), Err(EncodeError::ScaleTooCoarse { scale: -5 }));
    }
}
