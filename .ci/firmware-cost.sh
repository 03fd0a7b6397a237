#!/usr/bin/env bash
# Instructions per operation on the Cortex-M0 and the Cortex-M4F, counted under QEMU by
# the K-versus-2K method, and the flash taken by the firmware. Not part of CI (it builds
# 12 firmware images): run it by hand, BENCHMARKS.md holds its output.
#
#   bash .ci/firmware-cost.sh            # K = 1000
#   K=5000 bash .ci/firmware-cost.sh
#
# Each image is built with `--features count`: it repeats one operation K times and exits
# (firmware/src/count.rs). The instruction-counting QEMU plugin is built from
# ../shared/tools/qemu-insncount.c (override with INSNCOUNT_SRC). Per operation:
# (insns(2K) - insns(K)) / K, which includes the loop and the xorshift that makes each
# value; the `none` operation measures those alone, and "net" subtracts it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/firmware"
K="${K:-1000}"
src="${INSNCOUNT_SRC:-$root/../shared/tools/qemu-insncount.c}"
plugin="$root/firmware/target/libinsncount.so"
mkdir -p target/cost
gcc -shared -fPIC -O2 -o "$plugin" "$src"

boards=(
  "thumbv6m-none-eabi cortex-m0 microbit"
  "thumbv7em-none-eabihf cortex-m4 mps2-an386"
)

insns() { # target cpu machine elf
  timeout 120 qemu-system-arm -cpu "$2" -machine "$3" -nographic \
    -semihosting-config enable=on,target=native \
    -plugin "$plugin" -d plugin -kernel "$4" 2>&1 | sed -n 's/^insns: //p'
}

for board in "${boards[@]}"; do
  read -r target cpu machine <<<"$board"
  declare -A per_op=()
  for op in none int cubic int-p99 int-merge; do
    counts=()
    for k in "$K" "$((2 * K))"; do
      TG_COUNT_OP="$op" TG_COUNT_K="$k" \
        cargo build -q --release --locked --features count --target "$target" \
          --bin tailguard-firmware
      elf="target/cost/$target-$op-$k.elf"
      cp "target/$target/release/tailguard-firmware" "$elf"
      counts+=("$(insns "$target" "$cpu" "$machine" "$elf")")
    done
    per_op[$op]=$(( (counts[1] - counts[0]) / K ))
    echo "$machine $cpu $op: insns(K=$K) ${counts[0]}, insns(2K) ${counts[1]}, per op ${per_op[$op]}"
  done
  for op in int cubic; do
    echo "$machine $cpu $op: net of the loop $(( per_op[$op] - per_op[none] )) instructions per record"
  done
  echo
done

echo "--- flash (llvm-size, bytes): the checks image, and the count images"
cargo build -q --release --locked --target thumbv6m-none-eabi --bin tailguard-firmware
cargo build -q --release --locked --target thumbv7em-none-eabihf --bin tailguard-firmware
llvm-size target/thumbv6m-none-eabi/release/tailguard-firmware \
  target/thumbv7em-none-eabihf/release/tailguard-firmware \
  target/cost/*-"$K".elf
