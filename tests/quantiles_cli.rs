//! The `quantiles` example as a user runs it: accuracy on a distribution the sketch was not
//! tuned for, and bad input lines reported with their numbers and exit code 2.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The example binary that `cargo test` builds beside the test binaries.
fn example() -> PathBuf {
    let mut dir = std::env::current_exe().unwrap();
    dir.pop(); // the test binary
    if dir.ends_with("deps") {
        dir.pop();
    }
    let exe = dir.join("examples").join("quantiles");
    assert!(
        exe.exists(),
        "{} is missing: run `cargo test`, which builds the examples",
        exe.display()
    );
    exe
}

fn run(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(example())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn field(stdout: &str, name: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.split(' ').next() == Some(name))
        .unwrap();
    line.split(' ').nth(1).unwrap().parse().unwrap()
}

#[test]
fn answers_every_default_quantile_within_alpha() {
    // Weibull with shape 0.7: heavier-tailed than anything the sketch tests use.
    let mut rng = common::Rng(2024);
    let values: Vec<f64> = (0..200_000)
        .map(|_| 3e3 * (-rng.unit().ln()).powf(1.0 / 0.7))
        .collect();
    let input: String = values.iter().map(|v| format!("{v}\n")).collect();
    let mut sorted = values.clone();
    sorted.sort_by(f64::total_cmp);
    for (mapping, alpha) in [
        ("log", 0.01),
        ("cubic", 0.01),
        ("int", 0.01),
        ("log", 0.02),
        ("cubic", 0.005),
    ] {
        let out = run(
            &["--mapping", mapping, "--alpha", &alpha.to_string()],
            &input,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(field(&stdout, "count"), 200_000.0);
        assert_eq!(field(&stdout, "min"), sorted[0]);
        assert_eq!(field(&stdout, "max"), sorted[sorted.len() - 1]);
        for (name, q) in [
            ("p50", 0.5),
            ("p90", 0.9),
            ("p95", 0.95),
            ("p99", 0.99),
            ("p99.9", 0.999),
        ] {
            let want = common::exact_quantile(&sorted, q);
            let got = field(&stdout, name);
            assert!(
                (got - want).abs() <= alpha * want,
                "{mapping} {name}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn invalid_lines_are_reported_with_numbers_and_exit_2() {
    let out = run(&[], "1\nNaN\n-1\ninf\nabc\n\n2\n3\n");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    for n in 2..=6 {
        assert!(
            stderr.contains(&format!("line {n}:")),
            "line {n} missing from {stderr}"
        );
    }
    assert!(!stderr.contains("line 1:") && !stderr.contains("line 7:"));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(field(&stdout, "count"), 3.0);

    let skipped = run(&["--skip-invalid"], "1\nabc\n");
    assert_eq!(skipped.status.code(), Some(0));
}

#[test]
fn custom_quantiles_and_usage_errors() {
    let out = run(&["--q", "0.75", "--q", "0.999"], "5\n");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(field(&stdout, "p75"), 5.0);
    assert_eq!(field(&stdout, "p99.9"), 5.0);
    assert!(!stdout.contains("p50"));
    assert_eq!(run(&["--q", "1.5"], "").status.code(), Some(1));
    assert_eq!(run(&["--mapping", "fancy"], "").status.code(), Some(1));
    let empty = String::from_utf8(run(&[], "").stdout).unwrap();
    assert!(empty.contains("count 0") && empty.contains("p50 none"));
}
