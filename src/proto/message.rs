//! The DDSketch message (`ddsketch.proto`), field by field: [`walk`] turns its bytes
//! into the [`Event`]s decoding cares about, in wire order, and skips what it does not.

use super::wire::{unzigzag, wrong_type, Reader, WireType};
use super::DecodeError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StoreKind {
    Positive,
    Negative,
}

/// One field of interest, in wire order.
#[derive(Debug, Clone, Copy)]
pub(super) enum Event {
    Gamma(f64),
    IndexOffset(f64),
    Interpolation(i32),
    /// A `binCounts` entry.
    Sparse {
        store: StoreKind,
        key: i32,
        count: f64,
    },
    /// The `position`-th count of `contiguousBinCounts` (over every occurrence of the store).
    Contiguous {
        store: StoreKind,
        position: u64,
        count: f64,
    },
    ContiguousOffset {
        store: StoreKind,
        offset: i32,
    },
    ZeroCount(f64),
}

/// Walks a `DDSketch` message, calling `visit` for every field of interest.
pub(super) fn walk<F>(bytes: &[u8], visit: &mut F) -> Result<(), DecodeError>
where
    F: FnMut(Event) -> Result<(), DecodeError>,
{
    let mut r = Reader { bytes };
    let (mut positive, mut negative) = (0u64, 0u64);
    while !r.is_empty() {
        match r.tag()? {
            (1, WireType::Len) => walk_mapping(r.len_delimited()?, visit)?,
            (2, WireType::Len) => walk_store(
                r.len_delimited()?,
                StoreKind::Positive,
                &mut positive,
                visit,
            )?,
            (3, WireType::Len) => walk_store(
                r.len_delimited()?,
                StoreKind::Negative,
                &mut negative,
                visit,
            )?,
            (4, WireType::I64) => visit(Event::ZeroCount(r.double()?))?,
            (field @ 1..=4, wire_type) => return Err(wrong_type(field, wire_type)),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Ok(())
}

fn walk_mapping<F>(bytes: &[u8], visit: &mut F) -> Result<(), DecodeError>
where
    F: FnMut(Event) -> Result<(), DecodeError>,
{
    let mut r = Reader { bytes };
    while !r.is_empty() {
        match r.tag()? {
            (1, WireType::I64) => visit(Event::Gamma(r.double()?))?,
            (2, WireType::I64) => visit(Event::IndexOffset(r.double()?))?,
            // An enum is an int32: a negative one is sign-extended to 64 bits.
            (3, WireType::Varint) => visit(Event::Interpolation(r.varint()? as i32))?,
            (field @ 1..=3, wire_type) => return Err(wrong_type(field, wire_type)),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Ok(())
}

fn walk_store<F>(
    bytes: &[u8],
    store: StoreKind,
    position: &mut u64,
    visit: &mut F,
) -> Result<(), DecodeError>
where
    F: FnMut(Event) -> Result<(), DecodeError>,
{
    let mut r = Reader { bytes };
    let mut contiguous = |count: f64, visit: &mut F| {
        let event = Event::Contiguous {
            store,
            position: *position,
            count,
        };
        *position = position.saturating_add(1);
        visit(event)
    };
    while !r.is_empty() {
        match r.tag()? {
            (1, WireType::Len) => {
                let (key, count) = read_entry(r.len_delimited()?)?;
                visit(Event::Sparse { store, key, count })?
            }
            (2, WireType::Len) => {
                let packed = r.len_delimited()?;
                let chunks = packed.chunks_exact(8);
                if !chunks.remainder().is_empty() {
                    return Err(DecodeError::Truncated);
                }
                for chunk in chunks {
                    let mut bytes = [0u8; 8];
                    bytes.copy_from_slice(chunk);
                    contiguous(f64::from_le_bytes(bytes), visit)?;
                }
            }
            (2, WireType::I64) => contiguous(r.double()?, visit)?,
            (3, WireType::Varint) => {
                // An int32 field keeps the low 32 bits of the varint.
                let offset = unzigzag(r.varint()? as u32);
                visit(Event::ContiguousOffset { store, offset })?
            }
            (field @ 1..=3, wire_type) => return Err(wrong_type(field, wire_type)),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Ok(())
}

/// A `binCounts` map entry: `key = 1` (sint32), `value = 2` (double); absent ones are 0.
fn read_entry(bytes: &[u8]) -> Result<(i32, f64), DecodeError> {
    let mut r = Reader { bytes };
    let (mut key, mut count) = (0, 0.0);
    while !r.is_empty() {
        match r.tag()? {
            (1, WireType::Varint) => key = unzigzag(r.varint()? as u32),
            (2, WireType::I64) => count = r.double()?,
            (field @ 1..=2, wire_type) => return Err(wrong_type(field, wire_type)),
            (_, wire_type) => r.skip(wire_type)?,
        }
    }
    Ok((key, count))
}
