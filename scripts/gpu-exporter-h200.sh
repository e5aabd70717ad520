#!/usr/bin/env bash
# Issue 20 item 6 on the H200 (docs/exporter.md): `migscope exporter` beside training processes
# sharing the GPU through time-slicing and MPS, scraped every second; after `./build.sh build`.
# Writes under $OUT: exporter.err, ex.db (the runs), timeslice/mps tables, scrapes.tar.gz (every
# scrape and each run's result.json) and exporter-cpu.txt (its CPU seconds over the runs).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$PWD/gpu-exporter-out}
b=${MIGSCOPE:-${MIGSCOPE_BUILD_DIR:-$root/build}/tools/migscope/migscope}
duration=${DURATION:-60}
mkdir -p "$out/scrapes"
"$b" exporter --listen 127.0.0.1:9401 --interval-s 1 2>"$out/exporter.err" &
exporter=$!
sleep "${IDLE_S:-20}"  # the idle board, from which the exporter learns its idle power
python3 - "$out/scrapes" <<'PY' &
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
"$b" run --backend timeslice --jobs resnet50:32,bert-base:4 --duration "$duration" \
  --db "$out/ex.db" --run-dir "$out/timeslice" >"$out/timeslice.txt" 2>"$out/timeslice.log"
echo "timeslice: exit $?"
"$b" run --backend mps --layout 3g.71gb+2g.35gb+1g.18gb --jobs resnet50:32,bert-base:4,resnet18:32 \
  --duration "$duration" --db "$out/ex.db" --run-dir "$out/mps" >"$out/mps.txt" 2>"$out/mps.log"
echo "mps: exit $?"
ticks=$(getconf CLK_TCK)
awk -v t="$ticks" '{printf "exporter CPU: user %.2f s, system %.2f s\n", $14/t, $15/t}' \
  "/proc/$exporter/stat" | tee "$out/exporter-cpu.txt"
kill -INT "$exporter"; wait "$exporter"; echo "exporter: exit $?"
wait "$scraper"
(cd "$out" && tar czf scrapes.tar.gz scrapes timeslice/result.json mps/result.json && rm -rf scrapes)
echo "scrapes: $(tar tzf "$out/scrapes.tar.gz" | grep -c prom)"
head -n 5 "$out/exporter.err"
