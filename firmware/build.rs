//! Picks the memory map of the board each target runs on (`memory_map.rs`), and passes
//! the "count" variant's settings through.
use std::{env, fs, path::PathBuf};

include!("memory_map.rs");

fn main() {
    use_board_memory_map(".");

    // The `count` feature's operation and repetition count (see src/count.rs).
    for (var, default) in [("TG_COUNT_OP", "none"), ("TG_COUNT_K", "1000")] {
        println!("cargo:rerun-if-env-changed={var}");
        let value = env::var(var).unwrap_or_else(|_| default.to_string());
        println!("cargo:rustc-env={var}={value}");
    }
}
