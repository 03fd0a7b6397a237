#!/usr/bin/env bash
# Builds the firmware (firmware/) for the Cortex-M0 and the Cortex-M4F and runs each image
# under QEMU. The checks image checks its answers against values computed on the host
# (firmware/src/expected.rs, kept current by tests/firmware_expected.rs); the primitives
# image (firmware/src/bin/primitives/) races a SysTick handler against the main loop over
# every concurrent primitive and checks conservation, the threshold's invariant and the
# budgets' bounds. Each exits through semihosting: non-zero on any failed check or panic,
# which fails this script.
set -euo pipefail
cd "$(dirname "$0")/../firmware"

command -v qemu-system-arm >/dev/null || {
  echo "qemu-system-arm is missing (apt-get install -y qemu-system-arm)" >&2
  exit 1
}

# target, QEMU cpu, QEMU machine, icount shift (for the primitives image: one instruction
# per 2^S ns of virtual time, which SysTick counts, so its interrupts land at the same
# instructions in every run; see firmware-embassy.sh)
boards=(
  "thumbv6m-none-eabi cortex-m0 microbit 6"
  "thumbv7em-none-eabihf cortex-m4 mps2-an386 5"
)

# Runs image $3 of this package on QEMU's $1 core on machine $2 (extra QEMU options after
# it); semihosting carries its output and exit status, and a hang ends after 60 s.
run_image() {
  local cpu="$1" machine="$2" image="$3"
  shift 3
  timeout 60 qemu-system-arm -cpu "$cpu" -machine "$machine" -nographic "$@" \
    -semihosting-config enable=on,target=native -kernel "$image"
}

cargo fmt -- --check
for board in "${boards[@]}"; do
  read -r target cpu machine shift <<<"$board"
  cargo build --release --locked --target "$target" # every image
done
for board in "${boards[@]}"; do
  read -r target cpu machine shift <<<"$board"
  images="target/$target/release"
  echo "--- $machine ($cpu, $target)"
  run_image "$cpu" "$machine" "$images/tailguard-firmware"
  echo "--- primitives under interrupts on $machine ($cpu, $target)"
  run_image "$cpu" "$machine" "$images/primitives" -icount "shift=$shift,align=off,sleep=off"
  # The stack it takes to build each primitive into static storage (src/bin/build_stack.rs):
  # each below 1 KiB, or it exits non-zero.
  echo "--- build_stack: $machine ($cpu, $target)"
  run_image "$cpu" "$machine" "$images/build_stack"
  # The integer hedge path (src/bin/int_path.rs); its image is then checked free of
  # soft-float helpers and divisions from the hot path down, below.
  echo "--- int_path on $machine ($cpu, $target)"
  run_image "$cpu" "$machine" "$images/int_path"
done
bash ../.ci/check-int-path.sh # (this script runs in firmware/)

# The embassy firmware: race_embassy on an embassy executor, defmt decoded by defmt-print.
bash ../.ci/firmware-embassy.sh # (this script runs in firmware/)

# The RTIC firmware: race in an RTIC 2 app on its SysTick monotonic (lm3s6965evb, Cortex-M3).
bash ../.ci/firmware-rtic.sh # (this script runs in firmware/)
