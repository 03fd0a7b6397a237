#!/usr/bin/env python3
"""Prints the medians of the last `cargo bench --bench tailguard` run as the markdown
table of BENCHMARKS.md, with ratios to the peers. Reads
target/criterion/<group>/<id>/new/estimates.json (and benchmark.json for throughput)."""
import json
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent / "target" / "criterion"
PEERS = ["sketches-ddsketch", "hdrhistogram"]


def median_ns(group, bench_id):
    """Median time per element (per iteration if no element throughput), in ns."""
    d = root / group / bench_id.replace("/", "_")
    if not d.exists():
        d = root / group / bench_id
    est = json.loads((d / "new" / "estimates.json").read_text())["median"]["point_estimate"]
    bench = json.loads((d / "new" / "benchmark.json").read_text())
    thr = bench.get("throughput") or {}
    per = thr.get("Elements") or thr.get("Bytes") or 1
    return est / per


def main():
    groups = {}
    for g in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "report"):
        ids = {}
        for b in sorted(p for p in g.rglob("benchmark.json") if p.parent.name == "new"):
            info = json.loads(b.read_text())
            ids[info["function_id"]] = median_ns(g.name, info["function_id"])
        groups[g.name] = ids
    order = ["record", "quantile", "merge"] + [g for g in groups if g not in ("record", "quantile", "merge")]
    print("| group | id | median | vs sketches-ddsketch | vs hdrhistogram |")
    print("|---|---|---|---|---|")
    for g in order:
        ids = groups.get(g)
        if not ids:
            continue
        unit = "ns/record" if g == "record" else "ns"
        for i, t in sorted(ids.items(), key=lambda kv: (kv[0] in PEERS, kv[0])):
            cells = []
            for p in PEERS:
                if p in ids and i not in PEERS:
                    cells.append(f"{t / ids[p]:.2f}")
                else:
                    cells.append("")
            print(f"| {g} | `{i}` | {t:,.1f} {unit} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    sys.exit(main())
