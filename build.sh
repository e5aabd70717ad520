#!/usr/bin/env bash
# migscope's one entry point for people and CI: installs what is missing, builds, then runs the
# quickstart (`./build.sh quickstart`) or every test (`./build.sh test`). `./build.sh build` only builds.
# `./build.sh sanitize` runs the CPU tests built with ASan + UBSan; `./build.sh fuzz [ARGS]` the
# fuzz targets (scripts/fuzz.sh ARGS; docs/fuzzing.md).
set -euo pipefail

root=$(cd "$(dirname "$0")" && pwd)
build_dir=${MIGSCOPE_BUILD_DIR:-$root/build}
jobs=${MIGSCOPE_JOBS:-$(nproc)}
what=${1:-quickstart}

case "$what" in
  quickstart|test|build|sanitize|fuzz) ;;
  -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
  *) echo "build.sh: unknown step '$what' (quickstart, test, build, sanitize or fuzz)" >&2; exit 2 ;;
esac

# Each stage's wall time is printed at the end (the README's time figures come from these lines in
# CI's log).
stage_start=$SECONDS
stage_times=()
stage_done() { stage_times+=("$1 $((SECONDS - stage_start)) s"); stage_start=$SECONDS; }
trap 'echo "build.sh: ${stage_times[*]:-nothing finished}" >&2' EXIT

# The tests also need Chromium, gnuplot and clang; the build and the main job do not.
cmake_args=$(bash "$root/scripts/install-deps.sh" "$what" | sed -n 's/^cmake-args: //p')
stage_done dependencies

# The sanitizer build: everything but the LibTorch worker, with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, and the libFuzzer targets of fuzz/.
sanitize_dir=${MIGSCOPE_SANITIZE_BUILD_DIR:-$root/build-sanitize}
configure_sanitize() {
  mkdir -p "$sanitize_dir"
  # shellcheck disable=SC2086  # the arguments are single words without spaces
  cmake -S "$root" -B "$sanitize_dir" -G Ninja $cmake_args -DCMAKE_CXX_COMPILER=clang++ \
    -DMIGSCOPE_FUZZ=ON -DMIGSCOPE_WITH_TORCH=OFF -DMIGSCOPE_BUILD_BENCH=OFF \
    >"$sanitize_dir/configure.log" 2>&1 || { cat "$sanitize_dir/configure.log" >&2; exit 1; }
}
fuzz_short() {  # a few seconds per fuzz target
  configure_sanitize
  cmake --build "$sanitize_dir" -j "$jobs" --target fuzz_all
  # The main build's migscope writes some seeds (a generated trace, plan files), where it is built.
  MIGSCOPE=${MIGSCOPE:-$build_dir/tools/migscope/migscope} bash "$root/scripts/fuzz.sh" "$sanitize_dir" "$@"
}

case "$what" in
  sanitize)
    configure_sanitize
    cmake --build "$sanitize_dir" -j "$jobs"
    cd "$sanitize_dir" && ctest -L cpu --output-on-failure -j "$jobs"
    exit ;;
  fuzz)
    fuzz_short "${@:2}"
    exit ;;
esac

mkdir -p "$build_dir"
# shellcheck disable=SC2086  # the arguments are single words without spaces
cmake -S "$root" -B "$build_dir" -G Ninja $cmake_args >"$build_dir/configure.log" 2>&1 ||
  { cat "$build_dir/configure.log" >&2; exit 1; }
grep 'migscope [0-9]' "$build_dir/configure.log" >&2 || true
cmake --build "$build_dir" -j "$jobs"
stage_done build

migscope="$build_dir/tools/migscope/migscope"
has_gpu() { "$migscope" gpus --format json >/dev/null 2>&1; }

case "$what" in
  quickstart)
    # examples/quickstart.toml: a small side-by-side run and its sequential baseline, on the GPU's
    # green-context partitions or, where there is no GPU, on the CPU cores.
    run_dir="$build_dir/runs/quickstart-$(date +%Y%m%d-%H%M%S)"
    db="$run_dir/results.db"
    mkdir -p "$run_dir"
    if has_gpu; then
      "$migscope" gpus
      echo
      "$migscope" run "$root/examples/quickstart.toml" --db "$db" --run-dir "$run_dir"
    elif [ "$(nproc)" -lt 2 ]; then
      # The spec's CPU section puts two jobs on two cores; one core holds one job.
      echo "No NVIDIA GPU and one CPU core here: one tiny workload on it." >&2
      "$migscope" run --backend cpu --jobs gpt2-tiny --duration 3 --baseline sequential \
        --db "$db" --run-dir "$run_dir"
    else
      echo "No NVIDIA GPU here: two tiny workloads side by side on the CPU cores." >&2
      "$migscope" run "$root/examples/quickstart.toml" --db "$db" --run-dir "$run_dir"
    fi
    echo
    # The promise is the report: without it the main job failed, whatever ran before.
    if report=$("$migscope" report "$db" -o "$run_dir/report.html"); then
      echo "report: $report"
    else
      echo "no report (see above); the results are in $run_dir" >&2
      exit 1
    fi
    stage_done quickstart
    ;;
  test)
    labels=cpu
    if has_gpu; then labels="cpu|gpu"; fi
    (cd "$build_dir" && ctest -L "$labels" --output-on-failure -j "$jobs")
    stage_done tests
    # Then every parser of untrusted input meets a few seconds of fuzzing (docs/fuzzing.md).
    if command -v clang++ >/dev/null; then
      fuzz_short --seconds 5
    else  # only with an offline bundle, which carries no clang
      echo "build.sh: no clang++ here: the fuzz targets were not run" >&2
    fi
    stage_done fuzz
    ;;
esac
