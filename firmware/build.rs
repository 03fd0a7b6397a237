//! Picks the memory map of the board each target runs on (a `memory.x` in the package root
//! would win the linker's search for every target), and passes the "count" variant's
//! settings through.
use std::{env, fs, path::PathBuf};

fn main() {
    let target = env::var("TARGET").unwrap_or_default();
    let board = match target.as_str() {
        "thumbv6m-none-eabi" => "microbit",
        "thumbv7em-none-eabihf" => "mps2-an386",
        other => panic!("no board for target {other:?}: build with --target thumbv6m-none-eabi or thumbv7em-none-eabihf"),
    };
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let memory = format!("memory-{board}.x");
    fs::copy(&memory, out.join("memory.x")).expect("copy the board's memory map");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed={memory}");
    println!("cargo:rerun-if-changed=build.rs");

    // The `count` feature's operation and repetition count (see src/count.rs).
    for (var, default) in [("TG_COUNT_OP", "none"), ("TG_COUNT_K", "1000")] {
        println!("cargo:rerun-if-env-changed={var}");
        let value = env::var(var).unwrap_or_else(|_| default.to_string());
        println!("cargo:rustc-env={var}={value}");
    }
}
