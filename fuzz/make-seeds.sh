#!/usr/bin/env bash
# Regenerates the committed seed corpora (fuzz/corpus/<target>/seed-*). Needs the
# `quantiles` example (cargo build --example quantiles) and python3; with a python that
# has ddsketch (PY=.venv/bin/python) it adds protos written by DataDog's Python library,
# with opentelemetry-sdk data points written by the OpenTelemetry SDK.
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

# rebin: the decode seeds (the same selector byte), and messages of other mappings:
# Python's at gammas tailguard does not use, Go's default LINEAR, Java's QUADRATIC and
# QUARTIC (written with ddsketch's protobuf classes).
mkdir -p corpus/rebin
for f in corpus/decode/seed-*; do cp "$f" "corpus/rebin/$(basename "$f")"; done
if "$PY" -c 'import ddsketch' 2>/dev/null; then
  "$PY" - <<'PYEOF'
import math
from ddsketch.ddsketch import BaseDDSketch, DDSketch, LogCollapsingLowestDenseDDSketch
from ddsketch.mapping import CubicallyInterpolatedMapping, LinearlyInterpolatedMapping
from ddsketch.pb.proto import DDSketchProto
from ddsketch.store import DenseStore
import ddsketch.pb.ddsketch_pb2 as pb
values = [0.0, 0.37, 1.0, 7.0, 1000.0, 1234.5, 1500.0, 2.5e6, 9e9]
def base(mapping):
    return BaseDDSketch(mapping=mapping, store=DenseStore(), negative_store=DenseStore(), zero_count=0.0)
for sel, name, s in [(1, "log-0.013", DDSketch(0.013)),
                     (3, "collapsing-0.05", LogCollapsingLowestDenseDDSketch(0.05, bin_limit=64)),
                     (5, "linear-0.01", base(LinearlyInterpolatedMapping(0.01))),
                     (7, "cubic-0.02", base(CubicallyInterpolatedMapping(0.02)))]:
    for v in values:
        s.add(v)
    with open("corpus/rebin/seed-python-%s" % name, "wb") as f:
        f.write(bytes([sel]) + DDSketchProto.to_proto(s).SerializeToString())
# Go/Java convention, keys from their definitions: floor(approx_log2 * multiplier + offset).
def approx(v, code):
    m, e = math.frexp(v)
    s, e = 2 * m - 1, e - 1
    return e + {1: s, 2: s * (4 - s) / 3,
                4: (((-2 / 25 * s + 8 / 25) * s - 17 / 25) * s + 36 / 25) * s}[code]
for sel, name, code, gamma, offset in [(4, "go-linear-0.01", 1, 1.013959948367022, None),
                                       (2, "java-quadratic-0.01", 2, 1.0186, 0.0),
                                       (0, "java-quartic-0.01", 4, 1.0204, 0.0)]:
    multiplier = 1 / math.log2(gamma)
    offset = multiplier if offset is None else offset
    counts = {}
    for v in values[1:]:
        key = math.floor(approx(v, code) * multiplier + offset)
        counts[key] = counts.get(key, 0.0) + 1.0
    msg = pb.DDSketch(mapping=pb.IndexMapping(gamma=gamma, indexOffset=offset, interpolation=code),
                      positiveValues=pb.Store(binCounts=counts), zeroCount=1.0)
    with open("corpus/rebin/seed-gojava-%s" % name, "wb") as f:
        f.write(bytes([sel]) + msg.SerializeToString())
PYEOF
# otlp_decode: a selector byte (scale and range, see otlp_decode.rs), then an OTLP
# ExponentialHistogramDataPoint; with a python that has opentelemetry-sdk, also points the
# OpenTelemetry SDK wrote (padded with empty buckets, as it writes them).
mkdir -p corpus/otlp_decode
i=0
for spec in "0 0.02" "1 0.4" "2 0.005" "3 0.9"; do
  set -- $spec
  "$ex" --mapping otel --alpha "$2" --otlp-out "$tmp/p.otlp" < "$tmp/values" > /dev/null
  { printf "\\x$(printf %02x "$1")"; cat "$tmp/p.otlp"; } > "corpus/otlp_decode/seed-$i-alpha-$2"
  i=$((i + 1))
done
if "$PY" -c 'import opentelemetry.sdk, opentelemetry.proto' 2>/dev/null; then
  "$PY" - "$tmp" <<'PYEOF'
import sys
from opentelemetry.proto.metrics.v1 import metrics_pb2 as pb
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
out = sys.argv[1]
for sel, scale in [(0, 8), (1, 0), (2, 8), (3, -2)]:
    reader = InMemoryMetricReader()
    view = View(instrument_name="h", aggregation=ExponentialBucketHistogramAggregation(max_scale=scale))
    provider = MeterProvider(metric_readers=[reader], views=[view])
    h = provider.get_meter("seeds").create_histogram("h")
    for v in [0, 0.5, 1, 1000, 1100, 1234.5, 1500, 2 ** 20]:
        h.record(v)
    p = reader.get_metrics_data().resource_metrics[0].scope_metrics[0].metrics[0].data.data_points[0]
    msg = pb.ExponentialHistogramDataPoint(
        start_time_unix_nano=p.start_time_unix_nano, time_unix_nano=p.time_unix_nano,
        count=p.count, sum=p.sum, scale=p.scale, zero_count=p.zero_count,
        positive=pb.ExponentialHistogramDataPoint.Buckets(offset=p.positive.offset,
                                                          bucket_counts=list(p.positive.bucket_counts)),
        min=p.min, max=p.max)
    with open("%s/sdk-%d-scale%d" % (out, sel, p.scale), "wb") as f:
        f.write(bytes([sel]) + msg.SerializeToString())
PYEOF
  for f in "$tmp"/sdk-*; do cp "$f" "corpus/otlp_decode/seed-$(basename "$f")"; done
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
# otlp_decode with a selector of 0x80 and up: the rest draws a data point as SDKs and
# collectors write one (`tailguard::fuzzing::otlp_data_point`).
python3 - <<'PYEOF'
import random
r = random.Random(1515)
for i in range(4):
    with open("corpus/otlp_decode/seed-generated-%d" % i, "wb") as f:
        f.write(bytes([0x80 + i]) + bytes(r.randrange(256) for _ in range(1200)))
PYEOF
# retry_after: a wall-clock reading (8 bytes, little-endian), then a `Retry-After` value:
# the RFC's examples in each form, delay-seconds, and garbage.
mkdir -p corpus/retry_after
python3 - <<'PYEOF'
import struct
now = 784111777 - 3600  # an hour before the RFC's example date
seeds = [b"120", b"0", b" 18446744073709551616 ", b"Fri, 31 Dec 1999 23:59:59 GMT",
         b"Sun, 06 Nov 1994 08:49:37 GMT", b"Sunday, 06-Nov-94 08:49:37 GMT",
         b"Sun Nov  6 08:49:37 1994", b"Tue, 29 Feb 2000 00:00:00 GMT", b"soon"]
for i, value in enumerate(seeds):
    with open("corpus/retry_after/seed-%d" % i, "wb") as f:
        f.write(struct.pack("<Q", now) + value)
PYEOF
ls corpus/*/ | head -40
