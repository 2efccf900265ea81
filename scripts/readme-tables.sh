#!/usr/bin/env bash
# The results tables of README.md and the studies' READMEs, generated from the shipped logs so
# that they cannot drift:
#   scripts/readme-tables.sh [--check] [FILE...]
# FILE: README.md of the kit and every studies/*/README.md with a marker, when none is given.
# Rewrites in place every block of each FILE between the marker lines
#   <!-- tables FOLDER DEVICE begin -->          (or: <!-- tables FOLDER DEVICE SCRIPT begin -->)
#   <!-- tables FOLDER DEVICE end -->            (    <!-- tables FOLDER DEVICE SCRIPT end -->)
# with the tables of FOLDER/experiment.yaml and the logs in FOLDER/backup_logs (FOLDER: fig12,
# fig14, studies/NAME; relative to the kit's root): without SCRIPT, `repro-plot table --format
# markdown --device DEVICE`, the tables the figures' tidy table gives, paper column included
# (plot: paper:); with SCRIPT, a program of the folder's own that prints its Markdown tables,
# `FOLDER/SCRIPT --markdown DEVICE FOLDER/backup_logs` (a study's tables that no figure draws:
# studies/h2o-diag/plot_diag.sh, studies/sdpa-scale/report.sh).
# --check writes nothing: it prints the difference and exits 1 when a FILE's tables are not what
# the logs give. Exit 1 too on a marker without its pair, or a FILE without markers.
# repro-plot is $REPRO_PLOT_BIN, else built by scripts/build.sh --plot (as ./plot.sh does).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
check=0
files=()
while [ $# -gt 0 ]; do
  case $1 in
    --check) check=1; shift ;;
    -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "usage: $0 [--check] [FILE...]" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
if [ ${#files[@]} -eq 0 ]; then
  files=("$root/README.md")
  for f in "$root"/studies/*/README.md; do
    if grep -q '^<!-- tables ' "$f"; then files+=("$f"); fi
  done
fi
for file in "${files[@]}"; do
  [ -f "$file" ] || { echo "readme-tables.sh: $file: no such file" >&2; exit 1; }
done
bin=${REPRO_PLOT_BIN:-$("$root/scripts/build.sh" --plot)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

die() { echo "readme-tables.sh: $file:$1" >&2; exit 1; }

# One block's tables: a blank line, the Markdown, a blank line.
tables() { # FOLDER DEVICE SCRIPT LINE (SCRIPT empty: repro-plot's)
  local cfg=$root/$1/experiment.yaml
  [ -f "$cfg" ] || die "$4: no $1/experiment.yaml under $root"
  echo
  if [ -z "$3" ]; then
    "$bin" table --config "$cfg" --logs "$root/$1/backup_logs" --format markdown --device "$2" \
      2>"$tmp/err" || { cat "$tmp/err" >&2; die "$4: repro-plot table of $1 failed"; }
  else
    if [ ! -f "$root/$1/$3" ] || [ ! -x "$root/$1/$3" ]; then
      die "$4: no program $1/$3 under $root"
    fi
    REPRO_PLOT_BIN=$bin "$root/$1/$3" --markdown "$2" "$root/$1/backup_logs" 2>"$tmp/err" \
      || { cat "$tmp/err" >&2; die "$4: $1/$3 --markdown $2 failed"; }
  fi
  echo
}

# FILE with every block's content generated anew.
generate() {
  local line n=0 block='' blocks=0
  local begin='^<!-- tables ([A-Za-z0-9_./-]+) ([A-Za-z0-9_.-]+)( [A-Za-z0-9_.-]+)? begin -->$'
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    if [[ $line =~ $begin ]]; then
      [ -z "$block" ] || die "$n: a block begins inside the block of $block"
      block="${BASH_REMATCH[1]} ${BASH_REMATCH[2]}${BASH_REMATCH[3]}"
      blocks=$((blocks + 1))
      printf '%s\n' "$line"
      tables "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]# }" "$n"
    elif [ -n "$block" ] && [ "$line" = "<!-- tables $block end -->" ]; then
      printf '%s\n' "$line"
      block=
    elif [[ $line == '<!-- tables '* ]]; then
      die "$n: a marker without its pair: $line"
    elif [ -z "$block" ]; then
      printf '%s\n' "$line"
    fi
  done <"$file"
  [ -z "$block" ] || die "$n: the block of $block has no end marker"
  [ "$blocks" -gt 0 ] || die " no <!-- tables FOLDER DEVICE begin --> markers"
}

status=0
for file in "${files[@]}"; do
  generate >"$tmp/new"
  if [ "$check" = 1 ]; then
    if ! diff -u "$file" "$tmp/new" >"$tmp/diff"; then
      cat "$tmp/diff"
      echo "readme-tables.sh: $file: the results tables differ from what the shipped logs give" \
        "(above); scripts/readme-tables.sh rewrites them" >&2
      status=1
    else
      echo "readme-tables.sh: $file: the results tables are what the shipped logs give"
    fi
  elif cmp -s "$file" "$tmp/new"; then
    echo "readme-tables.sh: $file: unchanged"
  else
    # a unique temporary beside the file, then one rename: a reader never sees half a README
    next=$(mktemp "$(dirname "$file")/.$(basename "$file").XXXXXX") || die "$file: cannot create a temporary beside it"
    if cat "$tmp/new" >"$next" && chmod "$(stat -c %a "$file")" "$next" && mv -f "$next" "$file"; then :; else
      rm -f "$next"
      die "$file: not rewritten (the file is as it was)"
    fi
    echo "readme-tables.sh: $file: tables rewritten from the shipped logs"
  fi
done
exit $status
