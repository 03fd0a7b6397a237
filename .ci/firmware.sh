#!/usr/bin/env bash
# Builds the firmware (firmware/) for the Cortex-M0 and the Cortex-M4F and runs each image
# under QEMU. The firmware checks its answers against values computed on the host
# (firmware/src/expected.rs, kept current by tests/firmware_expected.rs) and exits through
# semihosting: non-zero on any mismatch or panic, which fails this script.
set -euo pipefail
cd "$(dirname "$0")/../firmware"

command -v qemu-system-arm >/dev/null || {
  echo "qemu-system-arm is missing (apt-get install -y qemu-system-arm)" >&2
  exit 1
}

# target, QEMU cpu, QEMU machine
boards=(
  "thumbv6m-none-eabi cortex-m0 microbit"
  "thumbv7em-none-eabihf cortex-m4 mps2-an386"
)

cargo fmt -- --check
for board in "${boards[@]}"; do
  read -r target cpu machine <<<"$board"
  cargo build --release --locked --target "$target"
done
for board in "${boards[@]}"; do
  read -r target cpu machine <<<"$board"
  echo "--- $machine ($cpu, $target)"
  timeout 60 qemu-system-arm -cpu "$cpu" -machine "$machine" -nographic \
    -semihosting-config enable=on,target=native \
    -kernel "target/$target/release/tailguard-firmware"
done

# The integer hedge path (src/bin/int_path.rs): runs on both boards, then its image is
# checked free of soft-float helpers and divisions from the hot path down.
for board in "${boards[@]}"; do
  read -r target cpu machine <<<"$board"
  echo "--- int_path on $machine ($cpu, $target)"
  timeout 60 qemu-system-arm -cpu "$cpu" -machine "$machine" -nographic \
    -semihosting-config enable=on,target=native \
    -kernel "target/$target/release/int_path"
done
bash ../.ci/check-int-path.sh # (this script runs in firmware/)

# The embassy firmware: race_embassy on an embassy executor, defmt decoded by defmt-print.
bash ../.ci/firmware-embassy.sh # (this script runs in firmware/)
