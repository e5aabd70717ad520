#!/usr/bin/env bash
# `cmake --install` makes a relocatable install: install the CLI, data and docs to a temporary
# prefix, move the prefix, and plan from the shipped H200 profiles and the model's residuals, which
# must be read from the moved prefix's share/migscope (not the source tree); every shipped data
# file is there; the study's store lists its runs.
# Usage: install_test.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/first" --component migscope >/dev/null
mv "$tmp/first" "$tmp/moved"
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
for f in bin/migscope share/migscope/study-h200.db share/doc/migscope/README.md \
         share/doc/migscope/docs/reports.md; do
  [ -e "$tmp/moved/$f" ] || { echo "FAIL: $f not installed" >&2; exit 1; }
done
for f in "$source_dir"/data/*.json; do
  [ -e "$tmp/moved/share/migscope/$(basename "$f")" ] ||
    { echo "FAIL: data/$(basename "$f") not installed" >&2; exit 1; }
done
out=$(env -u MIGSCOPE_DATA_DIR "$tmp/moved/bin/migscope" plan --jobs resnet18:32,resnet50:32 \
      --objective energy --format json)
# The plan names the profile file it read: the moved prefix's.
grep -q "\"$tmp/moved/share/migscope/profiles-h200.json\"" <<<"$out" ||
  { echo "FAIL: the plan did not read the moved install's profiles:" >&2; echo "$out" | head -20 >&2; exit 1; }
grep -q "\"model_error\": \"$tmp/moved/share/migscope/model-error-h200.json\"" <<<"$out" ||
  { echo "FAIL: the plan did not read the moved install's residuals" >&2; exit 1; }
# The study's store is installed whole: the moved install lists its runs.
runs=$("$tmp/moved/bin/migscope" results list --db "$tmp/moved/share/migscope/study-h200.db" \
       --format csv | wc -l)
[ "$runs" -gt 100 ] || { echo "FAIL: the installed study store lists $runs lines" >&2; exit 1; }
echo "ok: installed, moved and planned from $tmp/moved/share/migscope"
