#!/usr/bin/env bash
# Reruns one cell (or a filter) into the current run:
#   ./run_single.sh EXPERIMENT [SYSTEM] [key=value ...] [repro-run options]
#   ./run_single.sh base torch                      # one cell of the seed's comparison
#   ./run_single.sh diag ours diag_k=4              # k = 4, both cache dtypes
#   ./run_single.sh scale ours seqlen=8192 diag_k=1 cache_dtype=fp16
# The seed's own spelling works too (its systems torch, torchinductor, tensorrt, flashtensor,
# ours; --diagonal_k=K, an integer 1-31 as the seed's, anything else stops with exit 2, selects
# experiment diag with an fp32 cache unless cache_dtype= is given):
#   ./run_single.sh --system=ours --diagonal_k=4
#   ./run_single.sh --system=ours --diagonal_k=3    # a k diag does not list: an ad-hoc cell
#   ./run_single.sh --system=flashtensor
# The words fill the axes experiment, system in that order (the leading ones at least);
# key=value names any other axis or case key. repro-run's options pass through with their
# values (--dry-run, --local, -c FILE, --device LABEL, --only K=V, --cases NAME, ...). The
# cells run again in the current run (the one ae_logs points to), in its case lists and with
# its cluster file unless given: the new logs go to its logs/, the old ones move to its
# attempts/. Without a current run it stops (exit 2; ./run.sh starts one). Needs the build, as
# ./run.sh does.
# A k that the diag_k axis of diag (or scale) does not list runs as an ad-hoc cell: the axis's
# range in experiment.yaml (0-31) allows it. It joins the current run (its select record keeps
# it, so ./run.sh --resume does too) and its log, named as the matrix's
# (diag.DEVICE.ours.4096.k3.fp32.log), lands in the run's logs/ beside the others, where
# plot_diag.sh draws it as one more k (runner/README.md, "Ad-hoc values").
#   ./run_single.sh -h | --help   this text (needs no build, writes nothing)
for a in "$@"; do
  case $a in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
done
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ]; do [ "$PWD" != / ] || exit; cd ..; done && pwd) ||
  { echo "$0: no .repro-root above this folder" >&2; exit 2; }
# shellcheck source=scripts/lib/root.sh
. "$root/scripts/lib/root.sh"
args=() sys="" k="" k_given=0 dtype_given=0
for a in "$@"; do
  case "$a" in
    --system=*) sys=${a#--system=} ;;
    --diagonal_k=*) k=${a#--diagonal_k=} k_given=1 ;;
    cache_dtype=*) dtype_given=1; args+=("$a") ;;
    *) args+=("$a") ;;
  esac
done
[ "$sys" = torchinductor ] && sys=inductor
# the seed's --diagonal_k takes 1-31 (its line 60), written plainly: the log name holds it
if [ "$k_given" = 1 ] && ! { [[ "$k" =~ ^[1-9][0-9]?$ ]] && [ "$k" -le 31 ]; }; then
  printf "run_single.sh: --diagonal_k=%q: expected an integer in 1-31 (the seed's range)\n" "$k" >&2
  [ "$k" = 0 ] && echo "run_single.sh: k = 0 (no cache, the fused kernels): ./run_single.sh diag ours diag_k=0" >&2
  exit 2
fi
if [ "$k_given" = 1 ]; then
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
