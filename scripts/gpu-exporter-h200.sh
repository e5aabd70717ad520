#!/usr/bin/env bash
# Issue 20 item 6 on the H200 (docs/exporter.md): `migscope exporter` beside training processes
# sharing the GPU through time-slicing and MPS; after `./build.sh build`. Two parts:
#   scripts/gpu-exporter-h200.sh shares  the exporter sampling and scraped every second beside the
#       runs in MIXES (default: 2 and 4 jobs time-sliced, 3 and 7 on MPS), DURATION s each. Writes
#       under $OUT: exporter.err, ex.db (the runs), one table per run, pids.txt (every worker pid
#       and argv seen during each run, probes included, which the scrapes' pid labels map to), scrapes.tar.gz (every scrape and each
#       run's result.json) and exporter-cpu.txt (its CPU seconds over the runs).
#   scripts/gpu-exporter-h200.sh cost    the same time-sliced pair REPS times with and REPS times
#       without the exporter, alternating, COST_S s windows; prints each run's jobs' throughput
#       into cost.txt (the exporter's effect on training).
# Durations measured on the H200 (2026-12-02): `migscope run` probes each mix without one job
# before its window, so a run takes well over DURATION: at DURATION=60, ts2 95 s, mps3 about 150 s,
# ts4 365 s (its first probe waited about 200 s for steady state: the old rule judged single steps
# of a few ms, which time-slicing makes irregular; steady state is now judged over 0.2 s spans, so
# expect ts4 near 150 s); mps7 untried (expect 5 minutes). Split MIXES over device calls. In `cost`
# a 15-20 s run took 35-38 s; two of six did not reach steady state (the old rule) within
# RUN_LIMIT_S: each run's time and log tail go to cost-runs.txt.
# PROBE=1 (issue 43 items 4 and 6): the exporter listens with --activity-socket and every worker
# runs the activity probe (CUDA_INJECTION64_PATH=libmigscope-activity.so from the build), so each
# process is charged by its own kernel time; the mixes pa, pb, pc are three unlike pairs, each
# time-sliced (ts-) and on MPS (mps-): MIXES="ts-pa mps-pa ts-pb mps-pb ts-pc mps-pc"; `shares` ends
# with scripts/exporter-vs-run.py's table (compare.txt, compare.json). With `cost` the side with the
# exporter also runs the probe, the side without runs neither: their sum's overhead on training.
# GRAPHS=1 (with PROBE=1): the probe records one interval per CUDA graph launch instead of one
# per kernel (the cheaper probe to try against the 2.5 % the kernel records cost; with `cost`).
# DUTY=D (with PROBE=1): the probe samples, its records on for D (0.01-1) of each period
# (MIGSCOPE_ACTIVITY_DUTY), so that it costs less.
# PROFILES="FILE ..." (with PROBE=1): the exporter gives each process its power alone from these
# profiles (--profiles), by the job its worker names (MIGSCOPE_JOB, set by `migscope run`).
#   scripts/gpu-exporter-h200.sh profiles  makes one for the pairs' jobs: each alone on a 3g.71gb
#       MPS share and on the whole GPU (`migscope profile --backend mps`), written to
#       $OUT/profiles-mps.json (about 5 minutes at PROFILE_S=10); GPU_MODEL: the catalog key of
#       the GPU it runs on (default h200), which the exporter matches the profiles against. With
#       PROBE=1 (GRAPHS=1) the jobs run under the probe, as they do in `shares`: the probe lowers
#       a job's power, so profiles for the exporter are made this way (docs/exporter.md).
#   scripts/gpu-exporter-h200.sh alone  each of ALONE_JOBS (default resnet18:32 bert-base:4) alone
#       on the whole GPU for COST_S s, REPS times with the activity probe and REPS without,
#       alternating (GRAPHS=1: graph records): the probe's effect on a job's power and speed
#       alone, which the profiles' powers alone must match (alone.txt); beside the runs with the
#       probe the exporter listens, and its scrapes give the activity the probe reported (the
#       median over the run of the busiest process's migscope_sm_activity_ratio).
# RUN_ARGS: more `migscope run` options for every run of `shares` (e.g. "--marginal-probe 10", so
# that run's powers alone are measured over as long a window as the profiles' PROFILE_S).
# MPS_SIZE: the profile of each MPS share in the pairs and in `profiles` (default 3g.71gb, the
# H200's; 3g.40gb on an H100 80GB, with GPU_MODEL=h100-80gb).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:?usage: $0 shares|cost|profiles|alone}
size=${MPS_SIZE:-3g.71gb}
out=${OUT:-$PWD/gpu-exporter-out}
b=${MIGSCOPE:-${MIGSCOPE_BUILD_DIR:-$root/build}/tools/migscope/migscope}
mkdir -p "$out/scrapes"
probe_args=()
if [ "${PROBE:-0}" = 1 ]; then
  probe_lib=$(dirname "$b")/../../src/libmigscope-activity.so
  [ -r "$probe_lib" ] || { echo "no activity probe at $probe_lib (built where CUPTI is found)" >&2; exit 2; }
  probe_args=(--activity-socket "$out/activity.sock")
  export CUDA_INJECTION64_PATH=$(realpath "$probe_lib") MIGSCOPE_ACTIVITY_SOCKET="$out/activity.sock"
  # GRAPHS=1: the probe records each CUDA graph launch, not each kernel (MIGSCOPE_ACTIVITY_GRAPHS).
  [ "${GRAPHS:-0}" = 1 ] && export MIGSCOPE_ACTIVITY_GRAPHS=1
  [ -n "${DUTY:-}" ] && export MIGSCOPE_ACTIVITY_DUTY=$DUTY
fi

# LEARNED_POWER=1: the exporter charges each process its learned watts (--learned-power).
[ "${LEARNED_POWER:-0}" = 1 ] && probe_args+=(--learned-power)
for f in ${PROFILES:-}; do probe_args+=(--profiles "$f"); done

start_exporter() {  # $1: stderr file; sets $exporter
  # The exporter itself never loads CUDA, so the probe's variable does not touch it.
  "$b" exporter --listen 127.0.0.1:9401 --interval-s 1 "${probe_args[@]}" 2>>"$1" &
  exporter=$!
}

start_scraper() {  # $1: a folder for a scrape a second until the exporter stops; sets $scraper
  mkdir -p "$1"
  python3 - "$1" <<'PY' &
import sys, time, urllib.request
while True:
    try:
        body = urllib.request.urlopen("http://127.0.0.1:9401/metrics", timeout=2).read()
    except Exception:
        break
    open(f"{sys.argv[1]}/{time.time():.3f}.prom", "wb").write(body)
    time.sleep(1)
PY
  scraper=$!
}

run_jobs() {  # $1: name, then `migscope run` arguments; snapshots the workers' pids and argv
  local name=$1
  shift
  local extra=()
  read -ra extra <<<"${RUN_ARGS:-}"
  "$b" run "$@" "${extra[@]}" --db "$out/ex.db" --run-dir "$out/$name" --label "$name" \
    >"$out/$name.txt" 2>"$out/$name.log" &
  local run=$!
  # Every 2 s while it runs: the probes without each job and the mix start workers of their own.
  echo "# $name" >>"$out/pids.txt"
  while kill -0 "$run" 2>/dev/null; do
    ps -eo pid,args | grep -E 'migscope-worker (train|group)' | grep -v grep
    sleep 2
  done | sort -un >>"$out/pids.txt"
  wait "$run"
  echo "$name: exit $?"
}

case "$what" in
  shares)
    duration=${DURATION:-60}
    start_exporter "$out/exporter.err"
    sleep "${IDLE_S:-20}"  # the idle board, from which the exporter learns its idle power
    start_scraper "$out/scrapes"
    for mix in ${MIXES:-ts2 ts4 mps3 mps7}; do
      case "$mix" in
        ts2) run_jobs ts2 --backend timeslice --jobs resnet50:32,bert-base:4 --duration "$duration" ;;
        ts4) run_jobs ts4 --backend timeslice --jobs resnet50:32,bert-base:4,resnet18:32,vit-b16:16 \
               --duration "$duration" ;;
        mps3) run_jobs mps3 --backend mps --layout 3g.71gb+2g.35gb+1g.18gb \
                --jobs resnet50:32,bert-base:4,resnet18:32 --duration "$duration" ;;
        mps7) run_jobs mps7 --backend mps --layout 7x1g.18gb --duration "$duration" \
                --jobs resnet50:32,bert-base:4,resnet18:32,vit-b16:16,resnet18:32,bert-base:4,resnet50:32 ;;
        ts-pa) run_jobs ts-pa --backend timeslice --jobs mlp,resnet18:32 --duration "$duration" ;;
        ts-pb) run_jobs ts-pb --backend timeslice --jobs resnet50:32,bert-base:4 --duration "$duration" ;;
        ts-pc) run_jobs ts-pc --backend timeslice --jobs gpt2-medium:8,resnet18:32 --duration "$duration" ;;
        mps-pa) run_jobs mps-pa --backend mps --layout "$size+$size" --jobs mlp,resnet18:32 \
                  --duration "$duration" ;;
        mps-pb) run_jobs mps-pb --backend mps --layout "$size+$size" --jobs resnet50:32,bert-base:4 \
                  --duration "$duration" ;;
        mps-pc) run_jobs mps-pc --backend mps --layout "$size+$size" --jobs gpt2-medium:8,resnet18:32 \
                  --duration "$duration" ;;
        *) echo "unknown mix '$mix'" >&2 ;;
      esac
    done
    ticks=$(getconf CLK_TCK)
    awk -v t="$ticks" '{printf "exporter CPU: user %.2f s, system %.2f s\n", $14/t, $15/t}' \
      "/proc/$exporter/stat" | tee "$out/exporter-cpu.txt"
    kill -INT "$exporter"; wait "$exporter"; echo "exporter: exit $?"
    wait "$scraper"
    (cd "$out" && tar czf scrapes.tar.gz scrapes ./*/result.json && rm -rf scrapes)
    echo "scrapes: $(tar tzf "$out/scrapes.tar.gz" | grep -c prom)"
    head -n 5 "$out/exporter.err"
    # Each job's live energy against run's split of the same window (issue 43 item 4).
    # With PROFILES, each pair's row also says how far run's power alone moved from them.
    profile_args=(); for f in ${PROFILES:-}; do profile_args+=(--profiles "$f"); done
    python3 "$root/scripts/exporter-vs-run.py" "$out" "${profile_args[@]}" --json "$out/compare.json" |
      tee "$out/compare.txt" ;;
  profiles)
    "$b" profile --backend mps --sizes "$size" --duration "${PROFILE_S:-10}" \
      --jobs mlp,resnet18:32,resnet50:32,bert-base:4,gpt2-medium:8 --db "$out/profiles-mps.db" \
      --run-dir "$out/profiles-mps" >"$out/profiles-mps.txt" 2>"$out/profiles-mps.log"
    echo "profile: exit $?"
    "$b" profile export --db "$out/profiles-mps.db" --gpu-model "${GPU_MODEL:-h200}" -o "$out/profiles-mps.json"
    echo "profile export: exit $?" ;;
  cost)
    for rep in $(seq "${REPS:-3}"); do
      for side in with without; do
        [ "$side" = with ] && { start_exporter "$out/cost-exporter.err"; sleep 3; }
        SECONDS=0
        # PROBE=1: the probe only on the side with the exporter, so the pair measures both.
        probe_env=()
        [ "$side" = without ] && probe_env=(-u CUDA_INJECTION64_PATH -u MIGSCOPE_ACTIVITY_SOCKET)
        env "${probe_env[@]}" timeout "${RUN_LIMIT_S:-120}" "$b" run --backend timeslice --jobs resnet18:32,bert-base:4 \
          --duration "${COST_S:-20}" --db "$out/cost.db" --run-dir "$out/cost-$side-$rep" \
          --label "exporter cost: $side" >/dev/null 2>"$out/cost-$side-$rep.log"
        echo "cost $side $rep: exit $? after $SECONDS s"
        { echo "# $side $rep: $SECONDS s"; tail -n 4 "$out/cost-$side-$rep.log"; } >>"$out/cost-runs.txt"
        [ "$side" = with ] && { kill -INT "$exporter"; wait "$exporter"; }
      done
    done
    python3 - "$out" <<'PY' | tee "$out/cost.txt"
import json, pathlib, statistics, sys
def rates(node, found):  # every job's items_per_s in a result.json, in order
    if isinstance(node, dict):
        if "items_per_s" in node and "name" in node and node["items_per_s"]:
            found.append((node["name"], node["items_per_s"]))
        for v in node.values():
            rates(v, found)
    elif isinstance(node, list):
        for v in node:
            rates(v, found)
    return found
runs = {}
for d in sorted(pathlib.Path(sys.argv[1]).glob("cost-*-*")):
    if (d / "result.json").is_file():
        side = d.name.split("-")[1]
        for name, r in rates(json.loads((d / "result.json").read_text()), []):
            runs.setdefault((name, side), []).append(r)
for (name, side), v in sorted(runs.items()):
    print(f"{name:12} {side:8} median {statistics.median(v):10.1f}/s  runs {', '.join(f'{x:.1f}' for x in v)}")
PY
    ;;
  alone)
    [ "${PROBE:-0}" = 1 ] || { echo "alone: compares with and without the probe; set PROBE=1" >&2; exit 2; }
    for rep in $(seq "${REPS:-2}"); do
      for side in with without; do
        probe_env=()
        [ "$side" = without ] && probe_env=(-u CUDA_INJECTION64_PATH -u MIGSCOPE_ACTIVITY_SOCKET)
        for job in ${ALONE_JOBS:-resnet18:32 bert-base:4}; do
          name=alone-$side-$rep-${job%%:*}
          if [ "$side" = with ]; then
            start_exporter "$out/alone-exporter.err"
            sleep 1
            start_scraper "$out/$name-scrapes"
          fi
          env "${probe_env[@]}" "$b" run --backend sequential --jobs "$job" --duration "${COST_S:-10}" \
            --db "$out/alone.db" --run-dir "$out/$name" \
            --label "probe alone: $side" >/dev/null 2>"$out/$name.log"
          echo "alone $side $rep $job: exit $?"
          if [ "$side" = with ]; then
            kill -INT "$exporter"; wait "$exporter"; wait "$scraper"
          fi
        done
      done
    done
    python3 - "$out" <<'PY' | tee "$out/alone.txt"
import json, pathlib, statistics, sys
rows = {}
for d in sorted(pathlib.Path(sys.argv[1]).glob("alone-*-*-*")):
    if (d / "result.json").is_file():
        run = json.loads((d / "result.json").read_text())["run"]
        job = run["jobs"][0]
        side = d.name.split("-")[1]
        rows.setdefault((job["name"], side), []).append(
            (job["energy_j"] / run["window_s"], job["items_per_s"]))
def reported_activity(scrapes):  # the busiest process's ratio per scrape, its median over the run
    per_scrape = []
    for f in sorted(scrapes.glob("*.prom")):
        values = [float(line.rsplit(" ", 1)[1]) for line in f.read_text().splitlines()
                  if line.startswith("migscope_sm_activity_ratio{") and 'pid="' in line]
        if values and max(values) > 0:
            per_scrape.append(max(values))
    return statistics.median(per_scrape[2:]) if len(per_scrape) > 2 else None
activity = {}
for d in sorted(pathlib.Path(sys.argv[1]).glob("alone-with-*-scrapes")):
    a = reported_activity(d)
    if a is not None:
        activity.setdefault(d.name.split("-", 3)[3].removesuffix("-scrapes"), []).append(a)
for (name, side), v in sorted(rows.items()):
    w = [p for p, _ in v]
    r = [x for _, x in v]
    a = activity.get(name.split(":")[0], []) if side == "with" else []
    print(f"{name:12} {side:8} power median {statistics.median(w):6.1f} W ({', '.join(f'{x:.1f}' for x in w)})"
          f"  rate median {statistics.median(r):10.1f}/s ({', '.join(f'{x:.1f}' for x in r)})"
          + (f"  reported activity {', '.join(f'{x:.3f}' for x in a)}" if a else ""))
PY
    ;;
  *) echo "unknown part '$what'" >&2; exit 2 ;;
esac
