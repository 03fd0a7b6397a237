#!/usr/bin/env bash
# Flash, RAM and stack per primitive on the Cortex-M0 and the Cortex-M4F (issue 13): the
# table of BENCHMARKS.md's "Per-primitive cost on the microcontroller (issue 13)". Not
# part of CI (it builds 22 firmware images, a few minutes): run it by hand.
#
#   bash .ci/firmware-size.sh
#
# Each image is the count firmware built with TG_COUNT_OP=size-<primitive>
# (firmware/src/count/size.rs): it builds one primitive into a static, uses it (record and
# query, or what the primitive does), and prints `size_of` and the peak stack of each call
# (stack painting). `size-none` is the same harness with no primitive: flash and static
# RAM are given as the difference from it (llvm-size: flash = .text + .rodata + .data,
# RAM = .data + .bss). Its own target directory, so it can run beside firmware-cost.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/firmware"
export CARGO_TARGET_DIR="$root/firmware/target/size"
out="$CARGO_TARGET_DIR/images"
mkdir -p "$out"

boards=(
  "thumbv6m-none-eabi cortex-m0 microbit"
  "thumbv7em-none-eabihf cortex-m4 mps2-an386"
)
primitives=(none ddsketch-849 ddsketch-300 atomic-849 atomic-300 window-849 window-300
  ratio bucket hedger-849 hedger-300)

# flash and RAM of an image, from llvm-size's sections (Berkeley: text includes .rodata).
sizes() {
  llvm-size -B "$1" | awk 'NR == 2 { print $1 + $2, $2 + $3 }'
}

for board in "${boards[@]}"; do
  read -r target cpu machine <<<"$board"
  echo "--- $machine ($cpu, $target)"
  for prim in "${primitives[@]}"; do
    TG_COUNT_OP="size-$prim" TG_COUNT_K=1 \
      cargo build -q --release --locked --features count --target "$target"
    elf="$out/$target-$prim.elf"
    cp "$CARGO_TARGET_DIR/$target/release/tailguard-firmware" "$elf"
    read -r flash ram < <(sizes "$elf")
    if [ "$prim" = none ]; then
      base_flash=$flash base_ram=$ram
    fi
    # A primitive too big for the board's RAM locks the core up: QEMU then runs until the
    # timeout, and the image prints nothing.
    lines=$(timeout 20 qemu-system-arm -cpu "$cpu" -machine "$machine" -nographic \
      -semihosting-config enable=on,target=native -kernel "$elf" 2>&1 | tr '\n' ';' || true)
    echo "$prim: flash $flash (+$((flash - base_flash))), static RAM $ram (+$((ram - base_ram))); ${lines:-did not run (no output)}"
  done
done
