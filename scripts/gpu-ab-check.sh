#!/usr/bin/env bash
# GPU-host A/B check of a change that must not change the numbers (run through the device tool):
# this tree (B) against a reference tree (A: REF_TREE, e.g. `git archive COMMIT | tar -x -C DIR`),
# each built beside the other, measured alternately A, B, A, B in one sitting.
#   scripts/gpu-ab-check.sh build     both builds (offline bundle), then B's GPU tests
#   scripts/gpu-ab-check.sh measure   per tree and repetition: `migscope-worker train` of
#                                     resnet18:32, resnet50:32 and gpt2-medium:8 (30 steps after 5
#                                     warm-up), `migscope run examples/quickstart.toml` (green
#                                     3g+1g against one after another) and `migscope profile` of
#                                     resnet18:32 on the whole GPU and the smallest 1g size
# Builds go to $HOME/ab-{a,b}-build (a warm machine keeps them between calls); logs and JSON under
# $OUT (default ./gpu-ab-out); a table is printed last and kept in $OUT/ab-table.txt. measure packs
# what the table was made from (logs, stores, run directories) into $OUT/ab-measured.tar.gz: the
# device tool brings back only so many files of a call, and once left out the stores were lost.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:?usage: $0 build|measure}
ref=${REF_TREE:?REF_TREE: the reference tree}
ref=$(cd "$ref" && pwd)
out=${OUT:-$PWD/gpu-ab-out}
reps=${AB_REPS:-2}
mkdir -p "$out"
declare -A tree=([a]="$ref" [b]="$root")
build_of() { echo "$HOME/ab-$1-build"; }

if [ "$what" = build ]; then
  for side in a b; do
    (cd "${tree[$side]}" && MIGSCOPE_BUNDLE_DIR="$root/deps/bundle" MIGSCOPE_JOBS=8 \
       MIGSCOPE_BUILD_DIR="$(build_of $side)" ./build.sh build >"$out/build-$side.log" 2>&1;
     echo "build $side: exit $?" >>"$out/builds.txt") &
  done
  wait
  cat "$out/builds.txt"
  (cd "$(build_of b)" && ctest -L gpu --output-on-failure -j 4) >"$out/ctest-gpu-b.log" 2>&1
  tail -3 "$out/ctest-gpu-b.log"
  exit 0
fi

for rep in $(seq 1 "$reps"); do
  for side in a b; do
    b=$(build_of $side)
    worker="$b/tools/migscope-worker/migscope-worker"
    for job in resnet18:32 resnet50:32 gpt2-medium:8; do
      "$worker" train --model "${job%%:*}" --batch "${job##*:}" --device cuda --warmup-steps 5 \
        --steps 30 >"$out/train-$side-$rep-${job%%:*}.jsonl" 2>/dev/null
    done
    (cd "${tree[$side]}" && "$b/tools/migscope/migscope" run examples/quickstart.toml \
       --db "$out/quickstart-$side-$rep.db" --run-dir "$out/runs/quickstart-$side-$rep") \
      >"$out/quickstart-$side-$rep.txt" 2>&1
    "$b/tools/migscope/migscope" profile --jobs resnet18:32 --sizes 1g --duration 4 \
      --db "$out/profile-$side-$rep.db" --run-dir "$out/runs/profile-$side-$rep" \
      >"$out/profile-$side-$rep.txt" 2>&1
  done
done

python3 - "$out" "$reps" <<'PY' | tee "$out/ab-table.txt"
import glob, json, sqlite3, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
def result(path):
    for line in open(path):
        e = json.loads(line)
        if e.get("event") == "result":
            return e
    return None
print(f"{'measure':<34}" + "".join(f"{s + str(r):>12}" for r in range(1, reps + 1) for s in "AB"))
rows = {}
for job in ["resnet18", "resnet50", "gpt2-medium"]:
    for key, scale, unit in [("step_time_p50_s", 1e3, "ms p50"), ("items_per_s", 1, "items/s")]:
        cells = []
        for r in range(1, reps + 1):
            for s in "ab":
                e = result(f"{out}/train-{s}-{r}-{job}.jsonl")
                cells.append(f"{e[key] * scale:.1f}" if e and e.get(key) is not None else "-")
        print(f"{'train ' + job + ' ' + unit:<34}" + "".join(f"{c:>12}" for c in cells))
def stored(db, sql):
    try:
        return sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute(sql).fetchall()
    except Exception:
        return []
for label, sql in [
        ("quickstart energy J (run)", "select counter_energy_j from runs where role='run'"),
        ("quickstart energy J (baseline)", "select counter_energy_j from runs where role='baseline'"),
        ("quickstart window s (baseline)", "select window_s from runs where role='baseline'"),
        ("quickstart resnet18 img/s (run)",
         "select j.items_per_s from jobs j join runs r on r.id=j.run_id where r.role='run' and j.position=0"),
        ("quickstart bert-base:4 tokens/s (run)",
         "select j.items_per_s from jobs j join runs r on r.id=j.run_id where r.role='run' and j.position=1")]:
    cells = []
    for r in range(1, reps + 1):
        for s in "ab":
            v = stored(f"{out}/quickstart-{s}-{r}.db", sql)
            cells.append(f"{v[0][0]:.1f}" if v and v[0][0] is not None else "-")
    print(f"{label:<34}" + "".join(f"{c:>12}" for c in cells))
for label, where in [("profile resnet18 img/s whole", "r.backend='sequential'"),
                     ("profile resnet18 img/s 1g", "r.backend='green'"),
                     ("profile idle W", None)]:
    cells = []
    for r in range(1, reps + 1):
        for s in "ab":
            sql = ("select avg(idle_power_w) from runs" if where is None else
                   f"select j.items_per_s from jobs j join runs r on r.id=j.run_id where {where}")
            v = stored(f"{out}/profile-{s}-{r}.db", sql)
            cells.append(f"{v[0][0]:.1f}" if v and v[0][0] is not None else "-")
    print(f"{label:<34}" + "".join(f"{c:>12}" for c in cells))
PY

(cd "$out" && tar czf ab-measured.tar.gz --remove-files train-*.jsonl quickstart-* profile-* runs) ||
  echo "gpu-ab-check: could not pack the measured files; they stay in $out" >&2
