# Types a command line and a TAB into an interactive zsh (zpty) whose completion loads from a
# folder of $fpath; exits 0 once the screen shows WANTED, 1 (printing the screen) after 10 s.
# Usage: zsh -f zsh_complete.zsh FPATH_DIR LINE WANTED
setopt extendedglob
zmodload zsh/zpty || exit 2
zpty -b z 'zsh -f -i'
zpty -w z "PS1='> '; fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D; zstyle ':completion:*' menu no; print READY-FOR-TAB"
out=""
for i in {1..100}; do
  zpty -r -t z chunk && out+=$chunk
  [[ $out == *READY-FOR-TAB$'\r'* || $out == *READY-FOR-TAB$'\n'* ]] && break
  sleep 0.1
done
out=""
zpty -w -n z "$2"$'\t'
for i in {1..100}; do
  while zpty -r -t z chunk; do out+=$chunk; done
  screen=${out//$'\e'\[[0-9;?]#[a-zA-Z]/}
  [[ $screen == *"$3"* ]] && { zpty -d z; exit 0; }
  sleep 0.1
done
print -r -- "zsh showed: ${(q)screen}" >&2
zpty -d z
exit 1
