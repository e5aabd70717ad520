#!/usr/bin/env bash
# `cmake --install` makes a relocatable install: install the CLI, data and docs to a temporary
# prefix, move the prefix, and plan from the shipped H200 profiles and the model's residuals, which
# must be read from the moved prefix's share/migscope (not the source tree); every shipped data
# file is there; the study's store lists its runs; bash and zsh completion and the man page are
# where bash-completion, zsh and man look under the prefix; `--strip` (docs/install.md) strips the
# binary.
# Usage: install_test.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/first" --component migscope --strip >/dev/null
mv "$tmp/first" "$tmp/moved"
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
for f in bin/migscope share/migscope/study-h200.db share/doc/migscope/README.md \
         share/doc/migscope/docs/reports.md share/bash-completion/completions/migscope \
         share/zsh/site-functions/_migscope share/man/man1/migscope.1; do
  [ -e "$tmp/moved/$f" ] || { echo "FAIL: $f not installed" >&2; exit 1; }
done
for f in "$source_dir"/data/*.json; do
  [ -e "$tmp/moved/share/migscope/$(basename "$f")" ] ||
    { echo "FAIL: data/$(basename "$f") not installed" >&2; exit 1; }
done
# The installed completion and man page are the build's, made from this binary's CLI.
grep -q "complete -F _migscope migscope" "$tmp/moved/share/bash-completion/completions/migscope" ||
  { echo "FAIL: the installed bash completion registers no _migscope" >&2; exit 1; }
head -1 "$tmp/moved/share/zsh/site-functions/_migscope" | grep -qx "#compdef migscope" ||
  { echo "FAIL: the installed zsh completion does not start with #compdef migscope" >&2; exit 1; }
grep -q '^\.SS "plan"' "$tmp/moved/share/man/man1/migscope.1" ||
  { echo "FAIL: the installed man page has no section for plan" >&2; exit 1; }
# --strip strips: the installed binary has no symbol table, the build's has one.
if command -v readelf >/dev/null; then
  if readelf -S "$tmp/moved/bin/migscope" | grep -q '\.symtab'; then
    echo "FAIL: cmake --install --strip left bin/migscope's symbol table" >&2; exit 1
  fi
  readelf -S "$build/tools/migscope/migscope" | grep -q '\.symtab' ||
    { echo "FAIL: the build's migscope has no symbol table: the strip check proves nothing" >&2; exit 1; }
else
  echo "skip: no readelf (binutils): the strip was not checked"
fi
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
echo "ok: installed (stripped), moved and planned from $tmp/moved/share/migscope"
