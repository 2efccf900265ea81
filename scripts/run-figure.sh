#!/usr/bin/env bash
# Shared body of figNN/run.sh: runs the figure's matrix with build/bin/repro-run.
#   run-figure.sh FIGDIR [repro-run options...]   (FIGDIR: any experiment folder of the tree)
# Picks what a reviewer would otherwise have to type:
#   - the cluster file: -c/--cluster if given, else $REPRO_CLUSTER, else, when Slurm's sbatch
#     is on PATH, clusters/local-test.yaml on the test cluster of scripts/slurm-local.sh and
#     clusters/generic.yaml elsewhere (edit that file for your site); for --resume and --rerun
#     (not dry runs) none unless -c is given: repro-run continues with the run's own;
#   - without Slurm (or with --local) and no --device: the device label of this machine's GPU
#     from nvidia-smi (h100, h200, a100), since one machine runs one device's cells.
set -euo pipefail
fig=$(cd "$1" && pwd)
shift
# the repository root: the nearest folder above FIGDIR holding .repro-root (FIGDIR may be
# fig12/ or a study nested deeper, e.g. studies/sdpa-scale/)
root=$fig
until [ -e "$root/.repro-root" ]; do
  [ "$root" = / ] && { echo "run.sh: no .repro-root above $fig" >&2; exit 2; }
  root=$(dirname "$root")
done
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
