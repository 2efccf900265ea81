#!/usr/bin/env bash
# gemmbench on the CPU: the issue's ref check, --list-systems, the log's lines, a check that
# fails end to end (GEMM_TEST_FAULT), the CPU cap, GPU systems without a GPU, and usage
# errors that name their option.
#   test_cli.sh GEMMBENCH
source "$(dirname "$0")/../runner/lib.sh"
bin=$1
work=$(mktemp -d /tmp/gemm-cli-XXXXXX)
trap 'rm -rf "$work"' EXIT

# the done criterion: ref on the CPU, checked against the dot-product formulation
"$bin" --system ref --device cpu --m 64 --n 48 --k 80 --dtype fp16 --check >"$work/ref.log" 2>"$work/ref.err"
check_eq "ref check exit" "$?" 0
check "header" grep -q '^# repro-log 1' "$work/ref.log"
check "meta" grep -q '^meta gpu=none ' "$work/ref.log"
check "config line" grep -q '^config workload=gemm system=ref m=64 n=48 k=80 dtype=fp16 device=cpu impl=ref-double-ikj seed=1$' "$work/ref.log"
check "check line" grep -qE '^check output=c rel_l2=[0-9.e+-]+ max_abs=[0-9.e+-]+ tol_rel_l2=1.0e-12 .* n=3072 ok=1$' "$work/ref.log"
check "result line" grep -qE '^result status=ok avg_ms=[0-9.e+-]+ .* runs=1 warmup=0 gflops_s=[0-9.]+ peak_mib=[0-9.]+ timing=wall samples_ms=[0-9.e+-]+$' "$work/ref.log"
check_eq "nothing on stderr" "$(cat "$work/ref.err")" ""
# the log parses as kvline records, gflops_s = 2MNK / avg_ms
src=$(cd "$(dirname "$0")/../.." && pwd)
check "ref log parses and its gflops_s is 2MNK/avg_ms" python3 -c "
import sys
sys.path.insert(0, '$src/scripts/peers')
import kvlog
r = kvlog.read_log('$work/ref.log')
res = r['result']
g = 2 * 64 * 48 * 80 / (float(res['avg_ms']) * 1e-3) / 1e9
assert abs(float(res['gflops_s']) - g) <= 0.06 + 0.001 * g, (res['gflops_s'], g)
"

# every dtype; ref implies the CPU
for dt in fp16 bf16 fp32; do
  "$bin" --system ref --m 33 --n 17 --k 40 --dtype $dt --runs 2 --warmup 1 >"$work/$dt.log" 2>&1
  check_eq "ref $dt exit" "$?" 0
  check "ref $dt: device=cpu" grep -q "dtype=$dt device=cpu" "$work/$dt.log"
  check "ref $dt: runs" grep -q 'runs=2 warmup=1' "$work/$dt.log"
done
"$bin" --system ref --m 8 --n 8 --k 8 --no-check >"$work/nocheck.log" 2>&1
check_eq "--no-check exit" "$?" 0
check_eq "--no-check: no check line" "$(grep -c '^check ' "$work/nocheck.log")" 0

# a check that fails: exit 5, ok=0, status=error
GEMM_TEST_FAULT=1 "$bin" --system ref --m 20 --n 24 --k 16 >"$work/fault.log" 2>&1
check_eq "spoiled check exit" "$?" 5
check "spoiled check flagged" grep -q '^check output=c .*ok=0$' "$work/fault.log"
check "result error" grep -q '^result status=error reason="check failed' "$work/fault.log"

# --list-systems: name, cpu|gpu, about
"$bin" --list-systems >"$work/list" 2>&1
check_eq "--list-systems exit" "$?" 0
check_eq "--list-systems names" "$(cut -f1 "$work/list" | tr '\n' ' ')" "ref cublas wgmma mma "
check_eq "--list-systems devices" "$(cut -f2 "$work/list" | tr '\n' ' ')" "cpu gpu gpu gpu "

# the CPU cap: unsupported with a log, not a long run
"$bin" --system ref --m 2048 --n 1024 --k 1024 >"$work/cap.log" 2>&1
check_eq "ref cap exit" "$?" 4
check "ref cap reason" grep -q '^result status=unsupported reason="--system ref computes in double on the CPU only up to M\*N\*K = 2^30' "$work/cap.log"
check "ref cap config" grep -q '^config workload=gemm system=ref m=2048 ' "$work/cap.log"

# a GPU system asked to run on the CPU: unsupported, complete log
"$bin" --system wgmma --device cpu --m 128 --n 128 --k 128 >"$work/cpu.log" 2>&1
check_eq "wgmma --device cpu exit" "$?" 4
check "wgmma --device cpu reason" grep -q '^result status=unsupported reason="--system wgmma runs on the GPU' "$work/cpu.log"
# the GPU path without a GPU (or without CUDA): a complete log, error or unsupported
if ! nvidia-smi -L >/dev/null 2>&1; then
  for s in cublas wgmma mma; do
    "$bin" --system $s --m 256 --n 384 --k 512 >"$work/gpu.log" 2>&1
    rc=$?
    check "no GPU ($s): exit 1 or 4" test "$rc" = 1 -o "$rc" = 4
    check "no GPU ($s): result line" grep -q '^result status=\(error\|unsupported\)' "$work/gpu.log"
    check "no GPU ($s): config line" grep -q "^config workload=gemm system=$s " "$work/gpu.log"
  done
fi

# bad input: exit 2, the option named
usage() { # what, expected stderr fragment, args...
  local what=$1 want=$2; shift 2
  "$bin" "$@" >"$work/u.out" 2>"$work/u.err"
  check_eq "$what: exit" "$?" 2
  check "$what: names '$want'" grep -qF -- "$want" "$work/u.err"
  check_eq "$what: nothing on stdout" "$(cat "$work/u.out")" ""
}
usage "no system" "--system is required" --m 8 --n 8 --k 8
usage "bad system" "--system: unknown 'tvm' (expected ref|cublas|wgmma|mma)" --system tvm --m 8 --n 8 --k 8
usage "no k" "--k is required" --system ref --m 8 --n 8
usage "zero m" "--m: expected an integer in [1, 65536], got '0'" --system ref --m 0 --n 8 --k 8
usage "too big n" "--n: expected an integer in [1, 65536], got '70000'" --system ref --m 8 --n 70000 --k 8
usage "not a number" "--k: expected an integer in [1, 65536], got '8x'" --system ref --m 8 --n 8 --k 8x
usage "missing value" "--m: expected an integer in [1, 65536], got '(missing)'" --system ref --n 8 --k 8 --m
usage "bad dtype" "--dtype: unknown 'fp8' (expected fp16|bf16|fp32)" --system ref --m 8 --n 8 --k 8 --dtype fp8
usage "bad device" "--device: unknown 'tpu'" --system ref --m 8 --n 8 --k 8 --device tpu
usage "zero runs" "--runs: expected an integer in [1, 1000000], got '0'" --system ref --m 8 --n 8 --k 8 --runs 0
usage "negative warmup" "--warmup: expected an integer in [0, 1000000], got '-1'" --system ref --m 8 --n 8 --k 8 --warmup -1
usage "bad seed" "--seed: expected an integer" --system ref --m 8 --n 8 --k 8 --seed x
usage "unknown option" "unknown option '--bogus'" --system ref --m 8 --n 8 --k 8 --bogus 1
usage "tile-n value" "--tile-n: expected 128 or 256, got '192'" --system wgmma --m 8 --n 8 --k 8 --tile-n 192
usage "tile-n elsewhere" "--tile-n: only --system wgmma takes it" --system mma --m 8 --n 8 --k 8 --tile-n 128
usage "cluster value" "--cluster: expected an integer in [1, 2], got '4'" --system wgmma --m 8 --n 8 --k 8 --cluster 4
usage "cluster elsewhere" "--cluster: only --system wgmma takes it" --system cublas --m 8 --n 8 --k 8 --cluster 2
"$bin" --help >"$work/help" 2>&1
check_eq "--help exit" "$?" 0
check "--help shows the contract" grep -q -- "--system ref|cublas|wgmma|mma --m M --n N --k K" "$work/help"
finish
