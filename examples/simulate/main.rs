//! A deterministic discrete-event simulation of hedged requests that drives the real
//! [`Hedger`](tailguard::hedge::Hedger) through the workloads of docs/reference.md (A, C and
//! D), plus workload A with a distribution shift.
//!
//! ```text
//! cargo run --release --example simulate            # markdown tables and target checks
//! cargo run --release --example simulate -- --csv   # workload,config,p50,p90,p95,p99,p999,overhead_pct
//! cargo run --release --example simulate -- --explore  # plus other tailguard settings (diagnosis)
//! ```
//!
//! * Simulated time only: one [`ManualClock`](tailguard::clock::ManualClock) per run, shared with the hedger and set to
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
//!
//! The parts: [`workload`] (the draws: latency and cost of every attempt), [`sim`] (the
//! clients and the event loop), [`policy`] (the hedging strategies compared, and running
//! them into rows), [`scenarios`] (the tables of A, C and D, and `--explore`),
//! [`c_targets`] (C's targets and the note on why they compare at equal duplication),
//! [`shift`] (A with a shift), [`stats`] (percentiles and the static frontier) and
//! [`report`] (the markdown, the CSV and the target checks).

mod c_targets;
mod policy;
mod report;
mod scenarios;
mod shift;
mod sim;
mod stats;
mod workload;

use std::process::ExitCode;

use report::Report;

/// Nanoseconds per millisecond.
const MS: f64 = 1e6;
/// Nanoseconds per second.
const SEC: u64 = 1_000_000_000;

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
        notes: Vec::new(),
        explore,
    };
    scenarios::workload_a(&mut report);
    scenarios::workload_c(&mut report);
    scenarios::workload_d(&mut report);
    shift::workload_shift(&mut report);
    if csv_only {
        print!("{}", report.csv);
    } else {
        print!("{}", report.markdown);
        println!("### Targets\n");
        for (ok, text) in &report.checks {
            println!("- {} {text}", if *ok { "MET " } else { "MISS" });
        }
        if !report.notes.is_empty() {
            println!("\n### Notes\n");
            for note in &report.notes {
                println!("- {note}");
            }
        }
    }
    ExitCode::SUCCESS
}
