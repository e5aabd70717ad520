#!/usr/bin/env bash
# Today's planner on each held-out evaluation, with the residuals of every store but that
# evaluation's own (docs/planner.md, "Held-out evaluation": "Today's model decided again, each
# seed left out"): `plan-eval.py rescore` (the seed decided again, scored on the plans it
# measured) and `repredict --model-error` (each measured candidate predicted again with its
# layout and queues, and whether its measured figures fall inside the new intervals). Run from
# the repository root after ./build.sh build; about 15 s on 2 cores. Writes the outputs here.
set -euo pipefail
here=data/plan-eval-left-out-2026-12-06
declare -A dir=([20261204]=data/plan-eval-h200-2026-12-04 [20261205]=data/plan-eval-h200-seed-20261205
                [20261206]=data/plan-eval-h200-seed-20261206)
work=$(mktemp -d)
for s in 20261204 20261205 20261206; do
  d=${dir[$s]}
  LEAVE_OUT=$d/eval.db bash scripts/model-error-h200.sh "$work/model-error-without-$s.json" 2>/dev/null
  python3 scripts/plan-eval.py rescore "$d" --seed "$s" \
    --model-error "$work/model-error-without-$s.json" > "$here/rescore-$s.txt"
  python3 scripts/plan-eval.py repredict "$d" --start-delay data/start-delay-h200.json \
    --model-error "$work/model-error-without-$s.json" |
    sed "s|$work/||g; s|$PWD/||g" > "$here/repredict-$s.txt"
done
rm -rf "$work"
for s in 20261204 20261205 20261206; do
  echo "$s: $(tail -n 1 "$here/rescore-$s.txt")"
  echo "$s: $(tail -n 1 "$here/repredict-$s.txt")"
done
