//! What a hedger keeps of its configuration, in the forms its decisions read, stored XOR
//! what its preset's configuration makes ([`Settings::ZERO`]): a hedger built with its
//! preset's configuration is then zero bytes, so a `static` of it is `.bss` (RAM the
//! startup code zeroes) rather than `.data` (RAM plus an image of it in flash). A read
//! costs a XOR with a constant per field it uses.

use core::marker::PhantomData;
use core::time::Duration;

use super::config::{ColdStart, HedgeConfig};
use super::on_time::OnTime;
use super::HedgePreset;
use crate::clock::coarse::CoarseClock;
use crate::clock::duration_to_nanos;

/// A hedger's configuration and what its decisions read of it, each field stored XOR
/// [`ZERO`](Self::ZERO)'s (preset `P`'s) and read back, one field at a time, by its
/// accessor. (No `Debug`: the words are not the values; the hedger's shows its
/// configuration.)
pub(super) struct Settings<P> {
    /// The values themselves, XOR `P`'s.
    words: Words,
    preset: PhantomData<fn() -> P>,
}

/// What [`Settings`] keeps, as it is or as its XOR with a preset's.
#[derive(Clone, Copy)]
struct Words {
    /// The configuration, for [`Hedger::config`](super::Hedger::config) and the rarely
    /// read fields.
    config: ConfigWords,
    /// The clock of the cooldown, and the cooldown in its ticks.
    cooldown_clock: CoarseClock,
    cooldown_ticks: u64,
    /// The longest pushback in the cooldown clock's ticks.
    max_pushback_ticks: u32,
    /// The delays in nanoseconds: decisions add and compare integers.
    min_delay_ns: u64,
    max_delay_ns: u64,
    /// Whether there is a cold-start delay, and the delay (0 if none): an `Option` would
    /// have no zero form to XOR with.
    cold_start: bool,
    cold_start_ns: u64,
    /// The on-time rule ([`OnTime::OFF`] if none: an `Option` would not be zero bytes).
    on_time: OnTime,
    backoff_factor: u32,
    max_hedges: u8,
    /// Whether each hedge has its own percentile.
    per_hedge_percentiles: bool,
}

impl<P: HedgePreset> Settings<P> {
    /// What the preset's configuration makes (its stored form is zero bytes).
    const ZERO: Words = Words::of(&P::CONFIG);

    /// The stored settings of `config` (validated).
    pub(super) const fn new(config: &HedgeConfig) -> Self {
        Settings {
            words: Words::of(config).xor(Self::ZERO),
            preset: PhantomData,
        }
    }

    /// The configuration.
    pub(super) fn config(&self) -> HedgeConfig {
        self.words.config.xor(Self::ZERO.config).decode()
    }

    /// The cooldown's clock.
    #[inline]
    pub(super) fn cooldown_clock(&self) -> CoarseClock {
        self.words.cooldown_clock.xor(Self::ZERO.cooldown_clock)
    }

    /// The cooldown in the cooldown clock's ticks.
    #[inline]
    pub(super) fn cooldown_ticks(&self) -> u64 {
        self.words.cooldown_ticks ^ Self::ZERO.cooldown_ticks
    }

    /// The longest pushback in the cooldown clock's ticks.
    #[inline]
    pub(super) fn max_pushback_ticks(&self) -> u32 {
        self.words.max_pushback_ticks ^ Self::ZERO.max_pushback_ticks
    }

    /// The least delay in nanoseconds.
    #[inline]
    pub(super) fn min_delay_ns(&self) -> u64 {
        self.words.min_delay_ns ^ Self::ZERO.min_delay_ns
    }

    /// The greatest delay in nanoseconds.
    #[inline]
    pub(super) fn max_delay_ns(&self) -> u64 {
        self.words.max_delay_ns ^ Self::ZERO.max_delay_ns
    }

    /// The cold-start delay in nanoseconds, if any.
    #[inline]
    pub(super) fn cold_start_ns(&self) -> Option<u64> {
        let w = &self.words;
        let ns = w.cold_start_ns ^ Self::ZERO.cold_start_ns;
        (w.cold_start ^ Self::ZERO.cold_start).then_some(ns)
    }

    /// The on-time rule, if configured.
    #[inline]
    pub(super) fn on_time(&self) -> Option<OnTime> {
        let rule = self.words.on_time.xor(Self::ZERO.on_time);
        rule.is_on().then_some(rule)
    }

    /// The delay's factor during a back-off.
    #[inline]
    pub(super) fn backoff_factor(&self) -> u32 {
        self.words.backoff_factor ^ Self::ZERO.backoff_factor
    }

    /// The most hedges per request.
    #[inline]
    pub(super) fn max_hedges(&self) -> u8 {
        self.words.max_hedges ^ Self::ZERO.max_hedges
    }

    /// Whether each hedge has its own percentile.
    #[inline]
    pub(super) fn per_hedge_percentiles(&self) -> bool {
        self.words.per_hedge_percentiles ^ Self::ZERO.per_hedge_percentiles
    }
}

impl Words {
    /// What `config` makes, as it is.
    const fn of(config: &HedgeConfig) -> Self {
        let cooldown_clock = cooldown_clock(config.cooldown);
        let pushback_ticks = cooldown_clock.ticks_in(config.max_pushback);
        Words {
            config: ConfigWords::of(config),
            cooldown_ticks: cooldown_clock.ticks_in(config.cooldown),
            cooldown_clock,
            max_pushback_ticks: pushback_limit(pushback_ticks),
            min_delay_ns: duration_to_nanos(config.min_delay),
            max_delay_ns: duration_to_nanos(config.max_delay),
            cold_start: matches!(config.cold_start, ColdStart::Delay(_)),
            cold_start_ns: match config.cold_start {
                ColdStart::Delay(d) => duration_to_nanos(d),
                ColdStart::NoHedge => 0,
            },
            on_time: match config.on_time_chance {
                Some(chance) => OnTime::new(chance),
                None => OnTime::OFF,
            },
            backoff_factor: config.backoff_factor,
            max_hedges: config.max_hedges,
            per_hedge_percentiles: config.per_hedge_percentiles(),
        }
    }

    /// Each field XOR `key`'s.
    const fn xor(self, key: Self) -> Self {
        Words {
            config: self.config.xor(key.config),
            cooldown_clock: self.cooldown_clock.xor(key.cooldown_clock),
            cooldown_ticks: self.cooldown_ticks ^ key.cooldown_ticks,
            max_pushback_ticks: self.max_pushback_ticks ^ key.max_pushback_ticks,
            min_delay_ns: self.min_delay_ns ^ key.min_delay_ns,
            max_delay_ns: self.max_delay_ns ^ key.max_delay_ns,
            cold_start: self.cold_start ^ key.cold_start,
            cold_start_ns: self.cold_start_ns ^ key.cold_start_ns,
            on_time: self.on_time.xor(key.on_time),
            backoff_factor: self.backoff_factor ^ key.backoff_factor,
            max_hedges: self.max_hedges ^ key.max_hedges,
            per_hedge_percentiles: self.per_hedge_percentiles ^ key.per_hedge_percentiles,
        }
    }
}

/// The finest cooldown tick: 2^20 ns (about 1 ms).
const COOLDOWN_MIN_UNIT_NS: u64 = 1 << 20;

/// The longest pushback, in ticks of the cooldown clock: a pushback's end is stamped ahead
/// of its writer's reading, and a coarse stamp must stay within 2^29 ticks of it (the
/// [rule for writers of `clock::coarse`). About six days with
/// the finest tick, more with cooldowns beyond 13 days.
const PUSHBACK_TICKS_LIMIT: u32 = (1 << 29) - 1;

/// The coarse clock of a cooldown: ticks of about 1 ms, or coarser for cooldowns so long
/// that the clock's horizon must grow to hold them (the horizon is about `unit * 2^30`;
/// a unit of `4 * (cooldown / 2^32 + 2)` ns puts the cooldown inside it, and makes a
/// cooldown of `Duration::MAX` last for every reading of the clock).
const fn cooldown_clock(cooldown: Duration) -> CoarseClock {
    let need = (duration_to_nanos(cooldown) >> 32).saturating_add(2);
    let unit = match need.saturating_mul(4).checked_next_power_of_two() {
        Some(unit) => unit,
        None => 1 << 63,
    };
    let unit = if unit < COOLDOWN_MIN_UNIT_NS {
        COOLDOWN_MIN_UNIT_NS
    } else {
        unit
    };
    CoarseClock::with_unit_at_least_8(0, unit)
}

/// The longest pushback in cooldown ticks, `ticks` capped at [`PUSHBACK_TICKS_LIMIT`].
const fn pushback_limit(ticks: u64) -> u32 {
    if ticks < PUSHBACK_TICKS_LIMIT as u64 {
        ticks as u32
    } else {
        PUSHBACK_TICKS_LIMIT
    }
}

/// A [`HedgeConfig`] as integer words (which a XOR can take to zero): its 64-bit fields,
/// then its 32-bit ones.
#[derive(Clone, Copy)]
struct ConfigWords {
    wide: [u64; 10],
    narrow: [u32; 11],
}

/// `flags`: `rotate_on_record`, a cold-start delay, an on-time chance.
const ROTATE: u32 = 1 << 8;
const COLD_START: u32 = 1 << 9;
const ON_TIME: u32 = 1 << 10;

impl ConfigWords {
    const fn of(c: &HedgeConfig) -> Self {
        let [first, second] = c.percentiles;
        let (cold_flag, cold) = match c.cold_start {
            ColdStart::Delay(d) => (COLD_START, d),
            ColdStart::NoHedge => (0, Duration::ZERO),
        };
        let (chance_flag, chance) = match c.on_time_chance {
            Some(chance) => (ON_TIME, chance),
            None => (0, 0.0),
        };
        let rotate_flag = if c.rotate_on_record { ROTATE } else { 0 };
        ConfigWords {
            wide: [
                first.to_bits(),
                second.to_bits(),
                c.budget_ratio.to_bits(),
                chance.to_bits(),
                c.interval.as_secs(),
                c.min_delay.as_secs(),
                c.max_delay.as_secs(),
                c.cooldown.as_secs(),
                c.max_pushback.as_secs(),
                cold.as_secs(),
            ],
            narrow: [
                c.interval.subsec_nanos(),
                c.min_delay.subsec_nanos(),
                c.max_delay.subsec_nanos(),
                c.cooldown.subsec_nanos(),
                c.max_pushback.subsec_nanos(),
                cold.subsec_nanos(),
                c.min_samples,
                c.budget_cap,
                c.backoff_factor,
                // A hedger's configuration is validated: at most `MAX_HEDGES`.
                c.percentile_count as u32,
                c.max_hedges as u32 | rotate_flag | cold_flag | chance_flag,
            ],
        }
    }

    /// The configuration these words hold.
    fn decode(self) -> HedgeConfig {
        let [first, second, ratio, chance, interval, min_delay, max_delay, cooldown, max_pushback, cold] =
            self.wide;
        let [interval_ns, min_delay_ns, max_delay_ns, cooldown_ns, max_pushback_ns, cold_ns, min_samples, budget_cap, backoff_factor, percentile_count, flags] =
            self.narrow;
        // Each `nanos` came from `subsec_nanos`: the sums are exact.
        let duration = |secs, nanos| {
            Duration::from_secs(secs).saturating_add(Duration::from_nanos(u64::from(nanos)))
        };
        HedgeConfig {
            percentiles: [f64::from_bits(first), f64::from_bits(second)],
            percentile_count: percentile_count as usize,
            interval: duration(interval, interval_ns),
            min_delay: duration(min_delay, min_delay_ns),
            max_delay: duration(max_delay, max_delay_ns),
            min_samples,
            cold_start: if flags & COLD_START != 0 {
                ColdStart::Delay(duration(cold, cold_ns))
            } else {
                ColdStart::NoHedge
            },
            budget_ratio: f64::from_bits(ratio),
            budget_cap,
            max_hedges: flags as u8,
            cooldown: duration(cooldown, cooldown_ns),
            backoff_factor,
            rotate_on_record: flags & ROTATE != 0,
            on_time_chance: (flags & ON_TIME != 0).then_some(f64::from_bits(chance)),
            max_pushback: duration(max_pushback, max_pushback_ns),
        }
    }

    /// Each word XOR `key`'s.
    const fn xor(self, key: Self) -> Self {
        ConfigWords {
            wide: xor_wide(self.wide, key.wide),
            narrow: xor_narrow(self.narrow, key.narrow),
        }
    }
}

/// `words` XOR `key`, word by word.
const fn xor_wide<const N: usize>(mut words: [u64; N], key: [u64; N]) -> [u64; N] {
    let (mut rest, mut keys): (&mut [u64], &[u64]) = (&mut words, &key);
    while let (Some((word, more)), Some((k, more_keys))) =
        (rest.split_first_mut(), keys.split_first())
    {
        *word ^= *k;
        (rest, keys) = (more, more_keys);
    }
    words
}

/// `words` XOR `key`, word by word.
const fn xor_narrow<const N: usize>(mut words: [u32; N], key: [u32; N]) -> [u32; N] {
    let (mut rest, mut keys): (&mut [u32], &[u32]) = (&mut words, &key);
    while let (Some((word, more)), Some((k, more_keys))) =
        (rest.split_first_mut(), keys.split_first())
    {
        *word ^= *k;
        (rest, keys) = (more, more_keys);
    }
    words
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::preset::Defaults;

    /// A configuration with every field at an edge.
    const EDGES: HedgeConfig = HedgeConfig::new()
        .with_percentiles(&[0.5, 0.999])
        .with_interval(Duration::MAX)
        .with_min_delay(Duration::ZERO)
        .with_max_delay(Duration::new(u64::MAX, 999_999_999))
        .with_min_samples(u32::MAX)
        .with_cold_start(ColdStart::Delay(Duration::new(7, 123_456_789)))
        .with_budget_ratio(1000.0)
        .with_budget_cap(u32::MAX)
        .with_cooldown(Duration::from_nanos(1))
        .with_backoff_factor(u32::MAX)
        .with_rotate_on_record(false)
        .with_on_time_chance(0.25)
        .with_max_pushback(Duration::from_millis(1500));

    /// Two hedges, and a chance close to zero.
    const PAIR: HedgeConfig = HedgeConfig::new()
        .with_max_hedges(2)
        .with_on_time_chance(1e-300);

    struct Edges;
    impl HedgePreset for Edges {
        const CONFIG: HedgeConfig = EDGES;
    }

    struct Pair;
    impl HedgePreset for Pair {
        const CONFIG: HedgeConfig = PAIR;
    }

    /// The words give back every configuration, the edges of each field included,
    /// whichever preset they are stored against.
    #[test]
    fn a_configuration_survives_its_words() {
        for config in [HedgeConfig::new(), EDGES, PAIR] {
            survives::<Defaults>(config);
            survives::<Edges>(config);
            survives::<Pair>(config);
        }
    }

    fn survives<P: HedgePreset>(config: HedgeConfig) {
        let stored = Settings::<P>::new(&config);
        assert_eq!(stored.config(), config);
        let of = Words::of(&config);
        assert_eq!(stored.cooldown_clock(), of.cooldown_clock);
        assert_eq!(
            (stored.cooldown_ticks(), stored.max_pushback_ticks()),
            (of.cooldown_ticks, of.max_pushback_ticks)
        );
        assert_eq!(
            (stored.min_delay_ns(), stored.max_delay_ns()),
            (of.min_delay_ns, of.max_delay_ns)
        );
        let cold = match config.cold_start() {
            ColdStart::Delay(d) => Some(duration_to_nanos(d)),
            ColdStart::NoHedge => None,
        };
        assert_eq!(stored.cold_start_ns(), cold);
        assert_eq!(
            stored.on_time().is_some(),
            config.on_time_chance().is_some()
        );
        assert_eq!(
            (stored.backoff_factor(), stored.max_hedges()),
            (config.backoff_factor(), config.max_hedges())
        );
        assert_eq!(
            stored.per_hedge_percentiles(),
            config.per_hedge_percentiles()
        );
    }

    /// A preset's own configuration is stored as zero: every field.
    #[test]
    fn a_presets_configuration_is_stored_as_zero() {
        stored_as_zero::<Defaults>();
        stored_as_zero::<Edges>();
        stored_as_zero::<Pair>();
    }

    fn stored_as_zero<P: HedgePreset>() {
        let zero = Settings::<P>::new(&P::CONFIG);
        let w = zero.words;
        assert_eq!(w.config.wide, [0; 10]);
        assert_eq!(w.config.narrow, [0; 11]);
        assert_eq!(w.cooldown_clock.xor(w.cooldown_clock), w.cooldown_clock);
        assert_eq!((w.cooldown_ticks, w.max_pushback_ticks), (0, 0));
        assert_eq!(
            (
                w.min_delay_ns,
                w.max_delay_ns,
                w.cold_start_ns,
                w.cold_start
            ),
            (0, 0, 0, false)
        );
        assert_eq!(
            (w.backoff_factor, w.max_hedges, w.per_hedge_percentiles),
            (0, 0, false)
        );
        assert_eq!(zero.config(), P::CONFIG);
    }
}
