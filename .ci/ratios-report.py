#!/usr/bin/env python3
"""Aggregates several runs of `cargo bench --bench ratios` (each run's output saved to a
file) into one targets table: per row, the median over the runs of each run's median
ratio, the per-run medians, and the median of each side's ns. A target is met when the
median over the runs meets it.

    for i in 1 2 3 4 5; do cargo bench --bench ratios > target/ratios-$i.txt; done
    python3 .ci/ratios-report.py target/ratios-*.txt
"""
import re
import statistics
import sys


def rows(path):
    """The table rows of one run's output: (path, data set) -> cells."""
    out = {}
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 8 or cells[0] in ("path", "---"):
            continue
        out[(cells[0], cells[1])] = cells
    return out


def number(cell):
    try:
        return float(cell)
    except ValueError:
        return None


def met(target, ns, ratio):
    bounds = re.findall(r"<= ([0-9.]+) ?(ns|x)", target)
    if not bounds:
        return "-"
    ok = True
    for value, unit in bounds:
        got = ns if unit == "ns" else ratio
        if got is None:
            return "-"
        ok &= got <= float(value)
    return "yes" if ok else "no"


def main():
    runs = [rows(p) for p in sys.argv[1:]]
    if not runs:
        sys.exit(__doc__)
    print("| path | data set | tailguard ns | peer ns | median ratio | per-run median ratios | target | met? |")
    print("|---|---|---|---|---|---|---|---|")
    for key, first in runs[0].items():
        cells = [r[key] for r in runs if key in r]
        tg = statistics.median(number(c[2]) for c in cells)
        peers = [number(c[3]) for c in cells if number(c[3]) is not None]
        ratios = [number(c[4]) for c in cells if number(c[4]) is not None]
        ratio = statistics.median(ratios) if ratios else None
        peer = f"{statistics.median(peers):.3g}" if peers else "-"
        each = " ".join(f"{x:.2f}" for x in ratios) if ratios else " ".join(c[2] for c in cells) + " ns"
        print(
            f"| {key[0]} | {key[1]} | {tg:.3g} | {peer} | "
            f"{'-' if ratio is None else f'{ratio:.2f}'} | {each} | {first[6]} | {met(first[6], tg, ratio)} |"
        )
    print(f"\n({len(runs)} runs)")


if __name__ == "__main__":
    main()
