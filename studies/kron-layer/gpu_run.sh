#!/usr/bin/env bash
# The one GPU run of this study (issue 14), for an H100 with a finished build (it builds
# nothing: build with `cmake -S . -B build && cmake --build build --target kronlayer repro-run
# repro-plot` first). Everything it writes goes under $OUT:
#   $OUT/check/   kronlayer check, every shape x dtype, all versions vs the CPU double
#                 reference and each other; plus v3 forced into several groups; plus
#                 compute-sanitizer memcheck/racecheck on small shapes when installed
#   $OUT/seed/    the seed's bench (--dtype f 32 128 128 bench) and v3 under a smaller
#                 shared-memory budget (more, smaller blocks) for comparison
#   $OUT/profile/ per-kernel times and Chrome traces (v1, v2, v3 at 32x128x128 fp32)
#   $OUT/logs/    the study matrix (80 cells) through ./run.sh --local, and the plot tables
# Exits non-zero when any check or any cell failed (the summary at the end says which).
#   OUT=/some/dir studies/kron-layer/gpu_run.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here" && until [ -e .repro-root ] || [ "$PWD" = / ]; do cd ..; done && pwd)
bin=${REPRO_BUILD_DIR:-$root/build}/bin
out=${OUT:?set OUT to the output folder}
[ -x "$bin/kronlayer" ] || { echo "gpu_run.sh: $bin/kronlayer is not built" >&2; exit 2; }
mkdir -p "$out/check" "$out/seed" "$out/profile" "$out/logs"
failed=()
run() { # LOG CMD...: run, keep stdout+stderr, remember a failure
  local log=$1; shift
  "$@" >"$log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ]; then failed+=("$(basename "$log") (exit $rc)"); fi
  return 0
}
nvidia-smi >"$out/nvidia-smi.txt" 2>&1

shapes=(16x32x32 32x128x128 16x16x16x16 8x64x64x64)
for d in f d; do
  for s in "${shapes[@]}"; do
    run "$out/check/$d.$s.log" "$bin/kronlayer" --dtype $d --shape $s --impl all check
  done
  # v3 split into more groups than the full budget needs (multi-group paths, both passes)
  run "$out/check/$d.16x16x16x16.v3-smem16k.log" "$bin/kronlayer" --dtype $d --shape 16x16x16x16 --impl v3 --v3-smem-kib 16 check
  run "$out/check/$d.32x128x128.v3-smem64k.log" "$bin/kronlayer" --dtype $d --shape 32x128x128 --impl v3 --v3-smem-kib 64 check
  run "$out/check/$d.3x5x7x6.log" "$bin/kronlayer" --dtype $d --shape 3x5x7x6 --impl all check
done
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    run "$out/check/sanitizer-$tool.log" compute-sanitizer --tool $tool --error-exitcode 9 \
      "$bin/kronlayer" --dtype f --shape 4x8x4x6 --impl all --v3-smem-kib 2 check --warmup 0 --runs 1
  done
fi

run "$out/seed/bench-f-32-128-128.log" "$bin/kronlayer" --dtype f 32 128 128 bench
run "$out/seed/bench-d-32-128-128.log" "$bin/kronlayer" --dtype d 32 128 128 bench
for k in 227 100 64; do
  run "$out/seed/v3-f-32x128x128-smem${k}k.log" "$bin/kronlayer" --dtype f --shape 32x128x128 --impl v3 --v3-smem-kib $k bench
done

for v in v1 v2 v3; do
  run "$out/profile/$v.log" "$bin/kronlayer" --dtype f --shape 32x128x128 --impl $v profile --trace "$out/profile/$v.json"
done

# the study matrix, local executor, this machine's GPU as h100
(cd "$here" && REPRO_BUILD_DIR=${REPRO_BUILD_DIR:-$root/build} ./run.sh --local --device h100 -c "$root/clusters/generic.yaml" -q) >"$out/logs/run.txt" 2>&1 \
  || failed+=("study run (see logs/run.txt)")
cp -L "$here"/ae_logs/*.log "$out/logs/" 2>/dev/null || failed+=("no study logs")
(cd "$here" && ./plot.sh ae_logs --out "$out/logs/figures") >"$out/logs/plot.txt" 2>&1 || true

echo "kron-layer GPU run: ${#failed[@]} failure(s)" | tee "$out/summary.txt"
for f in ${failed[@]+"${failed[@]}"}; do echo "  $f" | tee -a "$out/summary.txt"; done
grep -h '^check .*ok=0' "$out"/check/*.log "$out"/logs/*.log 2>/dev/null | head -40 | tee -a "$out/summary.txt"
[ ${#failed[@]} -eq 0 ]
