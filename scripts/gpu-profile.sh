#!/usr/bin/env bash
# Measures the planner's profiles of one GPU model (the shipped data/profiles-h200.json, or
# MODEL=h100-80gb for data/profiles-h100-80gb.json; docs/planner.md "Profiles"), on the GPU host
# after `./build.sh build`, in parts that fit one device call each; every part writes its own
# store under $OUT:
#   scripts/gpu-profile.sh cnn           resnet18 and resnet50 at batches 32 and 256
#   scripts/gpu-profile.sh transformers  bert-base:4, gpt2-medium:2, vit-b16:16
#   (JOBS=LIST replaces a part's jobs: JOBS=resnet18:32,resnet50:32 for the stream replay's)
#   scripts/gpu-profile.sh mixes         the two calibration mixes (the corrections)
#   scripts/gpu-profile.sh export DB...  the profile file from the parts' stores (any machine)
#   scripts/gpu-profile.sh verify        docs/planner.md's checked plan, run with --verify
# Each job runs alone on green partitions of 1, 2 and 3 compute slices (16, 32 and 64 SMs: on the
# H200 1g.18gb, 2g.35gb, 3g.71gb) and on the whole GPU, a steady window of PROFILE_S seconds
# (default 6) each, with idle probes before and after (their idle state goes into the file).
# MODEL (default h200) must be the GPU's: `profile export` refuses another model's runs.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:?usage: $0 cnn|transformers|mixes|export DB...|verify}
out=${OUT:-$PWD/gpu-profile-out}
b=${MIGSCOPE:-${MIGSCOPE_BUILD_DIR:-$root/build}/tools/migscope/migscope}
window=${PROFILE_S:-6}
model=${MODEL:-h200}
mkdir -p "$out"

profile() {  # profile PART JOBS
  "$b" profile --jobs "$2" --sizes 1g,2g,3g --duration "$window" \
    --db "$out/$1.db" --run-dir "$out/$1-runs" --label "profiles-$model $1" >"$out/$1.log" 2>&1
  echo "$1: exit $? ($(grep -c '' "$out/$1.log") log lines)"
}
case "$what" in
  cnn) profile cnn "${JOBS:-resnet18:32,resnet18:256,resnet50:32,resnet50:256}" ;;
  transformers) profile transformers "${JOBS:-bert-base:4,gpt2-medium:2,vit-b16:16}" ;;
  mixes)
    # NVIDIA's all-balanced 3g+2g+1g+1g and three 2g, of resnet18:32 (the study's small job).
    for layout in 3g+2g+1g+1g 2g+2g+2g; do
      n=$(tr '+' '\n' <<<"$layout" | wc -l)
      jobs=$(yes resnet18:32 | head -n "$n" | paste -sd, -)
      "$b" run --backend green --layout "$layout" --jobs "$jobs" --duration 5 \
        --db "$out/mixes.db" --run-dir "$out/mix-runs" --label calibration >>"$out/mixes.log" 2>&1
      echo "mix $layout: exit $?"
    done ;;
  export)
    shift
    args=()
    for db in "$@"; do args+=(--db "$db"); done
    "$b" profile export "${args[@]}" --gpu-model "$model" -o "$root/data/profiles-$model.json" ;;
  verify)
    "$b" plan --gpu-model "$model" --jobs resnet18:32,resnet50:32,bert-base:4 --work 1500 \
      --backend green --objective energy --top 2 --verify --db "$out/verify.db" >"$out/verify.log" 2>&1
    echo "verify: exit $?"
    tail -n 12 "$out/verify.log" ;;
  *) echo "unknown part '$what'" >&2; exit 2 ;;
esac
