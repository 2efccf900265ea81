#!/usr/bin/env bash
# Redraws Figures 12, 13 and 14: ./plot.sh [ROOT] [--out DIR] [--strict] [--verbose]
# ROOT (default ./backup_logs) holds fig12/ fig13/ fig14/ log folders; a missing or empty
# folder draws its figure with every cell NS. Figures go to figNN/figures/ (or DIR/figNN/).
set -euo pipefail
top=$(cd "$(dirname "$0")" && pwd)
root=./backup_logs
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then root=$1; shift; fi
out=
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?--out needs a folder}; shift 2 ;;
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
  "$top/$fig/plot.sh" "$root/$fig" "${o[@]}" "${args[@]}" || status=$?
done
end=$(date +%s.%N)
echo
echo "plot.sh: figures in ${out:-$top/figNN/figures}: $(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.2f", b-a}') s, exit $status"
exit $status
