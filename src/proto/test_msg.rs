//! For the tests: a hand-written protobuf encoder (so test messages need not come from
//! [`encode`](super::encode)) and small sketches.

use super::wire::zigzag;
use super::{encode, encoded_len, IndexConvention};
use crate::sketch::{DDSketch, IndexMapping, LogMapping};
use std::vec::Vec;

pub(super) type Log = DDSketch<LogMapping, 512>;

pub(super) fn log() -> Log {
    Log::with_relative_accuracy(0.01, 1.0).unwrap()
}

pub(super) fn encode_vec<M: IndexMapping, const N: usize>(
    s: &DDSketch<M, N>,
    convention: IndexConvention,
) -> Vec<u8> {
    let mut buf = std::vec![0u8; encoded_len(s, convention)];
    let len = encode(s, convention, &mut buf).unwrap();
    assert_eq!(len, buf.len());
    buf
}

/// A hand-written protobuf encoder for test messages (the OTLP tests use it too).
#[derive(Default, Clone)]
pub(crate) struct Msg(pub(crate) Vec<u8>);

impl Msg {
    pub(crate) fn varint(mut self, mut v: u64) -> Self {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
        self
    }
    pub(crate) fn tag(self, field: u32, wire_type: u8) -> Self {
        self.varint(u64::from(field << 3 | u32::from(wire_type)))
    }
    pub(crate) fn fixed(mut self, field: u32, v: u64) -> Self {
        self = self.tag(field, 1);
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn double(self, field: u32, v: f64) -> Self {
        self.fixed(field, v.to_bits())
    }
    pub(crate) fn uint(self, field: u32, v: u64) -> Self {
        self.tag(field, 0).varint(v)
    }
    pub(crate) fn sint(self, field: u32, v: i32) -> Self {
        self.uint(field, u64::from(zigzag(v)))
    }
    pub(crate) fn message(mut self, field: u32, body: Msg) -> Self {
        self = self.tag(field, 2).varint(body.0.len() as u64);
        self.0.extend_from_slice(&body.0);
        self
    }
    /// Packed doubles (DDSketch's contiguous bin counts).
    pub(crate) fn packed(self, field: u32, values: &[f64]) -> Self {
        let mut body = Msg::default();
        for v in values {
            body.0.extend_from_slice(&v.to_le_bytes());
        }
        self.message(field, body)
    }
    /// Packed varints (OTLP's bucket counts).
    pub(crate) fn packed_varints(self, field: u32, values: &[u64]) -> Self {
        let body = values.iter().fold(Msg::default(), |m, &v| m.varint(v));
        self.message(field, body)
    }
    pub(crate) fn raw(mut self, bytes: &[u8]) -> Self {
        self.0.extend_from_slice(bytes);
        self
    }
}

pub(super) fn mapping_of<M: IndexMapping>(m: &M) -> Msg {
    Msg::default()
        .double(1, m.gamma())
        .double(2, m.index_offset())
        .uint(3, M::INTERPOLATION as u64)
}

pub(super) fn entry(key: i32, count: f64) -> Msg {
    Msg::default().sint(1, key).double(2, count)
}
