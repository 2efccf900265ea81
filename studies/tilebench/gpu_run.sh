#!/usr/bin/env bash
# The GPU run of this study, for a GPU machine with a finished build and torch (it
# builds nothing: `cmake -S . -B build && cmake --build build --target attnvar gemmbench
# repro-run repro-plot` first). Runs the case lists named in $LISTS (default "test default";
# nsa_only on request) through ./run.sh --local on this machine's GPU (run.sh names the device
# from nvidia-smi: h100, h200 or a100; DEVICE=h100 forces one), one run per list, then per list
# the table (csv and the seed's JSON) and the figures, and one merged table of every list.
# Everything it writes goes under $OUT:
#   $OUT/nvidia-smi.txt          the GPU
#   $OUT/<list>/logs/            the cells' logs of that list, run.txt (the runner)
#   $OUT/<list>/figures/         {gemm,mha,nsa}_comparison_<device>, speedup_comparison_<device>
#   $OUT/<list>/table.{csv,json} repro-plot table; plot.txt (the terminal tables)
#   $OUT/tilebench.{csv,json}    every list merged (repro-plot merge)
#   $OUT/figures/                the figures of that merged table (repro-plot draw --table: the
#                                seed's `visualize.py complete.json`); $OUT/plot.txt its tables
# Each list's runner stops at ${BUDGET_S:-540} s; run again with RESUME=1 and that one list to
# finish the cells without a good log (RESUME continues the latest run, whose case list
# repro-run reads from it). CLUSTER=FILE replaces clusters/generic.yaml (the study's test runs
# this script in CPU mode with clusters/local-test.yaml).
#   OUT=/some/dir studies/tilebench/gpu_run.sh [--only experiment=gemm ...]
#   LISTS="nsa_only" OUT=/some/dir studies/tilebench/gpu_run.sh
#   RESUME=1 LISTS=default OUT=/some/dir studies/tilebench/gpu_run.sh
# Exits non-zero when a runner failed or timed out (the summary names the failed checks).
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ]; do [ "$PWD" != / ] || exit; cd ..; done && pwd) ||
  { echo "$0: no .repro-root above this folder" >&2; exit 2; }
# shellcheck source=scripts/lib/root.sh
. "$root/scripts/lib/root.sh"
repro_help "$@"
set -u
build=${REPRO_BUILD_DIR:-$root/build}
bin=$build/bin
out=${OUT:?set OUT to the output folder}
for b in attnvar repro-run repro-plot; do
  [ -x "$bin/$b" ] || { echo "gpu_run.sh: $bin/$b is not built" >&2; exit 2; }
done
[ -x "$bin/gemmbench" ] || echo "gpu_run.sh: note: $bin/gemmbench is not built: the gemm cells of ours will fail" >&2
export REPRO_RUN=${REPRO_RUN:-$bin/repro-run} # run.sh's runner: the same build's
mkdir -p "$out"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
dev=()
[ -n "${DEVICE:-}" ] && dev=(--device "$DEVICE")
resume=()
[ "${RESUME:-0}" = 1 ] && resume=(--resume)
status=0 tables=()
: >"$out/summary.txt"
for list in ${LISTS:-test default}; do
  o=$out/$list
  mkdir -p "$o/logs"
  rc=0
  (cd "$here" && REPRO_BUILD_DIR=$build timeout "${BUDGET_S:-540}" \
    ./run.sh --local -c "${CLUSTER:-$root/clusters/generic.yaml}" -q --cases "$list" ${dev[@]+"${dev[@]}"} \
    ${resume[@]+"${resume[@]}"} "$@") >>"$o/logs/run.txt" 2>&1 || rc=$?
  [ $rc -eq 0 ] || status=1
  cp -L "$here"/ae_logs/*.log "$o/logs/" 2>/dev/null || echo "no logs" >>"$o/logs/run.txt"
  "$bin/repro-plot" draw --config "$here/experiment.yaml" --logs "$o/logs" --out "$o/figures" >"$o/plot.txt" 2>&1
  "$bin/repro-plot" table --config "$here/experiment.yaml" --logs "$o/logs" -o "$o/table.csv" 2>/dev/null
  "$bin/repro-plot" table --config "$here/experiment.yaml" --logs "$o/logs" --format json -o "$o/table.json" 2>/dev/null
  [ -s "$o/table.csv" ] && tables+=("$o/table.csv")
  echo "tilebench $list: runner exit $rc ($([ $rc = 124 ] && echo 'budget reached: RESUME=1' || echo 'done')); $(find "$o/logs" -maxdepth 1 -name '*.log' 2>/dev/null | wc -l) logs" \
    | tee -a "$out/summary.txt"
  grep -H '^check .*ok=0' "$o"/logs/*.log 2>/dev/null | head -20 | tee -a "$out/summary.txt"
  grep -l '^result status=error' "$o"/logs/*.log 2>/dev/null | sed 's/^/  error: /' | tee -a "$out/summary.txt"
done
if [ ${#tables[@]} -gt 0 ]; then
  "$bin/repro-plot" merge -o "$out/tilebench.csv" "${tables[@]}" 2>>"$out/summary.txt"
  "$bin/repro-plot" merge --format json -o "$out/tilebench.json" "${tables[@]}" 2>/dev/null
  "$bin/repro-plot" draw --config "$here/experiment.yaml" --table "$out/tilebench.json" \
    --out "$out/figures" >"$out/plot.txt" 2>&1
fi
exit $status
