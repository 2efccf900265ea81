#!/usr/bin/env bash
# Redraws the figures of this folder's experiment.yaml from a folder of logs or a table, prints
# their tables and the missing or broken logs, and writes report.html beside the figures:
#   ./plot.sh [LOGDIR | TABLE] [--out DIR] [--strict] [--latest] [--verbose] [--no-render]
#             [--no-report] [-j N]
#   ./plot.sh results/complete.json [--out DIR]   a merged table (the tilebench seed's
#                                                 `visualize.py complete.json`)
#   ./plot.sh -h | --help   this text (builds and writes nothing)
# LOGDIR defaults to ./ae_logs (the latest run) when it exists, else ./backup_logs. TABLE, a
# .json or .csv file in its place (`repro-plot table` or `merge` output, or the tilebench seed's
# own result JSON), is drawn with `repro-plot draw --table`: the same figures as from the logs it
# was made of, into plots/<its name less .json>/@folder@/ unless --out DIR (--latest is for logs
# only). Each figure is written as .pdf, .png and .svg, with the .dat and .gp it is drawn from:
#   from ./backup_logs into ./figures/ (the committed figures);
#   from any other LOGDIR into plots/NAME/@folder@/ at the repository's top, NAME named after
#     LOGDIR (`@top@/plot.sh --help` says how: /data/FlashTensor-AE/@folder@/backup_logs gives
#     plots/FlashTensor-AE/@folder@/);
#   with --out DIR into DIR.
# --strict: a broken, unknown, odd or undrawn log is an error (exit 3); --latest: of several
# logs of one cell draw the newest (else ERR); --verbose: list every missing log; --no-render:
# the tables and the .dat/.gp only, no report; --no-report: no report.html; -j N: at most N
# gnuplot runs at once. repro-plot is built first when needed. See plot/README.md.
set -euo pipefail
# The body of every figNN/plot.sh and studies/NAME/plot.sh, whose usage is the one above
# (@folder@: the folder's name, @top@: the way up to the repository's top):
#   scripts/plot-folder.sh FIGDIR [LOGDIR] [options]
# shellcheck source=scripts/lib/root.sh
. "$(dirname "$0")/lib/root.sh"
fig=$(cd "$1" && pwd)
shift
if repro_wants_help "$@"; then
  up=$(printf '%s' "${fig#"$root"/}" | sed 's|[^/][^/]*|..|g')
  repro_usage "$0" | sed "s|@folder@|${fig##*/}|g; s|@top@|$up|g"
  exit 0
fi
# --out names the folder; without it the top plot.sh picks it (./figures/ for ./backup_logs only)
case " $* " in *" --out "*) exec "$root/plot/plot-figure.sh" "$fig" "$@" ;; esac
exec "$root/plot.sh" --figure "$fig" "$@"
