//! A deterministic discrete-event simulation of hedged requests that drives the real
//! [`Hedger`] through the workloads of REFERENCE.md section 4 (A, C and D), plus workload A
//! with a distribution shift.
//!
//! ```text
//! cargo run --release --example simulate            # markdown tables and target checks
//! cargo run --release --example simulate -- --csv   # workload,config,p50,p90,p95,p99,p999,overhead_pct
//! cargo run --release --example simulate -- --explore  # plus other tailguard settings (diagnosis)
//! ```
//!
//! * Simulated time only: one [`ManualClock`] per run, shared with the hedger and set to
//!   each event's time before the hedger is called. Events (a request or step starts, a
//!   hedge check falls due, an attempt completes) are taken from a binary heap in time
//!   order. A hedge check happens when the hedger's `Wait` has elapsed, and the hedger is
//!   asked again then (its delay may have moved meanwhile).
//! * Closed loop: 20 clients, each starting its next request (A, D) or dialog (C) as soon as
//!   the previous one is done. The first attempt to complete wins; the others are cancelled
//!   then (and cost what a cancelled call costs in C).
//! * Common random numbers: the latency of attempt `k` of call `i` is a pure function of
//!   (seed, workload, i, k), so every configuration of a workload sees the same draws and
//!   rows differ only by policy.
//! * Every hedged row goes through `Hedger`: static rows are hedgers whose delay is clamped
//!   to one value (`min_delay = max_delay`, cold start at that delay). Rows without a
//!   budget use a ratio budget of 1.0 (one token deposited per request, at most one hedge
//!   per request: it never refuses); `static 950` in C has a 6 % ratio budget.
//! * Percentiles are `sorted[int((n - 1) * p)]`; overhead is extra attempts per request
//!   (per call in C).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use tailguard::clock::{Instant, ManualClock};
use tailguard::hedge::{Attempt, ColdStart, Decision, HedgeConfig, Hedger, Stats, Ticket};

const SEED: u64 = 0x7461_696c_6775_6172; // "tailguar"
const CLIENTS: usize = 20;
const MS: f64 = 1e6; // nanoseconds per millisecond
const SEC: u64 = 1_000_000_000;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

// ---------------------------------------------------------------------------------------
// Workloads.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Workload {
    /// REFERENCE 4A: log-normal mean 5 ms sd 2 ms, 5 % of draws times 10.
    A,
    /// 4A with the base latency doubled from `SHIFT_START` to `SHIFT_END`.
    AShift,
    /// REFERENCE 4C: five-step LLM dialogs, primary endpoint, hedges to a replica.
    C,
    /// REFERENCE 4D: one LLM call, lognormal(0, 0.35) s, 5 % uniform(6, 10) s.
    D,
}

// Deliberately not on the 30 s window boundaries: the shift ends mid-interval, so its
// samples stay in the window for up to two intervals.
const SHIFT_START: u64 = 75 * SEC;
const SHIFT_END: u64 = 135 * SEC;
const SHIFT_RUN_END: u64 = 210 * SEC;

impl Workload {
    fn key(self) -> u64 {
        match self {
            // The shift scenario reuses A's draws: only the scale differs.
            Workload::A | Workload::AShift => 1,
            Workload::C => 3,
            Workload::D => 4,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Workload::A => "A",
            Workload::AShift => "A-shift",
            Workload::C => "C",
            Workload::D => "D",
        }
    }

    /// Calls per job (a request, or a dialog in C).
    fn steps(self) -> u64 {
        match self {
            Workload::C => 5,
            _ => 1,
        }
    }

    /// The latency in ns of attempt `attempt` of call `call`, sent at `sent` (ns).
    fn latency(self, call: u64, attempt: u64, sent: u64) -> u64 {
        let mut rng = Rng::keyed(SEED, [self.key(), call, attempt, 0]);
        let ns = match self {
            Workload::A | Workload::AShift => {
                let sigma = 1.16f64.ln().sqrt();
                let mu = (5.0 * MS).ln() - sigma * sigma / 2.0;
                let base = rng.lognormal(mu, sigma);
                let straggler = rng.unit() < 0.05;
                let shifted = self == Workload::AShift && (SHIFT_START..SHIFT_END).contains(&sent);
                base * if straggler { 10.0 } else { 1.0 } * if shifted { 2.0 } else { 1.0 }
            }
            Workload::C => {
                // Attempt 0 goes to the primary endpoint, backups to the replica.
                let (median, cap, stall_p, stall_lo, stall_hi) = if attempt == 0 {
                    (520.0, 0.96 * 950.0, 0.045, 4200.0, 9800.0)
                } else {
                    (560.0, 0.96 * 980.0, 0.035, 3800.0, 8500.0)
                };
                let normal = (median * rng.lognormal(0.0, 0.22)).clamp(180.0, cap);
                let ms = if rng.unit() < stall_p {
                    rng.uniform(stall_lo, stall_hi)
                } else {
                    normal
                };
                ms * MS
            }
            Workload::D => {
                let normal = rng.lognormal(0.0, 0.35);
                let s = if rng.unit() < 0.05 {
                    rng.uniform(6.0, 10.0)
                } else {
                    normal
                };
                s * 1e3 * MS
            }
        };
        ns.round() as u64
    }

    /// C's cost in $ of attempt `attempt` of call `call`: in full when it won, its prompt
    /// plus 15-25 % of its completion when it was cancelled.
    fn cost(self, call: u64, attempt: u64, won: bool) -> f64 {
        if self != Workload::C {
            return 0.0;
        }
        let (prompt, completion) = if attempt == 0 {
            (0.0018, 0.0022)
        } else {
            (0.0019, 0.0023)
        };
        if won {
            prompt + completion
        } else {
            prompt
                + completion * Rng::keyed(SEED, [self.key(), call, attempt, 1]).uniform(0.15, 0.25)
        }
    }
}

// ---------------------------------------------------------------------------------------
// The event loop.

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// The hedger's `Wait` has elapsed: ask again.
    Check,
    /// Attempt `n` (0 = primary) completed.
    Done(u8),
}

/// (time ns, sequence, client, call generation, kind): a min-heap through `Reverse`.
type Event = Reverse<(u64, u64, usize, u64, Kind)>;

struct Client {
    job: u64,
    step: u64,
    job_start: u64,
    call_start: u64,
    /// Bumped per call; events of an earlier call are stale.
    generation: u64,
    attempts: u8,
    ticket: Option<Ticket>,
}

/// One completed call: when it started, its latency and how many extra attempts it sent.
struct CallRecord {
    start: u64,
    latency: u64,
    extra: u8,
}

struct Run {
    /// Job latencies (requests, or dialogs in C), ns.
    jobs: Vec<u64>,
    calls: Vec<CallRecord>,
    cost: f64,
    stats: Option<Stats>,
    /// (simulated time, the hedger's delay then) every `sample_every`.
    delays: Vec<(u64, Option<Duration>)>,
    /// (event time, new delay) whenever the delay changed (when sampling).
    changes: Vec<(u64, Option<Duration>)>,
}

impl Run {
    fn extra_attempts(&self) -> u64 {
        self.calls.iter().map(|c| u64::from(c.extra)).sum()
    }

    fn overhead_pct(&self) -> f64 {
        100.0 * self.extra_attempts() as f64 / self.calls.len() as f64
    }
}

/// How a run ends.
#[derive(Clone, Copy)]
enum Stop {
    /// After this many jobs.
    Jobs(u64),
    /// No job starts at or after this time (ns).
    Time(u64),
}

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
        let ticket = self.hedger.map(|h| h.start());
        let c = &mut self.clients[client];
        c.generation += 1;
        c.call_start = t;
        c.attempts = 1;
        c.ticket = ticket;
        let latency = self.workload.latency(self.call_id(client), 0, t);
        self.push(t + latency, client, Kind::Done(0));
        self.ask(client, t);
    }

    /// Asks the hedger about `client`'s call at `t` (the clock is already at `t`).
    fn ask(&mut self, client: usize, t: u64) {
        let Some(hedger) = self.hedger else { return };
        loop {
            let Some(ticket) = self.clients[client].ticket.as_mut() else {
                return;
            };
            match hedger.should_hedge(ticket) {
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
fn simulate(
    workload: Workload,
    clock: &ManualClock,
    hedger: Option<&Hedger<&ManualClock>>,
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

// ---------------------------------------------------------------------------------------
// Policies.

#[derive(Clone, Copy)]
enum Policy {
    None,
    /// A fixed delay (ms); `budget` is the ratio budget (`None`: unlimited).
    Static {
        ms: u64,
        budget: Option<f64>,
    },
    /// Both attempts at once.
    Blind,
    /// The adaptive hedger with this configuration.
    Adaptive(HedgeConfig),
}

fn fixed_delay(d: Duration, budget: Option<f64>) -> HedgeConfig {
    HedgeConfig::new()
        .min_delay(d)
        .max_delay(d)
        .cold_start(ColdStart::Delay(d))
        // 1.0: each request deposits a whole token and spends at most one: never binds.
        .budget_ratio(budget.unwrap_or(1.0))
}

struct Row {
    name: String,
    run: Run,
    sweep: bool,
}

fn run_policy(workload: Workload, policy: Policy, stop: Stop, sample_every: u64) -> Run {
    run_policy_refreshing(workload, policy, stop, sample_every, 0)
}

fn run_policy_refreshing(
    workload: Workload,
    policy: Policy,
    stop: Stop,
    sample_every: u64,
    refresh_every: usize,
) -> Run {
    let clock = ManualClock::new();
    let config = match policy {
        Policy::None => None,
        Policy::Static { ms, budget } => Some(fixed_delay(Duration::from_millis(ms), budget)),
        Policy::Blind => Some(fixed_delay(Duration::ZERO, None)),
        Policy::Adaptive(config) => Some(config),
    };
    let hedger = config.map(|c| Hedger::new(&clock, c).unwrap());
    simulate(
        workload,
        &clock,
        hedger.as_ref(),
        stop,
        sample_every,
        refresh_every,
    )
}

// ---------------------------------------------------------------------------------------
// Statistics and output.

const QS: [f64; 5] = [0.5, 0.9, 0.95, 0.99, 0.999];

/// p50, p90, p95, p99, p99.9 in ms: `sorted[int((n - 1) * p)]`.
fn percentiles(values: &[u64]) -> [f64; 5] {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    QS.map(|q| {
        if sorted.is_empty() {
            f64::NAN
        } else {
            sorted[((sorted.len() - 1) as f64 * q) as usize] as f64 / MS
        }
    })
}

fn sla_breach_pct(run: &Run) -> f64 {
    let sla = 8_000.0 * MS;
    let breaches = run.jobs.iter().filter(|&&l| l as f64 > sla).count();
    100.0 * breaches as f64 / run.jobs.len() as f64
}

/// The static frontier: the lowest p99 a static delay reaches at `overhead` (%),
/// interpolated linearly between the Pareto-optimal sweep points (no hedging is the point
/// at 0 %); above the largest overhead, the best p99 of the sweep.
fn frontier_p99(points: &[(f64, f64)], overhead: f64) -> f64 {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut pareto: Vec<(f64, f64)> = Vec::new();
    for p in sorted {
        if pareto.last().is_none_or(|last| p.1 < last.1) {
            pareto.push(p);
        }
    }
    for pair in pareto.windows(2) {
        let ((o0, p0), (o1, p1)) = (pair[0], pair[1]);
        if overhead <= o1 {
            if overhead <= o0 {
                return p0;
            }
            return p0 + (p1 - p0) * (overhead - o0) / (o1 - o0);
        }
    }
    pareto.last().map_or(f64::NAN, |p| p.1)
}

fn fmt_ms(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{ms:.0}")
    } else {
        format!("{ms:.1}")
    }
}

struct Report {
    markdown: String,
    csv: String,
    checks: Vec<(bool, String)>,
    explore: bool,
}

impl Report {
    fn check(&mut self, ok: bool, text: String) {
        self.checks.push((ok, text));
    }
}

fn table(report: &mut Report, workload: Workload, title: &str, rows: &[Row]) {
    let c = workload == Workload::C;
    let md = &mut report.markdown;
    let _ = writeln!(md, "### {title}\n");
    if c {
        let _ = writeln!(
            md,
            "| config | p50 | p90 | p95 | p99 | p99.9 | duplicated calls | SLA breaches | cost |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
    } else {
        let _ = writeln!(md, "| config | p50 | p90 | p95 | p99 | p99.9 | overhead |");
        let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    }
    for row in rows {
        let p = percentiles(&row.run.jobs);
        let mut line = format!("| {} |", row.name);
        for v in p {
            let _ = write!(line, " {} |", fmt_ms(v));
        }
        let _ = write!(line, " {:.2} % |", row.run.overhead_pct());
        if c {
            let _ = write!(
                line,
                " {:.2} % | ${:.2} |",
                sla_breach_pct(&row.run),
                row.run.cost
            );
        }
        let _ = writeln!(md, "{line}");
        let _ = writeln!(
            report.csv,
            "{},{},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3}",
            workload.name(),
            row.name,
            p[0],
            p[1],
            p[2],
            p[3],
            p[4],
            row.run.overhead_pct()
        );
    }
    let _ = writeln!(md);
    for row in rows.iter().filter(|r| r.name.starts_with("tailguard")) {
        if let Some(stats) = row.run.stats {
            let _ = writeln!(md, "`{}` hedger: {stats}\n", row.name);
        }
    }
}

/// The static frontier's points: (overhead %, p99 ms) of the sweep rows and of no hedging.
fn sweep_points(rows: &[Row]) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.sweep)
        .map(|r| (r.run.overhead_pct(), percentiles(&r.run.jobs)[3]))
        .collect();
    if let Some(none) = rows.iter().find(|r| r.name == "no hedging") {
        points.push((0.0, percentiles(&none.run.jobs)[3]));
    }
    points
}

/// Checks every tailguard row against the static frontier.
fn frontier_checks(report: &mut Report, workload: Workload, rows: &[Row]) {
    let points = sweep_points(rows);
    for row in rows.iter().filter(|r| r.name.starts_with("tailguard")) {
        let overhead = row.run.overhead_pct();
        let p99 = percentiles(&row.run.jobs)[3];
        let frontier = frontier_p99(&points, overhead);
        let ratio = p99 / frontier;
        report.check(
            ratio <= 1.03,
            format!(
                "frontier check {} `{}`: p99 {} ms at {:.2} % overhead; static frontier there \
                 {} ms; {:+.1} % (target <= +3 %)",
                workload.name(),
                row.name,
                fmt_ms(p99),
                overhead,
                fmt_ms(frontier),
                100.0 * (ratio - 1.0)
            ),
        );
    }
}

/// `--explore`: other tailguard configurations on the same draws, for diagnosis only
/// (not in the CSV, not checked against targets).
/// A variant: a name, a configuration, and a forced threshold refresh every so many
/// completions (0: the library's own refresh only).
type Variant<'n> = (&'n str, HedgeConfig, usize);

fn explore(report: &mut Report, workload: Workload, rows: &[Row], variants: &[Variant]) {
    let points = sweep_points(rows);
    let stop = match workload {
        Workload::C => Stop::Jobs(C_DIALOGS),
        Workload::D => Stop::Jobs(D_REQUESTS),
        _ => Stop::Jobs(A_REQUESTS),
    };
    let md = &mut report.markdown;
    let _ = writeln!(md, "#### {} explored (diagnosis only)\n", workload.name());
    let _ = writeln!(
        md,
        "| config | p50 | p99 | p99.9 | overhead | denied by budget | skipped cold | final delay | vs frontier | SLA breaches |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|");
    for &(name, config, refresh) in variants {
        let run = run_policy_refreshing(workload, Policy::Adaptive(config), stop, 0, refresh);
        let p = percentiles(&run.jobs);
        let stats = run.stats.unwrap();
        let frontier = frontier_p99(&points, run.overhead_pct());
        let _ = writeln!(
            md,
            "| {name} | {} | {} | {} | {:.2} % | {} | {} | {:.1} ms | {:+.1} % | {} |",
            fmt_ms(p[0]),
            fmt_ms(p[3]),
            fmt_ms(p[4]),
            run.overhead_pct(),
            stats.denied_budget,
            stats.skipped_cold,
            stats.delay.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3),
            100.0 * (p[3] / frontier - 1.0),
            if workload == Workload::C {
                format!("{:.2} %", sla_breach_pct(&run))
            } else {
                "-".to_string()
            },
        );
    }
    let _ = writeln!(md);
}

fn row(workload: Workload, name: &str, policy: Policy, stop: Stop, sweep: bool) -> Row {
    Row {
        name: name.to_string(),
        run: run_policy(workload, policy, stop, 0),
        sweep,
    }
}

/// The named rows, then the static sweep (pure delays, no budget) not already named.
fn rows_with_sweep(
    workload: Workload,
    named: Vec<(&str, Policy)>,
    sweep_ms: &[u64],
    stop: Stop,
) -> Vec<Row> {
    let mut rows: Vec<Row> = named
        .into_iter()
        .map(|(name, policy)| {
            let sweep = matches!(policy, Policy::Static { budget: None, .. });
            row(workload, name, policy, stop, sweep)
        })
        .collect();
    for &ms in sweep_ms {
        let name = format!("static {ms}");
        if rows.iter().any(|r| r.name == name) {
            continue;
        }
        rows.push(row(
            workload,
            &name,
            Policy::Static { ms, budget: None },
            stop,
            true,
        ));
    }
    rows
}

fn find<'r>(rows: &'r [Row], name: &str) -> &'r Run {
    &rows.iter().find(|r| r.name == name).unwrap().run
}

const A_REQUESTS: u64 = 50_000;
const C_DIALOGS: u64 = 2_000;
const D_REQUESTS: u64 = 50_000;

fn workload_a(report: &mut Report) {
    let stop = Stop::Jobs(A_REQUESTS);
    let rows = rows_with_sweep(
        Workload::A,
        vec![
            ("no hedging", Policy::None),
            (
                "static 10",
                Policy::Static {
                    ms: 10,
                    budget: None,
                },
            ),
            (
                "static 50",
                Policy::Static {
                    ms: 50,
                    budget: None,
                },
            ),
            ("tailguard default", Policy::Adaptive(HedgeConfig::new())),
        ],
        &[5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 17, 20, 25, 30, 40, 60],
        stop,
    );
    table(
        report,
        Workload::A,
        "A: 50,000 requests, log-normal 5 ms (sd 2 ms), 5 % x10 stragglers, 20 clients (ms)",
        &rows,
    );
    frontier_checks(report, Workload::A, &rows);
    if report.explore {
        let d = HedgeConfig::new();
        explore(
            report,
            Workload::A,
            &rows,
            &[
                ("p90 10% cap 10 (default)", d, 0),
                ("p90 10% cap 50", d.budget_cap(50), 0),
                ("p90 15% cap 10", d.budget_ratio(0.15), 0),
                ("p91 10% cap 10", d.percentile(0.91), 0),
                ("p92 10% cap 10", d.percentile(0.92), 0),
                ("p93 10% cap 10", d.percentile(0.93), 0),
                ("p95 10% cap 10", d.percentile(0.95), 0),
                ("p90 10% cap 10, refresh every 64", d, 64),
                ("p90 10% cap 50, refresh every 64", d.budget_cap(50), 64),
            ],
        );
    }
    let none = percentiles(&find(&rows, "no hedging").jobs);
    let tg = find(&rows, "tailguard default");
    let p = percentiles(&tg.jobs);
    let overhead = tg.overhead_pct();
    report.check(
        p[3] <= 17.3 && overhead <= 10.0,
        format!(
            "A defaults: p99 {} ms (target <= 17.3) at {overhead:.2} % overhead (target <= 10 %)",
            fmt_ms(p[3])
        ),
    );
    report.check(
        p[4] <= 50.0,
        format!("A defaults: p99.9 {} ms (target <= 50)", fmt_ms(p[4])),
    );
    let drift = 100.0 * (p[0] / none[0] - 1.0);
    report.check(
        drift.abs() <= 3.0,
        format!(
            "A defaults: p50 {} ms vs {} ms without hedging: {drift:+.1} % (target within 3 %)",
            fmt_ms(p[0]),
            fmt_ms(none[0])
        ),
    );
}

fn workload_c(report: &mut Report) {
    let stop = Stop::Jobs(C_DIALOGS);
    let rows = rows_with_sweep(
        Workload::C,
        vec![
            ("no hedging", Policy::None),
            ("blind race", Policy::Blind),
            (
                "static 950 6%",
                Policy::Static {
                    ms: 950,
                    budget: Some(0.06),
                },
            ),
            (
                "tailguard p95 6%",
                Policy::Adaptive(HedgeConfig::new().percentile(0.95).budget_ratio(0.06)),
            ),
        ],
        &[
            500, 600, 700, 800, 850, 900, 950, 1000, 1100, 1250, 1500, 2000, 2500, 3000, 4000,
        ],
        stop,
    );
    table(
        report,
        Workload::C,
        "C: 2,000 five-step dialogs (dialog latency, ms), hedges to the replica, 20 concurrent",
        &rows,
    );
    let _ = writeln!(
        report.markdown,
        "Cost: the winner pays prompt + completion, a cancelled loser its prompt plus 15-25 % \
         of its completion (also in the blind race).\n"
    );
    frontier_checks(report, Workload::C, &rows);
    if report.explore {
        let d = HedgeConfig::new().percentile(0.95).budget_ratio(0.06);
        explore(
            report,
            Workload::C,
            &rows,
            &[
                ("p95 6% (the row)", d, 0),
                ("p95 6% cap 50", d.budget_cap(50), 0),
                ("p95 6% min_samples 10", d.min_samples(10), 0),
                (
                    "p95 6% min_samples 10 cap 50",
                    d.min_samples(10).budget_cap(50),
                    0,
                ),
                ("p95 10%", d.budget_ratio(0.1), 0),
                ("p94 6%", d.percentile(0.94), 0),
                ("p95 6%, refresh every 64", d, 64),
            ],
        );
    }
    let st = find(&rows, "static 950 6%");
    let tg = find(&rows, "tailguard p95 6%");
    let (ps, pt) = (percentiles(&st.jobs), percentiles(&tg.jobs));
    report.check(
        pt[3] <= ps[3],
        format!(
            "C: tailguard p99 {} ms vs static 950 6% {} ms (target: no higher)",
            fmt_ms(pt[3]),
            fmt_ms(ps[3])
        ),
    );
    report.check(
        tg.overhead_pct() <= st.overhead_pct() + 0.5,
        format!(
            "C: duplicated calls {:.2} % vs {:.2} % (target: at most +0.5 points)",
            tg.overhead_pct(),
            st.overhead_pct()
        ),
    );
    report.check(
        sla_breach_pct(tg) <= sla_breach_pct(st),
        format!(
            "C: SLA breaches {:.2} % vs {:.2} % (target: no higher)",
            sla_breach_pct(tg),
            sla_breach_pct(st)
        ),
    );
}

fn workload_d(report: &mut Report) {
    let stop = Stop::Jobs(D_REQUESTS);
    let rows = rows_with_sweep(
        Workload::D,
        vec![
            ("no hedging", Policy::None),
            (
                "static 1500",
                Policy::Static {
                    ms: 1500,
                    budget: None,
                },
            ),
            ("tailguard default", Policy::Adaptive(HedgeConfig::new())),
        ],
        &[
            800, 1000, 1250, 1750, 2000, 2250, 2500, 3000, 3500, 4000, 5000, 6000, 7000,
        ],
        stop,
    );
    table(
        report,
        Workload::D,
        "D: 50,000 single LLM calls, lognormal(0, 0.35) s, 5 % uniform(6, 10) s, 20 clients (ms)",
        &rows,
    );
    frontier_checks(report, Workload::D, &rows);
    if report.explore {
        let d = HedgeConfig::new();
        explore(
            report,
            Workload::D,
            &rows,
            &[
                ("p90 10% cap 10 (default)", d, 0),
                ("p90 10% cap 50", d.budget_cap(50), 0),
                ("p92 10% cap 10", d.percentile(0.92), 0),
                ("p95 10% cap 10", d.percentile(0.95), 0),
            ],
        );
    }
}

fn workload_shift(report: &mut Report) {
    let stop = Stop::Time(SHIFT_RUN_END);
    let sample = 5 * SEC;
    let runs = [
        (
            "static 10",
            run_policy(
                Workload::AShift,
                Policy::Static {
                    ms: 10,
                    budget: None,
                },
                stop,
                sample,
            ),
        ),
        (
            "static 10 10%",
            run_policy(
                Workload::AShift,
                Policy::Static {
                    ms: 10,
                    budget: Some(0.1),
                },
                stop,
                sample,
            ),
        ),
        (
            "tailguard default",
            run_policy(
                Workload::AShift,
                Policy::Adaptive(HedgeConfig::new()),
                stop,
                sample,
            ),
        ),
    ];
    let phases = [
        ("before", 0, SHIFT_START),
        ("during", SHIFT_START, SHIFT_END),
        ("after", SHIFT_END, SHIFT_RUN_END),
    ];
    let md = &mut report.markdown;
    let _ = writeln!(
        md,
        "### A with a shift: base latency x2 from {} s to {} s, requests started in [0, {}) s\n",
        SHIFT_START / SEC,
        SHIFT_END / SEC,
        SHIFT_RUN_END / SEC
    );
    let _ = writeln!(
        md,
        "| config | phase | requests | p50 | p90 | p95 | p99 | p99.9 | hedge rate |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
    let mut tg_rates = [0.0; 3];
    for (name, run) in &runs {
        for (i, (phase, from, to)) in phases.iter().enumerate() {
            let calls: Vec<&CallRecord> = run
                .calls
                .iter()
                .filter(|c| (*from..*to).contains(&c.start))
                .collect();
            let latencies: Vec<u64> = calls.iter().map(|c| c.latency).collect();
            let extra: u64 = calls.iter().map(|c| u64::from(c.extra)).sum();
            let rate = 100.0 * extra as f64 / calls.len() as f64;
            if name.starts_with("tailguard") {
                tg_rates[i] = rate;
            }
            let p = percentiles(&latencies);
            let _ = writeln!(
                md,
                "| {name} | {phase} | {} | {} | {} | {} | {} | {} | {rate:.2} % |",
                calls.len(),
                fmt_ms(p[0]),
                fmt_ms(p[1]),
                fmt_ms(p[2]),
                fmt_ms(p[3]),
                fmt_ms(p[4])
            );
            let _ = writeln!(
                report.csv,
                "{},{name} {phase},{:.3},{:.3},{:.3},{:.3},{:.3},{rate:.3}",
                Workload::AShift.name(),
                p[0],
                p[1],
                p[2],
                p[3],
                p[4]
            );
        }
    }
    let _ = writeln!(md);
    let tg = &runs[2].1;
    let _ = writeln!(
        md,
        "tailguard default delay (ms) every 5 s of simulated time (static 10 stays at 10):\n"
    );
    let delay_ms = |d: Option<Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3);
    let mut line = String::from("|");
    let mut sep = String::from("|");
    let mut vals = String::from("|");
    for &(t, d) in &tg.delays {
        let _ = write!(line, " {} s |", t / SEC);
        sep.push_str("---|");
        match d {
            Some(_) => {
                let _ = write!(vals, " {:.1} |", delay_ms(d));
            }
            None => vals.push_str(" cold |"),
        }
    }
    let _ = writeln!(md, "{line}\n{sep}\n{vals}\n");

    // Targets: hedge rate per phase within 3 points of before; delay back within a window.
    let before = tg_rates[0];
    for (i, (phase, _, _)) in phases.iter().enumerate().skip(1) {
        report.check(
            (tg_rates[i] - before).abs() <= 3.0,
            format!(
                "shift: tailguard hedge rate {phase} {:.2} % vs before {before:.2} % \
                 (target within 3 points)",
                tg_rates[i]
            ),
        );
    }
    // The delay just before the shift, and when it was last more than 10 % away from
    // that after the shift ended (exact event times, not the 5 s samples).
    let delay_at = |t: u64| {
        tg.changes
            .iter()
            .rev()
            .find(|(at, _)| *at < t)
            .map_or(f64::NAN, |&(_, d)| delay_ms(d))
    };
    let old = delay_at(SHIFT_START);
    let near = |ms: f64| (ms / old - 1.0).abs() <= 0.10;
    let mut back = if near(delay_at(SHIFT_END)) {
        Some(SHIFT_END)
    } else {
        None
    };
    for &(t, d) in tg.changes.iter().filter(|(t, _)| *t >= SHIFT_END) {
        match (near(delay_ms(d)), back) {
            (true, None) => back = Some(t),
            (false, Some(_)) => back = None,
            _ => {}
        }
    }
    let interval = HedgeConfig::new().get_interval();
    // With 3 slots the window holds the current interval and the one before: 1-2 intervals.
    let span = 2 * interval.as_secs();
    let _ = writeln!(
        report.markdown,
        "tailguard default delay: {old:.2} ms before the shift, {:.2} ms at its end, back within \
         10 % of {old:.2} ms {} after it ended (the window holds the last {}-{span} s).\n",
        delay_at(SHIFT_END),
        back.map_or("never".to_string(), |t| format!(
            "{:.3} s",
            (t - SHIFT_END) as f64 / SEC as f64
        )),
        interval.as_secs(),
    );
    report.check(
        back.is_some_and(|t| t - SHIFT_END <= span * SEC),
        format!(
            "shift: tailguard delay back within 10 % of its pre-shift {old:.2} ms {} after the \
             shift ended (target: within one window, which spans {}-{span} s)",
            back.map_or("never".to_string(), |t| format!(
                "{:.3} s",
                (t - SHIFT_END) as f64 / SEC as f64
            )),
            interval.as_secs(),
        ),
    );
}

fn main() -> ExitCode {
    let mut csv_only = false;
    let mut explore = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--csv" => csv_only = true,
            "--explore" => explore = true,
            _ => {
                eprintln!("usage: simulate [--csv] [--explore]");
                return ExitCode::from(1);
            }
        }
    }
    let mut report = Report {
        markdown: String::new(),
        csv: String::from("workload,config,p50,p90,p95,p99,p999,overhead_pct\n"),
        checks: Vec::new(),
        explore,
    };
    workload_a(&mut report);
    workload_c(&mut report);
    workload_d(&mut report);
    workload_shift(&mut report);
    if csv_only {
        print!("{}", report.csv);
    } else {
        print!("{}", report.markdown);
        println!("### Targets\n");
        for (ok, text) in &report.checks {
            println!("- {} {text}", if *ok { "MET " } else { "MISS" });
        }
    }
    ExitCode::SUCCESS
}
