"""The Python side of tailguard's auto-scaling interop test (tests/exponential_interop.rs):
the OpenTelemetry Python SDK's exponential histogram aggregation with max_size = B, the
sketch's own rule for downscaling.

tests/exponential_interop.rs writes into WORKDIR:

  cases.txt        one case per line: NAME B DATASET
  DATASET.values   a data set, one value per line (integers without a decimal point:
                   recorded as Python ints, as tailguard records them as u64)

For every case this script builds the SDK's histogram of the data set, through a
MeterProvider, an InMemoryMetricReader and a View giving the instrument
ExponentialBucketHistogramAggregation(max_size=B, max_scale=8) (8: tailguard's finest
scale; the SDK's default is 20), and writes NAME.sdk.txt:

  scale offset zero_count count
  the positive bucket counts, from offset up (without the empty buckets the SDK's
  backing array may leave at either end), space-separated
  min max sum (Python's repr of each float)
  the negative bucket counts (none expected)

and NAME.sdk.pb, the same point as opentelemetry-proto's ExponentialHistogramDataPoint,
serialized (the SDK's backing array as it is, empty end buckets included), for the Rust
side to decode into an ExponentialSketch of B buckets.

The Rust side compares; this script only fails if the SDK itself does.
"""

import sys

from opentelemetry.sdk.version import __version__ as sdk_version

from otel_sdk import read_values, sdk_point, to_proto, trimmed

# tailguard's finest scale (its table of bucket edges is at scale 8).
MAX_SCALE = 8


def main():
    work = sys.argv[1]
    cases = [line.split() for line in open("%s/cases.txt" % work) if line.strip()]
    data = {}
    for name, max_size, dataset in cases:
        if dataset not in data:
            data[dataset] = read_values("%s/%s.values" % (work, dataset))
        p = sdk_point(data[dataset], int(max_size), MAX_SCALE)
        offset, counts = trimmed(p.positive)
        _, negative = trimmed(p.negative)
        with open("%s/%s.sdk.txt" % (work, name), "w") as f:
            f.write("%d %d %d %d\n" % (p.scale, offset, p.zero_count, p.count))
            f.write(" ".join(str(c) for c in counts) + "\n")
            f.write("%r %r %r\n" % (float(p.min), float(p.max), float(p.sum)))
            f.write(" ".join(str(c) for c in negative) + "\n")
        with open("%s/%s.sdk.pb" % (work, name), "wb") as f:
            f.write(to_proto(p).SerializeToString())
    print("opentelemetry-sdk %s: %d cases aggregated" % (sdk_version, len(cases)))


if __name__ == "__main__":
    main()
