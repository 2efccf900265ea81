#!/usr/bin/env bash
# Redraws this study: ./plot.sh [LOGDIR] [--out DIR] [--strict] [--verbose]
# LOGDIR defaults to ./ae_logs (the latest run) when it exists, else ./backup_logs.
# Writes ./figures/<name>.{pdf,png,svg} (and the .dat/.gp they come from) and prints the
# tables and the list of missing or broken logs. See plot/README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# the repository root: the nearest folder above this one that holds .repro-root
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ] || [ "$PWD" = / ]; do cd ..; done && pwd)
[ -e "$root/.repro-root" ] || { echo "$0: no .repro-root above this folder" >&2; exit 2; }
exec "$root/plot/plot-figure.sh" "$here" "$@"
