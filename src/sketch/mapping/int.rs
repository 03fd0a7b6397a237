//! [`IntMapping`]: DataDog's `LINEAR` interpolation with integer operations only, and
//! DataDog's keys for it replayed with integers.
//!
//! # DataDog's keys
//!
//! DataDog's libraries compute `key = approx_log(v) * multiplier + indexOffset` in `f64`,
//! then floor it their way (`(int) x` for `x >= 0`, `(int) x - 1` below, so a negative
//! whole number goes one lower). For `gamma = 2^(2^-k)` the multiplier should be `2^k`, but
//! both derive it from gamma in floating point (Go: `1 / math.Log2(gamma)`; Java:
//! `Math.log(2) / Math.log1p(gamma - 1)`) and land a few units in the last place off, each
//! its own way. So a value exactly on a bin edge (every integer below `2^(k+1)`, every power
//! of two, many whole milliseconds), or within a hair of one, can land one bin lower or
//! higher than the exact bin.
//!
//! [`near_edge`] says whether a value is close enough to an edge for that to happen (a
//! bound on both libraries' error: everything else is in its exact bin in both), and
//! [`key`] replays both libraries' arithmetic exactly (two roundings to nearest, ties to
//! even, with `indexOffset = 2^k`, which is what tailguard writes) on integers, so the
//! integer record path stays free of floats. tailguard takes the bin both libraries agree
//! on; where they disagree with each other it keeps the exact bin.

use super::bits::{exponent, normal_power_of_two, significand, MANTISSA_BITS};
use super::index_mapping::{accuracy_of_width, check_accuracy, IndexMapping, Interpolation};
use crate::sketch::error::ConfigError;

/// Defines `$name(v: $t, bits: u32) -> $t`: `v` rounded to a multiple of `2^bits` (`1 <=
/// bits < width`), to nearest, ties to even, as floating point rounds. The caller keeps
/// `v + 2^bits` in range. Two widths: 128 bits where products need them, 64 where a 32-bit
/// core's record path must stay short.
macro_rules! round_low_bits {
    ($name:ident, $t:ty) => {
        fn $name(v: $t, bits: u32) -> $t {
            let unit: $t = 1 << bits;
            let rest = v & unit.wrapping_sub(1);
            let down = v ^ rest;
            let half = unit >> 1;
            if rest > half || (rest == half && down & unit != 0) {
                down.wrapping_add(unit)
            } else {
                down
            }
        }
    };
}
round_low_bits!(round_low_bits, u128);
round_low_bits!(round_low_bits_u64, u64);

/// A value below 2^32 and its count of leading zeros, for the 32-bit fast path; `None`
/// from 2^32 up, and for zero. On a 64-bit core one compare finds both (`value - 1` below
/// `2^32 - 1`).
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn narrow(value: u64) -> Option<(u32, u32)> {
    let v = core::num::NonZeroU32::new(u32::try_from(value).ok()?)?;
    // Of a value known non-zero: no fallback for zero (`bsr` leaves it undefined).
    Some((v.get(), v.leading_zeros()))
}

/// [`narrow`] on a 32-bit core, with one test, of the high word: zero passes (with 31
/// leading zeros, which keeps its shifts below 32), and the near-edge test declines it, as
/// its `inside` is 0, on an edge, which every `near` declines. (A test for zero here too
/// would become a 64-bit `value - 1` and a compare of both words.)
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
fn narrow(value: u64) -> Option<(u32, u32)> {
    let v = u32::try_from(value).ok()?;
    Some((v, (v | 1).leading_zeros()))
}

/// `v` with `lz` leading zeros (`v > 0`, or 0 with 31), cut for a mapping of `2^k` bins per power of two
/// (`k <= 20`): `2^k` plus the top `k` bits below the leading one, and the bits below
/// those, moved up to bit 31 (the position inside the bin, in units of 2^-32 of a bin).
///
/// On a 64-bit core: one 64-bit shift puts the leading one at bit 32 + k, so the high word
/// is the first and the low word the second (3 shifts fewer than the 32-bit way).
#[cfg(target_pointer_width = "64")]
#[inline(always)]
fn split_u32(v: u32, lz: u32, k: u32) -> (i32, u32) {
    split_u32_wide(v, lz, k)
}

/// [`split_u32`] on a 32-bit core: 32-bit shifts only (a 64-bit shift by a variable
/// amount is a sequence of them there, with tests of the amount).
#[cfg(not(target_pointer_width = "64"))]
#[inline(always)]
fn split_u32(v: u32, lz: u32, k: u32) -> (i32, u32) {
    split_u32_narrow(v, lz, k)
}

#[cfg_attr(not(any(test, target_pointer_width = "64")), allow(dead_code))]
#[inline(always)]
fn split_u32_wide(v: u32, lz: u32, k: u32) -> (i32, u32) {
    // lz + k + 1 <= 52: the leading one stays below bit 64.
    let w = u64::from(v) << lz.wrapping_add(k).wrapping_add(1);
    ((w >> 32u32) as i32, w as u32) // < 2^21, and the low word
}

#[cfg_attr(not(any(test, not(target_pointer_width = "64"))), allow(dead_code))]
#[inline(always)]
fn split_u32_narrow(v: u32, lz: u32, k: u32) -> (i32, u32) {
    let aligned = v << lz; // the leading one is bit 31
                           // k <= 20: both shift amounts are below 32.
    let lead_and_top = aligned >> 31u32.wrapping_sub(k);
    (lead_and_top as i32, aligned << k << 1u32)
}

/// The exact bin of `value` (`2^e <= value < 2^(e + 1)`, `32 <= e <= 63`) after the two
/// roundings Go and Java make (to an `f64`, then `e + significand` to 47 bits of fraction,
/// 46 from 2^63), for the `k` whose key is Go's ([`go_decides`]): then Go's
/// multiplication by `2^k` and addition of `2^k` are exact (the rounded value is a multiple
/// of 2^5, or 2^6, below 2^59), and the key is that bin. Rounding is monotone and every bin
/// edge survives both roundings, so the value reaches edge `E` exactly when
/// `approx_log * 2^52 >= E - 16.5` (`E - 32.5` from 2^63, where the second rounding's unit
/// is 2^6): a tie at `E - 16` rounds to `E`, which is even, and one at `E - 16.5` to
/// `E - 16`, even too. So the bin is the value's own once [`WIDE_MARGINS`] is added: a few
/// 64-bit operations instead of two roundings. (tests/int_mapping.rs compares these bins
/// with the libraries' float arithmetic, at the margins too.)
// `e & 31` indexes the 32 entries: cannot panic.
#[allow(clippy::indexing_slicing)]
#[inline]
fn wide_exact_bin_rounded(value: u64, e: u32, k: u32) -> i32 {
    let margin = WIDE_MARGINS[(e & 31) as usize]; // e - 32 = e & 31 for e in 32..=63
    match value.overflowing_add(u64::from(margin)) {
        // Past 2^64: the value rounds up to 2^64, the first bin of the octave of 64.
        (_, true) => 64i32 << k,
        // (value + margin) >> (e - k) is 2^k plus the bin inside the octave (2^(k + 1) when
        // it carries into the next octave): the index is (e - 1) * 2^k plus that.
        (sum, false) => {
            ((e as i32).wrapping_sub(1) << k).wrapping_add((sum >> e.wrapping_sub(k)) as i32)
        }
    }
}

/// The margin [`wide_exact_bin_rounded`] adds to a value of `2^e` to `2^(e + 1)`, by
/// `e - 32`, in the value's units (`2^(e - 52)` of `approx_log * 2^52`): `16.5 * 2^(e - 52)`
/// from 2^53 up (`32.5 * 2^11` at 2^63), and below, where the value is whole in those
/// units, `16 >> (52 - e)` (0 below 2^48, where nothing rounds).
const WIDE_MARGINS: [u32; 32] = wide_margins();

#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // compile time
const fn wide_margins() -> [u32; 32] {
    let mut out = [0u32; 32];
    let mut e = 32u32;
    while e <= 63 {
        out[(e - 32) as usize] = if e > 52 {
            let s = e - 52; // 1..=11
            let whole = if e == 63 { 32 } else { 16 };
            (whole << s) | (1 << (s - 1))
        } else {
            16 >> (52 - e)
        };
        e += 1;
    }
    out
}

/// Largest number of mantissa bits [`IntMapping`] uses (alpha = 4.8e-7).
const INT_MAX_BITS: u32 = 20;

/// An integer-only log-linear mapping for cores without a double-precision FPU (Cortex-M0,
/// RV32IMC, and the Cortex-M4F, whose FPU is single precision).
///
/// Each power of two is split into `2^k` equal-width bins, so a value's bin is
/// `(exponent << k) | (top k mantissa bits)`: one count-leading-zeros and two shifts from
/// a `u64`, with no float arithmetic. This is DataDog's `LINEAR` interpolation with
/// `gamma = 2^(2^-k)`, which [`proto`](crate::proto) writes in Go's default layout
/// (`indexOffset = 2^k`, keys `2^k` above tailguard's indices).
///
/// **Bin for bin with DataDog's Go and Java libraries.** Those libraries compute the key
/// in `f64` with a multiplier they derive from gamma in floating point, a few units in the
/// last place away from `2^k` (below it for k = 6, so every integer from 2 to 127, every
/// power of two from 2 up and many whole numbers beyond, all bin edges, land one bin lower
/// there; above it for k = 7, where edges below 1/2 land lower). A value on a bin edge, or
/// within a hair of one (less than `2^-24` of a bin for k <= 8, more for larger k), can
/// therefore land in the bin next to its exact one. tailguard replays both libraries'
/// arithmetic for exactly those values (integer operations only: the record path stays
/// free of floats) and gives the bin both give; where Go and Java disagree with each other
/// (a few dozen edges for most `k`, for example the edges from 1/2 to 1 at k = 5; every
/// edge at k = 9 and 11, where Go's multiplier is exact and Java's is not), it keeps the
/// exact bin. All other values are in their exact bin in all three. The
/// multipliers come from the libraries themselves (sketches-go on Go 1.19, amd64: Go on
/// arm64 fuses the multiply-add and can differ again; sketches-java 0.8.3), and
/// `tests/datadog_keys.rs` compares with keys the real libraries computed.
///
/// ```
/// use tailguard::sketch::{IndexMapping, IntMapping};
/// let m = IntMapping::K6;
/// // 7 = 2^2 * (1 + 48/64): exactly the lower edge of bin (2 << 6) + 48 = 176, which
/// // DataDog's Go and Java libraries (and so tailguard) put in bin 175.
/// assert_eq!(m.index_u64(7), 175);
/// assert_eq!(m.index_u64(8), m.index_u64(7) + 16); // 8 = 2^3: 192, one lower too
/// assert_eq!(m.index_u64(129), 448); // inside its bin: the exact one
/// ```
///
/// From 2^47 up, Go and Java's approximate log itself rounds away low mantissa bits
/// (exponent plus significand in one `f64`), which can move a value onto the next edge;
/// [`index`](IndexMapping::index) and [`index_u64`](IndexMapping::index_u64) do the same,
/// so both paths agree for every value.
///
/// Those hairs cost accuracy at the finest mappings: the multiplier's error moves an edge
/// by a share of a bin that grows as `4^k` (and with `|log2 v|`), and a value the keys put
/// across one is answered by a representative up to `(|log2 v| + 1) 2^(k - 51)` of it
/// beyond alpha (a quarter of that seen at every `k` from 10 to 20; 7e-8 over the floats
/// at `k = 20`). At `k` up to 12 that stays within the hair docs/guarantees.md gives for
/// values far from 1, but near 1 it reaches past alpha too (from `k = 10`).
///
/// Only discrete accuracies exist: `alpha = tanh(2^-(k+1))`, that is 1.56 %, 0.78 % and
/// 0.39 % for k = 5, 6, 7. A requested accuracy rounds down to the nearest of these, so
/// asking for 1 % gives 0.78 %.
///
/// ```
/// use tailguard::sketch::{IndexMapping, IntMapping};
/// let m = IntMapping::with_relative_accuracy(0.01).unwrap();
/// assert_eq!(m.mantissa_bits(), 6);
/// assert!(m.relative_accuracy() <= 0.01);
/// assert_eq!(m.index_u64(1_000), m.index(1_000.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct IntMapping {
    k: Bits,
    /// How near a bin edge a 32-bit value must be for DataDog's libraries to put it in
    /// another bin, and the largest `(inside + band) mod 2^32` of such a value: see
    /// `index_u64`. Derived from `k` (kept here so the record path reads no table).
    near: (u32, u32),
}

/// An [`IntMapping`]'s `k` (`0..=20`) as a type of 21 values: a load of it tells the
/// compiler its range, so that a shift by it needs no `& 31`, which a `u32` would cost
/// the record path on an Arm core (its shifts by a register do not mask the amount).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Bits {
    B0 = 0,
    B1 = 1,
    B2 = 2,
    B3 = 3,
    B4 = 4,
    B5 = 5,
    B6 = 6,
    B7 = 7,
    B8 = 8,
    B9 = 9,
    B10 = 10,
    B11 = 11,
    B12 = 12,
    B13 = 13,
    B14 = 14,
    B15 = 15,
    B16 = 16,
    B17 = 17,
    B18 = 18,
    B19 = 19,
    B20 = 20,
}

impl Bits {
    /// `k <= 20`.
    const fn of(k: u32) -> Bits {
        match k {
            0 => Bits::B0,
            1 => Bits::B1,
            2 => Bits::B2,
            3 => Bits::B3,
            4 => Bits::B4,
            5 => Bits::B5,
            6 => Bits::B6,
            7 => Bits::B7,
            8 => Bits::B8,
            9 => Bits::B9,
            10 => Bits::B10,
            11 => Bits::B11,
            12 => Bits::B12,
            13 => Bits::B13,
            14 => Bits::B14,
            15 => Bits::B15,
            16 => Bits::B16,
            17 => Bits::B17,
            18 => Bits::B18,
            19 => Bits::B19,
            _ => Bits::B20,
        }
    }
}

// As the number (as `IntMapping`'s derived formats printed it when `k` was a `u32`).
impl core::fmt::Debug for Bits {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        (*self as u32).fmt(f)
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for Bits {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::Format::format(&(*self as u32), f)
    }
}

impl IntMapping {
    /// 32 bins per power of two: alpha = 1.56 %.
    pub const K5: IntMapping = IntMapping::of_valid_bits(5);
    /// 64 bins per power of two: alpha = 0.78 %.
    pub const K6: IntMapping = IntMapping::of_valid_bits(6);
    /// 128 bins per power of two: alpha = 0.39 %.
    pub const K7: IntMapping = IntMapping::of_valid_bits(7);

    /// The mapping with `2^k` bins per power of two. Errors if `k > 20`.
    ///
    /// ```
    /// use tailguard::sketch::{ConfigError, IndexMapping, IntMapping};
    ///
    /// let m = IntMapping::with_mantissa_bits(6).unwrap();
    /// assert_eq!(m, IntMapping::K6); // 64 bins per power of two
    /// assert_eq!(m.index_u64(1 << 20) - m.index_u64(1 << 19), 64);
    /// assert_eq!(IntMapping::with_mantissa_bits(21), Err(ConfigError::InvalidAccuracy));
    /// ```
    pub const fn with_mantissa_bits(k: u32) -> Result<Self, ConfigError> {
        if k > INT_MAX_BITS {
            Err(ConfigError::InvalidAccuracy)
        } else {
            Ok(IntMapping::of_valid_bits(k))
        }
    }

    /// The mapping for `k <= 20`.
    // The table has 32 entries and `k & 31 < 32`: the index cannot be out of bounds.
    #[allow(clippy::indexing_slicing)]
    const fn of_valid_bits(k: u32) -> Self {
        // Where every 32-bit value lands in its exact bin, the record path's near-edge test
        // declines only the values exactly on an edge (`inside == 0`, zero among them, which
        // the slice path relies on), and `index_near_edge_u32` settles those without a
        // replay.
        let near = if exact_below_2_47(k) {
            (0, 0)
        } else {
            NEAR_U32[(k & 31) as usize]
        };
        IntMapping {
            k: Bits::of(k),
            near,
        }
    }

    /// `k`: the mapping has `2^k` bins per power of two.
    pub const fn mantissa_bits(&self) -> u32 {
        self.k()
    }

    /// `k`, which the compiler knows to be at most 20: shifts by it need no masking.
    #[inline(always)]
    const fn k(&self) -> u32 {
        self.k as u32
    }

    /// [`relative_accuracy`](IndexMapping::relative_accuracy), in `const` code: the bits
    /// of `tanh(2^-(k+1))` for each `k` (a test checks them against the `tanh`).
    // k <= 20 (checked at construction) indexes the 21 entries.
    #[allow(clippy::indexing_slicing)]
    pub(crate) const fn accuracy(&self) -> f64 {
        f64::from_bits(INT_ACCURACY_BITS[self.k() as usize])
    }

    /// The index of the value whose `approx_log` is `x / 2^52`: its exact bin, unless it
    /// is so close to an edge that DataDog's libraries may put it elsewhere (see the type's
    /// docs); then where both put it.
    #[inline]
    fn index_of(&self, x: i64) -> i32 {
        if near_edge(self.k(), x) {
            key(self.k(), x)
        } else {
            self.exact_index(x)
        }
    }

    /// The exact bin of the value whose `approx_log` is `x / 2^52`.
    #[inline]
    fn exact_index(&self, x: i64) -> i32 {
        (x >> MANTISSA_BITS.wrapping_sub(self.k())) as i32 // |x| < 1026 * 2^52: fits
    }

    /// [`index_of`](Self::index_of) of an integer below 2^47: its exact bin where that is
    /// DataDog's too ([`exact_below_2_47`]), with no test for an edge.
    #[inline]
    fn index_of_integer(&self, x: i64) -> i32 {
        if exact_below_2_47(self.k()) {
            self.exact_index(x)
        } else {
            self.index_of(x)
        }
    }

    /// [`index_u64`](IndexMapping::index_u64) of a 32-bit value near a bin edge (`v > 0`).
    #[cold]
    #[inline(never)]
    fn index_near_edge_u32(&self, v: u32) -> i32 {
        let lz = v.leading_zeros(); // v > 0: lz <= 31
        let e = 31i32.wrapping_sub(lz as i32);
        let aligned = v << lz; // the leading one is bit 31
                               // approx_log * 2^52: the exponent, then the 31 bits below the leading one.
        let x = (i64::from(e) << MANTISSA_BITS) | (i64::from(aligned & 0x7fff_ffff) << 21u32);
        self.index_of_integer(x)
    }

    /// [`index_u64`](IndexMapping::index_u64) from 2^32 up, still with integers only.
    ///
    /// Go and Java see the value as an `f64` (53 significant bits), then add its exponent
    /// to its significand, which keeps 47 bits of fraction (46 from 2^63): both round to
    /// nearest, ties to even, in that order. Below 2^47 neither rounding changes anything.
    #[inline(never)] // values of 4.3 s and more in ns: not the hot path
    fn index_wide(&self, value: u64) -> i32 {
        let e = 63u32.wrapping_sub(value.leading_zeros()); // the leading one's position: 32..=63
        if go_decides(self.k()) {
            return wide_exact_bin_rounded(value, e, self.k());
        }
        let fraction = value ^ (1u64 << e); // the e bits below it
        if e < 47 {
            // No rounding, and the 52 bits below the leading one are its `e` bits shifted up.
            let x = (u64::from(e) << MANTISSA_BITS) | fraction << MANTISSA_BITS.wrapping_sub(e);
            return self.index_of_integer(x as i64);
        }
        // approx_log * 2^52 with the value's fraction rounded to 52 bits (the f64): a
        // carry out of the fraction moves into the exponent, as it would in the value.
        let mut x = if e > MANTISSA_BITS {
            let drop = e.wrapping_sub(MANTISSA_BITS); // 1..=11
            (u64::from(e) << MANTISSA_BITS).wrapping_add(round_low_bits_u64(fraction, drop) >> drop)
        } else {
            (u64::from(e) << MANTISSA_BITS) | fraction << MANTISSA_BITS.wrapping_sub(e)
        };
        // e + significand lies in [e + 1, e + 2): 2^5 or 2^6 from e = 63, leaving 47 or 46
        // bits of fraction, to which the sum is rounded.
        let e = (x >> MANTISSA_BITS) as u32; // 47..=64
        let fraction_bits = if e >= 63 { 46 } else { 47 };
        if e > fraction_bits {
            x = round_low_bits_u64(x, MANTISSA_BITS.wrapping_sub(fraction_bits));
        }
        self.index_of(x as i64) // x < 65 * 2^52
    }

    /// The widest bin, at the start of each power of two, spans a factor of `1 + 2^-k`,
    /// whose natural log is below `2^-k`; so `tanh(2^-(k+1))` bounds the error (DataDog
    /// states the same bound for `LINEAR` with this gamma).
    fn accuracy_of_bits(k: u32) -> f64 {
        accuracy_of_width(1.0 / (1u32 << k) as f64)
    }
}

/// `IntMapping::accuracy_of_bits(k)` for `k` in `0..=20`, as bits.
const INT_ACCURACY_BITS: [u64; INT_MAX_BITS as usize + 1] = [
    0x3fdd_9353_d756_8af3,
    0x3fcf_597e_a69a_1c86,
    0x3fbf_d599_2bc4_b834,
    0x3faf_f559_97e0_30d7,
    0x3f9f_fd55_9992_b1de,
    0x3f8f_ff55_5999_7df9,
    0x3f7f_ffd5_5599_992b,
    0x3f6f_fff5_5559_9998,
    0x3f5f_fffd_5555_999a,
    0x3f4f_ffff_5555_599a,
    0x3f3f_ffff_d555_5599,
    0x3f2f_ffff_f555_555a,
    0x3f1f_ffff_fd55_5555,
    0x3f0f_ffff_ff55_5555,
    0x3eff_ffff_ffd5_5556,
    0x3eef_ffff_fff5_5555,
    0x3edf_ffff_fffd_5556,
    0x3ecf_ffff_ffff_5555,
    0x3ebf_ffff_ffff_d555,
    0x3eaf_ffff_ffff_f555,
    0x3e9f_ffff_ffff_fd55,
];

impl IndexMapping for IntMapping {
    const INTERPOLATION: Interpolation = Interpolation::Linear;
    const DEFAULT: Self = IntMapping::K6;

    fn with_relative_accuracy(alpha: f64) -> Result<Self, ConfigError> {
        check_accuracy(alpha)?;
        (0..=INT_MAX_BITS)
            .find(|&k| Self::accuracy_of_bits(k) <= alpha)
            .map(IntMapping::of_valid_bits)
            .ok_or(ConfigError::InvalidAccuracy)
    }

    #[inline]
    fn relative_accuracy(&self) -> f64 {
        // A table lookup: `tanh` is costly everywhere and soft-float on a microcontroller,
        // and quantile queries read the accuracy.
        self.accuracy()
    }

    fn gamma(&self) -> f64 {
        // k <= 20: always in the table (DataDog's own bits for 2^(2^-k)).
        GAMMA_BITS
            .get(self.k() as usize)
            .map_or(2.0, |&bits| f64::from_bits(bits))
    }

    fn index_offset(&self) -> f64 {
        0.0
    }

    #[inline]
    fn index(&self, value: f64) -> i32 {
        let bits = value.to_bits();
        // DataDog's approximate log2, computed as Go and Java compute it: exponent plus
        // significand, then minus one. The sum rounds away low mantissa bits when the
        // exponent is large (or very negative), which can move a value onto a bin edge.
        let approx_log = (exponent(bits) as f64 + significand(bits)) - 1.0;
        // Exact: approx_log is a double in [-1075, 1025), with at most 52 fraction bits.
        let x = (approx_log * (1u64 << MANTISSA_BITS) as f64) as i64;
        self.index_of(x)
    }

    #[inline]
    fn index_u64(&self, value: u64) -> i32 {
        if let Some(index) = self.index_u64_fast(value) {
            return index;
        }
        if value == 0 {
            return i32::MIN;
        }
        // The fast path declined a 32-bit value: it lies near a bin edge.
        match u32::try_from(value) {
            Ok(v) => self.index_near_edge_u32(v),
            Err(_) => self.index_wide(value),
        }
    }

    #[inline]
    fn index_u64_fast(&self, value: u64) -> Option<i32> {
        // Latencies in ns below 4.3 s take the 32-bit path: half the instructions on a
        // 32-bit core, where every u64 shift is two or three.
        let (v, lz) = narrow(value)?; // lz <= 31
        let (lead_and_top, inside) = split_u32(v, lz, self.k());
        // Only near its start or its end can DataDog's libraries put the value elsewhere.
        let (band, last) = self.near;
        if inside.wrapping_add(band) <= last {
            return None;
        }
        // (e - 1) * 2^k + 2^k + top is (e << k) | top, e = 31 - lz (for v = 1, e - 1 = -1
        // and the sum is 0).
        let e_minus_one = 30i32.wrapping_sub(lz as i32);
        Some((e_minus_one << self.k()).wrapping_add(lead_and_top))
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[inline]
    fn positions_below_2_32(&self, values: &[u64], min_index: i32, out: &mut [u32]) {
        // What `index_u64_fast` computes, in a form without a count of leading zeros (no
        // vector instruction for it below AVX-512): a 32-bit value becomes an f64
        // exactly (2^52 + v - 2^52: no rounding), whose exponent and mantissa fields are
        // the bin and the position inside it. Only where an FPU is certain (not on the
        // Cortex-M0: there this is the integer default). `k <= 20`.
        const TWO_52: u64 = 0x4330_0000_0000_0000; // 2^52.to_bits()
        let k = self.k() & 31;
        let (band, last) = self.near;
        // (1023 + e) << k | top, less 1023 << k, is the index (e << k) | top; less
        // `min_index` too, the position (modulo 2^32, as `BinLayout` counts).
        let bias = (1023u64 << k).wrapping_add(min_index as i64 as u64);
        for (o, &value) in out.iter_mut().zip(values) {
            // Below 2^32 (the caller's check): no test of the high word here.
            let bits = (f64::from_bits(TWO_52 | value) - f64::from_bits(TWO_52)).to_bits();
            let position = (bits >> 52u32.wrapping_sub(k)).wrapping_sub(bias) as u32;
            // The mantissa bits below the top k, the leading 32 of them (a value below
            // 2^32 has at most 31 below its leading one).
            let inside = (bits << k.wrapping_add(12) >> 32u32) as u32;
            // A select, no branch, so that the loop vectorises. Zero needs no test of its
            // own: it sits on an edge (`inside` is 0, which every `near` declines).
            *o = if inside.wrapping_add(band) > last {
                position
            } else {
                u32::MAX
            };
        }
    }

    /// The next bin's lower edge `(2^k + top) * 2^(e - k)`, rounded up to a whole number,
    /// plus `edge / 2^32`: DataDog's arithmetic, which this mapping replays, puts values
    /// within a hair above an edge (far less than that) in the bin below it.
    #[inline]
    fn upper_bound_u64(&self, index: i32) -> u64 {
        let Some(next) = index.checked_add(1) else {
            return u64::MAX;
        };
        let k = self.k() & 31; // k <= 20
        let e = next >> k; // arithmetic shift: floor division by 2^k
        let top = (next & (1i32 << k).wrapping_sub(1)) as u64; // below 2^k

        // Below 2^21; the edge is significand * 2^(e - k).
        let significand = (1u64 << k) | top;
        let shift = e.wrapping_sub(k as i32);
        let edge = if shift >= 0 {
            // Saturates from 2^64 up (significand has k + 1 bits).
            if shift > 63i32.wrapping_sub(k as i32) {
                return u64::MAX;
            }
            significand << shift as u32
        } else if shift > -64 {
            // Rounded up: the edge is not a whole number below 2^k.
            let right = shift.unsigned_abs();
            let below = significand & (1u64 << right).wrapping_sub(1);
            (significand >> right).wrapping_add(u64::from(below != 0))
        } else {
            1 // a positive edge below 2^-43
        };
        edge.saturating_add(edge >> 32u32)
    }

    #[inline]
    fn lower_bound(&self, index: i32) -> f64 {
        let e = index >> self.k(); // arithmetic shift: floor division by 2^k
        let top = index & (1i32 << self.k()).wrapping_sub(1);
        // top < 2^k <= 2^20: `top * 2^-k` is exact, and so is `1 + ` it.
        let one_plus_top =
            1.0 + top as f64 * normal_power_of_two(0i32.wrapping_sub(self.k() as i32));
        if (-1022..=1023).contains(&e) {
            // A normal power of two, and a normal product (below 2^1024): exact, what
            // `ldexp` gives, without its call (a quantile waits on this value).
            one_plus_top * normal_power_of_two(e)
        } else {
            libm::ldexp(one_plus_top, e) // subnormal, zero or infinite
        }
    }
}

/// `2^(2^-k)` for `k` in `0..=20`, as DataDog writes it: the bit patterns Go's `math.Pow`
/// and Java's `Math.pow` return (identical for every `k`). A table, so the mapping never
/// links an `exp2`.
pub(super) const GAMMA_BITS: [u64; 21] = [
    0x4000000000000000,
    0x3ff6a09e667f3bcd,
    0x3ff306fe0a31b715,
    0x3ff172b83c7d517b,
    0x3ff0b5586cf9890f,
    0x3ff059b0d3158574,
    0x3ff02c9a3e778061,
    0x3ff0163da9fb3335,
    0x3ff00b1afa5abcbf,
    0x3ff0058c86da1c0a,
    0x3ff002c605e2e8cf,
    0x3ff00162f3904052,
    0x3ff000b175effdc7,
    0x3ff00058ba01fba0,
    0x3ff0002c5cc37da9,
    0x3ff000162e525ee0,
    0x3ff0000b17255776,
    0x3ff000058b91b5bd,
    0x3ff00002c5c89d5f,
    0x3ff0000162e43f50,
    0x3ff00000b1721bd0,
];

/// Go's multiplier for `GAMMA_BITS[k]` is `2^k + GO_ERROR[k] * 2^(k - 53)`: what
/// `1 / math.Log2(gamma)` returns in sketches-go (Go 1.19, amd64).
const GO_ERROR: [i64; 21] = [
    0, -2, 4, -8, 16, 0, -64, 128, -256, 0, -1024, 0, 0, -8192, 16384, 0, -131072, -262144,
    -262144, -524288, -1048576,
];

/// Java's multiplier for `GAMMA_BITS[k]` is `2^k + JAVA_ERROR[k] * 2^(k - 53)`: what
/// `Math.log(2) / Math.log1p(gamma - 1)` returns in sketches-java 0.8.3 (OpenJDK 17).
const JAVA_ERROR: [i64; 21] = [
    0, -1, 2, -3, 18, 20, -13, 158, -121, -127, -681, -137, 4968, -9709, 13500, 31192, -47088,
    -149377, -169033, -738280, -642744,
];

/// How close a value must be to a bin edge for Go or Java to put it in another bin, by
/// `k`: in units of `2^-52` of `approx_log` (a bin is `2^(52 - k)` units). Both libraries'
/// error is at most `|n| |error| 2^-53 + (|n| + 2^k) 2^-52` bins with `|n| < 2^(k + 11)`,
/// which is below `2^10 (|error| + 3)` units whatever `k`; the band is twice that.
const BAND: [i64; 21] = bands();

/// [`BAND`] in units of `2^-32` of a bin (what the 32-bit record path has), rounded up,
/// and the largest `(inside + band) mod 2^32` of a value near an edge (`2 band - 1`, or
/// every value when that passes `u32::MAX`), by `k`. 32 entries, so that `k & 31` needs no
/// bounds check; those past 20 are never used.
const NEAR_U32: [(u32, u32); 32] = near_u32();

// Indexing in these two is evaluated at compile time: out of bounds would not compile.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const fn bands() -> [i64; 21] {
    let mut out = [0; 21];
    let mut k = 0;
    while k < 21 {
        let (go, java) = (GO_ERROR[k].abs(), JAVA_ERROR[k].abs());
        let worst = if go > java { go } else { java };
        out[k] = (worst + 3) * 2048;
        k += 1;
    }
    out
}

#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]
const fn near_u32() -> [(u32, u32); 32] {
    let mut out = [(0, 0); 32];
    let mut k = 0;
    while k < 21 {
        let per_unit = 1i64 << (20 - k); // 2^(52 - k) units per bin / 2^32
        let band = (BAND[k] + per_unit - 1) / per_unit; // < 2^32
        let last = 2 * band - 1;
        out[k] = (
            band as u32,
            if last > u32::MAX as i64 {
                u32::MAX
            } else {
                last as u32
            },
        );
        k += 1;
    }
    out
}

/// Whether DataDog's keys are the exact bins for every integer value below 2^47 at this
/// `k` (`k <= 20`), so that such values need no replay: when Go's multiplier is exactly
/// `2^k` (`GO_ERROR[k] == 0`: k = 0, 5, 9, 11, 12, 15). For an integer below 2^47 (about 39
/// hours in nanoseconds) `x` has at most `e + 6 <= 52` significant bits (`e` the leading
/// one's position) and trailing zeros from bit `52 - e`, so Go's `x * 2^k` and its sum with
/// `2^k` are both exact in an `f64`: Go's key is the exact bin. Where Java's differs, the
/// libraries disagree and [`key`] takes the exact bin too; where it agrees, it is the
/// exact bin. (1,726 of the 2^32 32-bit values do differ at k = 6, where Go's multiplier is
/// 64 units in the last place low.) Tested on every bin edge below 2^32 and around every
/// edge up to 2^47.
const fn exact_below_2_47(k: u32) -> bool {
    // A bit per k: the record path tests one bit rather than reading two tables.
    (EXACT_BELOW_2_47 >> (k & 31)) & 1 != 0
}

/// [`exact_below_2_47`] for every `k`, as bits.
const EXACT_BELOW_2_47: u32 = k_mask(false);

/// The `k <= 20` whose Go multiplier is exact (and, with `java_too`, whose Java multiplier
/// is not below it), as bits.
#[allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // compile time, k <= 20
const fn k_mask(java_too: bool) -> u32 {
    let mut mask = 0;
    let mut k = 0;
    while k <= 20 {
        if GO_ERROR[k] == 0 && (!java_too || JAVA_ERROR[k] >= 0) {
            mask |= 1 << k;
        }
        k += 1;
    }
    mask
}

/// Whether `x` (an `approx_log`, times `2^52`) is within [`BAND`] of a bin edge.
#[inline]
fn near_edge(k: u32, x: i64) -> bool {
    let bin = 1i64 << 52u32.wrapping_sub(k); // k <= 20
    let band = BAND.get(k as usize).copied().unwrap_or(0);
    // x mod bin, moved up by the band: the bin's start and its end map below two bands.
    x.wrapping_add(band) & bin.wrapping_sub(1) < band.saturating_mul(2)
}

/// The index (key minus `2^k`) DataDog's Go and Java libraries both give the value whose
/// `approx_log` is `x / 2^52`, or the exact index `floor(x / 2^(52 - k))` where they
/// disagree. `k <= 20`; `|x| < 2^63`.
#[inline(never)] // the cold path of the record functions: only values near an edge come here
fn key(k: u32, x: i64) -> i32 {
    let exact = (x >> 52u32.wrapping_sub(k)) as i32; // |x| <= 1025 * 2^52: fits
    if let Ok(x) = u64::try_from(x) {
        if go_decides(k) {
            return replay_exact_multiplier(k, x);
        }
    }
    match (GO_ERROR.get(k as usize), JAVA_ERROR.get(k as usize)) {
        (Some(&go), Some(&java)) => {
            let go = replay(k, x, go);
            if go == replay(k, x, java) {
                go
            } else {
                exact
            }
        }
        _ => exact,
    }
}

/// Whether, for `x >= 0` (values of 1 and more), Go's key is the answer at this `k`: when
/// Go's multiplier is exactly `2^k` and Java's is not below it (k = 0, 5, 12, 15). Go's key
/// is then the exact bin or the one above (its roundings to nearest can only carry a value
/// up onto an edge), and Java's, from a product no smaller, rounded and floored the same
/// monotone way, is at least Go's and at most one above the exact bin: either both give
/// the bin above, or Go gives the exact bin, which [`key`] takes either way.
const fn go_decides(k: u32) -> bool {
    (GO_DECIDES >> (k & 31)) & 1 != 0
}

/// [`go_decides`] for every `k`, as bits.
const GO_DECIDES: u32 = k_mask(true);

/// [`replay`] with `error = 0` and `x >= 0`, in 64 bits (cheap on a 32-bit core, where the
/// 128-bit replay's every operation is four words): `x * 2^k` is `x` rounded to a double
/// (times a power of two), then `2^k` is added (`2^52` in units of `x`) and the sum rounded
/// again; the key is its whole part. `x < 1026 * 2^52`: nothing overflows.
#[inline]
fn replay_exact_multiplier(k: u32, x: u64) -> i32 {
    let sum = to_double_u64(to_double_u64(x).wrapping_add(1 << 52));
    // The whole part minus 2^k: |key - 2^k| <= 1025 * 2^20 + 1.
    ((sum >> 52u32.wrapping_sub(k)) as i64).wrapping_sub(1i64 << k) as i32
}

/// `v` rounded to 53 significant bits, to nearest, ties to even (`v < 2^63`).
#[inline]
fn to_double_u64(v: u64) -> u64 {
    let bits = 64u32.wrapping_sub(v.leading_zeros());
    if bits <= 53 {
        return v;
    }
    round_low_bits_u64(v, bits.wrapping_sub(53))
}

/// One library's index of `x / 2^52`, whose multiplier is `2^k + error * 2^(k - 53)`:
/// `x * multiplier` rounded to a double, plus `2^k` rounded to a double, floored the
/// DataDog way, minus `2^k`. All in units of `2^(k - 105)`, where every quantity is an
/// integer.
fn replay(k: u32, x: i64, error: i64) -> i32 {
    // multiplier = (2^53 + error) * 2^(k - 53); |error| < 2^21.
    let multiplier = (1i128 << 53).wrapping_add(i128::from(error));
    // |x| < 2^63 and multiplier < 2^54: the product fits in 117 bits.
    let product = to_double(i128::from(x).wrapping_mul(multiplier));
    let shift = 105u32.wrapping_sub(k); // units of 2^(k - 105) per whole number
    let sum = to_double(product.wrapping_add(1i128 << 105)); // + 2^k
    let key = if sum >= 0 {
        sum >> shift
    } else {
        // DataDog's floor: truncate toward zero, then one lower.
        sum.wrapping_neg()
            .wrapping_shr(shift)
            .wrapping_neg()
            .wrapping_sub(1)
    };
    // |key - 2^k| <= 1025 * 2^20 + 1.
    key.wrapping_sub(1i128 << k) as i32
}

/// `v` rounded to 53 significant bits, to nearest, ties to even: what storing it in an
/// `f64` does (the units stay the same; no value here is near the f64 range's ends).
fn to_double(v: i128) -> i128 {
    let magnitude = v.unsigned_abs();
    let bits = 128u32.wrapping_sub(magnitude.leading_zeros());
    if bits <= 53 {
        return v;
    }
    let rounded = round_low_bits(magnitude, bits.wrapping_sub(53));
    // rounded <= 2^118: fits in i128.
    if v < 0 {
        (rounded as i128).wrapping_neg()
    } else {
        rounded as i128
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `IntMapping::upper_bound_u64` is at or above every whole number of its bin, and
    /// within a hair of the exact edge; the default (float) formula agrees with it to the
    /// mapping's accuracy.
    #[test]
    fn int_upper_bounds_are_whole_number_edges() {
        for m in [
            IntMapping::K5,
            IntMapping::K6,
            IntMapping::K7,
            IntMapping::with_mantissa_bits(0).unwrap(),
        ] {
            let mut v = 1u64;
            while v < 1 << 50 {
                for w in [v, v + 1, v.saturating_sub(1).max(1), v + v / 3] {
                    let i = m.index_u64(w);
                    let ub = m.upper_bound_u64(i);
                    assert!(w <= ub, "{m:?} {w} in bin {i}, bound {ub}");
                    let exact = libm::ceil(m.lower_bound(i + 1));
                    assert!(
                        ub as f64 >= exact && ub as f64 <= exact * (1.0 + 1e-9) + 1.0,
                        "{m:?} {w}: {ub} vs {exact}"
                    );
                    assert!(m.index_u64(ub + 1 + (ub >> 31)) > i, "{m:?} {w}");
                }
                v = v + v / 7 + 1;
            }
        }
        assert_eq!(IntMapping::K6.upper_bound_u64(i32::MAX), u64::MAX);
        assert_eq!(IntMapping::K6.upper_bound_u64(64 << 6), u64::MAX);
        assert_eq!(IntMapping::K6.upper_bound_u64(-(2000 << 6)), 1);
    }

    /// The lower bound without `ldexp` has `ldexp`'s bits: at every `k`, at the ends of
    /// the normal range (the exponents -1023, -1022, 1023 and 1024 on both sides of the
    /// fast path), at the ends of `i32`, and on random indices.
    #[test]
    fn lower_bounds_are_ldexps() {
        let by_ldexp = |m: &IntMapping, index: i32| {
            let k = m.k();
            let top = index & ((1i32 << k) - 1);
            libm::ldexp(1.0 + top as f64 / (1u32 << k) as f64, index >> k)
        };
        let mut rng = crate::test_rng::Xorshift32(0x51ed_270b);
        for k in 0..=INT_MAX_BITS {
            let m = IntMapping::with_mantissa_bits(k).unwrap();
            let per_octave = 1i64 << k;
            let mut indices = [i32::MIN, i32::MIN + 1, i32::MAX - 1, i32::MAX, 0, -1, 1].to_vec();
            for e in [
                -1080i64, -1075, -1074, -1023, -1022, -1, 0, 1023, 1024, 1025,
            ] {
                for top in [0, 1, per_octave / 2, per_octave - 1] {
                    let index = e * per_octave + top;
                    if let Ok(index) = i32::try_from(index) {
                        indices.extend([index, index.saturating_sub(1), index.saturating_add(1)]);
                    }
                }
            }
            indices.extend((0..2_000).map(|_| rng.next_u32() as i32));
            for index in indices {
                let (got, want) = (m.lower_bound(index), by_ldexp(&m, index));
                assert_eq!(got.to_bits(), want.to_bits(), "k {k}, index {index}");
            }
        }
    }

    #[test]
    fn tabled_accuracies_are_the_computed_ones() {
        for k in 0..=INT_MAX_BITS {
            let m = IntMapping::with_mantissa_bits(k).unwrap();
            assert_eq!(
                m.relative_accuracy().to_bits(),
                IntMapping::accuracy_of_bits(k).to_bits(),
                "{k}"
            );
        }
    }

    #[test]
    fn int_mapping_rounds_accuracy_down() {
        let k = |a| {
            IntMapping::with_relative_accuracy(a)
                .unwrap()
                .mantissa_bits()
        };
        assert_eq!(k(0.02), 5);
        assert_eq!(k(0.01), 6);
        assert_eq!(k(0.005), 7);
        for a in [0.02, 0.01, 0.005, 0.3, 1e-6] {
            assert!(
                IntMapping::with_relative_accuracy(a)
                    .unwrap()
                    .relative_accuracy()
                    <= a
            );
        }
        assert!(IntMapping::with_relative_accuracy(1e-9).is_err());
    }

    #[test]
    fn int_mapping_integer_and_float_paths_agree() {
        let m = IntMapping::with_mantissa_bits(6).unwrap();
        for v in (1..5000u64).chain([1 << 40, (1 << 53) - 1, 123_456_789_012]) {
            assert_eq!(m.index_u64(v), m.index(v as f64), "v={v}");
        }
        assert_eq!(m.index_u64(0), i32::MIN);
        assert_eq!(m.index_u64(u64::MAX), (63 << 6) | 63);
    }

    #[test]
    fn both_ways_of_cutting_a_32_bit_value_agree() {
        let mut rng = crate::test_rng::Xorshift32(0x9e37_79b9);
        for k in 0..=INT_MAX_BITS {
            let edges = (0..32).flat_map(|b| {
                let p = 1u32 << b;
                [p, p.wrapping_add(1), p.wrapping_sub(1), p | (p >> 1)]
            });
            for x in edges.chain([u32::MAX, 1, 3, 7]).filter(|&x| x != 0) {
                let lz = x.leading_zeros();
                assert_eq!(
                    split_u32_wide(x, lz, k),
                    split_u32_narrow(x, lz, k),
                    "{x} {k}"
                );
            }
            for _ in 0..10_000 {
                let v = rng.next_u32();
                let lz = v.leading_zeros();
                assert_eq!(
                    split_u32_wide(v, lz, k),
                    split_u32_narrow(v, lz, k),
                    "{v} {k}"
                );
            }
        }
    }

    #[test]
    fn the_slice_positions_are_the_fast_index_of_each_value() {
        // Edges, values a hair off them, 0, the ends of the 32-bit path, and random values.
        let mut values = std::vec![0u64, 1, 2, 3, 7, 8, 129, u64::from(u32::MAX), 1 << 32];
        values.extend([(1 << 32) + 1, u64::MAX, 1_000_000, 999_999, 1_000_001]);
        for b in 0..40 {
            let p = 1u64 << b;
            values.extend([p - 1, p, p + 1, p + (p >> 1), p + (p >> 6), p + (p >> 7)]);
        }
        let mut rng = crate::test_rng::Xorshift64(0x2545_f491_4f6c_dd1d);
        for _ in 0..20_000 {
            let x = rng.next_u64();
            values.push(x >> (x % 64));
        }
        for k in 0..=INT_MAX_BITS {
            let m = IntMapping::with_mantissa_bits(k).unwrap();
            let narrow: std::vec::Vec<u64> =
                values.iter().copied().filter(|&v| v >> 32 == 0).collect();
            let mut out = std::vec![0; narrow.len()];
            // Positions from a few starts: below, at and above the indices.
            for min_index in [i32::MIN, -5_000, 0, 1_000, i32::MAX] {
                m.positions_below_2_32(&narrow, min_index, &mut out);
                for (&v, &p) in narrow.iter().zip(&out) {
                    let want = m
                        .index_u64_fast(v)
                        .map(|i| i.wrapping_sub(min_index) as u32);
                    assert_eq!(p, want.unwrap_or(u32::MAX), "{v} {k} {min_index}");
                }
            }
            for &v in &values {
                if let Some(fast) = m.index_u64_fast(v) {
                    assert_eq!(fast, m.index_u64(v), "{v} {k}");
                }
            }
        }
    }

    /// One library's index of `approx_log = x / 2^52`, computed as the library does: in
    /// f64.
    fn in_floats(k: u32, x: i64, error: i64) -> i64 {
        let per_octave = (1u64 << k) as f64;
        let m = per_octave + error as f64 * libm::ldexp(1.0, k as i32 - 53);
        let approx_log = x as f64 / libm::ldexp(1.0, 52);
        assert_eq!(
            (approx_log * libm::ldexp(1.0, 52)) as i64,
            x,
            "x must be a double"
        );
        let z = approx_log * m + per_octave;
        let key = if z >= 0.0 { z as i64 } else { z as i64 - 1 };
        key - (1i64 << k)
    }

    /// `approx_log(v) * 2^52` of an integer `0 < v < 2^53`, exactly.
    fn x_of(v: u64) -> i64 {
        let e = 63 - v.leading_zeros();
        ((i64::from(e)) << 52) | (((v ^ (1u64 << e)) << (52 - e)) as i64)
    }

    /// What both libraries do with `x`, computed in floats: their common index, or the
    /// exact one where they disagree (what `key` replays).
    fn datadog(k: u32, x: i64) -> i64 {
        let [go, java] = errors(k).map(|error| in_floats(k, x, error));
        if go == java {
            go
        } else {
            x >> (52 - k)
        }
    }

    #[test]
    fn integers_below_2_47_land_in_their_exact_bins_where_go_is_exact() {
        let exact_ks: std::vec::Vec<u32> = (0..=20).filter(|&k| exact_below_2_47(k)).collect();
        assert_eq!(exact_ks, [0, 5, 9, 11, 12, 15]);
        for &k in &exact_ks {
            let m = IntMapping::with_mantissa_bits(k).unwrap();
            // Every bin edge of every octave below 2^47 (a stride through the octaves'
            // edges above k = 11, to keep the test short), and its neighbours.
            let stride = if k > 11 { 37 } else { 1 };
            for e in 0..47u32 {
                let octave = 1u64 << e;
                let mut j = 0u64;
                while j < 1u64 << k {
                    // The edge `2^e (1 + j / 2^k)`, rounded up to an integer.
                    let edge = octave + (((j << e) + (1u64 << k) - 1) >> k);
                    for v in [edge - 1, edge, edge + 1, edge + 2] {
                        if v == 0 || v >= 1 << 47 {
                            continue;
                        }
                        let x = x_of(v);
                        let exact = x >> (52 - k);
                        assert_eq!(datadog(k, x), exact, "k={k} v={v}");
                        assert_eq!(
                            i64::from(IndexMapping::index_u64(&m, v)),
                            exact,
                            "k={k} v={v}"
                        );
                    }
                    j += stride;
                }
            }
        }
        // Where Go is not exact, integers do leave their exact bins (the rule is not
        // vacuous): at k = 6, some below 2^20 already (1,726 of the 32-bit values).
        let k = 6;
        let moved = (1..1u64 << 20).filter(|&v| datadog(k, x_of(v)) != x_of(v) >> (52 - k));
        assert!(moved.count() > 0);
    }

    fn errors(k: u32) -> [i64; 2] {
        [GO_ERROR[k as usize], JAVA_ERROR[k as usize]]
    }

    #[test]
    fn the_multipliers_are_representable_and_the_gammas_are_two_to_the_two_to_minus_k() {
        for k in 0..=20u32 {
            for error in errors(k) {
                let unit = libm::ldexp(1.0, k as i32 - 53);
                let m = (1u64 << k) as f64 + error as f64 * unit;
                assert_eq!((m - (1u64 << k) as f64) / unit, error as f64, "k={k}");
            }
            let gamma = f64::from_bits(GAMMA_BITS[k as usize]);
            let want = libm::exp2(1.0 / (1u64 << k) as f64);
            assert!((gamma - want).abs() <= f64::EPSILON * want, "k={k}");
        }
    }

    /// Edges, values a few units from an edge, values at the band's border, and random
    /// values, over the exponents a sketch sees.
    fn xs(k: u32, rng: &mut crate::test_rng::Xorshift64) -> std::vec::Vec<i64> {
        let bin = 1i64 << (52 - k);
        let band = BAND[k as usize];
        let mut out = std::vec::Vec::new();
        let per_octave = 1i64 << k;
        let step = (per_octave >> 5).max(1); // every edge for k <= 5, 32 per octave above
        for e in -70i64..70 {
            let mut top = 0;
            while top < per_octave {
                let edge = (e * per_octave + top) * bin;
                for d in [0, 1, -1, 2, -2, 7, -7, band, -band, band + 1, -band - 1] {
                    out.push(edge + d);
                }
                // Values between the band and a bin's middle.
                out.push(edge + 3 * band);
                out.push(edge + (rng.next_u64() % bin as u64) as i64);
                top += step;
            }
        }
        // Only doubles are approx_logs: the nearest double to each.
        out.into_iter().map(|x| x as f64 as i64).collect()
    }

    #[test]
    fn the_integer_replay_is_the_float_computation() {
        let mut rng = crate::test_rng::Xorshift64(0x9e37_79b9_7f4a_7c15);
        for k in 0..=20u32 {
            for x in xs(k, &mut rng) {
                for error in errors(k) {
                    assert_eq!(
                        i64::from(replay(k, x, error)),
                        in_floats(k, x, error),
                        "k={k} x={x} error={error}"
                    );
                }
            }
        }
    }

    #[test]
    fn away_from_edges_both_libraries_give_the_exact_bin() {
        let mut rng = crate::test_rng::Xorshift64(0x1234_5678_9abc_def1);
        for k in 0..=20u32 {
            for x in xs(k, &mut rng) {
                if !near_edge(k, x) {
                    let exact = x >> (52 - k);
                    for error in errors(k) {
                        assert_eq!(in_floats(k, x, error), exact, "k={k} x={x}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_key_is_the_libraries_when_they_agree_and_exact_otherwise() {
        let mut rng = crate::test_rng::Xorshift64(0x0bad_cafe_f00d_d00d);
        for k in 0..=20u32 {
            for x in xs(k, &mut rng) {
                let [go, java] = errors(k).map(|e| in_floats(k, x, e));
                let want = if go == java { go } else { x >> (52 - k) };
                assert_eq!(i64::from(key(k, x)), want, "k={k} x={x}");
            }
        }
    }
}
