#!/usr/bin/env bash
# GPU-host A/B of a worker change behind an environment switch, on one build (run through the
# device tool after `./build.sh build`): with SWITCH=0 (off) and without it (on), alternating, PAIRS
# rounds, each job of JOBS trained by `migscope-worker train --model M --batch B --device DEVICE
# --warmup-steps 5 --steps STEPS`. Prints each side's step p50 (ms) per run, its median and the
# items a second; the runs' JSON lines go to $OUT/switch-ab.tar.gz, the table to $OUT/switch-ab.txt.
#   SWITCH=MIGSCOPE_BERT_FUSED_LOSS JOBS="bert-base:32 bert-base:4" bash scripts/gpu-switch-ab.sh
# WORKER defaults to the build's (MIGSCOPE_BUILD_DIR, else build/); DEVICE=cpu checks the script
# without a GPU (docs/benchmarks.md §3 keeps what it measured).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
switch=${SWITCH:?SWITCH: the environment variable whose 0 turns the change off}
[[ $switch =~ ^[A-Z][A-Z0-9_]*$ ]] || { echo "SWITCH: '$switch' is not a variable name" >&2; exit 2; }
jobs=${JOBS:-bert-base:32}
pairs=${PAIRS:-3}
steps=${STEPS:-30}
device=${DEVICE:-cuda}
worker=${WORKER:-${MIGSCOPE_BUILD_DIR:-$root/build}/tools/migscope-worker/migscope-worker}
out=${OUT:-$PWD/switch-ab-out}
[ -x "$worker" ] || { echo "no migscope-worker at $worker (build first, or give WORKER)" >&2; exit 2; }
runs=$(mktemp -d)
trap 'rm -rf "$runs"' EXIT
mkdir -p "$out" "$runs/switch-ab"

for pair in $(seq 1 "$pairs"); do
  for side in off on; do
    for job in $jobs; do
      model=${job%%:*} batch=${job##*:}
      file="$runs/switch-ab/$model-$batch-$side-$pair.jsonl"
      if [ "$side" = off ]; then
        env "$switch=0" "$worker" train --model "$model" --batch "$batch" --device "$device" \
          --warmup-steps 5 --steps "$steps" >"$file" 2>"$file.err"
      else
        env -u "$switch" "$worker" train --model "$model" --batch "$batch" --device "$device" \
          --warmup-steps 5 --steps "$steps" >"$file" 2>"$file.err"
      fi
      echo "pair $pair, $side, $job: exit $?" >&2
    done
  done
done
tar -czf "$out/switch-ab.tar.gz" -C "$runs" switch-ab

python3 - "$runs/switch-ab" "$switch" "$jobs" "$pairs" <<'PY' | tee "$out/switch-ab.txt"
import json, statistics, sys
folder, switch, jobs, pairs = sys.argv[1], sys.argv[2], sys.argv[3].split(), int(sys.argv[4])
print(f"{switch}: off = {switch}=0, on = unset; {pairs} pairs, alternating; step p50 in ms")
for job in jobs:
    model, batch = job.split(":")
    for side in ("off", "on"):
        results = []
        for pair in range(1, pairs + 1):
            with open(f"{folder}/{model}-{batch}-{side}-{pair}.jsonl") as f:
                results += [json.loads(line) for line in f if '"event":"result"' in line]
        if not results:
            print(f"{job:16s} {side:4s} no result (see the runs' .err files in switch-ab.tar.gz)")
            continue
        p50 = [r["step_time_p50_s"] * 1e3 for r in results]
        rate = statistics.median(r["items_per_s"] for r in results)
        print(f"{job:16s} {side:4s} {' '.join(f'{x:.2f}' for x in p50):30s} median {statistics.median(p50):.2f}"
              f"  {rate:,.0f} {results[0]['item_unit']}/s (median)")
PY
