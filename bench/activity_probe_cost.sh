#!/usr/bin/env bash
# The activity probe's cost to training, taken apart (issue 43 item 6; docs/benchmarks.md §7): one
# job alone on the whole GPU (`migscope run --backend sequential`), COST_S s windows, each PART in
# turn, REPS rounds, the order rotated each round so that drift falls on every part alike. Parts:
#   none         no injection library
#   inject       bench/libactivity-probe-floor.so, which does nothing once loaded
#   cupti        the same with CUPTI's activity API and device records only
#   graphs-only  the same with one record per CUDA graph launch, no kernel records
#   graphs       the probe, MIGSCOPE_ACTIVITY_GRAPHS=1 (graph records and kernel records)
#   kernels      the probe with every kernel's record
#   sampled      the probe, kernel records on 5 % of each second
#   PART+ahead   any of these with the worker's launch-ahead (MIGSCOPE_LAUNCH_AHEAD=1: each step
#                launched before the previous step's loss is read), e.g. "none none+ahead graphs+ahead";
#                without +ahead every part steps one at a time (MIGSCOPE_LAUNCH_AHEAD=0), although
#                the worker launches ahead by default under an injection library
# No exporter listens (the probe's report is one failed sendto a period). After a build with the
# benchmarks (the probe and the floor library need CUPTI). Writes under OUT (default
# ./probe-cost-out): cost.db (the runs), runs.txt (each run's time and what its library said),
# runs.tar.gz (each run's result.json, log and job stderr) and cost.txt, the table
# (bench/activity_probe_cost_table.py): per part the median speed, board power and energy per item
# and their change against `none`, with a 90 % bootstrap interval.
# BACKEND=cpu runs the script where there is no GPU (no library is loaded then; a smoke test).
#   OUT=DIR JOB=resnet18:32 COST_S=8 REPS=3 BUDGET_S=300 PARTS="none inject cupti graphs-only graphs" \
#     bash bench/activity_probe_cost.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MIGSCOPE_BUILD_DIR:-$root/build}
b=$build/tools/migscope/migscope
probe=$build/src/libmigscope-activity.so
floor=$build/bench/libactivity-probe-floor.so
out=${OUT:-$PWD/probe-cost-out}
job=${JOB:-resnet18:32}
read -ra parts <<<"${PARTS:-none inject cupti graphs-only graphs}"
for f in "$b" "$probe" "$floor"; do
  [ -e "$f" ] || { echo "activity_probe_cost: $f is missing (build with CUPTI and the benchmarks)" >&2; exit 2; }
done
mkdir -p "$out"

part_env() {  # the environment of one part, as `env` arguments
  local part=$1 ahead=" MIGSCOPE_LAUNCH_AHEAD=0"
  # PART+ahead: the same with the worker's launch-ahead, which is otherwise off here (the worker
  # turns it on by itself under an injection library).
  [[ $part == *+ahead ]] && { part=${part%+ahead}; ahead=" MIGSCOPE_LAUNCH_AHEAD=1"; }
  case "$part" in
    none) echo "-u CUDA_INJECTION64_PATH$ahead" ;;
    inject) echo "CUDA_INJECTION64_PATH=$floor MIGSCOPE_FLOOR_PART=inject$ahead" ;;
    cupti) echo "CUDA_INJECTION64_PATH=$floor MIGSCOPE_FLOOR_PART=cupti$ahead" ;;
    graphs-only) echo "CUDA_INJECTION64_PATH=$floor MIGSCOPE_FLOOR_PART=graphs-only$ahead" ;;
    graphs) echo "CUDA_INJECTION64_PATH=$probe MIGSCOPE_ACTIVITY_GRAPHS=1$ahead" ;;
    kernels) echo "CUDA_INJECTION64_PATH=$probe$ahead" ;;
    sampled) echo "CUDA_INJECTION64_PATH=$probe MIGSCOPE_ACTIVITY_DUTY=0.05 MIGSCOPE_ACTIVITY_PERIOD_S=1$ahead" ;;
    *) return 1 ;;
  esac
}
for p in "${parts[@]}"; do
  part_env "$p" >/dev/null || { echo "activity_probe_cost: unknown part '$p'" >&2; exit 2; }
done

n=${#parts[@]}
start=$(date +%s)
for rep in $(seq "${REPS:-3}"); do
  # BUDGET_S: no round starts after that many seconds (a round's parts are compared together).
  [ $(($(date +%s) - start)) -lt "${BUDGET_S:-100000}" ] || break
  for i in $(seq 0 $((n - 1))); do
    p=${parts[$(((i + rep - 1) % n))]}
    name=$p-$rep
    read -ra e <<<"$(part_env "$p")"
    SECONDS=0
    env "${e[@]}" MIGSCOPE_ACTIVITY_SOCKET="$out/nobody.sock" timeout "${RUN_LIMIT_S:-120}" \
      "$b" run --backend "${BACKEND:-sequential}" --jobs "$job" --duration "${COST_S:-8}" --db "$out/cost.db" \
      --run-dir "$out/$name" --label "probe cost: $p" >/dev/null 2>"$out/$name.log"
    echo "$name: exit $? after $SECONDS s $(cat "$out/$name"/*.stderr 2>/dev/null |
      grep -h -m 1 -E '^(activity-probe-floor|migscope-activity):')" |
      tee -a "$out/runs.txt"
  done
done

python3 "$root/bench/activity_probe_cost_table.py" "$out" "${parts[@]}" | tee "$out/cost.txt"
# Few files to carry back: the run folders and logs go into one archive.
(cd "$out" && tar czf runs.tar.gz ./*/result.json ./*/*.stderr ./*.log 2>/dev/null &&
  find . -mindepth 1 -maxdepth 1 \( -type d -o -name '*.log' \) -exec rm -rf {} +)
