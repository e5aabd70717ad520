#!/usr/bin/env bash
# GPU-host check of `migscope run` (builds nothing; run after `./build.sh build`):
#   scripts/gpu-run-check.sh scaling   one matmul-bound job (the mlp reference workload; another
#                                      with SCALING_JOB=mlp:32768) on each H200 profile size,
#                                      green and mps, against the whole GPU, also per SM clock
#   scripts/gpu-run-check.sh seven     7 x 1g.18gb resnet18 (batch 32) side by side, green and mps
#   scripts/gpu-run-check.sh mixed N   a mixed layout of small-batch real workloads against the
#                                      sequential baseline, N repetitions (default 3)
#   scripts/gpu-run-check.sh probe     the SM probe (migscope-worker sm-probe): on which SMs the
#                                      work of side-by-side green partitions really runs
#   scripts/gpu-run-check.sh profiles  each job of PROFILE_JOBS alone on 16, 32 and 64 SMs (green)
#                                      and on the whole GPU, stored in $OUT/profiles.db (planner input)
# Every run's directory (result.json, trace.csv, job logs) goes under $OUT/runs (default
# ./gpu-run-check-out); a short table is printed last and kept in $OUT/table-WHAT.txt.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:?usage: $0 scaling|seven|mixed [N]}
out=${OUT:-$PWD/gpu-run-check-out}
mkdir -p "$out/runs"
b="$root/build/tools/migscope/migscope"
worker="$root/build/tools/migscope-worker/migscope-worker"
window=${WINDOW_S:-10}

run() {  # run NAME ARGS...
  local name=$1; shift
  echo "== $name: migscope run $*" >&2
  timeout 600 "$b" run --run-dir "$out/runs/$name" --format json "$@" \
    >"$out/runs/$name.json" 2>"$out/runs/$name.err"
  echo "   exit $?" >&2
}

case "$what" in
  scaling)
    run scale-whole --backend sequential --jobs ${SCALING_JOB:-mlp} --duration "$window"
    for backend in green mps; do
      for p in 1g.18gb 1g.35gb 2g.35gb 3g.71gb 4g.71gb 7g.141gb; do
        run "scale-$backend-$p" --backend "$backend" --layout "$p" --jobs ${SCALING_JOB:-mlp} \
          --duration "$window"
      done
    done
    ;;
  seven)
    seven=resnet18:32,resnet18:32,resnet18:32,resnet18:32,resnet18:32,resnet18:32,resnet18:32
    run seven-green --backend green --layout 7x1g.18gb --jobs "$seven" --duration "$window" \
      --baseline sequential
    run seven-mps --backend mps --layout 7x1g.18gb --jobs "$seven" --duration "$window"
    ;;
  mixed)
    for rep in $(seq 1 "${2:-3}"); do
      run "mixed-$rep" --backend green --layout 3g.71gb+2g.35gb+1g.18gb+1g.18gb \
        --jobs resnet50:32,bert-base:4,resnet18:32,vit-b16:16 --duration "$window" \
        --baseline sequential
    done
    ;;
  probe)
    for sms in 132 60,32,16,16 64,64 16,16,16,16,16,16,16 26,26,26,26 32,32,32,32; do
      echo "== sm-probe --sms $sms" >&2
      "$worker" sm-probe --sms "$sms" >"$out/runs/probe-$sms.json" 2>"$out/runs/probe-$sms.err"
      echo "   exit $?" >&2
    done
    ;;
  profiles)
    for job in ${PROFILE_JOBS:-resnet18:32 resnet50:32 bert-base:4 vit-b16:16}; do
      for p in 1g.18gb 2g.35gb 3g.71gb; do
        run "profile-$job-$p" --backend green --layout "$p" --jobs "$job" --duration "$window" \
          --db "$out/profiles.db" --label profile
      done
      run "profile-$job-whole" --backend sequential --jobs "$job" --duration "$window" \
        --db "$out/profiles.db" --label profile
    done
    ;;
  *) echo "$0: unknown check '$what'" >&2; exit 2 ;;
esac

python3 - "$out" "$what" <<'PY' | tee "$out/table-$what.txt"
import glob, json, os, statistics, sys
out, what = sys.argv[1], sys.argv[2]
def load(name):
    try:
        return json.load(open(f"{out}/runs/{name}.json"))
    except (OSError, ValueError):
        err = open(f"{out}/runs/{name}.err").read().strip().splitlines() if os.path.exists(f"{out}/runs/{name}.err") else []
        print(f"{name}: no result ({err[-1] if err else 'no output'})")
        return None
def f(x, spec):
    return "-" if x is None else format(x, spec)
if what == "probe":
    print(f"{'partitions (SMs)':<24} {'granted':<22} {'seen':<22} {'shared':>6} {'whole GPU seen':>14} contained")
    for path in sorted(glob.glob(f"{out}/runs/probe-*.json")):
        try:
            r = json.loads(open(path).read().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            print(f"{os.path.basename(path)}: no result"); continue
        if r.get("event") != "sm_probe":
            print(f"{os.path.basename(path)}: {r.get('message', r)}"); continue
        parts = r["partitions"]
        print(f"{','.join(str(p['requested_sms']) for p in parts):<24} {','.join(str(p['sms']) for p in parts):<22} "
              f"{','.join(str(p['seen_sms']) for p in parts):<22} {sum(p['shared_sms'] for p in parts):>6} "
              f"{r['whole_device_sms_seen']:>14} {r['contained']}")
elif what == "profiles":
    for path in sorted(glob.glob(f"{out}/runs/profile-*.json")):
        r = load(os.path.basename(path)[:-5])
        if not r:
            continue
        j = r["run"]["jobs"][0]
        print(f"{j['name']:<14} {j['partition']:<10} {f(j['sms'], '>4')} SMs {j['status']:<8} {f(j['items_per_s'], '10.1f')} {j['item_unit'] or '':<7}/s "
              f"board {f(r['run']['energy']['average_power_w'], '5.0f')} W idle {f(r['run']['idle_power_w'], '4.0f')} W  J/item {f(j['energy_per_item_j'], '.4f')}")
elif what == "scaling":
    whole = load("scale-whole")
    w = whole["run"]["jobs"][0]["items_per_s"] if whole else None
    w_clock = whole["run"].get("sm_clock_mhz_median") if whole else None
    print(f"{whole['run']['jobs'][0]['name'] if whole else '?'}: {f(w, '.0f')} items/s on the whole GPU; target 95-105 % of the SM share")
    print(f"whole-GPU SM clock {f(w_clock, '.0f')} MHz (median in the window); 'per clock' divides the ratio by the clock ratio")
    print(f"{'backend':<7} {'profile':<9} {'SMs':>4} {'got':>4} {'items/s':>9} {'share':>7} {'SM share':>8} {'ratio':>7} {'MHz':>5} {'per clock':>9} {'MFU':>6} {'GiB':>6} status")
    for backend in ["green", "mps"]:
        for p in ["1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"]:
            r = load(f"scale-{backend}-{p}")
            if not r:
                continue
            j = r["run"]["jobs"][0]
            got = j["sms"] or j["sms_requested"]
            share = j["items_per_s"] / w if w and j["items_per_s"] else None
            ratio = share / (got / 132) if share else None
            gib = j["peak_memory_bytes"] / 2**30 if j["peak_memory_bytes"] else None
            clock = r["run"].get("sm_clock_mhz_median")
            per_clock = ratio * w_clock / clock if ratio and clock and w_clock else None
            print(f"{backend:<7} {p:<9} {j['sms_requested']:>4} {f(got, '>4')} {f(j['items_per_s'], '9.0f')} {f(share, '7.1%')} "
                  f"{got / 132:>8.1%} {f(ratio, '7.1%')} {f(clock, '5.0f')} {f(per_clock, '9.1%')} {f(j['mfu'], '6.1%')} {f(gib, '6.1f')} {j['status']}")
else:
    names = sorted(os.path.basename(p)[:-5] for p in glob.glob(f"{out}/runs/{what}-*.json"))
    rows = []
    for name in names:
        r = load(name)
        if not r:
            continue
        run, base = r["run"], r.get("baseline")
        e = run["energy"]
        print(f"{name}: window {run['window_s']:.1f} s, {f(e['counter_energy_j'], '.0f')} J (trace {f(e['disagreement_pct'], '+.2f')} %), "
              f"{f(e['average_power_w'], '.0f')} W avg, idle {f(run['idle_power_w'], '.0f')} W, "
              f"aggregate normalised throughput {f(run['aggregate_normalised_throughput'], '.2f')}")
        for j in run["jobs"]:
            b = next((x for x in (base or {}).get("jobs", []) if x["name"] == j["name"]), {})
            ratio = j["energy_per_item_j"] / b["energy_per_item_j"] if j.get("energy_per_item_j") and b.get("energy_per_item_j") else None
            print(f"   {j['name']:<14} {j['partition']:<9} {f(j['sms'], '>4')} SMs {j['status']:<8} {f(j['items_per_s'], '10.1f')} {j['item_unit'] or '':<7}/s "
                  f"alone {f(b.get('items_per_s'), '10.1f')}  norm {f(j['normalised_throughput'], '.2f')}  "
                  f"J/item {f(j['energy_per_item_j'], '.4f')} vs alone {f(b.get('energy_per_item_j'), '.4f')} ({f(ratio, '.2f')}x)")
        c = r.get("comparison")
        if c:
            print(f"   same work one after another: {f(c['baseline_energy_j'], '.0f')} J, {f(c['baseline_time_s'], '.1f')} s -> "
                  f"energy {f(c['energy_change_pct'], '+.1f')} %, speedup {f(c['speedup'], '.2f')}x")
            rows.append((c["energy_change_pct"], c["speedup"]))
    rows = [r for r in rows if r[0] is not None and r[1] is not None]
    if rows:
        for label, k in (("energy change %", 0), ("speedup", 1)):
            v = [r[k] for r in rows]
            print(f"{label} over {len(v)} reps: median {statistics.median(v):.2f}, min {min(v):.2f}, max {max(v):.2f}")
PY
