//! Picks the memory map of the board each target runs on (the checks firmware's, in ../),
//! and adds defmt's linker script (the checks firmware's `.cargo/config.toml`, which cargo
//! also reads here, adds cortex-m-rt's `link.x`).
use std::{env, fs, path::PathBuf};

include!("../memory_map.rs");

fn main() {
    use_board_memory_map("..");
    println!("cargo:rustc-link-arg=-Tdefmt.x");
}
