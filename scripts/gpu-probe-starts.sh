#!/usr/bin/env bash
# Does `migscope run`'s marginal probe draw the same power from one process start to the next?
# (docs/runs.md, "A limit found later": resnet18:32 alone on an MPS share drew 287 W in one run
# and 365 W in the next, at the same clock.) On a GPU host, after `./build.sh build`: REPS runs of
# one MPS pair with cuDNN's autotuning (the worker's default) and REPS with its heuristic choice
# (MIGSCOPE_CUDNN_BENCHMARK=0), alternating, every worker under the graph-record activity probe as
# issue 43's pairs ran (PROBE=0: without it). Each run's probes are printed: the board power, the
# SM clock and the speed of the job that ran in each, then the spread of each per setting. The
# probe of a job whose power moves while its speed stays is the case to catch.
#   JOBS      the pair (default gpt2-medium:8,resnet18:32)
#   MPS_SIZE  each share's profile (default 3g.71gb, the H200's; 3g.40gb on an H100 80GB)
#   DURATION  each run's window in s (default 10); PROBE_S each probe's (default 3)
#   REPS      runs per setting (default 3); OUT where the runs go (default ./probe-starts-out),
#             packed into OUT/runs.tar.gz at the end
# About 35 s a run on an H100 at the defaults.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
b=${MIGSCOPE:-${MIGSCOPE_BUILD_DIR:-$root/build}/tools/migscope/migscope}
out=${OUT:-$PWD/probe-starts-out}
size=${MPS_SIZE:-3g.71gb}
mkdir -p "$out"
if [ "${PROBE:-1}" = 1 ]; then
  probe_lib=$(dirname "$b")/../../src/libmigscope-activity.so
  [ -r "$probe_lib" ] || { echo "no activity probe at $probe_lib (built where CUPTI is found)" >&2; exit 2; }
  CUDA_INJECTION64_PATH=$(realpath "$probe_lib")
  export CUDA_INJECTION64_PATH MIGSCOPE_ACTIVITY_GRAPHS=1 MIGSCOPE_ACTIVITY_SOCKET="$out/activity.sock"
fi
for rep in $(seq "${REPS:-3}"); do
  for autotune in 1 0; do
    name=rep$rep-autotune$autotune
    MIGSCOPE_CUDNN_BENCHMARK=$autotune "$b" run --backend mps --layout "$size+$size" \
      --jobs "${JOBS:-gpt2-medium:8,resnet18:32}" --duration "${DURATION:-10}" \
      --marginal-probe "${PROBE_S:-3}" --run-dir "$out/$name" --label "$name" \
      >"$out/$name.txt" 2>"$out/$name.log"
    echo "$name: exit $?"
  done
done
python3 - "$out" <<'EOF'
import json, pathlib, statistics, sys
rows = {}
watts = lambda v: f'{v:.0f}' if v else '-'
print('| run | cuDNN | mix W | probe without | board W | SM MHz | the other job, items/s |')
print('|---|---|---|---|---|---|---|')
for path in sorted(pathlib.Path(sys.argv[1]).glob('rep*/result.json')):
    run = json.loads(path.read_text())['run']
    autotune = path.parent.name.endswith('autotune1')
    jobs = run['jobs']
    for k, job in enumerate(jobs):
        speeds = job.get('without_items_per_s') or []
        others = ', '.join(f"{jobs[i]['name']} {v:.0f}" for i, v in enumerate(speeds) if v)
        power = job.get('without_power_w')
        rows.setdefault((autotune, job['name']), []).append(power)
        print(f"| {path.parent.name} | {'autotune' if autotune else 'heuristic'} | "
              f"{watts(run['energy'].get('average_power_w'))} | {job['name']} | "
              f"{watts(power)} | {watts(job.get('without_sm_clock_mhz'))} | {others or '-'} |")
print()
for (autotune, name), powers in sorted(rows.items()):
    powers = [p for p in powers if p]
    if powers:
        print(f"{'autotune' if autotune else 'heuristic'}, probe without {name}: "
              f"{len(powers)} runs, {min(powers):.0f}-{max(powers):.0f} W "
              f"(median {statistics.median(powers):.0f} W)")
EOF
# The runs in one archive (a device call returns a limited number of files; on 2026-12-07 the
# unpacked runs of eight came back for three): each run's output, log, result.json and trace.
(cd "$out" && tar -czf runs.tar.gz --exclude=mps rep*) && (cd "$out" && rm -rf rep*)
