"""The Python side of tailguard's OTLP export test (tests/otlp_export.rs): tailguard's
whole export body against what the OpenTelemetry Python SDK's OTLP exporter writes.

Usage: otlp_export.py WORKDIR CASE...; for every CASE, WORKDIR holds

  CASE.tg.pb   tailguard's body (tailguard::otlp::encode_export_request)
  CASE.json    the data: scale, temporality, start and time (ns), resource and scope
               attributes as [key, kind, value], and per metric its name, description,
               unit and points (each point's attributes, recorded values, and the zero
               threshold tailguard writes for its sketch)

For every case this script

  * parses CASE.tg.pb with opentelemetry-proto's ExportMetricsServiceRequest (and
    checks that it re-serializes to the same bytes: nothing unknown, nothing dropped);
  * builds the SDK's own: a MeterProvider with Resource(attributes) (the constructor,
    not Resource.create, so no telemetry.sdk.* or service.name is added: the same
    resource is passed on both sides), an InMemoryMetricReader asking for the case's
    temporality, a View giving every instrument
    ExponentialBucketHistogramAggregation(max_size=16384, max_scale=SCALE) (it never
    downscales: checked), a meter of the case's scope (name, version, attributes), one
    histogram per metric (name, unit, description), every value recorded with its
    point's attributes; then opentelemetry-exporter-otlp-proto-common's encode_metrics;
  * normalises, on the SDK's message only, what legitimately differs:
      - start_time_unix_nano and time_unix_nano of every point: the SDK takes its own
        clock's; tailguard writes the caller's. They are set to the case's.
      - zero_threshold: the SDK writes none (0: it buckets every non-zero value);
        tailguard writes the largest float below its sketch's range
        (otlp::encode's documented threshold). It is checked to be 0 in the SDK's and
        the case's in tailguard's, then set to the case's.
      - the positive buckets' empty buckets at either end (the SDK's backing array's
        slack, which describes nothing; tailguard writes none, checked), trimmed with
        the offset moved to match; negative buckets that are all empty (the same slack:
        no negative value is recorded), removed;
      - sum, if the two differ by at most 1e-12 relative (both add the same values in
        the same order, so they are equal in practice; the tolerance is the one of
        tests/otel_interop.rs);
    and on both, for the field-for-field comparison, the order of attributes
    (resource, scope and point attributes, sorted by key), of points in a metric, and
    of metrics in a scope (sorted by attributes and by name: the SDK's order is that
    of its internal dicts);
  * compares the two messages field for field (protobuf equality of the whole
    request: resource, scope, every metric's name, description, unit, temporality,
    every point's attributes, count, sum, scale, zero count, buckets, min, max, flags,
    exemplars), printing the first difference;
  * and byte for byte: the SDK's message, normalised as above but in its own order,
    serialized, must be tailguard's body.

It prints one line per case and exits non-zero on the first difference.
"""

import difflib
import json
import math
import sys

from google.protobuf import text_format
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.sdk.metrics import Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.version import __version__ as sdk_version

from otel_sdk import trimmed

MAX_SIZE = 16384


def attrs(spec):
    """[key, kind, value] triples as the SDK's attributes (a dict, in the given order)."""
    out = {}
    for key, kind, value in spec:
        if kind == "bytes":
            value = bytes.fromhex(value)
        elif kind == "double":
            value = float(value)
        out[key] = value
    return out


def sdk_request(case):
    temporality = {
        "delta": AggregationTemporality.DELTA,
        "cumulative": AggregationTemporality.CUMULATIVE,
    }[case["temporality"]]
    reader = InMemoryMetricReader(preferred_temporality={Histogram: temporality})
    view = View(
        instrument_name="*",
        aggregation=ExponentialBucketHistogramAggregation(max_size=MAX_SIZE, max_scale=case["scale"]),
    )
    provider = MeterProvider(
        metric_readers=[reader], views=[view], resource=Resource(attrs(case["resource"]))
    )
    scope = case["scope"]
    meter = provider.get_meter(
        scope["name"], scope["version"] or None, attributes=attrs(scope["attributes"]) or None
    )
    for metric in case["metrics"]:
        h = meter.create_histogram(metric["name"], unit=metric["unit"], description=metric["description"])
        for point in metric["points"]:
            point_attrs = attrs(point["attributes"]) or None
            for v in point["values"]:
                h.record(v, attributes=point_attrs)
    data = reader.get_metrics_data()
    provider.shutdown()
    return encode_metrics(data)


def fail(name, what, ours=None, theirs=None):
    print("MISMATCH %s: %s" % (name, what))
    if ours is not None:
        diff = difflib.unified_diff(
            ours.splitlines(), theirs.splitlines(), "tailguard", "SDK", lineterm="", n=8
        )
        print("\n".join(diff))
    sys.exit(1)


def points_of(request):
    for rm in request.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                for p in m.exponential_histogram.data_points:
                    yield m, p


def normalise_sdk(name, case, ours, sdk):
    """The SDK's request with the times, zero thresholds, empty end buckets and sums
    that legitimately differ set to tailguard's (see the module docstring)."""
    # tailguard wrote the case's points in the case's order.
    case_points = [point for metric in case["metrics"] for point in metric["points"]]
    ours_points = list(points_of(ours))
    if len(ours_points) != len(case_points):
        fail(name, "tailguard wrote %d points, not %d" % (len(ours_points), len(case_points)))
    thresholds, ours_by_key = {}, {}
    for (m, p), point in zip(ours_points, case_points):
        key = (m.name, tuple(sorted(attr_items(p.attributes))))
        thresholds[key] = point["zero_threshold"]
        ours_by_key[key] = p
        if trimmed(p.positive) != (p.positive.offset, list(p.positive.bucket_counts)):
            fail(name, "tailguard wrote empty buckets at an end of %r" % (key,))
        if p.zero_threshold != thresholds[key]:
            fail(name, "zero threshold of %r: %r, not %r" % (key, p.zero_threshold, thresholds[key]))
    for m, p in points_of(sdk):
        key = (m.name, tuple(sorted(attr_items(p.attributes))))
        if p.scale != case["scale"]:
            fail(name, "the SDK downscaled %r to %d (raise MAX_SIZE)" % (key, p.scale))
        if p.zero_threshold != 0.0:
            fail(name, "the SDK wrote a zero threshold %r" % p.zero_threshold)
        if key not in ours_by_key:
            fail(name, "the SDK wrote a point %r tailguard did not" % (key,))
        p.start_time_unix_nano = case["start"]
        p.time_unix_nano = case["time"]
        p.zero_threshold = thresholds[key]
        offset, counts = trimmed(p.positive)
        p.positive.offset = offset
        del p.positive.bucket_counts[:]
        p.positive.bucket_counts.extend(counts)
        # Negative buckets of zeros (the same slack: no negative value was recorded).
        if not trimmed(p.negative)[1]:
            p.ClearField("negative")
        theirs_sum, our_sum = p.sum, ours_by_key[key].sum
        if theirs_sum != our_sum and math.isclose(theirs_sum, our_sum, rel_tol=1e-12, abs_tol=0.0):
            p.sum = our_sum


def attr_items(kvs):
    """A repeated KeyValue as comparable (key, serialized value) pairs."""
    return [(kv.key, kv.value.SerializeToString()) for kv in kvs]


def sort_kvs(kvs):
    items = sorted(kvs, key=lambda kv: kv.key)
    copies = [type(kv)() for kv in items]
    for c, kv in zip(copies, items):
        c.CopyFrom(kv)
    del kvs[:]
    kvs.extend(copies)


def sorted_copy(request):
    """A copy with attributes sorted by key, points by attributes, metrics by name."""
    r = ExportMetricsServiceRequest()
    r.CopyFrom(request)
    for rm in r.resource_metrics:
        sort_kvs(rm.resource.attributes)
        for sm in rm.scope_metrics:
            sort_kvs(sm.scope.attributes)
            for m in sm.metrics:
                points = m.exponential_histogram.data_points
                for p in points:
                    sort_kvs(p.attributes)
                ordered = sorted(points, key=lambda p: attr_items(p.attributes))
                copies = [type(p)() for p in ordered]
                for c, p in zip(copies, ordered):
                    c.CopyFrom(p)
                del points[:]
                points.extend(copies)
            metrics = sorted(sm.metrics, key=lambda m: m.name)
            copies = [type(m)() for m in metrics]
            for c, m in zip(copies, metrics):
                c.CopyFrom(m)
            del sm.metrics[:]
            sm.metrics.extend(copies)
    return r


def main():
    work = sys.argv[1]
    for name in sys.argv[2:]:
        with open("%s/%s.json" % (work, name)) as f:
            case = json.load(f)
        with open("%s/%s.tg.pb" % (work, name), "rb") as f:
            body = f.read()
        ours = ExportMetricsServiceRequest.FromString(body)
        if ours.SerializeToString() != body:
            fail(name, "opentelemetry-proto does not re-serialize tailguard's body to the same bytes")
        sdk = sdk_request(case)
        normalise_sdk(name, case, ours, sdk)
        a, b = sorted_copy(ours), sorted_copy(sdk)
        if a != b:
            fail(name, "the requests differ", text_format.MessageToString(a), text_format.MessageToString(b))
        if sdk.SerializeToString() != body:
            fail(name, "equal field for field, but not byte for byte (an order differs)",
                 text_format.MessageToString(ours), text_format.MessageToString(sdk))
        n_points = sum(1 for _ in points_of(ours))
        print("ok %s: %d bytes, %d metrics, %d points, equal to the SDK exporter's field for field and byte for byte"
              % (name, len(body), sum(len(sm.metrics) for rm in ours.resource_metrics for sm in rm.scope_metrics),
                 n_points))
    print("opentelemetry-sdk %s: %d export bodies equal" % (sdk_version, len(sys.argv) - 2))


if __name__ == "__main__":
    main()
