//! [`WindowKind`]: which window a [`Hedger`](super::Hedger) learns its latencies in,
//! named by the hedger's third type parameter.

use core::fmt;
use core::marker::PhantomData;
use core::time::Duration;

use super::HedgePreset;
use crate::clock::{Clock, Instant};
use crate::preset::Defaults;
use crate::sketch::IndexMapping;
use crate::window::{ExponentialWindow, Parts, Window, WindowConfig, WindowCounter, WindowPreset};

/// Which window a [`Hedger<C, B, M, N>`](super::Hedger) learns in, named by `M`:
///
/// * an [`IndexMapping`] (the default, [`CubicMapping`](crate::sketch::CubicMapping)):
///   a fixed-range [`Window`] of `N` bins of that mapping, over the range of the layout the
///   hedger is built with ([`Hedger::with_layout`](super::Hedger::with_layout));
/// * [`Exponential<K>`]: an auto-scaling [`ExponentialWindow`] of `N` buckets counted in
///   `K`, with no range to choose ([`Hedger::exponential`](super::Hedger::exponential);
///   [`CompactHedger`](super::CompactHedger) is the preset).
///
/// Sealed: implemented for those only. The policy, the decision path and the statistics
/// are the same whichever it is.
///
/// ```
/// use core::time::Duration;
/// use tailguard::budget::RatioBudget;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{CompactHedger, CubicHedger, HedgeConfig, Hedger, WindowKind};
///
/// /// What any hedger learns from 20 latencies of 5 ms.
/// fn learn<M: WindowKind, const N: usize>(
///     hedger: &Hedger<&ManualClock, RatioBudget, M, N>,
/// ) -> Duration {
///     (0..20).for_each(|_| hedger.record(Duration::from_millis(5)));
///     hedger.delay().unwrap()
/// }
/// let clock = ManualClock::new();
/// let fixed: CubicHedger<_> = Hedger::new(&clock, HedgeConfig::new()).unwrap();
/// let compact: CompactHedger<_> = Hedger::exponential(&clock, HedgeConfig::new()).unwrap();
/// let (a, b) = (learn(&fixed), learn(&compact));
/// // Each at the upper edge of 5 ms's bin: 1 % for the cubic window, coarser for the
/// // compact one's first interval.
/// assert!(a >= Duration::from_millis(5) && a.as_secs_f64() <= 5e-3 * 1.01 / 0.99);
/// let accuracy = compact.window().snapshot().relative_accuracy();
/// let most = 5e-3 * (1.0 + accuracy) / (1.0 - accuracy);
/// assert!(b >= Duration::from_millis(5) && b.as_secs_f64() <= most);
/// ```
pub trait WindowKind: sealed::Kind {}

impl<M: IndexMapping> WindowKind for M {}
impl<K: WindowCounter, P: HedgePreset> WindowKind for Exponential<K, P> {}

/// The [`WindowKind`] of a hedger that learns in an [`ExponentialWindow`] whose buckets
/// count in `K` (`u16` or `u32`): see [`CompactHedger`](super::CompactHedger). `P` is the
/// [`HedgePreset`] the hedger and its window store as zero bytes (see
/// [`PresetCompactHedger`](super::PresetCompactHedger)).
///
/// ```
/// use core::time::Duration;
/// use tailguard::budget::RatioBudget;
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{CompactHedger, Exponential, HedgeConfig, Hedger};
///
/// let clock = ManualClock::new();
/// // `u16` by default: the compact hedger.
/// let compact: Hedger<_, RatioBudget, Exponential, 64> =
///     Hedger::exponential(&clock, HedgeConfig::new()).unwrap();
/// let _: &CompactHedger<_> = &compact;
/// // `u32` counts past a `u16` bucket's 32,767 latencies an interval.
/// let wide: Hedger<_, RatioBudget, Exponential<u32>, 64> =
///     Hedger::exponential(&clock, HedgeConfig::new()).unwrap();
/// (0..40_000).for_each(|_| wide.record(Duration::from_millis(1)));
/// assert_eq!((wide.window().count(), wide.window().saturated()), (40_000, 0));
/// ```
pub struct Exponential<K = u16, P = Defaults>(PhantomData<(K, fn() -> P)>);

impl<K, P> fmt::Debug for Exponential<K, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Exponential")
    }
}

pub(crate) mod sealed {
    use super::*;

    /// The window type of a kind.
    pub trait Kind {
        /// The window of `N` bins or buckets.
        type Window<C: Clock, const N: usize>: Learner<C>;
        /// The preset the hedger stores its settings as the XOR of.
        type Preset: HedgePreset;
    }

    /// What a hedger asks of its window: the windows' own methods of these names.
    pub trait Learner<C> {
        /// The window's clock.
        fn clock(&self) -> &C;
        /// Rotates, and refreshes the cached percentiles when asked to.
        fn maintain_at(&self, now: Instant);
        /// The first cached percentile's upper bound (nanoseconds), if trusted.
        fn cached_upper_bound(&self) -> Option<u64>;
        /// The `i`-th cached percentile's upper bound (nanoseconds), if trusted.
        fn cached_upper_bound_of(&self, i: usize) -> Option<u64>;
        /// Records a latency (nanoseconds) at `now`.
        fn record_u64_at(&self, now: Instant, value: u64);
        /// Records a latency.
        fn record_duration(&self, d: Duration);
        /// The latencies at or below `v` and all of them, from one scan.
        fn rank_and_count_u64(&self, v: u64) -> (u64, u64);
        /// The upper bound of the first bin whose cumulative count exceeds `rank`.
        fn first_upper_bound_above(&self, rank: u64) -> Option<u64>;
        /// Becomes the window of `config` and checked `parts`, empty.
        fn reset_from_parts(&mut self, clock: C, config: WindowConfig, parts: Parts);
    }

    impl<M: IndexMapping> Kind for M {
        type Window<C: Clock, const N: usize> = Window<C, M, N>;
        type Preset = Defaults;
    }

    impl<K: WindowCounter, P: HedgePreset> Kind for Exponential<K, P> {
        type Window<C: Clock, const N: usize> = ExponentialWindow<C, K, N, 3, P>;
        type Preset = P;
    }

    /// Both windows' methods, by their own names.
    macro_rules! learner {
        () => {
            fn clock(&self) -> &C {
                Self::clock(self)
            }
            #[inline]
            fn maintain_at(&self, now: Instant) {
                Self::maintain_at(self, now)
            }
            #[inline]
            fn cached_upper_bound(&self) -> Option<u64> {
                Self::cached_upper_bound(self)
            }
            #[inline]
            fn cached_upper_bound_of(&self, i: usize) -> Option<u64> {
                Self::cached_upper_bound_of(self, i)
            }
            #[inline]
            fn record_u64_at(&self, now: Instant, value: u64) {
                Self::record_u64_at(self, now, value)
            }
            fn record_duration(&self, d: Duration) {
                Self::record_duration(self, d)
            }
            fn rank_and_count_u64(&self, v: u64) -> (u64, u64) {
                Self::rank_and_count_u64(self, v)
            }
            fn first_upper_bound_above(&self, rank: u64) -> Option<u64> {
                Self::first_upper_bound_above(self, rank)
            }
            fn reset_from_parts(&mut self, clock: C, config: WindowConfig, parts: Parts) {
                Self::reset_from_parts(self, clock, config, parts)
            }
        };
    }

    impl<C: Clock, M: IndexMapping, const N: usize> Learner<C> for Window<C, M, N> {
        learner!();
    }

    impl<C: Clock, K: WindowCounter, const N: usize, P: WindowPreset> Learner<C>
        for ExponentialWindow<C, K, N, 3, P>
    {
        learner!();
    }
}
