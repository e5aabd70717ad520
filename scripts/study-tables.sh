#!/usr/bin/env bash
# Draws the study's tables from the stores in data/study-h200/ (any machine with a built
# migscope): `migscope report --format markdown` of study.db and reasons.db into study.md and
# reasons.md beside them, and the layouts table of study.md into docs/results-h200.md between
# its "study-layouts" markers, so the page quotes the store rather than typed numbers:
#   scripts/study-tables.sh            (MIGSCOPE=path/to/migscope to use another build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
b=${MIGSCOPE:-${MIGSCOPE_BUILD_DIR:-$root/build}/tools/migscope/migscope}
[ -x "$b" ] || { echo "no migscope at $b: build first (./build.sh build)" >&2; exit 2; }
for store in study reasons; do
  "$b" report "data/study-h200/$store.db" --format markdown -o "data/study-h200/$store.md" >/dev/null
done
python3 - data/study-h200/study.md docs/results-h200.md <<'PY'
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
echo "drew data/study-h200/study.md, reasons.md and the layouts table of docs/results-h200.md"
