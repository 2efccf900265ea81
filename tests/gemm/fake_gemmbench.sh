#!/usr/bin/env bash
# Test fixture (no GPU): stands in for gemmbench in tests/gemm/test_gpu_script.sh. Answers
# every cell at once with a log of the contract; planted outcomes:
#   wgmma/mma --dtype fp32      unsupported (exit 4), as the real plan says
#   ref past 2^30 multiply-adds unsupported (exit 4)
#   mma 1024^3 bf16             a failed check (exit 5)
#   cublas 4096^3 bf16          out of memory (exit 3)
#   GEMM_TEST_FAULT=1           a failed check (exit 5), as the real binary
#   wgmma 1000^3 with FAKE_HANG a hang (sleeps), for the time limit (not with --cluster)
sys="" m=0 n=0 k=0 dt=fp16 chk=0 tile="" cluster=""
while [ $# -gt 0 ]; do
  case "$1" in
    --system) sys=$2; shift ;; --m) m=$2; shift ;; --n) n=$2; shift ;; --k) k=$2; shift ;;
    --dtype) dt=$2; shift ;; --check) chk=1 ;; --no-check) chk=0 ;; --tile-n) tile=$2; shift ;;
    --cluster) cluster=$2; shift ;;
    --warmup|--runs) shift ;;
  esac
  shift
done
echo "# repro-log 1"
echo 'meta gpu="FIXTURE (no GPU)" cc=9.0 driver=0 cuda=0 commit=test'
echo "config workload=gemm system=$sys m=$m n=$n k=$k dtype=$dt device=gpu impl=fixture${tile:+-$tile}${cluster:+-c$cluster} seed=1"
macs=$((m * n * k))
if { [ "$sys" = wgmma ] || [ "$sys" = mma ]; } && [ "$dt" = fp32 ]; then
  echo "result status=unsupported reason=\"$sys takes fp16 or bf16 inputs\""; exit 4
fi
if [ "$sys" = ref ] && [ "$macs" -gt 1073741824 ]; then
  echo 'result status=unsupported reason="--system ref computes in double on the CPU only up to M*N*K = 2^30"'; exit 4
fi
if [ "$sys" = cublas ] && [ "$m" = 4096 ] && [ "$dt" = bf16 ]; then
  echo 'result status=oom reason="out of device memory"'; exit 3
fi
if [ "$sys" = wgmma ] && [ -z "$cluster" ] && [ "$m" = 1000 ] && [ -n "${FAKE_HANG:-}" ]; then sleep 30; fi
if [ "$chk" = 1 ]; then
  if [ "${GEMM_TEST_FAULT:-}" = 1 ] || { [ "$sys" = mma ] && [ "$m" = 1024 ] && [ "$dt" = bf16 ]; }; then
    echo "check output=c rel_l2=3.0e-02 max_abs=9.0e+00 tol_rel_l2=9.8e-04 tol_max_abs=1.0e-01 n=4096 sampled=4096 ok=0"
    echo 'result status=error reason="check failed: see the check lines with ok=0"'; exit 5
  fi
  echo "check output=inputs_host_vs_device rel_l2=0.000e+00 max_abs=0.000e+00 tol_rel_l2=0.0e+00 tol_max_abs=0.0e+00 n=100 ok=1"
  echo "check output=c rel_l2=2.4e-04 max_abs=1.0e-02 tol_rel_l2=9.8e-04 tol_max_abs=1.0e-01 n=4096 sampled=4096 ok=1"
fi
ms=2.0000
case $sys in wgmma) ms=1.6000 ;; mma) ms=3.2000 ;; esac
[ -n "$cluster" ] && ms=1.5000
gf=$(awk -v m="$m" -v n="$n" -v k="$k" -v ms="$ms" 'BEGIN{printf "%.1f", 2*m*n*k/(ms*1e-3)/1e9}')
echo "result status=ok avg_ms=$ms median_ms=$ms min_ms=$ms max_ms=$ms runs=5 warmup=2 gflops_s=$gf peak_mib=100.0"
