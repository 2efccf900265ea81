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
# The seed's run_benchmark.sh options, mapped onto repro-run's (AND with the other filters):
#   --warmup N           warmup runs of every cell (repro-run --set warmup=N)
#   --iters N            timed runs of every cell (--set runs=N); with --cases test, whose
#                        cases set warmup and runs themselves, both are refused
#   --kernels LIST       only these kernels, comma-separated of gemm, mha, nsa (--exclude
#                        experiment=K for the others)
#   --skip-cutedsl       leave out the CuTeDSL backend (--exclude system=cutedsl)
#   --skip-baselines     the CuTeDSL backend alone (--exclude 'system!=cutedsl')
#   --output-dir DIR     after the run, draw its figures and tables into DIR
#                        (./plot.sh ae_logs --out DIR); with --dry-run only said
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
die() { echo "$0: $*" >&2; exit 2; }
count() { # OPTION VALUE: VALUE must be a whole number >= 1
  [[ $2 =~ ^[1-9][0-9]{0,8}$ ]] || die "$1 '$2': expected a whole number >= 1"
}
args=() out='' dry=0 skip_cutedsl=0 skip_baselines=0
while [ $# -gt 0 ]; do
  case $1 in
    --warmup | --iters | --kernels | --output-dir)
      [ $# -ge 2 ] || die "$1: expected a value after it" ;;
  esac
  case $1 in
    --warmup) count "$1" "$2"; args+=(--set "warmup=$2"); shift ;;
    --iters) count "$1" "$2"; args+=(--set "runs=$2"); shift ;;
    --kernels)
      [[ $2 =~ ^(gemm|mha|nsa)(,(gemm|mha|nsa))*$ ]] ||
        die "--kernels '$2': expected a comma-separated list of gemm, mha, nsa"
      for k in gemm mha nsa; do
        [[ ,$2, == *,$k,* ]] || args+=(--exclude "experiment=$k")
      done
      shift ;;
    --skip-cutedsl) skip_cutedsl=1; args+=(--exclude system=cutedsl) ;;
    --skip-baselines) skip_baselines=1; args+=(--exclude 'system!=cutedsl') ;;
    --output-dir) [ -n "$2" ] || die "--output-dir: expected a folder"; out=$2; shift ;;
    -n | --dry-run) dry=1; args+=("$1") ;;
    *) args+=("$1") ;;
  esac
  shift
done
[ "$skip_cutedsl$skip_baselines" != 11 ] || die "--skip-cutedsl with --skip-baselines leaves no cell to run"
fig=$(dirname "$0")
if [ -z "$out" ]; then exec "$root/scripts/run-figure.sh" "$fig" ${args[@]+"${args[@]}"}; fi
if [ "$dry" = 1 ]; then
  "$root/scripts/run-figure.sh" "$fig" ${args[@]+"${args[@]}"} || exit
  echo "$0: --output-dir: after a run, ./plot.sh ae_logs --out $out would draw its figures" >&2
  exit 0
fi
rc=0
"$root/scripts/run-figure.sh" "$fig" ${args[@]+"${args[@]}"} || rc=$?
[ "$rc" -le 1 ] || exit "$rc" # 1: some cells failed; their figures still draw (as ERR)
"$fig/plot.sh" "$fig/ae_logs" --out "$out" || exit
exit "$rc"
