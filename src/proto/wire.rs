//! Protobuf's wire primitives, as the DDSketch message (and the OTLP data point of
//! [`otlp`](crate::otlp)) use them: varints, zigzag (`sint32`), fixed 64-bit doubles and
//! integers, tags and length-delimited fields. [`Reader`] walks untrusted bytes and never
//! panics; [`Writer`] writes into a buffer already checked to be long enough.

use super::DecodeError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WireType {
    Varint,
    I64,
    Len,
    I32,
}

pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub(crate) fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.bytes.split_first().ok_or(DecodeError::Truncated)?;
            self.bytes = rest;
            let bits = u64::from(byte & 0x7f);
            // The 10th byte may only hold the 64th bit.
            if shift == 63 && bits > 1 {
                return Err(DecodeError::VarintOverflow);
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(DecodeError::VarintOverflow)
    }

    pub(crate) fn fixed64(&mut self) -> Result<u64, DecodeError> {
        let (bytes, rest) = self
            .bytes
            .split_first_chunk::<8>()
            .ok_or(DecodeError::Truncated)?;
        self.bytes = rest;
        Ok(u64::from_le_bytes(*bytes))
    }

    pub(crate) fn double(&mut self) -> Result<f64, DecodeError> {
        self.fixed64().map(f64::from_bits)
    }

    pub(crate) fn len_delimited(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.varint()?;
        let len = usize::try_from(len).map_err(|_| DecodeError::Truncated)?;
        let (field, rest) = self
            .bytes
            .split_at_checked(len)
            .ok_or(DecodeError::Truncated)?;
        self.bytes = rest;
        Ok(field)
    }

    pub(crate) fn tag(&mut self) -> Result<(u32, WireType), DecodeError> {
        let tag = u32::try_from(self.varint()?).map_err(|_| DecodeError::VarintOverflow)?;
        let field = tag >> 3;
        if field == 0 {
            return Err(DecodeError::InvalidFieldNumber);
        }
        let wire_type = match tag & 7 {
            0 => WireType::Varint,
            1 => WireType::I64,
            2 => WireType::Len,
            5 => WireType::I32,
            other => {
                return Err(DecodeError::WireType {
                    field,
                    wire_type: other as u8,
                })
            }
        };
        Ok((field, wire_type))
    }

    pub(crate) fn skip(&mut self, wire_type: WireType) -> Result<(), DecodeError> {
        match wire_type {
            WireType::Varint => self.varint().map(drop),
            WireType::I64 => self.fixed64().map(drop),
            WireType::Len => self.len_delimited().map(drop),
            WireType::I32 => {
                let (_, rest) = self
                    .bytes
                    .split_first_chunk::<4>()
                    .ok_or(DecodeError::Truncated)?;
                self.bytes = rest;
                Ok(())
            }
        }
    }
}

pub(crate) fn wrong_type(field: u32, wire_type: WireType) -> DecodeError {
    DecodeError::WireType {
        field,
        wire_type: match wire_type {
            WireType::Varint => 0,
            WireType::I64 => 1,
            WireType::Len => 2,
            WireType::I32 => 5,
        },
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

/// A one-byte tag and a varint.
pub(crate) fn varint_field_len(v: u64) -> usize {
    varint_len(v).saturating_add(1)
}

/// A one-byte tag, a length and `body` bytes.
pub(crate) fn len_field_len(body: usize) -> usize {
    varint_field_len(body as u64).saturating_add(body)
}

pub(crate) fn zigzag(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

pub(crate) fn unzigzag(v: u32) -> i32 {
    ((v >> 1) as i32) ^ ((v & 1) as i32).wrapping_neg()
}

/// Writes into a slice known to be long enough; never panics if it is not.
pub(crate) struct Writer<'a> {
    pub(crate) buf: &'a mut [u8],
    pub(crate) pos: usize,
}

impl Writer<'_> {
    pub(crate) fn byte(&mut self, b: u8) {
        if let Some(slot) = self.buf.get_mut(self.pos) {
            *slot = b;
        }
        self.pos = self.pos.saturating_add(1);
    }

    pub(crate) fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.byte((v as u8) | 0x80);
            v >>= 7;
        }
        self.byte(v as u8);
    }

    pub(crate) fn double(&mut self, v: f64) {
        self.fixed64(v.to_bits());
    }

    pub(crate) fn fixed64(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.byte(b);
        }
    }
}

/// Bytes reserved for a nested message's length before its body is written.
#[cfg(feature = "arbitrary")]
const LEN_RESERVE: usize = 5;

/// What the message generators of [`crate::fuzzing`] add: tags, and nested messages whose
/// lengths are written after their bodies (the encoders compute lengths first instead).
#[cfg(feature = "arbitrary")]
impl Writer<'_> {
    /// Bytes left before the end of the buffer.
    pub(crate) fn room(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub(crate) fn tag(&mut self, field: u32, wire_type: u8) {
        self.varint(u64::from(field) << 3 | u64::from(wire_type));
    }

    /// Starts a nested message: its tag, and room for its length.
    pub(crate) fn begin(&mut self, field: u32) -> usize {
        self.tag(field, 2);
        let start = self.pos;
        self.pos = self.pos.saturating_add(LEN_RESERVE);
        start
    }

    /// Ends the nested message begun at `start`: writes its length and moves its body
    /// next to it.
    pub(crate) fn end(&mut self, start: usize) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::test_msg::Msg;

    #[test]
    fn varints_and_zigzag() {
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let bytes = Msg::default().varint(v).0;
            assert_eq!(bytes.len(), varint_len(v));
            assert_eq!(Reader { bytes: &bytes }.varint(), Ok(v));
        }
        for v in [0, 1, -1, 64, -65, i32::MAX, i32::MIN] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }
}
