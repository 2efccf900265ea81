#!/usr/bin/env bash
# The one GPU run of this study, for an H100 with a finished build and torch (it
# builds nothing: `cmake -S . -B build && cmake --build build --target attnvar repro-run
# repro-plot` first; fa3, fa2 and flashinfer run only in an attnvar built with their projects'
# sources, kernels/attention/{fa3,fa2,flashinfer}/README.md, else their cells log unsupported).
# The matrix through ./run.sh --local on this machine's GPUs (one cell per GPU at a time) as
# ${DEVICE:-h100}: the 8 configurations of D 128/64 (8 systems: 64 cells), d96-c1-fp16 and
# d256-c1-fp16 (10: fa2 and flashinfer too), gemma2-d256-c1-fp16 (5: the systems that soft-cap),
# 89 cells per device (flashcore-triton is absent); then the plot and the report. Everything
# it writes goes under $OUT:
#   $OUT/nvidia-smi.txt   the GPU (SXM or PCIe: see also sms= in every log's meta line)
#   $OUT/logs/            the cells' logs, run.txt (the runner), plot.txt, report.txt
# Budget, from the meta dates of the shipped logs (one H100): a peer cell 5-10 s (torch import,
# inputs, 16-pair check, 30 calls), 20-30 s for the compiled ones (sdpa-compiled, flex); unfused
# 5 s (oom); an attnvar cell that runs (fused, fa3, fa2, flashinfer) checks check_pairs (16)
# groups drawn per cell (--check-pairs) against the GPU reference's tiled form: 76 ms of
# reference at D=128 causal (H200; a check of all 1536 pairs takes 7.7 s with it, 16-75 s with
# the naive form the logs of 5e56793 used). Those logs' D=128 configurations took 8.5 minutes
# without fa3, the D=64 ones 5; the three added
# experiments about 10 of one GPU (5 minutes on two), more than a 10-minute session holds with
# the rest. The runner stops at ${BUDGET_S:-520} s; when it did (exit 124), run again with
# RESUME=1 (only the cells without a good log of that run run), or spread the cells over the
# GPUs of a larger machine (the runner takes every GPU it sees; the three added experiments took
# 5 minutes on two H100s, 2026-11-27):
#   OUT=/some/dir studies/sdpa-scale/gpu_run.sh [--only experiment=d128-c1-fp16 ...]
#   RESUME=1 OUT=/some/dir studies/sdpa-scale/gpu_run.sh
# Only the added experiments (head dims 96 and 256, Gemma-2):
#   OUT=/some/dir studies/sdpa-scale/gpu_run.sh --only experiment=d96-c1-fp16 \
#     --only experiment=d256-c1-fp16 --only experiment=gemma2-d256-c1-fp16
# DEVICE=h200 labels the cells of an H200 so (default h100).
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ]; do [ "$PWD" != / ] || exit; cd ..; done && pwd) ||
  { echo "$0: no .repro-root above this folder" >&2; exit 2; }
# shellcheck source=scripts/lib/root.sh
. "$root/scripts/lib/root.sh"
repro_help "$@"
set -u
bin=${REPRO_BUILD_DIR:-$root/build}/bin
out=${OUT:?set OUT to the output folder}
[ -x "$bin/attnvar" ] || { echo "gpu_run.sh: $bin/attnvar is not built" >&2; exit 2; }
mkdir -p "$out/logs"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
resume=()
[ "${RESUME:-0}" = 1 ] && resume=(--resume)
rc=0
(cd "$here" && REPRO_BUILD_DIR=${REPRO_BUILD_DIR:-$root/build} timeout "${BUDGET_S:-520}" \
  ./run.sh --local --device "${DEVICE:-h100}" -c "$root/clusters/generic.yaml" -q ${resume[@]+"${resume[@]}"} "$@") \
  >>"$out/logs/run.txt" 2>&1 || rc=$?
cp -L "$here"/ae_logs/*.log "$out/logs/" 2>/dev/null || echo "no study logs" >>"$out/logs/run.txt"
(cd "$here" && ./plot.sh ae_logs --out "$out/logs/figures") >"$out/logs/plot.txt" 2>&1 || true
"$here/report.sh" "$here/ae_logs" >"$out/logs/report.txt" 2>&1 || true
echo "sdpa-scale GPU run: runner exit $rc ($([ $rc = 124 ] && echo 'budget reached: RESUME=1' || echo 'done'))" \
  | tee "$out/summary.txt"
grep -h '^check .*ok=0' "$out"/logs/*.log 2>/dev/null | head -20 | tee -a "$out/summary.txt"
cat "$out/logs/report.txt"
[ $rc -eq 0 ]
