//! For the tests: protobuf messages built field by field on the [`Writer`] (so that a test
//! message need not come from the encoder it tests), and an encoder's output in a `Vec`.

use super::Writer;
use core::fmt::Debug;
use std::vec::Vec;

/// A message, built field by field.
#[derive(Default, Clone)]
pub(crate) struct Msg(pub(crate) Vec<u8>);

impl Msg {
    /// Appends what `write` writes: measured first (into no buffer), then written.
    fn with(mut self, write: impl Fn(&mut Writer<'_>)) -> Self {
        let mut measure = Writer::new(&mut []);
        write(&mut measure);
        let start = self.0.len();
        self.0.resize(start + measure.pos(), 0);
        write(&mut Writer::new(&mut self.0[start..]));
        self
    }

    pub(crate) fn varint(self, v: u64) -> Self {
        self.with(|w| w.varint(v))
    }

    /// A tag of any wire type, groups and invalid ones included.
    pub(crate) fn tag(self, field: u32, wire_type: u8) -> Self {
        self.varint(u64::from(field << 3 | u32::from(wire_type)))
    }

    pub(crate) fn fixed(self, field: u32, v: u64) -> Self {
        self.with(|w| w.fixed64_field(field, v))
    }

    pub(crate) fn double(self, field: u32, v: f64) -> Self {
        self.with(|w| w.double_field(field, v))
    }

    pub(crate) fn uint(self, field: u32, v: u64) -> Self {
        self.with(|w| w.varint_field(field, v))
    }

    pub(crate) fn sint(self, field: u32, v: i32) -> Self {
        self.with(|w| w.sint32_field(field, v))
    }

    pub(crate) fn message(self, field: u32, body: Msg) -> Self {
        self.with(|w| {
            w.len_prefix(field, body.0.len());
            w.bytes(&body.0);
        })
    }

    /// Packed doubles (DDSketch's contiguous bin counts).
    pub(crate) fn packed(self, field: u32, values: &[f64]) -> Self {
        let body = values
            .iter()
            .fold(Msg::default(), |m, &v| m.raw(&v.to_le_bytes()));
        self.message(field, body)
    }

    /// Packed varints (OTLP's bucket counts).
    pub(crate) fn packed_varints(self, field: u32, values: &[u64]) -> Self {
        let body = values.iter().fold(Msg::default(), |m, &v| m.varint(v));
        self.message(field, body)
    }

    pub(crate) fn raw(self, bytes: &[u8]) -> Self {
        self.with(|w| w.bytes(bytes))
    }
}

/// What `encode` writes into a buffer of `len` bytes (the encoder's `encoded_len`),
/// which it must fill exactly.
pub(crate) fn encoded<E: Debug>(
    len: usize,
    encode: impl FnOnce(&mut [u8]) -> Result<usize, E>,
) -> Vec<u8> {
    let mut buf = std::vec![0u8; len];
    let written = encode(&mut buf).unwrap();
    assert_eq!(written, buf.len());
    buf
}
