#!/usr/bin/env python3
"""The table of bench/activity_probe_cost.sh: per part, the median speed, board power and energy
per item of its runs, and their change against the part `none` with a 90 % bootstrap interval.

    python3 bench/activity_probe_cost_table.py OUT PART...

OUT holds one folder per run, named PART-ROUND, with the run's result.json (the script's run
folders, or its runs.tar.gz unpacked). The interval: both sides' runs resampled with replacement
4,000 times (seed 1), the change of the medians each time, its 5th and 95th percentiles. With one
run a side it is the change itself, which says nothing of the spread: read the runs column.
"""
import json
import pathlib
import random
import statistics
import sys

RESAMPLES = 4000
FIGURES = ("items/s", "W", "mJ/item")


def read_runs(out):
    """{part: [(items/s, W, mJ/item), ...]} from OUT's run folders; a run that measured nothing
    (no throughput, e.g. it failed) is left out, one without power keeps None there."""
    runs = {}
    for d in sorted(pathlib.Path(out).iterdir()):
        result = d / "result.json"
        if not result.is_file():
            continue
        run = json.loads(result.read_text())["run"]
        job = run["jobs"][0]
        speed = job.get("items_per_s")
        if not speed:
            continue
        watts = job["energy_j"] / run["window_s"] if job.get("energy_j") else None
        per_item = 1e3 * watts / speed if watts else None
        runs.setdefault(d.name.rsplit("-", 1)[0], []).append((speed, watts, per_item))
    return runs


def median_change(part, base):
    """The change of the median of `part` against that of `base`, as a fraction."""
    return statistics.median(part) / statistics.median(base) - 1


def bootstrap_interval(part, base, seed=1):
    """5th and 95th percentiles of the median change over resamples of both sides' runs."""
    rng = random.Random(seed)
    changes = sorted(
        median_change(rng.choices(part, k=len(part)), rng.choices(base, k=len(base)))
        for _ in range(RESAMPLES))
    return changes[int(0.05 * RESAMPLES)], changes[int(0.95 * RESAMPLES) - 1]


def table(runs, parts):
    """The table's lines."""
    base = runs.get("none")
    head = f"{'part':14} {'runs':>4}"
    for name in FIGURES:
        head += f" {name:>10} {'change [90 % interval]':>26}"
    lines = [head]
    for p in parts:
        v = runs.get(p)
        if not v:
            lines.append(f"{p:14} no run")
            continue
        line = f"{p:14} {len(v):4}"
        for k in range(len(FIGURES)):
            xs = [r[k] for r in v if r[k] is not None]
            bs = [r[k] for r in base if r[k] is not None] if base else []
            if not xs:
                line += f" {'-':>10} {'':>26}"
                continue
            m = statistics.median(xs)
            if p == "none" or not bs:
                change = f"range {100 * (max(xs) - min(xs)) / m:.2f} %"
            else:
                lo, hi = bootstrap_interval(xs, bs)
                change = (f"{100 * median_change(xs, bs):+.2f} % "
                          f"[{100 * lo:+.2f}, {100 * hi:+.2f}]")
            line += f" {m:10.1f} {change:>26}" if k < 2 else f" {m:10.4f} {change:>26}"
        lines.append(line)
    return lines


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print("\n".join(table(read_runs(argv[1]), argv[2:])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
