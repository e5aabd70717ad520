#!/usr/bin/env bash
# Installs what migscope needs and is missing: Debian packages (or uses an offline bundle made by
# scripts/bundle-deps.sh), LibTorch from pip's torch==2.11.0 (the GPU host's version) and nvml.h
# from pip (for the NVML ABI test), both into the dependency cache. `install-deps.sh test` also
# installs what only the tests use. Prints the CMake arguments to use on its last line, prefixed
# with "cmake-args:".
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
deps_dir=${MIGSCOPE_DEPS_DIR:-$HOME/.cache/migscope}
torch_version=2.11.0
nvml_dev_version=13.0.87
bundle_dir=${MIGSCOPE_BUNDLE_DIR:-$root/deps/bundle}
for_tests=$(case "${1:-}" in test|sanitize|fuzz) echo yes ;; esac)
# The build and the main job: libjs-chart.js is Chart.js, which the build embeds in migscope to
# draw the report's plots in the page; libmicrohttpd-dev serves `migscope exporter`'s /metrics
# (libcpp-httplib-dev is the exporter tests' HTTP client); gRPC and protobuf (the compilers
# generate the client) ask the kubelet's pod-resources API which container holds each GPU, for
# the exporter's pod names.
debian_packages=(cmake ninja-build g++ pkg-config libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
                 libfmt-dev libsqlite3-dev libtomlplusplus-dev libgtest-dev libgmock-dev
                 libbenchmark-dev python3 python3-pip libjs-chart.js libmicrohttpd-dev
                 libcpp-httplib-dev libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev
                 protobuf-compiler)
# Only the tests: chromium checks the report page (headless), gnuplot-nox draws the plots' SVG and
# PNG export (`migscope report --plots-dir`), clang with its runtimes (libFuzzer, ASan, UBSan)
# builds the fuzz targets and the sanitizer build; kubernetes-client (kubectl) and python3-yaml
# check the Kubernetes manifests of deploy/ and `plan --format k8s` offline; prometheus (with
# promtool) scrapes `migscope exporter` in its tests; slurm-wlm and munge run the scripts of
# `plan --format slurm` on a real Slurm, slurmdbd and mariadb-server its accounting, where the
# energy epilog writes (tests/tools/slurm_test.py starts its own daemons; where systemd runs,
# installing them also starts Debian's munge and MariaDB services); zsh parses the generated zsh
# completion (zsh and zsh-common, 19 MB, no new libraries; the test skips that part without it).
test_packages=(gnuplot-nox chromium clang libclang-rt-dev kubernetes-client python3-yaml prometheus
               slurm-wlm slurmdbd mariadb-server munge zsh)
if [ -n "$for_tests" ]; then debian_packages+=("${test_packages[@]}"); fi
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
  command -v gnuplot >/dev/null ||
    log "no gnuplot (Debian: gnuplot-nox): migscope report --plots-dir cannot export SVG/PNG"
  [ -z "$for_tests" ] || command -v chromium >/dev/null ||
    log "no chromium: the report's browser test will fail"
  [ -z "$for_tests" ] || command -v clang++ >/dev/null ||
    log "no clang (Debian: clang libclang-rt-dev): no fuzzing or sanitizer build"
else
  missing=()
  for p in "${debian_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # A Python with pip (e.g. pyenv's) serves as well as Debian's.
  if python3 -m pip --version >/dev/null 2>&1; then
    missing=("${missing[@]/python3-pip}"); missing=("${missing[@]/python3}")
  fi
  # Any kubectl (a cloud SDK's, say, which Debian's package would clash with) serves as well.
  if command -v kubectl >/dev/null; then missing=("${missing[@]/kubernetes-client}"); fi
  read -r -a missing <<< "${missing[*]}"
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    for p in "${missing[@]}"; do
      case " ${test_packages[*]} " in *" $p "*)
        log "($p only because the tests run: ./build.sh build and quickstart do not install it)" ;;
      esac
    done
    as_root apt-get update -q >&2
    as_root env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
  fi
fi

mkdir -p "$deps_dir"
cmake_args+=("-DMIGSCOPE_DEPS_DIR=$deps_dir")
pip_target() {  # pip_target DIR SPEC [NOTE]: install SPEC into DIR unless already there
  local dir=$1 spec=$2 note=${3:-}
  [ -f "$dir/.complete" ] && return 0
  log "pip: installing $spec into $dir (once${note:+; $note})"
  rm -rf "$dir"
  local pip=(env PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --disable-pip-version-check
             --root-user-action=ignore --no-warn-script-location --target "$dir" "$spec")
  if [ -t 2 ]; then
    "${pip[@]}" --progress-bar on >&2 || return 1  # pip's own progress bars
  else
    # No terminal (CI, a log): pip's bars would be noise; a line every 30 s with the megabytes
    # downloaded and unpacked so far (pip downloads into its TMPDIR, then unpacks into DIR).
    local tmp waited=0 pid
    tmp=$(mktemp -d)
    TMPDIR=$tmp "${pip[@]}" -q --progress-bar off >&2 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
      sleep 5
      waited=$((waited + 5))
      if [ $((waited % 30)) -eq 0 ] && kill -0 "$pid" 2>/dev/null; then
        log "pip: $(du -smc "$tmp" "$dir" 2>/dev/null | tail -1 | cut -f1) MB so far ($waited s)"
      fi
    done
    wait "$pid" || { rm -rf "$tmp"; return 1; }
    rm -rf "$tmp"
  fi
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
  elif pip_target "$deps_dir/torch-$torch_version" "torch==$torch_version" \
                  "about 3 GB to download with its CUDA libraries"; then
    cmake_args+=("-DCMAKE_PREFIX_PATH=$deps_dir/torch-$torch_version/torch/share/cmake")
  else
    log "could not install LibTorch: building without migscope-worker"
    cmake_args+=("-DMIGSCOPE_WITH_TORCH=OFF")
  fi
fi

# The Kubernetes API's JSON schemas, for the deploy test's offline validation
# (tests/tools/deploy_test.py).
if [ -n "$for_tests" ]; then
  pip_target "$deps_dir/kubernetes-validate-1.37.0" "kubernetes-validate==1.37.0" ||
    log "no kubernetes-validate: the deploy test skips its schema check"
fi

# HF transformers, the GPU host's version, for the PyTorch peer's test: its BERT and GPT-2 get the
# same attention under torch.compile as eagerly (tests/bench/compare_pytorch_test.py).
if [ -n "$for_tests" ]; then
  pip_target "$deps_dir/transformers-5.17.0" "transformers==5.17.0" ||
    log "no transformers: the PyTorch peer's attention test is skipped"
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
