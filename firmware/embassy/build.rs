//! Picks the memory map of the board each target runs on (the checks firmware's, in ../),
//! and adds defmt's linker script (the checks firmware's `.cargo/config.toml`, which cargo
//! also reads here, adds cortex-m-rt's `link.x`).
use std::{env, fs, path::PathBuf};

fn main() {
    let target = env::var("TARGET").unwrap_or_default();
    let board = match target.as_str() {
        "thumbv6m-none-eabi" => "microbit",
        "thumbv7em-none-eabihf" => "mps2-an386",
        other => panic!("no board for target {other:?}: build with --target thumbv6m-none-eabi or thumbv7em-none-eabihf"),
    };
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let memory = format!("../memory-{board}.x");
    fs::copy(&memory, out.join("memory.x")).expect("copy the board's memory map");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg=-Tdefmt.x");
    println!("cargo:rerun-if-changed={memory}");
    println!("cargo:rerun-if-changed=build.rs");
}
