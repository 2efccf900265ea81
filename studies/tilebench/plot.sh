#!/usr/bin/env bash
# Redraws the figures of this folder's experiment.yaml from a folder of logs or a table, prints
# their tables and the missing or broken logs, and writes report.html beside the figures:
#   ./plot.sh [LOGDIR | TABLE] [--out DIR] [--strict] [--latest] [--verbose] [--no-render]
#             [--no-report] [-j N]
#   ./plot.sh results/complete.json [--out DIR]   the seed's `visualize.py complete.json`
#   ./plot.sh -h | --help   this text (builds and writes nothing)
# LOGDIR defaults to ./ae_logs (the latest run) when it exists, else ./backup_logs. TABLE, a
# .json or .csv file in its place (`repro-plot table` or `merge` output, or the seed's own result
# JSON, merged with its merge_results.py or ours), is drawn with `repro-plot draw --table`: the
# same figures as from the logs it was made of, into plots/<its name less .json>/tilebench/
# unless --out DIR (--latest is for logs only). Each figure is written as .pdf, .png and .svg,
# with the .dat and .gp it is drawn from:
#   from ./backup_logs into ./figures/ (the committed figures);
#   from any other LOGDIR into plots/NAME/tilebench/ at the repository's top, NAME named after
#     LOGDIR (`../../plot.sh --help` says how: /data/FlashTensor-AE/tilebench/backup_logs gives
#     plots/FlashTensor-AE/tilebench/);
#   with --out DIR into DIR.
# --strict: a broken, unknown, odd or undrawn log is an error (exit 3); --latest: of several
# logs of one cell draw the newest (else ERR); --verbose: list every missing log; --no-render:
# the tables and the .dat/.gp only, no report; --no-report: no report.html; -j N: at most N
# gnuplot runs at once. repro-plot is built first when needed. See plot/README.md.
for a in "$@"; do
  case $a in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
done
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# the repository root: the nearest folder above this one that holds .repro-root
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ] || [ "$PWD" = / ]; do cd ..; done && pwd)
[ -e "$root/.repro-root" ] || { echo "$0: no .repro-root above this folder" >&2; exit 2; }
# --out names the folder; without it the top plot.sh picks it (./figures/ for ./backup_logs only)
case " $* " in *" --out "*) exec "$root/plot/plot-figure.sh" "$here" "$@" ;; esac
exec "$root/plot.sh" --figure "$here" "$@"
