#!/usr/bin/env bash
# gemmbench's GPU path on the CPU: gemmbench.c linked with tests/gemm/fake_gpu.c, a host
# stand-in for the device side. The log's lines, the full check (all of C, all of A and B
# compared with the host's draw) and the sampled one (64 x 64 entries, 64 rows of A and B),
# and planted faults each caught: a skipped tile, an unwritten edge column, a systematic
# error, a wrong input element, a failed launch; plans that refuse a cell.
#   test_gpu_path.sh GEMMBENCH_FAKEGPU
source "$(dirname "$0")/../runner/lib.sh"
bin=$1
work=$(mktemp -d /tmp/gemm-gpupath-XXXXXX)
trap 'rm -rf "$work"' EXIT
run() { # log, env..., -- args
  local log=$work/$1; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$bin" "$@" >"$log" 2>"$log.err"
}

# full check: 256x384x512 (2^25.6 multiply-adds)
run full -- --system wgmma --m 256 --n 384 --k 512 --runs 3 --warmup 1
check_eq "full: exit" "$?" 0
check "full: config" grep -q '^config workload=gemm system=wgmma m=256 n=384 k=512 dtype=fp16 device=gpu impl=wgmma-128x128x64-s6-ws-persistent seed=1$' "$work/full"
check "full: plan" grep -q '^plan kernel=wgmma tile=128x128x64 stages=6 threads=384 .* tiles=2x3 k_blocks=8 grid=6 cluster=1 ' "$work/full"
check "full: inputs, all of A and B" grep -q '^check output=inputs_host_vs_device rel_l2=0.000e+00 max_abs=0.000e+00 .* n=327680 ok=1$' "$work/full"
check "full: all of C" grep -qE '^check output=c rel_l2=[0-9.e+-]+ max_abs=[0-9.e+-]+ tol_rel_l2=9.8e-04 tol_max_abs=[0-9.e+-]+ n=98304 ok=1$' "$work/full"
check "full: result" grep -q '^result status=ok avg_ms=1 median_ms=1 min_ms=1 max_ms=1 runs=3 warmup=1 gflops_s=100.7 ' "$work/full"
for dt in bf16 fp32; do
  run "full.$dt" -- --system cublas --m 264 --n 136 --k 72 --dtype $dt
  check_eq "full $dt: exit" "$?" 0
  check "full $dt: no plan line for cublas" test "$(grep -c '^plan ' "$work/full.$dt")" = 0
  check "full $dt: C checked" grep -q '^check output=c .* n=35904 ok=1$' "$work/full.$dt"
done
check "fp32 tolerance" grep -q 'tol_rel_l2=1.0e-05' "$work/full.fp32"

# sampled check: 576x512x512 (2^27.2)
run sampled -- --system mma --m 576 --n 512 --k 512 --dtype bf16
check_eq "sampled: exit" "$?" 0
check "sampled: 64 rows of A and of B" grep -q '^check output=inputs_host_vs_device .* n=65536 ok=1$' "$work/sampled"
check "sampled: 4096 entries of C" grep -q '^check output=c .* tol_rel_l2=7.8e-03 .* n=4096 sampled=4096 ok=1$' "$work/sampled"
check "sampled: plan" grep -q '^plan kernel=mma tile=128x256x64 stages=3 threads=256 smem_bytes=147456 ' "$work/sampled"

# faults: each must end the log with status=error and exit 5 (1 for the launch)
fault() { # name, fault, expected output, args...
  local name=$1 f=$2 out=$3; shift 3
  run "$name" FAKE_GPU_FAULT="$f" -- "$@"
  check_eq "$name: exit" "$?" 5
  check "$name: $out flagged" grep -q "^check output=$out .*ok=0\$" "$work/$name"
  check "$name: result" grep -q '^result status=error reason="check failed' "$work/$name"
}
fault block block c --system wgmma --m 576 --n 512 --k 512
check "block: the unwritten entries are counted" grep -qE '^check output=c .* nonfinite=[1-9][0-9]* sampled=4096 ok=0$' "$work/block"
fault column column c --system wgmma --m 576 --n 512 --k 512
fault scale scale c --system cublas --m 64 --n 48 --k 80
fault input input inputs_host_vs_device --system mma --m 64 --n 48 --k 80
run launch FAKE_GPU_FAULT=launch -- --system wgmma --m 64 --n 48 --k 80
check_eq "launch: exit" "$?" 1
check "launch: reason" grep -q '^result status=error reason="wgmma-128x128x64-s6-ws-persistent failed (code 1): fixture: launching' "$work/launch"

# refusals from the plan, before anything runs
run f32 -- --system wgmma --m 64 --n 48 --k 80 --dtype fp32
check_eq "wgmma fp32: exit" "$?" 4
check "wgmma fp32: config names the system" grep -q '^config workload=gemm system=wgmma .* impl=wgmma seed=1$' "$work/f32"
check "wgmma fp32: reason" grep -q '^result status=unsupported reason="wgmma takes fp16 or bf16 inputs' "$work/f32"
run pitch -- --system mma --m 64 --n 48 --k 20
check_eq "K = 20: exit" "$?" 4
check "K = 20: reason" grep -q 'K and N must be multiples of 8 (have K=20, N=48)' "$work/pitch"
run c2 -- --system wgmma --cluster 2 --m 264 --n 136 --k 72 --no-check
check_eq "cluster 2: exit" "$?" 0
check "cluster 2: plan" grep -q '^plan kernel=wgmma tile=128x128x64 .* tiles=3x2 .* grid=8 cluster=2 ' "$work/c2"
finish
