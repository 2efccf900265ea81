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
set -euo pipefail
# The body of every figNN/run.sh and studies/NAME/run.sh, whose usage is the one above:
#   scripts/run-figure.sh FIGDIR [repro-run options...]   (FIGDIR: any experiment folder)
# It picks what a reviewer would otherwise type: the cluster file (-c, else $REPRO_CLUSTER, else
# by Slurm's cluster name; none for --resume and --rerun, which keep the run's own) and, without
# Slurm, the device label of this machine's GPU.
# shellcheck source=scripts/lib/root.sh
. "$(dirname "$0")/lib/root.sh"
repro_help "$@"
fig=$(cd "$1" && pwd)
shift
runner=${REPRO_RUN:-$root/build/bin/repro-run}
if [ ! -x "$runner" ]; then
  echo "run.sh: $runner is not built: run scripts/build.sh first" >&2
  exit 2
fi

has_arg() { local a want=$1; shift; for a in "$@"; do case "$a" in "$want"|"$want"=*) return 0 ;; esac; done; return 1; }

extra=()
continues=0  # --resume/--rerun: repro-run takes the run's own cluster file
if { has_arg --resume "$@" || has_arg --rerun "$@"; } && ! has_arg --dry-run "$@" && ! has_arg -n "$@"; then
  continues=1
fi
if [ "$continues" = 0 ] && ! has_arg -c "$@" && ! has_arg --cluster "$@"; then
  if [ -n "${REPRO_CLUSTER:-}" ]; then
    extra+=(--cluster "$REPRO_CLUSTER")
  elif command -v sbatch >/dev/null && ! has_arg --local "$@"; then
    name=$(scontrol show config 2>/dev/null | awk '$1 == "ClusterName" {print $3}' || true)
    if [ "$name" = reprolocal ]; then
      echo "run.sh: the local test cluster: using clusters/local-test.yaml (CPU mode)" >&2
      extra+=(--cluster "$root/clusters/local-test.yaml")
    else
      extra+=(--cluster "$root/clusters/generic.yaml")
    fi
  fi
fi
local_mode=0
if has_arg --local "$@" || { ! command -v sbatch >/dev/null && ! has_arg --slurm "$@"; }; then local_mode=1; fi
if [ "$local_mode" = 1 ] && ! has_arg --device "$@" && ! has_arg --dry-run "$@" && ! has_arg -n "$@" &&
   command -v nvidia-smi >/dev/null; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
  case "$gpu" in
    *H200*) extra+=(--device h200) ;;
    *H100*) extra+=(--device h100) ;;
    *A100*) extra+=(--device a100) ;;
    *) [ -n "$gpu" ] && echo "run.sh: unknown GPU '$gpu': pass --device LABEL" >&2 ;;
  esac
fi
exec "$runner" run "$fig/experiment.yaml" ${extra[@]+"${extra[@]}"} "$@"
