//! The interop tests' Python side: the interpreter named by `TAILGUARD_PYTHON`, a fresh
//! directory for the files both sides exchange, and a script run that fails the test with
//! its output if the script fails.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::string::String;

/// The interpreter named by `TAILGUARD_PYTHON`, or `None` (the test is skipped, loudly on
/// stderr) when it is unset; with `TAILGUARD_REQUIRE_INTEROP=1` (as `.ci/run` sets it) a
/// skip panics instead. `test` names the test and `needs` the packages it imports, for
/// the message.
pub fn interpreter(test: &str, needs: &str) -> Option<PathBuf> {
    let required = std::env::var("TAILGUARD_REQUIRE_INTEROP").is_ok_and(|v| v == "1");
    match std::env::var_os("TAILGUARD_PYTHON") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            let msg = std::format!(
                "TAILGUARD_PYTHON is not set: the {test} did NOT run. Set it to a python \
                 with {needs} installed (bash .ci/run does)."
            );
            if required {
                panic!("{msg} (TAILGUARD_REQUIRE_INTEROP=1)");
            }
            // Straight to stderr: the test harness captures eprintln!.
            let _ = writeln!(std::io::stderr(), "\n!!!!!!!!!! SKIPPED: {msg}\n");
            None
        }
    }
}

/// An empty directory `name` under `tmp` (the test's `CARGO_TARGET_TMPDIR`), emptied of
/// what an earlier run left.
pub fn fresh_dir(tmp: &str, name: &str) -> PathBuf {
    let dir = Path::new(tmp).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
    dir
}

/// Runs `python script dir args...`, panics with its stdout and stderr if it fails, and
/// returns (and prints) its stdout.
pub fn run(python: &Path, script: &Path, dir: &Path, args: &[&str]) -> String {
    let out = Command::new(python)
        .arg(script)
        .arg(dir)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", python.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the Python side ({}) failed:\n{stdout}{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    std::print!("{stdout}");
    stdout
}
