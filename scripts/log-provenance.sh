#!/usr/bin/env bash
# Where the shipped logs come from: per folder and GPU, the commits their meta lines name, how
# many logs each, their date span, and the checks and statuses they record.
#   scripts/log-provenance.sh [--device NAME] [--one-commit] [DIR...]
# DIR: folders of logs (*.log, searched recursively); default: every folder under backup_logs/.
# NAME: a GPU as the log names spell it (h200, h100, a100): the model in the meta line's gpu=
# ("NVIDIA H200" is h200), so a log is placed by what ran it, not by its file name.
# --one-commit: exit 1 unless every selected log names one and the same commit, not -dirty,
# and no check line says ok=0 (a log without a meta line fails it too).
# A full 40-digit hash counts as its 7-digit prefix, the form the builds write.
# Output, tab-separated: folder, gpu, commit, logs, first date, last date, checks ok, checks
# failed, results by status.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
device=""
one_commit=0
dirs=()
while [ $# -gt 0 ]; do
  case $1 in
    --device) device=${2:?--device needs a GPU name (h200, h100, a100)}; shift 2 ;;
    --one-commit) one_commit=1; shift ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "log-provenance.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) dirs+=("$1"); shift ;;
  esac
done
[[ -z "$device" || "$device" =~ ^[a-z][a-z0-9]*$ ]] ||
  { echo "log-provenance.sh: --device: expected a name like h200, got '$device'" >&2; exit 2; }
if [ ${#dirs[@]} -eq 0 ]; then
  for d in "$root"/backup_logs/*/; do dirs+=("${d%/}"); done
fi
for d in "${dirs[@]}"; do
  [ -d "$d" ] || { echo "log-provenance.sh: $d: not a folder" >&2; exit 2; }
done

# One row per log: folder, gpu, commit, date, checks ok, checks failed, status list. One awk
# reads a folder's logs, emitting a log's row when the next log starts and at the end.
# shellcheck disable=SC2016 # the awk program is single-quoted on purpose
rows=$(for d in "${dirs[@]}"; do
  find -L "$d" -name '*.log' -type f -print0 | sort -z | xargs -0 -r awk -v dir="${d#"$root"/}" '
    function emit() {
      if (!meta) { gpu = "none"; commit = "no-meta"; date = "-" }
      if (commit == "") commit = "none"
      printf "%s\t%s\t%s\t%s\t%d\t%d\t%s\n", dir, gpu, commit, date, ok, bad, st
      meta = ok = bad = 0; gpu = commit = date = st = ""
    }
    FNR == 1 && NR > 1 { emit() }
    /^meta / {
      meta = 1
      if (match($0, /gpu="[^"]*"/)) {
        gpu = substr($0, RSTART + 5, RLENGTH - 6)
        if (match(gpu, /[A-Z][0-9][0-9][0-9]?/)) gpu = tolower(substr(gpu, RSTART, RLENGTH))
        else gpu = "unknown"
      }
      if (match($0, /commit=[^ ]*/)) commit = substr($0, RSTART + 7, RLENGTH - 7)
      # a full hash (some peers wrote git rev-parse HEAD) is the short one the builds write
      if (commit ~ /^[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]+(-dirty)?$/)
        commit = substr(commit, 1, 7) (commit ~ /-dirty$/ ? "-dirty" : "")
      if (match($0, /date=[^ ]*/)) date = substr($0, RSTART + 5, RLENGTH - 5)
    }
    /^check / { if ($0 ~ / ok=1( |$)/) ok++; else if ($0 ~ / ok=0( |$)/) bad++ }
    /^result / { if (match($0, /status=[^ ]*/)) st = st substr($0, RSTART + 7, RLENGTH - 7) "," }
    END { if (NR > 0) emit() }'
done)
[ -n "$device" ] && rows=$(printf '%s\n' "$rows" | awk -F'\t' -v g="$device" '$2 == g || $2 == "none"')
if [ -z "$rows" ]; then
  echo "log-provenance.sh: no logs${device:+ of $device} in ${dirs[*]}" >&2
  exit 1
fi

printf 'folder\tgpu\tcommit\tlogs\tfirst\tlast\tchecks_ok\tchecks_failed\tresults\n'
printf '%s\n' "$rows" | awk -F'\t' '
  { k = $1 "\t" $2 "\t" $3
    if (!(k in n)) { order[++nk] = k; first[k] = $4; last[k] = $4 }
    n[k]++; ok[k] += $5; bad[k] += $6
    if ($4 < first[k]) first[k] = $4
    if ($4 > last[k]) last[k] = $4
    m = split($7, s, ",")
    for (i = 1; i < m; i++)
      if (stat[k, s[i]]++ == 0) names[k] = names[k] s[i] " "
  }
  END {
    for (i = 1; i <= nk; i++) {
      k = order[i]; r = ""; m = split(names[k], s, " ")
      for (j = 1; j <= m; j++) if (s[j] != "") r = r (r == "" ? "" : " ") s[j] "=" stat[k, s[j]]
      printf "%s\t%d\t%s\t%s\t%d\t%d\t%s\n", k, n[k], first[k], last[k], ok[k], bad[k], r
    }
  }'

[ $one_commit = 1 ] || exit 0
commits=$(printf '%s\n' "$rows" | cut -f3 | sort -u)
failed=$(printf '%s\n' "$rows" | awk -F'\t' '$6 > 0' | wc -l)
status=0
if [ "$(printf '%s\n' "$commits" | wc -l)" -ne 1 ]; then
  echo "log-provenance.sh: the logs${device:+ of $device} name more than one commit: $(printf '%s\n' "$commits" | paste -sd' ')" >&2
  status=1
fi
case $commits in
  *-dirty* | *no-meta* | none)
    echo "log-provenance.sh: a log names no clean commit ($(printf '%s\n' "$commits" | paste -sd' '))" >&2
    status=1 ;;
esac
if [ "$failed" -gt 0 ]; then
  echo "log-provenance.sh: $failed log(s) with a failed check (ok=0)" >&2
  status=1
fi
exit $status
