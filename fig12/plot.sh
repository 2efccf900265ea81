#!/usr/bin/env bash
# Redraws this figure: ./plot.sh [LOGDIR] [--out DIR] [--strict] [--verbose]
# LOGDIR defaults to ./ae_logs (the latest run) when it exists, else ./backup_logs.
# Writes ./figures/<name>.{pdf,png,svg} (and the .dat/.gp they come from) and prints the
# tables and the list of missing or broken logs. See plot/README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../plot/plot-figure.sh" "$here" "$@"
