//! [`Defaults`]: the preset of the default configuration.
//!
//! A value whose configuration is its type's preset is stored as zero bytes: its other
//! configurations are kept as their XOR with the preset's, read back a field at a time.
//! A `static` of such a value is then `.bss` (RAM the startup code zeroes) rather than
//! `.data` (RAM plus an image of it in flash, copied at reset). Each layer has its trait:
//! [`BudgetPreset`](crate::budget::BudgetPreset),
//! [`WindowPreset`](crate::window::WindowPreset) and
//! [`HedgePreset`](crate::hedge::HedgePreset), which gives the other two from one
//! [`HedgeConfig`](crate::hedge::HedgeConfig).

/// The preset of the defaults: a default [`HedgeConfig`](crate::hedge::HedgeConfig), and
/// the window and budget it builds (1 s intervals, 20 values before a quantile is
/// trusted; 10 % of traffic, 50 tokens). Every type that takes a preset takes this one
/// unless told otherwise.
///
/// ```
/// use tailguard::budget::BudgetPreset;
/// use tailguard::hedge::{HedgeConfig, HedgePreset};
/// use tailguard::preset::Defaults;
///
/// assert_eq!(<Defaults as HedgePreset>::CONFIG, HedgeConfig::new());
/// assert_eq!((<Defaults as BudgetPreset>::RATIO, <Defaults as BudgetPreset>::CAP), (0.1, 50));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Defaults;
