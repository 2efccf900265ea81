#!/usr/bin/env bash
# The GPU run of this study, on an H100 or H200 with a finished build of kronlayer (build with
# `cmake -S . -B build && cmake --build build --target kronlayer repro-run repro-plot` first);
# the PyTorch extension it builds itself, where python3 has a CUDA torch. Everything it writes
# goes under $OUT:
#   $OUT/check/   kronlayer check, every shape x dtype: every --impl's forward and backward
#                 against the CPU double reference and each other; v3's other paths (fused on
#                 large shapes, per axis on small ones, small tiles, odd shapes); under
#                 compute-sanitizer (memcheck, racecheck) on small shapes when it is installed
#   $OUT/bench/   kronlayer bench of v1, v2, v3 at every shape x dtype (fwd and bwd)
#   $OUT/torch/   kronlayer_torch (kernels/kron/torch_ext) built in a scratch folder for this
#                 GPU, then tests/kron/test_torch_ext.py --device cuda (gradcheck in fp64 among
#                 them), the seed's test.py check (32x128x128, 8x64x64x64, fp32 and fp64),
#                 profile, and bench at every shape x dtype (v1, v2, v3 inside PyTorch); skipped,
#                 saying why, where python3 has no CUDA torch
#   $OUT/summary.txt  the failures, then a table of the bench medians against v3's targets
# With --torch it runs $OUT/torch/ alone (and its part of the summary); with --sweep, v3's plan
# knobs alone ($OUT/sweep.txt: every study shape x dtype under --v3-fuse x --v3-smem-kib, then
# the large shapes under forced warp tiles, PDL off and gradient row splits; median us of
# kronlayer bench, 10 warmups and 30 runs, and the plan each ran). With --quick (about
# 2 minutes on an H100, and the extension's build) it stops there; else it goes on with
#   $OUT/seed/    the seed's bench (--dtype f 32 128 128 bench) and v3 under smaller budgets
#   $OUT/profile/ per-kernel times and Chrome traces (v1, v2, v3 at 32x128x128 fp32)
#   $OUT/logs/    the study matrix (80 cells) through ./run.sh --local, and the plot tables
# The logs' device label is the GPU's (h100 or h200 from nvidia-smi's name; REPRO_DEVICE sets
# it). Exits non-zero when any check or any cell failed (the summary says which).
#   OUT=/some/dir studies/kron-layer/gpu_run.sh [--quick | --torch | --sweep]
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ]; do [ "$PWD" != / ] || exit; cd ..; done && pwd) ||
  { echo "$0: no .repro-root above this folder" >&2; exit 2; }
# shellcheck source=scripts/lib/root.sh
. "$root/scripts/lib/root.sh"
repro_help "$@"
set -u
bin=${REPRO_BUILD_DIR:-$root/build}/bin
out=${OUT:?set OUT to the output folder}
quick=0 torch_only=0 sweep_only=0
case "${1:-}" in
  --quick) quick=1 ;;
  --torch) torch_only=1 ;;
  --sweep) sweep_only=1 ;;
  "") ;;
  *) echo "usage: OUT=DIR $0 [--quick | --torch | --sweep]" >&2; exit 2 ;;
esac
[ -x "$bin/kronlayer" ] || { echo "gpu_run.sh: $bin/kronlayer is not built" >&2; exit 2; }
failed=()
shapes=(16x32x32 32x128x128 16x16x16x16 8x64x64x64)
run() { # LOG CMD...: run, keep stdout+stderr, remember a failure
  local log=$1; shift
  "$@" >"$log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ]; then failed+=("$(basename "$log") (exit $rc)"); fi
  return 0
}
mkdir -p "$out"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
device=${REPRO_DEVICE:-}
if [ -z "$device" ]; then
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  case "$gpu_name" in
    *H200*) device=h200 ;;
    *H100*) device=h100 ;;
    *) echo "gpu_run.sh: no device label for GPU '$gpu_name' (expected an H100 or H200; set REPRO_DEVICE)" >&2
       exit 2 ;;
  esac
fi

# kronlayer_torch: built for this GPU in a scratch folder (nothing in the tree), then its tests,
# the seed's test.py check and profile, and test.py bench at every shape x dtype
torch_run() {
  local t=$out/torch ext=$root/kernels/kron/torch_ext py=${REPRO_PYTHON:-python3}
  mkdir -p "$t"
  if ! "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' >"$t/skipped.txt" 2>&1; then
    echo "$py has no CUDA torch: kronlayer_torch not built" >>"$t/skipped.txt"
    return 0
  fi
  rm -f "$t/skipped.txt"
  local work
  work=$(mktemp -d)
  KRON_EXT_CUDA=1 TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0a} MAX_JOBS=${MAX_JOBS:-8} \
    "$ext/build_into.sh" "$py" "$work" >"$t/build.log" 2>&1 \
    || { failed+=("torch/build.log (the extension's build)"); return 0; }
  export PYTHONPATH=$work/lib
  run "$t/test_torch_ext.log" "$py" "$root/tests/kron/test_torch_ext.py" --device cuda --expect-cuda 1
  for d in f d; do
    for s in "32 128 128" "8 64 64 64"; do
      # shellcheck disable=SC2086 # the sizes are words
      run "$t/check-$d-${s// /x}.log" "$py" "$ext/test.py" --dtype $d $s check
    done
  done
  run "$t/profile-f-32x128x128.log" "$py" "$ext/test.py" --dtype f 32 128 128 profile \
    --implementation v3 --implementation v2 --trace "$t/trace_{impl}.json"
  for d in f d; do
    for s in "16 32 32" "32 128 128" "16 16 16 16" "8 64 64 64"; do
      # shellcheck disable=SC2086
      run "$t/bench-$d-${s// /x}.log" "$py" "$ext/test.py" --dtype $d $s bench --min-run-time 0.5
    done
  done
  unset PYTHONPATH
  rm -rf "$work"
}

# test.py bench's table as rows: shape dtype pass v1 v2 v3 v2/v3 (us)
torch_table() {
  local f d s
  for f in "$out"/torch/bench-*.log; do
    [ -e "$f" ] || return 0
    d=$(basename "$f" .log | cut -d- -f2)
    s=$(basename "$f" .log | cut -d- -f3)
    awk -v s="$s" -v d="$d" '/\|/ && /\(/ { n = split($0, c, "|"); rows[++k] = (c[1] ~ /bwd/ ? "bwd" : "fwd");
        v1[k] = c[2] + 0; v2[k] = c[3] + 0; v3[k] = c[4] + 0 }
      /^Times are in milliseconds/ { u = 1000 } /^Times are in seconds/ { u = 1e6 }
      END { if (!u) u = 1; for (i = 1; i <= k; i++)
        printf "%-12s %-5s %-4s %9.1f %9.1f %9.1f %9.2f\n", s, d, rows[i], v1[i] * u, v2[i] * u,
               v3[i] * u, (v3[i] > 0 ? v2[i] / v3[i] : 0) }' "$f"
  done
}

torch_summary() { # the extension's tests and check lines, then test.py bench's table
  if [ -e "$out/torch/skipped.txt" ]; then
    echo "kronlayer_torch: $(tail -1 "$out/torch/skipped.txt")"
  elif [ -d "$out/torch" ]; then
    echo "kronlayer_torch: $(tail -1 "$out/torch/test_torch_ext.log" 2>/dev/null);" \
      "test.py check pairs True: $(cat "$out"/torch/check-*.log 2>/dev/null | grep -c ': True (')" \
      "of $(cat "$out"/torch/check-*.log 2>/dev/null | grep -c ' == ')"
    echo "test.py bench (torch.utils.benchmark, us per call, the seed's timing; v2/v3 > 1: v3 faster)"
    printf '%-12s %-5s %-4s %9s %9s %9s %9s\n' shape dtype pass v1 v2 v3 v2/v3
    torch_table
  fi
}

# v3's plan knobs: one line per run, median us of the forward and the backward, the plan
sweep_line() { # LABEL ENV... -- KRONLAYER ARGS...: one bench, one line
  local label=$1 envs=() o
  shift
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  o=$(env ${envs[@]+"${envs[@]}"} "$bin/kronlayer" "$@" --impl v3 bench --warmup 10 --runs 30 2>&1)
  printf '%-44s %9s %9s  %s\n' "$label" \
    "$(sed -n 's/^time impl=v3 pass=fwd .*median_us=\([0-9.]*\).*/\1/p' <<<"$o" | head -1)" \
    "$(sed -n 's/^time impl=v3 pass=bwd .*median_us=\([0-9.]*\).*/\1/p' <<<"$o" | head -1)" \
    "$(sed -n 's/^plan impl=v3 pass=bwd //p' <<<"$o" | head -1)"
}
sweep() {
  local s d fu kib t n
  printf '%-44s %9s %9s  %s\n' "shape dtype knobs" fwd_us bwd_us "plan (bwd)"
  for s in "${shapes[@]}"; do
    for d in f d; do
      for fu in auto on off; do
        for kib in 227 96 48 24; do
          sweep_line "$s $d fuse=$fu smem_kib=$kib" -- --dtype $d --shape "$s" --v3-fuse $fu --v3-smem-kib $kib
        done
      done
    done
  done
  for s in 32x128x128 8x64x64x64; do
    for d in f d; do
      for t in 1x4 2x2 1x2 1x1 2x4; do
        sweep_line "$s $d tc_tile=$t" REPRO_KRON_TC_TILE=$t -- --dtype $d --shape "$s"
      done
      sweep_line "$s $d pdl=0" REPRO_KRON_PDL=0 -- --dtype $d --shape "$s"
      for n in 8 16 32 64; do
        sweep_line "$s $d ga_split=$n" REPRO_KRON_GA_SPLIT=$n -- --dtype $d --shape "$s"
      done
    done
  done
}

if [ $sweep_only = 1 ]; then
  sweep | tee "$out/sweep.txt"
  exit 0
fi

if [ $torch_only = 1 ]; then
  torch_run
  { echo "kron-layer GPU run (--torch): ${#failed[@]} failure(s)"
    for f in ${failed[@]+"${failed[@]}"}; do echo "  $f"; done
    torch_summary; } | tee "$out/summary.txt"
  [ ${#failed[@]} -eq 0 ]
  exit
fi

mkdir -p "$out/check" "$out/bench"
for d in f d; do
  for s in "${shapes[@]}"; do
    run "$out/check/$d.$s.log" "$bin/kronlayer" --dtype $d --shape "$s" --impl all check
  done
  # v3's other paths: a fused stage on the large shapes, one stage per axis on the small ones,
  # small tiles (a 16 KiB budget), odd shapes (element-wise copies and columns)
  run "$out/check/$d.8x64x64x64.v3-fuse-on.log" "$bin/kronlayer" --dtype $d --shape 8x64x64x64 --impl v3 --v3-fuse on check
  run "$out/check/$d.32x128x128.v3-fuse-on.log" "$bin/kronlayer" --dtype $d --shape 32x128x128 --impl v3 --v3-fuse on check
  run "$out/check/$d.16x16x16x16.v3-fuse-off.log" "$bin/kronlayer" --dtype $d --shape 16x16x16x16 --impl v3 --v3-fuse off check
  run "$out/check/$d.16x16x16x16.v3-smem16k.log" "$bin/kronlayer" --dtype $d --shape 16x16x16x16 --impl v3 --v3-smem-kib 16 check
  run "$out/check/$d.3x5x7x6.log" "$bin/kronlayer" --dtype $d --shape 3x5x7x6 --impl all check
  run "$out/check/$d.5x12x6x10.v3-fuse-off.log" "$bin/kronlayer" --dtype $d --shape 5x12x6x10 --impl v3 --v3-fuse off check
  # the CUDA-core path where the tensor cores run by default, and the tensor cores under a
  # small budget (several tiles per block: the prefetch) and on smaller mma-sized factors
  run "$out/check/$d.32x128x128.v3-tc-off.log" "$bin/kronlayer" --dtype $d --shape 32x128x128 --impl v3 --v3-tc off check
  run "$out/check/$d.8x64x64x64.v3-tc-off.log" "$bin/kronlayer" --dtype $d --shape 8x64x64x64 --impl v3 --v3-tc off check
  kib=$([ $d = f ] && echo 24 || echo 48) # a 64x64 factor and small tiles: 17 KiB fp32, 35 fp64
  run "$out/check/$d.64x64x64.v3-smem${kib}k.log" "$bin/kronlayer" --dtype $d --shape 64x64x64 --impl v3 --v3-fuse off --v3-smem-kib "$kib" check
  run "$out/check/$d.3x48x16x32.v3-fuse-off.log" "$bin/kronlayer" --dtype $d --shape 3x48x16x32 --impl v3 --v3-fuse off check
  # the pair stage (the last two axes in one tensor-core kernel) on its own shapes (square and
  # not, fa < fb and fa > fb) and with other warp tiles than the plan's
  for s in 4x64x16x32 5x40x32x16 3x48x16x32; do
    run "$out/check/$d.$s.pair.log" "$bin/kronlayer" --dtype $d --shape "$s" --impl all check
  done
  for tile in 1x1 2x2; do
    run "$out/check/$d.4x64x16x32.pair-tile$tile.log" env REPRO_KRON_TC_TILE=$tile \
      "$bin/kronlayer" --dtype $d --shape 4x64x16x32 --impl v3 check
  done
done
sanitizer=$(command -v compute-sanitizer || true)
[ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && sanitizer=/usr/local/cuda/bin/compute-sanitizer
if [ -n "$sanitizer" ]; then
  for tool in memcheck racecheck; do
    # v3 with several tiles per block (the prefetch): per axis, aligned (16-byte copies,
    # vector micro-tiles, interleaved slabs), then fused in fp64 (side outputs)
    run "$out/check/sanitizer-$tool-v3.log" "$sanitizer" --tool $tool --error-exitcode 9 \
      "$bin/kronlayer" --dtype f --shape 16x32x32x32 --impl v3 --v3-fuse off --v3-smem-kib 24 check --warmup 0 --runs 1
    run "$out/check/sanitizer-$tool-v3-fused-d.log" "$sanitizer" --tool $tool --error-exitcode 9 \
      "$bin/kronlayer" --dtype d --shape 600x8x16x8 --impl v3 --v3-fuse on check --warmup 0 --runs 1
    # the tensor cores: one tile per block, then several (prefetch), both dtypes; the pair stage
    for d in f d; do
      run "$out/check/sanitizer-$tool-v3-pair-$d.log" "$sanitizer" --tool $tool --error-exitcode 9 \
        "$bin/kronlayer" --dtype $d --shape 4x64x16x32 --impl v3 check --warmup 0 --runs 1
      run "$out/check/sanitizer-$tool-v3-tc-$d.log" "$sanitizer" --tool $tool --error-exitcode 9 \
        "$bin/kronlayer" --dtype $d --shape 4x64x64 --impl v3 --v3-fuse off check --warmup 0 --runs 1
      kib=$([ $d = f ] && echo 24 || echo 48)
      run "$out/check/sanitizer-$tool-v3-tc-prefetch-$d.log" "$sanitizer" --tool $tool --error-exitcode 9 \
        "$bin/kronlayer" --dtype $d --shape 64x64x64 --impl v3 --v3-fuse off --v3-smem-kib "$kib" check --warmup 0 --runs 1
    done
  done
  # every version (cuBLAS included) on an odd shape: element-wise paths
  run "$out/check/sanitizer-memcheck-all-odd.log" "$sanitizer" --tool memcheck --error-exitcode 9 \
    "$bin/kronlayer" --dtype f --shape 4x8x4x6 --impl all --v3-smem-kib 2 check --warmup 0 --runs 1
else
  echo "compute-sanitizer: not installed, skipped" >"$out/check/sanitizer-skipped.txt"
fi

for d in f d; do
  for s in "${shapes[@]}"; do
    run "$out/bench/$d.$s.log" "$bin/kronlayer" --dtype $d --shape "$s" --impl all bench
    run "$out/bench/$d.$s.v3-tc-off.log" "$bin/kronlayer" --dtype $d --shape "$s" --impl v3 --v3-tc off bench
  done
done

summary() { # the failures, the checks, then the bench medians (us) against v3's targets
  echo "kron-layer GPU run: ${#failed[@]} failure(s)"
  for f in ${failed[@]+"${failed[@]}"}; do echo "  $f"; done
  echo "check lines: $(cat "$out"/check/*.log | grep -c '^check ') passed: $(cat "$out"/check/*.log | grep -c '^check .*ok=1')"
  grep -h '^check .*ok=0' "$out"/check/*.log 2>/dev/null | head -40
  grep -h '^kernel_attr' "$out"/bench/f.16x32x32.log 2>/dev/null # every log lists every kernel
  echo
  echo "median us (bench: 20 warmup + 50 runs); targets for v3: fwd fp32 32x128x128 <= 20;"
  echo "within 2x of the per-pass memory floor: 8x64x64x64 fp32 <= 33.6, fp64 <= 67.1;"
  echo "16x16x16x16 fp32 <= 1.05, fp64 <= 2.1; bwd <= 3x fwd"
  echo "(v3 tc off: the same plan with CUDA-core FMA instead of the tensor cores)"
  printf '%-12s %-5s %-4s %9s %9s %9s %9s %11s\n' shape dtype pass v1 v2 v3 v3bwd/fwd "v3 tc off"
  for d in f d; do
    for s in "${shapes[@]}"; do
      log="$out/bench/$d.$s.log"
      for p in fwd bwd; do
        row=()
        for v in v1 v2 v3; do
          row+=("$(sed -n "s/^time impl=$v pass=$p .*median_us=\([0-9.]*\).*/\1/p" "$log" 2>/dev/null | head -1)")
        done
        ratio=""
        if [ $p = bwd ]; then
          f3=$(sed -n "s/^time impl=v3 pass=fwd .*median_us=\([0-9.]*\).*/\1/p" "$log" 2>/dev/null | head -1)
          [ -n "$f3" ] && [ -n "${row[2]}" ] && ratio=$(awk -v b="${row[2]}" -v f="$f3" 'BEGIN{printf "%.2f", b/f}')
        fi
        off=$(sed -n "s/^time impl=v3 pass=$p .*median_us=\([0-9.]*\).*/\1/p" "$out/bench/$d.$s.v3-tc-off.log" 2>/dev/null | head -1)
        printf '%-12s %-5s %-4s %9s %9s %9s %9s %11s\n' "$s" "$d" "$p" "${row[0]:--}" "${row[1]:--}" "${row[2]:--}" "$ratio" "${off:--}"
      done
    done
  done
  echo
  for f in "$out"/bench/[fd].*[0-9].log; do
    echo "$(basename "$f" .log): $(sed -n 's/^plan impl=v3 pass=bwd //p' "$f" | cut -c1-300)"
  done
  echo
  torch_summary
}

torch_run

if [ $quick = 0 ]; then
  mkdir -p "$out/seed" "$out/profile" "$out/logs"
  run "$out/seed/bench-f-32-128-128.log" "$bin/kronlayer" --dtype f 32 128 128 bench
  run "$out/seed/bench-d-32-128-128.log" "$bin/kronlayer" --dtype d 32 128 128 bench
  for k in 100 72; do # budgets that fit a 128x128 fp32 factor (69120 bytes)
    run "$out/seed/v3-f-32x128x128-smem${k}k.log" "$bin/kronlayer" --dtype f --shape 32x128x128 --impl v3 --v3-smem-kib $k bench
  done
  for v in v1 v2 v3; do
    run "$out/profile/$v.log" "$bin/kronlayer" --dtype f --shape 32x128x128 --impl $v profile --trace "$out/profile/$v.json"
  done
  # the study matrix, local executor, this machine's GPU under its label
  (cd "$here" && REPRO_BUILD_DIR=${REPRO_BUILD_DIR:-$root/build} ./run.sh --local --device "$device" -c "$root/clusters/generic.yaml" -q) >"$out/logs/run.txt" 2>&1 \
    || failed+=("study run (see logs/run.txt)")
  cp -L "$here"/ae_logs/*.log "$out/logs/" 2>/dev/null || failed+=("no study logs")
  (cd "$here" && ./plot.sh ae_logs --out "$out/logs/figures") >"$out/logs/plot.txt" 2>&1 || true
fi

summary | tee "$out/summary.txt"
[ ${#failed[@]} -eq 0 ]
