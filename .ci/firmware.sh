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

# A CompactHedger static of a preset (here the embassy firmware's configuration, not the
# defaults) is all zero bytes, so it is in .bss (RAM the startup code zeroes), with no
# image of it in flash (.data). The size harness's static (src/count/size.rs), on the M0;
# rustup's llvm-nm (check-int-path.sh installed llvm-tools).
nm=$(ls "$(rustc --print sysroot)"/lib/rustlib/*/bin/llvm-nm | head -n 1)
TG_COUNT_OP=size-hedger-compact-static TG_COUNT_K=1 CARGO_TARGET_DIR=target/bss \
  cargo build -q --release --locked --features count --target thumbv6m-none-eabi \
  --bin tailguard-firmware
section=$("$nm" -C target/bss/thumbv6m-none-eabi/release/tailguard-firmware \
  | awk '/compact_hedger_static::HEDGER/ { print $2 }')
echo "--- a PresetCompactHedger static: section symbol type '$section' (b: .bss)"
if [ "$section" != b ] && [ "$section" != B ]; then
  echo "the PresetCompactHedger static is not in .bss" >&2
  exit 1
fi

# The embassy firmware: race_embassy on an embassy executor, defmt decoded by defmt-print.
bash ../.ci/firmware-embassy.sh # (this script runs in firmware/)

# The RTIC firmware: race in an RTIC 2 app on its SysTick monotonic (lm3s6965evb, Cortex-M3).
bash ../.ci/firmware-rtic.sh # (this script runs in firmware/)
