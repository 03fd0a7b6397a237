"""The Python side of tailguard's OTLP interop test against the OpenTelemetry Python SDK.

Driven by tests/otel_interop.rs, which writes into WORKDIR:

  cases.txt        one case per line: NAME SCALE DATASET
  DATASET.values   a data set, one value per line (integers without a decimal point:
                   they are recorded as Python ints, as tailguard records them as u64)
  NAME.tg.pb       tailguard's sketch of DATASET at SCALE, as an OTLP
                   ExponentialHistogramDataPoint (tailguard::otlp::encode)

For every case this script

  * parses NAME.tg.pb with opentelemetry-proto's ExponentialHistogramDataPoint;
  * builds the SDK's own exponential histogram of the data set: a MeterProvider with an
    InMemoryMetricReader and a View giving the instrument
    ExponentialBucketHistogramAggregation(max_size=MAX_SIZE, max_scale=SCALE), so that
    it never downscales (checked: its point must be at SCALE);
  * compares the two field by field: scale, positive offset and bucket counts (the SDK's
    without the empty buckets it may leave at the end), negative buckets (none), zero count, count, min, max, sum (to a relative 1e-12: both add the
    same floats in the same order, or the same integers exactly);
  * writes the SDK's point as NAME.sdk.pb (opentelemetry-proto), for the Rust side to
    decode back.

It prints one line per case and exits non-zero on the first difference.
"""

import math
import sys

from opentelemetry.proto.metrics.v1 import metrics_pb2 as pb
from opentelemetry.sdk.version import __version__ as sdk_version

from otel_sdk import read_values, sdk_point, to_proto, trimmed

# The SDK's largest max_size; at scale 8 it spans 64 powers of two, more than any data set.
MAX_SIZE = 16384


def fail(name, what, ours, theirs):
    print("MISMATCH %s: %s: tailguard %r, SDK %r" % (name, what, ours, theirs))
    sys.exit(1)


def main():
    work = sys.argv[1]
    cases = [line.split() for line in open("%s/cases.txt" % work) if line.strip()]
    data = {}
    for name, scale, dataset in cases:
        scale = int(scale)
        if dataset not in data:
            data[dataset] = read_values("%s/%s.values" % (work, dataset))
        values = data[dataset]
        with open("%s/%s.tg.pb" % (work, name), "rb") as f:
            ours = pb.ExponentialHistogramDataPoint.FromString(f.read())
        theirs = sdk_point(values, MAX_SIZE, scale)
        if theirs.scale != scale:
            fail(name, "the SDK downscaled (raise MAX_SIZE)", scale, theirs.scale)
        # tailguard writes no empty bucket at either end.
        if trimmed(ours.positive) != (ours.positive.offset, list(ours.positive.bucket_counts)):
            fail(name, "empty buckets at an end", list(ours.positive.bucket_counts), None)
        positive, sdk_positive = trimmed(ours.positive), trimmed(theirs.positive)
        for what, a, b in [
            ("scale", ours.scale, theirs.scale),
            ("positive.offset", positive[0], sdk_positive[0]),
            ("positive.bucket_counts", positive[1], sdk_positive[1]),
            ("negative.bucket_counts", trimmed(ours.negative)[1], trimmed(theirs.negative)[1]),
            ("zero_count", ours.zero_count, theirs.zero_count),
            ("count", ours.count, theirs.count),
            ("min", ours.min, float(theirs.min)),
            ("max", ours.max, float(theirs.max)),
        ]:
            if a != b:
                if isinstance(a, list):
                    first = next(i for i in range(min(len(a), len(b)) + 1) if i >= min(len(a), len(b)) or a[i] != b[i])
                    fail(name, "%s (lengths %d, %d; first difference at position %d)" % (what, len(a), len(b), first),
                         a[max(0, first - 2):first + 3], b[max(0, first - 2):first + 3])
                fail(name, what, a, b)
        for field in ("sum", "min", "max"):
            if not ours.HasField(field):
                fail(name, "%s is not set" % field, None, getattr(theirs, field))
        sdk_sum = float(theirs.sum)
        if not math.isclose(ours.sum, sdk_sum, rel_tol=1e-12, abs_tol=0.0):
            fail(name, "sum", ours.sum, sdk_sum)
        with open("%s/%s.sdk.pb" % (work, name), "wb") as f:
            f.write(to_proto(theirs).SerializeToString())
        print("ok %s: scale %d, offset %d, %d buckets, zero count %d, count %d"
              % (name, ours.scale, ours.positive.offset, len(ours.positive.bucket_counts), ours.zero_count, ours.count))
    print("opentelemetry-sdk %s: %d cases equal bucket for bucket" % (sdk_version, len(cases)))


if __name__ == "__main__":
    main()
