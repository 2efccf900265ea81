#!/usr/bin/env bash
# Runs this folder's matrix (experiment.yaml) with repro-run; scripts/run-figure.sh is the body
# and its header this script's usage (./run.sh --help).
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ]; do [ "$PWD" != / ] || exit; cd ..; done && pwd) ||
  { echo "$0: no .repro-root above this folder" >&2; exit 2; }
# shellcheck source=scripts/lib/root.sh
. "$root/scripts/lib/root.sh"
exec "$root/scripts/run-figure.sh" "$here" "$@"
