//! One deadline through a five-step workflow: the LLM dialogs of docs/reference.md,
//! workload C, each step hedged by `race_until` under the dialog's 8 s SLA.
//!
//! A dialog makes a `Deadline` when it starts and passes it to every step. Each step races
//! a call to the primary endpoint against a hedge to the replica, sent when the learned
//! p95 has passed with no answer, and only if the backup could still answer in time; once
//! the deadline passes, the step's calls are cancelled and the dialog stops instead of
//! paying for calls that can no longer help.
//!
//! Several ways to run the same 2,000 dialogs from 20 clients in a closed loop (the same
//! draws for every attempt, whatever the policy): one endpoint and no hedging, hedging with
//! `race` (no deadline), hedging with `race_until` (the deadline), and `race_until` with
//! deadline-aware hedging (`HedgeConfig::with_on_time_chance`), each step aimed at its
//! share of the time left (`Deadline::for_step`). Time is virtual: a
//! `ManualClock` that a small executor moves to the next timer, so the run takes a few
//! seconds and is deterministic.
//!
//! ```text
//! cargo run --release --example workflow
//! ```

use core::cell::{Cell, RefCell};
use core::cmp::Reverse;
use core::convert::Infallible;
use core::future::Future;
use core::pin::{pin, Pin};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::collections::BinaryHeap;

use tailguard::clock::{Clock, Instant, ManualClock};
use tailguard::deadline::Deadline;
use tailguard::hedge::{race, race_until, HedgeConfig, Hedger, RaceError};
use tailguard_support::workload::c::{self, endpoint};
use tailguard_support::Rng;

const SEED: u64 = 0xC0FFEE;
const DIALOGS: u64 = 2_000;
/// Dialogs in flight at once, as in the simulator's runs of workload C.
const CLIENTS: usize = 20;

/// Virtual time: the clock, and the instants timers wait for.
#[derive(Default)]
struct Sim {
    clock: ManualClock,
    timers: RefCell<BinaryHeap<Reverse<Instant>>>,
}

impl Sim {
    /// A future that completes at `at`.
    fn at(&self, at: Instant) -> At<'_> {
        At { sim: self, at }
    }

    /// Runs `future` to completion, moving the clock to the next timer whenever it waits.
    fn block_on<F: Future>(&self, future: F) -> F::Output {
        let mut future = pin!(future);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
                return output;
            }
            let now = self.clock.now();
            let next = loop {
                // Timers of dropped futures stay queued: skip those already past.
                match self.timers.borrow_mut().pop() {
                    Some(Reverse(t)) if t <= now => continue,
                    Some(Reverse(t)) => break t,
                    None => panic!("the workflow waits for nothing"),
                }
            };
            self.clock.set(next);
        }
    }
}

struct At<'a> {
    sim: &'a Sim,
    at: Instant,
}

impl Future for At<'_> {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.sim.clock.now() >= self.at {
            return Poll::Ready(());
        }
        self.sim.timers.borrow_mut().push(Reverse(self.at));
        Poll::Pending
    }
}

/// What a run spent.
#[derive(Default)]
struct Bill {
    /// Steps started: one primary call each.
    steps: Cell<u64>,
    /// Hedges sent.
    hedges: Cell<u64>,
    dollars: Cell<f64>,
}

/// One LLM call: answers after its drawn latency; billed in full when it answers, or its
/// prompt and a share of its completion when it is dropped (cancelled) before.
struct Call<'a> {
    wait: At<'a>,
    attempt: u64,
    rng: Rng,
    bill: &'a Bill,
    answered: bool,
}

impl<'a> Call<'a> {
    fn new(sim: &'a Sim, bill: &'a Bill, dialog: u64, step: u64, attempt: u64) -> Self {
        let mut rng = Rng::keyed(SEED, [dialog, step, attempt]);
        let ns = endpoint(attempt).latency_ns(&mut rng).round() as u64;
        let counter = if attempt == 0 {
            &bill.steps
        } else {
            &bill.hedges
        };
        counter.set(counter.get() + 1);
        let at = sim.clock.now().saturating_add(Duration::from_nanos(ns));
        Call {
            wait: sim.at(at),
            attempt,
            rng,
            bill,
            answered: false,
        }
    }

    fn pay(&mut self, won: bool) {
        let cost = endpoint(self.attempt).cost(won, &mut self.rng);
        self.bill.dollars.set(self.bill.dollars.get() + cost);
    }
}

impl Future for Call<'_> {
    type Output = Result<(), Infallible>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        core::task::ready!(Pin::new(&mut self.wait).poll(cx));
        self.answered = true;
        self.pay(true);
        Poll::Ready(Ok(()))
    }
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.pay(false);
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Policy {
    /// Every step waits for the primary endpoint.
    NoHedging,
    /// `race`: a hedge to the replica at the learned p95, no deadline.
    Race,
    /// `race_until`: the same, within the dialog's deadline.
    RaceUntil,
    /// `race_until` with deadline-aware hedging: each step aims at its share of the time
    /// left, and its hedge goes no later than when the primary's chance of answering by
    /// then falls below this level.
    OnTime(f64),
}

/// The dialogs' outcomes under `policy`.
struct Run {
    /// Time to the answer, or to giving up, per dialog (ns).
    latencies: Vec<u64>,
    breaches: u64,
    /// Hedges per step started.
    duplicated: f64,
    dollars: f64,
}

fn run(policy: Policy) -> Run {
    let sim = Sim::default();
    let bill = Bill::default();
    // The hedge at the p95 within a 6 % budget, as in the published comparison.
    let config = HedgeConfig::new()
        .with_percentile(0.95)
        .with_budget_ratio(0.06);
    let config = match policy {
        Policy::OnTime(chance) => config.with_on_time_chance(chance),
        _ => config,
    };
    let hedger = Hedger::new(&sim.clock, config).expect("a valid configuration");
    let sleep = |d: Duration| sim.at(sim.clock.now().saturating_add(d));
    let sla = Duration::from_nanos(c::SLA_NS as u64);

    // One dialog: five steps, each a race, all under the dialog's one deadline.
    let dialog = |id: u64| {
        let (sim, bill, hedger) = (&sim, &bill, &hedger);
        async move {
            let start = sim.clock.now();
            let deadline = Deadline::after(start, sla);
            for step in 0..c::STEPS {
                let primary = Call::new(sim, bill, id, step, 0);
                let mut attempt = 0;
                let backup = || {
                    attempt += 1;
                    Call::new(sim, bill, id, step, attempt)
                };
                let answered = match policy {
                    Policy::NoHedging => primary.await.map_err(|never| match never {}),
                    Policy::Race => race(hedger, primary, backup, sleep).await.map(drop),
                    Policy::RaceUntil => race_until(hedger, deadline, primary, backup, sleep)
                        .await
                        .map(drop),
                    // Each step aims at its share of the time left.
                    Policy::OnTime(_) => {
                        let aimed = deadline.for_step(sim.clock.now(), (c::STEPS - step) as u32);
                        race_until(hedger, aimed, primary, backup, sleep)
                            .await
                            .map(drop)
                    }
                };
                match answered {
                    Ok(()) => {}
                    // The deadline passed: the dialog stops here, its caller told at once.
                    Err(RaceError::DeadlineExceeded) => return (start, false),
                    Err(RaceError::Failed { error, .. }) => match error {},
                }
            }
            (start, true)
        }
    };

    // A closed loop of clients, each starting its next dialog as soon as one ends.
    let next = Cell::new(0);
    let outcomes = RefCell::new(Vec::new());
    let client = || async {
        loop {
            let id = next.get();
            if id == DIALOGS {
                return;
            }
            next.set(id + 1);
            let (start, completed) = dialog(id).await;
            let took = sim.clock.now().duration_since(start);
            outcomes.borrow_mut().push((took, completed && took <= sla));
        }
    };
    sim.block_on(JoinAll(
        (0..CLIENTS).map(|_| Some(Box::pin(client()))).collect(),
    ));

    let outcomes = outcomes.into_inner();
    let mut latencies: Vec<u64> = outcomes
        .iter()
        .map(|(took, _)| took.as_nanos() as u64)
        .collect();
    latencies.sort_unstable();
    Run {
        latencies,
        breaches: outcomes.iter().filter(|(_, in_time)| !in_time).count() as u64,
        duplicated: bill.hedges.get() as f64 / bill.steps.get() as f64,
        dollars: bill.dollars.get(),
    }
}

/// Polls every future until all have finished.
struct JoinAll<F>(Vec<Option<Pin<Box<F>>>>);

impl<F: Future<Output = ()>> Future for JoinAll<F> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        for slot in &mut self.0 {
            if slot
                .as_mut()
                .is_some_and(|f| f.as_mut().poll(cx).is_ready())
            {
                *slot = None;
            }
        }
        if self.0.iter().all(Option::is_none) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// `sorted[floor((n - 1) * q)]`, in ms.
fn percentile_ms(sorted: &[u64], q: f64) -> f64 {
    let rank = ((sorted.len() - 1) as f64 * q) as usize;
    sorted[rank] as f64 / 1e6
}

fn main() {
    println!(
        "{DIALOGS} five-step dialogs (docs/reference.md, workload C), SLA {} s; hedges go to the replica at the learned p95 within a 6 % budget\n",
        c::SLA_NS / 1e9
    );
    println!("| policy | dialog p50 | p99 | p99.9 | SLA breaches | calls duplicated | cost |");
    println!("|---|---|---|---|---|---|---|");
    for (name, policy) in [
        ("single endpoint", Policy::NoHedging),
        ("race (no deadline)", Policy::Race),
        ("race_until (one deadline per dialog)", Policy::RaceUntil),
        (
            "race_until, on-time 80 % (steps aimed at their share)",
            Policy::OnTime(0.8),
        ),
        (
            "race_until, on-time 90 % (steps aimed at their share)",
            Policy::OnTime(0.9),
        ),
    ] {
        let r = run(policy);
        let breaches = 100.0 * r.breaches as f64 / DIALOGS as f64;
        let duplicated = 100.0 * r.duplicated;
        println!(
            "| {name} | {:.0} ms | {:.0} ms | {:.0} ms | {breaches:.2} % | {duplicated:.2} % | ${:.2} |",
            percentile_ms(&r.latencies, 0.5),
            percentile_ms(&r.latencies, 0.99),
            percentile_ms(&r.latencies, 0.999),
            r.dollars,
        );
    }
    println!(
        "\nWith the deadline a breaching dialog ends at 8 s (its caller is told at once) and makes no further calls.\n\
         Published (docs/reference.md, workload C, hedged at 950 ms with a 6 % bucket): p50 2,741 ms, p99 4,880 ms, \
         p99.9 10,004 ms, 0.35 % breaches, 4.48 % duplicated, $41.05."
    );
}
