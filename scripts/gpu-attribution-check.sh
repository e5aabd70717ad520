#!/usr/bin/env bash
# GPU-host check of energy attribution (issue 25), through the device tool:
#   scripts/gpu-attribution-check.sh build     the offline build into $MIGSCOPE_BUILD_DIR
#   scripts/gpu-attribution-check.sh analyse DIR...   the table below from runs measured earlier
#   scripts/gpu-attribution-check.sh measure   for each backend (ATTR_BACKENDS, default green mps)
#       and repetition (ATTR_REPS, default 2): an unlike pair (mlp: matmul-bound; resnet18:32)
#       and triple (+ bert-base:4, launch-bound) measured with `migscope run --marginal-probe`,
#       and every mix without one of its jobs on the same partitions (the references)
# Each job's attributed power (its energy / the window) is compared with the marginal reference:
# the mix's board power minus the mix's without the job, plus its partition-size share of idle
# power, plus an even share of what is left (the interaction). The old split (idle by size, the
# rest by partition size x busy seconds) is computed from the same run for comparison. Idle
# states (clocks up, deep) are collected from every run. JSON outputs and logs under $OUT
# (default ./gpu-attribution-out); the table is printed last and kept in $OUT/attribution.txt.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:?usage: $0 build|measure|analyse DIR...}
out=${OUT:-$PWD/gpu-attribution-out}
build=${MIGSCOPE_BUILD_DIR:-$root/build}
mkdir -p "$out/runs"

if [ "$what" = build ]; then
  (cd "$root" && MIGSCOPE_BUNDLE_DIR="$root/deps/bundle" MIGSCOPE_JOBS=${MIGSCOPE_JOBS:-16} \
     MIGSCOPE_BUILD_DIR="$build" ./build.sh build) >"$out/build.log" 2>&1
  echo "build: exit $?"; tail -3 "$out/build.log"
  exit 0
fi

analyse() {  # analyse DIR...: every mix found in the run folders
python3 - "$@" <<'PY'
import glob, json, os, re, statistics, sys
paths = {os.path.basename(p)[:-5]: p for d in sys.argv[1:] for p in glob.glob(os.path.join(d, "*.json"))}
def load(name):
    path = paths.get(name, "")
    try:
        return json.load(open(path))["run"]
    except Exception:
        return None
def power(r):
    return r["energy"]["average_power_w"]
rows, new_err, old_err, idle_up, idle_deep = [], [], [], [], []
for name in sorted(paths):
    r = load(name)
    if r:
        for state, bucket in (("clocks_up", idle_up), ("deep", idle_deep)):
            if r["idle"][state]:
                bucket.append(r["idle"][state]["mean_w"])
for name in sorted(paths):
    if "without" in name:
        continue
    mix = load(name)
    if not mix or power(mix) is None or mix["idle_power_w"] is None:
        print(f"{name}: no energy measured"); continue
    jobs, n = mix["jobs"], len(mix["jobs"])
    subs = [load(f"{name}-without-{k}") for k in range(n)]
    if any(s is None or power(s) is None for s in subs):
        print(f"{name}: a reference run is missing"); continue
    p_mix, idle, window = power(mix), mix["idle_power_w"], mix["window_s"]
    sms = [j["sms"] or j["sms_requested"] or 1 for j in jobs]
    marginal = [p_mix - power(s) for s in subs]
    rest = p_mix - idle - sum(marginal)  # the interaction, split evenly
    activity = [sms[k] * j["busy_s"] for k, j in enumerate(jobs)]
    for k, j in enumerate(jobs):
        static = idle * sms[k] / sum(sms)
        ref = marginal[k] + static + rest / n
        new = j["energy_j"] / window
        old = static + (p_mix - idle) * activity[k] / sum(activity)
        e_new, e_old = 100 * (new - ref) / ref, 100 * (old - ref) / ref
        new_err.append(abs(e_new)); old_err.append(abs(e_old))
        rows.append(f"{name:16} {j['name']:12} {sms[k]:>4} {j.get('without_power_w') or 0:7.0f} "
                    f"{ref:7.1f} {new:7.1f} {e_new:+6.1f} % {old:7.1f} {e_old:+6.1f} %   "
                    f"board {p_mix:.0f} W, idle {idle:.0f} W, rest split evenly {rest:+.0f} W")
print("mix              job           SMs  w/o  W   ref W   new W  error    old W  error")
print("\n".join(rows))
def spread(v):
    return (f"median {statistics.median(v):.1f}, max {max(v):.1f} ({len(v)} jobs)" if v else "-")
print(f"|error| new (marginal probe, rest by busy time):   {spread(new_err)}")
print(f"|error| old (partition size x busy seconds):        {spread(old_err)}")
def idle_line(v):
    return (f"median {statistics.median(v):.0f} W, range {min(v):.0f}-{max(v):.0f} W over "
            f"{len(v)} runs" if v else "not seen")
print(f"idle with clocks up: {idle_line(idle_up)}; deep idle: {idle_line(idle_deep)}")
PY
}
if [ "$what" = analyse ]; then
  shift; analyse "$@"; exit 0
fi

b="$build/tools/migscope/migscope"
window=${WINDOW_S:-6}
probe=${PROBE_S:-3}
ATTR_TAG=${ATTR_TAG:-}  # appended to run names, to merge several calls' runs in one analysis
run() {  # run NAME ARGS...
  local name=$1; shift
  timeout 300 "$b" run --run-dir "$out/runs/$name" --format json --duration "$window" \
    --idle-probe 2 "$@" >"$out/runs/$name.json" 2>"$out/runs/$name.err"
  echo "$name: exit $?" >&2
}
# mix NAME BACKEND LAYOUT JOBS: the mix with marginal probes, then each mix without one job.
mix() {
  local name=$1 backend=$2 layout=$3 jobs=$4
  run "$name" --backend "$backend" --layout "$layout" --jobs "$jobs" --marginal-probe "$probe"
  IFS=+ read -ra parts <<<"$layout"; IFS=, read -ra js <<<"$jobs"
  for drop in "${!js[@]}"; do
    local l="" j=""
    for k in "${!js[@]}"; do
      [ "$k" = "$drop" ] && continue
      l+="${l:++}${parts[$k]}"; j+="${j:+,}${js[$k]}"
    done
    run "$name-without-$drop" --backend "$backend" --layout "$l" --jobs "$j"
  done
}
for rep in $(seq 1 "${ATTR_REPS:-2}"); do
  sleep 8  # the first run of each repetition starts from deep idle
  for backend in ${ATTR_BACKENDS:-green mps}; do
    mix "pair-$backend-$rep$ATTR_TAG" "$backend" 3g.71gb+3g.71gb mlp,resnet18:32
    mix "triple-$backend-$rep$ATTR_TAG" "$backend" 3g.71gb+2g.35gb+2g.35gb mlp,resnet18:32,bert-base:4
  done
done

analyse "$out/runs" | tee "$out/attribution.txt"
(cd "$out/runs" && tar -czf "$out/runs-json.tar.gz" *.json *.err && rm -rf -- */)
