//! The tables of workloads A, C and D: the named rows, the static sweep, the frontier
//! checks and the targets; and `--explore`, other tailguard settings on the same draws.

use std::fmt::Write as _;

use tailguard::hedge::HedgeConfig;

use crate::policy::{find, rows_with_sweep, run_policy_refreshing, Policy, Row};
use crate::report::{fmt_ms, frontier_checks, sweep_points, table, Report};
use crate::sim::Stop;
use crate::stats::{frontier_p99, percentiles, sla_breach_pct};
use crate::workload::Workload;

/// Requests of workload A (and of its explored variants).
const A_REQUESTS: u64 = 50_000;
/// Dialogs of workload C.
const C_DIALOGS: u64 = 2_000;
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
                "static 950 6%",
                Policy::Static {
                    ms: 950,
                    budget: Some(0.06),
                },
            ),
            (
                "tailguard p95 6%",
                Policy::Adaptive(
                    HedgeConfig::new()
                        .with_percentile(0.95)
                        .with_budget_ratio(0.06),
                ),
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
        let d = HedgeConfig::new()
            .with_percentile(0.95)
            .with_budget_ratio(0.06);
        explore(
            report,
            Workload::C,
            &rows,
            &[
                ("p95 6% (the row)", d, 0),
                ("p95 6% cap 50", d.with_budget_cap(50), 0),
                ("p95 6% min_samples 10", d.with_min_samples(10), 0),
                (
                    "p95 6% min_samples 10 cap 50",
                    d.with_min_samples(10).with_budget_cap(50),
                    0,
                ),
                ("p95 10%", d.with_budget_ratio(0.1), 0),
                ("p94 6%", d.with_percentile(0.94), 0),
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
