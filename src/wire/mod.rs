//! Protobuf's wire format, as the DDSketch message ([`proto`](crate::proto)), the OTLP
//! data point ([`otlp`](crate::otlp)) and the message generators of `fuzzing` use it:
//! varints, zigzag (`sint32`), fixed 64-bit integers and doubles, tags and
//! length-delimited fields. Crate-private: each message's module holds its fields.
//!
//! One file per job: `reader` (untrusted bytes, never a panic; [`walk`], the one field
//! loop of every message), `writer` (the one [`Writer`], into a caller's buffer, and the
//! lengths of what it writes), `run` (a sketch's bins as both messages write them),
//! `tally` (what a decoder added to a sketch, counted one way for both messages), and for
//! the tests `test_msg` (messages built field by field on the `Writer`).

mod reader;
mod run;
mod tally;
#[cfg(test)]
pub(crate) mod test_msg;
mod writer;

pub(crate) use reader::walk;
pub(crate) use run::{dense_counts, Run};
pub(crate) use tally::{Range, Side, Tally};
pub(crate) use writer::{
    len_field_len, sint32_field_len, varint_field_len, varint_len, Writer, FIXED64_FIELD_LEN,
};

/// How a field's value is laid out (groups, wire types 3 and 4, are not supported).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WireType {
    /// A varint (`uint64`, `sint32`, enums).
    Varint,
    /// 8 bytes (`fixed64`, `double`).
    I64,
    /// A length, then that many bytes (nested messages, packed runs).
    Len,
    /// 4 bytes (`fixed32`, `float`).
    I32,
}

impl WireType {
    /// The number a tag holds for it.
    pub(crate) const fn code(self) -> u8 {
        match self {
            WireType::Varint => 0,
            WireType::I64 => 1,
            WireType::Len => 2,
            WireType::I32 => 5,
        }
    }
}

/// Why bytes are not well-formed protobuf, or not of the wire type a field needs: the
/// variants of the same names of [`proto::DecodeError`](crate::proto::DecodeError), which
/// say what each means, and which the decoders' errors hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WireError {
    Truncated,
    VarintOverflow,
    InvalidFieldNumber,
    WireType { field: u32, wire_type: u8 },
}

/// `sint32`'s encoding: small magnitudes of either sign in few bytes.
pub(crate) fn zigzag(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)) as u32
}

pub(crate) fn unzigzag(v: u32) -> i32 {
    ((v >> 1) as i32) ^ ((v & 1) as i32).wrapping_neg()
}

#[cfg(test)]
mod tests {
    use super::reader::Reader;
    use super::test_msg::Msg;
    use super::*;

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
