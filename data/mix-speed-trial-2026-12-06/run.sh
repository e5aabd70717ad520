#!/usr/bin/env bash
# Reruns the per-job mix speed trial (docs/planner.md, "Held-out evaluation"): each evaluated seed
# left out. Needs migscope built from commit 493bc18 with planner-mix-speed.patch applied (the
# factors come in through MIGSCOPE_EXP_MIX_BIAS, a JSON object of job label -> factor; unset, the
# planner is today's); run from the repository root. About 7 minutes on 2 cores.
set -euo pipefail
t=data/mix-speed-trial-2026-12-06
declare -A dir=([20261204]=data/plan-eval-h200-2026-12-04 [20261205]=data/plan-eval-h200-seed-20261205
                [20261206]=data/plan-eval-h200-seed-20261206)
out=${OUT:-$(mktemp -d)}
for s in 20261204 20261205 20261206; do
  d=${dir[$s]}
  others=$(for o in "${!dir[@]}"; do [ "$o" = "$s" ] || echo "${dir[$o]}"; done)
  # The factors, from today's residuals without the seed (today's model on the seed itself:
  # ../plan-eval-left-out-2026-12-06/run.sh).
  LEAVE_OUT=$d/eval.db bash scripts/model-error-h200.sh "$out/me-$s-today.json" 2>/dev/null
  python3 $t/factors.py "$out/me-$s-today.json" "$out/factors-without-$s.json"
  # The trial: the factors, the delay fitted again on the other two seeds, residuals with both.
  export MIGSCOPE_EXP_MIX_BIAS=$out/factors-without-$s.json
  python3 scripts/fit-start-delay.py $others -o "$out/start-delay-without-$s.json" > /dev/null
  START_DELAY=$out/start-delay-without-$s.json LEAVE_OUT=$d/eval.db bash scripts/model-error-h200.sh "$out/me-$s-trial.json" 2>/dev/null
  python3 scripts/plan-eval.py rescore "$d" --seed "$s" --model-error "$out/me-$s-trial.json" \
    --start-delay "$out/start-delay-without-$s.json" > "$out/rescore-$s-trial.txt"
  python3 scripts/plan-eval.py repredict "$d" --start-delay "$out/start-delay-without-$s.json" \
    --before data/start-delay-h200.json > "$out/repredict-$s-trial.txt"
  unset MIGSCOPE_EXP_MIX_BIAS
done
echo "written under $out"
