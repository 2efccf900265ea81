#!/usr/bin/env bash
# Copies the logs a GPU run wrote into a backup_logs folder, byte for byte, so what ships is
# the runner's file unedited (README: "Honest results only"):
#   scripts/ship-logs.sh [--replace] [--commit SHA] [--failed-ok NAME]... FROM DEST
# FROM: a run folder (runs/<time>/, its logs/ are read) or a folder of logs; DEST: the
# backup_logs folder of that figure or study (made when missing).
# A log ships when it has a `meta` line naming its commit and is good by the rule repro-run and
# repro-plot hold every log to (`repro-run verdict`: its last result says ok, unsupported or oom,
# its last line is whole, no failed check or bad avg_ms under ok, ...); one that failed (error,
# timeout), is not good or has no commit is left out and listed, with why. The verdict comes
# from $REPRO_RUN, else build/bin/repro-run (scripts/build.sh --target repro-run builds it). --commit SHA: a log of another commit is left out too (the shipped logs
# of a device stay at one commit). A log whose name DEST already holds with other bytes is
# kept as it is and listed, unless --replace (git keeps the earlier file). Every copy is
# written to a temporary of its own in DEST (.NAME.XXXXXX), compared with its source, and
# renamed over NAME in one step. --failed-ok NAME (repeatable): the log NAME ships although it
# failed, when it is the program's own error (status=error, a reason, not a runner's kill
# line): a cell its system fails at every time, which the figures then mark ERR instead of
# leaving the cell blank; any other log that is not good is still left out.
# Prints one line per log (shipped, replaced, same, left out) and a summary with the commits
# shipped. Exit 0; 1 when a log was left out or kept; 2 usage.
set -u
usage() {
  echo "usage: scripts/ship-logs.sh [--replace] [--commit SHA] [--failed-ok NAME]... FROM DEST" >&2
  exit 2
}
replace=0 want_commit="" failed_ok=()
while [ $# -gt 0 ]; do
  case $1 in
    --replace) replace=1; shift ;;
    --commit) [ $# -ge 2 ] || usage; want_commit=$2; shift 2 ;;
    --failed-ok) [ $# -ge 2 ] || usage; failed_ok+=("$2"); shift 2 ;;
    --) shift; break ;;
    -*) echo "ship-logs.sh: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || usage
from=$1 dest=$2
[ -d "$from/logs" ] && from=$from/logs
[ -d "$from" ] || { echo "ship-logs.sh: $from: not a folder" >&2; exit 2; }
if [ -n "$want_commit" ] && ! [[ $want_commit =~ ^[0-9a-f]{7,40}(-dirty)?$ ]]; then
  echo "ship-logs.sh: --commit $want_commit: expected a commit as the meta lines write it (7-40 hex digits, maybe -dirty)" >&2
  exit 2
fi
mkdir -p "$dest" || exit 2
root=$(cd "$(dirname "$0")/.." && pwd)
runner=${REPRO_RUN:-${REPRO_BUILD_DIR:-$root/build}/bin/repro-run}
[ -x "$runner" ] || {
  echo "ship-logs.sh: $runner is not built: it judges the logs (scripts/build.sh --target repro-run, or set REPRO_RUN)" >&2
  exit 2
}

# value KEY LINE: KEY's value in one kvline record (unquoted values only: status, commit)
value() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1; }

# own_error_allowed NAME LOG STATUS: 0 when NAME was given to --failed-ok, its verdict's STATUS
# is error and LOG's last result line is the program's own (a reason, no source=runner: not a
# kill, a timeout or a cancel, which say nothing about the system)
own_error_allowed() {
  local name=$1 log=$2 allowed=0 last
  for n in "${failed_ok[@]}"; do [ "$n" = "$name" ] && allowed=1; done
  [ "$allowed" = 1 ] && [ "$3" = error ] || return 1
  last=$(grep '^result ' "$log" | tail -n 1)
  [[ $last == *" reason="* ]] && [[ $last != *" source=runner"* ]]
}

shipped=0 replaced=0 same=0 left=0 commits=""
for log in "$from"/*.log; do
  [ -e "$log" ] || continue
  name=$(basename "$log")
  if [ ! -f "$log" ] || [ -L "$log" ]; then
    echo "left out  $name: not a regular file"; left=$((left + 1)); continue
  fi
  meta=$(grep -m 1 '^meta ' "$log")
  verdict=$("$runner" verdict "$log")
  commit=$(value commit "$meta") status=$(printf '%s\n' "$verdict" | cut -d' ' -f2)
  good=${verdict%% *} why=""
  [ "$good" != good ] && own_error_allowed "$name" "$log" "$status" && good=good
  if [ -z "$commit" ]; then why="no meta line with commit="
  elif [ "$good" != good ] && [ "$status" = - ]; then why=${verdict#*"$log": }
  elif [ "$good" != good ]; then why="status=$status: ${verdict#*"$log": }"
  elif [ -n "$want_commit" ] && [ "$commit" != "$want_commit" ]; then
    why="commit $commit, not $want_commit"
  fi
  if [ -n "$why" ]; then
    echo "left out  $name: $why"; left=$((left + 1)); continue
  fi
  target=$dest/$name
  if [ -e "$target" ] && cmp -s "$log" "$target"; then
    echo "same      $name"; same=$((same + 1)); continue
  fi
  if [ -e "$target" ] && [ "$replace" = 0 ]; then
    echo "kept      $name: $dest holds other bytes under this name (--replace ships this one)"
    left=$((left + 1)); continue
  fi
  verb=shipped
  [ -e "$target" ] && verb=replaced
  # through a temporary of its own in DEST (never another shipper's), checked, then renamed
  # in one step: DEST never holds a partial log under the name
  tmp=$(mktemp "$dest/.$name.XXXXXX") || { echo "ship-logs.sh: $dest: cannot create a temporary file" >&2; exit 1; }
  if ! cp "$log" "$tmp" || ! cmp -s "$log" "$tmp" || ! chmod 0644 "$tmp" || ! mv -f "$tmp" "$target"; then
    rm -f "$tmp"
    echo "ship-logs.sh: $target: the copy failed or differs from $log" >&2
    exit 1
  fi
  printf '%-9s %s (%s, %s)\n' "$verb" "$name" "$status" "$commit"
  if [ "$verb" = shipped ]; then shipped=$((shipped + 1)); else replaced=$((replaced + 1)); fi
  case " $commits " in *" $commit "*) ;; *) commits="${commits:+$commits }$commit" ;; esac
done
echo "ship-logs.sh: $dest: $shipped shipped, $replaced replaced, $same the same, $left left out or kept; commits shipped: ${commits:-none}"
[ "$left" -eq 0 ]
