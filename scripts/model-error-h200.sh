#!/usr/bin/env bash
# Writes data/model-error-h200.json: the planner's residuals on every measured H200 mix the
# project keeps (docs/planner.md, "How sure"), each store predicted with the profiles and
# corrections of the build that measured it. Any machine with a built migscope; reads only.
#   scripts/model-error-h200.sh [OUT]
# LEAVE_OUT=STORE makes them without that store (a held-out evaluation's eval.db, for scoring it
# with the residuals of every other: `plan-eval.py rescore`); START_DELAY=FILE predicts with
# another start delay than data/start-delay-h200.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
b=${MIGSCOPE:-${MIGSCOPE_BUILD_DIR:-$root/build}/tools/migscope/migscope}
out=${1:-data/model-error-h200.json}
old=data/profiles-h200-2026-12-01/profiles-h200.json  # the unfused ResNets' profiles and corrections
before_pooling=data/profiles-h200-2026-12-03/profiles-h200.json  # the ResNets before the max-pooling kernels
rm -f "$out"
# Every store with today's model: the start delay of jobs starting together (green partitions
# only; docs/planner.md, "Model"), named as given so that the sources stay relative.
add() {
  local args=()
  while (($#)); do
    if [[ $1 == --db && ${2:-} == "${LEAVE_OUT:-}" ]]; then shift 2; continue; fi
    args+=("$1")
    shift
  done
  "$b" profile residuals --start-delay "${START_DELAY:-data/start-delay-h200.json}" "${args[@]}" \
    $([ -f "$out" ] && echo --add-to "$out") -o "$out"
}
# Today's profiles (2026-12-06): their calibration mixes (in-sample for the corrections).
add --profiles data/profiles-h200.json --db data/profiles-h200/mixes.db
# The profiles of 2026-12-03 (the ResNets before the max-pooling kernels), which the mixes of
# 2026-12-04 ran: their calibration mixes, nine mixes of all seven profiled jobs and the three
# held-out evaluations' plans (seeds 20261204, 20261205 and 20261206; docs/planner.md, "Held-out
# evaluation": from the day one was scored, its mixes are residuals like any other, and their
# verified pairs the gains' residuals).
add --profiles "$before_pooling" --db data/profiles-h200-2026-12-03/mixes.db \
  --db data/calibration-h200-2026-12-04/calibration.db --db data/plan-eval-h200-2026-12-04/eval.db \
  --db data/plan-eval-h200-seed-20261205/eval.db --db data/plan-eval-h200-seed-20261206/eval.db
# The same two mixes with the unfused ResNets, on that day's profiles.
add --profiles "$old" --db data/profiles-h200-2026-12-01/mixes.db
# The study's mixes, fixed work and sequential baselines: profiles from its own scaling runs
# (the fine-tunes are in no profile file), the corrections the planner had then.
add --profiles data/study-h200/study.db --correction-from "$old" --db data/study-h200/study.db
# The reasons' clock and bandwidth runs (mlp, mlp:64, bert-base:4 on 7 x 1g.18gb), likewise.
add --profiles data/study-h200/reasons.db --correction-from "$old" --db data/study-h200/reasons.db
# The own-jobs measurements on MPS: calibration mixes, the verified plans (queues, commands),
# sequential baselines, seven resnet18:32 on MPS, repeated runs.
add --profiles data/profiles-h200-own-jobs.json --db data/profiles-h200-own-jobs/mps-mixes.db \
  --db data/own-jobs-h200/verify.db --db data/own-jobs-h200/sequential.db \
  --db data/own-jobs-h200/sequential-0428utc.db --db data/own-jobs-h200/backends.db \
  --db data/own-jobs-h200/repeat.db
