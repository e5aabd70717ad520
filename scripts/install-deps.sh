#!/usr/bin/env bash
# Installs what migscope needs and is missing: Debian packages (or uses an offline bundle made by
# scripts/bundle-deps.sh), LibTorch from pip's torch==2.11.0 (the GPU host's version) and nvml.h
# from pip (for the NVML ABI test), both into the dependency cache. Prints the CMake arguments to
# use on its last line, prefixed with "cmake-args:".
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
deps_dir=${MIGSCOPE_DEPS_DIR:-$HOME/.cache/migscope}
torch_version=2.11.0
nvml_dev_version=13.0.87
bundle_dir=${MIGSCOPE_BUNDLE_DIR:-$root/deps/bundle}
# gnuplot-nox draws `migscope report`'s plots (SVG and PNG, no X); chromium checks the report page
# in a test (headless); clang with its runtimes (libFuzzer, ASan, UBSan) builds the fuzz targets
# and the sanitizer build.
debian_packages=(cmake ninja-build g++ pkg-config libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
                 libfmt-dev libsqlite3-dev libtomlplusplus-dev libgtest-dev libgmock-dev
                 libbenchmark-dev python3 python3-pip gnuplot-nox chromium clang libclang-rt-dev)
cmake_args=()

log() { echo "install-deps: $*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root to run: $*"; return 1; fi
}

if [ -d "$bundle_dir/usr" ]; then
  log "using the offline dependency bundle in $bundle_dir"
  cmake_args+=("-DMIGSCOPE_BUNDLE_DIR=$bundle_dir")
  for tool in cmake ninja g++; do
    command -v "$tool" >/dev/null || { log "missing $tool, which the bundle does not carry"; exit 1; }
  done
  # Programs with many shared libraries are not bundled: without them only the report and its
  # browser test are missing.
  command -v gnuplot >/dev/null || log "no gnuplot (Debian: gnuplot-nox): migscope report cannot draw"
  command -v chromium >/dev/null || log "no chromium: the report's browser test will fail"
  command -v clang++ >/dev/null || log "no clang (Debian: clang libclang-rt-dev): no fuzzing or sanitizer build"
else
  missing=()
  for p in "${debian_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # A Python with pip (e.g. pyenv's) serves as well as Debian's.
  if python3 -m pip --version >/dev/null 2>&1; then
    missing=("${missing[@]/python3-pip}"); missing=("${missing[@]/python3}")
  fi
  read -r -a missing <<< "${missing[*]}"
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    as_root apt-get update -q >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
  fi
fi

mkdir -p "$deps_dir"
cmake_args+=("-DMIGSCOPE_DEPS_DIR=$deps_dir")
pip_target() {  # pip_target DIR SPEC: install SPEC into DIR unless already there
  local dir=$1 spec=$2
  [ -f "$dir/.complete" ] && return 0
  log "pip: installing $spec into $dir (once)"
  rm -rf "$dir"
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    --no-warn-script-location --target "$dir" "$spec" >&2
  touch "$dir/.complete"
}

if [ "${MIGSCOPE_WITH_TORCH:-AUTO}" = "OFF" ]; then
  cmake_args+=("-DMIGSCOPE_WITH_TORCH=OFF")  # even where an earlier install left LibTorch
else
  # LibTorch: the Python torch already installed, if it is the GPU host's version; else pip's.
  python_torch=$(python3 -c "import torch; print(torch.__version__.split('+')[0], torch.utils.cmake_prefix_path)" 2>/dev/null || true)
  if [ "${python_torch%% *}" = "$torch_version" ]; then
    log "LibTorch: Python's torch $torch_version"
    cmake_args+=("-DCMAKE_PREFIX_PATH=${python_torch#* }")
  elif pip_target "$deps_dir/torch-$torch_version" "torch==$torch_version"; then
    cmake_args+=("-DCMAKE_PREFIX_PATH=$deps_dir/torch-$torch_version/torch/share/cmake")
  else
    log "could not install LibTorch: building without migscope-worker"
    cmake_args+=("-DMIGSCOPE_WITH_TORCH=OFF")
  fi
fi

# nvml.h is only for the ABI test; the build never needs it.
have_nvml_h=""
for header in /usr/local/cuda/include/nvml.h /usr/local/cuda/targets/*/include/nvml.h; do
  [ -f "$header" ] && have_nvml_h=$header
done
if [ -z "$have_nvml_h" ]; then
  pip_target "$deps_dir/nvml" "nvidia-nvml-dev==$nvml_dev_version" || log "no nvml.h: the NVML ABI test is skipped"
fi

echo "cmake-args: ${cmake_args[*]}"
