#!/usr/bin/env bash
# Draws the study's tables from the stores in data/study-h200/ (any machine with a built
# migscope): `migscope report --format markdown` of study.db and reasons.db into study.md and
# reasons.md beside them, and the layouts table of study.md into docs/results-h200.md between
# its "study-layouts" markers, so the page quotes the store rather than typed numbers.
#   scripts/study-tables.sh           draw them
#   scripts/study-tables.sh --check   exit 1, naming the file, when a committed one differs from
#                                     what the stores give now (the line naming the drawing
#                                     build aside); a CPU test runs this
# MIGSCOPE=path/to/migscope picks the binary (default: the build's).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
b=${MIGSCOPE:-${MIGSCOPE_BUILD_DIR:-$root/build}/tools/migscope/migscope}
[ -x "$b" ] || { echo "no migscope at $b: build first (./build.sh build)" >&2; exit 2; }
check=false
[ "${1:-}" = --check ] && check=true
out=$root
if $check; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  mkdir -p "$out/data/study-h200" "$out/docs"
  cp docs/results-h200.md "$out/docs/"
fi
for store in study reasons; do
  "$b" report "data/study-h200/$store.db" --format markdown -o "$out/data/study-h200/$store.md" \
    >/dev/null 2>&1
done
python3 - "$out/data/study-h200/study.md" "$out/docs/results-h200.md" <<'PY'
import sys
md, page = sys.argv[1], sys.argv[2]
text = open(md).read()
start = text.index('## Layouts against the same jobs one after another')
end = text.index('\n## ', start + 3)
table = text[start:end].split('\n', 1)[1].strip('\n')  # without its heading
begin_mark, end_mark = '<!-- study-layouts: begin', '<!-- study-layouts: end -->'
doc = open(page).read()
head, rest = doc.split(begin_mark, 1)
marker_line, rest = rest.split('\n', 1)
_, tail = rest.split(end_mark, 1)
open(page, 'w').write(head + begin_mark + marker_line + '\n' + table + '\n' + end_mark + tail)
PY
if ! $check; then
  echo "drew data/study-h200/study.md, reasons.md and the layouts table of docs/results-h200.md"
  exit 0
fi
stale=0
for f in data/study-h200/study.md data/study-h200/reasons.md docs/results-h200.md; do
  # The .md files' first line names the build that drew them.
  if ! diff <(sed '1{/^\*Drawn by /d}' "$f") <(sed '1{/^\*Drawn by /d}' "$out/$f") >/dev/null; then
    echo "$f is not what the stores in data/study-h200/ give now: run scripts/study-tables.sh" >&2
    stale=1
  fi
done
exit $stale
