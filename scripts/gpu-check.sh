#!/usr/bin/env bash
# GPU-host check for the foundation (run through the device tool): build with the offline bundle,
# run every test, then `gpus`, `layouts` from live NVML, and `monitor` around a 10 s bf16 load at
# 10 Hz and 100 Hz (three repetitions each) plus idle, and the telemetry benchmark. Everything is
# packed into $OUT/gpu-check.tgz (default ./gpu-check-out); a short table is printed last.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
final=${OUT:-$root/gpu-check-out}
out=$(mktemp -d)
cd "$root"

MIGSCOPE_JOBS=16 ./build.sh build >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
b=build/tools/migscope/migscope
(cd build && ctest -L 'cpu|gpu' -j 8 --output-on-failure) >"$out/ctest.log" 2>&1
tail -3 "$out/ctest.log"
nvidia-smi --query-gpu=name,mig.mode.current,power.limit,clocks.sm,temperature.gpu --format=csv >"$out/nvidia-smi.txt" 2>&1

{
  $b gpus
  $b gpus --format json
  ./build/tools/migscope-worker/migscope-worker probe
  $b layouts
  $b layouts --maximal --format mig-parted
  $b layouts --check "4g.71gb+2g.35gb+1g.18gb" --check "3g+3g+1g"
} >"$out/commands.txt" 2>&1

run_monitor() {  # run_monitor NAME HZ
  $b monitor --hz "$2" -o "$out/trace-$1.csv" --summary "$out/summary-$1.json" -- \
    python3 bench/gpu_load.py --seconds 10 >"$out/load-$1.txt" 2>"$out/monitor-$1.txt"
}
python3 bench/gpu_load.py --seconds 10 >"$out/load-unmonitored-0.txt" 2>&1
for rep in 1 2 3; do
  run_monitor "10hz-$rep" 10
  run_monitor "100hz-$rep" 100
  python3 bench/gpu_load.py --seconds 10 >"$out/load-unmonitored-$rep.txt" 2>&1
done
$b monitor --hz 100 --duration 5 --summary "$out/summary-idle.json" >"$out/trace-idle.csv" 2>"$out/monitor-idle.txt"
build/bench/bench_telemetry --benchmark_min_time=0.5 >"$out/bench.txt" 2>&1
python3 - "$out" <<'PY' | tee "$out/table.txt"
import json, glob, os, re, statistics, sys
out = sys.argv[1]
print(f"{'run':<12}{'dur s':>8}{'counter J':>11}{'trace J':>10}{'diff %':>8}{'avg W':>8}{'peak W':>8}{'samples':>8}{'cpu %':>7}{'TFLOP/s':>9}")
for path in sorted(glob.glob(f"{out}/summary-*.json")):
    s = json.load(open(path)); name = os.path.basename(path)[8:-5]
    load = f"{out}/load-{name}.txt"; tf = ""
    if os.path.exists(load):
        m = re.search(r"= ([0-9.]+) TFLOP", open(load).read()); tf = m.group(1) if m else "?"
    sp = s["sampler"]; cpu = 100 * sp["thread_cpu_s"] / sp["wall_s"] if sp["wall_s"] else 0
    print(f"{name:<12}{s['duration_s']:>8.2f}{s['energy_counter_j'] or 0:>11.1f}{s['energy_trace_j'] or 0:>10.1f}"
          f"{s['disagreement_pct'] or 0:>8.2f}{s['average_power_w'] or 0:>8.1f}{s['peak_power_w'] or 0:>8.1f}"
          f"{sp['samples']:>8}{cpu:>7.3f}{tf:>9}")
un = [float(re.search(r"= ([0-9.]+) TFLOP", open(p).read()).group(1)) for p in glob.glob(f"{out}/load-unmonitored-*.txt")]
print("unmonitored TFLOP/s:", un, "median", statistics.median(un) if un else None)
PY
mkdir -p "$final"
tar czf "$final/gpu-check.tgz" -C "$out" .
cp "$out/bench.txt" "$out/commands.txt" "$out/ctest.log" "$final/" 2>/dev/null
