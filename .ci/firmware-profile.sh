#!/usr/bin/env bash
# Where one operation of the count image spends its instructions, per function: builds the
# image (firmware/src/count.rs) for K1 and K2 repetitions, runs both under QEMU with the
# block profiler (.ci/qemu-tbprofile.c), and prints, per function, the difference of the
# instructions executed divided by K2 - K1 (inlined code counts in its caller). Not part of
# CI; run by hand, as .ci/firmware-cost.sh.
#
#   bash .ci/firmware-profile.sh thumbv7em-none-eabihf window-849-norot-cross-record-edge 0 1
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/firmware"
target="$1" op="$2" k1="$3" k2="$4"
case "$target" in
  thumbv6m-none-eabi) cpu=cortex-m0 machine=microbit ;;
  thumbv7em-none-eabihf) cpu=cortex-m4 machine=mps2-an386 ;;
  *) echo "target: thumbv6m-none-eabi or thumbv7em-none-eabihf" >&2; exit 1 ;;
esac
plugin="$root/firmware/target/libtbprofile.so"
gcc -shared -fPIC -O2 -o "$plugin" "$root/.ci/qemu-tbprofile.c"
mkdir -p target/profile
for k in "$k1" "$k2"; do
  TG_COUNT_OP="$op" TG_COUNT_K="$k" \
    cargo build -q --release --locked --features count --target "$target"
  elf="target/profile/$target-$op-$k.elf"
  cp "target/$target/release/tailguard-firmware" "$elf"
  llvm-nm -n -C --defined-only "$elf" | awk '$2 ~ /^[tT]$/' >"$elf.syms"
  timeout 120 qemu-system-arm -cpu "$cpu" -machine "$machine" -nographic \
    -semihosting-config enable=on,target=native \
    -plugin "$plugin" -d plugin -kernel "$elf" 2>&1 | grep '^tb ' >"$elf.tbs"
done
python3 - "target/profile/$target-$op-$k1.elf" "target/profile/$target-$op-$k2.elf" \
  "$((k2 - k1))" <<'PY'
import bisect, collections, re, sys

def per_function(elf):
    syms = []
    for line in open(elf + ".syms"):
        addr, _, name = line.rstrip("\n").split(" ", 2)
        # Hashes differ between images: drop them so the two images' names match.
        syms.append((int(addr, 16), re.sub(r"::h[0-9a-f]{16}$", "", name)))
    addrs = [a for a, _ in syms]
    out = collections.Counter()
    for line in open(elf + ".tbs"):
        _, vaddr, insns, runs = line.split()
        i = bisect.bisect_right(addrs, int(vaddr, 16) & ~1) - 1
        out[syms[i][1] if i >= 0 else "?"] += int(insns) * int(runs)
    return out

a, b, n = per_function(sys.argv[1]), per_function(sys.argv[2]), int(sys.argv[3])
diff = {f: (b[f] - a[f]) / n for f in set(a) | set(b) if b[f] != a[f]}
print(f"{'instructions per operation':>28}  function")
for f, d in sorted(diff.items(), key=lambda kv: -abs(kv[1])):
    print(f"{d:28.1f}  {f}")
print(f"{sum(diff.values()):28.1f}  total")
PY
