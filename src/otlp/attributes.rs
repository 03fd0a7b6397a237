//! Attributes: [`KeyValue`] and its [`Value`], borrowed, as OTLP's `common/v1` messages
//! write them (resource, scope and data-point attributes alike).
//!
//! ```text
//! KeyValue { string key = 1; AnyValue value = 2; }
//! AnyValue { oneof value { string string_value = 1; bool bool_value = 2;
//!     int64 int_value = 3; double double_value = 4; bytes bytes_value = 7; } }
//! ```

use crate::wire::{len_field_len, varint_field_len, Writer, FIXED64_FIELD_LEN};

// Field numbers (opentelemetry/proto/common/v1/common.proto).
const KEY: u32 = 1; // string
const VALUE: u32 = 2; // AnyValue
const STRING_VALUE: u32 = 1;
const BOOL_VALUE: u32 = 2;
const INT_VALUE: u32 = 3; // int64: a negative value is a 10-byte varint
const DOUBLE_VALUE: u32 = 4;
const BYTES_VALUE: u32 = 7;

/// An attribute's value: the scalar kinds of OTLP's `AnyValue` (arrays and key-value
/// lists are not supported yet, hence `non_exhaustive`), borrowed.
///
/// ```
/// use tailguard::otlp::Value;
/// let v = Value::Str("eu-west-1");
/// assert_eq!(v, Value::Str("eu-west-1"));
/// assert_ne!(Value::Int(1), Value::Double(1.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum Value<'a> {
    /// `string_value`.
    Str(&'a str),
    /// `bool_value`.
    Bool(bool),
    /// `int_value` (`int64`).
    Int(i64),
    /// `double_value`.
    Double(f64),
    /// `bytes_value`.
    Bytes(&'a [u8]),
}

/// One attribute: a key and its [`Value`], borrowed (no heap: keys and values stay where
/// the caller keeps them, typically `static`s).
///
/// Keys are written in the order given and not checked for duplicates: OTLP says a key
/// appears at most once, which is the caller's to keep.
///
/// ```
/// use tailguard::otlp::{KeyValue, Value};
/// static RESOURCE: [KeyValue<'static>; 3] = [
///     KeyValue::new("service.name", Value::Str("pump-controller")),
///     KeyValue::new("device.rev", Value::Int(3)),
///     KeyValue::new("debug", Value::Bool(false)),
/// ];
/// assert_eq!(RESOURCE[1].key, "device.rev");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct KeyValue<'a> {
    /// The attribute's name.
    pub key: &'a str,
    /// Its value.
    pub value: Value<'a>,
}

impl<'a> KeyValue<'a> {
    /// The attribute `key` = `value`.
    ///
    /// ```
    /// use tailguard::otlp::{KeyValue, Value};
    /// let kv = KeyValue::new("host.arch", Value::Str("arm"));
    /// assert_eq!(kv.value, Value::Str("arm"));
    /// ```
    pub const fn new(key: &'a str, value: Value<'a>) -> Self {
        KeyValue { key, value }
    }
}

/// The length of a string or bytes field, absent when empty (proto3 omits defaults).
pub(super) fn str_field_len(s: &[u8]) -> usize {
    if s.is_empty() {
        0
    } else {
        len_field_len(s.len())
    }
}

/// Writes a string or bytes field, unless it is empty.
pub(super) fn write_str_field(w: &mut Writer<'_>, field: u32, s: &[u8]) {
    if !s.is_empty() {
        w.len_prefix(field, s.len());
        w.bytes(s);
    }
}

/// The length of an `AnyValue`'s body. A oneof member is written even when it holds its
/// default (`0`, `false`, `""`), as protobuf does: that it is set is the information.
fn any_value_len(value: &Value<'_>) -> usize {
    match value {
        Value::Str(s) => len_field_len(s.len()),
        Value::Bytes(b) => len_field_len(b.len()),
        Value::Bool(_) => 2,
        Value::Int(i) => varint_field_len(*i as u64),
        Value::Double(_) => FIXED64_FIELD_LEN,
    }
}

/// The length of a `KeyValue`'s body.
fn key_value_len(kv: &KeyValue<'_>) -> usize {
    str_field_len(kv.key.as_bytes()).saturating_add(len_field_len(any_value_len(&kv.value)))
}

/// The length of `attributes` as a repeated field (every `KeyValue` with its one-byte tag
/// and its length).
pub(super) fn attributes_len(attributes: &[KeyValue<'_>]) -> usize {
    attributes.iter().fold(0usize, |len, kv| {
        len.saturating_add(len_field_len(key_value_len(kv)))
    })
}

/// Writes `attributes` as the repeated field `field`.
pub(super) fn write_attributes(w: &mut Writer<'_>, field: u32, attributes: &[KeyValue<'_>]) {
    for kv in attributes {
        w.len_prefix(field, key_value_len(kv));
        write_str_field(w, KEY, kv.key.as_bytes());
        w.len_prefix(VALUE, any_value_len(&kv.value));
        match kv.value {
            Value::Str(s) => {
                w.len_prefix(STRING_VALUE, s.len());
                w.bytes(s.as_bytes());
            }
            Value::Bytes(b) => {
                w.len_prefix(BYTES_VALUE, b.len());
                w.bytes(b);
            }
            Value::Bool(b) => w.varint_field(BOOL_VALUE, u64::from(b)),
            // int64: two's complement, as a 64-bit varint.
            Value::Int(i) => w.varint_field(INT_VALUE, i as u64),
            Value::Double(d) => w.double_field(DOUBLE_VALUE, d),
        }
    }
}
