//! Adversarial review of the auto-scaling exponential parts: promises the docs make that
//! the code once broke.

use core::time::Duration;
use tailguard::clock::ManualClock;
use tailguard::window::ExponentialWindow;

/// "Time is cut into intervals by the clock, as in a `Window`: queries see the current
/// interval and the `SLOTS - 2` before it": after an idle gap, with no record and no
/// maintenance since, the queries must not report values of intervals long gone (the
/// fixed-range `Window`'s queries maintain first).
#[test]
fn exponential_window_queries_forget_after_an_idle_gap() {
    let clock = ManualClock::new();
    let w = ExponentialWindow::<_, u16, 16>::new(&clock, Duration::from_secs(1)).unwrap();
    w.record_u64(1000);
    clock.advance(Duration::from_secs(10));
    assert_eq!(w.count(), 0, "{w:?}");
    assert_eq!(w.quantile(0.5).unwrap(), None, "{w:?}");
    assert!(w.snapshot().is_empty());
    assert_eq!(w.expired(), 1);
}
