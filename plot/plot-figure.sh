#!/usr/bin/env bash
# Redraws one figure folder's figures from a folder of logs or a table (called by figNN/plot.sh).
#   plot/plot-figure.sh FIGDIR [LOGDIR | TABLE] [--out DIR] [--no-report]
#                       [other `repro-plot draw` options]
# LOGDIR: default FIGDIR/ae_logs (the latest run) when it exists, else FIGDIR/backup_logs;
#         a relative LOGDIR is taken from the caller's current folder.
# TABLE:  a file (.json or .csv: repro-plot table or merge, the tilebench seed's result JSON)
#         in place of LOGDIR, read with --table instead of --logs.
# Output: FIGDIR/figures/<name>.{pdf,png,svg,dat,gp} unless --out DIR is given, and beside them
# report.html (`repro-plot report`: the figures, their tables and checks in one HTML file),
# unless --no-report or --no-render (no figures) is given.
# repro-plot: $REPRO_PLOT_BIN when set (./plot.sh builds it once for three figures), else
# `scripts/build.sh --plot` builds only that target (build/ when configured, else build-plot/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
figdir=$(cd "${1:?usage: plot-figure.sh FIGDIR [LOGDIR] [options]}" && pwd)
shift
bin=${REPRO_PLOT_BIN:-}
if [ -z "$bin" ]; then bin=$("$root/scripts/build.sh" --plot); fi
logs=
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then logs=$1; shift; fi
if [ -z "$logs" ]; then
  if [ -e "$figdir/ae_logs" ]; then logs=$figdir/ae_logs; else logs=$figdir/backup_logs; fi
fi
out=$figdir/figures
report=1
latest=()
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --no-report) report=0; shift ;;
    --no-render) report=0; args+=("$1"); shift ;;
    --latest) latest=(--latest); args+=("$1"); shift ;;
    *) args+=("$1"); shift ;;
  esac
done
input=(--logs "$logs")
if [ -f "$logs" ]; then input=(--table "$logs"); fi
rc=0
"$bin" draw --config "$figdir/experiment.yaml" "${input[@]}" --out "$out" "${args[@]}" || rc=$?
if [ $report = 1 ]; then
  "$bin" report -o "$out/report.html" "${latest[@]}" --config "$figdir/experiment.yaml" \
    "${input[@]}" --figures "$out" || { [ $rc -ne 0 ] || rc=1; }
fi
exit $rc
