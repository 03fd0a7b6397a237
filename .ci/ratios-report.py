#!/usr/bin/env python3
"""Aggregates several runs of `cargo bench --bench ratios` (each run's output saved to a
file) into targets tables: per row, the median over the runs of each run's median ratio,
the range of the runs' medians, and the median of each side's ns. A target is met when the median
over the runs meets it.

    for i in 1 2 3 4 5; do cargo bench --bench ratios > target/ratios-$i.txt; done
    python3 .ci/ratios-report.py target/ratios-*.txt

With `--profile NAME FILE.. [--profile NAME FILE..]` (what .ci/ratios.sh passes): one
table per profile and data set, then, for two profiles, the comparison issue 29 judges:
each path's ratio under both, tailguard's own time under the second over the first (the
median of run i's over run i's: the runs alternate, so a pair saw about the same load),
and the figure that counts, the worse of the two ratios. Where the peer's own time moves
by more than 1.3x between the two builds (code placement, see BENCHMARKS.md), the ratio
of its slower build is taken against its faster build instead (times the peer's move). A row whose peer is tailguard itself
(its path's peer starts with a backquote) keeps its measured ratios.
"""
import re
import statistics
import sys

# tailguard's time under one profile over the other: at most this (issue 29).
PROFILE_TARGET = 1.2
# A peer whose time moves more than this between builds is compared at its faster build.
PEER_MOVES = 1.3


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


def bounds(target):
    return re.findall(r"<= ([0-9.]+) ?(ns|x)", target)


def met(target, ns, ratio):
    found = bounds(target)
    if not found:
        return "-"
    ok = True
    for value, unit in found:
        got = ns if unit == "ns" else ratio
        if got is None:
            return "-"
        ok &= got <= float(value)
    return "yes" if ok else "no"


def aggregate(runs):
    """(path, data set) -> (tg ns, peer ns or None, ratio or None, per-run text, target)."""
    out = {}
    if not runs:
        return out
    for key, first in runs[0].items():
        cells = [r[key] for r in runs if key in r]
        tg = statistics.median(number(c[2]) for c in cells)
        peers = [number(c[3]) for c in cells if number(c[3]) is not None]
        ratios = [number(c[4]) for c in cells if number(c[4]) is not None]
        ratio = statistics.median(ratios) if ratios else None
        peer = statistics.median(peers) if peers else None
        if ratios:
            each = f"{min(ratios):.2f} .. {max(ratios):.2f}"
        else:
            tgs = [number(c[2]) for c in cells]
            each = f"{min(tgs):.3g} .. {max(tgs):.3g} ns"
        out[key] = (tg, peer, ratio, each, first[6])
    return out


def per_run(runs, key, column):
    """One row's cell `column` in each run, as numbers (None where a run lacks it)."""
    return [number(r[key][column]) if key in r else None for r in runs]


def paired(a, b):
    """The median over runs of b's figure over a's, run i against run i (the two
    profiles' runs alternate, so each pair ran at about the same load)."""
    xs = [y / x for x, y in zip(a, b) if x and y]
    return statistics.median(xs) if xs else float("nan")


def table(agg, data=None):
    print("| path | data set | tailguard ns | peer ns | median ratio | runs' median ratios, min .. max | target | met? |")
    print("|---|---|---|---|---|---|---|---|")
    for key, (tg, peer, ratio, each, target) in agg.items():
        if data is not None and key[1] != data:
            continue
        peer_text = "-" if peer is None else f"{peer:.3g}"
        ratio_text = "-" if ratio is None else f"{ratio:.2f}"
        print(
            f"| {key[0]} | {key[1]} | {tg:.3g} | {peer_text} | {ratio_text} | {each} | "
            f"{target} | {met(target, tg, ratio)} |"
        )


def run_number(path):
    """The run's number in its file name (`default-12.txt`), for pairing runs in order."""
    found = re.findall(r"([0-9]+)", path.rsplit("/", 1)[-1])
    return int(found[-1]) if found else 0


def self_peer(path):
    """Whether the row's peer is tailguard itself (`... vs `Type::method``)."""
    return " vs `" in path


def compare(names, aggs, runs):
    (a, b), (agg_a, agg_b), (runs_a, runs_b) = names, aggs, runs
    print(
        f"| path | data set | ratio {a} | ratio {b} | tailguard {b} / {a} | peer {b} / {a} | "
        "counted (worse) | target | met? |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for key, (tg_a, peer_a, r_a, _, target) in agg_a.items():
        if key not in agg_b:
            continue
        tg_b, peer_b, r_b, _, _ = agg_b[key]
        tg_move = paired(per_run(runs_a, key, 2), per_run(runs_b, key, 2))
        tg_ok = "" if tg_move <= PROFILE_TARGET else " (over 1.2)"
        if r_a is None or r_b is None or peer_a is None or peer_b is None:
            # An absolute row: the worse of the two times.
            worst = max(tg_a, tg_b)
            print(
                f"| {key[0]} | {key[1]} | - | - | {tg_move:.2f}{tg_ok} | - | {worst:.3g} ns | "
                f"{target} | {met(target, worst, None)} |"
            )
            continue
        peer_move = paired(per_run(runs_a, key, 3), per_run(runs_b, key, 3))
        counted_a, counted_b, note = r_a, r_b, ""
        if not self_peer(key[0]) and max(peer_move, 1 / peer_move) > PEER_MOVES:
            # Against the peer's faster build: each profile's ratio times the peer's move
            # (paired, so the machine's load cancels), where that makes it worse.
            if peer_move < 1:
                counted_a = r_a / peer_move
            else:
                counted_b = r_b * peer_move
            note = " (vs the peer's faster build)"
        worst = max(counted_a, counted_b)
        print(
            f"| {key[0]} | {key[1]} | {r_a:.2f} | {r_b:.2f} | {tg_move:.2f}{tg_ok} | {peer_move:.2f} | "
            f"**{worst:.2f}**{note} | {target} | {met(target, None, worst)} |"
        )


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    if args[0] != "--profile":
        runs = [rows(p) for p in args]
        table(aggregate(runs))
        print(f"\n({len(runs)} runs)")
        return
    profiles = []
    for arg in args:
        if arg == "--profile":
            profiles.append([None, []])
        elif profiles[-1][0] is None:
            profiles[-1][0] = arg
        else:
            profiles[-1][1].append(arg)
    aggs, all_runs = [], []
    for name, files in profiles:
        runs = [rows(p) for p in sorted(files, key=run_number)]
        agg = aggregate(runs)
        if not agg:
            sys.exit(f"profile {name}: no table rows in {files}")
        aggs.append(agg)
        all_runs.append(runs)
        for data in dict.fromkeys(k[1] for k in agg):
            print(f"\n### Profile {name}, data set {data} ({len(runs)} runs)\n")
            table(agg, data)
    if len(profiles) == 2:
        print(f"\n### {profiles[1][0]} against {profiles[0][0]}: the figure that counts\n")
        compare([p[0] for p in profiles], aggs, all_runs)


if __name__ == "__main__":
    main()
