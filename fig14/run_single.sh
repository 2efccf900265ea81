#!/usr/bin/env bash
# Reruns one cell (or a filter) into the current run, e.g.
#   ./run_single.sh gemma2 fused
# the repository root: the nearest folder above this one that holds .repro-root
root=$(cd "$(dirname "$0")" && pwd)
until [ -e "$root/.repro-root" ]; do
  [ "$root" = / ] && { echo "$0: no .repro-root above this folder" >&2; exit 2; }
  root=$(dirname "$root")
done
exec "$root/scripts/run-single.sh" "$(dirname "$0")" "workload system" "$@"
