//! How DataDog's libraries number keys and write gamma: the Go/Java convention
//! (tailguard's) and Python's. See the module docs' "Index conventions" section
//! (docs/proto.md).

use crate::sketch::{IndexMapping, Interpolation};

/// `7 / 10`: how Python's cubic mapping scales its multiplier (its `1 / C`).
const PYTHON_CUBIC_FACTOR: f64 = 0.7;

/// How the keys and gamma of a message are to be read or written. See the
/// [module docs](crate::proto#index-conventions-what-tailguard-writes-and-reading-pythons-sketches).
///
/// ```
/// use tailguard::proto::IndexConvention;
/// assert_eq!(IndexConvention::default(), IndexConvention::GoJava);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum IndexConvention {
    /// DataDog's Go and Java libraries, and tailguard: `floor`, Go/Java gammas.
    #[default]
    GoJava,
    /// DataDog's Python library (`ddsketch` 3.x): `ceil`, Python's gammas.
    Python,
}

impl IndexConvention {
    /// `gamma` as this convention writes it, from the Go/Java gamma.
    pub(super) fn gamma_from_go(self, interpolation: Interpolation, gamma: f64) -> f64 {
        match (self, interpolation) {
            (IndexConvention::Python, Interpolation::Linear) => libm::exp(libm::log2(gamma)),
            (IndexConvention::Python, Interpolation::Cubic) => {
                libm::exp(PYTHON_CUBIC_FACTOR * libm::log2(gamma))
            }
            _ => gamma,
        }
    }

    /// The Go/Java gamma of a `gamma` written in this convention.
    pub(super) fn gamma_to_go(self, interpolation: Interpolation, gamma: f64) -> f64 {
        match (self, interpolation) {
            (IndexConvention::Python, Interpolation::Linear) => libm::exp2(libm::log(gamma)),
            (IndexConvention::Python, Interpolation::Cubic) => {
                libm::exp2(libm::log(gamma) / PYTHON_CUBIC_FACTOR)
            }
            _ => gamma,
        }
    }

    /// How much higher this convention's key of a value is than the Go/Java key, for the
    /// same `indexOffset`.
    pub(super) fn key_shift(self) -> i64 {
        match self {
            IndexConvention::GoJava => 0,
            IndexConvention::Python => 1,
        }
    }
}

/// For `LINEAR`, the key shift of Go's and Java's default layout: they write
/// `indexOffset = multiplier` (their `approx_log(1)` is 1), so their keys are
/// `multiplier` above tailguard's when that is a whole number (`2^k` for `IntMapping`).
///
/// The multiplier is recognised as whole to a relative [`LAYOUT_TOLERANCE`]: computed from
/// gamma in floating point it misses `2^k` by about `2^(2k - 53)`, which is more than any
/// absolute tolerance of `1e-9` from k = 12 up (k = 20 misses by `7.5e-5`). Any whole shift
/// describes the same bins (it moves `indexOffset` and every key alike), so a looser test
/// can only change the layout, never the bins.
pub(super) fn go_layout_shift<M: IndexMapping>(mapping: &M) -> i32 {
    if M::INTERPOLATION != Interpolation::Linear {
        return 0;
    }
    let multiplier = 1.0 / libm::log2(mapping.gamma());
    let whole = libm::round(multiplier);
    if (multiplier - whole).abs() <= LAYOUT_TOLERANCE * whole && (1.0..=1e9).contains(&whole) {
        whole as i32
    } else {
        0
    }
}

/// Relative tolerance on a `LINEAR` multiplier being the whole number of Go's and Java's
/// default layout (see [`go_layout_shift`]).
const LAYOUT_TOLERANCE: f64 = 1e-9;
