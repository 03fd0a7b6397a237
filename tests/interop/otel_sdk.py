"""What the OpenTelemetry interop scripts share: the data sets' files, the SDK's
exponential histogram of a data set, and its point as opentelemetry-proto's message."""

from opentelemetry.proto.metrics.v1 import metrics_pb2 as pb
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View


def read_values(path):
    """A data set, one value per line: integers without a decimal point are Python ints,
    as tailguard records them as u64."""
    values = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            values.append(float(line) if ("." in line or "e" in line or "n" in line) else int(line))
    return values


def sdk_point(values, max_size, max_scale):
    """The SDK's ExponentialHistogramDataPoint of `values`, aggregated with
    ExponentialBucketHistogramAggregation(max_size, max_scale)."""
    reader = InMemoryMetricReader()
    view = View(
        instrument_name="h",
        aggregation=ExponentialBucketHistogramAggregation(max_size=max_size, max_scale=max_scale),
    )
    provider = MeterProvider(metric_readers=[reader], views=[view])
    histogram = provider.get_meter("tailguard-interop").create_histogram("h")
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
    """(offset, counts) without leading and trailing empty buckets: the SDK's point can
    end in empty buckets (its backing array's slack), which describe nothing."""
    counts = list(buckets.bucket_counts)
    offset = buckets.offset
    while counts and counts[0] == 0:
        counts.pop(0)
        offset += 1
    while counts and counts[-1] == 0:
        counts.pop()
    return (offset if counts else 0), counts
