#!/usr/bin/env bash
# Reruns one cell (or a filter) into the current run, e.g.
#   ./run_single.sh fused 8192             # one system at one sequence length
exec "$(dirname "$0")/../scripts/run-single.sh" "$(dirname "$0")" "system seqlen" "$@"
