#!/usr/bin/env python3
"""The figures of docs/streams.md, "On a week shaped like the follow-up study": the shipped week
simulated under every policy, seeds 2 to 5, NVIDIA's all-balanced layout and the variations of
seed 1, printed as the page's tables and lines. Run from the repository root after
./build.sh build (about 20 s on 2 cores); nothing on a GPU. --check: exit 1, naming them, when
the two tables' rows are not the page's.

  python3 scripts/stream-followup-tables.py [--migscope PATH] [--check]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

TRACE = "data/stream-followup-week.json"
PROFILES = "data/study-h200/study.db"
PAGE = "docs/streams.md"
MIX = ("resnet18:train:32,resnet50:train:32,vit-b16:train:16,bert-base:train:4,"
       "gpt2-medium:train:2,gpt2-xl:train:1,resnet50:finetune:32,gpt2-medium:finetune:16,"
       "gpt2-xl:finetune:8")
NAMES = {"never": "never partition", "static": "best static layout in hindsight",
         "periodic": "periodic, every 12 h to the last 12 h's best", "online": "online"}


def options(defaults, changes):
    """Command-line options: the defaults with those of `changes` replaced or added."""
    merged = dict(defaults, **changes)
    return [word for option, value in merged.items() for word in (option, value)]


def simulate(migscope, trace, **changes):
    extra = options({"--gpus": "4", "--profiles": PROFILES, "--objective": "energy-tardiness",
                     "--format": "json"}, changes)
    done = subprocess.run([migscope, "stream", "simulate", trace, *extra], capture_output=True,
                          text=True)
    if done.returncode != 0:
        sys.exit(f"stream simulate {trace} {' '.join(extra)}: exit {done.returncode}\n{done.stderr}")
    return {p["policy"]: p for p in json.loads(done.stdout)["policies"]}


def trace_of_seed(migscope, folder, seed, **changes):
    """The week's trace made again with another seed or generator options."""
    path = os.path.join(folder, f"week-{seed}-{len(os.listdir(folder))}.json")
    extra = options({"--arrivals": "diurnal", "--rate-per-h": "3.6", "--amplitude": "0.8",
                     "--span-h": "168", "--duration-median-s": "1800", "--deadline-slack": "3",
                     "--seed": str(seed), "--mix": MIX, "-o": path}, changes)
    subprocess.run([migscope, "stream", "trace", "--generate", *extra], check=True,
                   capture_output=True)
    return path


def mj(j):
    return f"{j / 1e6:,.0f}"


def pct(value):
    """A signed percentage as the page writes it: a true minus sign."""
    return f"{value:+.1f} %".replace("-", "−")


def layout_name(policy):
    """The static policy's layout as the page names it: "whole GPU", "2g + 2g + 3g"."""
    name = policy["name"].removeprefix("static ")
    if "not partitioned" in name:
        return "whole GPU"
    return " + ".join(re.findall(r"(\d+g)\.", name))


def iv(p, key, scale):
    return f"{p[key + '_interval']['lo'] / scale:,.0f}–{p[key + '_interval']['hi'] / scale:,.0f}"


def margin(by, other):
    """online's E + w T against another policy's, as a signed percentage."""
    return 100 * (by["online"]["energy_tardiness_j"] / by[other]["energy_tardiness_j"] - 1)


def margins(by):
    return " / ".join(pct(margin(by, k)) for k in ("periodic", "static", "never"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--migscope", default=os.environ.get("MIGSCOPE", "build/tools/migscope/migscope"))
    ap.add_argument("--check", action="store_true", help="compare the tables' rows with the page")
    a = ap.parse_args()
    by = simulate(a.migscope, TRACE)
    rows = []  # the tables' rows, which --check finds on the page

    print("| policy | energy, MJ | tardiness, h | late jobs | mean JCT, h | layout changes | "
          "**E + 700 W × T, MJ** | online against it |")
    print("|---|---|---|---|---|---|---|---|")
    for key in ("never", "static", "periodic", "online"):
        p = by[key]
        name = NAMES[key] + (": the " + layout_name(p) if key == "static" else "")
        against = "" if key == "online" else f" **{pct(margin(by, key))}**"
        rows.append(f"| {name} | {mj(p['energy_j'])} ({iv(p, 'energy_j', 1e6)}) | "
                    f"{p['tardiness_s'] / 3600:,.0f} ({iv(p, 'tardiness_s', 3600)}) | "
                    f"{p['late_jobs']} | {p['mean_completion_s'] / 3600:.2f} | "
                    f"{p['reconfigurations']} | **{mj(p['energy_tardiness_j'])}** "
                    f"({iv(p, 'energy_tardiness_j', 1e6)}) |{against} |")
        print(rows[-1])

    on, never, periodic = (by[k]["energy_tardiness_j_interval"] for k in ("online", "never",
                                                                          "periodic"))
    overlap = "overlap" if on["hi"] >= never["lo"] else "do not overlap"
    print(f"\nonline's and never's intervals {overlap} (online's slow end {mj(on['hi'])} MJ, "
          f"never's fast end {mj(never['lo'])}); end with end: "
          f"{100 * (on['lo'] / never['lo'] - 1):+.1f} % (fast) and "
          f"{100 * (on['hi'] / never['hi'] - 1):+.1f} % (slow) against never, "
          f"{100 * (on['lo'] / periodic['lo'] - 1):+.1f} % and "
          f"{100 * (on['hi'] / periodic['hi'] - 1):+.1f} % against periodic")
    to = collections.Counter(change["layout"] for change in by["online"]["layouts"]
                             if change["at_s"] > 0)
    print("online's changes, by the layout they went to: " +
          ", ".join(f"{layout} {n}" for layout, n in to.most_common()))

    print("\n| seed | against periodic | against best static | against never | "
          "online's energy against never |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(1, 6):
            s = by if seed == 1 else simulate(a.migscope, trace_of_seed(a.migscope, folder, seed))
            rows.append(f"| {seed}{' (shipped)' if seed == 1 else ''} | "
                        f"{pct(margin(s, 'periodic'))} | {pct(margin(s, 'static'))} "
                        f"({layout_name(s['static'])}) | {pct(margin(s, 'never'))} | "
                        f"{pct(100 * (s['online']['energy_j'] / s['never']['energy_j'] - 1))} |")
            print(rows[-1])

        fixed = simulate(a.migscope, TRACE, **{"--policies": "never,fixed",
                                               "--layout": "3g.71gb+2g.35gb+2x1g.18gb"})
        f, n = fixed["fixed"], fixed["never"]
        print(f"\nall-balanced on every GPU: {mj(f['energy_j'])} MJ ({iv(f, 'energy_j', 1e6)}), "
              f"E + 700 W × T {mj(f['energy_tardiness_j'])} MJ "
              f"({iv(f, 'energy_tardiness_j', 1e6)}): "
              f"{100 * (f['energy_j'] / n['energy_j'] - 1):+.0f} % energy, "
              f"{100 * (f['energy_tardiness_j'] / n['energy_tardiness_j'] - 1):+.0f} % combined, "
              f"{f['late_jobs']} jobs late (never: {n['late_jobs']})")

        print("\nvariations of seed 1 (online against periodic / best static / never):")
        for option, value in (("--tardiness-weight-w", "0"), ("--objective", "energy"),
                              ("--tardiness-weight-w", "70"), ("--tardiness-weight-w", "2520"),
                              ("--orchestrator-s", "120"), ("--min-gain", "0")):
            v = simulate(a.migscope, TRACE, **{option: value})
            print(f"  {option} {value}: {margins(v)}; online changes "
                  f"{v['online']['reconfigurations']}; energy " +
                  ", ".join(f"{k} {mj(v[k]['energy_j'])} MJ" for k in NAMES))
        for option, value in (("--deadline-slack", "2"), ("--deadline-slack", "5"),
                              ("--arrivals", "poisson"), ("--rate-per-h", "2.4")):
            v = simulate(a.migscope, trace_of_seed(a.migscope, folder, 1, **{option: value}))
            print(f"  trace {option} {value}: {margins(v)}; never partitioned, "
                  f"{v['never']['late_jobs']} late")

    if a.check:
        with open(PAGE, encoding="utf-8") as f:
            page = f.read().splitlines()
        stale = [row for row in rows if row not in page]
        if stale:
            sys.exit(f"{PAGE} is not what the simulator gives now; rows it lacks:\n" +
                     "\n".join(stale))
        print(f"{PAGE}: the {len(rows)} rows are current")


if __name__ == "__main__":
    main()
