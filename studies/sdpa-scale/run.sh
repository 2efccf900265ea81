#!/usr/bin/env bash
# Runs this folder's matrix (experiment.yaml) with repro-run: Slurm job arrays when sbatch is on
# PATH, else the cells on this machine, one cell per GPU at a time.
#   ./run.sh [--dry-run] [-c CLUSTER.yaml] [--only K=V[,K=V...]] [--device LABEL] [--cases NAME]
#            [--local [-j N] [--gpus all|N|LIST]] [--resume | --rerun] [--no-wait] [...]
#   ./run.sh -h | --help   this text (needs no build, writes nothing)
#   -n, --dry-run        list the cells (log, command) and write the array scripts; run nothing
#   -c, --cluster FILE   the cluster file; default $REPRO_CLUSTER, else, with Slurm,
#                        clusters/local-test.yaml on scripts/slurm-local.sh's test cluster and
#                        clusters/generic.yaml elsewhere (--resume, --rerun: the run's own)
#   --only K=V[,K=V...]  only the cells with these axis or case values; repeat for more (OR)
#   --device LABEL       only this device's cells; without Slurm the default is this machine's
#                        GPU's label (h100, h200 or a100, from nvidia-smi)
#   --cases NAME         the experiments' case lists named NAME (default: default)
#   --local, -j N        this machine, at most N cells at once (--gpus: on which GPUs)
#   --resume             the current run's cells that have no good log
#   --rerun              the selected cells again, into the current run
# Writes runs/<UTC time>/ here (logs/, one log per cell; the job scripts; a journal) and points
# ae_logs at it; --resume and --rerun write into the run ae_logs points to (a rerun cell's old
# log moves to its attempts/), --dry-run into runs/dry-run-<UTC time>/jobs/; nothing is deleted.
# Needs the build (scripts/build.sh: build/bin/repro-run and the kernels; $REPRO_RUN names
# another repro-run). `build/bin/repro-run --help` lists every option; runner/README.md
# explains them.
for a in "$@"; do
  case $a in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
done
# the repository root: the nearest folder above this one that holds .repro-root
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ] || [ "$PWD" = / ]; do cd ..; done && pwd)
[ -e "$root/.repro-root" ] || { echo "$0: no .repro-root above this folder" >&2; exit 2; }
exec "$root/scripts/run-figure.sh" "$(dirname "$0")" "$@"
