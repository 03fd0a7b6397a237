//! The DDSketch message (`ddsketch.proto`), field by field: its field numbers, and
//! [`walk`], which turns its bytes into the [`Event`]s decoding cares about, in wire
//! order, and skips what it does not.

use super::DecodeError;
use crate::wire;

// Field numbers. DDSketch:
pub(crate) const MAPPING: u32 = 1; // IndexMapping
pub(crate) const POSITIVE: u32 = 2; // Store
pub(crate) const NEGATIVE: u32 = 3; // Store
pub(crate) const ZERO_COUNT: u32 = 4; // double

// IndexMapping:
pub(crate) const GAMMA: u32 = 1; // double
pub(crate) const INDEX_OFFSET: u32 = 2; // double
pub(crate) const INTERPOLATION: u32 = 3; // enum

// Store:
pub(crate) const BIN_COUNTS: u32 = 1; // map<sint32, double>: repeated entries
pub(crate) const CONTIGUOUS_COUNTS: u32 = 2; // repeated double, packed
pub(crate) const CONTIGUOUS_OFFSET: u32 = 3; // sint32

// A `binCounts` entry:
pub(crate) const KEY: u32 = 1; // sint32
pub(crate) const VALUE: u32 = 2; // double

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
    let (mut positive, mut negative) = (0u64, 0u64);
    wire::walk(bytes, |field| match field.number {
        MAPPING => walk_mapping(field.bytes()?, visit),
        POSITIVE => walk_store(field.bytes()?, StoreKind::Positive, &mut positive, visit),
        NEGATIVE => walk_store(field.bytes()?, StoreKind::Negative, &mut negative, visit),
        ZERO_COUNT => visit(Event::ZeroCount(field.double()?)),
        _ => Ok(()),
    })
}

fn walk_mapping<F>(bytes: &[u8], visit: &mut F) -> Result<(), DecodeError>
where
    F: FnMut(Event) -> Result<(), DecodeError>,
{
    wire::walk(bytes, |field| match field.number {
        GAMMA => visit(Event::Gamma(field.double()?)),
        INDEX_OFFSET => visit(Event::IndexOffset(field.double()?)),
        INTERPOLATION => visit(Event::Interpolation(field.int32()?)),
        _ => Ok(()),
    })
}

fn walk_store(
    bytes: &[u8],
    store: StoreKind,
    position: &mut u64,
    visit: &mut impl FnMut(Event) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    wire::walk(bytes, |field| match field.number {
        BIN_COUNTS => {
            let (key, count) = read_entry(field.bytes()?)?;
            visit(Event::Sparse { store, key, count })
        }
        CONTIGUOUS_COUNTS => field.doubles(position, |position, count| {
            visit(Event::Contiguous {
                store,
                position,
                count,
            })
        }),
        CONTIGUOUS_OFFSET => visit(Event::ContiguousOffset {
            store,
            offset: field.sint32()?,
        }),
        _ => Ok(()),
    })
}

/// A `binCounts` map entry: `key = 1` (sint32), `value = 2` (double); absent ones are 0.
fn read_entry(bytes: &[u8]) -> Result<(i32, f64), DecodeError> {
    let (mut key, mut count) = (0, 0.0);
    wire::walk(bytes, |field| {
        match field.number {
            KEY => key = field.sint32()?,
            VALUE => count = field.double()?,
            _ => {}
        }
        Ok::<_, DecodeError>(())
    })?;
    Ok((key, count))
}
