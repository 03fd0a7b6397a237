//! The hedging strategies compared (no hedging, static delays with or without a budget,
//! a blind race, tailguard's adaptive hedger), and running them into table rows.

use std::time::Duration;

use tailguard::clock::ManualClock;
use tailguard::hedge::{ColdStart, HedgeConfig, Hedger};

use crate::sim::{simulate, Run, Stop};
use crate::workload::Workload;

/// How a row hedges.
#[derive(Clone, Copy)]
pub enum Policy {
    /// No hedging.
    None,
    /// A fixed delay (ms); `budget` is the ratio budget (`None`: unlimited).
    Static { ms: u64, budget: Option<f64> },
    /// Both attempts at once.
    Blind,
    /// The adaptive hedger with this configuration.
    Adaptive(HedgeConfig),
}

/// A hedger whose delay is clamped to `d` (and starts cold at `d`), with a ratio budget
/// of `budget` (`None`: one that never refuses).
fn fixed_delay(d: Duration, budget: Option<f64>) -> HedgeConfig {
    HedgeConfig::new()
        .with_min_delay(d)
        .with_max_delay(d)
        .with_cold_start(ColdStart::Delay(d))
        // 1.0: each request deposits a whole token and spends at most one: never binds.
        .with_budget_ratio(budget.unwrap_or(1.0))
}

/// One row of a table: a named policy's run.
pub struct Row {
    pub name: String,
    pub policy: Policy,
    pub run: Run,
    /// Part of the static sweep (the frontier's points).
    pub sweep: bool,
}

/// Runs `workload` under `policy` until `stop`, sampling the delay every `sample_every` ns
/// of simulated time (0: never).
pub fn run_policy(workload: Workload, policy: Policy, stop: Stop, sample_every: u64) -> Run {
    run_policy_refreshing(workload, policy, stop, sample_every, 0)
}

/// [`run_policy`], forcing a threshold refresh every `refresh_every` completions (0: the
/// library's own refresh only).
pub fn run_policy_refreshing(
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

/// A row without delay sampling.
fn row(workload: Workload, name: &str, policy: Policy, stop: Stop, sweep: bool) -> Row {
    Row {
        name: name.to_string(),
        policy,
        run: run_policy(workload, policy, stop, 0),
        sweep,
    }
}

/// The named rows, then the static sweep (pure delays, no budget) not already named.
pub fn rows_with_sweep(
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

/// The run of the row named `name`.
pub fn find<'r>(rows: &'r [Row], name: &str) -> &'r Run {
    &rows.iter().find(|r| r.name == name).unwrap().run
}
