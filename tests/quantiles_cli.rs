//! The `quantiles` example as a user runs it: accuracy on a distribution the sketch was not
//! tuned for, bad input lines reported with their numbers and exit code 2, and the wire
//! format flags (`--proto-out`, `--proto-in`, `--python-convention`, `--rebin`,
//! `--no-stdin`, `--otlp-out`, `--otlp-in`).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use tailguard_support::dist::{exact_quantile, Dist};
use tailguard_support::Rng;

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
    // A run refused for its flags may exit before reading its input: the pipe then
    // breaks, which is not the test's failure (its exit status and stderr say what it did).
    match child.stdin.take().unwrap().write_all(input.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("writing stdin: {e}"),
        _ => {}
    }
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
    let mut rng = Rng::new(2024);
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
            let want = exact_quantile(&sorted, q);
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

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("quantiles-cli-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn lines(values: &[f64]) -> String {
    values.iter().map(|v| format!("{v}\n")).collect()
}

fn ok_stdout(out: Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

const MIDDLE: [&str; 4] = ["p50", "p90", "p95", "p99"];

#[test]
fn proto_out_then_proto_in_gives_the_same_sketch() {
    let dir = scratch("roundtrip");
    let values = Dist::Stragglers.samples(5, 50_000);
    let mut sorted = values.clone();
    sorted.sort_by(f64::total_cmp);
    for (mapping, alpha) in [("log", "0.01"), ("cubic", "0.005"), ("int", "0.01")] {
        let pb = dir.join(format!("{mapping}.pb"));
        let pb = pb.to_str().unwrap();
        let flags = ["--mapping", mapping, "--alpha", alpha];
        let direct = ok_stdout(run(
            &[&flags[..], &["--proto-out", pb]].concat(),
            &lines(&values),
        ));
        // Read back with no configuration: the proto's mapping picks it.
        let out = run(&["--no-stdin", "--proto-in", pb], "ignored\n");
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(
            stderr.contains(&format!("note: {mapping} sketch")),
            "{stderr}"
        );
        let back = ok_stdout(out);
        assert_eq!(field(&back, "count"), 50_000.0);
        for name in MIDDLE {
            assert_eq!(field(&back, name), field(&direct, name), "{mapping} {name}");
        }
        // min and max are now the values of the end bins: within alpha.
        let alpha: f64 = alpha.parse().unwrap();
        for (name, want) in [("min", sorted[0]), ("max", sorted[sorted.len() - 1])] {
            let got = field(&back, name);
            assert!(
                (got - want).abs() <= alpha * want,
                "{mapping} {name}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn merging_protos_from_several_devices_equals_recording_everything() {
    let dir = scratch("merge");
    let values = Dist::LogNormalWide.samples(9, 30_000);
    let all = ok_stdout(run(&["--mapping", "cubic"], &lines(&values)));
    let mut args = vec!["--no-stdin".to_string()];
    for (i, part) in values.chunks(7_000).enumerate() {
        let pb = dir
            .join(format!("device{i}.pb"))
            .to_str()
            .unwrap()
            .to_string();
        ok_stdout(run(
            &["--mapping", "cubic", "--proto-out", &pb],
            &lines(part),
        ));
        args.extend(["--proto-in".to_string(), pb]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let merged = ok_stdout(run(&args, ""));
    assert_eq!(field(&merged, "count"), 30_000.0);
    for name in MIDDLE {
        assert_eq!(field(&merged, name), field(&all, name), "{name}");
    }
    // stdin values and protos merge too, and the result can be written again.
    let total = dir.join("total.pb");
    let total = total.to_str().unwrap();
    let mixed = ok_stdout(run(
        &[&args[1..3], &["--proto-out", total]].concat(),
        &lines(&values[7_000..]),
    ));
    assert_eq!(field(&mixed, "count"), 30_000.0);
    let again = ok_stdout(run(&["--no-stdin", "--proto-in", total], ""));
    for name in MIDDLE {
        assert_eq!(field(&again, name), field(&all, name), "{name}");
    }
}

#[test]
fn python_convention_protos() {
    let dir = scratch("python");
    let values = Dist::Pareto.samples(3, 20_000);
    let direct = ok_stdout(run(&[], &lines(&values)));
    let pb = dir.join("python.pb");
    let pb = pb.to_str().unwrap();
    ok_stdout(run(
        &["--python-convention", "--proto-out", pb],
        &lines(&values),
    ));
    let back = ok_stdout(run(
        &["--python-convention", "--no-stdin", "--proto-in", pb],
        "",
    ));
    for name in MIDDLE {
        assert_eq!(field(&back, name), field(&direct, name), "{name}");
    }
    // Read as Go or Java read it, a Python-convention NONE sketch is one bin (2 %) high.
    let misread = ok_stdout(run(&["--no-stdin", "--proto-in", pb], ""));
    let ratio = field(&misread, "p50") / field(&direct, "p50");
    assert!((ratio - 1.01 / 0.99).abs() < 1e-9, "{ratio}");
    // A LINEAR one has another gamma altogether: refused.
    let int = dir.join("int.pb");
    let int = int.to_str().unwrap();
    let args = [
        "--mapping",
        "int",
        "--python-convention",
        "--proto-out",
        int,
    ];
    ok_stdout(run(&args, &lines(&values)));
    let out = run(&["--mapping", "int", "--no-stdin", "--proto-in", int], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("gamma"));
}

#[test]
fn bad_protos_are_errors_with_the_file_name() {
    let dir = scratch("bad");
    let pb = dir.join("a.pb");
    let pb = pb.to_str().unwrap();
    ok_stdout(run(&["--alpha", "0.01", "--proto-out", pb], "1\n2\n3\n"));
    // Another accuracy than the sketch's.
    let out = run(&["--alpha", "0.02", "--no-stdin", "--proto-in", pb], "");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(stderr.contains(pb) && stderr.contains("gamma"), "{stderr}");
    // Another mapping.
    let out = run(&["--mapping", "cubic", "--no-stdin", "--proto-in", pb], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("interpolation"));
    // Truncated, garbage, missing.
    let bytes = std::fs::read(pb).unwrap();
    let cut = dir.join("cut.pb");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let junk = dir.join("junk.pb");
    std::fs::write(&junk, b"\xff\xff\xff").unwrap();
    for path in [
        cut.to_str().unwrap(),
        junk.to_str().unwrap(),
        "/nonexistent.pb",
    ] {
        let out = run(&["--no-stdin", "--proto-in", path], "");
        assert_eq!(out.status.code(), Some(1), "{path}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(path));
    }
    assert_eq!(run(&["--proto-in"], "").status.code(), Some(1));
    // --no-stdin alone reports an empty sketch.
    let empty = ok_stdout(run(&["--no-stdin"], "5\n"));
    assert!(empty.contains("count 0"));
}

#[test]
fn rebin_reads_protos_of_other_mappings_within_the_bound() {
    let dir = scratch("rebin");
    let values = Dist::Stragglers.samples(15, 30_000);
    let mut sorted = values.clone();
    sorted.sort_by(f64::total_cmp);
    let pb = dir.join("cubic-2.pb");
    let pb = pb.to_str().unwrap();
    ok_stdout(run(
        &["--mapping", "cubic", "--alpha", "0.02", "--proto-out", pb],
        &lines(&values),
    ));
    // Without --rebin another mapping is refused; with it, re-binned and said so.
    let args = [
        "--mapping",
        "log",
        "--alpha",
        "0.01",
        "--no-stdin",
        "--proto-in",
        pb,
    ];
    let out = run(&args, "");
    assert_eq!(out.status.code(), Some(1));
    let out = run(&[&args[..], &["--rebin"]].concat(), "");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        stderr.contains("30000 values re-binned") && stderr.contains("3.0200%"),
        "{stderr}"
    );
    let stdout = ok_stdout(out);
    assert_eq!(field(&stdout, "count"), 30_000.0);
    let bound = 0.02 + 0.01 + 0.02 * 0.01;
    for (name, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)] {
        let exact = exact_quantile(&sorted, q);
        let got = field(&stdout, name);
        assert!(
            (got - exact).abs() <= bound * exact,
            "{name}: {got} vs {exact}"
        );
    }
    // The sketch's own mapping decodes exactly, with or without --rebin: no note.
    let own = [
        "--mapping",
        "cubic",
        "--alpha",
        "0.02",
        "--no-stdin",
        "--proto-in",
        pb,
    ];
    let exact = run(&[&own[..], &["--rebin"]].concat(), "");
    assert!(!String::from_utf8_lossy(&exact.stderr).contains("re-binned"));
    assert_eq!(ok_stdout(exact), ok_stdout(run(&own, "")));

    // Java's QUARTIC, which tailguard has no mapping for: refused, or with --rebin read
    // into the log mapping. One value, 1000, in the key Java gives it at gamma 1.0204.
    let gamma = 1.0204f64;
    let s: f64 = 1000.0 / 512.0 - 1.0;
    let approx = 9.0 + (((-2.0 / 25.0 * s + 8.0 / 25.0) * s - 17.0 / 25.0) * s + 36.0 / 25.0) * s;
    let key = (approx / gamma.log2()).floor() as i32;
    let zigzag = ((key << 1) ^ (key >> 31)) as u32;
    let mut mapping = vec![0x09];
    mapping.extend_from_slice(&gamma.to_le_bytes());
    mapping.extend_from_slice(&[0x18, 4]);
    let mut entry = vec![0x08];
    let mut z = zigzag;
    while z >= 0x80 {
        entry.push(z as u8 | 0x80);
        z >>= 7;
    }
    entry.push(z as u8);
    entry.push(0x11);
    entry.extend_from_slice(&1.0f64.to_le_bytes());
    let mut msg = vec![0x0a, mapping.len() as u8];
    msg.extend_from_slice(&mapping);
    msg.extend_from_slice(&[0x12, entry.len() as u8 + 2, 0x0a, entry.len() as u8]);
    msg.extend_from_slice(&entry);
    let quartic = dir.join("quartic.pb");
    std::fs::write(&quartic, &msg).unwrap();
    let quartic = quartic.to_str().unwrap();
    let out = run(&["--no-stdin", "--proto-in", quartic], "");
    assert_eq!(out.status.code(), Some(1));
    let out = run(&["--no-stdin", "--rebin", "--proto-in", quartic], "");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        stderr.contains("note: log sketch at alpha 0.01"),
        "{stderr}"
    );
    let stdout = ok_stdout(out);
    let java_alpha = {
        let g = gamma.powf(25.0 / (36.0 * std::f64::consts::LN_2));
        (g - 1.0) / (g + 1.0)
    };
    let p50 = field(&stdout, "p50");
    let bound = java_alpha + 0.01 + java_alpha * 0.01;
    assert!((p50 - 1000.0).abs() <= bound * 1000.0, "{p50}");
}

#[test]
fn otlp_out_then_otlp_in_gives_the_same_sketch_exactly() {
    let dir = scratch("otlp");
    let values = Dist::Stragglers.samples(6, 40_000);
    let mut sorted = values.clone();
    sorted.sort_by(f64::total_cmp);
    let point = dir.join("all.otlp");
    let point = point.to_str().unwrap();
    // --otlp-out alone makes an `otel` sketch (scale 6 at the default 1 %).
    let direct = ok_stdout(run(&["--otlp-out", point], &lines(&values)));
    let bytes = std::fs::read(point).unwrap();
    assert_eq!(tailguard::otlp::read_scale(&bytes), Ok(6));
    // Read back with no configuration: the point's scale picks the sketch, and min and
    // max travel exactly.
    let out = run(&["--no-stdin", "--otlp-in", point], "");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(stderr.contains("otel sketch at scale 6"), "{stderr}");
    let back = ok_stdout(out);
    assert_eq!(back, direct);
    assert_eq!(field(&back, "min"), sorted[0]);
    assert_eq!(field(&back, "max"), sorted[sorted.len() - 1]);
    // Devices' points merge into what recording everything gives.
    let mut args = vec!["--no-stdin".to_string()];
    for (i, part) in values.chunks(9_000).enumerate() {
        let p = dir
            .join(format!("device{i}.otlp"))
            .to_str()
            .unwrap()
            .to_string();
        ok_stdout(run(&["--otlp-out", &p], &lines(part)));
        args.extend(["--otlp-in".to_string(), p]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(ok_stdout(run(&args, "")), direct);
    // A coarser sketch reads the finer point, downscaled: as if recorded at its scale.
    let coarse = ok_stdout(run(
        &["--mapping", "otel", "--alpha", "0.02"],
        &lines(&values),
    ));
    let down = ok_stdout(run(
        &["--alpha", "0.02", "--no-stdin", "--otlp-in", point],
        "",
    ));
    assert_eq!(down, coarse);
}

#[test]
fn bad_otlp_points_and_flags_are_errors() {
    let dir = scratch("otlp-bad");
    let point = dir.join("coarse.otlp");
    let point = point.to_str().unwrap();
    ok_stdout(run(&["--alpha", "0.02", "--otlp-out", point], "1\n2\n3\n"));
    // A finer sketch (scale 7) cannot read a scale-5 point.
    let out = run(&["--alpha", "0.005", "--no-stdin", "--otlp-in", point], "");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        stderr.contains(point) && stderr.contains("coarser"),
        "{stderr}"
    );
    // Only an otel sketch holds OpenTelemetry's buckets.
    let out = run(&["--mapping", "log", "--otlp-out", point], "1\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--mapping otel"));
    // Truncated, garbage, missing.
    let bytes = std::fs::read(point).unwrap();
    let cut = dir.join("cut.otlp");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let junk = dir.join("junk.otlp");
    std::fs::write(&junk, b"\xff\xff\xff").unwrap();
    for path in [
        cut.to_str().unwrap(),
        junk.to_str().unwrap(),
        "/nonexistent.otlp",
    ] {
        let out = run(&["--no-stdin", "--otlp-in", path], "");
        assert_eq!(out.status.code(), Some(1), "{path}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(path),
            "{path}"
        );
    }
}

/// Every accuracy in (0, 1) the mapping takes gives a sketch: a coarse cubic mapping (whose
/// bin of the smallest normal float is zero's) starts a bin higher, and an accuracy so fine
/// that the smallest floats' indices overflow an `i32` gets the range centred on 1, as the
/// doc says, rather than an error about a smallest trackable value the user never gave.
#[test]
fn extreme_accuracies_the_mapping_takes_answer_within_them() {
    let values = [1e-300, 0.5, 1.0, 3.0, 7.0, 1e300];
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    for (mapping, alpha) in [
        ("cubic", 0.5),
        ("cubic", 0.6),
        ("cubic", 0.8),
        ("cubic", 0.95),
        ("cubic", 0.99),
        ("cubic", 1e-8),
        ("log", 1e-7),
        ("log", 1e-9),
        ("log", 1e-12),
    ] {
        let out = run(
            &[
                "--mapping",
                mapping,
                "--alpha",
                &alpha.to_string(),
                "--q",
                "0.5",
            ],
            &lines(&values),
        );
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{mapping} {alpha}: {stderr}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(field(&stdout, "count"), 6.0, "{mapping} {alpha}");
        let (got, want) = (field(&stdout, "p50"), exact_quantile(&sorted, 0.5));
        // Within alpha as the sketch reports it (the mapping's, up by `8 * 2^-52`).
        assert!(
            (got - want).abs() <= (alpha + 8.0 * f64::EPSILON) * want,
            "{mapping} {alpha}: p50 {got} vs {want}"
        );
    }
}

/// A subnormal value (below 2^-1022) is a finite, non-negative number the tool takes, but
/// no mapping's range reaches it at the default accuracy: the log sketch counts it as 0,
/// the otel one in the bucket of 2^-1022. Neither answer is within alpha of it, so the
/// tool says so on stderr (the module docs promise every answer within alpha otherwise).
#[test]
fn values_below_the_range_get_a_note() {
    for mapping in ["log", "otel", "cubic", "int"] {
        let out = run(&["--mapping", mapping], "0\n1e-310\n1e308\n");
        assert!(out.status.success(), "{mapping}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        let p50 = field(&stdout, "p50");
        assert!((p50 - 1e-310).abs() > 0.01 * 1e-310, "{mapping}: {p50}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains("1 values below"),
            "{mapping}: no note in {stderr:?}"
        );
    }
    // Values in the range: no such note.
    let out = run(&[], "0\n1e-300\n1e308\n");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains("values below"), "{stderr:?}");
}
