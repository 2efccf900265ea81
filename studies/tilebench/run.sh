#!/usr/bin/env bash
# Runs this study's matrix (experiment.yaml): Slurm job arrays when sbatch is on PATH, else
# the cells one by one on this machine's GPU. Every run gets its own runs/<timestamp>/ and
# ae_logs points to the newest (or the one --resume/--rerun continues); nothing is deleted.
#   ./run.sh [--dry-run] [-c CLUSTER.yaml] [--only key=value,...] [--resume] [--local -j N] ...
# `build/bin/repro-run --help` lists every option; runner/README.md explains them.
# the repository root: the nearest folder above this one that holds .repro-root
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ] || [ "$PWD" = / ]; do cd ..; done && pwd)
[ -e "$root/.repro-root" ] || { echo "$0: no .repro-root above this folder" >&2; exit 2; }
exec "$root/scripts/run-figure.sh" "$(dirname "$0")" "$@"
