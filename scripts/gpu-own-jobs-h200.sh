#!/usr/bin/env bash
# Measures your-own-jobs planning on the H200 (docs/planner.md "Your own jobs"): the two example
# commands of examples/own-job beside two built-in jobs, on MPS; on the GPU host after
# `./build.sh build`, in parts that fit one device call each, every part writing under $OUT:
#   scripts/gpu-own-jobs-h200.sh check      each example script for a few steps (they run at all)
#   scripts/gpu-own-jobs-h200.sh backends   seven resnet18:32 on 7 × 1g.18gb with their sequential
#                                           baseline, on green contexts and on MPS (fidelity of MPS)
#   scripts/gpu-own-jobs-h200.sh profile    the four jobs alone on MPS 1g/2g/3g and the whole GPU
#   scripts/gpu-own-jobs-h200.sh commands SIZES  the two commands alone again (REPS, default 2) on
#                                           SIZES (e.g. 1g.18gb,2g.35gb) into $OUT/commands.db
#   scripts/gpu-own-jobs-h200.sh builtins SIZES  the two built-in jobs alone on SIZES into
#                                           $OUT/own-jobs.db
#   scripts/gpu-own-jobs-h200.sh verify     plan the four (objective energy) from PROFILES (default
#                                           the profile store) and run the top three, then the four
#                                           one after another on the whole GPU (the baseline)
#   scripts/gpu-own-jobs-h200.sh export DB… data/profiles-h200-own-jobs.json from profile stores
#                                           (the shipped file: every store in data/profiles-h200-own-jobs/)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:?usage: $0 check|backends|profile|commands SIZES|builtins SIZES|verify|export DB...}
out=${OUT:-$PWD/gpu-own-jobs-out}
b=${MIGSCOPE:-${MIGSCOPE_BUILD_DIR:-$root/build}/tools/migscope/migscope}
jobs_file=examples/own-job/jobs.json
builtin=resnet18:32,bert-base:4
work=${WORK_STEPS:-2000}  # the built-in jobs' steps in `verify`; the commands do what jobs.json says
mkdir -p "$out"
cd "$root" || exit 1  # jobs.json names its scripts from the repository's root

case "$what" in
  check)
    python3 examples/own-job/train.py --steps 30 2>&1 | tail -n 1
    python3 examples/own-job/finetune_gpt2.py --steps 10 2>&1 | tail -n 1 ;;
  backends)
    seven=$(yes resnet18:32 | head -n 7 | paste -sd, -)
    for backend in green mps; do
      "$b" run --backend "$backend" --layout 7x1g.18gb --jobs "$seven" --work 400 \
        --baseline sequential --db "$out/backends.db" --run-dir "$out/backends-$backend" \
        --label "7 x resnet18:32 on $backend" >"$out/backends-$backend.txt" 2>"$out/backends-$backend.log"
      echo "backends $backend: exit $?"
      grep -A2 '^Against the sequential baseline' "$out/backends-$backend.txt"
    done ;;
  profile)
    "$b" profile --jobs "$builtin" --jobs-file "$jobs_file" --backend mps \
      --sizes 1g.18gb,2g.35gb,3g.71gb --duration 6 --db "$out/own-jobs.db" \
      --run-dir "$out/profile-runs" --label "own jobs on mps" >"$out/profile.log" 2>&1
    echo "profile: exit $?"
    tail -n 3 "$out/profile.log" ;;
  commands)
    "$b" profile --jobs-file "$jobs_file" --backend mps --sizes "${2:?sizes}" --reps "${REPS:-2}" \
      --db "$out/commands.db" --run-dir "$out/command-runs" --label "own commands on mps" \
      >"$out/commands-$2.log" 2>&1
    echo "commands $2: exit $?"
    tail -n 3 "$out/commands-$2.log" ;;
  builtins)
    "$b" profile --jobs "$builtin" --backend mps --sizes "${2:?sizes}" --duration 6 \
      --db "$out/own-jobs.db" --run-dir "$out/builtin-runs" --label "built-in jobs on mps" \
      >"$out/builtins-$2.log" 2>&1
    echo "builtins $2: exit $?"
    tail -n 3 "$out/builtins-$2.log" ;;
  verify)
    args=(plan --jobs "$builtin" --jobs-file "$jobs_file" --profiles "${PROFILES:-$out/own-jobs.db}"
          --backend mps --work "$work" --objective energy --top 3 --verify --db "$out/verify.db"
          --run-dir "$out/verify-runs")
    "$b" "${args[@]}" >"$out/verify.txt" 2>"$out/verify.log"
    echo "verify: exit $?"
    "$b" "${args[@]}" --format json -o "$out/verify.json" 2>>"$out/verify.log"  # from the store
    sed -n '/^Verification/,$p' "$out/verify.txt"
    "$b" run --backend sequential --jobs "$builtin" --jobs-file "$jobs_file" --work "$work" \
      --db "$out/sequential.db" --run-dir "$out/sequential-run" \
      --label "own jobs: sequential whole GPU" >"$out/sequential.txt" 2>"$out/sequential.log"
    echo "sequential: exit $?"
    grep -E 'makespan|energy' "$out/sequential.txt" | head -n 3 ;;
  export)
    shift
    dbs=()
    for db in "$@"; do dbs+=(--db "$db"); done
    "$b" profile export "${dbs[@]:?give the profile stores}" --gpu-model h200 \
      -o "$root/data/profiles-h200-own-jobs.json" ;;
  *) echo "unknown part '$what'" >&2; exit 2 ;;
esac
