//! The `http_gateway` example's flags as a user gives them: a value it cannot run with is a
//! usage error (exit 2, a message), never a panic.

use std::path::PathBuf;
use std::process::Command;

/// The example binary, built beside the test binaries (`.ci/run` builds it with this test).
fn example() -> PathBuf {
    let mut dir = std::env::current_exe().unwrap();
    dir.pop(); // the test binary
    if dir.ends_with("deps") {
        dir.pop();
    }
    let exe = dir.join("examples").join("http_gateway");
    assert!(
        exe.exists(),
        "{} is missing: run `cargo build --features tower --example http_gateway` first",
        exe.display()
    );
    exe
}

/// `--concurrency` sized the client pool as `4 * concurrency`, which overflowed (a panic,
/// exit 101, in a debug build) for a count past `usize::MAX / 4`, and spawned that many
/// tasks otherwise. Counts past the limit are refused before anything runs.
#[test]
fn out_of_range_counts_are_usage_errors() {
    for args in [
        &["--concurrency", "4611686018427387904", "--requests", "1"][..],
        &["--concurrency", "18446744073709551615", "--requests", "1"],
        &["--concurrency", "10001", "--requests", "1"],
        &["--concurrency", "0"],
        &["--requests", "-1"],
        &["--bogus"],
    ] {
        let out = Command::new(example()).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("usage:"), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
