#!/usr/bin/env bash
# Where one operation of the count image spends its instructions, per function: builds the
# image (firmware/src/count.rs) for K1 and K2 repetitions, runs both under QEMU with the
# block profiler (.ci/qemu-tbprofile.c), and prints, per function, the difference of the
# instructions executed divided by K2 - K1 (inlined code counts in its caller). Not part of
# CI; run by hand, as .ci/firmware-cost.sh.
#
#   bash .ci/firmware-profile.sh thumbv7em-none-eabihf window-849-norot-cross-record-edge 0 1
#   INLINED=1 bash .ci/firmware-profile.sh ...   # per inlined function (debug info)
#
# With INLINED=1 each instruction is counted in the innermost tailguard function it was
# inlined from (llvm-addr2line over the images' debug information), which splits a
# record whose whole path is inlined into one function.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/firmware"
target="$1" op="$2" k1="$3" k2="$4"
case "$target" in
  thumbv6m-none-eabi) cpu=cortex-m0 machine=microbit ;;
  thumbv7em-none-eabihf) cpu=cortex-m4 machine=mps2-an386 ;;
  *) echo "target: thumbv6m-none-eabi or thumbv7em-none-eabihf" >&2; exit 1 ;;
esac
# Its own target directory, so it can run beside firmware-cost.sh and firmware-size.sh.
export CARGO_TARGET_DIR="$root/firmware/target/profile"
plugin="$CARGO_TARGET_DIR/libtbprofile.so"
mkdir -p "$CARGO_TARGET_DIR"
gcc -shared -fPIC -O2 -o "$plugin" "$root/.ci/qemu-tbprofile.c"
for k in "$k1" "$k2"; do
  TG_COUNT_OP="$op" TG_COUNT_K="$k" \
    cargo build -q --release --locked --features count --target "$target" \
        --bin tailguard-firmware
  elf="target/profile/$target-$op-$k.elf"
  cp "$CARGO_TARGET_DIR/$target/release/tailguard-firmware" "$elf"
  llvm-nm -n -C --defined-only "$elf" | awk '$2 ~ /^[tT]$/' >"$elf.syms"
  timeout 120 qemu-system-arm -cpu "$cpu" -machine "$machine" -nographic \
    -semihosting-config enable=on,target=native \
    -plugin "$plugin" -d plugin -kernel "$elf" 2>&1 | grep '^tb ' >"$elf.tbs"
done
python3 - "target/profile/$target-$op-$k1.elf" "target/profile/$target-$op-$k2.elf" \
  "$((k2 - k1))" "${INLINED:-0}" <<'PY'
import bisect, collections, json, re, subprocess, sys

def plain(name):
    # Hashes differ between images: drop them so the two images' names match.
    return re.sub(r"::h[0-9a-f]{16}$", "", name)

def per_function(elf):
    syms = []
    for line in open(elf + ".syms"):
        addr, _, name = line.rstrip("\n").split(" ", 2)
        syms.append((int(addr, 16), plain(name)))
    addrs = [a for a, _ in syms]
    out = collections.Counter()
    for line in open(elf + ".tbs"):
        _, vaddr, insns, runs = line.split()
        i = bisect.bisect_right(addrs, int(vaddr, 16) & ~1) - 1
        out[syms[i][1] if i >= 0 else "?"] += int(insns) * int(runs)
    return out

def per_inlined_function(elf):
    # Every instruction's count: a block's instructions are the next ones in the listing.
    listing = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", elf],
                             capture_output=True, text=True).stdout
    addrs = [int(m.group(1), 16) for m in re.finditer(r"^\s+([0-9a-f]+):\s", listing, re.M)]
    index = {a: i for i, a in enumerate(addrs)}
    runs = collections.Counter()
    for line in open(elf + ".tbs"):
        _, vaddr, insns, n = line.split()
        i = index.get(int(vaddr, 16))
        if i is not None:
            for a in addrs[i:i + int(insns)]:
                runs[a] += int(n)
    executed = sorted(runs)
    symbolized = subprocess.run(
        ["llvm-addr2line", "-f", "-i", "-C", "--output-style=JSON", "-e", elf],
        input="\n".join(hex(a) for a in executed), capture_output=True, text=True).stdout
    out = collections.Counter()
    for line, a in zip(symbolized.strip().splitlines(), executed):
        names = [plain(f["FunctionName"]) for f in json.loads(line)["Symbol"]]
        own = [n for n in names if n.startswith("tailguard::")] or names[:1]
        out[own[0]] += runs[a]
    return out

profile = per_inlined_function if sys.argv[4] == "1" else per_function
a, b, n = profile(sys.argv[1]), profile(sys.argv[2]), int(sys.argv[3])
diff = {f: (b[f] - a[f]) / n for f in set(a) | set(b) if b[f] != a[f]}
print(f"{'instructions per operation':>28}  function")
for f, d in sorted(diff.items(), key=lambda kv: -abs(kv[1])):
    print(f"{d:28.1f}  {f}")
print(f"{sum(diff.values()):28.1f}  total")
PY
