//! Workload A with a shift: the base latency doubles for a minute, then returns. Does the
//! hedge rate hold in each phase, and how soon is tailguard's delay back?

use std::fmt::Write as _;
use std::time::Duration;

use tailguard::hedge::HedgeConfig;

use crate::policy::{run_policy, Policy};
use crate::report::{fmt_ms, Report};
use crate::sim::{CallRecord, Stop};
use crate::stats::percentiles;
use crate::workload::{Workload, SHIFT_END, SHIFT_RUN_END, SHIFT_START};
use crate::SEC;

pub fn workload_shift(report: &mut Report) {
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
    let interval = HedgeConfig::new().interval();
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
