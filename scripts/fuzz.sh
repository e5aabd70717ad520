#!/usr/bin/env bash
# Runs migscope's libFuzzer targets (fuzz/, built by `./build.sh fuzz` or `./build.sh test`) on
# seed corpora made from examples/, data/ and the docs. Fails on any crash, leak, hang, sanitizer
# report or error that is not an input error (exit 2). docs/fuzzing.md says more.
#   scripts/fuzz.sh BUILD_DIR [--seconds S | --runs N] [TARGET...]
# Default: 5 seconds per target, every target (spec mig_parted layout jobs stream profiles
# model_error plan_file k8s_base_config worker_protocol store exporter exporter_http). Each target
# keeps its corpus in BUILD_DIR/fuzz-corpus/TARGET and what failed in BUILD_DIR/fuzz-artifacts/.
# MIGSCOPE (build.sh passes its main build's; else BUILD_DIR's, else build/'s) writes some seeds:
# a generated trace and plan files; without one those seeds are left out, said on stderr.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:?usage: scripts/fuzz.sh BUILD_DIR [--seconds S | --runs N] [TARGET...]}
shift
limit=(-max_total_time=5)
case "${1:-}" in
  --seconds) limit=(-max_total_time="$2"); shift 2 ;;
  --runs) limit=(-runs="$2"); shift 2 ;;
esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(spec mig_parted layout jobs stream profiles model_error plan_file
                                    k8s_base_config worker_protocol store exporter exporter_http)
migscope=${MIGSCOPE:-}
[ -x "$migscope" ] || migscope=$build_dir/tools/migscope/migscope
[ -x "$migscope" ] || migscope=$root/build/tools/migscope/migscope
[ -x "$migscope" ] || { migscope=; echo "fuzz.sh: no migscope built: the seeds it writes are left out" >&2; }

corpus_root="$build_dir/fuzz-corpus"
artifacts="$build_dir/fuzz-artifacts"
mkdir -p "$artifacts"

# Fenced blocks of one language (```toml ... ```) from the docs and the README, one file each.
doc_blocks() {  # doc_blocks LANGUAGE DIR
  local language=$1 dir=$2
  awk -v lang="$language" -v dir="$dir" '
    /^ *```/ { if (inside) { inside = 0; close(file) } else if ($0 ~ "```" lang "$") {
                 inside = 1; n++; file = dir "/doc-" lang "-" n } ; next }
    inside { sub(/^   /, ""); print > file }' "$root"/README.md "$root"/docs/*.md
}

seed() {  # seed TARGET: fills the target's corpus folder with its seeds (kept across runs)
  local target=$1 dir="$corpus_root/$1"
  mkdir -p "$dir"
  case "$target" in
    spec)
      cp "$root"/examples/*.toml "$dir/"
      doc_blocks toml "$dir" ;;
    mig_parted)
      cp "$root"/examples/*.yaml "$dir/" ;;
    layout)
      # Every layout the README and docs show ("3g.71gb+2g.35gb+1g.18gb", "2x1g.18gb@0").
      { grep -ohE '[0-9x]*[0-9]g(\.[0-9]+gb)?(\+[0-9me.@x]*[0-9]g(\.[0-9]+gb)?(\+me)?(@[0-9])?)*' \
        "$root"/README.md "$root"/docs/*.md "$root"/examples/*.toml || true; } | sort -u |
        awk -v dir="$dir" '{ print > (dir "/doc-layout-" NR) }' ;;
    jobs)
      doc_blocks json "$dir"
      echo "resnet18,bert-base:finetune:16,gpt2-xl:finetune:4" > "$dir/job-list" ;;
    stream)
      # The readers' fixtures (sacct, kubectl), a generated trace and the docs' JSON blocks.
      cp "$root"/tests/stream/*.txt "$root"/tests/stream/*.json "$dir/"
      [ -z "$migscope" ] || "$migscope" stream trace --generate --count 20 --duration-median-s 600 \
        --deadline-slack 2 -o "$dir/generated.json" 2>/dev/null || true
      echo "resnet50=2,bert-base:finetune=1,gpt2-xl:finetune" > "$dir/mix"
      doc_blocks json "$dir" ;;
    profiles)
      cp "$root"/data/profiles-h200.json "$dir/"
      doc_blocks json "$dir" ;;
    model_error)
      # The shipped start delay, and the shipped residuals cut to their first few (the whole file
      # is 370 KB: libFuzzer's inputs would grow to its size).
      cp "$root"/data/start-delay-h200.json "$dir/"
      python3 - "$root/data/model-error-h200.json" "$dir/model-error-h200-cut.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["sources"], doc["residuals"] = doc["sources"][:2], doc["residuals"][:6]
json.dump(doc, open(sys.argv[2], "w"), indent=1)
PY
      ;;
    plan_file)
      # Plan files as `migscope plan --format json` writes them: one GPU with intervals, two GPUs
      # without.
      if [ -n "$migscope" ]; then
        "$migscope" plan --jobs resnet18:32,bert-base:4 --work 200 --backend green --top 2 \
          --format json -o "$dir/plan-one-gpu.json" 2>/dev/null || true
        "$migscope" plan --jobs resnet18:32,bert-base:4,resnet50:32,vit-b16:16 --work 200 \
          --backend mig --gpus 2 --top 1 --model-error none --format json \
          -o "$dir/plan-two-gpus.json" 2>/dev/null || true
      fi ;;
    k8s_base_config)
      # A bare mig-parted document and the same in a ConfigMap, as the GPU Operator keeps it.
      cp "$root"/examples/mig-parted-h200.yaml "$dir/"
      { printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: custom-mig-config\n'
        printf '  namespace: gpu-operator\ndata:\n  config.yaml: |\n'
        sed 's/^/    /' "$root"/examples/mig-parted-h200.yaml; } > "$dir/configmap.yaml" ;;
    worker_protocol)
      doc_blocks json "$dir"
      # Event lines as the protocol document shows them inline (`{"event": ...}`).
      { grep -ohE '\{"(event|device|jobs)"[^`]*\}' "$root"/docs/worker-protocol.md || true; } |
        awk -v dir="$dir" '{ print > (dir "/doc-line-" NR) }' ;;
    store)
      # A small store: the study's store with two runs left, in 512-byte pages.
      python3 - "$root/data/study-h200/study.db" "$dir/small.db" <<'PY'
import shutil, sqlite3, sys
shutil.copy(sys.argv[1], sys.argv[2])
db = sqlite3.connect(sys.argv[2])
db.execute("PRAGMA journal_mode = DELETE")
keep = "(SELECT id FROM runs ORDER BY id LIMIT 2)"
db.execute(f"DELETE FROM power_samples WHERE run_id NOT IN {keep} OR position >= 3")
db.execute(f"DELETE FROM jobs WHERE run_id NOT IN {keep}")
db.execute(f"DELETE FROM runs WHERE id NOT IN {keep}")
db.commit()
db.execute("PRAGMA page_size = 512")
db.execute("VACUUM")
db.close()
PY
      ;;
    exporter)
      # /proc/PID/cgroup texts as tests/exporter/kubernetes_test.cpp has them: cgroup v2 with the
      # systemd driver (containerd, CRI-O), v1 with cgroupfs, Docker, a pod's own cgroup, and
      # processes outside Kubernetes (a user session, a Docker container on a plain host).
      local uid=1f0c2d3e-4a5b-6c7d-8e9f-a0b1c2d3e4f5
      local id=3b2e6f9a0c1d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789ab
      local slice=kubepods-burstable-pod${uid//-/_}.slice
      printf '0::/kubepods.slice/kubepods-burstable.slice/%s/cri-containerd-%s.scope\n' \
        "$slice" "$id" > "$dir/cgroup-v2-systemd-containerd"
      printf '0::/kubepods.slice/kubepods-pod%s.slice/crio-%s.scope\n' "${uid//-/_}" "$id" \
        > "$dir/cgroup-v2-systemd-crio"
      printf '0::/kubepods/pod%s/docker-%s.scope\n' "$uid" "$id" > "$dir/cgroup-v2-docker"
      printf '12:pids:/user.slice\n11:memory:/kubepods/besteffort/pod%s/%s\n1:name=systemd:/kubepods/besteffort/pod%s/%s\n' \
        "$uid" "$id" "$uid" "$id" > "$dir/cgroup-v1-cgroupfs"
      printf '0::/kubepods/pod%s\n' "$uid" > "$dir/cgroup-pod-only"
      printf '0::/user.slice/user-1000.slice/session-3.scope\n' > "$dir/cgroup-user-session"
      printf '0::/system.slice/docker-%s.scope\n' "$id" > "$dir/cgroup-docker-no-pod"
      # Process names: one the kernel cut inside a UTF-8 character (comm keeps 15 bytes), and one
      # that tries to break the exposition.
      printf 'python-\xe8\xae\xad\xe7' > "$dir/comm-cut-utf8"
      printf 'evil"}\n# TYPE x gauge\\' > "$dir/comm-escapes"
      # Options an operator types: --listen addresses and a tenant query's LABEL=VALUE.
      printf '[::1]:9401' > "$dir/listen-ipv6"
      printf ':9401' > "$dir/listen-any"
      printf 'slurm_job_id=123' > "$dir/match" ;;
    exporter_http)
      # Requests as Prometheus, the kubelet's probe and curl send them, and the hostile ones of
      # tests/tools/exporter_hostile_test.py: pipelined keep-alive, HEAD, bodies within and over
      # the limit, chunked, Expect: 100-continue, a folded header, an absolute and an escaped URL.
      printf 'GET /metrics HTTP/1.1\r\nHost: 10.0.0.7:9401\r\nUser-Agent: Prometheus/2.42.0\r\nAccept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\nAccept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n' \
        > "$dir/prometheus-scrape"
      printf 'GET /metrics HTTP/1.1\r\nHost: 10.0.0.7:9401\r\nUser-Agent: kube-probe/1.29\r\nAccept: */*\r\nConnection: close\r\n\r\n' \
        > "$dir/kubelet-probe"
      printf 'GET /metrics HTTP/1.1\r\nHost: a\r\n\r\nHEAD /metrics HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\nGET /x HTTP/1.0\r\n\r\n' \
        > "$dir/pipelined"
      printf 'GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloDELETE /metrics HTTP/1.1\r\nHost: a\r\n\r\n' \
        > "$dir/small-body-then-delete"
      printf 'POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 100000000\r\n\r\nxxxxxxxx' > "$dir/big-body"
      printf 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n' \
        > "$dir/chunked"
      printf 'PUT /metrics HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n' \
        > "$dir/expect-continue"
      printf 'GET /metrics HTTP/1.1\r\nHost: a\r\nX-Folded: one\r\n two\r\n\r\n' > "$dir/folded-header"
      printf 'GET http://a:9401/metrics?name[]=x HTTP/1.1\r\nHost: a\r\n\r\n' > "$dir/absolute-url"
      printf 'GET /%%6detrics?a=%%zz&b HTTP/1.1\r\nHost: a\r\n\r\n' > "$dir/escaped-url"
      printf 'GET /metrics HTTP/1.1\r\nHost: a\r\nX-Slow: ' > "$dir/slow-head" ;;
    *) echo "fuzz.sh: unknown target '$target'" >&2; exit 2 ;;
  esac
}

failed=0
for target in "${targets[@]}"; do
  binary="$build_dir/fuzz/fuzz_$target"
  [ -x "$binary" ] || { echo "fuzz.sh: $binary is not built (./build.sh fuzz builds it)" >&2; exit 2; }
  seed "$target"
  log="$artifacts/$target.log"
  echo "fuzz.sh: $target (${limit[*]})" >&2
  # -timeout: an input that takes 10 s is a hang; -rss_limit_mb: so is one that takes 2 GB.
  if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     "$binary" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$artifacts/$target-" "$corpus_root/$target" >"$log" 2>&1; then
    sed -n "s/^Done \([0-9]*\) runs in \([0-9]*\) second.*/  $target: \1 inputs in \2 s, no failure/p" "$log" >&2
  else
    echo "fuzz.sh: $target FAILED; the end of $log:" >&2
    tail -n 30 "$log" >&2
    failed=1
  fi
done
exit "$failed"
