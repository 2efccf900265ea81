#!/usr/bin/env bash
# The one GPU run of this study, for an H100 with a finished build and torch (it
# builds nothing: `cmake -S . -B build && cmake --build build --target attnvar repro-run
# repro-plot` first). The matrix (8 configurations x 7 systems = 56 cells; flashcore-triton
# is absent) through ./run.sh --local on this machine's GPU as h100; then the plot and the
# report. Everything it writes goes under $OUT:
#   $OUT/nvidia-smi.txt   the GPU (SXM or PCIe: see also sms= in every log's meta line)
#   $OUT/logs/            the cells' logs, run.txt (the runner), plot.txt, report.txt
# Budget: ~10 s a cell for the peers (torch import, inputs, 16-pair check, 30 calls), ~20-40 s
# for the compiled ones (sdpa-compiled, flex), seconds for ours (bf16 unsupported, unfused
# oom): about 7-9 minutes. The runner stops at ${BUDGET_S:-520} s; when it did, run again
# with RESUME=1 (only the cells without a good log run):
#   OUT=/some/dir studies/sdpa-scale/gpu_run.sh [--only system=flex ...]
#   RESUME=1 OUT=/some/dir studies/sdpa-scale/gpu_run.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here" && until [ -e .repro-root ] || [ "$PWD" = / ]; do cd ..; done && pwd)
bin=${REPRO_BUILD_DIR:-$root/build}/bin
out=${OUT:?set OUT to the output folder}
[ -x "$bin/attnvar" ] || { echo "gpu_run.sh: $bin/attnvar is not built" >&2; exit 2; }
mkdir -p "$out/logs"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
resume=()
[ "${RESUME:-0}" = 1 ] && resume=(--resume)
rc=0
(cd "$here" && REPRO_BUILD_DIR=${REPRO_BUILD_DIR:-$root/build} timeout "${BUDGET_S:-520}" \
  ./run.sh --local --device h100 -c "$root/clusters/generic.yaml" -q ${resume[@]+"${resume[@]}"} "$@") \
  >>"$out/logs/run.txt" 2>&1 || rc=$?
cp -L "$here"/ae_logs/*.log "$out/logs/" 2>/dev/null || echo "no study logs" >>"$out/logs/run.txt"
(cd "$here" && ./plot.sh ae_logs --out "$out/logs/figures") >"$out/logs/plot.txt" 2>&1 || true
"$here/report.sh" "$here/ae_logs" >"$out/logs/report.txt" 2>&1 || true
echo "sdpa-scale GPU run: runner exit $rc ($([ $rc = 124 ] && echo 'budget reached: RESUME=1' || echo 'done'))" \
  | tee "$out/summary.txt"
grep -h '^check .*ok=0' "$out"/logs/*.log 2>/dev/null | head -20 | tee -a "$out/summary.txt"
cat "$out/logs/report.txt"
[ $rc -eq 0 ]
