#!/usr/bin/env bash
# The embassy firmware (firmware/embassy/): tailguard's race_embassy on an embassy executor
# with our own SysTick time driver, under QEMU on the Cortex-M0 (micro:bit, 16 KiB of RAM)
# and the Cortex-M4F. It hedges a stalling simulated sensor, checks that the hedges rescue
# the stalls after the warm-up within the budget, measures its stack by stack painting,
# and logs all of it with defmt over semihosting; defmt-print decodes that on the host, and
# this script checks the decoded lines. Each board runs two images: the hedger is McuHedger,
# or CompactHedger (the crate's `compact` feature); the compact run must hedge as well as
# McuHedger's on the same board (the same stalls rescued, its hedged p99 at most 5 % above).
# Called by .ci/firmware.sh.
set -euo pipefail
cd "$(dirname "$0")/../firmware/embassy"

# Pinned, so that a new release cannot change what CI checks; it decodes defmt 1's frames.
defmt_print_version=1.2.0
if [ "$(defmt-print --version 2>/dev/null | head -n 1)" != "defmt-print $defmt_print_version" ]; then
  cargo install defmt-print --version "$defmt_print_version" --locked
fi

# target, QEMU cpu, QEMU machine, icount shift. `-icount shift=S` makes the emulated core
# execute one instruction per 2^S ns of virtual time, which SysTick (and so embassy-time)
# counts: the run is deterministic whatever the host's load, and the shift sets the core's
# speed near the real board's clock (the micro:bit's 16 MHz: 2^6 ns, 15.6 MHz; the MPS2's
# 25 MHz: 2^5 ns, 31 MHz), so the hedger's own work costs what it would there.
# `sleep=off`: idle time is skipped, not waited for.
boards=(
  "thumbv6m-none-eabi cortex-m0 microbit 6"
  "thumbv7em-none-eabihf cortex-m4 mps2-an386 5"
)
# Per variant, the figures the comparison reads from its decoded lines.
declare -A stalls rescued p99 hedger peak

# A decoded line must match the extended regex $1.
expect() {
  grep -Eq "$1" "$decoded" || {
    echo "no decoded line matches /$1/ on $machine ($variant hedger)" >&2
    exit 1
  }
}

# variant: the crate's features for it.
variants=(
  "mcu "
  "compact --features=compact"
)

# The number after `$1: ` in the decoded line that matches the extended regex $2.
field() {
  grep -E "$2" "$decoded" | grep -Eo "$1: [0-9]+" | head -n 1 | grep -Eo '[0-9]+$'
}

cargo fmt -- --check
# One target directory: a variant's build overwrites the other's ELF, so each is copied out.
for board in "${boards[@]}"; do
  read -r target cpu machine shift <<<"$board"
  for v in "${variants[@]}"; do
    read -r variant features <<<"$v"
    # shellcheck disable=SC2086 # $features is empty or one word
    cargo build --release --locked --target "$target" $features
    cp "target/$target/release/tailguard-firmware-embassy" "target/$target/embassy-$variant.elf"
  done
done
for board in "${boards[@]}"; do
  read -r target cpu machine shift <<<"$board"
  for v in "${variants[@]}"; do
    read -r variant features <<<"$v"
    echo "--- embassy firmware, $variant hedger, on $machine ($cpu, $target)"
    elf="target/$target/embassy-$variant.elf"
    frames="target/$target/embassy-$variant.defmt"
    decoded="target/$target/embassy-$variant.log"
    # Semihosting's stdout (with target=native, QEMU's own stdout) carries defmt's binary
    # frames and nothing else: the firmware prints no text.
    status=0
    timeout 120 qemu-system-arm -cpu "$cpu" -machine "$machine" -nographic \
      -icount "shift=$shift,align=off,sleep=off" \
      -semihosting-config enable=on,target=native \
      -kernel "$elf" >"$frames" || status=$?
    defmt-print -e "$elf" <"$frames" | tee "$decoded"
    if [ "$status" -ne 0 ]; then
      echo "the embassy firmware ($variant hedger) exited $status on $machine" >&2
      exit 1
    fi
    # The decoded lines: the hedger's Stats (tailguard's defmt::Format) with hedges sent and
    # won, the rescued stalls, the summaries, the stack figure and every check passed.
    expect '^INFO +at the end Stats \{ requests: 500, hedges: [1-9][0-9]*, hedge_wins: [1-9][0-9]*,'
    expect '^INFO +rescue Rescue \{ stalls: [1-9][0-9]*, rescued: [1-9][0-9]*,'
    expect '^INFO +hedged Summary \{ count: 400, p50_us: [0-9]+, p99_us: [0-9]+, slow: [0-9]+ \}'
    expect '^INFO +hedged latencies DDSketch \{ bins: 534, count: 400,'
    expect '^INFO +stack of the run StackUse \{ peak: [0-9]+, size: [0-9]+ \}'
    expect '^INFO +9 passed, 0 failed$'
    # Kept for the comparison below.
    stalls[$variant]=$(field stalls '^INFO +rescue Rescue')
    rescued[$variant]=$(field rescued '^INFO +rescue Rescue')
    p99[$variant]=$(field p99_us '^INFO +hedged Summary')
    hedger[$variant]=$(grep -Eo 'sizes: hedger \([A-Za-z]+\) [0-9]+ B' "$decoded" | grep -Eo '[0-9]+ B$')
    peak[$variant]=$(field peak '^INFO +stack of the run')
    # The compact hedger is a static of a preset (not the default configuration): all zero
    # bytes, so in .bss, with no copy in flash. rustup's llvm-nm (llvm-tools).
    if [ "$variant" = compact ]; then
      rustup component add llvm-tools >/dev/null 2>&1 || true
      nm=$(ls "$(rustc --print sysroot)"/lib/rustlib/*/bin/llvm-nm | head -n 1)
      section=$("$nm" -C "$elf" | awk '/run::HEDGER/ { print $2 }')
      echo "--- the compact hedger static on $machine: section symbol type '$section' (b: .bss)"
      if [ "$section" != b ] && [ "$section" != B ]; then
        echo "the embassy firmware's compact hedger static is not in .bss on $machine" >&2
        exit 1
      fi
    fi
  done
  # The compact hedger hedges as well as McuHedger on the same run: the same stalls, as many
  # rescued, and a hedged p99 at most 5 % above McuHedger's (lower is as good).
  echo "--- compact vs mcu on $machine: stalls ${stalls[compact]} / ${stalls[mcu]}," \
    "rescued ${rescued[compact]} / ${rescued[mcu]}, hedged p99 ${p99[compact]} / ${p99[mcu]} us," \
    "hedger ${hedger[compact]} / ${hedger[mcu]}, peak stack ${peak[compact]} / ${peak[mcu]} B"
  if [ "${stalls[compact]}" -ne "${stalls[mcu]}" ] || [ "${rescued[compact]}" -ne "${rescued[mcu]}" ]; then
    echo "the compact hedger rescued ${rescued[compact]} of ${stalls[compact]} stalls on $machine," \
      "McuHedger ${rescued[mcu]} of ${stalls[mcu]}" >&2
    exit 1
  fi
  if [ $((p99[compact] * 100)) -gt $((p99[mcu] * 105)) ]; then
    echo "the compact hedger's hedged p99 (${p99[compact]} us) is over 5 % above" \
      "McuHedger's (${p99[mcu]} us) on $machine" >&2
    exit 1
  fi
done
