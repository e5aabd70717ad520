#!/usr/bin/env bash
# Issue 23 on the H200, in parts of one device call each: the study (examples/study-h200.toml,
# item 1) and the measurements behind item 2's reasons, into results stores that travel from
# call to call. Run on the GPU host from the checkout (it builds first when build/ has no
# migscope: about 2.5 minutes on a fresh machine):
#   scripts/gpu-study-h200.sh PART [PART...]
# Study parts (sections of examples/study-h200.toml; `--only` picks whole sections, so the spec
# cuts them to fit). Minutes: the dry run's estimate (`plan`; its start-up allowances were
# measured in session 1), then what sessions took (mix3 redid one run a call's end cut off):
#   mix3        mix3-window (x3), mix3-window-alt, mix4-window-alt        8 min 49 s   took 8.7
#   mix4        mix4-window (x3), mix4-equal-work, mix4-matched-work      8 min 25 s   took 6.8
#   work3       mix3-equal-work (x3), mix3-matched-work (x3)              6 min 12 s + work
#   ft-small    ft-small-window (x3)                                      6 min 03 s
#   ft-default  ft-default-window (x3)                                    6 min 03 s
#   lora        lora2-window (x3), lora4-window                           6 min 10 s
#   scale-1     scale-train-cnn, scale-train-gpt2 (22 runs)               5 min 30 s
#   scale-2     scale-train-tf, scale-train-xl8 (22 runs)                 5 min 30 s
#   scale-3     scale-ft-cnn, scale-ft-gpt2 (22 runs)                     5 min 30 s
#   scale-4     scale-ft-tf (24 runs)                                     6 min 00 s
# They run `migscope run examples/study-h200.toml --only SECTIONS --db study.db --resume
# --marginal-probe 0` (MARGINAL_PROBE_S to change: each probe costs ~10 s per job of a mix).
# Reasons parts (single runs of `migscope run`, into reasons.db, each labelled; a label already
# stored finished is not run again, so these parts resume too; REPS repeats them):
#   idle       20 s of the board as found (migscope monitor), then resnet18:32 (light, ~300 W)
#              and mlp (700 W, at the cap) alone on the whole GPU for 15 s, each with 20 s idle
#              probes: idle with clocks up vs deep idle, after light and after heavy work (the
#              traces' temperature_c shows what a short cool-down leaves)           ~2.5 min
#              (the first part of a session, so that "as found" is a rested board)
#   clock      mlp (matmul-bound) alone on 1g.18gb, 7 x mlp on 7 x 1g.18gb, mlp on the whole
#              GPU; 10 s windows, 2 repetitions alternating: the SM clock of a partly busy
#              board against a busy one, and each job's speed with it                ~2 min
#   bandwidth  mlp:64 (AdamW over 268M fp32 parameters a step: memory-bound) alone on 1g.18gb
#              and 7 x on 7 x 1g.18gb (2 repetitions), bert-base:4 the same (1): slowdown beside
#              six others beyond the clock's (clock part) = shared L2 + memory bandwidth  ~2.5 min
#   graphs     docs/results-h200.md's small-batch mix (resnet50:32, bert-base:4, resnet18:32,
#              vit-b16:16 on 3g+2g+1g+1g), 10 s, sequential baseline, CUDA graphs and eager
#              (--no-cuda-graph) alternating, 2 repetitions: what graphs take from the gain ~6.5 min
# Other: `plan` (the dry run of every study part; any machine, runs nothing), `table` (the
# tables of the stores found; any machine with a built migscope).
#
# Stores: STUDY_IN (default data/study-h200/, committed: the stores measured so far travel with
# the checkout) may hold study.db and reasons.db from earlier calls; the script works on its own
# copies in STUDY_HOME (default build/gpu-study/, kept on a warm machine between calls) and takes
# the STUDY_IN copy when that holds more runs. At the end it copies the stores to $OUT. Files
# under $OUT (at most 8): study.db, reasons.db, summary.txt (the tables, also printed), log.txt
# (every command's stderr), runs.tar.gz (this call's run directories: result.json, table.txt,
# trace.csv with temperature, job logs), build.log (when it built), and a store's -wal only when
# a killed writer left one (copy it along with its store).
# After each call, here: cp FILES_AT/study.db FILES_AT/reasons.db data/study-h200/, keep
# FILES_AT/runs.tar.gz there as runs-DATE-callN.tar.gz, append summary.txt and log.txt to the
# day's files, and commit, so that the next call (or session) goes on from them. A call that finds
# a fresh machine starts from the committed stores: when an earlier call's stores were not
# committed first, bring its runs in with `migscope results merge --db data/study-h200/study.db
# FILES_AT/study.db` (the same for reasons.db; runs held already are not copied twice):
#   device: run(command="bash scripts/gpu-study-h200.sh mix3")
# Every part stops itself before CALL_BUDGET_S (default 560 s) of the call has passed: the run
# in progress is stored as interrupted and the next call's --resume measures it again.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
[ $# -gt 0 ] || { sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 2; }
out=${OUT:-$root/gpu-study-out}
in=${STUDY_IN:-$root/data/study-h200}
home=${STUDY_HOME:-$root/build/gpu-study}
b=${MIGSCOPE:-${MIGSCOPE_BUILD_DIR:-$root/build}/tools/migscope/migscope}
spec=examples/study-h200.toml
budget=${CALL_BUDGET_S:-560}
reps=${REPS:-}
stamp=$(date -u +%H%M%S)
t0=$SECONDS
made=()  # run directories made in this call, under $home/runs
mkdir -p "$out" "$home/runs"

sections_of() {  # PART -> comma list of the spec's sections ("" for a reasons part)
  case "$1" in
    mix3) echo mix3-window,mix3-window-alt,mix4-window-alt ;;
    mix4) echo mix4-window,mix4-equal-work,mix4-matched-work ;;
    work3) echo mix3-equal-work,mix3-matched-work ;;
    ft-small) echo ft-small-window ;;
    ft-default) echo ft-default-window ;;
    lora) echo lora2-window,lora4-window ;;
    scale-1) echo scale-train-cnn,scale-train-gpt2 ;;
    scale-2) echo scale-train-tf,scale-train-xl8 ;;
    scale-3) echo scale-ft-cnn,scale-ft-gpt2 ;;
    scale-4) echo scale-ft-tf ;;
    idle|clock|bandwidth|graphs|plan|table) echo "" ;;
    *) return 1 ;;
  esac
}
study_parts="mix3 mix4 work3 ft-small ft-default lora scale-1 scale-2 scale-3 scale-4"
for part in "$@"; do
  sections_of "$part" >/dev/null || { echo "unknown part '$part' (see $0 without arguments)" >&2; exit 2; }
done

if [ "$1" = plan ]; then  # the dry run of every study part: no GPU, no store
  for part in $study_parts; do
    echo "== $part: $(sections_of "$part")"
    "$b" run "$spec" --dry-run --only "$(sections_of "$part")" 2>&1 | sed -n '2,4p'
  done
  exit 0
fi

if [ ! -x "$b" ]; then  # a fresh machine: build first (the call's budget counts it)
  echo "building (log: build.log) ..."
  MIGSCOPE_JOBS=${MIGSCOPE_JOBS:-$(nproc)} ./build.sh build >"$out/build.log" 2>&1 ||
    { echo "build failed: tail of build.log:"; tail -n 20 "$out/build.log"; exit 1; }
  echo "built in $((SECONDS - t0)) s"
fi

runs_in() {  # STORE -> number of runs it holds (0 when missing or unreadable)
  if [ -f "$1" ]; then
    "$b" results list --db "$1" --format csv 2>/dev/null | awk 'END { print (NR > 0 ? NR - 1 : 0) }'
  else
    echo 0
  fi
}
for name in study.db reasons.db; do  # take the carried store when it holds more runs
  if [ "$(runs_in "$in/$name")" -gt "$(runs_in "$home/$name")" ]; then
    rm -f "$home/$name" "$home/$name-wal" "$home/$name-shm"
    cp "$in/$name" "$home/$name"
    [ -s "$in/$name-wal" ] && cp "$in/$name-wal" "$home/$name-wal"
    echo "$name: $(runs_in "$home/$name") runs from $in"
  else
    echo "$name: $(runs_in "$home/$name") runs (this machine's copy)"
  fi
done
last_id() {  # STORE -> its highest run id (0 when missing)
  if [ -f "$1" ]; then
    "$b" results list --db "$1" --format csv 2>/dev/null |
      awk -F, 'NR > 1 && $1 + 0 > m { m = $1 + 0 } END { print m + 0 }'
  else
    echo 0
  fi
}
first_study=$(last_id "$home/study.db")  # runs up to these ids were there before this call
first_reasons=$(last_id "$home/reasons.db")

left_s() { echo $((budget - (SECONDS - t0))); }

# export_csv STORE: every stored job with its run's fields (`migscope results export`).
export_csv() { [ -f "$1" ] && "$b" results export --db "$1" --format csv 2>/dev/null; }

# Labels of reasons.db runs that finished (LABEL, and LABEL+baseline when their baseline did too).
done_labels() {
  local csv
  csv=$(mktemp)
  export_csv "$home/reasons.db" >"$csv"
  python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
runs = {r['run_id']: r for r in rows}
bad = {r['parent_id'] for r in rows if r['role'] == 'baseline' and r['interrupted'] == 'true'}
based = {r['parent_id'] for r in rows if r['role'] == 'baseline' and r['interrupted'] != 'true'}
for i, r in runs.items():
    if r['role'] == 'run' and r['interrupted'] != 'true' and i not in bad:
        print(r['label'])
        if i in based:
            print(r['label'] + '+baseline')
PY
  rm -f "$csv"
}

# The seconds a run may take now (what the call has left, less 20 s for copying out); prints
# "NAME: not started" to stderr and fails when under a minute is left.
budget_for() {
  local left=$(($(left_s) - 20))
  if [ "$left" -lt 60 ]; then
    echo "$1: not started (${left} s left in this call)" >&2
    return 1
  fi
  echo "$left"
}

one_run() {  # LABEL, then `migscope run` arguments: one run into reasons.db unless stored already
  local label=$1 want=$1
  shift
  case " $* " in *" --baseline sequential "*) want="$label+baseline" ;; esac
  if done_labels | grep -qxF "$want"; then
    echo "  $label: stored already"
    return 0
  fi
  local left
  left=$(budget_for "  $label") || return 0
  local dir="reasons-$stamp-${label//[^A-Za-z0-9.-]/_}"
  made+=("$dir")
  local t=$SECONDS
  echo "== $label: migscope run $*" >>"$out/log.txt"
  timeout -k 20 -s TERM "$left" "$b" run "$@" --db "$home/reasons.db" --run-dir "$home/runs/$dir" \
    --label "$label" >"$home/runs/$dir.txt" 2>>"$out/log.txt"
  echo "  $label: exit $? in $((SECONDS - t)) s"
}

copies() { yes "$2" | head -n "$1" | paste -sd, -; }  # copies N JOB: N of JOB, comma-separated

run_part() {
  local part=$1 sections t=$SECONDS
  sections=$(sections_of "$part")
  if [ -n "$sections" ]; then
    local left
    left=$(budget_for "$part") || return 0
    local dir="$part-$stamp"
    made+=("$dir")
    echo "== $part: migscope run $spec --only $sections" >>"$out/log.txt"
    timeout -k 20 -s TERM "$left" "$b" run "$spec" --only "$sections" --db "$home/study.db" \
      --resume --marginal-probe "${MARGINAL_PROBE_S:-0}" --run-dir "$home/runs/$dir" \
      -o "$home/runs/$dir.txt" 2>>"$out/log.txt"
    local rc=$?
    echo "$part: exit $rc in $((SECONDS - t)) s$([ $rc -eq 124 ] || [ $rc -eq 130 ] &&
      echo ' (stopped for the call budget: --resume goes on from here)')"
    return 0
  fi
  echo "$part:"
  case "$part" in
    idle)
      made+=("idle-monitor-$stamp.csv" "idle-monitor-$stamp.json")
      "$b" monitor --duration 20 --hz 10 -o "$home/runs/idle-monitor-$stamp.csv" \
        --summary "$home/runs/idle-monitor-$stamp.json" 2>>"$out/log.txt"
      echo "  board as found, 20 s: exit $?"
      for r in $(seq 1 "${reps:-1}"); do
        one_run "idle light r$r" --backend sequential --jobs resnet18:32 --duration 15 --idle-probe 20
        one_run "idle heavy r$r" --backend sequential --jobs mlp --duration 15 --idle-probe 20
      done ;;
    clock)
      for r in $(seq 1 "${reps:-2}"); do
        one_run "clock mlp 1g r$r" --backend green --layout 1g.18gb --jobs mlp --duration 10 \
          --marginal-probe 0
        one_run "clock mlp 7x1g r$r" --backend green --layout 7x1g.18gb --jobs "$(copies 7 mlp)" \
          --duration 10 --marginal-probe 0
        one_run "clock mlp whole r$r" --backend sequential --jobs mlp --duration 10
      done ;;
    bandwidth)
      for r in $(seq 1 "${reps:-2}"); do
        one_run "bandwidth mlp:64 1g r$r" --backend green --layout 1g.18gb --jobs mlp:64 \
          --duration 10 --marginal-probe 0
        one_run "bandwidth mlp:64 7x1g r$r" --backend green --layout 7x1g.18gb \
          --jobs "$(copies 7 mlp:64)" --duration 10 --marginal-probe 0
      done
      one_run "bandwidth bert-base:4 1g r1" --backend green --layout 1g.18gb --jobs bert-base:4 \
        --duration 10 --marginal-probe 0
      one_run "bandwidth bert-base:4 7x1g r1" --backend green --layout 7x1g.18gb \
        --jobs "$(copies 7 bert-base:4)" --duration 10 --marginal-probe 0 ;;
    graphs)
      local mix=(--backend green --layout 3g.71gb+2g.35gb+1g.18gb+1g.18gb
                 --jobs resnet50:32,bert-base:4,resnet18:32,vit-b16:16 --duration 10
                 --baseline sequential --marginal-probe 0)
      for r in $(seq 1 "${reps:-2}"); do
        one_run "graphs graph r$r" "${mix[@]}"
        one_run "graphs eager r$r" "${mix[@]}" --no-cuda-graph
      done ;;
  esac
}

# table STORE FIRST TITLE: the runs after run id FIRST, one line per run, then one per job.
table() {
  [ -f "$1" ] || return 0
  echo "## $3 ($1, runs after id $2)"
  local csv
  csv=$(mktemp)
  export_csv "$1" >"$csv"
  python3 - "$csv" "$2" <<'PY'
import csv, sys
first = int(sys.argv[2])
rows = [r for r in csv.DictReader(open(sys.argv[1])) if int(r['run_id']) > first]

def num(v, scale=1.0, fmt='{:.0f}'):
    try:
        return fmt.format(float(v) / scale)
    except ValueError:
        return '-'

runs = {}
for r in rows:
    runs.setdefault(r['run_id'], r)
print('run  role      label                              layout                            '
      'window  energy  avg W  SM MHz  idle W (state) / deep  norm.tput')
for i, r in runs.items():
    role = r['role'] if r['role'] == 'run' else 'base ' + r['parent_id']
    layout = r['layout'] or r['backend']
    print(f"{i:>3}  {role:<8}  {r['label'][:33]:<33}  {layout[:32]:<32}  "
          f"{num(r['window_s'], fmt='{:.1f}'):>6}  {num(r['counter_energy_j'], 1000, '{:.2f}'):>5}kJ  "
          f"{num(r['average_power_w']):>5}  {num(r['run_sm_clock_mhz']):>6}  "
          f"{num(r['idle_power_w'])} ({r['idle_state'] or '-'}) / {num(r['deep_idle_power_w'])}  "
          f"{num(r['aggregate_normalised_throughput'], fmt='{:.2f}'):>5}"
          + ('  INTERRUPTED' if r['interrupted'] == 'true' else ''))
print()
print('run  job                    partition  SMs  status  items/s     step p50 ms  J/item   SM MHz  steps')
for r in rows:
    print(f"{r['run_id']:>3}  {r['name'][:21]:<21}  {r['partition'][:9]:<9}  {r['sms'] or '-':>3}  "
          f"{r['status']:<6}  {num(r['items_per_s'], fmt='{:.4g}'):>10}  "
          f"{num(r['step_time_p50_s'], 0.001, '{:.2f}'):>11}  {num(r['energy_per_item_j'], fmt='{:.4g}'):>7}  "
          f"{num(r['sm_clock_mhz']):>6}  {r['step_mode']}")
PY
  rm -f "$csv"
}

if [ "$1" = table ]; then  # the stores' tables, all runs (nothing runs)
  for name in study.db reasons.db; do table "$home/$name" 0 "$name"; done
  exit 0
fi

for part in "$@"; do
  run_part "$part"
done

{
  for f in "${made[@]}"; do
    case "$f" in *.csv|*.json) ;; *) [ -f "$home/runs/$f.txt" ] && { echo "## $f"; cat "$home/runs/$f.txt"; } ;; esac
  done
  table "$home/study.db" "$first_study" "study: this call's runs"
  table "$home/reasons.db" "$first_reasons" "reasons: this call's runs"
} >"$out/summary.txt" 2>&1
for name in study.db reasons.db; do
  [ -f "$home/$name" ] || continue
  cp "$home/$name" "$out/$name"
  if [ -s "$home/$name-wal" ]; then  # a killed writer: the WAL holds its last commits
    # (readers leave an empty one behind, which holds nothing)
    cp "$home/$name-wal" "$out/$name-wal"
    echo "warning: $name-wal was left beside $name: both copied (copy both into data/study-h200/)"
  fi
done
dirs=()
for f in "${made[@]}"; do
  for p in "$f" "$f.txt"; do [ -e "$home/runs/$p" ] && dirs+=("$p"); done
done
if [ ${#dirs[@]} -gt 0 ]; then
  tar -C "$home/runs" -czf "$out/runs.tar.gz" "${dirs[@]}"
  if [ "$(stat -c %s "$out/runs.tar.gz")" -gt 15000000 ]; then
    rm -f "$out/runs.tar.gz"
    echo "runs.tar.gz over 15 MB: left on the machine in $home/runs"
  fi
fi
cat "$out/summary.txt"
echo "this call: $((SECONDS - t0)) s; stores: study.db $(runs_in "$home/study.db") runs," \
  "reasons.db $(runs_in "$home/reasons.db") runs"
