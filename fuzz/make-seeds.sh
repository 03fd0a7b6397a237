#!/usr/bin/env bash
# Regenerates the committed seed corpora (fuzz/corpus/<target>/seed-*). Needs the
# `quantiles` example (cargo build --example quantiles) and python3; with a python that
# has ddsketch (PY=.venv/bin/python) it adds protos written by DataDog's Python library.
set -euo pipefail
PY=${PY:-python3}
case $PY in */*) PY=$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY") ;; esac
cd "$(dirname "$0")"
ex=../target/debug/examples/quantiles
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# decode: a selector byte (sketch and convention, see decode.rs), then a message.
mkdir -p corpus/decode corpus/merge corpus/record_quantile
seq 0 40 | awk '{print 1000 + 25 * $1}' > "$tmp/values"
printf '0\n0\n1234.5\n' >> "$tmp/values"
i=0
for spec in "0 log 0.01" "2 cubic 0.01" "4 int 0.01" "6 log 0.02"; do
  set -- $spec
  for conv in gojava python; do
    sel=$1
    flag=()
    if [ "$conv" = python ]; then sel=$((sel + 1)); flag=(--python-convention); fi
    "$ex" --mapping "$2" --alpha "$3" "${flag[@]}" --proto-out "$tmp/p.pb" < "$tmp/values" > /dev/null
    { printf "\\x$(printf %02x "$sel")"; cat "$tmp/p.pb"; } > "corpus/decode/seed-$i-$2-$3-$conv"
    i=$((i + 1))
  done
done
if "$PY" -c 'import ddsketch' 2>/dev/null; then
  "$PY" - "$tmp" <<'PYEOF'
import math, sys
from ddsketch.ddsketch import BaseDDSketch
from ddsketch.mapping import CubicallyInterpolatedMapping, LinearlyInterpolatedMapping, LogarithmicMapping
from ddsketch.pb.proto import DDSketchProto
from ddsketch.store import DenseStore
import ddsketch.pb.ddsketch_pb2 as pb
out = sys.argv[1]
for sel, name, mapping in [(1, "log", LogarithmicMapping(0.01)),
                           (3, "cubic", CubicallyInterpolatedMapping(0.01)),
                           (5, "int", LinearlyInterpolatedMapping(math.tanh(2 ** -7)))]:
    s = BaseDDSketch(mapping=mapping, store=DenseStore(), negative_store=DenseStore(), zero_count=0.0)
    for v in [0.0, 1000.0, 1100.0, 1234.5, 1500.0]:
        s.add(v)
    with open("%s/py-%s" % (out, name), "wb") as f:
        f.write(bytes([sel]) + DDSketchProto.to_proto(s).SerializeToString())
# Sparse bins, a repeated key, both stores, unknown fields are not expressible here.
m = LogarithmicMapping(0.01)
msg = pb.DDSketch(mapping=pb.IndexMapping(gamma=m.gamma),
                  positiveValues=pb.Store(binCounts={5: 2.0, 80: 1.0}, contiguousBinCounts=[1.0, 0.0, 3.0],
                                          contiguousBinIndexOffset=70),
                  zeroCount=4.0)
with open("%s/py-sparse" % out, "wb") as f:
    f.write(bytes([0]) + msg.SerializeToString())
PYEOF
  for f in "$tmp"/py-*; do cp "$f" "corpus/decode/seed-python-$(basename "$f" | cut -c4-)"; done
fi

# merge and record_quantile: a selector byte, then 9-byte chunks (kind byte + 8 bytes).
python3 - <<'PYEOF'
import struct
def chunk(kind, value):
    if isinstance(value, float):
        return bytes([kind]) + struct.pack("<d", value)
    return bytes([kind]) + struct.pack("<Q", value)
special = [float("nan"), float("inf"), -float("inf"), -1.0, -0.0, 0.0, 5e-324, 2.2e-308,
           1e-3, 1.0, 1e300, 1.7976931348623157e308]
raw = b"".join(chunk(0, v) for v in special)
spread = b"".join(chunk(1, 0x3ff0000000000000 + i * 0x0123456789ab) for i in range(24))
ints = b"".join(chunk(3, v) for v in [0, 1, 1000, 123456789, 2**63, 2**64 - 1])
ties = bytes([4 + 5 * i for i in range(20) for _ in range(9)])
for target in ("merge", "record_quantile"):
    for n, (sel, body) in enumerate([(0, raw), (1, spread), (2, ints + spread), (3, ties + raw),
                                     (7, spread + ints + raw)]):
        with open("corpus/%s/seed-%d" % (target, n), "wb") as f:
            f.write(bytes([sel]) + body)
PYEOF
# decode with a selector of 0x80 and up, merge with 0xc0 and up: the rest is drawn by
# `arbitrary` (a generated DataDog message; two arbitrary sketches).
python3 - <<'PYEOF'
import random
r = random.Random(15)
for i in range(3):
    with open("corpus/decode/seed-generated-%d" % i, "wb") as f:
        f.write(bytes([0x80]) + bytes(r.randrange(256) for _ in range(800)))
    with open("corpus/merge/seed-arbitrary-%d" % i, "wb") as f:
        f.write(bytes([0xc0 + i]) + bytes(r.randrange(256) for _ in range(1500)))
PYEOF
ls corpus/*/ | head -40
