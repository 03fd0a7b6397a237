//! A sub-millisecond sleep for the backend's latency model.
//!
//! tokio's timer wheel has a 1 ms resolution: `tokio::time::sleep(d)` ends at the first
//! millisecond tick after `d`, adding up to 1 ms to every simulated latency. The model's
//! p50 is about 5 ms, so that alone would move it by 10 %. This timer thread sleeps on a
//! condition variable until the earliest deadline (a futex wait: about 50-100 µs late on
//! Linux) and wakes the tasks whose deadline has passed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

struct Timers {
    /// (deadline, sequence number, waker): the sequence number keeps the heap's order
    /// total without comparing wakers.
    heap: Mutex<BinaryHeap<Reverse<(Instant, u64, WakerSlot)>>>,
    changed: Condvar,
}

struct WakerSlot(Waker);

impl PartialEq for WakerSlot {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for WakerSlot {}
impl PartialOrd for WakerSlot {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for WakerSlot {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

fn timers() -> &'static Arc<Timers> {
    static TIMERS: OnceLock<Arc<Timers>> = OnceLock::new();
    TIMERS.get_or_init(|| {
        let timers = Arc::new(Timers {
            heap: Mutex::new(BinaryHeap::new()),
            changed: Condvar::new(),
        });
        let worker = Arc::clone(&timers);
        std::thread::Builder::new()
            .name("precise-timer".into())
            .spawn(move || run(&worker))
            .ok();
        timers
    })
}

fn run(timers: &Timers) {
    let mut heap = timers.heap.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        let now = Instant::now();
        while let Some(Reverse((deadline, _, _))) = heap.peek() {
            if *deadline > now {
                break;
            }
            if let Some(Reverse((_, _, waker))) = heap.pop() {
                waker.0.wake();
            }
        }
        heap = match heap.peek() {
            Some(Reverse((deadline, _, _))) => {
                let wait = deadline.saturating_duration_since(now);
                timers
                    .changed
                    .wait_timeout(heap, wait)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => timers
                .changed
                .wait(heap)
                .unwrap_or_else(PoisonError::into_inner),
        };
    }
}

/// A future that completes `duration` from now, to within about 0.1 ms.
pub fn sleep(duration: Duration) -> Sleep {
    Sleep {
        deadline: Instant::now() + duration,
        registered: None,
    }
}

/// See [`sleep`].
pub struct Sleep {
    deadline: Instant,
    /// The waker last handed to the timer thread.
    registered: Option<Waker>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            return Poll::Ready(());
        }
        if self
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            return Poll::Pending; // polled again before the deadline: already queued
        }
        static SEQUENCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let seq = SEQUENCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let timers = timers();
        let mut heap = timers.heap.lock().unwrap_or_else(PoisonError::into_inner);
        let earliest = heap
            .peek()
            .is_none_or(|Reverse((d, _, _))| self.deadline < *d);
        heap.push(Reverse((self.deadline, seq, WakerSlot(cx.waker().clone()))));
        drop(heap);
        if earliest {
            timers.changed.notify_one();
        }
        self.registered = Some(cx.waker().clone());
        Poll::Pending
    }
}
