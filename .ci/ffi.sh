#!/usr/bin/env bash
# The C ABI (ffi/): lints (host and bare metal), the header is what cbindgen makes of the
# sources, host.c runs against the staticlib and the cdylib, the Rust tests (and under
# miri), and the firmware staticlibs other C programs link
# (ffi/target/<target>/release/libtailguard_ffi.a, every preset, the `single-core`
# atomics: the feature .ci/ffi-firmware.sh builds with too, so neither rebuilds the
# dependencies the other built).
set -euo pipefail
cd "$(dirname "$0")/../ffi"

step() { printf '\n--- ffi: %s (%s)\n' "$*" "$(date +%T)"; }

step "tools"
# Pinned, so that a new cbindgen cannot change the committed header.
cbindgen_version=0.29.4
if [ "$(cbindgen --version 2>/dev/null)" != "cbindgen $cbindgen_version" ]; then
  cargo install cbindgen --version "$cbindgen_version" --locked
fi
rustup target add thumbv6m-none-eabi thumbv7em-none-eabihf
command -v gcc >/dev/null || { apt-get update && apt-get install -y gcc; }

step "fmt and clippy (host, thumbv6m and thumbv7em single-core)"
cargo fmt -- --check
cargo clippy --locked --all-targets -- -D warnings
cargo clippy --locked --lib --target thumbv6m-none-eabi --features single-core -- -D warnings
cargo clippy --locked --lib --target thumbv7em-none-eabihf --features single-core -- -D warnings
# A firmware's preset subsets (each preset's code compiles in or out alone).
for presets in preset-mcu preset-int-coarse,preset-int preset-log,preset-otel preset-cubic; do
  cargo clippy --locked --lib --target thumbv7em-none-eabihf --no-default-features --features "single-core,$presets" -- -D warnings
done

step "the header is current"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cbindgen --config cbindgen.toml --output "$tmp/tailguard.h" --quiet
diff -u include/tailguard.h "$tmp/tailguard.h" || {
  echo "ffi/include/tailguard.h is stale: run cbindgen --config cbindgen.toml --output include/tailguard.h in ffi/"
  exit 1
}

step "host staticlib and cdylib; host.c against each"
cargo build --locked --release
cflags=(-std=c11 -Wall -Wextra -Werror -pedantic -Iinclude)
gcc "${cflags[@]}" tests/host.c target/release/libtailguard_ffi.a -lm -lpthread -ldl -o target/host-static
gcc "${cflags[@]}" tests/host.c -Ltarget/release -ltailguard_ffi -lm -Wl,-rpath,"$PWD/target/release" -o target/host-shared
./target/host-static > target/host-static.txt
./target/host-shared > target/host-shared.txt
tail -1 target/host-static.txt
tail -1 target/host-shared.txt
# Every function of the header is covered by host.c.
grep -E '^(tg_status|const char \*)' include/tailguard.h | grep -oE 'tg_[a-z0-9_]+\(' | tr -d '(' | sort > "$tmp/functions"
sed -n 's/^covered //p' target/host-static.txt | sort -u > "$tmp/covered"
if ! diff -u "$tmp/functions" "$tmp/covered"; then
  echo "host.c does not cover every function of the header (- missing, + unknown)"
  exit 1
fi
echo "host.c covers all $(wc -l < "$tmp/functions") functions"

step "Rust tests (unit tests and the bad-input property test)"
cargo test --locked

step "miri (the unit tests; the property test is left to the native run)"
rustup toolchain install nightly --profile minimal >/dev/null 2>&1 || true
rustup +nightly component add miri rust-src
cargo +nightly miri setup
cargo +nightly miri test --locked

step "firmware staticlibs (thumbv6m and thumbv7em, single-core)"
cargo build --locked --release --lib --target thumbv6m-none-eabi --features single-core
cargo build --locked --release --lib --target thumbv7em-none-eabihf --features single-core
ls -l target/thumbv6m-none-eabi/release/libtailguard_ffi.a target/thumbv7em-none-eabihf/release/libtailguard_ffi.a
