#!/usr/bin/env bash
# migscope's one entry point for people and CI: installs what is missing, builds, then runs the
# quickstart (`./build.sh quickstart`) or every test (`./build.sh test`). `./build.sh build` only builds.
set -euo pipefail

root=$(cd "$(dirname "$0")" && pwd)
build_dir=${MIGSCOPE_BUILD_DIR:-$root/build}
jobs=${MIGSCOPE_JOBS:-$(nproc)}
what=${1:-quickstart}

case "$what" in
  quickstart|test|build) ;;
  -h|--help) sed -n '2,3p' "$0"; exit 0 ;;
  *) echo "build.sh: unknown step '$what' (quickstart, test or build)" >&2; exit 2 ;;
esac

cmake_args=$(bash "$root/scripts/install-deps.sh" | sed -n 's/^cmake-args: //p')
# shellcheck disable=SC2086  # the arguments are single words without spaces
mkdir -p "$build_dir"
cmake -S "$root" -B "$build_dir" -G Ninja $cmake_args >"$build_dir/configure.log" 2>&1 ||
  { cat "$build_dir/configure.log" >&2; exit 1; }
grep 'migscope [0-9]' "$build_dir/configure.log" >&2 || true
cmake --build "$build_dir" -j "$jobs"

migscope="$build_dir/tools/migscope/migscope"
has_gpu() { "$migscope" gpus --format json >/dev/null 2>&1; }

case "$what" in
  quickstart)
    if has_gpu; then
      "$migscope" gpus
      echo
      "$migscope" layouts --maximal
    else
      echo "No NVIDIA GPU here: showing the built-in H200 catalog." >&2
      "$migscope" layouts --gpu h200 --maximal
      echo
      "$migscope" layouts --gpu h200 --check "4g.71gb+2g.35gb+1g.18gb" --check "4g+4g" || true
    fi
    ;;
  test)
    labels=cpu
    if has_gpu; then labels="cpu|gpu"; fi
    cd "$build_dir" && ctest -L "$labels" --output-on-failure -j "$jobs"
    ;;
esac
