#!/usr/bin/env bash
# GPU-host check of the planner's quality (issue 6; builds nothing: run after `./build.sh build`):
# profile the job mix's workloads, plan it on green SM partitions, then run EVERY candidate the
# planner considers (`migscope plan --verify --top 1000`) and report how far the recommendation's
# measured objective is from the best measured one, and what profiling cost against running every
# candidate (wall time of the runs, start-up included on both sides).
#   PLAN_JOBS      the job mix (default: 7 x resnet18:32, the study's small-batch case)
#   PLAN_WORK      training steps per job (default 400)
#   PROFILE_S      steady window of each profile run, seconds (default 4)
#   PLAN_OBJECTIVE energy (default), makespan or edp
#   CALIBRATE      layouts of the mixes that calibrate the planner's corrections, each run once
#                  with a 5 s steady window on the mix's first jobs (default: NVIDIA's all-balanced
#                  3g+2g+1g+1g and 3x2g; "none": no mixes, corrections 1); counted as profiling
# State lives in $STATE (default gpu-check-out/plan-quality): run it again to resume (profiles
# are kept once complete, candidates already measured are not run again). A summary is printed
# last and kept in $STATE/summary.txt.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
b="$root/build/tools/migscope/migscope"
state=${STATE:-$root/gpu-check-out/plan-quality}
jobs=${PLAN_JOBS:-resnet18:32,resnet18:32,resnet18:32,resnet18:32,resnet18:32,resnet18:32,resnet18:32}
work=${PLAN_WORK:-400}
window=${PROFILE_S:-4}
objective=${PLAN_OBJECTIVE:-energy}
mkdir -p "$state"

# 1. Profiles: each distinct workload alone on 16, 32, 64 SMs (green) and the whole GPU.
if [ ! -f "$state/profiles.done" ]; then
  rm -f "$state/profiles.db"
  unique=$(tr ',' '\n' <<<"$jobs" | sort -u | paste -sd, -)
  "$b" profile --jobs "$unique" --sizes 1g.18gb,2g.35gb,3g.71gb --duration "$window" \
    --db "$state/profiles.db" --run-dir "$state/profile-runs" 2>&1 | tee "$state/profile.log"
  [ "${PIPESTATUS[0]}" = 0 ] && touch "$state/profiles.done"
fi
[ -f "$state/profiles.done" ] || { echo "profiling failed: see $state/profile.log" >&2; exit 1; }

# 1b. Calibration mixes (steady windows, stored with the profiles): the corrections.
calibrate=${CALIBRATE:-3g.71gb+2g.35gb+1g.18gb+1g.18gb 2g.35gb+2g.35gb+2g.35gb}
if [ ! -f "$state/calibration.done" ] && [ "$calibrate" != none ]; then
  start=$(date +%s)
  n=0
  for layout in $calibrate; do
    n=$((n + 1))
    count=$(tr '+' '\n' <<<"$layout" | wc -l)
    mix=$(tr ',' '\n' <<<"$jobs" | head -n "$count" | paste -sd, -)
    "$b" run --backend green --layout "$layout" --jobs "$mix" --duration 5 --label calibration \
      --db "$state/profiles.db" --run-dir "$state/calibration-$n" >>"$state/calibration.log" 2>&1
  done
  echo "calibration: $((n)) mixes in $(($(date +%s) - start)) s of wall time" \
    | tee -a "$state/calibration.log"
  touch "$state/calibration.done"
fi

# 2. Every candidate, measured (resumes from verify.db).
"$b" plan --jobs "$jobs" --work "$work" --objective "$objective" --backend green \
  --profiles "$state/profiles.db" --top 1000 --verify --db "$state/verify.db" \
  --run-dir "$state/verify-runs" -o "$state/plan.txt" 2>>"$state/verify.log"
rc=$?
echo "plan --verify exit $rc" >&2

# 3. Summary: the recommendation's gap (from the plan's own verdict) and the cost ratio.
profile_s=$(grep -ho 'in [0-9]* s of wall time' "$state/profile.log" | tail -1 | grep -o '[0-9]*')
calibration_s=$(grep -ho 'in [0-9]* s of wall time' "$state/calibration.log" 2>/dev/null |
  tail -1 | grep -o '[0-9]*')
profile_s=$((${profile_s:-0} + ${calibration_s:-0}))
# The runs of the final candidates: the last run of each layout in the plan's verification (a
# layout run again with another queue arrangement after a resume counts once).
verify_s=$(python3 - "$state/verify.log" "$state/plan.txt" <<'PY'
import re, sys
last = {}
for line in open(sys.argv[1]):
    m = re.match(r"migscope plan: (.*) ran in ([0-9.]+) s of wall time$", line.rstrip("\n"))
    if m:
        last[m.group(1)] = float(m.group(2))
text = open(sys.argv[2]).read()
names = re.findall(r"^  (\S.*?): (?:makespan|not verified)", text.split("Verification", 1)[-1], re.M)
print(round(sum(last.get(n, 0) for n in names)))
PY
)
{
  echo "plan quality check ($(date -u +%FT%TZ)): jobs $jobs, --work $work, objective $objective"
  grep -E -A1 '^Recommendation' "$state/plan.txt" || true
  grep -E '^  Measured' "$state/plan.txt" || true
  echo "profiling: $profile_s s of wall time (calibration mixes ${calibration_s:-0} s of it);" \
    "running every candidate: ${verify_s:-?} s"
  if [ -n "${verify_s:-}" ] && [ "$verify_s" != 0 ]; then
    awk -v p="$profile_s" -v v="$verify_s" \
      'BEGIN {printf "profiling cost: %.1f %% of running every candidate\n", 100 * p / v}'
  fi
} | tee "$state/summary.txt"
exit $rc
