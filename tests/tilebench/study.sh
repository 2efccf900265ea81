#!/usr/bin/env bash
# studies/tilebench without a GPU: the experiment file validates with both shipped cluster
# files; every case list dry-runs to its cell count (default, test, nsa_only: nsa alone has it),
# the commands carry the case keys; run_single.sh maps its words and case keys onto cells; the
# mha `test` list runs in CPU mode through the shipped run.sh with the real attnvar (cluster
# local-test: device_mode cpu, one warmup, two runs; the test list is the small size itself, its
# case keys win over the cluster's size vars), run_single.sh reruns one of its cells in the run's
# own case list, and repro-plot tables (the seed's JSON fields) and draws those logs, and draws
# the JSON table the same (plot.sh TABLE).
# gemm and nsa run the same way once gemmbench and attnvar's nsa workload are built (each block
# below skips, saying so, until then). gpu_run.sh, the GPU session script, runs here in CPU mode.
#   study.sh REPRO_RUN BUILD_DIR WORK_DIR
source "$(dirname "$0")/../runner/lib.sh"
runner=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") build=$(cd "$2" && pwd) work=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$build/bin/attnvar" ] || skip "attnvar is not built"
scratch_repo "$work" studies/tilebench "$build"
cp "$src"/studies/tilebench/{experiment.yaml,run.sh,run_single.sh,plot.sh} "$study/"
export REPRO_RUN=$runner REPRO_BUILD_DIR=$build REPRO_PLOT_BIN=$build/bin/repro-plot
cluster=$repo/clusters/local-test.yaml plot=$build/bin/repro-plot

check "backup_logs resolves" test -d "$src/studies/tilebench/backup_logs"
for c in generic local-test; do
  check "validates with $c" "$runner" check "$study/experiment.yaml" -c "$repo/clusters/$c.yaml"
  check "validates with $c, nsa_only" "$runner" check "$study/experiment.yaml" -c "$repo/clusters/$c.yaml" --cases nsa_only
done

# every case list on one device
dry() { # LIST -> cells.LIST.txt
  (cd "$study" && ./run.sh --dry-run --local --device h100 -c "$cluster" --cases "$1" >"cells.$1.txt" 2>"err.$1.txt")
}
count() { grep -c "^$2\." "$study/cells.$1.txt"; }
dry default
check_eq "default: dry-run exit" "$?" 0
check_eq "default: cells" "$(wc -l <"$study/cells.default.txt")" 123
check_eq "default: gemm (3 dtypes x 3 sizes x 6 systems)" "$(count default gemm)" 54
check_eq "default: mha (2 causal x 3 shapes x 9 systems)" "$(count default mha)" 54
check_eq "default: nsa (3 cases x 5 systems)" "$(count default nsa)" 15
for s in tilelang cutedsl; do
  check_eq "default: $s cells (9 gemm, 6 mha, 3 nsa)" "$(grep -c "\.$s\.log	" "$study/cells.default.txt")" 18
done
check_eq "default: fa3 in the mha cells only" "$(grep -c "\.fa3\.log	" "$study/cells.default.txt") $(grep -c "^mha.*\.fa3\.log	" "$study/cells.default.txt")" "6 6"
dry test
check_eq "test: cells (one size per kernel)" "$(wc -l <"$study/cells.test.txt")" 41
check_eq "test: gemm" "$(count test gemm)" 18
check_eq "test: mha" "$(count test mha)" 18
check_eq "test: nsa" "$(count test nsa)" 5
check_eq "test: the seed's quick validation, --warmup 2 --iters 5, in every cell" \
  "$(grep -c -- "--warmup 2 --runs 5 " "$study/cells.test.txt")" 41
dry nsa_only
check_eq "nsa_only: cells (16 cases x 5 systems, nsa only)" "$(wc -l <"$study/cells.nsa_only.txt")" 80
check_eq "nsa_only: all nsa" "$(count nsa_only nsa)" 80
(cd "$study" && ./run.sh --dry-run --local --device h100 -c "$cluster" --cases nope >/dev/null 2>err.nope.txt)
check_eq "an unknown list: exit 2" "$?" 2
check "an unknown list is named with the lists there are" grep -q "no list 'nope' (--cases): expected one of default, test" "$study/err.nope.txt"
# the seed's run_benchmark.sh options (run.sh --help lists them), in dry runs
seed() { # NAME RUN.SH-OPTIONS... -> seed.NAME.txt, seed.NAME.err; the exit status
  local name=$1; shift
  (cd "$study" && ./run.sh --dry-run --local --device h100 -c "$cluster" "$@" >"seed.$name.txt" 2>"seed.$name.err")
}
seed warmup --warmup 7 --iters 9
check_eq "--warmup/--iters: exit" "$?" 0
check_eq "--warmup 7 --iters 9: every cell" "$(grep -c -- "--warmup 7 --runs 9 " "$study/seed.warmup.txt")" 123
seed kernels --kernels nsa,gemm
check_eq "--kernels nsa,gemm: cells" "$(wc -l <"$study/seed.kernels.txt")" 69
check_eq "--kernels nsa,gemm: no mha" "$(grep -c "^mha\." "$study/seed.kernels.txt")" 0
seed skipc --skip-cutedsl
check_eq "--skip-cutedsl: cells (123 - 18)" "$(wc -l <"$study/seed.skipc.txt")" 105
check_eq "--skip-cutedsl: no cutedsl cell" "$(grep -c "\.cutedsl\.log	" "$study/seed.skipc.txt")" 0
seed skipb --skip-baselines --kernels mha
check_eq "--skip-baselines --kernels mha: the 6 mha cutedsl cells" \
  "$(grep -c "^mha\..*\.cutedsl\.log	.*--system cutedsl " "$study/seed.skipb.txt") $(wc -l <"$study/seed.skipb.txt")" "6 6"
seed both --skip-baselines --skip-cutedsl
check_eq "--skip-baselines --skip-cutedsl: exit 2" "$?" 2
check "--skip-baselines --skip-cutedsl: says why" grep -q "leaves no cell to run" "$study/seed.both.err"
seed badk --kernels gemm,conv
check_eq "--kernels gemm,conv: exit 2" "$?" 2
check "--kernels: names the kernels there are" grep -q "expected a comma-separated list of gemm, mha, nsa" "$study/seed.badk.err"
seed badw --warmup 'x;y'
check_eq "--warmup x;y: exit 2" "$?" 2
check "--warmup: expects a number" grep -q "expected a whole number" "$study/seed.badw.err"
seed testw --cases test --warmup 3
check_eq "--warmup with --cases test (its cases set warmup): exit 2" "$?" 2
check "--warmup with --cases test: says it is a case key" grep -q "set warmup: warmup is an axis or a case key" "$study/seed.testw.err"
seed outdir --kernels nsa --only system=fused --output-dir "$work/seedout"
check_eq "--output-dir (dry run): exit" "$?" 0
check_eq "--output-dir with --kernels and --only: the nsa fused cells" "$(wc -l <"$study/seed.outdir.txt")" 3
check "--output-dir (dry run): says where the figures would go" grep -q "plot.sh ae_logs --out $work/seedout would draw" "$study/seed.outdir.err"
check "--output-dir (dry run): draws nothing" test ! -e "$work/seedout"

cells=$study/cells.default.txt
check "gemm wgmma command" grep -q "^gemm.h100.fp16.8192x8192x8192.wgmma.log	$build/bin/gemmbench --system wgmma --m 8192 --n 8192 --k 8192 --dtype fp16 --warmup 1 --runs 2 --device cpu --check$" "$cells"
check "gemm pytorch peer" grep -q "^gemm.h100.bf16.1024x1024x1024.pytorch.log	python3 $repo/scripts/peers/gemm.py --system pytorch --m 1024 --n 1024 --k 1024 --dtype bf16 " "$cells"
check "mha fused: the case, not the cluster's seqlen 512 / heads 2" grep -q "^mha.h100.b8.h128.s4096.d128.c1.fused.log	$build/bin/attnvar --workload attn --system fused --batch 8 --heads 128 --seqlen 4096 --dim 128 --causal 1 --dtype fp16 .*--check$" "$cells"
check "mha naive torch peer" grep -q "^mha.h100.b8.h32.s1024.d128.c0.torch.log	python3 $repo/scripts/peers/peer.py --workload attn --system torch --batch 8 --heads 32 --seqlen 1024 --dim 128 --causal 0 --dtype fp16 .*--check --check-pairs 16$" "$cells"
check "nsa fused command" grep -q "^nsa.h100.b2.h16.s512.d64.bs32.g1.sel8.c1.fused.log	$build/bin/attnvar --workload nsa --system fused --batch 2 --heads 16 --seqlen 512 --dim 64 --block-size 32 --groups 1 --selected-blocks 8 --causal 1 --scale 0.1 .*--check$" "$cells"
check "gemm tilelang peer" grep -q "^gemm.h100.fp16.4096x4096x4096.tilelang.log	python3 $repo/scripts/peers/gemm.py --system tilelang --m 4096 " "$cells"
check "mha cutedsl peer" grep -q "^mha.h100.b8.h32.s4096.d128.c1.cutedsl.log	python3 $repo/scripts/peers/peer.py --workload attn --system cutedsl --batch 8 " "$cells"
check "mha fa3 (ours' family: attnvar)" grep -q "^mha.h100.b8.h32.s4096.d128.c0.fa3.log	$build/bin/attnvar --workload attn --system fa3 " "$cells"
check "nsa peer command" grep -q "^nsa.h100.b2.h16.s4096.d32.bs32.g16.sel1.c1.torch.log	python3 $repo/scripts/peers/peer.py --workload nsa --system torch --batch 2 --heads 16 --seqlen 4096 --dim 32 --block-size 32 --groups 16 --selected-blocks 1 --causal 1 --scale 0.1 " "$cells"

# run_single.sh: experiment and system by position, axes and case keys as key=value
single() { (cd "$study" && ./run_single.sh "$@" --dry-run --local --device h100 -c "$cluster" 2>/dev/null | cut -f1 | sort | tr '\n' ' '); }
check_eq "run_single gemm wgmma m=8192 dtype=fp16" "$(single gemm wgmma m=8192 dtype=fp16)" "gemm.h100.fp16.8192x8192x8192.wgmma.log "
check_eq "run_single mha fused seqlen=1024 causal=1" "$(single mha fused seqlen=1024 causal=1)" "mha.h100.b8.h32.s1024.d128.c1.fused.log "
check_eq "run_single nsa: --cases nsa_only keeps its value" "$(single nsa fused --cases nsa_only seqlen=2048 groups=4)" "nsa.h100.b2.h16.s2048.d64.bs32.g4.sel4.c1.fused.log nsa.h100.b2.h16.s2048.d64.bs64.g4.sel2.c1.fused.log "

# a local CPU-mode run of the mha test list: ours (the CPU reference stands in) end ok, the
# peers ok or unsupported (no torch, or no such kernel on a CPU)
(cd "$study" && ./run.sh --local --device h100 -c "$cluster" -q --cases test --only experiment=mha >run.txt 2>&1)
check_eq "local mha test run exit" "$?" 0
logs=$study/ae_logs
check_eq "mha test: 18 logs" "$(count_paths "$logs"/*)" 18
for c in 0 1; do
  for s in fused unfused; do
    f=$logs/mha.h100.b1.h4.s512.d128.c$c.$s.log
    check_eq "mha c$c $s ok" "$(last_result "$f" status)" ok
    check "mha c$c $s checked" grep -q "^check output=out .*ok=1" "$f"
    check "mha c$c $s ran the case's size in CPU mode" grep -q "^config workload=attn system=$s batch=1 heads=4 dim=128 seqlen=512 dtype=fp16 causal=$c device=cpu" "$f"
  done
  for s in torch sdpa-flash sdpa-cudnn flex tilelang cutedsl fa3; do
    st=$(last_result "$logs/mha.h100.b1.h4.s512.d128.c$c.$s.log" status)
    check "mha c$c $s ok or unsupported ($st)" test "$st" = ok -o "$st" = unsupported
  done
done
# run_single.sh reruns one cell of that run in its own list (no --cases given: the run says test)
(cd "$study" && ./run_single.sh mha fused causal=1 --local --device h100 -c "$cluster" -q >single.txt 2>&1)
check_eq "run_single in the test run: exit" "$?" 0
check "the rerun cell's old log moved to attempts/" test -e "$(cd "$study" && current_run)/attempts/mha.h100.b1.h4.s512.d128.c1.fused.log.1"
check_eq "the rerun cell is ok" "$(last_result "$logs/mha.h100.b1.h4.s512.d128.c1.fused.log" status)" ok

# the seed's JSON rows and the figures from those logs
"$plot" table --config "$study/experiment.yaml" --logs "$logs" --format json -o "$work/mha.json" 2>"$work/table.err"
check_eq "table exit" "$?" 0
check "json: the seed's fields of a CPU row" grep -q '"kernel": "mha", "backend": "fused", "arch": null, "gpu_model": "none", "compute_capability": null, "problem_size": {"batch": 1, "heads": 4, "seq_len": 512, "dim": 128, "is_causal": true}, "latency_ms": [0-9.]*, "tflops": [0-9.]*, "compilation_time": null' "$work/mha.json"
check "json: no warning (the logs' config lines agree with their names)" test ! -s "$work/table.err"
(cd "$study" && ./plot.sh --out "$work/figs" --no-render >plot.txt 2>&1)
check_eq "plot.sh exit" "$?" 0
check "plot read the 18 logs and drew them all" grep -q "^18 logs read: 18 drawn, 0 read and not drawn" "$study/plot.txt"
check "mha comparison data" grep -q '^[-0-9.]* [0-9.]* [0-9]* 1 .* 0 fused "B1 H4 S512 D128 causal=0" 0$' "$work/figs/mha_comparison_h100.dat"
check "speedup over the naive torch (or n/a without torch)" grep -q '^# device=h100 experiment=mha metric=speedup baseline=torch' "$work/figs/speedup_comparison_h100.dat"
check "the figures say the logs are CPU runs" grep -q '^note_text = "CPU reference logs' "$work/figs/mha_comparison_h100.gp"
check "the speedup figure has a panel per kernel (gemm and nsa without logs: NS)" \
  test "$(grep -c '^# device=h100 experiment=' "$work/figs/speedup_comparison_h100.dat")" = 3
# the seed's `visualize.py complete.json`: plot.sh draws the json table as it drew its logs
(cd "$study" && ./plot.sh "$work/mha.json" --out "$work/figs-json" --no-render >plot-json.txt 2>&1)
check_eq "plot.sh TABLE exit" "$?" 0
check "plot.sh TABLE read the 18 rows and drew them all" grep -q "^18 rows read: 18 drawn, 0 read and not drawn" "$study/plot-json.txt"
check "plot.sh TABLE: every .dat and .gp as from the logs (the CPU note too)" diff -r "$work/figs" "$work/figs-json"

# gpu_run.sh (the lead's GPU session) end to end in CPU mode: one list, tables, figures, merge
(cd "$study" && cp "$src/studies/tilebench/gpu_run.sh" . && LISTS=test DEVICE=h100 CLUSTER=$cluster \
  OUT=$work/gpu ./gpu_run.sh --only experiment=mha >gpu_run.txt 2>&1)
check_eq "gpu_run.sh in CPU mode: exit" "$?" 0
check "gpu_run.sh: the summary" grep -q "^tilebench test: runner exit 0 (done); 18 logs" "$work/gpu/summary.txt"
check "gpu_run.sh: figure data, tables" test -s "$work/gpu/test/figures/mha_comparison_h100.dat" -a -s "$work/gpu/test/table.json"
check_eq "gpu_run.sh: the merged json has every row" "$(grep -c '"kernel": "mha"' "$work/gpu/tilebench.json")" 18
for f in mha_comparison_h100.dat mha_comparison_h100.gp speedup_comparison_h100.dat; do
  check "gpu_run.sh: the merged table's $f is the one list's" cmp -s "$work/gpu/test/figures/$f" "$work/gpu/figures/$f"
done

# gemm and nsa test lists in CPU mode, once their binaries exist (gemmbench; attnvar --workload nsa)
if [ -x "$build/bin/gemmbench" ]; then
  (cd "$study" && ./run.sh --local --device h100 -c "$cluster" -q --cases test --only experiment=gemm >run-gemm.txt 2>&1)
  check_eq "local gemm test run exit" "$?" 0
  for d in fp16 bf16 fp32; do
    for s in cublas wgmma mma pytorch tilelang cutedsl; do
      st=$(last_result "$study/ae_logs/gemm.h100.$d.512x512x512.$s.log" status)
      check "gemm $d $s ok or unsupported in CPU mode ($st)" test "$st" = ok -o "$st" = unsupported
    done
  done
  # our GEMM systems are GPU kernels: in CPU mode each cell says so (the CPU reference, --system
  # ref, is checked by gemm.cli)
  for s in cublas wgmma mma; do
    check "gemm $s: CPU-mode cells name why they did not run" \
      grep -lq 'reason="--system '"$s"' runs on the GPU; --device cpu runs --system ref only"' \
      "$study"/ae_logs/gemm.h100.fp16.512x512x512.$s.log
  done
else
  echo "note: gemmbench is not built: the gemm test list's CPU run is left out"
fi
if "$build/bin/attnvar" --list-workloads 2>/dev/null | grep -qx nsa; then
  (cd "$study" && ./run.sh --local --device h100 -c "$cluster" -q --cases test --only experiment=nsa >run-nsa.txt 2>&1)
  check_eq "local nsa test run exit" "$?" 0
  for s in fused unfused; do
    f=$study/ae_logs/nsa.h100.b2.h16.s256.d64.bs32.g1.sel4.c1.$s.log
    check_eq "nsa $s ok" "$(last_result "$f" status)" ok
    check "nsa $s checked" grep -q "^check .*ok=1" "$f"
  done
else
  echo "note: attnvar has no nsa workload yet: the nsa test list's CPU run is left out"
fi
finish
