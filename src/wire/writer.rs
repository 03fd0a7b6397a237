//! Writing a message: the one [`Writer`], into a caller's buffer, and the lengths of
//! what it writes (`*_len`), with which the encoders check a buffer before writing.

use super::{zigzag, WireType};

/// Writes protobuf into a caller's buffer, and never panics: past the buffer's end it
/// writes nothing but counts on, so [`pos`](Self::pos) is what the message needs either
/// way (an empty buffer measures one).
pub struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }

    /// Bytes written (or counted past the end of the buffer).
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn byte(&mut self, b: u8) {
        if let Some(slot) = self.buf.get_mut(self.pos) {
            *slot = b;
        }
        self.pos = self.pos.saturating_add(1);
    }

    pub(crate) fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    pub(crate) fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.byte((v as u8) | 0x80);
            v >>= 7;
        }
        self.byte(v as u8);
    }

    pub(crate) fn fixed64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }

    pub(crate) fn double(&mut self, v: f64) {
        self.fixed64(v.to_bits());
    }

    pub(crate) fn tag(&mut self, field: u32, wire_type: WireType) {
        self.varint(u64::from(field) << 3 | u64::from(wire_type.code()));
    }

    pub(crate) fn varint_field(&mut self, field: u32, v: u64) {
        self.tag(field, WireType::Varint);
        self.varint(v);
    }

    pub(crate) fn sint32_field(&mut self, field: u32, v: i32) {
        self.varint_field(field, u64::from(zigzag(v)));
    }

    pub(crate) fn fixed64_field(&mut self, field: u32, v: u64) {
        self.tag(field, WireType::I64);
        self.fixed64(v);
    }

    pub(crate) fn double_field(&mut self, field: u32, v: f64) {
        self.fixed64_field(field, v.to_bits());
    }

    /// The tag and length of a length-delimited field whose `len` bytes follow (a
    /// nested message or a packed run, its length computed first).
    pub(crate) fn len_prefix(&mut self, field: u32, len: usize) {
        self.tag(field, WireType::Len);
        self.varint(len as u64);
    }
}

/// Bytes reserved for a nested message's length before its body is written.
#[cfg(feature = "arbitrary")]
const LEN_RESERVE: usize = 5;

/// A nested message begun with [`Writer::begin`]: where its length goes.
#[cfg(feature = "arbitrary")]
#[must_use = "a nested message ends with Writer::end"]
pub(crate) struct Nested(usize);

/// What the message generators of `fuzzing` add: nested messages whose lengths are
/// written after their bodies (the encoders compute lengths first instead).
#[cfg(feature = "arbitrary")]
impl Writer<'_> {
    /// Whether everything written is in the buffer.
    pub(crate) fn fits(&self) -> bool {
        self.pos <= self.buf.len()
    }

    /// A length-delimited field of these bytes.
    pub(crate) fn bytes_field(&mut self, field: u32, bytes: &[u8]) {
        self.len_prefix(field, bytes.len());
        self.bytes(bytes);
    }

    /// Bytes left before the end of the buffer.
    pub(crate) fn room(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Starts a nested message: its tag, and room for its length.
    pub(crate) fn begin(&mut self, field: u32) -> Nested {
        self.tag(field, WireType::Len);
        let start = self.pos;
        self.pos = self.pos.saturating_add(LEN_RESERVE);
        Nested(start)
    }

    /// Ends the nested message `begun`: writes its length and moves its body next to it.
    pub(crate) fn end(&mut self, begun: Nested) {
        let start = begun.0;
        let body = start.saturating_add(LEN_RESERVE);
        let len = self.pos.saturating_sub(body);
        self.pos = start;
        self.varint(len as u64);
        let to = self.pos;
        if let Some(end) = body.checked_add(len).filter(|&end| end <= self.buf.len()) {
            self.buf.copy_within(body..end, to);
        }
        self.pos = to.saturating_add(len);
    }
}

pub(crate) fn varint_len(mut v: u64) -> usize {
    let mut len: usize = 1;
    while v >= 0x80 {
        v >>= 7;
        len = len.wrapping_add(1); // at most 10
    }
    len
}

// The lengths of whole fields count a one-byte tag: field numbers 1 to 15.

/// A `fixed64` or `double` field: a tag and 8 bytes.
pub(crate) const FIXED64_FIELD_LEN: usize = 9;

/// A varint field.
pub(crate) fn varint_field_len(v: u64) -> usize {
    varint_len(v).saturating_add(1)
}

/// A `sint32` field.
pub(crate) fn sint32_field_len(v: i32) -> usize {
    varint_field_len(u64::from(zigzag(v)))
}

/// A length-delimited field of `body` bytes.
pub(crate) fn len_field_len(body: usize) -> usize {
    varint_field_len(body as u64).saturating_add(body)
}
