#!/usr/bin/env bash
# The one-commit H200 run's last step (README.md beside it): checks that every target's pack is
# here and whole (its run has no cell without a good log: repro-run status; a cell of
# known-failures.txt may instead hold its program's own error), then ships each run's logs into
# its backup_logs folder with scripts/ship-logs.sh --replace --commit COMMIT, the known
# failures as --failed-ok (byte for byte; a log of another commit or not good is left out and
# listed), and prints repro-plot's provenance of every H200 folder, which names any log left at another commit.
#   results/h200-one-commit/ship.sh [--dest DIR] [--partial]
# --dest DIR ships into DIR/FOLDER instead of backup_logs/FOLDER (a trial into a copy);
# --partial ships the packs that are here and whole even when targets are missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
commit=76dc1e2
targets=(fig12-e2e fig12-kernel fig13 fig14 h2o-diag kron-layer sdpa-scale tilebench tilebench-nsa_only)
dest=$root/backup_logs
partial=0
while [ $# -gt 0 ]; do
  case $1 in
    --dest) dest=${2:?--dest needs a folder}; shift ;;
    --partial) partial=1 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "ship.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
run=$root/build/bin/repro-run plot=$root/build/bin/repro-plot
for b in "$run" "$plot"; do
  [ -x "$b" ] || { echo "ship.sh: $b missing (scripts/build.sh)" >&2; exit 2; }
done
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

# known_failures TARGET: the log names known-failures.txt lists for TARGET, one a line
known_failures() {
  [ -f "$here/known-failures.txt" ] || return 0
  awk -v t="$1" '$1 == t && NF >= 3 { print $2 }' "$here/known-failures.txt"
}

# only_known_failures TARGET STATUS_FILE: 0 when every cell `repro-run status` lists (status,
# state, log) is a known failure of TARGET holding an error of its own (status error, no runner
# state); prints the others to stderr
only_known_failures() {
  local target=$1 known others
  known=$(known_failures "$target")
  others=$(awk '/^  [^ ]/ && NF >= 3 { cell = $3; sub(/:$/, "", cell); print $1, $2, cell }' "$2" |
    while read -r st state log; do
      if [ "$st" = error ] && [ "$state" = - ] && printf '%s\n' "$known" | grep -qxF -- "$log"; then continue; fi
      echo "$st $state $log"
    done)
  [ -z "$others" ] && return 0
  printf '%s\n' "$others" | sed "s/^/ship.sh: $target: not a known failure: /" >&2
  return 1
}

# Unpacks a target's pack into $work/TARGET and prints its run folder; fails when the pack is
# missing or its run is not whole.
unpack_whole() {
  local target=$1 pack=$here/packs/$1.tgz run_dir
  [ -f "$pack" ] || { echo "ship.sh: $target: no packs/$target.tgz" >&2; return 1; }
  mkdir -p "$work/$target" && tar xzf "$pack" -C "$work/$target" || return 1
  run_dir=$(find "$work/$target/runs" -mindepth 1 -maxdepth 1 -type d | sort | tail -n 1)
  "$run" status "$run_dir" > "$work/$target.status" 2>&1
  case $? in
    0) ;;
    1) only_known_failures "$target" "$work/$target.status" ||
         { echo "ship.sh: $target: its run is not whole" >&2; return 1; } ;;
    *) echo "ship.sh: $target: repro-run status failed:" >&2; tail -n 5 "$work/$target.status" >&2; return 1 ;;
  esac
  echo "$run_dir"
}

folders=() runs=() shipped_targets=() missing=0
for target in "${targets[@]}"; do
  if run_dir=$(unpack_whole "$target"); then
    name=${target%%-kernel}; name=${name%%-e2e}; name=${name%%-nsa_only}
    folders+=("$name") runs+=("$run_dir") shipped_targets+=("$target")
  else
    missing=1
  fi
done
if [ "$missing" = 1 ] && [ "$partial" = 0 ]; then
  echo "ship.sh: the set is not whole; nothing shipped (--partial ships what is)" >&2
  exit 1
fi
status=0
for i in "${!runs[@]}"; do
  # ship-logs.sh's summary and every log it left out or kept (with why), not the copied ones
  failed_ok=()
  while read -r cell; do failed_ok+=(--failed-ok "$cell"); done < <(known_failures "${shipped_targets[$i]}")
  out=$("$root/scripts/ship-logs.sh" --replace --commit "$commit" "${failed_ok[@]}" "${runs[$i]}" "$dest/${folders[$i]}")
  rc=$?
  printf '%s\n' "$out" | grep -v -E '^(shipped|replaced|same) '
  [ "$rc" = 0 ] || status=1
done
mapfile -t shipped < <(printf '%s\n' "${folders[@]}" | sort -u)
"$plot" provenance --device h200 --one-commit "${shipped[@]/#/$dest/}" || status=1
exit "$status"
