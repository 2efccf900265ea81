#!/usr/bin/env bash
# kernels/gemm/gpu_check.sh driven by the fixture tests/gemm/fake_gemmbench.sh (no GPU): the
# case list (system x dtype x shape, the edges, the negative control, the bench), the
# classification of exit codes, the summary's columns, a failed check failing the sweep, a
# hung case killed at the time limit with its system's later cases skipped, usage errors.
source "$(dirname "$0")/../runner/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
script=$src/kernels/gemm/gpu_check.sh
fake=$src/tests/gemm/fake_gemmbench.sh
work=$(mktemp -d /tmp/gemm-gc-XXXXXX)
trap 'rm -rf "$work"' EXIT

bash "$script" "$work/a" --bin "$fake" --no-sanitizer --no-peer >"$work/a.txt" 2>&1
check_eq "a failed check fails the sweep" "$?" 1
s=$work/a/summary.txt
check "77 cases (48 matrix, 16 edges, 8 cluster, 1 control, 4 bench)" grep -q '^77 cases:' "$s"
check_eq "one log per case" "$(count_paths "$work"/a/logs/*.log)" 77
check "a passing case: system, shape, dtype, status, ms, TFLOP/s, check" \
  grep -qE '^check +wgmma +8192x8192x8192 +fp16 +PASS +1\.6000 +687\.2 +ok \(c rel_l2 2\.4e-04, sampled 4096\)$' "$s"
check "the failed check named" grep -qE '^check +mma +1024x1024x1024 +bf16 +FAIL .*FAIL: c ' "$s"
check "unsupported with the reason" grep -qE '^check +wgmma +256x384x512 +fp32 +UNSUP .*reason="wgmma takes fp16 or bf16' "$s"
check "ref past its cap" grep -qE '^check +ref +8192x8192x8192 +fp16 +UNSUP ' "$s"
check "oom classified" grep -qE '^check +cublas +4096x4096x4096 +bf16 +OOM ' "$s"
check "edges at both tile widths" grep -qE '^edge +wgmma-256 +264x136x72 +bf16 +PASS ' "$s"
check "the control is caught" grep -qE '^control +wgmma +4096x4096x4096 +fp16 +CAUGHT ' "$s"
check "bench rows" grep -qE '^bench +mma +8192x8192x8192 +fp16 +OK +3\.2000 +343\.6 ' "$s"
check "bench ratio to cublas" grep -qE '^bench 8192\^3 fp16: wgmma +1\.6000 ms +687\.2 TFLOP/s +125\.0 % of cublas$' "$s"
check "edge args reach the binary" grep -q 'impl=fixture-256 ' "$work/a/logs/edge.wgmma-256.264x136x72.fp16.log"
check "cluster args reach the binary" grep -q 'impl=fixture-c2 ' "$work/a/logs/cluster.wgmma-c2.8192x8192x8192.bf16.log"
check "the cluster variant in the bench" grep -qE '^bench 8192\^3 fp16: wgmma-c2 +1\.5000 ms ' "$s"
check "matrix args reach the binary" grep -q '^config workload=gemm system=cublas m=256 n=384 k=512 dtype=bf16 ' "$work/a/logs/cublas.256x384x512.bf16.log"

# a hang: killed at the limit, the system's later cases skipped, the others still run
FAKE_HANG=1 bash "$script" "$work/h" --bin "$fake" --no-sanitizer --no-peer --limit 2 >"$work/h.txt" 2>&1
check_eq "a hang fails the sweep" "$?" 1
s=$work/h/summary.txt
check "the hung case" grep -qE '^edge +wgmma-128 +1000x1000x1000 +fp16 +TIMEOUT ' "$s"
check "later wgmma cases skipped" grep -qE '^bench +wgmma +8192x8192x8192 +fp16 +SKIPPED .*after a timeout of wgmma' "$s"
check "other systems still run" grep -qE '^bench +mma +8192x8192x8192 +fp16 +OK ' "$s"
check "the cluster variant is another kernel: still runs" grep -qE '^bench +wgmma-c2 +8192x8192x8192 +fp16 +OK ' "$s"

# usage
bash "$script" --bin "$fake" >/dev/null 2>"$work/err"
check_eq "no OUTDIR: exit" "$?" 2
check "no OUTDIR: said" grep -q 'OUTDIR is required' "$work/err"
bash "$script" "$work/u" --limit x --bin "$fake" >/dev/null 2>"$work/err"
check_eq "bad --limit: exit" "$?" 2
check "bad --limit: named" grep -q -- "--limit: expected an integer >= 1, got 'x'" "$work/err"
bash "$script" "$work/u" --bin /nonexistent >/dev/null 2>"$work/err"
check_eq "missing binary: exit" "$?" 1
finish
