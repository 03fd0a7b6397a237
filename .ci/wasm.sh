#!/usr/bin/env bash
# wasm32-unknown-unknown: the library builds there with its default features (no_std), and
# with `std` (StdClock is left out on that target: its Instant::now panics); the module of
# wasm/ (an FnClock over the host's performance.now(), a static hedger) builds, passes
# clippy and answers under node.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --lib --target wasm32-unknown-unknown
cargo build --lib --target wasm32-unknown-unknown --features std
wasm=(--manifest-path wasm/Cargo.toml --target wasm32-unknown-unknown --target-dir target/wasm)
cargo clippy --locked "${wasm[@]}" -- -D warnings
cargo build --locked --release "${wasm[@]}"
command -v node >/dev/null || {
  echo "node is missing (apt-get install -y nodejs)" >&2
  exit 1
}
node wasm/check.mjs target/wasm/wasm32-unknown-unknown/release/tailguard_wasm.wasm
