#!/usr/bin/env bash
# Redraws one figure folder's figures from a folder of logs (called by figNN/plot.sh).
#   plot/plot-figure.sh FIGDIR [LOGDIR] [--out DIR] [other `repro-plot draw` options]
# LOGDIR: default FIGDIR/ae_logs (the latest run) when it exists, else FIGDIR/backup_logs;
#         a relative LOGDIR is taken from the caller's current folder.
# Output: FIGDIR/figures/<name>.{pdf,png,svg,dat,gp} unless --out DIR is given.
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
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
exec "$bin" draw --config "$figdir/experiment.yaml" --logs "$logs" --out "$out" "${args[@]}"
