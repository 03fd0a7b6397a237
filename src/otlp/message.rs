//! The `ExponentialHistogramDataPoint` message, field by field: its field numbers, and
//! [`walk`], which turns its bytes into the [`Event`]s decoding cares about, in wire
//! order, and skips what it does not (attributes, flags, exemplars, unknown fields).

use super::DecodeError;
use crate::wire;

// Field numbers (opentelemetry/proto/metrics/v1/metrics.proto). The decoder skips
// attributes, flags and exemplars; only the message generator of `fuzzing` writes them.
#[cfg(feature = "arbitrary")]
pub(crate) const ATTRIBUTES: u32 = 1; // repeated KeyValue
pub(crate) const START_TIME: u32 = 2; // fixed64
pub(crate) const TIME: u32 = 3; // fixed64
pub(crate) const COUNT: u32 = 4; // fixed64
pub(crate) const SUM: u32 = 5; // optional double
pub(crate) const SCALE: u32 = 6; // sint32
pub(crate) const ZERO_COUNT: u32 = 7; // fixed64
pub(crate) const POSITIVE: u32 = 8; // Buckets
pub(crate) const NEGATIVE: u32 = 9; // Buckets
#[cfg(feature = "arbitrary")]
pub(crate) const FLAGS: u32 = 10; // uint32
#[cfg(feature = "arbitrary")]
pub(crate) const EXEMPLARS: u32 = 11; // repeated Exemplar
pub(crate) const MIN: u32 = 12; // optional double
pub(crate) const MAX: u32 = 13; // optional double
pub(crate) const ZERO_THRESHOLD: u32 = 14; // double
pub(crate) const BUCKETS_OFFSET: u32 = 1; // sint32
pub(crate) const BUCKETS_COUNTS: u32 = 2; // repeated uint64, packed

/// Which of a data point's two `Buckets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sign {
    Positive,
    Negative,
}

/// One field of interest, in wire order.
#[derive(Debug, Clone, Copy)]
pub(super) enum Event {
    StartTime(u64),
    Time(u64),
    Count(u64),
    Sum(f64),
    Scale(i32),
    ZeroCount(u64),
    Min(f64),
    Max(f64),
    ZeroThreshold(f64),
    Offset {
        sign: Sign,
        offset: i32,
    },
    /// The `position`-th of `bucket_counts` (over every occurrence of the `Buckets`).
    Bucket {
        sign: Sign,
        position: u64,
        count: u64,
    },
}

/// Walks an `ExponentialHistogramDataPoint`, calling `visit` for every field of interest.
pub(super) fn walk<F>(bytes: &[u8], visit: &mut F) -> Result<(), DecodeError>
where
    F: FnMut(Event) -> Result<(), DecodeError>,
{
    let (mut positive, mut negative) = (0u64, 0u64);
    wire::walk(bytes, |field| {
        let event = match field.number {
            START_TIME => Event::StartTime(field.fixed64()?),
            TIME => Event::Time(field.fixed64()?),
            COUNT => Event::Count(field.fixed64()?),
            SUM => Event::Sum(field.double()?),
            SCALE => Event::Scale(field.sint32()?),
            ZERO_COUNT => Event::ZeroCount(field.fixed64()?),
            POSITIVE => return walk_buckets(field.bytes()?, Sign::Positive, &mut positive, visit),
            NEGATIVE => return walk_buckets(field.bytes()?, Sign::Negative, &mut negative, visit),
            MIN => Event::Min(field.double()?),
            MAX => Event::Max(field.double()?),
            ZERO_THRESHOLD => Event::ZeroThreshold(field.double()?),
            // attributes (1), flags (10), exemplars (11) and unknown fields.
            _ => return Ok(()),
        };
        visit(event)
    })
}

fn walk_buckets(
    bytes: &[u8],
    sign: Sign,
    position: &mut u64,
    visit: &mut impl FnMut(Event) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    wire::walk(bytes, |field| match field.number {
        BUCKETS_OFFSET => visit(Event::Offset {
            sign,
            offset: field.sint32()?,
        }),
        // Packed (what every writer sends), or one count per field (which protobuf
        // parsers must accept too).
        BUCKETS_COUNTS => field.varints(position, |position, count| {
            visit(Event::Bucket {
                sign,
                position,
                count,
            })
        }),
        _ => Ok(()),
    })
}
