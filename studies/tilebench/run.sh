#!/usr/bin/env bash
# Runs this folder's matrix as every figure's run.sh does (scripts/run-figure.sh, whose usage
# --help prints first), with the tile-benchmark seed's run_benchmark.sh options mapped onto
# repro-run's (AND with the other filters):
#   --warmup N           warmup runs of every cell (repro-run --set warmup=N)
#   --iters N            timed runs of every cell (--set runs=N); with --cases test, whose
#                        cases set warmup and runs themselves, both are refused
#   --kernels LIST       only these kernels, comma-separated of gemm, mha, nsa (--exclude
#                        experiment=K for the others)
#   --skip-cutedsl       leave out the CuTeDSL backend (--exclude system=cutedsl)
#   --skip-baselines     the CuTeDSL backend alone (--exclude 'system!=cutedsl')
#   --output-dir DIR     after the run, draw its figures and tables into DIR
#                        (./plot.sh ae_logs --out DIR); with --dry-run only said
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ]; do [ "$PWD" != / ] || exit; cd ..; done && pwd) ||
  { echo "$0: no .repro-root above this folder" >&2; exit 2; }
# shellcheck source=scripts/lib/root.sh
. "$root/scripts/lib/root.sh"
if repro_wants_help "$@"; then repro_usage "$root/scripts/run-figure.sh"; repro_usage "$0"; exit 0; fi
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
fig=$here
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
