//! What the unit tests share: a sketch, `encode` into a `Vec`, and protobuf messages
//! built field by field.

use super::{encode, encoded_len, OtelSketch, Timestamps};
use crate::sketch::{DDSketch, OtelMapping};
use crate::wire::test_msg::encoded;
use std::vec::Vec;

pub(super) use crate::wire::test_msg::Msg;

pub(super) type Sketch = DDSketch<OtelMapping, 512>;

pub(super) fn sketch(scale: i32) -> Sketch {
    Sketch::new(OtelMapping::with_scale(scale).unwrap(), 1.0).unwrap()
}

pub(super) fn encode_vec<S: OtelSketch>(s: &S, times: Timestamps) -> Vec<u8> {
    encoded(encoded_len(s, times), |buf| encode(s, times, buf))
}

/// A data point at `scale` with positive buckets from `offset`, and its count.
pub(super) fn point(scale: i32, offset: i32, counts: &[u64], zero: u64) -> Msg {
    let total = counts.iter().fold(zero, |a, &c| a.wrapping_add(c));
    Msg::default()
        .fixed(4, total)
        .sint(6, scale)
        .fixed(7, zero)
        .message(8, Msg::default().sint(1, offset).packed_varints(2, counts))
}
