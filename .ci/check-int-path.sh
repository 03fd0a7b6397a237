#!/usr/bin/env bash
# Proves the integer hedge path free of soft-float and 64-bit division on both firmware
# targets: builds firmware/src/bin/int_path.rs for the Cortex-M0 and the Cortex-M4F,
# disassembles each image, follows every direct call and branch from `int_hot_path` (the
# function that runs both hedgers' start, should_hedge and on_success (the McuHedger's and
# the CompactHedger's, whose refreshes walk its auto-scaling window), window records,
# threshold reads and a rank query, and both budgets), and fails if anything reachable is a soft-float
# helper (__aeabi_d*/__aeabi_f*, __adddf3, __fixunsdfdi, ...), a libm function, a 64-bit
# division (__aeabi_uldivmod, __udivdi3, __udivmoddi4, ...), a float instruction, or an
# indirect call it cannot follow. Link-time optimisation links only reachable code, and
# the image's construction code (which validates the f64 configuration) is outside that
# function, so what is reachable from it is exactly the hot path.
#   bash .ci/check-int-path.sh    (installs rustup's llvm-tools for llvm-objdump)
set -euo pipefail
cd "$(dirname "$0")/../firmware"

rustup component add llvm-tools >/dev/null 2>&1 || true
objdump=$(ls "$(rustc --print sysroot)"/lib/rustlib/*/bin/llvm-objdump 2>/dev/null | head -n 1 || true)
if [ ! -x "${objdump:-}" ]; then
  echo "llvm-objdump not found: rustup component add llvm-tools" >&2
  exit 1
fi

listing=$(mktemp)
trap 'rm -f "$listing"' EXIT
status=0
for target in thumbv6m-none-eabi thumbv7em-none-eabihf; do
  cargo build --release --locked --target "$target" --bin int_path
  "$objdump" -d --no-show-raw-insn --demangle "target/$target/release/int_path" >"$listing"
  python3 ../.ci/int_path_calls.py "$listing" int_hot_path "$target" || status=1
done
exit "$status"
