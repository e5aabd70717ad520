#!/usr/bin/env python3
"""Each job's live energy from `migscope exporter` against `migscope run`'s own split of the same
window (issue 43 item 4; docs/exporter.md, "Against run's attribution").

Reads what `scripts/gpu-exporter-h200.sh shares` left in each DIR: scrapes.tar.gz (one Prometheus
text file per second named by its Unix time, and every run's result.json), pids.txt (each run's
worker pids and argv). For every run whose result.json names its window on the wall clock
(`windows_unix_s`), it reads every counter at the window's open and close (linear between the two
scrapes around each), and prints per job:
  live   the increase of the job's process series (`consumer="process"`) over the window. The
         exporter charges a time-sliced or MPS GPU's static power to no one (`consumer="idle"`),
         so a process series is its dynamic energy alone.
  run    run's attribution of the job minus its share of the static energy, split as run splits
         it (idle power x window, by partition size): the job's dynamic energy.
  error  live / run - 1 (target: within 5 %);
and per run: the sum of all series' increases against the board counter's (target: within 0.5 %),
the exporter's method, and the idle power each side used. The summary gives the jobs' median and
worst error, and the same per split the exporter used (by activity, by the powers alone, ...)
when the windows used more than one.

With --profiles (the file the exporter was given), a pair's row also says how far run's own
reference moved from the profile: the job's dynamic power alone as run's marginal probe measured
it (the board without the other job, minus run's idle power) against the profile's for the same
partition (minus the profile's idle power). The exporter splits by the profile's powers alone, so
a job whose power alone changed from the profile's shows here before it shows as an error. Where
run's probe recorded the job's speed (without_items_per_s), the cell adds it against the profile's
too: a power that moved at the same speed is the same work drawing more.

  scripts/exporter-vs-run.py DIR... [--profiles FILE]... [--json OUT]
Python 3 standard library only.
"""
import argparse
import json
import re
import statistics
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import exposition  # noqa: E402  (scripts/exposition.py, beside this script)

LIVE_TARGET, SUM_TARGET = 0.05, 0.005


def parse_scrape(text):
    """Board counter, {series key: counter}, methods and idle power source of one scrape."""
    board, series, methods = None, {}, set()
    for name, labels, value in exposition.samples(text):
        if name == exposition.BOARD_ENERGY:
            board = value
        elif name == exposition.CONSUMER_ENERGY:
            key = (labels["consumer"], labels.get("pid", ""))
            series[key] = series.get(key, 0.0) + value
        elif name == "migscope_attribution_info":
            methods.add(f'{labels.get("method", "?")} ({labels.get("dynamic_split", "?")})')
    return board, series, methods


def read_folder(folder):
    """The scrapes (time-sorted), each run's result.json by run name, and pids by run name."""
    scrapes, results = [], {}
    with tarfile.open(folder / "scrapes.tar.gz") as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            path = Path(member.name)
            text = tar.extractfile(member).read().decode("utf-8", "replace")
            if path.suffix == ".prom":
                scrapes.append((float(path.stem), *parse_scrape(text)))
            elif path.name == "result.json":
                results[path.parent.name] = json.loads(text)
    scrapes.sort(key=lambda s: s[0])
    pids, run = {}, None
    pid_file = folder / "pids.txt"
    for line in (pid_file.read_text().splitlines() if pid_file.is_file() else []):
        if line.startswith("# "):
            run = line[2:].strip()
        elif run and line.strip():
            pid, _, argv = line.strip().partition(" ")
            pids.setdefault(run, {})[pid] = argv
    return scrapes, results, pids


def at(scrapes, t, value):
    """value(scrape) linearly interpolated at Unix time t between the scrapes around it."""
    before = [s for s in scrapes if s[0] <= t]
    after = [s for s in scrapes if s[0] >= t]
    if not before or not after:
        return None
    a, b = before[-1], after[0]
    va, vb = value(a), value(b)
    if va is None or vb is None:
        return None
    return va if b[0] == a[0] else va + (vb - va) * (t - a[0]) / (b[0] - a[0])


def worker_model(argv):
    """(model, batch) from a worker's argv: `migscope-worker train --model M ... --batch B`."""
    model = re.search(r"--model (\S+)", argv)
    batch = re.search(r"--batch (\d+)", argv)
    return (model.group(1) if model else None, int(batch.group(1)) if batch else None)


def job_of(argv, jobs):
    """The index of the run's job that a worker's argv runs, or None when not exactly one."""
    model, batch = worker_model(argv)
    hits = [k for k, j in enumerate(jobs)
            if j.get("workload") == model and (batch is None or j.get("batch") in (None, batch))]
    return hits[0] if len(hits) == 1 else None


def static_shares(run):
    """Each job's share of the static energy, as run splits it: by partition size (SMs)."""
    sizes = [j.get("sms") or j.get("sms_requested") or 1 for j in run["jobs"]]
    return [s / sum(sizes) for s in sizes]


def profile_alone(path):
    """{(workload, batch, partition): (dynamic W alone, items/s alone or None)} from a `migscope
    profile export` file."""
    doc = json.loads(Path(path).read_text())
    idle_w = doc["idle_power_w"]["value"]
    return {(j["workload"], j.get("batch"), p["partition"]):
            (p["average_power_w"]["value"] - idle_w, (p.get("items_per_s") or {}).get("value"))
            for j in doc["jobs"] for p in j["partitions"]}


def profiled_alone(run, k, profiles):
    """Job k of a pair: (the other job, the profile's (dynamic W, items/s) on job k's partition);
    None where there is no such pair or no single profile."""
    jobs = run["jobs"]
    if not profiles or len(jobs) != 2:
        return None
    partition = jobs[k].get("partition") if run["backend"] == "mps" else "whole GPU"
    workload, batch = jobs[k].get("workload"), jobs[k].get("batch")
    # A job run at its default batch names none; the profile names the batch it ran.
    found = [alone for (wl, b, part), alone in profiles.items()
             if wl == workload and part == partition and (batch is None or b == batch)]
    return (jobs[1 - k], found[0]) if len(found) == 1 else None


def alone_drift(run, k, profiles):
    """Job k's dynamic power alone in run's probe (the board without the only other job, minus
    run's idle power) / the profile's on the same partition - 1; None where there is no such pair."""
    pair = profiled_alone(run, k, profiles)
    if not pair or not run.get("idle_power_w") or not pair[0].get("without_power_w"):
        return None
    other, (profiled_w, _) = pair
    return (other["without_power_w"] - run["idle_power_w"]) / profiled_w - 1 if profiled_w else None


def alone_speed_drift(run, k, profiles):
    """Job k's items/s in the same probe / the profile's - 1 (runs since the probe records it);
    None where either is missing. A probe whose power moved while its speed stayed drew more for
    the same work."""
    pair = profiled_alone(run, k, profiles)
    if not pair:
        return None
    other, (_, profiled_items_per_s) = pair
    speeds = other.get("without_items_per_s") or []
    probed = speeds[k] if k < len(speeds) else None
    return probed / profiled_items_per_s - 1 if probed and profiled_items_per_s else None


def compare_run(folder, name, doc, scrapes, pids, profiles=None):
    run = doc["run"]
    windows = run.get("windows_unix_s") or []
    if len(windows) != 1:
        return {"run": name, "skipped": "no single window on the wall clock (windows_unix_s)"}
    t0, t1 = windows[0]
    window_s = t1 - t0
    idle_w = run.get("idle_power_w") or 0.0
    total_j = run["energy"].get("counter_energy_j")
    static_j = min(idle_w * run["window_s"], total_j or 0.0)
    board = at(scrapes, t1, lambda s: s[1]), at(scrapes, t0, lambda s: s[1])
    keys = set().union(*(s[2].keys() for s in scrapes if t0 - 2 <= s[0] <= t1 + 2))
    delta = {}
    for key in keys:
        hi = at(scrapes, t1, lambda s: s[2].get(key, 0.0))
        lo = at(scrapes, t0, lambda s: s[2].get(key, 0.0))
        if hi is not None and lo is not None:
            delta[key] = hi - lo
    methods = set().union(*(s[3] for s in scrapes if t0 <= s[0] <= t1))
    out = {"folder": str(folder), "run": name, "backend": run["backend"],
           "layout": run.get("layout", ""), "window_s": window_s, "run_idle_w": idle_w,
           "exporter_idle_w": delta.get(("idle", ""), 0.0) / window_s,
           "board_j": None if None in board else board[0] - board[1],
           "series_sum_j": sum(delta.values()), "run_counter_j": total_j,
           "unattributed_j": delta.get(("unattributed", ""), 0.0),
           "methods": sorted(methods), "jobs": []}
    if out["board_j"]:
        out["sum_error"] = out["series_sum_j"] / out["board_j"] - 1
    shares = static_shares(run)
    live = [0.0] * len(run["jobs"])
    matched = [[] for _ in run["jobs"]]
    for (consumer, pid), j in delta.items():
        if consumer != "process" or abs(j) < 1e-9:
            continue
        argv = pids.get(name, {}).get(pid)
        k = job_of(argv, run["jobs"]) if argv else None
        if k is None:
            out.setdefault("other_processes", {})[pid] = {"j": j, "argv": argv}
            continue
        live[k] += j
        matched[k].append(pid)
    for k, job in enumerate(run["jobs"]):
        run_dynamic = None if job.get("energy_j") is None else job["energy_j"] - static_j * shares[k]
        row = {"job": job["name"], "pids": matched[k], "live_j": live[k],
               "run_j": job.get("energy_j"), "run_dynamic_j": run_dynamic}
        if run_dynamic and matched[k]:
            row["error"] = live[k] / run_dynamic - 1
        drift = alone_drift(run, k, profiles)
        if drift is not None:
            row["alone_drift"] = drift
        speed_drift = alone_speed_drift(run, k, profiles)
        if speed_drift is not None:
            row["alone_speed_drift"] = speed_drift
        out["jobs"].append(row)
    return out


def print_summary(prefix, rows):
    """The jobs' |live / run - 1| over `rows`: how many, the median, the worst, how many within the
    target."""
    errors = [abs(j["error"]) for r in rows for j in r.get("jobs", []) if "error" in j]
    jobs = sum(len(r.get("jobs", [])) for r in rows)
    if errors:
        print(f"{prefix}{len(errors)} of {jobs} jobs compared: |live / run - 1| median "
              f"{100 * statistics.median(errors):.1f} %, worst {100 * max(errors):.1f} %, "
              f"{sum(e <= LIVE_TARGET for e in errors)} within {100 * LIVE_TARGET:.0f} %")


def print_table(rows):
    print("| run | backend | job | live (kJ) | run, dynamic (kJ) | live / run - 1 | "
          "power alone: run / profile - 1 | "
          "series sum / board - 1 | idle W: run / exporter | exporter's split |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "skipped" in r:
            print(f"| {r['run']} | | | | | {r['skipped']} | | | | |")
            continue
        for n, job in enumerate(r["jobs"]):
            err = f"{100 * job['error']:+.1f} %" if "error" in job else "-"
            drift = f"{100 * job['alone_drift']:+.1f} %" if "alone_drift" in job else "-"
            if "alone_speed_drift" in job:
                drift += f" (speed {100 * job['alone_speed_drift']:+.1f} %)"
            first = n == 0
            dyn = job["run_dynamic_j"]
            print(f"| {r['run'] if first else ''} | {r['backend'] if first else ''} | {job['job']} "
                  f"| {job['live_j'] / 1e3:.2f} | {'-' if dyn is None else f'{dyn / 1e3:.2f}'} "
                  f"| {err} | {drift} | "
                  + (f"{100 * r['sum_error']:+.3f} % | {r['run_idle_w']:.0f} / "
                     f"{r['exporter_idle_w']:.0f} | {'; '.join(r['methods'])} |"
                     if first and 'sum_error' in r else "| | |"))
    print()
    print_summary("", rows)
    # One line per backend, when the windows had more than one.
    backends = sorted({r["backend"] for r in rows if "backend" in r})
    if len(backends) > 1:
        for backend in backends:
            print_summary(f"  {backend}: ", [r for r in rows if r.get("backend") == backend])
    # One line per split the exporter used, when the windows used more than one.
    splits = sorted({"; ".join(r["methods"]) for r in rows if "methods" in r})
    if len(splits) > 1:
        for split in splits:
            print_summary(f"  {split}: ", [r for r in rows if "; ".join(r.get("methods", [])) == split])
    sums = [abs(r["sum_error"]) for r in rows if "sum_error" in r]
    if sums:
        print(f"series sum against the board: worst {100 * max(sums):.3f} % over {len(sums)} runs, "
              f"{sum(s <= SUM_TARGET for s in sums)} within {100 * SUM_TARGET:.1f} %")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--json", type=Path, help="write the rows as JSON here")
    ap.add_argument("--profiles", type=Path, action="append", default=[],
                    help="the profiles the exporter split by (repeat it for several): each pair's "
                         "drift of run's power alone from them")
    args = ap.parse_args()
    profiles = {k: a for f in args.profiles for k, a in profile_alone(f).items()} or None
    rows = []
    for folder in args.dirs:
        if not (folder / "scrapes.tar.gz").is_file():
            sys.exit(f"{folder}: no scrapes.tar.gz (written by scripts/gpu-exporter-h200.sh shares)")
        scrapes, results, pids = read_folder(folder)
        for name in sorted(results):
            rows.append(compare_run(folder, name, results[name], scrapes, pids, profiles))
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
