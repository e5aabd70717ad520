#!/usr/bin/env bash
# GPU-host check of the green-context SM partitions of migscope-worker (builds nothing):
#   scripts/gpu-green-check.sh path/to/migscope-worker
# (a) gpt2-medium batch 8 (matmul-bound) on --sms 16, 32, 64, 132 and without --sms: items/s as a
#     share of the whole GPU's next to the SM share (target: 95-105 % of the SM share);
# (b) resnet18 batch 32 alone (whole GPU, 16 SMs), then 7 of them side by side on 7 x 16 SMs;
# (c) four different jobs on 60, 32, 16 and 16 SMs (the 3g + 2g + 1g + 1g SM counts) with the
#     profiles' memory as caps.
# Every run's JSON lines and stderr go under $OUT (default ./gpu-green-check-out); a short table is
# printed last (and kept in $OUT/table.txt).
set -uo pipefail
worker=${1:?usage: $0 path/to/migscope-worker}
[ -x "$worker" ] || { echo "$0: $worker is not an executable" >&2; exit 2; }
out=${OUT:-$PWD/gpu-green-check-out}
mkdir -p "$out"
device=${DEVICE:-cuda:0}

nvidia-smi --query-gpu=name,mig.mode.current,power.limit,clocks.sm,temperature.gpu \
  --format=csv >"$out/nvidia-smi.txt" 2>&1
"$worker" probe >"$out/probe.json" 2>"$out/probe.err"

run() {  # run NAME ARGS...: one worker run, stdout to NAME.jsonl, stderr to NAME.err
  local name=$1; shift
  echo "== $name: $*" >&2
  timeout 900 "$worker" "$@" </dev/null >"$out/$name.jsonl" 2>"$out/$name.err"
  echo "$?" >"$out/$name.rc"
}

# (a) SM scaling of one matmul-heavy job.
a_args=(train --model gpt2-medium --batch 8 --warmup-steps 5 --steps 20 --device "$device")
run a-whole "${a_args[@]}"
for sms in 132 64 32 16; do
  run "a-sms$sms" "${a_args[@]}" --sms "$sms"
done

# (b) seven small jobs side by side on 16 SMs each, and the same job alone.
b_args=(train --model resnet18 --batch 32 --warmup-steps 10 --seconds 15 --device "$device")
run b-alone-whole "${b_args[@]}"
run b-alone-sms16 "${b_args[@]}" --sms 16
python3 - "$out/b-group.json" "$device" <<'PY'
import json, sys
job = {"workload": "resnet18", "batch": 32, "sms": 16, "memory_limit_gib": 16,
       "warmup_steps": 10, "seconds": 15}
json.dump({"device": sys.argv[2], "jobs": [dict(job, seed=i) for i in range(7)]},
          open(sys.argv[1], "w"), indent=1)
PY
run b-group group --spec "$out/b-group.json"

# (c) four different jobs on the SM counts of 3g + 2g + 1g + 1g, capped at the profiles' memory.
python3 - "$out/c-group.json" "$device" <<'PY'
import json, sys
jobs = [
    {"workload": "gpt2-medium", "batch": 8, "sms": 60, "memory_limit_gib": 69.75},
    {"workload": "bert-base", "batch": 32, "sms": 32, "memory_limit_gib": 32.5},
    {"workload": "resnet50", "batch": 64, "sms": 16, "memory_limit_gib": 16},
    {"workload": "vit-b16", "batch": 32, "sms": 16, "memory_limit_gib": 16},
]
for j in jobs:
    j.update(warmup_steps=5, seconds=20)
json.dump({"device": sys.argv[2], "jobs": jobs}, open(sys.argv[1], "w"), indent=1)
PY
run c-group group --spec "$out/c-group.json"

python3 - "$out" <<'PY' | tee "$out/table.txt"
import json, os, sys
out = sys.argv[1]

def events(name):
    path = os.path.join(out, name + ".jsonl")
    evs = []
    if os.path.exists(path):
        for line in open(path):
            try:
                evs.append(json.loads(line))
            except ValueError:
                pass
    return evs

def by_job(evs, kind):
    return {e.get("job"): e for e in evs if e.get("event") == kind}

def rc(name):
    try:
        return open(os.path.join(out, name + ".rc")).read().strip()
    except OSError:
        return "?"

def fmt(x, spec):
    return "-" if x is None else format(x, spec)

def gib(b):
    return None if b is None else b / 2**30

def first_error(evs):
    errs = [e for e in evs if e.get("event") == "error"]
    return errs[0]["message"][:100] if errs else ""

probe = events("probe")
print("worker:", json.dumps(probe[0]) if probe else "probe failed")
whole = by_job(events("a-whole"), "result").get(0)
ready = by_job(events("a-whole"), "ready").get(0) or {}
device_sms = ready.get("device_sms") or 132
print(f"device: {ready.get('device_name')} ({device_sms} SMs), peak {fmt(ready.get('peak_flops_per_s'), '.4g')} FLOP/s")
print()
print("(a) gpt2-medium batch 8, one job: throughput share vs SM share (target 95-105 %)")
print(f"{'run':<10} {'sms':>5} {'tok/s':>10} {'share':>7} {'SM share':>9} {'ratio':>7} {'mfu':>6} {'peak GiB':>9} rc")
for name in ["a-whole", "a-sms132", "a-sms64", "a-sms32", "a-sms16"]:
    evs = events(name)
    r = by_job(evs, "result").get(0)
    if not r:
        print(f"{name:<10} failed (rc {rc(name)}): {first_error(evs)}")
        continue
    share = r["items_per_s"] / whole["items_per_s"] if whole else None
    sm_share = (r["sms"] or device_sms) / device_sms
    ratio = share / sm_share if share is not None else None
    print(f"{name:<10} {r['sms']:>5} {r['items_per_s']:>10.0f} {fmt(share, '7.1%')} {sm_share:>9.1%} "
          f"{fmt(ratio, '7.1%')} {fmt(r.get('mfu'), '6.1%')} {fmt(gib(r.get('peak_memory_bytes')), '9.2f')} {rc(name)}")
print()
print("(b) resnet18 batch 32: alone vs 7 side by side on 16 SMs each")
alone = {}
for name in ["b-alone-whole", "b-alone-sms16"]:
    r = by_job(events(name), "result").get(0)
    alone[name] = r["items_per_s"] if r else None
    print(f"{name:<14} {fmt(alone[name], '10.0f')} img/s  (sms {r['sms'] if r else '-'}, rc {rc(name)})")
evs = events("b-group")
results = by_job(evs, "result")
total = 0.0
for job in range(7):
    r = results.get(job)
    if r:
        total += r["items_per_s"]
        print(f"  job {job}: {r['items_per_s']:8.0f} img/s on {r['sms']} SMs, p50 {r['step_time_p50_s']*1e3:.1f} ms, "
              f"peak {fmt(gib(r.get('peak_memory_bytes')), '.2f')} GiB")
    else:
        err = [e for e in evs if e.get("event") == "error" and e.get("job") == job]
        print(f"  job {job}: failed: {err[0]['message'][:100] if err else 'no result'}")
print(f"group total {total:.0f} img/s = {fmt(total / alone['b-alone-whole'] if alone['b-alone-whole'] else None, '.2f')}x "
      f"the whole GPU alone; mean job {total/7:.0f} img/s = "
      f"{fmt((total/7) / alone['b-alone-sms16'] if alone['b-alone-sms16'] else None, '.1%')} of alone on 16 SMs (rc {rc('b-group')})")
print()
print("(c) four jobs on 60/32/16/16 SMs, memory capped at 69.75/32.5/16/16 GiB")
evs = events("c-group")
readies, results = by_job(evs, "ready"), by_job(evs, "result")
print(f"{'job':<4} {'model':<12} {'asked':>5} {'got':>4} {'items/s':>10} {'unit':<7} {'mfu':>6} {'peak GiB':>9} {'limit GiB':>9}")
for job in range(4):
    rd, r = readies.get(job) or {}, results.get(job)
    asked = [60, 32, 16, 16][job]
    if not r:
        err = [e for e in evs if e.get("event") == "error" and e.get("job") == job]
        print(f"{job:<4} {rd.get('model', '?'):<12} {asked:>5} failed: {err[0]['message'][:90] if err else 'no result'}")
        continue
    print(f"{job:<4} {rd['model']:<12} {asked:>5} {r['sms']:>4} {r['items_per_s']:>10.0f} {r['item_unit']:<7} "
          f"{fmt(r.get('mfu'), '6.1%')} {fmt(gib(r.get('peak_memory_bytes')), '9.2f')} {fmt(gib(rd.get('memory_limit_bytes')), '9.2f')}")
print(f"rc {rc('c-group')}; process-level errors: {[e['message'][:100] for e in evs if e.get('event') == 'error' and e.get('job') is None]}")
PY
