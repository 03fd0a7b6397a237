//! The `ExponentialHistogramDataPoint` message, field by field: [`walk`] turns its bytes
//! into the [`Event`]s decoding cares about, in wire order, and skips what it does not
//! (attributes, flags, exemplars, unknown fields).

use crate::proto::wire::{unzigzag, wrong_type, Reader, WireType};
use crate::proto::DecodeError;

// Field numbers (opentelemetry/proto/metrics/v1/metrics.proto).
pub(super) const START_TIME: u32 = 2; // fixed64
pub(super) const TIME: u32 = 3; // fixed64
pub(super) const COUNT: u32 = 4; // fixed64
pub(super) const SUM: u32 = 5; // optional double
pub(super) const SCALE: u32 = 6; // sint32
pub(super) const ZERO_COUNT: u32 = 7; // fixed64
pub(super) const POSITIVE: u32 = 8; // Buckets
pub(super) const NEGATIVE: u32 = 9; // Buckets
pub(super) const MIN: u32 = 12; // optional double
pub(super) const MAX: u32 = 13; // optional double
pub(super) const ZERO_THRESHOLD: u32 = 14; // double
pub(super) const BUCKETS_OFFSET: u32 = 1; // sint32
pub(super) const BUCKETS_COUNTS: u32 = 2; // repeated uint64, packed

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
    let mut r = Reader { bytes };
    let (mut positive, mut negative) = (0u64, 0u64);
    while !r.is_empty() {
        let event = match r.tag()? {
            (START_TIME, WireType::I64) => Event::StartTime(r.fixed64()?),
            (TIME, WireType::I64) => Event::Time(r.fixed64()?),
            (COUNT, WireType::I64) => Event::Count(r.fixed64()?),
            (SUM, WireType::I64) => Event::Sum(r.double()?),
            // A sint32 keeps the low 32 bits of the varint.
            (SCALE, WireType::Varint) => Event::Scale(unzigzag(r.varint()? as u32)),
            (ZERO_COUNT, WireType::I64) => Event::ZeroCount(r.fixed64()?),
            (POSITIVE, WireType::Len) => {
                walk_buckets(r.len_delimited()?, Sign::Positive, &mut positive, visit)?;
                continue;
            }
            (NEGATIVE, WireType::Len) => {
                walk_buckets(r.len_delimited()?, Sign::Negative, &mut negative, visit)?;
                continue;
            }
            (MIN, WireType::I64) => Event::Min(r.double()?),
            (MAX, WireType::I64) => Event::Max(r.double()?),
            (ZERO_THRESHOLD, WireType::I64) => Event::ZeroThreshold(r.double()?),
            (field @ (START_TIME..=POSITIVE | NEGATIVE | MIN..=ZERO_THRESHOLD), wire_type) => {
                return Err(wrong_type(field, wire_type))
            }
            // attributes (1), flags (10), exemplars (11) and unknown fields.
            (_, wire_type) => {
                r.skip(wire_type)?;
                continue;
            }
        };
        visit(event)?;
    }
    Ok(())
}

fn walk_buckets<F>(
    bytes: &[u8],
    sign: Sign,
    position: &mut u64,
    visit: &mut F,
) -> Result<(), DecodeError>
where
    F: FnMut(Event) -> Result<(), DecodeError>,
{
    let mut r = Reader { bytes };
    let mut bucket = |count: u64, visit: &mut F| {
        let event = Event::Bucket {
            sign,
            position: *position,
            count,
        };
        *position = position.saturating_add(1);
        visit(event)
    };
    while !r.is_empty() {
        match r.tag()? {
            (BUCKETS_OFFSET, WireType::Varint) => {
                let offset = unzigzag(r.varint()? as u32);
                visit(Event::Offset { sign, offset })?
            }
            // Packed (what every writer sends), or one count per field (which protobuf
            // parsers must accept too).
            (BUCKETS_COUNTS, WireType::Len) => {
                let mut packed = Reader {
                    bytes: r.len_delimited()?,
                };
                while !packed.is_empty() {
                    bucket(packed.varint()?, visit)?;
                }
            }
            (BUCKETS_COUNTS, WireType::Varint) => bucket(r.varint()?, visit)?,
            (field @ (BUCKETS_OFFSET | BUCKETS_COUNTS), wire_type) => {
                return Err(wrong_type(field, wire_type))
            }
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Ok(())
}
