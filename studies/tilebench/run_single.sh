#!/usr/bin/env bash
# Reruns one cell (or a filter) into the current run:
#   ./run_single.sh EXPERIMENT [SYSTEM] [key=value ...] [repro-run options]
#   ./run_single.sh gemm wgmma                         # every GEMM size and dtype of wgmma
#   ./run_single.sh gemm wgmma m=8192 dtype=fp16       # one cell: case keys and axes as key=value
#   ./run_single.sh mha fused seqlen=4096 causal=1     # MHA: batch heads seqlen dim, causal
#   ./run_single.sh nsa torch selected_blocks=8        # NSA: ... block_size groups selected_blocks
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ]; do [ "$PWD" != / ] || exit; cd ..; done && pwd) ||
  { echo "$0: no .repro-root above this folder" >&2; exit 2; }
# shellcheck source=scripts/lib/root.sh
. "$root/scripts/lib/root.sh"
# the body fills these axes with the words; its --help adds the rules every run_single.sh shares
exec "$root/scripts/run-single.sh" "$here" "experiment system" "$@"
