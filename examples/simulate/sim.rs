//! The simulation: 20 clients in a closed loop, an event heap in simulated time, and the
//! hedger asked at each call's start and whenever its `Wait` has elapsed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use tailguard::clock::{Instant, ManualClock};
use tailguard::deadline::Deadline;
use tailguard::hedge::{Attempt, Decision, Hedger, Stats, Ticket};

use crate::workload::Workload;

/// Clients, each with one job (a request, or a dialog in C) in flight.
const CLIENTS: usize = 20;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// The hedger's `Wait` has elapsed: ask again.
    Check,
    /// Attempt `n` (0 = primary) completed.
    Done(u8),
}

/// (time ns, sequence, client, call generation, kind): a min-heap through `Reverse`.
type Event = Reverse<(u64, u64, usize, u64, Kind)>;

/// One client: the job it is on, and its call in flight.
struct Client {
    job: u64,
    step: u64,
    job_start: u64,
    call_start: u64,
    /// Bumped per call; events of an earlier call are stale.
    generation: u64,
    attempts: u8,
    ticket: Option<Ticket>,
    /// The hedger's delay when the call started (ns), if it had one.
    start_delay: Option<u64>,
}

/// One completed call: when it started, its latency, how many extra attempts it sent and
/// the hedge delay it started with.
pub struct CallRecord {
    /// ns.
    pub start: u64,
    /// ns.
    pub latency: u64,
    pub extra: u8,
    /// The hedger's delay at the call's start (ns): the first `Wait`, or 0 when it hedged
    /// at once; `None` without one (no hedging, or a cold start without a delay). Read
    /// from the decision rather than `Hedger::delay`, which maintains the window and so
    /// would change the run it observes.
    pub delay: Option<u64>,
}

/// What one run of a workload under a policy produced.
pub struct Run {
    /// Job latencies (requests, or dialogs in C), ns.
    pub jobs: Vec<u64>,
    /// Every call (a request, or a dialog step in C).
    pub calls: Vec<CallRecord>,
    /// What the calls cost, in $ (C only).
    pub cost: f64,
    /// The hedger's counters at the end (none without hedging).
    pub stats: Option<Stats>,
    /// (simulated time, the hedger's delay then) every `sample_every`.
    pub delays: Vec<(u64, Option<Duration>)>,
    /// (event time, new delay) whenever the delay changed (when sampling).
    pub changes: Vec<(u64, Option<Duration>)>,
}

impl Run {
    fn extra_attempts(&self) -> u64 {
        self.calls.iter().map(|c| u64::from(c.extra)).sum()
    }

    /// Extra attempts per call, in %.
    pub fn overhead_pct(&self) -> f64 {
        100.0 * self.extra_attempts() as f64 / self.calls.len() as f64
    }
}

/// How a run ends.
#[derive(Clone, Copy)]
pub enum Stop {
    /// After this many jobs.
    Jobs(u64),
    /// No job starts at or after this time (ns).
    Time(u64),
}

/// The state of one run.
struct Sim<'a> {
    workload: Workload,
    clock: &'a ManualClock,
    hedger: Option<&'a Hedger<&'a ManualClock>>,
    heap: BinaryHeap<Event>,
    seq: u64,
    clients: Vec<Client>,
    next_job: u64,
    stop: Stop,
    run: Run,
    /// `--explore` only: force a threshold refresh every this many completions (0: never).
    refresh_every: usize,
}

impl<'a> Sim<'a> {
    fn push(&mut self, t: u64, client: usize, kind: Kind) {
        self.seq += 1;
        let generation = self.clients[client].generation;
        self.heap
            .push(Reverse((t, self.seq, client, generation, kind)));
    }

    fn call_id(&self, client: usize) -> u64 {
        let c = &self.clients[client];
        c.job * self.workload.steps() + c.step
    }

    fn set_clock(&self, t: u64) {
        self.clock.set(Instant::from_nanos(t));
    }

    /// Starts the next job on `client` at `t`, if any is left; false when none is.
    fn start_job(&mut self, client: usize, t: u64) -> bool {
        let more = match self.stop {
            Stop::Jobs(n) => self.next_job < n,
            Stop::Time(end) => t < end,
        };
        if !more {
            return false;
        }
        let c = &mut self.clients[client];
        c.job = self.next_job;
        c.step = 0;
        c.job_start = t;
        self.next_job += 1;
        self.start_call(client, t);
        true
    }

    fn start_call(&mut self, client: usize, t: u64) {
        self.set_clock(t);
        let ticket = self.hedger.map(|h| self.start_ticket(h, client, t));
        let c = &mut self.clients[client];
        c.generation += 1;
        c.call_start = t;
        c.attempts = 1;
        c.ticket = ticket;
        c.start_delay = None;
        let latency = self.workload.latency(self.call_id(client), 0, t);
        self.push(t + latency, client, Kind::Done(0));
        self.ask(client, t);
    }

    /// The ticket of `client`'s call starting at `t`. A hedger with deadline-aware hedging
    /// gets C's dialog deadline (the SLA after the dialog's start), each step aimed at its
    /// share of the time left; others start without one, as the published runs do.
    fn start_ticket(&self, hedger: &Hedger<&ManualClock>, client: usize, t: u64) -> Ticket {
        let c = &self.clients[client];
        match (hedger.config().on_time_chance(), self.workload.sla_ns()) {
            (Some(_), Some(sla)) => {
                let dialog =
                    Deadline::after(Instant::from_nanos(c.job_start), Duration::from_nanos(sla));
                let steps_left = self.workload.steps().saturating_sub(c.step);
                let step = dialog.for_step(Instant::from_nanos(t), steps_left as u32);
                hedger.start_with_deadline(step)
            }
            _ => hedger.start(),
        }
    }

    /// Asks the hedger about `client`'s call at `t` (the clock is already at `t`).
    fn ask(&mut self, client: usize, t: u64) {
        let Some(hedger) = self.hedger else { return };
        loop {
            let c = &self.clients[client];
            let at_start = t == c.call_start && c.attempts == 1;
            let Some(ticket) = self.clients[client].ticket.as_mut() else {
                return;
            };
            let decision = hedger.should_hedge(ticket);
            if at_start {
                // At the start a `Wait` is the whole delay.
                self.clients[client].start_delay = match decision {
                    Decision::Wait(d) => Some(u64::try_from(d.as_nanos()).unwrap()),
                    Decision::Hedge => Some(0),
                    Decision::Skip(_) => None,
                };
            }
            match decision {
                Decision::Wait(d) => {
                    let wait = u64::try_from(d.as_nanos()).unwrap().max(1);
                    self.push(t + wait, client, Kind::Check);
                    return;
                }
                Decision::Hedge => {
                    let attempt = self.clients[client].attempts;
                    self.clients[client].attempts += 1;
                    let latency =
                        self.workload
                            .latency(self.call_id(client), u64::from(attempt), t);
                    self.push(t + latency, client, Kind::Done(attempt));
                    // Ask again: with max_hedges > 1 a second hedge may be due later.
                }
                Decision::Skip(_) => return,
            }
        }
    }

    fn complete(&mut self, client: usize, t: u64, winner: u8) {
        self.set_clock(t);
        let call = self.call_id(client);
        let c = &self.clients[client];
        if let (Some(hedger), Some(ticket)) = (self.hedger, c.ticket.as_ref()) {
            let attempt = if winner == 0 {
                Attempt::Primary
            } else {
                Attempt::Hedge(winner)
            };
            hedger.on_success(ticket, attempt);
            if self.refresh_every > 0
                && (self.run.calls.len() + 1).is_multiple_of(self.refresh_every)
            {
                hedger.window().refresh();
            }
        }
        for a in 0..c.attempts {
            self.run.cost += self.workload.cost(call, u64::from(a), a == winner);
        }
        self.run.calls.push(CallRecord {
            start: c.call_start,
            latency: t - c.call_start,
            extra: c.attempts - 1,
            delay: c.start_delay,
        });
        let c = &mut self.clients[client];
        c.generation += 1; // the losers are cancelled: their events are stale
        c.ticket = None;
        c.step += 1;
        if c.step < self.workload.steps() {
            self.start_call(client, t);
        } else {
            self.run.jobs.push(t - c.job_start);
            self.start_job(client, t);
        }
    }
}

/// Runs `workload` with `hedger` (none: no hedging), sampling the delay every
/// `sample_every` ns of simulated time (0: never).
pub fn simulate<'c>(
    workload: Workload,
    clock: &'c ManualClock,
    hedger: Option<&'c Hedger<&'c ManualClock>>,
    stop: Stop,
    sample_every: u64,
    refresh_every: usize,
) -> Run {
    let mut sim = Sim {
        workload,
        clock,
        hedger,
        heap: BinaryHeap::new(),
        seq: 0,
        clients: (0..CLIENTS)
            .map(|_| Client {
                job: 0,
                step: 0,
                job_start: 0,
                call_start: 0,
                generation: 0,
                attempts: 0,
                ticket: None,
                start_delay: None,
            })
            .collect(),
        next_job: 0,
        stop,
        refresh_every,
        run: Run {
            jobs: Vec::new(),
            calls: Vec::new(),
            cost: 0.0,
            stats: None,
            delays: Vec::new(),
            changes: Vec::new(),
        },
    };
    for client in 0..CLIENTS {
        sim.start_job(client, 0);
    }
    let mut next_sample = 0;
    while let Some(Reverse((t, _, client, generation, kind))) = sim.heap.pop() {
        while sample_every > 0 && next_sample <= t {
            sim.set_clock(next_sample);
            let delay = hedger.and_then(|h| h.delay().ok());
            sim.run.delays.push((next_sample, delay));
            next_sample += sample_every;
        }
        if generation != sim.clients[client].generation {
            continue; // a cancelled loser or a check for a finished call
        }
        match kind {
            Kind::Check => {
                sim.set_clock(t);
                sim.ask(client, t);
            }
            Kind::Done(attempt) => sim.complete(client, t, attempt),
        }
        if sample_every > 0 {
            let delay = hedger.and_then(|h| h.delay().ok());
            if sim.run.changes.last().is_none_or(|&(_, d)| d != delay) {
                sim.run.changes.push((t, delay));
            }
        }
    }
    sim.run.stats = hedger.map(|h| h.stats());
    sim.run
}
