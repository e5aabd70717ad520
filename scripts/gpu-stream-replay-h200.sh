#!/usr/bin/env bash
# GPU-host check of the stream simulator against a real replay (issue 48, item 5; builds nothing:
# run after `./build.sh build`): a short trace of built-in jobs the shipped H200 profiles hold,
# arriving over a few minutes, simulated under the online policy as `migscope stream simulate`
# does, then its schedule run for real on green-context partitions of the H200
# (`migscope stream replay`: one fixed-work run per layout, each job on the simulator's
# partition, in its order, never before its arrival) and every job's measured start, end and
# completion, and the totals, set against the schedule's intervals (data/profiles-h200.json,
# data/model-error-h200.json, data/start-delay-h200.json). The table is printed last; logs and
# runs go under $OUT.
#   OUT                  where everything goes (default gpu-check-out/stream-replay)
#   MIGSCOPE             the binary (default build/tools/migscope/migscope)
#   TRACE                a trace to replay instead of the generated one
#   REPLAY_COUNT         jobs of the generated trace (default 13)
#   REPLAY_SEED          its seed (default 3)
#   REPLAY_WORK_MEDIAN   its median work in steps (default 2000: the online schedule ends at
#                        about 300 s; 3000 at about 400 s; 4500 at 607 s, which with warm-ups
#                        runs past a 10-minute command limit)
#   REPLAY_BACKEND       green (default) or mps
#   REPLAY_ORCHESTRATOR_S  the simulator's cost of a layout change beyond its instances (default
#                        10: green partitions need no orchestrator; the replay leaves this time
#                        out of its runs and charges it at the measured idle power)
#   GPU_MODEL            the card's model (default h200); another needs its PROFILES
#   PROFILES, MODEL_ERROR, START_DELAY   the simulator's files (default the shipped H200 ones:
#                        data/profiles-h200.json, data/model-error-h200.json,
#                        data/start-delay-h200.json). On another card, profile it first
#                        (`MODEL=h100-80gb scripts/gpu-profile.sh ...`); the H200's residuals and
#                        start delay then stand in for that card's, which no store holds yet
#                        (copies naming the card's model under $OUT, unless MODEL_ERROR and
#                        START_DELAY are given)
# Wall time with the defaults on the H200 (2026-12-05): 337 s (the schedule's ~300 s plus each
# layout's warm-up and idle probes); with `./build.sh build` first (178 s there) one 10-minute call. Exit code: the replay's (0 every job ran, 1 a job failed, 2 bad
# input, 3 no GPU, 130 interrupted); whether the measures fall inside the intervals is the table's
# "inside" column, not the exit code.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
b=${MIGSCOPE:-$root/build/tools/migscope/migscope}
out=${OUT:-$root/gpu-check-out/stream-replay}
backend=${REPLAY_BACKEND:-green}
orchestrator=${REPLAY_ORCHESTRATOR_S:-10}
mkdir -p "$out"
[ -x "$b" ] || { echo "no migscope at $b: build first (./build.sh build)" >&2; exit 2; }

trace=${TRACE:-$out/trace.json}
if [ -z "${TRACE:-}" ]; then
  "$b" stream trace --generate --arrivals poisson --rate-per-h 150 \
    --count "${REPLAY_COUNT:-13}" --seed "${REPLAY_SEED:-3}" \
    --work-median "${REPLAY_WORK_MEDIAN:-2000}" --sigma 0.5 \
    --mix 'resnet18:train:32,resnet50:train:32,vit-b16:train:16,bert-base:train:4,gpt2-medium:train:2' \
    -o "$trace" || exit $?
fi
"$b" stream check "$trace" | tee "$out/trace-check.txt"

model=${GPU_MODEL:-h200}
model_error=${MODEL_ERROR:-$root/data/model-error-h200.json}
start_delay=${START_DELAY:-$root/data/start-delay-h200.json}
# On another card the H200's residuals and start delay stand in for its own (no store holds
# them yet): copies that name the card's model, which `stream` otherwise refuses, said here.
standin() {  # standin FILE NAME: FILE's copy under $out with gpu_model $model; prints its path
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["gpu_model"] = sys.argv[2]
json.dump(d, open(sys.argv[3], "w"), indent=1)' "$1" "$model" "$out/$2" && echo "$out/$2"
}
if [ "$model" != h200 ]; then
  [ -z "${MODEL_ERROR:-}" ] && model_error=$(standin "$model_error" model-error-standin.json)
  [ -z "${START_DELAY:-}" ] && start_delay=$(standin "$start_delay" start-delay-standin.json)
  echo "on $model: the H200's residuals and start delay stand in ($model_error, $start_delay)" |
    tee -a "$out/replay.log"
fi
common=(--policy online --objective completion --orchestrator-s "$orchestrator" --instance-s 0
        --gpu-model "$model"
        --profiles "${PROFILES:-$root/data/profiles-h200.json}"
        --model-error "$model_error" --start-delay "$start_delay")
# What will run, before anything does (cheap: simulation only).
"$b" stream replay "$trace" "${common[@]}" --dry-run >"$out/plan.txt" 2>>"$out/replay.log"
{
  date -u +'started %Y-%m-%dT%H:%M:%SZ'
  nvidia-smi --query-gpu=name,serial,driver_version,power.limit --format=csv,noheader 2>&1
  "$b" --version 2>&1
} >"$out/provenance.txt"
start=$(date +%s)
"$b" stream replay "$trace" "${common[@]}" --backend "$backend" --run-dir "$out/runs" \
  --db "$out/replay.db" -o "$out/table.txt" 2> >(tee -a "$out/replay.log" >&2)
rc=$?
echo "replay: exit $rc after $(($(date +%s) - start)) s of wall time" | tee -a "$out/replay.log"
date -u +'ended %Y-%m-%dT%H:%M:%SZ' >>"$out/provenance.txt"
if [ -s "$out/table.txt" ]; then
  echo "JSON (every figure, per job and per layout): $out/runs/replay.json"
  echo
  cat "$out/table.txt"
else
  echo "no table: see $out/replay.log" >&2
fi
exit $rc
