//! The output: markdown tables, CSV rows and the target checks.

use std::fmt::Write as _;

use crate::policy::Row;
use crate::stats::{frontier_p99, percentiles, sla_breach_pct};
use crate::workload::Workload;

/// Milliseconds as the tables print them: whole from 1 s up, one decimal below.
pub fn fmt_ms(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{ms:.0}")
    } else {
        format!("{ms:.1}")
    }
}

/// Everything the run prints, gathered while the workloads run.
pub struct Report {
    pub markdown: String,
    pub csv: String,
    /// (met, what) for every target.
    pub checks: Vec<(bool, String)>,
    /// Printed after the targets: why a target is what it is.
    pub notes: Vec<String>,
    /// `--explore`: add the diagnosis tables.
    pub explore: bool,
}

impl Report {
    /// Records a target check.
    pub fn check(&mut self, ok: bool, text: String) {
        self.checks.push((ok, text));
    }
}

/// Writes a workload's table (markdown and CSV rows) and its hedgers' counters.
pub fn table(report: &mut Report, workload: Workload, title: &str, rows: &[Row]) {
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
pub fn sweep_points(rows: &[Row]) -> Vec<(f64, f64)> {
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
pub fn frontier_checks(report: &mut Report, workload: Workload, rows: &[Row]) {
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
