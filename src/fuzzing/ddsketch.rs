//! [`ddsketch_message`]: DDSketch protobuf messages as DataDog's Go, Java and Python
//! libraries write them, into the caller's buffer.
//!
//! What each library writes was read from its sources (sketches-go `ToProto`,
//! sketches-java `DDSketchProtoBinding` and `DDSketch.serialize`, sketches-py
//! `DDSketchProto`): the mappings each constructs (gamma and `indexOffset` from the
//! accuracy, by its own formula), its stores (dense: one contiguous run from the lowest
//! to the highest non-empty bin, zeros inside; sparse: `binCounts` entries in any order;
//! Python's dense store: runs padded with zeros to a multiple of 128 bins, centred), an
//! empty `negativeValues` when no negative value was added, fields in number order, and
//! the fields proto3 leaves out when zero (which Java's own serializer writes for the
//! contiguous offset).

use arbitrary::{Arbitrary, Error, Result, Unstructured};

use crate::proto::message::{
    BIN_COUNTS, CONTIGUOUS_COUNTS, CONTIGUOUS_OFFSET, GAMMA, INDEX_OFFSET, INTERPOLATION, KEY,
    MAPPING, NEGATIVE, POSITIVE, VALUE, ZERO_COUNT,
};
use crate::proto::IndexConvention;
use crate::sketch::{CubicMapping, IntMapping, Interpolation, LogMapping};
use crate::wire::Writer;

/// Who wrote a message [`ddsketch_message`] generates.
///
/// ```
/// use arbitrary::Unstructured;
/// use tailguard::fuzzing::{ddsketch_message, Library};
/// use tailguard::proto::IndexConvention;
///
/// let mut buf = [0u8; 4096];
/// let mut libraries = Vec::new();
/// for seed in 0..64u8 {
///     let bytes: Vec<u8> = (0..600u32).map(|i| (i * 31 + u32::from(seed) * 97) as u8).collect();
///     let message = ddsketch_message(&mut Unstructured::new(&bytes), &mut buf).unwrap();
///     // Python's keys are its own (`ceil`); every other library's are Go's and Java's.
///     let python = message.library == Library::Python;
///     assert_eq!(message.convention == IndexConvention::Python, python);
///     libraries.push(message.library);
/// }
/// assert!(libraries.contains(&Library::Go) && libraries.contains(&Library::Python));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Library {
    /// sketches-go, `DDSketch.ToProto` (protobuf-go): dense and sparse (buffered
    /// paginated) stores; `NONE`, `LINEAR` (its default offset, the multiplier) and
    /// `CUBIC` mappings, or any gamma and offset (`...WithGamma`).
    Go,
    /// sketches-java, `DDSketchProtoBinding.toProto` (protobuf-java): dense and sparse
    /// stores; `NONE`, `LINEAR`, `QUADRATIC`, `CUBIC` and `QUARTIC` mappings, and the
    /// bitwise `LINEAR` mapping (gamma `2^(2^-k)`, no offset).
    Java,
    /// sketches-java, `DDSketch.serialize()` (its own writer, no protobuf-java): as
    /// [`Java`](Self::Java), but the contiguous offset is written even when zero.
    JavaSerialize,
    /// sketches-py (`ddsketch` 3.x), `DDSketchProto.to_proto`: dense stores only, padded
    /// to a multiple of 128 bins; Python's gammas and `ceil` keys
    /// ([`IndexConvention::Python`]).
    Python,
}

/// Which tailguard sketch decodes a generated message exactly (with
/// [`proto::decode_into`](crate::proto::decode_into) and the message's
/// [`convention`](DDSketchMessage::convention)), or why none does.
///
/// ```
/// use arbitrary::Unstructured;
/// use tailguard::fuzzing::{ddsketch_message, Decodes};
/// use tailguard::proto::decode_into;
/// use tailguard::sketch::{DDSketch, LogMapping};
///
/// let mut buf = [0u8; 4096];
/// for seed in 0..64u8 {
///     let bytes: Vec<u8> = (0..600u32).map(|i| (i * 31 + u32::from(seed) * 97) as u8).collect();
///     let message = ddsketch_message(&mut Unstructured::new(&bytes), &mut buf).unwrap();
///     let wire = &buf[..message.len];
///     match message.decodes {
///         // A sketch of the message's own mapping takes it.
///         Decodes::Log(mapping) => {
///             let mut s = DDSketch::<_, 64>::new(mapping, 1.0).unwrap();
///             assert!(decode_into(wire, message.convention, &mut s).is_ok());
///         }
///         // Every sketch refuses it, unchanged.
///         Decodes::Refused(_) => {
///             let mut s = DDSketch::<LogMapping, 64>::with_relative_accuracy(0.01, 1.0).unwrap();
///             assert!(decode_into(wire, message.convention, &mut s).is_err());
///             assert!(s.is_empty());
///         }
///         _ => {} // Cubic and Int: as Log, with their mappings
///     }
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Decodes {
    /// A sketch of this logarithmic mapping (any range: bins outside it are clamped).
    Log(LogMapping),
    /// A sketch of this cubic mapping.
    Cubic(CubicMapping),
    /// A sketch of this integer mapping.
    Int(IntMapping),
    /// No sketch: `decode_into` returns an error (and changes nothing).
    Refused(Refusal),
}

/// Why no tailguard sketch decodes a generated message exactly. Each is something the
/// libraries do write; a message has at most one of them.
///
/// ```
/// use arbitrary::Unstructured;
/// use tailguard::fuzzing::{ddsketch_message, Decodes, Refusal};
/// use tailguard::proto::{decode_into, DecodeError};
/// use tailguard::sketch::{DDSketch, IntMapping, LogMapping};
///
/// let mut buf = [0u8; 4096];
/// let mut refused = 0;
/// for seed in 0..64u8 {
///     let bytes: Vec<u8> = (0..600u32).map(|i| (i * 31 + u32::from(seed) * 97) as u8).collect();
///     let message = ddsketch_message(&mut Unstructured::new(&bytes), &mut buf).unwrap();
///     let wire = &buf[..message.len];
///     let mut log = DDSketch::<LogMapping, 64>::with_relative_accuracy(0.01, 1.0).unwrap();
///     let mut int = DDSketch::<IntMapping, 64>::with_relative_accuracy(0.01, 1.0).unwrap();
///     let error = match message.decodes {
///         Decodes::Refused(Refusal::LinearGamma) => decode_into(wire, message.convention, &mut int),
///         Decodes::Refused(_) => decode_into(wire, message.convention, &mut log),
///         _ => continue,
///     };
///     refused += 1;
///     // The error each refusal names (for `LINEAR`, read by a sketch of that interpolation).
///     match (message.decodes, error) {
///         (Decodes::Refused(Refusal::LinearGamma), Err(DecodeError::Gamma { .. })) => {}
///         (Decodes::Refused(Refusal::FractionalCount), Err(DecodeError::InvalidCount { .. })) => {}
///         (Decodes::Refused(Refusal::Interpolation(code)), Err(DecodeError::Interpolation { found, .. })) => {
///             assert!(code == 2 || code == 4);
///             assert_eq!(found, code);
///         }
///         (Decodes::Refused(Refusal::NegativeValues), Err(_)) => {}
///         other => panic!("unexpected: {other:?}"),
///     }
/// }
/// assert!(refused > 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// A count is not a whole number (the libraries take weighted values): the
    /// decoder's `DecodeError::InvalidCount`.
    FractionalCount,
    /// Java's `QUADRATIC` (2) or `QUARTIC` (4) interpolation, which no tailguard mapping
    /// has: `DecodeError::Interpolation`.
    Interpolation(i32),
    /// `LINEAR` at a gamma other than `2^(2^-k)`, the only ones [`IntMapping`] has (Go's
    /// and Java's default `LINEAR` at most accuracies, 1 % included): `DecodeError::Gamma`.
    LinearGamma,
    /// Negative values (`negativeValues` holds counts): `DecodeError::NegativeValues`.
    NegativeValues,
}

/// What [`ddsketch_message`] wrote.
///
/// ```
/// use arbitrary::Unstructured;
/// use tailguard::fuzzing::{ddsketch_message, Decodes, Refusal};
/// use tailguard::proto::read_mapping;
///
/// let mut buf = [0u8; 1024];
/// for seed in 0..64u8 {
///     let bytes: Vec<u8> = (0..600u32).map(|i| (i * 31 + u32::from(seed) * 97) as u8).collect();
///     let message = ddsketch_message(&mut Unstructured::new(&bytes), &mut buf).unwrap();
///     assert!(message.len <= buf.len()); // the run of bins is cut to fit
///     // Valid protobuf with a valid mapping (`read_mapping` checks the counts too).
///     if message.decodes != Decodes::Refused(Refusal::FractionalCount) {
///         assert!(read_mapping(&buf[..message.len]).is_ok());
///     }
///     assert!(message.count >= message.zero_count);
///     if let Some((low, high)) = message.keys {
///         assert!(low <= high && message.count > message.zero_count);
///     }
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct DDSketchMessage {
    /// The message is `buf[..len]`.
    pub len: usize,
    /// The library whose writing it imitates.
    pub library: Library,
    /// The convention to read it with: [`IndexConvention::Python`] for
    /// [`Library::Python`], [`IndexConvention::GoJava`] otherwise.
    pub convention: IndexConvention,
    /// Which sketch decodes it exactly, or why none does.
    pub decodes: Decodes,
    /// The sum of the counts of `positiveValues` and `zeroCount` (in `f64`, as written):
    /// what a decoder adds, counting what saturates.
    pub count: f64,
    /// `zeroCount`.
    pub zero_count: f64,
    /// The lowest and highest key of a non-zero count in `positiveValues`, as written.
    pub keys: Option<(i32, i32)>,
}

/// Buffers shorter than this are refused: a message with no bins fits in it.
const MIN_BUFFER: usize = 64;
/// Room kept for what follows the positive bins: the store's offset, `negativeValues`,
/// `zeroCount`, and the length prefixes (5 bytes reserved each).
const TAIL: usize = 48;
/// Bins per store, at most.
const MAX_RUN: u32 = 4096;
/// Python's dense store grows by this many bins (`CHUNK_SIZE`).
const PYTHON_CHUNK: u32 = 128;
/// Negative bins written when the message has negative values.
const MAX_NEGATIVE_BINS: u32 = 4;
/// The most bytes a sparse store's entry takes: its tag and length, the key's tag and
/// varint (up to 5 bytes), the count's tag and double. A dense bin takes 8.
const SPARSE_ENTRY: u32 = 17;

/// Writes into `buf` a DDSketch message that `library` could have written, drawn from
/// `u`, and says what it holds. No heap.
///
/// The mapping is one the library constructs: from a relative accuracy (common ones
/// such as 1 %, or any from 1e-6 to 0.5) by the library's formula for gamma and
/// `indexOffset`; or, for Go and Java, from any gamma and offset; for `LINEAR`, also
/// the accuracies `tanh(2^-(k+1))` whose gamma is `2^(2^-k)`. Keys are those of values
/// from 1e-9 to 1e12 at that mapping. Counts are whole numbers, mostly small, some of
/// `u32::MAX` and above (up to 1e300); dense runs hold zeros. Some messages (about one
/// in sixteen from arbitrary bytes) carry one [`Refusal`] (fractional counts, negative
/// values, which Python's messages never hold); Java's
/// `QUADRATIC` and `QUARTIC` and the non-power-of-two `LINEAR` gammas are refusals too.
/// [`DDSketchMessage::decodes`] says which: the message is valid protobuf and valid
/// DDSketch either way.
///
/// The run of bins is cut to what fits in `buf` (8 bytes a dense bin, up to 17 a sparse
/// entry). Errors with
/// [`arbitrary::Error::IncorrectFormat`] if `buf` is shorter than 64 bytes.
///
/// ```
/// use arbitrary::Unstructured;
/// use tailguard::fuzzing::{ddsketch_message, Decodes};
/// use tailguard::proto::decode_into;
/// use tailguard::sketch::DDSketch;
///
/// let bytes: Vec<u8> = (0..512u32).map(|i| (i * 37 % 251) as u8).collect();
/// let mut u = Unstructured::new(&bytes);
/// let mut buf = [0u8; 4096];
/// let message = ddsketch_message(&mut u, &mut buf)?;
/// let wire = &buf[..message.len];
/// match message.decodes {
///     Decodes::Log(mapping) => {
///         let mut s = DDSketch::<_, 2048>::new(mapping, 1e-9).unwrap();
///         let report = decode_into(wire, message.convention, &mut s).unwrap();
///         // Every count is added, or counted as saturated (past u32::MAX in a bin).
///         let total = report.added.saturating_add(report.saturated);
///         assert!(total as f64 == message.count || message.count > 9e15);
///     }
///     Decodes::Refused(why) => println!("no sketch decodes it: {why:?}"),
///     other => println!("{other:?}"),
/// }
/// # Ok::<(), arbitrary::Error>(())
/// ```
pub fn ddsketch_message(u: &mut Unstructured<'_>, buf: &mut [u8]) -> Result<DDSketchMessage> {
    if buf.len() < MIN_BUFFER {
        return Err(Error::IncorrectFormat);
    }
    let library = *u.choose(&[
        Library::Go,
        Library::Java,
        Library::JavaSerialize,
        Library::Python,
    ])?;
    let convention = match library {
        Library::Python => IndexConvention::Python,
        _ => IndexConvention::GoJava,
    };
    let mut plan = Plan::arbitrary(u, library)?;
    let mut w = Writer::new(buf);
    let mut stats = Stats::default();

    let mapping = w.begin(MAPPING);
    double_unless_zero(&mut w, GAMMA, plan.gamma);
    double_unless_zero(&mut w, INDEX_OFFSET, plan.index_offset);
    varint_unless_zero(&mut w, INTERPOLATION, plan.interpolation as u64);
    w.end(mapping);

    let positive = w.begin(POSITIVE);
    let fractional = plan.refusal == Some(Refusal::FractionalCount);
    let room = w.room().saturating_sub(TAIL) / 8;
    let room = u32::try_from(room).unwrap_or(u32::MAX).min(MAX_RUN);
    let wrote_fraction = write_store(&mut w, u, &plan, room, fractional, Some(&mut stats))?;
    w.end(positive);

    let negative = w.begin(NEGATIVE);
    if plan.refusal == Some(Refusal::NegativeValues) {
        let room = u32::try_from(w.room().saturating_sub(TAIL) / 8).unwrap_or(0);
        let mut negative_stats = Stats::default();
        let room = room.min(MAX_NEGATIVE_BINS);
        write_store(&mut w, u, &plan, room, false, Some(&mut negative_stats))?;
        if negative_stats.keys.is_none() {
            plan.refusal = None; // no room for a negative bin: an ordinary message
        }
    }
    w.end(negative);

    // The fractional count goes here if the positive store had no room for it.
    let zero_count = match u.int_in_range(0u8..=3)? {
        _ if fractional && !wrote_fraction => arbitrary_count(u, true)?,
        0 | 1 => 0.0,
        _ => arbitrary_count(u, false)?,
    };
    double_unless_zero(&mut w, ZERO_COUNT, zero_count);
    stats.count += zero_count;

    if !w.fits() {
        return Err(Error::IncorrectFormat); // not expected: TAIL covers the rest
    }
    Ok(DDSketchMessage {
        len: w.pos(),
        library,
        convention,
        decodes: match plan.refusal {
            Some(why) => Decodes::Refused(why),
            None => plan.decodes,
        },
        count: stats.count,
        zero_count,
        keys: stats.keys,
    })
}

/// The mapping as the library writes it, and what decodes it.
struct Plan {
    gamma: f64,
    index_offset: f64,
    interpolation: i32,
    /// `approx_log(v) * multiplier + offset` of a value, to place the keys.
    keys_per_e_fold: f64,
    library: Library,
    decodes: Decodes,
    refusal: Option<Refusal>,
}

/// `(1 + alpha) / (1 - alpha)`, the base of the exact logarithm at accuracy alpha.
fn exact_base(alpha: f64) -> f64 {
    (1.0 + alpha) / (1.0 - alpha)
}

/// Java's correcting factors: gamma is the exact base to the power `1 / factor`.
const LN_2: f64 = core::f64::consts::LN_2;

impl Plan {
    fn arbitrary(u: &mut Unstructured<'_>, library: Library) -> Result<Plan> {
        let python = library == Library::Python;
        // The accuracy, or the one of a power-of-two LINEAR gamma (k = 0..=10).
        let k = u.int_in_range(0u32..=10)?;
        let power_of_two = u.ratio(1u8, 3)?;
        let alpha = if power_of_two {
            // 2^-(k+1) fits in an f64 for these k.
            libm::tanh(libm::ldexp(1.0, (k as i32).wrapping_add(1).wrapping_neg()))
        } else {
            accuracy(u)?
        };
        let exact = exact_base(alpha);
        // Python's gamma, for every interpolation: 1 + 2 alpha / (1 - alpha).
        let python_gamma = 1.0 + 2.0 * alpha / (1.0 - alpha);
        let mut choices: &[u8] = &[0, 1, 2, 3, 4]; // Go: log, log+offset, cubic, cubic+offset, linear
        if matches!(library, Library::Java | Library::JavaSerialize) {
            choices = &[0, 1, 2, 3, 4, 5, 6, 7]; // and quadratic, quartic, bitwise linear
        } else if python {
            choices = &[0, 2, 4];
        }
        let bad = |_| Error::IncorrectFormat; // every parameter drawn is valid
        let offset = if u.ratio(1u8, 2)? {
            f64::from(u.int_in_range(-100_000i32..=100_000)?)
        } else {
            (unit(u)? * 2.0 - 1.0) * 1e5
        };
        let plan = |gamma: f64, index_offset: f64, interpolation: Interpolation, decodes| Plan {
            gamma,
            index_offset,
            interpolation: interpolation as i32,
            keys_per_e_fold: 1.0,
            library,
            decodes,
            refusal: None,
        };
        let choice = *u.choose(choices)?;
        // Go's and Java's `...WithGamma` / `(gamma, indexOffset)` constructors: any offset.
        let offset = if choice == 1 || choice == 3 {
            offset
        } else {
            0.0
        };
        let mut p = match choice {
            0 | 1 => {
                let gamma = if python { python_gamma } else { exact };
                let m = LogMapping::from_gamma_offset(gamma, offset).map_err(bad)?;
                let mut p = plan(gamma, offset, Interpolation::None, Decodes::Log(m));
                p.keys_per_e_fold = 1.0 / libm::log(gamma);
                p
            }
            2 | 3 => {
                let (gamma, go_gamma) = if python {
                    // Python's cubic multiplier is 1 / (C ln(gamma)): its gamma is
                    // e^(7 / (10 multiplier)) where Go's is 2^(1 / multiplier).
                    (python_gamma, libm::exp2(libm::log(python_gamma) / 0.7))
                } else {
                    let gamma = libm::pow(exact, 10.0 * LN_2 / 7.0);
                    (gamma, gamma)
                };
                let m = CubicMapping::from_gamma_offset(go_gamma, offset).map_err(bad)?;
                let mut p = plan(gamma, offset, Interpolation::Cubic, Decodes::Cubic(m));
                p.keys_per_e_fold = 1.0 / libm::log(go_gamma);
                p
            }
            4 => {
                // Go and Java: gamma = exact^ln2 and indexOffset = 1 / log2(gamma);
                // Python: its gamma, offset 0.
                let (gamma, go_gamma, offset) = if python {
                    (python_gamma, libm::exp2(libm::log(python_gamma)), 0.0)
                } else {
                    let gamma = libm::pow(exact, LN_2);
                    (gamma, gamma, 1.0 / libm::log2(gamma))
                };
                let decodes = if power_of_two {
                    Decodes::Int(IntMapping::with_mantissa_bits(k).map_err(bad)?)
                } else {
                    Decodes::Refused(Refusal::LinearGamma)
                };
                let mut p = plan(gamma, offset, Interpolation::Linear, decodes);
                p.keys_per_e_fold = 1.0 / libm::log(go_gamma);
                p
            }
            5 | 6 => {
                // Java's quadratic (factor 3 / (4 ln 2)) and quartic (1 / (36/25 ln 2)).
                let (factor, code) = if choice == 5 {
                    (3.0 / (4.0 * LN_2), Interpolation::Quadratic as i32)
                } else {
                    (25.0 / (36.0 * LN_2), 4)
                };
                let gamma = libm::pow(exact, 1.0 / factor);
                let mut p = plan(
                    gamma,
                    0.0,
                    Interpolation::None,
                    Decodes::Refused(Refusal::Interpolation(code)),
                );
                p.interpolation = code;
                p.keys_per_e_fold = 1.0 / libm::log(gamma);
                p
            }
            _ => {
                // Java's bitwise LINEAR: 2^k bins per power of two, no offset written.
                let gamma = libm::exp2(libm::ldexp(1.0, (k as i32).wrapping_neg()));
                let m = IntMapping::with_mantissa_bits(k).map_err(bad)?;
                let mut p = plan(gamma, 0.0, Interpolation::Linear, Decodes::Int(m));
                p.keys_per_e_fold = 1.0 / libm::log(gamma);
                p
            }
        };
        // Content a decoder refuses, on a message whose mapping it takes.
        if !matches!(p.decodes, Decodes::Refused(_)) && u.ratio(1u8, 8)? {
            p.refusal = Some(if u.ratio(1u8, 2)? {
                Refusal::FractionalCount
            } else {
                Refusal::NegativeValues
            });
        }
        Ok(p)
    }
}

/// A float in `[0, 1)` from 32 arbitrary bits.
fn unit(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(f64::from(u32::arbitrary(u)?) / 4_294_967_296.0)
}

/// A relative accuracy: a common one, or any from 1e-6 to 0.5 (log-uniform).
fn accuracy(u: &mut Unstructured<'_>) -> Result<f64> {
    if u.ratio(1u8, 2)? {
        return u.choose(&[0.01, 0.02, 0.005, 0.05, 0.001]).copied();
    }
    let (lo, hi) = (libm::log(1e-6), libm::log(0.5));
    Ok(libm::exp(lo + (hi - lo) * unit(u)?))
}

/// A count as the libraries hold them (doubles): whole, or fractional (a weight).
fn arbitrary_count(u: &mut Unstructured<'_>, fractional: bool) -> Result<f64> {
    if fractional {
        return Ok(f64::from(u.int_in_range(0u16..=1000)?) + 0.5);
    }
    Ok(match u.int_in_range(0u8..=31)? {
        0..=23 => f64::from(u.int_in_range(1u16..=1000)?),
        24..=26 => f64::from(u32::arbitrary(u)?.max(1)),
        27 => 4_294_967_295.0, // u32::MAX: a full bin
        28 => 4_294_967_296.0,
        29 => 9_007_199_254_740_992.0, // 2^53
        30 => 1e20,
        _ => 1e300,
    })
}

/// What the positive store held.
#[derive(Default)]
struct Stats {
    count: f64,
    keys: Option<(i32, i32)>,
}

impl Stats {
    fn add(&mut self, key: i32, count: f64) {
        if count != 0.0 {
            self.count += count;
            self.keys = Some(match self.keys {
                None => (key, key),
                Some((lo, hi)) => (lo.min(key), hi.max(key)),
            });
        }
    }
}

/// Writes one store's fields: a dense run (or, for Go and Java, sometimes sparse
/// entries) of up to `room` bins around the key of an arbitrary value, at least one if
/// `room` allows. The first count is fractional when `fractional`; returns whether it
/// was written.
fn write_store(
    w: &mut Writer<'_>,
    u: &mut Unstructured<'_>,
    plan: &Plan,
    room: u32,
    fractional: bool,
    mut stats: Option<&mut Stats>,
) -> Result<bool> {
    // A value from 1e-9 to 1e12, and its key (near enough: any key a value has).
    let ln_value = libm::log(1e-9) + (libm::log(1e12) - libm::log(1e-9)) * unit(u)?;
    let center = ln_value * plan.keys_per_e_fold + plan.index_offset;
    // Keys stay far inside the sint32 range.
    let first = libm::floor(center).clamp(-1e9, 1e9) as i32;
    let python = plan.library == Library::Python;
    let mut run = u.int_in_range(1..=MAX_RUN)?.min(room);
    if python {
        run = run.min(room.wrapping_sub(room % PYTHON_CHUNK)); // its padding must fit too
    }
    let sparse = !python && u.ratio(1u8, 3)?;
    if sparse {
        // `room` counts dense bins: sparse entries are bigger (the buffer was overrun, and
        // the message refused, for a run of many non-zero counts).
        run = run.min(room.saturating_mul(8) / SPARSE_ENTRY);
    }
    if run == 0 || u.ratio(1u8, 16)? {
        return Ok(false); // an empty store: an empty message
    }
    // A count for each bin of the run: the first and last non-zero, zeros inside.
    let count_at = |u: &mut Unstructured<'_>, i: u32| -> Result<f64> {
        let edge = i == 0 || i.wrapping_add(1) == run; // i < run <= 4096
        if i == 0 && fractional {
            arbitrary_count(u, true)
        } else if !edge && u.ratio(1u8, 3)? {
            Ok(0.0)
        } else {
            arbitrary_count(u, false)
        }
    };
    // Keys `first + i` for i in 0..run; `run` and `first` are bounded, no overflow.
    let key_of = |i: u32| first.wrapping_add(i as i32);
    if sparse {
        // Entries in some order (Go's map order is random): ascending, descending, or
        // by a stride coprime to the run, which visits each key once.
        let stride = match u.int_in_range(0u8..=2)? {
            0 => 1,
            1 => run.wrapping_sub(1), // run >= 1
            _ => (run / 2..run).find(|s| gcd(*s, run) == 1).unwrap_or(1),
        };
        let stride = stride.max(1);
        let mut i = 0u32;
        for _ in 0..run {
            let count = count_at(u, i)?;
            if count != 0.0 {
                let entry = w.begin(BIN_COUNTS);
                w.sint32_field(KEY, key_of(i));
                w.double_field(VALUE, count);
                w.end(entry);
                if let Some(stats) = stats.as_deref_mut() {
                    stats.add(key_of(i), count);
                }
            }
            // (i + stride) mod run without overflow: both are below run <= 4096.
            i = i.wrapping_add(stride).checked_rem(run).unwrap_or(0);
        }
        return Ok(fractional);
    }
    // Python's store: a multiple of 128 bins centred on the used ones.
    let (padded, lead) = if python {
        // At most 4096. Python: offset = middle_key - length // 2, middle_key = min +
        // (max-min+1) // 2.
        let padded = run.div_ceil(PYTHON_CHUNK).wrapping_mul(PYTHON_CHUNK);
        let middle = run / 2;
        (padded, (padded / 2).saturating_sub(middle))
    } else {
        (run, 0)
    };
    let packed = w.begin(CONTIGUOUS_COUNTS);
    for j in 0..padded {
        let count = match j.checked_sub(lead) {
            Some(i) if i < run => {
                let count = count_at(u, i)?;
                if let Some(stats) = stats.as_deref_mut() {
                    stats.add(key_of(i), count);
                }
                count
            }
            _ => 0.0,
        };
        w.double(count);
    }
    w.end(packed);
    let offset = first.wrapping_sub(lead as i32);
    if offset != 0 || plan.library == Library::JavaSerialize {
        w.sint32_field(CONTIGUOUS_OFFSET, offset);
    }
    Ok(fractional)
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a.checked_rem(b).unwrap_or(0));
    }
    a
}

/// A double field as the writer libraries write one: proto3 leaves zero out, and so does
/// Java's own serializer (`writeDouble` skips 0).
fn double_unless_zero(w: &mut Writer<'_>, field: u32, v: f64) {
    if v != 0.0 {
        w.double_field(field, v);
    }
}

/// An enum or unsigned field, left out when zero (proto3, and Java's
/// `writeUnsignedInt32`).
fn varint_unless_zero(w: &mut Writer<'_>, field: u32, v: u64) {
    if v != 0 {
        w.varint_field(field, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{self, DecodeError};
    use crate::sketch::{BinLayout, DDSketch, IndexMapping};
    use proptest::prelude::{any, proptest, ProptestConfig};
    use std::vec;

    /// Bins enough for any generated run (4096 keys) with room either side.
    const BINS: usize = 8192;

    /// Decodes `wire` into a sketch of `mapping` whose range holds every key, and checks
    /// it bin for bin against what the generator says it wrote.
    fn check_exact<M: IndexMapping>(wire: &[u8], message: &DDSketchMessage, mapping: M) {
        let wire_offset = proto::read_mapping(wire).unwrap().index_offset();
        // The decoder's renumbering (docs/proto.md): the offsets' whole difference, and
        // one more for Python's `ceil` keys.
        let python = i64::from(message.convention == IndexConvention::Python);
        let shift = (wire_offset - mapping.index_offset()).round() as i64 + python;
        let (lo, hi) = message.keys.map_or((0, 0), |(lo, hi)| (lo, hi));
        let min_index = (i64::from(lo) - shift - 1) as i32;
        let layout = BinLayout::<M, BINS>::with_min_index(mapping, min_index);
        let mut s = DDSketch::with_layout(layout);
        let report = proto::decode_into(wire, message.convention, &mut s).unwrap();
        assert_eq!((report.below_range, report.above_range), (0, 0));
        let total = report.added.saturating_add(report.saturated);
        if message.count < 9e15 {
            assert_eq!(total as f64, message.count);
        } else {
            assert!(total >= 1 << 53 || report.saturated > 0);
        }
        if let Some((lo, hi)) = message.keys {
            let first = s.bins().next().unwrap().index;
            let last = s.bins().last().unwrap().index;
            assert_eq!(i64::from(first), i64::from(lo) - shift);
            assert_eq!(i64::from(last), i64::from(hi) - shift);
        } else {
            assert_eq!(s.bins().count(), 0);
        }
        assert_eq!(
            f64::from(s.zero_count()),
            message.zero_count.min(f64::from(u32::MAX))
        );
        // And back through tailguard's own encoder: the same bins.
        let mut buf = vec![0u8; proto::encoded_len(&s, message.convention)];
        proto::encode(&s, message.convention, &mut buf).unwrap();
        let mut again = DDSketch::with_layout(layout);
        proto::decode_into(&buf, message.convention, &mut again).unwrap();
        assert!(again.bins().eq(s.bins()));
        let _ = hi;
    }

    /// A refused message is refused by every sketch, which it leaves unchanged.
    fn check_refused(wire: &[u8], message: &DDSketchMessage, why: Refusal) {
        let mut log = DDSketch::<LogMapping, 64>::with_relative_accuracy(0.01, 1.0).unwrap();
        let mut cubic = DDSketch::<CubicMapping, 64>::with_relative_accuracy(0.01, 1.0).unwrap();
        let mut int = DDSketch::<IntMapping, 64>::with_relative_accuracy(0.01, 1.0).unwrap();
        let errors = [
            proto::decode_into(wire, message.convention, &mut log).unwrap_err(),
            proto::decode_into(wire, message.convention, &mut cubic).unwrap_err(),
            proto::decode_into(wire, message.convention, &mut int).unwrap_err(),
        ];
        assert!(log.is_empty() && cubic.is_empty() && int.is_empty());
        match why {
            Refusal::FractionalCount => {
                assert!(errors
                    .iter()
                    .all(|e| matches!(e, DecodeError::InvalidCount { .. })));
            }
            Refusal::Interpolation(code) => {
                assert!(errors.iter().all(
                    |e| matches!(e, DecodeError::Interpolation { found, .. } if *found == code)
                ));
            }
            Refusal::LinearGamma => {
                assert!(matches!(errors[2], DecodeError::Gamma { .. }));
                let m = proto::read_mapping(wire).unwrap();
                assert_eq!(m.interpolation(), Some(Interpolation::Linear));
            }
            // Refused whatever the mapping; with its own, for the negative values.
            Refusal::NegativeValues => {}
        }
    }

    fn check(bytes: &[u8]) {
        let mut buf = vec![0u8; 40_000];
        let message = ddsketch_message(&mut Unstructured::new(bytes), &mut buf).unwrap();
        let wire = &buf[..message.len];
        match message.decodes {
            Decodes::Log(m) => check_exact(wire, &message, m),
            Decodes::Cubic(m) => check_exact(wire, &message, m),
            Decodes::Int(m) => check_exact(wire, &message, m),
            Decodes::Refused(why) => check_refused(wire, &message, why),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn generated_messages_decode_as_they_say(bytes in proptest::collection::vec(any::<u8>(), 0..6000)) {
            check(&bytes);
        }
    }

    #[test]
    fn every_library_mapping_and_refusal_is_generated() {
        let mut seen = std::collections::HashSet::new();
        for seed in 0..3000u64 {
            let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let data: vec::Vec<u8> = (0..600)
                .map(|_| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    (x >> 56) as u8
                })
                .collect();
            let mut buf = [0u8; 4096];
            let m = ddsketch_message(&mut Unstructured::new(&data), &mut buf).unwrap();
            let kind = match m.decodes {
                Decodes::Log(_) => "log",
                Decodes::Cubic(_) => "cubic",
                Decodes::Int(_) => "int",
                Decodes::Refused(Refusal::FractionalCount) => "fractional",
                Decodes::Refused(Refusal::NegativeValues) => "negative",
                Decodes::Refused(Refusal::LinearGamma) => "linear gamma",
                Decodes::Refused(Refusal::Interpolation(2)) => "quadratic",
                Decodes::Refused(Refusal::Interpolation(_)) => "quartic",
            };
            seen.insert(std::format!("{:?} {kind}", m.library));
            seen.insert(kind.into());
            if m.count >= 4_294_967_295.0 {
                seen.insert("full bin".into());
            }
        }
        for want in [
            "Go log",
            "Go cubic",
            "Go int",
            "Go linear gamma",
            "Java int",
            "Java quadratic",
            "JavaSerialize quartic",
            "JavaSerialize log",
            "Python log",
            "Python cubic",
            "Python int",
            "Python linear gamma",
            "fractional",
            "negative",
            "full bin",
        ] {
            assert!(seen.contains(want), "{want} never generated: {seen:?}");
        }
    }

    #[test]
    fn every_buffer_of_64_bytes_or_more_holds_a_message() {
        // As documented: only a buffer under 64 bytes is refused. Sparse stores of many
        // non-zero counts used to overrun the buffer (IncorrectFormat for a fifth of these
        // inputs from 300 bytes to 4 KiB; the fuzz target's 40 KB buffer for inputs of
        // some 30 KB).
        for (len, input) in [(MIN_BUFFER, 600), (300, 600), (1024, 2000), (4096, 2000)] {
            let mut buf = vec![0u8; len];
            for seed in 0..300u64 {
                let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                let data: vec::Vec<u8> = (0..input)
                    .map(|_| {
                        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        (x >> 56) as u8
                    })
                    .collect();
                let m = ddsketch_message(&mut Unstructured::new(&data), &mut buf)
                    .unwrap_or_else(|e| panic!("{len}-byte buffer, seed {seed}: {e}"));
                assert!(m.len <= len);
            }
        }
    }

    #[test]
    fn a_small_buffer_is_refused_and_runs_are_cut_to_fit() {
        let data = [0xa5u8; 4096];
        let mut tiny = [0u8; MIN_BUFFER - 1];
        assert!(ddsketch_message(&mut Unstructured::new(&data), &mut tiny).is_err());
        for len in [MIN_BUFFER, 100, 300, 1000] {
            let mut buf = vec![0u8; len];
            let m = ddsketch_message(&mut Unstructured::new(&data), &mut buf).unwrap();
            assert!(m.len <= len);
            proto::read_mapping(&buf[..m.len]).ok();
        }
    }
}
