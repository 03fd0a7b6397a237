#!/usr/bin/env python3
"""Prints the medians of the last `cargo bench --bench tailguard` run as the markdown
table of BENCHMARKS.md, with ratios to the peers. Reads
target/criterion/<group>/<id>/new/estimates.json (and benchmark.json for throughput).

With directories as arguments (copies of target/criterion from several runs), prints for
each id the median over the runs of criterion's medians, the range, and the median of the
per-run ratios (each run's ratio is taken within that run, in one process)."""
import json
import pathlib
import sys

DEFAULT = pathlib.Path(__file__).resolve().parent.parent / "target" / "criterion"
PEERS = ["sketches-ddsketch", "hdrhistogram"]


def median_ns(root, group, bench_id):
    """Median time per element (per iteration if no element throughput), in ns."""
    d = root / group / bench_id.replace("/", "_")
    if not d.exists():
        d = root / group / bench_id
    est = json.loads((d / "new" / "estimates.json").read_text())["median"]["point_estimate"]
    bench = json.loads((d / "new" / "benchmark.json").read_text())
    thr = bench.get("throughput") or {}
    per = thr.get("Elements") or thr.get("Bytes") or 1
    return est / per


def read(root):
    groups = {}
    for g in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "report"):
        ids = {}
        for b in sorted(p for p in g.rglob("benchmark.json") if p.parent.name == "new"):
            info = json.loads(b.read_text())
            ids[info["function_id"]] = median_ns(root, g.name, info["function_id"])
        groups[g.name] = ids
    return groups


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def main():
    roots = [pathlib.Path(a) for a in sys.argv[1:]] or [DEFAULT]
    runs = [read(r) for r in roots]
    many = len(runs) > 1
    order = ["record", "quantile", "merge"]
    order += [g for g in runs[0] if g not in order]
    head = "| group | id | median |" + (" range over runs |" if many else "")
    head += " vs sketches-ddsketch | vs hdrhistogram |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for g in order:
        if g not in runs[0]:
            continue
        unit = "ns/record" if g == "record" else "ns"
        ids = runs[0][g]
        for i in sorted(ids, key=lambda i: (i in PEERS, i)):
            ts = [r[g][i] for r in runs if i in r.get(g, {})]
            row = f"| {g} | `{i}` | {median(ts):,.1f} {unit} |"
            if many:
                row += f" {min(ts):,.1f} - {max(ts):,.1f} |"
            for p in PEERS:
                ratios = [r[g][i] / r[g][p] for r in runs if i in r.get(g, {}) and p in r.get(g, {})]
                row += f" {median(ratios):.2f} |" if ratios and i not in PEERS else " |"
            print(row)
    if many:
        print(f"\n({len(runs)} runs)")


if __name__ == "__main__":
    sys.exit(main())
