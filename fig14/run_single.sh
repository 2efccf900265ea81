#!/usr/bin/env bash
# Reruns one cell (or a filter) into the current run, e.g.
#   ./run_single.sh gemma2 fused
exec "$(dirname "$0")/../scripts/run-single.sh" "$(dirname "$0")" "workload system" "$@"
