#!/usr/bin/env bash
# Flash, RAM and stack per primitive on the Cortex-M0 and the Cortex-M4F: the table of
# BENCHMARKS.md's "Flash, RAM and stack per primitive". Not
# part of CI (it builds 24 firmware images, a few minutes): run it by hand.
#
#   bash .ci/firmware-size.sh
#   TG_SIZE_OPT_LEVEL=s bash .ci/firmware-size.sh   # the firmware's profile at opt-level "s"
#
# Each image is the count firmware built with TG_COUNT_OP=size-<primitive>
# (firmware/src/count/size.rs): it builds one primitive into a static, uses it (record and
# query, or what the primitive does), and prints `size_of` and the peak stack of each call
# (stack painting). `size-none` is the same harness with no primitive: flash, .text and
# static RAM are given as the difference from it (llvm-size: flash = .text + .rodata + .data,
# RAM = .data + .bss), and the flash added is split by kind of code (soft-float f64
# helpers, libm, the integer mapping's DataDog-exact paths for values near a bin edge and
# from 2^32 up, integer division helpers, the rest) from the images' symbols. Its own
# target directory, so it can run beside firmware-cost.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/firmware"
# The release profile's opt-level (3 unless asked): flash-bound firmware often builds "s".
opt_level="${TG_SIZE_OPT_LEVEL:-3}"
export CARGO_PROFILE_RELEASE_OPT_LEVEL="$opt_level"
export CARGO_TARGET_DIR="$root/firmware/target/size-O$opt_level"
out="$CARGO_TARGET_DIR/images"
mkdir -p "$out"

boards=(
  "thumbv6m-none-eabi cortex-m0 microbit"
  "thumbv7em-none-eabihf cortex-m4 mps2-an386"
)
primitives=(none ddsketch-849 ddsketch-300 atomic-849 atomic-300 window-849 window-300
  ratio bucket hedger-849 hedger-300 hedger-compact hedger-compact-static)

# flash and RAM of an image, from llvm-size's sections (Berkeley: text includes .rodata),
# and its .text section alone (the code).
sizes() {
  llvm-size -B "$1" | awk 'NR == 2 { printf "%d %d ", $1 + $2, $2 + $3 }'
  llvm-size -A "$1" | awk '$1 == ".text" { print $2 }'
}

for board in "${boards[@]}"; do
  read -r target cpu machine <<<"$board"
  echo "--- $machine ($cpu, $target), opt-level $opt_level"
  for prim in "${primitives[@]}"; do
    TG_COUNT_OP="size-$prim" TG_COUNT_K=1 \
      cargo build -q --release --locked --features count --target "$target" \
        --bin tailguard-firmware
    elf="$out/$target-$prim.elf"
    cp "$CARGO_TARGET_DIR/$target/release/tailguard-firmware" "$elf"
    read -r flash ram text < <(sizes "$elf")
    if [ "$prim" = none ]; then
      base_flash=$flash base_ram=$ram base_text=$text
    fi
    # A primitive too big for the board's RAM locks the core up: QEMU then runs until the
    # timeout, and the image prints nothing.
    lines=$(timeout 20 qemu-system-arm -cpu "$cpu" -machine "$machine" -nographic \
      -semihosting-config enable=on,target=native -kernel "$elf" 2>&1 | tr '\n' ';' || true)
    echo "$prim: flash $flash (+$((flash - base_flash))), .text $text (+$((text - base_text))), static RAM $ram (+$((ram - base_ram))); ${lines:-did not run (no output)}"
  done
done

echo "--- flash added, by kind of code (bytes, from llvm-nm's symbol sizes, against size-none)"
python3 - "$out" "${primitives[@]}" <<'PY'
import collections, re, subprocess, sys

out, prims = sys.argv[1], sys.argv[2:]

def symbols(elf):
    sizes = collections.Counter()
    nm = subprocess.run(["llvm-nm", "-C", "--print-size", elf], capture_output=True, text=True)
    for line in nm.stdout.splitlines():
        fields = line.split(None, 3)
        if len(fields) == 4 and fields[2] in "tTrR":
            # Hashes and anonymous constants' names differ between images.
            name = re.sub(r"::h[0-9a-f]{16}$", "", fields[3])
            sizes[re.sub(r"\.Lanon\.[0-9a-f]+\.[0-9]+", ".Lanon", name)] += int(fields[1], 16)
    return sizes

KINDS = [
    ("soft-float", r"float::|__aeabi_[dfi]2|__aeabi_u?l?i?2[df]|__aeabi_[df]|__(add|mul|div|sub)[ds]f3"),
    ("libm", r"libm::"),
    ("datadog-edge", r"mapping::int::(key|replay|to_double)|index_wide|index_near_edge"),
    ("int-division", r"div_rem|divmod|__aeabi_u?l?div|__aeabi_u?idiv"),
]

def kind(name):
    return next((k for k, pattern in KINDS if re.search(pattern, name)), "other")

for target in ["thumbv6m-none-eabi", "thumbv7em-none-eabihf"]:
    base = symbols(f"{out}/{target}-none.elf")
    for prim in prims[1:]:
        sizes, added = symbols(f"{out}/{target}-{prim}.elf"), collections.Counter()
        for name in set(base) | set(sizes):
            added[kind(name)] += sizes[name] - base[name]
        print(target, prim, " ".join(f"{k} {added[k]}" for k, _ in KINDS + [("other", "")]))
PY
