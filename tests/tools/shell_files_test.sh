#!/usr/bin/env bash
# The build's bash and zsh completion and man page (`migscope generate`): bash parses the script and
# its function completes commands, subcommands, options and their values; zsh parses its file,
# defines a function per command and completes in an interactive zsh (skipped without zsh); groff
# renders the man page without a warning and it names every command.
# Usage: shell_files_test.sh MIGSCOPE_BINARY GENERATED_SHARE_DIR
set -euo pipefail
migscope=$1
share=$2
bash_file=$share/bash-completion/completions/migscope
zsh_file=$share/zsh/site-functions/_migscope
man_file=$share/man/man1/migscope.1
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for f in "$bash_file" "$zsh_file" "$man_file"; do
  [ -s "$f" ] || { echo "FAIL: $f was not generated" >&2; exit 1; }
done
# What the build installs is what the binary prints now.
cmp -s "$bash_file" <("$migscope" generate bash-completion) ||
  fail "$bash_file differs from \`migscope generate bash-completion\`"

# The commands `migscope --help` lists (CLI11's "Subcommands:" block).
commands=$("$migscope" --help | sed -n '/^Subcommands:/,$p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
[ "$(wc -w <<<"$commands")" -ge 8 ] || fail "read only these commands from --help: $commands"

# ---- bash ----
bash -n "$bash_file" || fail "bash -n rejects $bash_file"
# complete WORD...: what the completion function offers for the last word (one a line, sorted).
complete_line() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _migscope
           printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$bash_file" "$@"
}
expect() {  # expect WANTED WORD...: the completion of WORD... is exactly WANTED (lines)
  local wanted=$1 got
  shift
  got=$(complete_line "$@")
  [ "$got" = "$wanted" ] || fail "completing '$*' gave '$(tr '\n' ' ' <<<"$got")', not '$(tr '\n' ' ' <<<"$wanted")'"
}
expect_has() {  # expect_has WANTED WORD...: the completion of WORD... includes the line WANTED
  local wanted=$1
  shift
  grep -qxF -- "$wanted" <<<"$(complete_line "$@")" ||
    fail "completing '$*' does not offer '$wanted': $(complete_line "$@" | tr '\n' ' ')"
}
# The objectives `plan --help` shows ("--objective TEXT:{energy,throughput,…}=energy"), sorted.
objectives=$("$migscope" plan --help | sed -n 's/^ *--objective TEXT:{\([^}]*\)}.*/\1/p' | tr , '\n' |
             sort)
grep -qx energy <<<"$objectives" || fail "plan --help shows no objectives: $objectives"
expect plan migscope pl
expect --objective migscope plan --obj
expect "$objectives" migscope plan --objective ""
expect "$objectives" migscope plan --objective = ""                      # --objective=<TAB>
expect --objective=energy migscope plan --objective=en                   # '=' not a word break
expect list migscope results li                                          # a sub-subcommand
expect "$(printf 'csv\njson\ntable')" migscope results list --format ""
expect --format migscope results list --db store.db --for                # past an option's value
expect gpus migscope g                                                   # `generate` stays hidden
expect "" migscope plan --nosuch
expect "" migscope run --label ""                                        # free text: nothing
for command in $commands; do
  expect_has "$command" migscope ""
  expect_has --help migscope "$command" --
done
touch "$tmp/results-for-completion.db"
expect "$tmp/results-for-completion.db" migscope run --db "$tmp/results-for-"  # a PATH option
expect_has "$tmp/results-for-completion.db" migscope run "$tmp/results-for-"   # run's spec file
expect_has bash migscope monitor -- bas                                   # a command after --
[ "$(complete_line migscope monitor -- bash | grep -cx bash)" = 1 ] || fail "bash offered twice after --"
expect_has "$tmp/results-for-completion.db" migscope monitor -- ls "$tmp/results-for-"
# The function walks the words: a word that is no subcommand leaves the path where it was.
expect --objective migscope nosuch plan --obj

# ---- zsh ----
if command -v zsh >/dev/null; then
  zsh -n "$zsh_file" || fail "zsh -n rejects $zsh_file"
  # Sourced after compinit, it defines a function per command (and registers with compdef).
  defined=$(zsh -f -c 'autoload -U compinit && compinit -u -D && source "$1" &&
                       print -l ${(k)functions[(I)_migscope*]}' _ "$zsh_file" 2>&1) ||
    fail "zsh could not source $zsh_file: $defined"
  for name in _migscope _migscope_plan _migscope_results _migscope_results_list _migscope_profile; do
    grep -qx "$name" <<<"$defined" || fail "$zsh_file defines no $name: $defined"
  done
  grep -q "^    '--objective=\[.*\]:TEXT:(energy throughput " "$zsh_file" ||
    fail "$zsh_file offers no values for --objective"
  if grep -q "_migscope_generate" <<<"$defined"; then fail "zsh completion shows hidden generate"; fi
  # An interactive zsh completes with it (tools/zsh_complete.zsh types the line and a TAB).
  zsh_expect() {  # zsh_expect LINE WANTED: after LINE<TAB> the screen shows WANTED
    zsh -f "$(dirname "$0")/zsh_complete.zsh" "$(dirname "$zsh_file")" "$1" "$2" ||
      fail "zsh: completing '$1' did not show '$2'"
  }
  zsh_expect "migscope pl" "migscope plan "
  zsh_expect "migscope plan --obj" "migscope plan --objective="
  zsh_expect "migscope plan --objective=t" "--objective=throughput "
  zsh_expect "migscope results list --format " "table"
else
  echo "skip: no zsh here (Debian: zsh); the zsh completion was not parsed"
fi

# ---- man ----
head -5 "$man_file" | grep -q '^\.TH MIGSCOPE 1 ' || fail "$man_file has no .TH MIGSCOPE 1"
for section in NAME SYNOPSIS DESCRIPTION OPTIONS COMMANDS; do
  grep -qx "\.SH $section" "$man_file" || fail "$man_file has no .SH $section"
done
for command in $commands; do
  grep -qx "\.SS \"$command\"" "$man_file" || fail "$man_file has no section for $command"
done
grep -qx '\.SS "results list"' "$man_file" || fail "$man_file has no section for results list"
if grep -q '"generate' "$man_file"; then fail "$man_file documents the hidden generate"; fi
if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$man_file" 2>&1)
  [ -z "$warnings" ] || fail "groff warns on $man_file: $warnings"
  rendered=$(groff -man -Tutf8 "$man_file" 2>/dev/null | sed 's/.\x08//g')
  grep -q -- "--objective" <<<"$rendered" ||
    fail "the rendered man page does not show --objective as typed: $(grep -m1 objective <<<"$rendered")"
else
  echo "skip: no groff here; the man page's structure was checked, not its rendering"
fi

[ "$failures" -eq 0 ] || { echo "$failures failures" >&2; exit 1; }
echo "ok: bash and zsh completion and the man page"
