#!/usr/bin/env bash
# Instructions per operation on the Cortex-M0 and the Cortex-M4F, counted under QEMU by
# the K-versus-2K method, and the flash taken by the firmware. Not part of CI (it builds
# 12 firmware images): run it by hand, BENCHMARKS.md holds its output.
#
#   bash .ci/firmware-cost.sh            # K = 1000
#   K=5000 bash .ci/firmware-cost.sh
#   PARTS=window bash .ci/firmware-cost.sh   # only the window's calls (PARTS: ops window exp)
#   PARTS=exp bash .ci/firmware-cost.sh      # only the exponential window's records
#   PARTS=window SITUATIONS='cortex-m0/window-300-norot-jump-* cortex-m4/window-849-*-max' \
#     bash .ci/firmware-cost.sh              # only the window's calls these globs match
#
# SITUATIONS (default `*`): glob patterns, space-separated, each matched against
# `<cpu>/window-<bins>-<situation>` (cpu: cortex-m0 or cortex-m4); a window call is
# counted if any pattern matches it.
#
# Each image is built with `--features count`: it repeats one operation K times and exits
# (firmware/src/count.rs). The instruction-counting QEMU plugin is built from
# ../shared/tools/qemu-insncount.c beside the main checkout (override with INSNCOUNT_SRC). Per operation:
# (insns(2K) - insns(K)) / K, which includes the loop and the xorshift that makes each
# value; the `none` operation measures those alone, and "net" subtracts it.
#
# The window part counts single calls of `Window::record_u64` and `Window::maintain` in
# each situation a call can meet (firmware/src/count/window.rs: a clock one interval on,
# a jump onto a full slot, onto an empty one or onto the empty spare, one past the
# clock's horizon, a clock gone back, a value on a bin's edge or above the range, with
# records rotating or not): each image fills the window, sets the clock, then makes K
# calls; the image for K = 1 less the one for K = 0 is the first call. About 300 images:
# 30 to 60 min.
# Where a call's instructions go, function by function: .ci/firmware-profile.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/firmware"
K="${K:-1000}"
# Beside the main checkout (its git directory's parent), so a worktree finds it too.
checkout="$(dirname "$(git -C "$root" rev-parse --path-format=absolute --git-common-dir)")"
src="${INSNCOUNT_SRC:-$checkout/../shared/tools/qemu-insncount.c}"
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

PARTS="${PARTS:-ops window exp}"

build_and_count() { # target cpu machine op k: prints the instructions
  TG_COUNT_OP="$4" TG_COUNT_K="$5" \
    cargo build -q --release --locked --features count --target "$1" --bin tailguard-firmware
  local elf="target/cost/$1-$4-$5.elf"
  cp "target/$1/release/tailguard-firmware" "$elf"
  insns "$1" "$2" "$3" "$elf"
}

[[ " $PARTS " == *" ops "* ]] && for board in "${boards[@]}"; do
  read -r target cpu machine <<<"$board"
  declare -A per_op=()
  for op in none int cubic int-p99 int-merge window-849-norot-loop window-849-rot-loop \
    window-300-norot-loop; do
    counts=()
    for k in "$K" "$((2 * K))"; do
      counts+=("$(build_and_count "$target" "$cpu" "$machine" "$op" "$k")")
    done
    per_op[$op]=$(( (counts[1] - counts[0]) / K ))
    echo "$machine $cpu $op: insns(K=$K) ${counts[0]}, insns(2K) ${counts[1]}, per op ${per_op[$op]}"
  done
  for op in int cubic window-849-norot-loop window-849-rot-loop window-300-norot-loop; do
    echo "$machine $cpu $op: net of the loop $(( per_op[$op] - per_op[none] )) instructions per record"
  done
  echo
done

# Situations of one call (names: firmware/src/count/window.rs). Records that do not
# rotate, every clock against every kind of value (ordinary, on an edge, wide, u64::MAX):
norot_records=()
for clock in steady cross jump gap ahead4 ahead1000 beyond back; do
  for value in "" -edge -wide -max; do
    norot_records+=("norot-$clock-record$value")
  done
done
window_849=(
  "${norot_records[@]}"
  norot-steady-maintain-idle norot-steady-maintain norot-cross-maintain
  norot-jump-maintain rot-steady-record rot-cross-record rot-jump-record rot-back-record
)
window_300=(
  "${norot_records[@]}"
  norot-steady-maintain norot-cross-maintain norot-jump-maintain rot-cross-record
  rot-jump-record
)
SITUATIONS="${SITUATIONS:-*}"
wanted() { # cpu op: whether a SITUATIONS pattern matches
  local pattern patterns
  read -ra patterns <<<"$SITUATIONS" # split, not expanded against file names
  for pattern in "${patterns[@]}"; do
    # shellcheck disable=SC2053 # the pattern is a glob
    [[ "$1/$2" == $pattern ]] && return 0
  done
  return 1
}
[[ " $PARTS " == *" window "* ]] && for board in "${boards[@]}"; do
  read -r target cpu machine <<<"$board"
  for bins in 849 300; do
    list="window_$bins[@]"
    for situation in "${!list}"; do
      op="window-$bins-$situation"
      wanted "$cpu" "$op" || continue
      # A window too big for the board's RAM (849 bins on the micro:bit, once its image
      # also scans) locks the core up: QEMU stops and counts nothing.
      before=$(build_and_count "$target" "$cpu" "$machine" "$op" 0 || true)
      after=$(build_and_count "$target" "$cpu" "$machine" "$op" 1 || true)
      if [[ -n "$before" && -n "$after" ]]; then
        echo "$machine $cpu $op: one call $((after - before)) instructions"
      else
        echo "$machine $cpu $op: did not run (the core locked up: out of RAM)"
      fi
    done
  done
  echo
done
# The exponential window's record (names: firmware/src/count/exponential.rs).
[[ " $PARTS " == *" exp "* ]] && for board in "${boards[@]}"; do
  read -r target cpu machine <<<"$board"
  for op in exp-rot-loop exp-norot-loop; do
    counts=()
    for k in "$K" "$((2 * K))"; do
      counts+=("$(build_and_count "$target" "$cpu" "$machine" "$op" "$k")")
    done
    echo "$machine $cpu $op: per record $(( (counts[1] - counts[0]) / K )) (loop included)"
  done
  for rotation in rot norot; do
    for situation in first steady outside cross jump; do
      op="exp-$rotation-$situation"
      wanted "$cpu" "$op" || continue
      before=$(build_and_count "$target" "$cpu" "$machine" "$op" 0)
      after=$(build_and_count "$target" "$cpu" "$machine" "$op" 1)
      echo "$machine $cpu $op: one call $((after - before)) instructions"
    done
  done
  echo
done
[[ " $PARTS " == *" ops "* ]] || exit 0

echo "--- flash (llvm-size, bytes): the checks image, and the count images"
cargo build -q --release --locked --target thumbv6m-none-eabi --bin tailguard-firmware
cargo build -q --release --locked --target thumbv7em-none-eabihf --bin tailguard-firmware
llvm-size target/thumbv6m-none-eabi/release/tailguard-firmware \
  target/thumbv7em-none-eabihf/release/tailguard-firmware \
  target/cost/*-"$K".elf
