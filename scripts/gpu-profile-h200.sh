#!/usr/bin/env bash
# Measures the planner's shipped H200 profiles again (data/profiles-h200.json; docs/planner.md
# "Profiles"), on the GPU host after `./build.sh build`, in parts that fit one device
# call each; every part writes its own store under $OUT:
#   scripts/gpu-profile-h200.sh cnn           resnet18 and resnet50 at batches 32 and 256
#   scripts/gpu-profile-h200.sh transformers  bert-base:4, gpt2-medium:2, vit-b16:16
#   scripts/gpu-profile-h200.sh mixes         the two calibration mixes (the corrections)
#   scripts/gpu-profile-h200.sh export DB...  the profile file from the parts' stores (any machine)
#   scripts/gpu-profile-h200.sh verify        docs/planner.md's checked plan, run with --verify
# Each job runs alone on green partitions of 16, 32 and 64 SMs (1g.18gb, 2g.35gb, 3g.71gb) and on
# the whole GPU, a steady window of PROFILE_S seconds (default 6) each, with idle probes before and
# after (their idle state goes into the file).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:?usage: $0 cnn|transformers|mixes|export DB...|verify}
out=${OUT:-$PWD/gpu-profile-out}
b=${MIGSCOPE:-${MIGSCOPE_BUILD_DIR:-$root/build}/tools/migscope/migscope}
window=${PROFILE_S:-6}
mkdir -p "$out"

profile() {  # profile PART JOBS
  "$b" profile --jobs "$2" --sizes 1g.18gb,2g.35gb,3g.71gb --duration "$window" \
    --db "$out/$1.db" --run-dir "$out/$1-runs" --label "profiles-h200 $1" >"$out/$1.log" 2>&1
  echo "$1: exit $? ($(grep -c '' "$out/$1.log") log lines)"
}
case "$what" in
  cnn) profile cnn resnet18:32,resnet18:256,resnet50:32,resnet50:256 ;;
  transformers) profile transformers bert-base:4,gpt2-medium:2,vit-b16:16 ;;
  mixes)
    # NVIDIA's all-balanced 3g+2g+1g+1g and three 2g, of resnet18:32 (the study's small job).
    for layout in 3g.71gb+2g.35gb+1g.18gb+1g.18gb 2g.35gb+2g.35gb+2g.35gb; do
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
    "$b" profile export "${args[@]}" --gpu-model h200 -o "$root/data/profiles-h200.json" ;;
  verify)
    "$b" plan --jobs resnet18:32,resnet50:32,bert-base:4 --work 1500 --backend green \
      --objective energy --top 2 --verify --db "$out/verify.db" >"$out/verify.log" 2>&1
    echo "verify: exit $?"
    tail -n 12 "$out/verify.log" ;;
  *) echo "unknown part '$what'" >&2; exit 2 ;;
esac
