#!/usr/bin/env bash
# Redraws Figures 12, 13 and 14: ./plot.sh [ROOT] [--out DIR] [--strict] [--verbose]
#   [--compare ROOT2] [--report FILE | --no-report]
# ROOT (default ./backup_logs) holds fig12/ fig13/ fig14/ log folders; a missing or empty
# folder draws its figure with every cell NS. Figures go to figNN/figures/ (or DIR/figNN/).
# One report.html (`repro-plot report`) of the three figures and of the studies whose folder
# ROOT has (ROOT/h2o-diag, ...; their figures shown when ROOT/NAME is the study's backup_logs,
# from which its committed figures are drawn) goes to DIR/ with --out, else into repro-plot's
# build folder (build/ or build-plot/, ignored by git); --compare ROOT2 compares each cell's
# time with ROOT2's logs of the same cell.
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
root=./backup_logs
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
start=$(date +%s.%N)
# build repro-plot once (only that target; see scripts/build.sh --plot) for the three figures
REPRO_PLOT_BIN=${REPRO_PLOT_BIN:-$("$top/scripts/build.sh" --plot)}
export REPRO_PLOT_BIN
status=0
for fig in fig12 fig13 fig14; do
  echo "################ $fig  (logs: $root/$fig)"
  o=()
  if [ -n "$out" ]; then o=(--out "$out/$fig"); fi
  "$top/$fig/plot.sh" "$root/$fig" "${o[@]}" --no-report "${args[@]}" || status=$?
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
    if [ "$(cd "$root/$name" && pwd -P)" = "$(cd "$study/backup_logs" 2>/dev/null && pwd -P)" ]; then
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
