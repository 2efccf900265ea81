#!/usr/bin/env bash
# The results tables of README.md and the studies' READMEs, generated from the shipped logs so
# that they cannot drift:
#   scripts/readme-tables.sh [--check] [FILE...]
# FILE: README.md and results/README.md of the kit and every studies/*/README.md with a marker,
# when none is given.
# Rewrites in place every block of each FILE between the marker lines
#   <!-- tables FOLDER DEVICE begin -->          (or: <!-- tables FOLDER DEVICE SCRIPT begin -->)
#   <!-- tables FOLDER DEVICE end -->            (    <!-- tables FOLDER DEVICE SCRIPT end -->)
# with the tables of FOLDER/experiment.yaml and the logs in FOLDER/backup_logs (FOLDER: fig12,
# fig14, studies/NAME; relative to the kit's root): without SCRIPT, `repro-plot table --format
# markdown --device DEVICE`, the tables the figures' tidy table gives, paper column included
# (plot: paper:); with SCRIPT, a program of the folder's own that prints its Markdown tables,
# `FOLDER/SCRIPT --markdown DEVICE FOLDER/backup_logs` (a study's tables that no figure draws:
# studies/h2o-diag/plot_diag.sh, studies/sdpa-scale/report.sh). The block
#   <!-- tables studies DEVICE summary begin -->
# is README.md's table of the studies: per studies/*/experiment.yaml with DEVICE logs, the GPU,
# the range of the speedup column of its execution-time tables (the best other system's time /
# ours', as each study's README tables state it), how many cells, and the logs' commits. The block
#   <!-- tables figures all headlines begin -->
# is README.md's one line per figure and metric of fig12, fig13 and fig14: the geometric mean of
# ours' ratio to the best other system on every GPU with logs, as the figures' tables give it.
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
    -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
    -*) echo "usage: $0 [--check] [FILE...]" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
if [ ${#files[@]} -eq 0 ]; then
  files=("$root/README.md")
  for f in "$root"/results/README.md "$root"/studies/*/README.md; do
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

# The studies' summary table for DEVICE (the block `tables studies DEVICE summary`).
summary() { # DEVICE LINE
  local dir name
  echo "| study | GPU | speedup (best other's time / ours') | cells | logs' commit |"
  echo '|---|---|---:|---:|---|'
  for dir in "$root"/studies/*/; do
    name=$(basename "$dir")
    [ -f "$dir/experiment.yaml" ] || continue
    "$bin" table --config "$dir/experiment.yaml" --logs "$dir/backup_logs" \
      >"$tmp/csv" 2>"$tmp/err" || { cat "$tmp/err" >&2; die "$2: repro-plot table of studies/$name failed"; }
    "$bin" table --config "$dir/experiment.yaml" --logs "$dir/backup_logs" --format markdown \
      --device "$1" >"$tmp/md" 2>"$tmp/err" \
      || { cat "$tmp/err" >&2; die "$2: repro-plot table of studies/$name failed"; }
    # the csv's source and gpu_model of DEVICE's rows (a csv reader: reasons hold commas)
    python3 -c 'import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["device"] == sys.argv[2]]
open(sys.argv[3], "w").write("".join(r["source"] + "\n" for r in rows))
print(", ".join(sorted({r["gpu_model"] for r in rows})), end="")' \
      "$tmp/csv" "$1" "$tmp/src" >"$tmp/gpu"
    [ -s "$tmp/gpu" ] || continue
    (cd "$root" && xargs grep -ho '^meta .* commit=[^ ]*' <"$tmp/src") | sed 's/.* commit=//' \
      | sort | uniq -c | sort -k1,1nr -k2 | awk '{ printf "%s`%s` (%d)", (NR > 1 ? ", " : ""), $2, $1 }' >"$tmp/commit"
    # the last column of each execution-time table's rows, the geometric mean's left out
    awk -v name="$name" -v gpu="$(cat "$tmp/gpu")" -v commit="$(cat "$tmp/commit")" '
      /^\*/ { time = index($0, "execution time") > 0; next }
      time && /^\| / && !/^\| geometric mean/ {
        n = split($0, a, "|"); v = a[n - 1]; gsub(/ /, "", v)
        if (v !~ /^[0-9.]+x$/) next
        v = substr(v, 1, length(v) - 1) + 0; cells++
        if (cells == 1 || v < lo) { lo = v; los = a[n - 1] }
        if (cells == 1 || v > hi) { hi = v; his = a[n - 1] }
      }
      END {
        gsub(/ /, "", los); gsub(/ /, "", his)
        r = cells == 0 ? "-" : lo == hi ? los : substr(los, 1, length(los) - 1) "-" his
        printf "| `studies/%s/` | %s | %s | %d | %s |\n", name, gpu, r, cells, commit
      }' "$tmp/md"
  done
}

# README.md's headlines: per figure and metric of fig12-14, the geometric mean of its tables'
# ratio column on every GPU with logs ("*NAME, GPU: METRIC, UNIT (...)*", then the ratio's
# definition line, then the table, whose "geometric mean" row ends with the mean).
headlines() { # LINE
  local fig dev
  for fig in fig12 fig13 fig14; do
    for dev in a100 h100 h200; do
      "$bin" table --config "$root/$fig/experiment.yaml" --logs "$root/$fig/backup_logs" \
        --format markdown --device "$dev" 2>"$tmp/err" \
        || { cat "$tmp/err" >&2; die "$1: repro-plot table of $fig failed"; }
    done
  done | awk '
    /^\*[a-z0-9_]+, [A-Z0-9]+: / { split(substr($0, 2), a, ", "); name = a[1]; gpu = a[2]
      sub(/:.*/, "", gpu); metric = a[2]; sub(/^[^:]*: /, "", metric); sub(/ \(.*/, "", metric)
      key = name " (" metric ")"; def = ""; next }
    key != "" && def == "" && /^[a-z]/ { def = $0; sub(/ \(> 1.*/, "", def); sub(/;.*/, "", def)
      if (!(key in defs)) { order[++n] = key; defs[key] = def }; next }
    key != "" && /^\| geometric mean/ { m = split($0, c, "|"); v = c[m - 1]; gsub(/ /, "", v)
      vals[key] = vals[key] (vals[key] == "" ? "" : ", ") gpu " " v; key = "" }
    END { for (i = 1; i <= n; i++) printf "- **%s**: %s (%s, geometric mean)\n", order[i], vals[order[i]], defs[order[i]] }'
}

# One block's tables: a blank line, the Markdown, a blank line.
tables() { # FOLDER DEVICE SCRIPT LINE (SCRIPT empty: repro-plot's)
  if [ "$1" = figures ] && [ "$3" = headlines ]; then
    echo
    headlines "$4"
    echo
    return
  fi
  if [ "$1" = studies ] && [ "$3" = summary ]; then
    echo
    summary "$2" "$4"
    echo
    return
  fi
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
