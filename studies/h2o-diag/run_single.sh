#!/usr/bin/env bash
# Reruns one cell (or a filter) into the current run, e.g.
#   ./run_single.sh base torch                      # one cell of the seed's comparison
#   ./run_single.sh diag ours diag_k=4              # k = 4, both cache dtypes
#   ./run_single.sh scale ours seqlen=8192 diag_k=1 cache_dtype=fp16
# The seed's own spelling works too (its systems torch, torchinductor, tensorrt, flashtensor,
# ours; --diagonal_k=K selects experiment diag with an fp32 cache unless cache_dtype= is given):
#   ./run_single.sh --system=ours --diagonal_k=4
#   ./run_single.sh --system=flashtensor
# Options of repro-run pass through (--dry-run, -c FILE, --local, --device LABEL, ...).
# the repository root: the nearest folder above this one that holds .repro-root
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ] || [ "$PWD" = / ]; do cd ..; done && pwd)
[ -e "$root/.repro-root" ] || { echo "$0: no .repro-root above this folder" >&2; exit 2; }
args=() sys="" k="" dtype_given=0
for a in "$@"; do
  case "$a" in
    --system=*) sys=${a#--system=} ;;
    --diagonal_k=*) k=${a#--diagonal_k=} ;;
    cache_dtype=*) dtype_given=1; args+=("$a") ;;
    *) args+=("$a") ;;
  esac
done
[ "$sys" = torchinductor ] && sys=inductor
if [ -n "$k" ]; then
  [ -z "$sys" ] && sys=ours
  if [ "$sys" != ours ]; then
    echo "run_single.sh: --diagonal_k is an option of --system=ours, not of --system=$sys" >&2
    exit 2
  fi
  pre=(experiment=diag system=ours "diag_k=$k")
  [ "$dtype_given" = 1 ] || pre+=(cache_dtype=fp32)
  args=("${pre[@]}" ${args[@]+"${args[@]}"})
elif [ -n "$sys" ]; then
  args=(experiment=base "system=$sys" ${args[@]+"${args[@]}"})
fi
exec "$root/scripts/run-single.sh" "$(dirname "$0")" "experiment system" ${args[@]+"${args[@]}"}
