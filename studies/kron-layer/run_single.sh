#!/usr/bin/env bash
# Reruns one cell (or a filter) into the current run:
#   ./run_single.sh EXPERIMENT [WORKLOAD [SYSTEM]] [key=value ...] [repro-run options]
#   ./run_single.sh fwd-f 32x128x128 v3        # one pass+dtype, one shape, one version
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ]; do [ "$PWD" != / ] || exit; cd ..; done && pwd) ||
  { echo "$0: no .repro-root above this folder" >&2; exit 2; }
# shellcheck source=scripts/lib/root.sh
. "$root/scripts/lib/root.sh"
# the body fills these axes with the words; its --help adds the rules every run_single.sh shares
exec "$root/scripts/run-single.sh" "$here" "experiment workload system" "$@"
