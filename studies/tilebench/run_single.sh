#!/usr/bin/env bash
# Reruns one cell (or a filter) into the current run, e.g.
#   ./run_single.sh gemm wgmma                         # every GEMM size and dtype of wgmma
#   ./run_single.sh gemm wgmma m=8192 dtype=fp16       # one cell: case keys and axes as key=value
#   ./run_single.sh mha fused seqlen=4096 causal=1     # MHA: batch heads seqlen dim, causal
#   ./run_single.sh nsa torch selected_blocks=8        # NSA: ... block_size groups selected_blocks
# A run made with --cases test or nsa_only is rerun in its own lists (repro-run reads them from
# the run); options of repro-run pass through (--dry-run, -c FILE, --local, --device LABEL, ...).
# the repository root: the nearest folder above this one that holds .repro-root
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ] || [ "$PWD" = / ]; do cd ..; done && pwd)
[ -e "$root/.repro-root" ] || { echo "$0: no .repro-root above this folder" >&2; exit 2; }
exec "$root/scripts/run-single.sh" "$(dirname "$0")" "experiment system" "$@"
