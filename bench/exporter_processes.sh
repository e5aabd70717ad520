#!/usr/bin/env bash
# The exporter's own CPU and memory with the real driver at 1 and 100 GPU processes (issue 43 item
# 6; docs/benchmarks.md, "migscope exporter"): `migscope exporter --interval-s 1` on GPU 0, then
# for each N of COUNTS N small CUDA processes (each its own context, a one-thread kernel every
# 0.2 s, time-sliced), held HOLD_S s once NVML lists them all, the exporter scraped every second.
# Per N: the process series the scrapes carried (median), the exporter's CPU (utime + stime over
# the hold, in % of one core and ms per interval), its resident memory (VmRSS at the end, VmHWM
# the peak since it started) and each scrape's size and time. bench/bench_exporter measures the
# same work without the driver, on the fake NVML.
#   OUT=DIR COUNTS="1 100" HOLD_S=30 bash bench/exporter_processes.sh
# On the GPU host after a build; needs nvcc (the CUDA processes are built from a few lines here)
# and GPU memory for COUNTS' largest number of contexts (about 0.5 GiB each). Writes under OUT
# (default ./exporter-processes-out): holder (the CUDA program), exporter.err, scrapes-N.txt (per
# scrape: seconds, bytes, process series) and processes.txt, the table.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
b=${MIGSCOPE:-${MIGSCOPE_BUILD_DIR:-$root/build}/tools/migscope/migscope}
out=${OUT:-$PWD/exporter-processes-out}
port=${PORT:-9417}
hold_s=${HOLD_S:-30}
mkdir -p "$out"

cat >"$out/holder.cu" <<'CU'
// One GPU process for bench/exporter_processes.sh: a context, a one-thread kernel every 0.2 s.
#include <cuda_runtime.h>
#include <csignal>
#include <cstdio>
#include <unistd.h>
__global__ void tick() {}
static volatile std::sig_atomic_t stop = 0;
int main() {
    std::signal(SIGTERM, [](int) { stop = 1; });
    if (cudaFree(nullptr) != cudaSuccess) { std::fprintf(stderr, "holder: no CUDA context\n"); return 1; }
    while (!stop) { tick<<<1, 1>>>(); cudaDeviceSynchronize(); usleep(200000); }
    return 0;
}
CU
"${NVCC:-nvcc}" -O2 -o "$out/holder" "$out/holder.cu" || { echo "nvcc failed" >&2; exit 2; }

"$b" exporter --listen "127.0.0.1:$port" --interval-s 1 2>"$out/exporter.err" &
exporter=$!
trap 'kill -INT $exporter 2>/dev/null; pkill -TERM -f "$out/holder" 2>/dev/null' EXIT
sleep "${IDLE_S:-15}"  # the exporter learns the GPU's idle power before any process comes

cpu_s() {  # the exporter's utime + stime, in seconds
  awk -v t="$(getconf CLK_TCK)" '{printf "%.3f", ($14 + $15) / t}' "/proc/$exporter/stat"
}
memory_kib() {  # $1: VmRSS or VmHWM
  awk -v k="$1:" '$1 == k {print $2}' "/proc/$exporter/status"
}
gpu_processes() {
  nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -c .
}

printf '| processes | series in the scrapes (median) | exporter CPU, %% of a core | ms per interval | VmRSS MiB | VmHWM MiB | scrape KiB (median) | scrape ms (median) |\n|---|---|---|---|---|---|---|---|\n' \
  >"$out/processes.txt"
for n in ${COUNTS:-1 100}; do
  pids=()
  for _ in $(seq "$n"); do "$out/holder" & pids+=($!); done
  waited=0
  while [ "$(gpu_processes)" -lt "$n" ] && [ $waited -lt 120 ]; do sleep 1; waited=$((waited + 1)); done
  echo "N=$n: NVML lists $(gpu_processes) processes after ${waited} s"
  sleep 3  # the exporter's next intervals see them all
  c0=$(cpu_s); t0=$(date +%s.%N)
  python3 - "$port" "$hold_s" >"$out/scrapes-$n.txt" <<'PY'
import sys, time, urllib.request
port, hold = sys.argv[1], float(sys.argv[2])
end = time.monotonic() + hold
while time.monotonic() < end:
    t = time.monotonic()
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    took = time.monotonic() - t
    series = sum(1 for line in body.splitlines()
                 if line.startswith("migscope_energy_joules_total{") and 'consumer="process"' in line)
    print(f"{took:.4f} {len(body)} {series}", flush=True)
    time.sleep(max(0.0, 1.0 - (time.monotonic() - t)))
PY
  c1=$(cpu_s); t1=$(date +%s.%N)
  rss=$(memory_kib VmRSS); hwm=$(memory_kib VmHWM)
  kill -TERM "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null
  awk -v n="$n" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" \
      -v rss="$rss" -v hwm="$hwm" '
    { s[NR] = $3; kb[NR] = $2 / 1024; ms[NR] = 1000 * $1 }
    function median(a, k,   i, j, t) {  # a copy sorted by insertion, then its middle
      for (i = 1; i <= k; i++) b[i] = a[i]
      for (i = 2; i <= k; i++) { t = b[i]; for (j = i - 1; j > 0 && b[j] > t; j--) b[j + 1] = b[j]; b[j + 1] = t }
      return k % 2 ? b[(k + 1) / 2] : (b[k / 2] + b[k / 2 + 1]) / 2
    }
    END {
      cpu = (c1 - c0) / (t1 - t0)
      printf "| %d | %s | %.2f %% | %.2f | %.1f | %.1f | %.1f | %.1f |\n", n, median(s, NR), 100 * cpu,
        1000 * cpu, rss / 1024, hwm / 1024, median(kb, NR), median(ms, NR)
    }' "$out/scrapes-$n.txt" >>"$out/processes.txt"
  waited=0
  while [ "$(gpu_processes)" -gt 0 ] && [ $waited -lt 60 ]; do sleep 1; waited=$((waited + 1)); done
done
head -n 5 "$out/exporter.err"
cat "$out/processes.txt"
