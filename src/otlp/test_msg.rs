//! What the unit tests share: a sketch, `encode` into a `Vec`, and protobuf messages
//! built field by field.

use super::{encode, encoded_len, Timestamps};
use crate::sketch::{DDSketch, OtelMapping};
use std::vec::Vec;

pub(super) type Sketch = DDSketch<OtelMapping, 512>;

pub(super) fn sketch(scale: i32) -> Sketch {
    Sketch::new(OtelMapping::with_scale(scale).unwrap(), 1.0).unwrap()
}

pub(super) fn encode_vec<const N: usize>(
    s: &DDSketch<OtelMapping, N>,
    times: Timestamps,
) -> Vec<u8> {
    let mut buf = std::vec![0u8; encoded_len(s, times)];
    let len = encode(s, times, &mut buf).unwrap();
    assert_eq!(len, buf.len());
    buf
}

/// A protobuf message built field by field.
#[derive(Default, Clone)]
pub(super) struct Msg(pub(super) Vec<u8>);

impl Msg {
    pub(super) fn varint(mut self, mut v: u64) -> Self {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
        self
    }
    pub(super) fn tag(self, field: u32, wire_type: u8) -> Self {
        self.varint(u64::from(field << 3 | u32::from(wire_type)))
    }
    pub(super) fn fixed(mut self, field: u32, v: u64) -> Self {
        self = self.tag(field, 1);
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(super) fn double(self, field: u32, v: f64) -> Self {
        self.fixed(field, v.to_bits())
    }
    pub(super) fn sint(self, field: u32, v: i32) -> Self {
        self.tag(field, 0)
            .varint(u64::from(((v << 1) ^ (v >> 31)) as u32))
    }
    pub(super) fn uint(self, field: u32, v: u64) -> Self {
        self.tag(field, 0).varint(v)
    }
    pub(super) fn message(mut self, field: u32, body: Msg) -> Self {
        self = self.tag(field, 2).varint(body.0.len() as u64);
        self.0.extend_from_slice(&body.0);
        self
    }
    pub(super) fn packed(self, field: u32, counts: &[u64]) -> Self {
        let body = counts.iter().fold(Msg::default(), |m, &c| m.varint(c));
        self.message(field, body)
    }
}

/// A data point at `scale` with positive buckets from `offset`, and its count.
pub(super) fn point(scale: i32, offset: i32, counts: &[u64], zero: u64) -> Msg {
    let total = counts.iter().fold(zero, |a, &c| a.wrapping_add(c));
    Msg::default()
        .fixed(4, total)
        .sint(6, scale)
        .fixed(7, zero)
        .message(8, Msg::default().sint(1, offset).packed(2, counts))
}
