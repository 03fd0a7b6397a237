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

from opentelemetry.proto.metrics.v1 import metrics_pb2 as pb
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
from opentelemetry.sdk.version import __version__ as sdk_version

# tailguard's finest scale (its table of bucket edges is at scale 8).
MAX_SCALE = 8


def read_values(path):
    values = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            values.append(float(line) if ("." in line or "e" in line or "n" in line) else int(line))
    return values


def sdk_point(max_size, values):
    reader = InMemoryMetricReader()
    view = View(
        instrument_name="h",
        aggregation=ExponentialBucketHistogramAggregation(max_size=max_size, max_scale=MAX_SCALE),
    )
    provider = MeterProvider(metric_readers=[reader], views=[view])
    histogram = provider.get_meter("tailguard-exponential-interop").create_histogram("h")
    for v in values:
        histogram.record(v)
    data = reader.get_metrics_data()
    provider.shutdown()
    points = [
        p
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
        for p in m.data.data_points
    ]
    assert len(points) == 1, points
    return points[0]


def to_proto(p):
    """The SDK's point as opentelemetry-proto's message."""
    return pb.ExponentialHistogramDataPoint(
        start_time_unix_nano=p.start_time_unix_nano,
        time_unix_nano=p.time_unix_nano,
        count=p.count,
        sum=p.sum,
        scale=p.scale,
        zero_count=p.zero_count,
        positive=pb.ExponentialHistogramDataPoint.Buckets(
            offset=p.positive.offset, bucket_counts=list(p.positive.bucket_counts)
        ),
        negative=pb.ExponentialHistogramDataPoint.Buckets(
            offset=p.negative.offset, bucket_counts=list(p.negative.bucket_counts)
        ),
        flags=p.flags,
        min=p.min,
        max=p.max,
        zero_threshold=getattr(p, "zero_threshold", 0.0),
    )


def trimmed(buckets):
    counts = list(buckets.bucket_counts)
    offset = buckets.offset
    while counts and counts[0] == 0:
        counts.pop(0)
        offset += 1
    while counts and counts[-1] == 0:
        counts.pop()
    return (offset if counts else 0), counts


def main():
    work = sys.argv[1]
    cases = [line.split() for line in open("%s/cases.txt" % work) if line.strip()]
    data = {}
    for name, max_size, dataset in cases:
        if dataset not in data:
            data[dataset] = read_values("%s/%s.values" % (work, dataset))
        p = sdk_point(int(max_size), data[dataset])
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
