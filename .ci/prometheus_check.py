#!/usr/bin/env python3
"""Checks a real Prometheus's PromQL answers against tailguard's merged sketch.

    python3 .ci/prometheus_check.py PROMETHEUS_URL EXPECTED_JSON METRIC INSTANCES

EXPECTED_JSON is what `prometheus_gateway merge` printed: the merged sketch of the
gateways Prometheus scrapes. Waits (at most 60 s) until Prometheus holds a sample of each
of the INSTANCES series, then checks:

* the series are native histograms (the query API gives a "histogram", not a "value",
  and no classic `_bucket` series exists: Prometheus ingested the protobuf exposition);
* every bucket of `sum(METRIC)`, its edges and count, is tailguard's bucket (edges within
  1e-12 relative: Go's bucket bounds and libm's exp2 may differ in the last bits): this
  is what catches an index shifted by one, which a check of quantiles within a bucket's
  width would not;
* histogram_count and histogram_sum of sum(METRIC): the count exactly, the sum within
  1e-9 relative (Prometheus adds the two instances' sums in its own order);
* histogram_quantile(q, sum(METRIC)) for q in 0.5, 0.9, 0.99 lies in the bucket holding
  tailguard's quantile, [lower, upper]. Prometheus interpolates linearly inside the
  bucket, tailguard answers with the bucket's representative value r = 2lu / (l + u),
  so the two differ by up to the bucket's relative accuracy: |v - r| <= alpha * v for
  every v of the bucket (alpha = (b - 1) / (b + 1), 1.08 % at scale 5). The check is
  that Prometheus's answer is in tailguard's bucket, and, what follows from it, that
  |promql - tailguard| <= alpha * promql (relative to Prometheus's answer, a value of
  the bucket: relative to r, the bound at an edge is (b - 1) / 2, 1.09 %).

Prints a table of PromQL's answers beside tailguard's. Exits non-zero on any mismatch.
"""
import json
import sys
import time
import urllib.parse
import urllib.request

QS = [0.5, 0.9, 0.99]
EDGE_TOLERANCE = 1e-12
SUM_TOLERANCE = 1e-9


def query(base, promql):
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=5) as response:
        body = json.load(response)
    if body.get("status") != "success":
        raise RuntimeError(f"{promql}: {body}")
    return body["data"]["result"]


def scalar(base, promql):
    result = query(base, promql)
    if len(result) != 1 or "value" not in result[0]:
        raise RuntimeError(f"{promql}: expected one float sample, got {result}")
    return float(result[0]["value"][1])


def close(a, b, tolerance):
    return abs(a - b) <= tolerance * max(abs(a), abs(b))


def main():
    base, expected_path, metric, instances = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with open(expected_path, encoding="utf-8") as f:
        want = json.load(f)
    deadline = time.monotonic() + 60
    while True:
        try:
            series = query(base, metric)
            if len(series) == instances:
                break
        except OSError:
            series = []  # Prometheus not up yet
        if time.monotonic() > deadline:
            sys.exit(f"timed out waiting for {instances} series of {metric} (have {len(series)})")
        time.sleep(1)

    failures = []
    if not all("histogram" in s for s in series):
        failures.append(f"not native histograms: {series}")
    classic = query(base, metric + "_bucket")
    if classic:
        failures.append(f"classic buckets were stored too: {len(classic)} series")

    total = query(base, f"sum({metric})")
    got_buckets = []
    if len(total) == 1 and "histogram" in total[0]:
        got_buckets = [(float(lo), float(hi), float(n)) for _, lo, hi, n in total[0]["histogram"][1].get("buckets", [])]
    want_buckets = [tuple(b) for b in want["buckets"]]
    same = len(got_buckets) == len(want_buckets) and all(
        close(g[0], w[0], EDGE_TOLERANCE) and close(g[1], w[1], EDGE_TOLERANCE) and g[2] == w[2]
        for g, w in zip(got_buckets, want_buckets)
    )
    if not same:
        failures.append(f"buckets differ: Prometheus {got_buckets[:5]}... vs tailguard {want_buckets[:5]}...")

    rows = []
    count = scalar(base, f"histogram_count(sum({metric}))")
    rows.append(("histogram_count", count, float(want["count"]), "exact", count == want["count"]))
    total_sum = scalar(base, f"histogram_sum(sum({metric}))")
    rows.append(("histogram_sum", total_sum, want["sum"], "1e-9 rel.", close(total_sum, want["sum"], SUM_TOLERANCE)))
    alpha = want["relative_accuracy"]
    for q in want["quantiles"]:
        got = scalar(base, f"histogram_quantile({q['q']}, sum({metric}))")
        lo, hi = q["lower"], q["upper"]
        inside = lo * (1 - EDGE_TOLERANCE) <= got <= hi * (1 + EDGE_TOLERANCE)
        diff = abs(got - q["value"]) / got
        # At an edge the bound is met with equality (Prometheus answers an edge when the rank
        # ends a bucket): a hair of slack for the floats.
        ok = inside and diff <= alpha * (1 + 1e-9)
        rows.append((f"histogram_quantile({q['q']})", got, q["value"], f"in ({lo:.6g}, {hi:.6g}], {100 * diff:.3f} % <= {100 * alpha:.3f} %", ok))

    print(f"\n| PromQL (sum over {instances} instances) | Prometheus 2.42 | tailguard (merged sketch) | agreement | ok |")
    print("|---|---|---|---|---|")
    for name, got, expected, how, ok in rows:
        print(f"| {name} | {got:.10g} | {expected:.10g} | {how} | {'yes' if ok else 'NO'} |")
    print(f"\nbuckets of sum({metric}): {len(got_buckets)} from Prometheus, {len(want_buckets)} from tailguard, "
          f"{'identical (edges and counts)' if same else 'DIFFERENT'}")
    failures += [f"{name}: Prometheus {got!r}, tailguard {expected!r}" for name, got, expected, _, ok in rows if not ok]
    if failures:
        for failure in failures:
            print("FAIL:", failure, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
