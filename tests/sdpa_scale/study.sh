#!/usr/bin/env bash
# studies/sdpa-scale without a GPU: the experiment file validates with both shipped cluster
# files; the dry run prints the matrix of issue 12 (8 configurations x 8 systems, log names
# carrying D, causal and dtype, the commands their flags) and the added head dims 96 and 256
# (10 systems: fa2 and flashinfer too) and Gemma-2 cell (5 systems); a local run in CPU mode
# (a cluster file of this test: B=1, H=2, S=128, the CPU reference) of ours in three
# configurations (the Gemma-2 one among them) and of a peer (no torch here: unsupported, the
# config line still says causal and dtype) through the shipped run.sh; report.sh and plot.sh
# read those logs.
#   study.sh REPRO_RUN BUILD_DIR WORK_DIR
source "$(dirname "$0")/../runner/lib.sh"
runner=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") build=$(cd "$2" && pwd) work=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$build/bin/attnvar" ] || skip "attnvar is not built"
scratch_repo "$work" studies/sdpa-scale "$build"
cp "$src"/studies/sdpa-scale/{experiment.yaml,run.sh,run_single.sh,plot.sh,gpu_run.sh,report.sh} "$study/"
export REPRO_RUN=$runner REPRO_BUILD_DIR=$build REPRO_PLOT_BIN=$build/bin/repro-plot
cat >"$work/cpu.yaml" <<'YAML'
name: sdpa-cpu-test
executor: local
vars: {device_mode: cpu, batch: 1, heads: 2, seqlen: 128, warmup: 1, runs: 2, check_pairs: 2}
devices:
  h100: {}
YAML

for c in generic local-test; do
  check "validates with $c" "$runner" check "$study/experiment.yaml" -c "$repo/clusters/$c.yaml"
done
check "validates with the CPU test cluster" "$runner" check "$study/experiment.yaml" -c "$work/cpu.yaml"
check "gpu_run.sh parses" bash -n "$study/gpu_run.sh"
check "report.sh parses" bash -n "$study/report.sh"

# the matrix on one device: 8 configurations x 8 systems, 2 x 10 (fa2, flashinfer) and the
# Gemma-2 cell's 6 (flashcore-triton is absent: no cell)
(cd "$study" && ./run.sh --dry-run --local --device h100 -c "$repo/clusters/generic.yaml" >cells.txt 2>err.txt)
check_eq "dry-run exit" "$?" 0
check_eq "cells" "$(wc -l <"$study/cells.txt")" 90
for cfg in d128-c1-fp16 d128-c1-bf16 d128-c0-fp16 d128-c0-bf16 d64-c1-fp16 d64-c1-bf16 d64-c0-fp16 d64-c0-bf16; do
  check_eq "$cfg cells" "$(grep -c "^$cfg\.h100\." "$study/cells.txt")" 8
done
for cfg in d96-c1-fp16 d256-c1-fp16; do
  check_eq "$cfg cells" "$(grep -c "^$cfg\.h100\." "$study/cells.txt")" 10
done
check_eq "gemma2 cells: the systems that soft-cap" "$(grep "^gemma2-d256-c1-fp16\.h100\." "$study/cells.txt" | cut -d. -f3 | sort | tr '\n' ' ')" "fa2 fa3 flashinfer flex fused unfused "
check "no flashcore cell" test "$(grep -c flashcore "$study/cells.txt")" = 0
check "no fa2/flashinfer cell at D=64/128" test "$(grep -c "^d\(64\|128\)-.*\.\(fa2\|flashinfer\)\.log" "$study/cells.txt")" = 0
check "fused D=128 causal fp16" grep -q "^d128-c1-fp16.h100.fused.log	.*attnvar --workload attn --system fused --seqlen 4096 --batch 16 --heads 96 --groups 1 --dim 128 --causal 1 --dtype fp16 --warmup 20 --runs 10 --device gpu --check" "$study/cells.txt"
check "flashinfer D=96 through attnvar" grep -q "^d96-c1-fp16.h100.flashinfer.log	.*attnvar --workload attn --system flashinfer --seqlen 4096 --batch 16 --heads 96 --groups 1 --dim 96 --causal 1 --dtype fp16 " "$study/cells.txt"
check "fa2 Gemma-2 D=256" grep -q "^gemma2-d256-c1-fp16.h100.fa2.log	.*attnvar --workload gemma2 --system fa2 .*--dim 256 --causal 1 --dtype fp16 " "$study/cells.txt"
check "flex Gemma-2 D=256" grep -q "^gemma2-d256-c1-fp16.h100.flex.log	.*peer.py --system flex --workload gemma2 .*--groups 1 --dim 256 --causal 1 --dtype fp16 .*--check-pairs 16" "$study/cells.txt"
check "unfused is in the matrix" grep -q "^d64-c0-fp16.h100.unfused.log	.*--system unfused .*--dim 64 --causal 0" "$study/cells.txt"
check "sdpa-efficient D=64 full bf16" grep -q "^d64-c0-bf16.h100.sdpa-efficient.log	.*peer.py --system sdpa-efficient --workload attn --seqlen 4096 --batch 16 --heads 96 --groups 1 --dim 64 --causal 0 --dtype bf16 .*--check --check-pairs 16" "$study/cells.txt"
check "fa3 runs through attnvar" grep -q "^d64-c1-bf16.h100.fa3.log	.*attnvar --workload attn --system fa3 --seqlen 4096 --batch 16 --heads 96 --groups 1 --dim 64 --causal 1 --dtype bf16 " "$study/cells.txt"
check "sdpa-compiled" grep -q "^d128-c0-bf16.h100.sdpa-compiled.log	.*--system sdpa-compiled .*--causal 0 --dtype bf16" "$study/cells.txt"
single() { (cd "$study" && ./run_single.sh "$@" --dry-run --local --device h100 -c "$repo/clusters/generic.yaml" 2>/dev/null | cut -f1 | tr '\n' ' '); }
check_eq "run_single d64-c1-fp16 flex" "$(single d64-c1-fp16 flex)" "d64-c1-fp16.h100.flex.log "

# a real local run in CPU mode: ours (the CPU reference stands in) and one peer
(cd "$study" && ./run.sh --local --device h100 -c "$work/cpu.yaml" -q \
  --only experiment=d128-c1-fp16,system=fused --only experiment=d64-c0-bf16,system=fused \
  --only experiment=d64-c0-bf16,system=sdpa-compiled \
  --only experiment=gemma2-d256-c1-fp16,system=fused >run.txt 2>&1)
check_eq "local run exit" "$?" 0
check_eq "d128-c1-fp16 fused ok" "$(last_result "$study/ae_logs/d128-c1-fp16.h100.fused.log" status)" ok
check_eq "d64-c0-bf16 fused ok (CPU reference)" "$(last_result "$study/ae_logs/d64-c0-bf16.h100.fused.log" status)" ok
check "the CPU cell's config" grep -q "^config .*dtype=bf16 causal=0" "$study/ae_logs/d64-c0-bf16.h100.fused.log"
check_eq "gemma2-d256-c1-fp16 fused ok (CPU reference)" "$(last_result "$study/ae_logs/gemma2-d256-c1-fp16.h100.fused.log" status)" ok
check "the Gemma-2 cell's config: gemma2, D=256, MHA (no groups=)" sh -c "grep -q '^config workload=gemma2 .*dim=256' '$study/ae_logs/gemma2-d256-c1-fp16.h100.fused.log' && ! grep -q 'groups=\|kv_heads=' '$study/ae_logs/gemma2-d256-c1-fp16.h100.fused.log'"
pstat=$(last_result "$study/ae_logs/d64-c0-bf16.h100.sdpa-compiled.log" status)
check "the peer cell ends ok or unsupported ($pstat)" test "$pstat" = ok -o "$pstat" = unsupported
check "the peer's config says causal=0 dtype=bf16" grep -q "^config .*dtype=bf16 causal=0" "$study/ae_logs/d64-c0-bf16.h100.sdpa-compiled.log"

# report.sh and plot.sh read them
(cd "$study" && ./report.sh >report.txt 2>&1)
check_eq "report.sh exit" "$?" 0
check "report: the fused D=64 full bf16 row" grep -q "^B1 H2 S128 D64 full bf16 *fused *ok" "$study/report.txt"
check "report: the Gemma-2 row, named by its workload" grep -q "^B1 H2 S128 gemma2 D256 causal fp16 *fused *ok" "$study/report.txt"
check "report: the tier table" grep -q "^document SDPA 12.27 ms *64x *0.192" "$study/report.txt"
(cd "$study" && ./plot.sh --out "$work/figs" --no-render >plot.txt 2>&1)
check_eq "plot.sh exit" "$?" 0
check "plot wrote the D=128 causal fp16 data" test -s "$work/figs/sdpa_d128_c1_fp16.dat"
check "plot drew the Gemma-2 cell in its column" grep -q "^# device=h100 workload=gemma2 " "$work/figs/sdpa_gemma2_d256_c1_fp16.dat"
check "plot: d96 has no logs here, a note says so" grep -q "no logs of experiment d96-c1-fp16 yet" "$work/figs/sdpa_d96_c1_fp16.gp"
finish
