// Included by the build scripts of both firmware packages (`include!`): one place says
// which board each target runs on.

/// Copies the memory map of the board the target runs on (`<dir>/memory-<board>.x`) to
/// `OUT_DIR/memory.x` and puts it on the linker's search path. Not a `memory.x` in the
/// package root: that would win the linker's search for every target.
fn use_board_memory_map(dir: &str) {
    let target = env::var("TARGET").unwrap_or_default();
    let board = match target.as_str() {
        "thumbv6m-none-eabi" => "microbit",
        "thumbv7em-none-eabihf" => "mps2-an386",
        other => panic!("no board for target {other:?}: build with --target thumbv6m-none-eabi or thumbv7em-none-eabihf"),
    };
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let memory = format!("{dir}/memory-{board}.x");
    fs::copy(&memory, out.join("memory.x")).expect("copy the board's memory map");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed={memory}");
    println!("cargo:rerun-if-changed={dir}/memory_map.rs");
    println!("cargo:rerun-if-changed=build.rs");
}
