#!/usr/bin/env bash
# Draws the study's tables from the stores in data/study-h200/ (any machine with a built
# migscope): `migscope report --format markdown` of study.db and reasons.db into study.md and
# reasons.md beside them, and the layouts and scaling tables of study.md into
# docs/results-h200.md between its "study-layouts" and "study-scaling" markers, so the page
# quotes the store rather than typed numbers.
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
doc = open(page).read()
# Each section of study.md goes between its markers in the page (a marker pair the page lacks is
# skipped): the layouts table, and the scaling table of each job alone on each size.
for name, heading in (('study-layouts', '## Layouts against the same jobs one after another'),
                      ('study-scaling', '## Each job alone on each partition size')):
    begin_mark, end_mark = f'<!-- {name}: begin', f'<!-- {name}: end -->'
    if begin_mark not in doc:
        continue
    start = text.index(heading)
    end = text.find('\n## ', start + 3)
    table = text[start:end if end >= 0 else len(text)].split('\n', 1)[1].strip('\n')
    head, rest = doc.split(begin_mark, 1)
    marker_line, rest = rest.split('\n', 1)
    _, tail = rest.split(end_mark, 1)
    doc = head + begin_mark + marker_line + '\n' + table + '\n' + end_mark + tail
open(page, 'w').write(doc)
PY
if ! $check; then
  echo "drew data/study-h200/study.md, reasons.md and the tables of docs/results-h200.md"
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
