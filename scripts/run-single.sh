#!/usr/bin/env bash
# Shared body of figNN/run_single.sh: reruns one cell (or any filter) into the current run.
#   run-single.sh FIGDIR "AXIS1 AXIS2 ..." [VALUE1 [VALUE2 ...]] [key=value ...] [repro-run options]
# Positional values fill the figure's axes in the given order (e.g. fig12: experiment
# workload system), key=value words add any other axis; the old logs move to attempts/.
set -euo pipefail
fig=$1
read -r -a axes <<<"$2"
shift 2
conds=() opts=() i=0
for a in "$@"; do
  case "$a" in
    -*) opts+=("$a") ;;
    *=*) conds+=("$a") ;;
    *)
      if [ ${#opts[@]} -gt 0 ] && [[ "${opts[-1]}" =~ ^(-c|--cluster|--device|--run|--poll|--bin|--python|-j)$ ]]; then
        opts+=("$a")   # the value of the option before it
      elif [ $i -lt ${#axes[@]} ]; then
        conds+=("${axes[$i]}=$a"); i=$((i + 1))
      else
        echo "run_single.sh: too many values: the axes are ${axes[*]}" >&2; exit 2
      fi ;;
  esac
done
if [ ${#conds[@]} -eq 0 ]; then
  echo "usage: run_single.sh ${axes[*]} (leading ones at least) [key=value ...] [options]" >&2
  exit 2
fi
only=$(IFS=,; echo "${conds[*]}")
exec "$(dirname "$0")/run-figure.sh" "$fig" --rerun --only "$only" ${opts[@]+"${opts[@]}"}
