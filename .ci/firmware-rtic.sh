#!/usr/bin/env bash
# The RTIC firmware (firmware/rtic/): tailguard's race in an RTIC 2 app, the SysTick
# monotonic (rtic-monotonics) its clock and its sleep, under QEMU's lm3s6965evb (the
# Cortex-M3 board RTIC's own examples run on). It hedges a stalling simulated sensor and
# checks, by the embassy firmware's criteria, that the hedges rescue the stalls after the
# warm-up within the budget; it prints over semihosting and exits 1 on a failed check.
# Called by .ci/firmware.sh; runs alone too: bash .ci/firmware-rtic.sh
set -euo pipefail
cd "$(dirname "$0")/../firmware/rtic"

target=thumbv7m-none-eabi
rustup target add "$target"

# `-icount shift=6`: one instruction per 2^6 ns of virtual time (15.6 MHz, near the 12 MHz
# QEMU clocks the board's SysTick at, which the monotonic counts), so the run is
# deterministic whatever the host's load and the hedger's own work costs what it would
# on a core that slow. `sleep=off`: idle time is skipped, not waited for.
shift=6

cargo fmt -- --check
cargo build --release --locked --target "$target"
elf="target/$target/release/tailguard-firmware-rtic"
log="target/$target/rtic.log"

echo "--- RTIC firmware on lm3s6965evb (cortex-m3, $target)"
status=0
timeout 60 qemu-system-arm -cpu cortex-m3 -machine lm3s6965evb -nographic \
  -icount "shift=$shift,align=off,sleep=off" \
  -semihosting-config enable=on,target=native \
  -kernel "$elf" | tee "$log" || status=$?
if [ "$status" -ne 0 ]; then
  echo "the RTIC firmware exited $status" >&2
  exit 1
fi

# A line must match the extended regex $1.
expect() {
  grep -Eq "$1" "$log" || {
    echo "no line matches /$1/ in the RTIC firmware's output" >&2
    exit 1
  }
}
expect '^at the end Stats \{ requests: 500, hedges: [1-9][0-9]*, hedge_wins: [1-9][0-9]*,'
expect '^rescue Rescue \{ stalls: [1-9][0-9]*, rescued: [1-9][0-9]*,'
expect '^hedged Summary \{ count: 400, p50_us: [0-9]+, p99_us: [0-9]+, slow: [0-9]+ \}'
expect '^8 passed, 0 failed$'
llvm-size -A "$elf" | grep -E '^\.(text|rodata|data|bss) '
