//! Reading untrusted bytes, never panicking: [`Reader`] (the primitives) and [`walk`],
//! the field loop every message's walker is written with.

use super::{unzigzag, WireError, WireType};

/// The bytes of a message not yet read.
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub(crate) fn varint(&mut self) -> Result<u64, WireError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.bytes.split_first().ok_or(WireError::Truncated)?;
            self.bytes = rest;
            let bits = u64::from(byte & 0x7f);
            // The 10th byte may only hold the 64th bit.
            if shift == 63 && bits > 1 {
                return Err(WireError::VarintOverflow);
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(WireError::VarintOverflow)
    }

    pub(crate) fn fixed64(&mut self) -> Result<u64, WireError> {
        let (bytes, rest) = self
            .bytes
            .split_first_chunk::<8>()
            .ok_or(WireError::Truncated)?;
        self.bytes = rest;
        Ok(u64::from_le_bytes(*bytes))
    }

    pub(crate) fn len_delimited(&mut self) -> Result<&'a [u8], WireError> {
        let len = self.varint()?;
        let len = usize::try_from(len).map_err(|_| WireError::Truncated)?;
        let (field, rest) = self
            .bytes
            .split_at_checked(len)
            .ok_or(WireError::Truncated)?;
        self.bytes = rest;
        Ok(field)
    }

    pub(crate) fn tag(&mut self) -> Result<(u32, WireType), WireError> {
        let tag = u32::try_from(self.varint()?).map_err(|_| WireError::VarintOverflow)?;
        let field = tag >> 3;
        if field == 0 {
            return Err(WireError::InvalidFieldNumber);
        }
        let wire_type = match tag & 7 {
            0 => WireType::Varint,
            1 => WireType::I64,
            2 => WireType::Len,
            5 => WireType::I32,
            other => {
                return Err(WireError::WireType {
                    field,
                    wire_type: other as u8,
                })
            }
        };
        Ok((field, wire_type))
    }

    pub(crate) fn skip(&mut self, wire_type: WireType) -> Result<(), WireError> {
        match wire_type {
            WireType::Varint => self.varint().map(drop),
            WireType::I64 => self.fixed64().map(drop),
            WireType::Len => self.len_delimited().map(drop),
            WireType::I32 => {
                let (_, rest) = self
                    .bytes
                    .split_first_chunk::<4>()
                    .ok_or(WireError::Truncated)?;
                self.bytes = rest;
                Ok(())
            }
        }
    }
}

/// Walks the fields of a message in wire order, calling `visit` with each. A field the
/// visitor reads (with one of [`Field`]'s methods, which check its wire type first) is
/// consumed by that read; one it does not read (unknown, or of no interest) is skipped.
/// The first error, the reader's or the visitor's, ends the walk.
pub(crate) fn walk<'a, E, F>(bytes: &'a [u8], mut visit: F) -> Result<(), E>
where
    E: From<WireError>,
    F: FnMut(Field<'_, 'a>) -> Result<(), E>,
{
    let mut r = Reader { bytes };
    while !r.is_empty() {
        let (number, wire_type) = r.tag()?;
        let before = r.bytes.len();
        visit(Field {
            number,
            wire_type,
            reader: &mut r,
        })?;
        // Every successful read takes at least a byte: an unchanged length is no read.
        if r.bytes.len() == before {
            r.skip(wire_type)?;
        }
    }
    Ok(())
}

/// One field of a message whose value is not read yet: each method reads it as one
/// protobuf type, or errors with [`WireError::WireType`] (reading nothing) if its wire
/// type is not that type's.
pub(crate) struct Field<'r, 'a> {
    /// The field number.
    pub(crate) number: u32,
    wire_type: WireType,
    reader: &'r mut Reader<'a>,
}

impl<'a> Field<'_, 'a> {
    fn expect(&self, wire_type: WireType) -> Result<(), WireError> {
        if self.wire_type == wire_type {
            Ok(())
        } else {
            Err(self.wrong_type())
        }
    }

    fn wrong_type(&self) -> WireError {
        WireError::WireType {
            field: self.number,
            wire_type: self.wire_type.code(),
        }
    }

    pub(crate) fn varint(self) -> Result<u64, WireError> {
        self.expect(WireType::Varint)?;
        self.reader.varint()
    }

    /// An `int32` or an enum: the varint's low 32 bits (a negative one is sign-extended
    /// to 64 bits on the wire).
    pub(crate) fn int32(self) -> Result<i32, WireError> {
        self.varint().map(|v| v as i32)
    }

    /// A `sint32`: the zigzag of the varint's low 32 bits.
    pub(crate) fn sint32(self) -> Result<i32, WireError> {
        self.varint().map(|v| unzigzag(v as u32))
    }

    pub(crate) fn fixed64(self) -> Result<u64, WireError> {
        self.expect(WireType::I64)?;
        self.reader.fixed64()
    }

    pub(crate) fn double(self) -> Result<f64, WireError> {
        self.fixed64().map(f64::from_bits)
    }

    /// A nested message, or a packed run.
    pub(crate) fn bytes(self) -> Result<&'a [u8], WireError> {
        self.expect(WireType::Len)?;
        self.reader.len_delimited()
    }

    /// A `repeated double`: as [`varints`](Self::varints), of 8-byte values.
    pub(crate) fn doubles<E, F>(self, position: &mut u64, mut each: F) -> Result<(), E>
    where
        E: From<WireError>,
        F: FnMut(u64, f64) -> Result<(), E>,
    {
        self.repeated(WireType::I64, position, Reader::fixed64, |at, bits| {
            each(at, f64::from_bits(bits))
        })
    }

    /// A `repeated uint64`: one value, or a packed run of them (which protobuf parsers
    /// must both accept), each given to `each` in order with its position among every
    /// occurrence of the field (`position` counts them).
    pub(crate) fn varints<E, F>(self, position: &mut u64, each: F) -> Result<(), E>
    where
        E: From<WireError>,
        F: FnMut(u64, u64) -> Result<(), E>,
    {
        self.repeated(WireType::Varint, position, Reader::varint, each)
    }

    /// A repeated scalar of wire type `scalar`, each value read with `read`. A packed run
    /// of 8-byte values that is not a multiple of 8 bytes long is
    /// [`WireError::Truncated`] before any value is given.
    fn repeated<T, E, F>(
        self,
        scalar: WireType,
        position: &mut u64,
        read: fn(&mut Reader<'a>) -> Result<T, WireError>,
        mut each: F,
    ) -> Result<(), E>
    where
        E: From<WireError>,
        F: FnMut(u64, T) -> Result<(), E>,
    {
        if self.wire_type == scalar {
            return numbered(position, &mut each, read(self.reader)?);
        }
        self.expect(WireType::Len)?;
        let mut packed = Reader {
            bytes: self.reader.len_delimited()?,
        };
        if scalar == WireType::I64 && !packed.bytes.len().is_multiple_of(8) {
            return Err(WireError::Truncated.into());
        }
        while !packed.is_empty() {
            numbered(position, &mut each, read(&mut packed)?)?;
        }
        Ok(())
    }
}

/// Gives `each` the value at `position`, and counts it.
fn numbered<T, E>(
    position: &mut u64,
    each: &mut impl FnMut(u64, T) -> Result<(), E>,
    value: T,
) -> Result<(), E> {
    let at = *position;
    *position = at.saturating_add(1);
    each(at, value)
}
