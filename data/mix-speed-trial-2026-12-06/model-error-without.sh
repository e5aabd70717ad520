#!/usr/bin/env bash
# scripts/model-error-h200.sh of commit 493bc18 for the per-job mix speed trial (run.sh): the
# same residuals, without one evaluation's store (SKIP_DB=its eval.db) and with the start delay
# of START_DELAY (default data/start-delay-h200.json).
#   SKIP_DB=DB START_DELAY=FILE data/mix-speed-trial-2026-12-06/model-error-without.sh OUT
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
b=${MIGSCOPE:-${MIGSCOPE_BUILD_DIR:-$root/build}/tools/migscope/migscope}
out=${1:-data/model-error-h200.json}; skip=${SKIP_DB:-none}
old=data/profiles-h200-2026-12-01/profiles-h200.json  # the unfused ResNets' profiles and corrections
before_pooling=data/profiles-h200-2026-12-03/profiles-h200.json  # the ResNets before the max-pooling kernels
rm -f "$out"
# Every store with today's model: the start delay of jobs starting together (green partitions
# only; docs/planner.md, "Model"), named as given so that the sources stay relative.
add() {
  "$b" profile residuals --start-delay ${START_DELAY:-data/start-delay-h200.json} "$@" \
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
  --db data/calibration-h200-2026-12-04/calibration.db $([ "data/plan-eval-h200-2026-12-04/eval.db" = "$skip" ] || echo --db data/plan-eval-h200-2026-12-04/eval.db) \
  $([ "data/plan-eval-h200-seed-20261205/eval.db" = "$skip" ] || echo --db data/plan-eval-h200-seed-20261205/eval.db) $([ "data/plan-eval-h200-seed-20261206/eval.db" = "$skip" ] || echo --db data/plan-eval-h200-seed-20261206/eval.db)
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
