//! The DDSketch protobuf wire format: encode a [`DDSketch`](crate::DDSketch) into a
//! caller's buffer, decode DataDog's sketches (Go, Java, Python) into one. No heap, no
//! panics on any input.
//!
//! The message is `ddsketch.proto` from DataDog's sketches repositories:
//!
//! ```text
//! DDSketch     { IndexMapping mapping = 1; Store positiveValues = 2; Store negativeValues = 3;
//!                double zeroCount = 4; }
//! IndexMapping { double gamma = 1; double indexOffset = 2;
//!                enum Interpolation interpolation = 3; }   // NONE 0, LINEAR 1, QUADRATIC 2, CUBIC 3
//! Store        { map<sint32, double> binCounts = 1; repeated double contiguousBinCounts = 2 [packed];
//!                sint32 contiguousBinIndexOffset = 3; }
//! ```
//!
//! ```
//! use tailguard::proto::{self, IndexConvention};
//! use tailguard::sketch::presets;
//!
//! let mut device = presets::cubic_latency();
//! for ns in [4_000_000u64, 5_000_000, 48_000_000] {
//!     device.record_u64(ns);
//! }
//! let mut buf = [0u8; 2048];
//! let len = proto::encode(&device, IndexConvention::GoJava, &mut buf).unwrap();
//! assert_eq!(len, proto::encoded_len(&device, IndexConvention::GoJava));
//!
//! // On the aggregator: merge it into a sketch of the same configuration.
//! let mut total = presets::cubic_latency();
//! let report = proto::decode_into(&buf[..len], IndexConvention::GoJava, &mut total).unwrap();
//! assert_eq!(report.added, 3);
//! assert!(total.bins().eq(device.bins()));
//! ```
//!
#![doc = include_str!("../../docs/proto.md")]

// One layer per file, lowest first, over the protobuf primitives of `crate::wire`:
// `message` (the DDSketch message, field by field), `convention` (how DataDog's
// libraries number keys and write gamma), `mapping` (a message's mapping, and whether it
// is a sketch's), then `encoding` and `decoding`, and `rebinning` (decoding a message of
// another mapping, bin by bin into the sketch's); `error` holds what can go wrong. The
// long explanation is docs/proto.md, included above in the module's docs.
mod convention;
mod decoding;
mod encoding;
mod error;
mod mapping;
pub(crate) mod message;
mod rebinning;
#[cfg(test)]
mod test_msg;

pub use convention::IndexConvention;
pub use decoding::{decode_into, read_mapping, Decoded};
pub use encoding::{encode, encode_exponential, encoded_len, exponential_encoded_len};
pub use error::{DecodeError, EncodeError};
pub use mapping::WireMapping;
pub use rebinning::{decode_rebinned, Rebinned};

#[cfg(test)]
mod tests {
    use super::test_msg::encode_vec;
    use super::*;
    use crate::sketch::{CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping};

    #[test]
    fn round_trips_every_mapping_and_convention() {
        fn check<M: IndexMapping, const N: usize>(mut s: DDSketch<M, N>) {
            for v in [0.0, 1.0, 1.5, 2.0, 3.0, 4.0, 100.0, 100.0, 1e4, 7e5] {
                s.record(v).unwrap();
            }
            assert_eq!(s.clamped(), 0);
            for convention in [IndexConvention::GoJava, IndexConvention::Python] {
                let bytes = encode_vec(&s, convention);
                let mut t = s.clone();
                t.clear();
                let report = decode_into(&bytes, convention, &mut t).unwrap();
                assert_eq!(report.added, 10);
                assert_eq!((report.below_range, report.above_range), (0, 0));
                assert!(t.bins().eq(s.bins()), "{convention:?} {:?}", s.mapping());
                assert_eq!(t.zero_count(), 1);
                assert_eq!(t.count(), s.count());
                // min and max are the representatives of the end bins (0 for zeros).
                assert_eq!(t.min(), Some(0.0));
                let top = s.bins().last().unwrap().index;
                assert_eq!(t.max(), Some(s.mapping().value(top)));
                for q in [0.1, 0.5, 0.9, 0.99] {
                    assert_eq!(t.quantile(q), s.quantile(q));
                }
                let alpha = s.relative_accuracy();
                assert!((t.sum() - s.sum()).abs() <= alpha * s.sum());
                // The other convention reads it differently, or not at all.
                let other = match convention {
                    IndexConvention::GoJava => IndexConvention::Python,
                    IndexConvention::Python => IndexConvention::GoJava,
                };
                let mut u = t.clone();
                u.clear();
                match decode_into(&bytes, other, &mut u) {
                    Ok(_) => assert!(!u.bins().eq(s.bins())),
                    Err(e) => assert!(matches!(e, DecodeError::Gamma { .. })),
                }
            }
        }
        check(DDSketch::<LogMapping, 1024>::with_relative_accuracy(0.01, 1.0).unwrap());
        check(DDSketch::<CubicMapping, 1024>::with_relative_accuracy(0.01, 1.0).unwrap());
        check(DDSketch::<IntMapping, 2048>::with_relative_accuracy(0.01, 1.0).unwrap());
        check(DDSketch::<IntMapping, 4096>::with_relative_accuracy(0.005, 1.0).unwrap());
    }
}
