#!/usr/bin/env bash
# Reruns one cell (or a filter) into the current run, e.g.
#   ./run_single.sh kernel roco            # every system of kernel/roco
#   ./run_single.sh kernel roco fused      # one cell
#   ./run_single.sh e2e h2o device=a100    # any axis as key=value; options pass through
exec "$(dirname "$0")/../scripts/run-single.sh" "$(dirname "$0")" "experiment workload system" "$@"
