//! [`HedgePreset`]: a hedge configuration known when the program is compiled, as a type,
//! which a hedger of it (with its window and budget) stores as zero bytes.

use super::{HedgeConfig, Parts};
use crate::budget::BudgetPreset;
use crate::clock::Instant;
use crate::preset::Defaults;
use crate::window::{WindowConfig, WindowPreset};

/// A [`HedgeConfig`] known when the program is compiled, as a type: a hedger of it built
/// by [`Hedger::preset`](super::Hedger::preset) ([`PresetCompactHedger`](super::PresetCompactHedger))
/// is all zero bytes, its window's and its budget's included, so a `static` of it is
/// `.bss` (RAM the startup code zeroes) rather than `.data` (RAM plus a copy of it in
/// flash, copied at reset). A hedger of any other configuration still works, each setting
/// read a XOR away; only then are its bytes not all zero.
///
/// Every `HedgePreset` is a [`WindowPreset`] (the window its configuration builds) and a
/// [`BudgetPreset`] (its budget's ratio and cap). The default, [`Defaults`], is
/// [`HedgeConfig::new`]: [`CompactHedger`](super::CompactHedger)'s.
///
/// ```
/// use core::time::Duration;
/// use tailguard::clock::{Clock, Instant};
/// use tailguard::hedge::{HedgeConfig, HedgePreset, Hedger, PresetCompactHedger};
///
/// /// A sensor bus: 1 s intervals, hedge no sooner than 200 µs, 10 tokens at most.
/// struct SensorBus;
/// impl HedgePreset for SensorBus {
///     const CONFIG: HedgeConfig = HedgeConfig::new()
///         .with_interval(Duration::from_secs(1))
///         .with_min_delay(Duration::from_micros(200))
///         .with_budget_cap(10);
/// }
///
/// struct Timer;
/// impl Clock for Timer {
///     fn now(&self) -> Instant {
///         Instant::from_nanos(1_000_000)
///     }
/// }
///
/// // All zero bytes: in `.bss` on a microcontroller.
/// static HEDGER: PresetCompactHedger<Timer, SensorBus> = match Hedger::preset(Timer, Instant::ZERO) {
///     Ok(hedger) => hedger,
///     Err(_) => panic!("invalid hedge configuration"), // a compile error
/// };
///
/// let _ticket = HEDGER.start();
/// assert_eq!(HEDGER.config(), SensorBus::CONFIG);
/// assert_eq!(HEDGER.budget().cap(), 10);
/// ```
pub trait HedgePreset {
    /// The configuration.
    const CONFIG: HedgeConfig;
}

impl HedgePreset for Defaults {
    const CONFIG: HedgeConfig = HedgeConfig::new();
}

/// The window a preset's configuration builds (a default window if the configuration is
/// invalid: [`Hedger::preset`](super::Hedger::preset) refuses it anyway).
impl<P: HedgePreset> WindowPreset for P {
    const CONFIG: WindowConfig = match Parts::new(<P as HedgePreset>::CONFIG, Instant::ZERO) {
        Ok(parts) => parts.window_config,
        Err(_) => WindowConfig::new(),
    };
}

/// The budget of a preset's configuration.
impl<P: HedgePreset> BudgetPreset for P {
    const RATIO: f64 = <P as HedgePreset>::CONFIG.budget_ratio;
    const CAP: u32 = <P as HedgePreset>::CONFIG.budget_cap;
}
