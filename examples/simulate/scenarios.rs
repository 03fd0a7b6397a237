//! The tables of workloads A, C and D: the named rows, the static sweep, the frontier
//! checks and the targets; and `--explore`, other tailguard settings on the same draws.

use std::fmt::Write as _;
use std::time::Duration;

use tailguard::hedge::{ColdStart, HedgeConfig};
use tailguard_support::workload::c;

use crate::c_targets;
use crate::policy::{find, rows_with_sweep, run_policy_refreshing, Policy, Row};
use crate::report::{fmt_ms, frontier_checks, sweep_points, table, Report};
use crate::sim::Stop;
use crate::stats::{frontier_p99, percentiles, sla_breach_pct};
use crate::workload::Workload;

/// Requests of workload A (and of its explored variants).
const A_REQUESTS: u64 = 50_000;
/// Dialogs of workload C.
const C_DIALOGS: u64 = 2_000;
/// C's published configuration: a static delay with a 6 % budget.
const C_PUBLISHED: &str = "static 950 6%";
/// C's tailguard row ([`c_adaptive`]).
const C_ADAPTIVE: &str = "tailguard p93 10% cold 1.6s";
/// The same with deadline-aware hedging: each step aimed at its share of the dialog's SLA,
/// hedged no later than when the primary's chance of making it falls below 80 %.
const C_ON_TIME: &str = "tailguard p93 10% cold 1.6s on-time 80%";
/// The dialog SLA's share per step (8 s / 5): what a caller who knows the SLA but not yet
/// the latencies would wait before hedging a step.
const C_COLD_START: Duration = Duration::from_nanos((c::SLA_NS / c::STEPS as f64) as u64);
/// C's tailguard configuration. 4.5 % of the primary's calls stall, and a window of 30-60 s
/// (1,000-2,000 calls) sees that share only to within a point or so, so a p95 would fall
/// now among the normal calls, now among the stalls (their hedges late); the share above
/// the p93 (7 %) stays above the stall share of every window, and the learned delay among
/// the normal calls (the closing note prints the figures). The budget is the default 10 %,
/// above those 7 %, so that it does not refuse a stall's hedge.
fn c_adaptive() -> HedgeConfig {
    HedgeConfig::new()
        .with_percentile(0.93)
        .with_cold_start(ColdStart::Delay(C_COLD_START))
}

/// Calls of workload D.
const D_REQUESTS: u64 = 50_000;

/// A variant for `--explore`: a name, a configuration, and a forced threshold refresh every
/// so many completions (0: the library's own refresh only).
type Variant<'n> = (&'n str, HedgeConfig, usize);

/// `--explore`: other tailguard configurations on the same draws, for diagnosis only
/// (not in the CSV, not checked against targets).
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

pub fn workload_a(report: &mut Report) {
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
                ("p90 10% cap 50", d.with_budget_cap(50), 0),
                ("p90 15% cap 10", d.with_budget_ratio(0.15), 0),
                ("p91 10% cap 10", d.with_percentile(0.91), 0),
                ("p92 10% cap 10", d.with_percentile(0.92), 0),
                ("p93 10% cap 10", d.with_percentile(0.93), 0),
                ("p95 10% cap 10", d.with_percentile(0.95), 0),
                ("p90 10% cap 10, refresh every 64", d, 64),
                (
                    "p90 10% cap 50, refresh every 64",
                    d.with_budget_cap(50),
                    64,
                ),
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

pub fn workload_c(report: &mut Report) {
    let stop = Stop::Jobs(C_DIALOGS);
    let rows = rows_with_sweep(
        Workload::C,
        vec![
            ("no hedging", Policy::None),
            ("blind race", Policy::Blind),
            (
                C_PUBLISHED,
                Policy::Static {
                    ms: 950,
                    budget: Some(0.06),
                },
            ),
            (C_ADAPTIVE, Policy::Adaptive(c_adaptive())),
            (
                C_ON_TIME,
                Policy::Adaptive(c_adaptive().with_on_time_chance(0.8)),
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
    c_targets::checks(report, &rows);
    let p95 = c_adaptive().with_percentile(0.95).with_budget_ratio(0.06);
    c_targets::note(report, &rows, C_ADAPTIVE, C_PUBLISHED, p95, stop);
    if report.explore {
        let d = c_adaptive();
        explore(
            report,
            Workload::C,
            &rows,
            &[
                ("p93 10% cold 1.6s (the row)", d, 0),
                (
                    "p93 10%, no hedging when cold",
                    d.with_cold_start(ColdStart::NoHedge),
                    0,
                ),
                ("p93 6% cold 1.6s", d.with_budget_ratio(0.06), 0),
                ("p93 10% cold 1.6s cap 10", d.with_budget_cap(10), 0),
                (
                    "p93 10% cold 1.6s, 120 s interval",
                    d.with_interval(Duration::from_secs(120)),
                    0,
                ),
                ("p93 10% cold 1.6s, refresh every 64", d, 64),
                (
                    "p94 8% cold 1.6s",
                    d.with_percentile(0.94).with_budget_ratio(0.08),
                    0,
                ),
                ("p95 6% cold 1.6s", p95, 0),
                (
                    "p95 6%, no hedging when cold",
                    p95.with_cold_start(ColdStart::NoHedge),
                    0,
                ),
            ],
        );
    }
}

pub fn workload_d(report: &mut Report) {
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
                ("p90 10% cap 50", d.with_budget_cap(50), 0),
                ("p92 10% cap 10", d.with_percentile(0.92), 0),
                ("p95 10% cap 10", d.with_percentile(0.95), 0),
            ],
        );
    }
}
