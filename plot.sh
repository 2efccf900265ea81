#!/usr/bin/env bash
# Redraws Figures 12, 13 and 14 from a folder of logs, prints their tables and missing logs, and
# writes one HTML report:
#   ./plot.sh [ROOT] [--out DIR] [--strict] [--latest] [--verbose] [--no-render] [-j N]
#             [--compare ROOT2] [--report FILE | --no-report]
#   ./plot.sh --figure FIGDIR [LOGDIR | TABLE] [the same options]   one figure or study alone
#   ./plot.sh -h | --help                                   this text (builds and writes nothing)
# ROOT (default: this repository's backup_logs) holds fig12/ fig13/ fig14/ log folders, and a
# study's (ROOT/h2o-diag, ...); a missing or empty folder draws its figure with every cell NS.
# Where it writes (each figure as .pdf, .png, .svg, with the .dat and .gp it is drawn from):
#   ROOT is this repository's backup_logs: the committed figures, figNN/figures/, and
#     report.html into repro-plot's build folder (build/ or build-plot/, ignored by git);
#   any other ROOT: plots/NAME/figNN/ and plots/NAME/report.html at the repository's top, never
#     over the committed figures. NAME is ROOT's folder name, or, for a folder named
#     backup_logs, ae_logs, logs or like an experiment folder (fig12, h2o-diag, ...), the name
#     of the first folder above it that is not (./plot.sh /data/run3 writes plots/run3/;
#     fig12/plot.sh /data/FlashTensor-AE/fig12/backup_logs, plots/FlashTensor-AE/fig12/);
#   --out DIR: DIR/figNN/ and DIR/report.html.
# Options:
#   --strict          a broken, unknown, odd or undrawn log is an error (exit 3)
#   --latest          of several logs of one cell draw the newest (else the cell is ERR)
#   --verbose         list every missing log, not the first 24
#   --no-render       the tables and the .dat/.gp files only: no figure, no report
#   -j N              gnuplot runs at most N figures at once
#   --compare ROOT2   the report compares each cell's time with ROOT2's logs of the same cell
#   --report FILE     the report goes to FILE; --no-report: none
#   --figure FIGDIR   FIGDIR/plot.sh: draws FIGDIR's figures from LOGDIR (default FIGDIR/ae_logs,
#                     the latest run, when it exists, else FIGDIR/backup_logs) into
#                     FIGDIR/figures/ when LOGDIR is FIGDIR/backup_logs, else into
#                     plots/NAME/<FIGDIR's name>/ (or --out DIR), report.html beside them;
#                     a TABLE (a .json or .csv file: repro-plot table or merge, or the
#                     tilebench seed's result JSON) in place of LOGDIR is drawn with
#                     `repro-plot draw --table`, into plots/<its name less .json>/...
# repro-plot is built first when needed (scripts/build.sh --plot: that target alone).
for a in "$@"; do
  case $a in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
done
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)

# true when folders $1 and $2 both exist and are the same folder (links resolved)
same_dir() {
  local a b
  a=$(cd "$1" 2>/dev/null && pwd -P) && b=$(cd "$2" 2>/dev/null && pwd -P) && [ "$a" = "$b" ]
}

# The NAME of plots/NAME/ for log folder $1 (see the usage above): the last folder of its path,
# links resolved, that is not backup_logs, ae_logs, logs or an experiment folder's name; for a
# table file, its name less .json or .csv.
log_name() {
  local p name
  if [ -f "$1" ]; then
    name=${1##*/}
    name=${name%.json}
    echo "${name%.csv}"
    return
  fi
  p=$(cd "$1" 2>/dev/null && pwd -P) || { p=$1; [ "${p#/}" != "$p" ] || p=$PWD/$p; }
  while [ -n "$p" ]; do
    name=${p##*/}
    p=${p%/*}
    case $name in "" | . | .. | backup_logs | ae_logs | logs) continue ;; esac
    [ -f "$top/$name/experiment.yaml" ] || [ -f "$top/studies/$name/experiment.yaml" ] || {
      echo "$name"
      return
    }
  done
  echo logs
}

has_out() { local a; for a in "$@"; do [ "$a" != --out ] || return 0; done; return 1; }

if [ "${1:-}" = --figure ]; then
  figdir=$(cd "${2:?--figure needs a figure or study folder}" && pwd)
  shift 2
  logs=$figdir/backup_logs
  if [ -e "$figdir/ae_logs" ]; then logs=$figdir/ae_logs; fi
  if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then logs=$1; shift; fi
  o=()
  if ! has_out "$@" && ! same_dir "$logs" "$figdir/backup_logs"; then
    o=(--out "$top/plots/$(log_name "$logs")/${figdir##*/}")
    echo "plot.sh: $logs is not ${figdir##*/}/backup_logs: drawing into ${o[1]}/ (or --out DIR)"
  fi
  exec "$top/plot/plot-figure.sh" "$figdir" "$logs" "${o[@]}" "$@"
fi

root=$top/backup_logs
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then root=$1; shift; fi
out=
args=()
report=1
report_file=
compare=()
latest=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --no-report) report=0; shift ;;
    --report) report_file=${2:?--report needs a file}; shift 2 ;;
    --compare) compare=(--compare "${2:?--compare needs a folder}"); shift 2 ;;
    --no-render) report=0; args+=("$1"); shift ;;
    --latest) latest=(--latest); args+=("$1"); shift ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ -z "$out" ] && ! same_dir "$root" "$top/backup_logs"; then
  out=$top/plots/$(log_name "$root")
  echo "plot.sh: $root is not this repository's backup_logs: drawing into $out/ (or --out DIR)"
fi
start=$(date +%s.%N)
# build repro-plot once (only that target; see scripts/build.sh --plot) for the three figures
REPRO_PLOT_BIN=${REPRO_PLOT_BIN:-$("$top/scripts/build.sh" --plot)}
export REPRO_PLOT_BIN
status=0
for fig in fig12 fig13 fig14; do
  echo "################ $fig  (logs: $root/$fig)"
  figs=$top/$fig/figures
  if [ -n "$out" ]; then figs=$out/$fig; fi
  "$top/$fig/plot.sh" "$root/$fig" --out "$figs" --no-report "${args[@]}" || status=$?
done
# the report: the three figures, then each study that ROOT has logs of
if [ $report = 1 ]; then
  sections=()
  for fig in fig12 fig13 fig14; do
    figs=$top/$fig/figures
    if [ -n "$out" ]; then figs=$out/$fig; fi
    sections+=(--config "$top/$fig/experiment.yaml" --logs "$root/$fig" --figures "$figs")
  done
  for study in "$top"/studies/*/; do
    study=${study%/}
    name=${study##*/}
    if [ ! -d "$root/$name" ] || [ ! -f "$study/experiment.yaml" ]; then continue; fi
    sections+=(--config "$study/experiment.yaml" --logs "$root/$name")
    if same_dir "$root/$name" "$study/backup_logs"; then
      sections+=(--figures "$study/figures")
    fi
  done
  if [ -z "$report_file" ]; then
    report_file=${out:-$(dirname "$(dirname "$REPRO_PLOT_BIN")")}/report.html
  fi
  "$REPRO_PLOT_BIN" report -o "$report_file" "${compare[@]}" "${latest[@]}" "${sections[@]}" ||
    { [ $status -ne 0 ] || status=1; }
fi
end=$(date +%s.%N)
echo
echo "plot.sh: figures in ${out:-$top/figNN/figures}: $(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b-a}') s, exit $status"
exit $status
