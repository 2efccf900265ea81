#!/usr/bin/env bash
# CLI tests of repro-plot: .dat contents, broken inputs reported (not fatal; fatal with
# --strict), csv/json export, merge and compare. Fixture logs: tests/plot/fixtures/ (test data).
#   test_cli.sh REPRO_PLOT SOURCE_DIR
# check() evals its first argument: the single quotes keep its expansions for eval.
# shellcheck disable=SC2016
# shellcheck source=tests/plot/lib.sh
source "$(dirname "$0")/lib.sh"
bin=$1; src=$2
fx=$src/tests/plot/fixtures

# 1. .dat contents from the AE fixtures (fig12 kernel, row h100, column h2o = block 0)
"$bin" draw --config "$src/fig12/experiment.yaml" --logs "$fx/ae/fig12" --out "$tmp/d12" --no-render > "$tmp/d12.out" 2>&1
check '[ $? -eq 0 ]' "draw --no-render exits 0"
# shellcheck disable=SC2034 # read by the checks, which check() evals
dat=$tmp/d12/fig12_kernel.dat
check 'grep -q "^# device=h100 workload=h2o ymax=30$" "$dat"' "first block is h100/h2o with ymax 30"
check 'grep -q "^1 B 4 4 [0-9]* 0 [0-9.]* [0-9.]* 0.0000 0.1600 0$" "$dat"' "inductor (dynamo) bar of 4 ms"
check 'grep -q "^9 J 1.25 1.25 2236962 1 " "$dat" && grep -q "^9 [0-9.]* \"3.20×\" .* speedup " "$dat"' "the artifact's our -> FlashTensor (artifact), ours where only its logs are: 1.25 ms, hatched, speedup 3.20x"
check 'grep -q "^0 A nan nan [0-9]* 0 nan" "$dat" && grep -q "^0 [0-9.]* \"NS\" 90 .* mark " "$dat"' "missing torch is NS, no zero bar"
check 'grep -q "\"OOM\"" "$dat" && grep -q "\"TLE\"" "$dat"' "OOM and TLE marks"
check 'grep -q "^outbase = \"fig12_kernel\"" "$tmp/d12/fig12_kernel.gp" && grep -q "template grid.gp" "$tmp/d12/fig12_kernel.gp"' ".gp has header and template"
check 'grep -q "geometric mean speedup of FlashTensor (artifact) over the best other system: 3.20x (1 of 7 workloads)" "$tmp/d12.out"' "terminal table geomean"
check 'grep -q "missing  kernel.h100.roco.torch.log" "$tmp/d12.out"' "missing logs listed by file name"

# 1b. a grid figure's workload: (one workload column of several plot workloads) and a figure of
# an experiment without any log (a note, in the figure and the table, instead of its whole
# matrix listed as missing): studies/sdpa-scale with its shipped H100 D=128 and D=64 logs alone, so
# that its Gemma-2 and added head-dim experiments have none
mkdir -p "$tmp/sdlogs" && cp "$src"/backup_logs/sdpa-scale/d128-*.h100.* "$src"/backup_logs/sdpa-scale/d64-*.h100.* "$tmp/sdlogs/"
sd_logs=$(find "$tmp/sdlogs" -name '*.log' | wc -l)
export sd_logs # read by a check below (its condition is evaluated)
"$bin" draw --config "$src/studies/sdpa-scale/experiment.yaml" --logs "$tmp/sdlogs" --out "$tmp/sd" --no-render > "$tmp/sd.out" 2>&1
check '[ $? -eq 0 ]' "sdpa-scale draws with experiments that have no logs"
check '[ "$(grep -c "^# device=" "$tmp/sd/sdpa_d128_c1_fp16.dat")" -eq 1 ] && grep -q "^# device=h100 workload=attn " "$tmp/sd/sdpa_d128_c1_fp16.dat"' "workload: attn: one column although gemma2 is a plot workload"
check 'grep -q "^# device=h100 workload=gemma2 " "$tmp/sd/sdpa_gemma2_d256_c1_fp16.dat" && ! grep -q "workload=attn" "$tmp/sd/sdpa_gemma2_d256_c1_fp16.dat"' "workload: gemma2: its column alone"
check 'grep -qF "note_text = \"no logs of experiment gemma2-d256-c1-fp16 yet: every cell is NS\"" "$tmp/sd/sdpa_gemma2_d256_c1_fp16.gp" && grep -qF "** no logs of experiment d96-c1-fp16 yet: every cell is NS **" "$tmp/sd.out"' "an experiment without logs: the note in the figure and the table"
check '! grep -q "missing  d96-c1-fp16\|missing  gemma2" "$tmp/sd.out" && grep -q "^$sd_logs logs read: $sd_logs drawn, 0 read and not drawn" "$tmp/sd.out"' "its cells not listed as missing; every shipped log drawn"
check 'grep -qF "note_text = \"\"" "$tmp/sd/sdpa_d128_c1_fp16.gp"' "a figure with logs has no note"

# 2. broken inputs: reported and skipped, not fatal; --strict makes them fatal
cp -r "$fx/broken/fig12" "$tmp/broken"
: > "$tmp/broken/kernel.h100.gemma2.fused.log"
printf 'ELF\001\000\000\000\377\376binary' > "$tmp/broken/kernel.h100.corm.fused.log"
"$bin" draw --config "$src/fig12/experiment.yaml" --logs "$tmp/broken" --out "$tmp/b" --no-render > "$tmp/b.out" 2>&1
check '[ $? -eq 0 ]' "broken logs are not fatal"
check 'grep -q "skipped kernel.*gemma2.fused.log: empty file\|skipped .*kernel.h100.gemma2.fused.log: empty file" "$tmp/b.out"' "empty file reported"
check 'grep -q "kernel.h100.corm.fused.log: binary file" "$tmp/b.out"' "binary file reported"
check 'grep -q "kernel.h100.roco.our.log:2: last line is cut" "$tmp/b.out"' "cut AE time line reported with its line (torn: ERR)"
check 'grep -q "kernel.h100.attn.fused.log:5: last line is cut" "$tmp/b.out"' "cut result line reported"
check 'grep -q "notes.txt: unknown file" "$tmp/b.out" && grep -q "kernel.h100.log: unknown file" "$tmp/b.out"' "unknown files reported"
check 'grep -q "^H2O .* 2.000 " "$tmp/b.out"' "the good log beside them is used"
"$bin" draw --config "$src/fig12/experiment.yaml" --logs "$tmp/broken" --out "$tmp/b" --no-render --strict > /dev/null 2>&1
check '[ $? -eq 3 ]' "--strict exits 3"

# 3. export
"$bin" table --config "$src/fig12/experiment.yaml" --logs "$fx/ours/fig12" --format csv -o "$tmp/ours.csv" 2>/dev/null
check '[ $? -eq 0 ] && [ $(wc -l < "$tmp/ours.csv") -eq 6 ]' "csv: header + 5 rows"
check 'grep -q "^fig12,kernel,h100,h2o,torch,4096,timeout,,,,,," "$tmp/ours.csv"' "runner timeout line wins in the table"
check 'grep -q "^fig12,e2e,h100,h2o,fused,4096,ok,150.25,149,152,,14000,ours," "$tmp/ours.csv"' "e2e row"
"$bin" table --config "$src/fig12/experiment.yaml" --logs "$fx/ours/fig12" --format json > "$tmp/ours.json" 2>/dev/null
check 'grep -q "\"system\": \"fused\", \"seqlen\": 4096, \"status\": \"ok\", \"avg_ms\": 1.2997" "$tmp/ours.json" && grep -q "\"gflops_s\": null" "$tmp/ours.json"' "json rows with nulls"
if command -v python3 >/dev/null; then check 'python3 -m json.tool "$tmp/ours.json" >/dev/null' "json parses"; fi

# 4. merge: AE + ours tables (no cell in common: the AE's our is FlashTensor (artifact), ours is
# fused), then a later table of ours whose fused h2o differs: the later input wins that cell
"$bin" table --config "$src/fig12/experiment.yaml" --logs "$fx/ae/fig12" -o "$tmp/ae.csv" 2>/dev/null
"$bin" merge -o "$tmp/merged.csv" "$tmp/ae.csv" "$tmp/ours.csv" 2> "$tmp/merge.err"
check '[ $? -eq 0 ] && [ $(wc -l < "$tmp/merged.csv") -eq 12 ]' "merge: 6 + 5 rows, no shared cell"
sed 's/^fig12,kernel,h100,h2o,fused,4096,ok,1.2997,/fig12,kernel,h100,h2o,fused,4096,ok,1.5,/' "$tmp/ours.csv" > "$tmp/ours2.csv"
"$bin" merge -o "$tmp/merged2.csv" "$tmp/ae.csv" "$tmp/ours.csv" "$tmp/ours2.csv" 2> "$tmp/merge2.err"
check '[ $? -eq 0 ] && [ $(wc -l < "$tmp/merged2.csv") -eq 12 ] && grep -q "replaces kernel.h100.h2o.fused" "$tmp/merge2.err" && grep -q "^fig12,kernel,h100,h2o,fused,4096,ok,1.5," "$tmp/merged2.csv"' "later input wins"
printf 'not,a,table\n' > "$tmp/junk.csv"
"$bin" merge "$tmp/junk.csv" > /dev/null 2> "$tmp/junk.err"
check '[ $? -eq 1 ] && grep -q "junk.csv:1: expected the header" "$tmp/junk.err"' "merge rejects a non-table with file:line"

# 5. compare: same logs -> ratio 1; one time doubled -> outside the tolerance, exit 4
"$bin" compare --config "$src/fig12/experiment.yaml" "$fx/ae/fig12" "$fx/ae/fig12" > "$tmp/c1.out" 2>&1
check '[ $? -eq 0 ] && grep -q "geometric mean of B/A over 3 cells: 1.0000" "$tmp/c1.out"' "compare with itself"
cp -r "$fx/ae/fig12" "$tmp/slow"
sed -i 's/avg 4.0000 ms/avg 8.0000 ms/' "$tmp/slow/kernel.h100.h2o.dynamo.log"
"$bin" compare --config "$src/fig12/experiment.yaml" --tol 0.1 "$fx/ae/fig12" "$tmp/slow" > "$tmp/c2.out" 2>&1
check '[ $? -eq 4 ] && grep -q "kernel.h100.h2o.inductor@4096 .* 2.000  <- outside" "$tmp/c2.out"' "compare flags the doubled cell"
check 'grep -q "geometric mean of B/A over 3 cells: 1.2599" "$tmp/c2.out"' "compare geomean = 2^(1/3)"
"$bin" compare "$tmp/ae.csv" "$tmp/merged.csv" > "$tmp/c3.out" 2>&1
check 'grep -q "only in B: 5" "$tmp/c3.out"' "compare tables: cells only in B"

# 6. bad usage and bad config are clear errors
"$bin" draw --config "$src/fig12/experiment.yaml" > /dev/null 2>&1
check '[ $? -eq 2 ]' "missing --logs is a usage error"
printf 'experiments: {k: {log: "{device}.log"}}\nplot:\n  devices: [a]\n  systems: [s]\n  figures: [{name: f, kind: pie}]\n' > "$tmp/bad.yaml"
"$bin" draw --config "$tmp/bad.yaml" --logs "$tmp" 2> "$tmp/bad.err" > /dev/null
check '[ $? -eq 1 ] && grep -q "bad.yaml:5:29: expected kind: grid, sweep, comparison or speedup" "$tmp/bad.err"' "bad config names file:line:column"
# the log name is the experiment's own: a leftover plot: log_name is refused, with where
printf 'experiments: {k: {log: "{device}.log"}}\nplot:\n  log_name: "{device}.log"\n  devices: [a]\n  systems: [s]\n  figures: [{name: f, kind: grid}]\n' > "$tmp/bad.yaml"
"$bin" draw --config "$tmp/bad.yaml" --logs "$tmp" 2> "$tmp/bad.err" > /dev/null
check '[ $? -eq 1 ] && grep -q "bad.yaml:3:3: plot: log_name is not read" "$tmp/bad.err"' "plot: log_name refused"

# 7. a parser that never lies
# 7a. every log read is drawn, or listed as read and not drawn with why (fig14: tensorrt is
#     drawn, a system in no plot: systems list is listed)
"$bin" draw --config "$src/fig14/experiment.yaml" --logs "$fx/ae/fig14" --out "$tmp/d14" --no-render > "$tmp/d14.out" 2>&1
check 'grep -q "^Attn .* 0.800 .* 0.600 " "$tmp/d14.out"' "fig14 draws its tensorrt log"
check 'grep -q "3 logs read: 2 drawn, 1 read and not drawn" "$tmp/d14.out"' "fig14: read/drawn counts"
check 'grep -q "not drawn .*h100.attn.xformers.log: system xformers is not in fig14.s plot: systems" "$tmp/d14.out"' "an undrawn log is listed with its reason"
"$bin" draw --config "$src/fig14/experiment.yaml" --logs "$fx/ae/fig14" --out "$tmp/d14" --no-render --strict > /dev/null 2>&1
check '[ $? -eq 3 ]' "--strict fails when a log is not drawn"
# 7b. fig13 TensorRT memory: activation + weights bytes win over mib= (1 GiB + 512 MiB)
"$bin" draw --config "$src/fig13/experiment.yaml" --logs "$fx/ae/fig13" --out "$tmp/d13" --no-render > /dev/null 2>&1
check 'grep -q "^[0-9.-]* 1536 .* 4096 tensorrt$" "$tmp/d13/fig13.dat"' "fig13 tensorrt memory 1536 MiB"
# 7c. odd folder entries: a FIFO named like a log, two directory links to ., a dangling link
odd=$tmp/odd; mkdir -p "$odd"
cp "$fx/ours/fig12/kernel.h100.h2o.fused.log" "$odd/"
mkfifo "$odd/kernel.h100.h2o.torch.log"
ln -s . "$odd/a"; ln -s . "$odd/b"
ln -s missing.log "$odd/kernel.h100.roco.fused.log"
timeout 20 "$bin" table --config "$src/fig12/experiment.yaml" --logs "$odd" -o "$tmp/odd.csv" 2> "$tmp/odd.err"
check '[ $? -eq 0 ]' "odd folder: table returns (no FIFO hang, no link explosion)"
check '[ "$(wc -l < "$tmp/odd.csv")" -eq 2 ]' "odd folder: one row, read once"
check 'grep -q "kernel.h100.h2o.torch.log: a FIFO, not a regular file" "$tmp/odd.err"' "the FIFO is listed"
check 'grep -q "odd/a: directory already read" "$tmp/odd.err" && grep -q "odd/b: directory already read" "$tmp/odd.err"' "the directory loops are listed"
check 'grep -q "kernel.h100.roco.fused.log: dangling symlink (-> missing.log)" "$tmp/odd.err"' "the dangling link is listed"
timeout 20 "$bin" table --config "$src/fig12/experiment.yaml" --logs "$odd" --strict > /dev/null 2>&1
check '[ $? -eq 3 ]' "--strict fails on them"
# 7d. torn and bad records: ERR, never an earlier value or n/a
tb=$tmp/torn; mkdir -p "$tb"
printf '# repro-log 1\nresult status=ok avg_ms=0.7214\nresult status=erro' > "$tb/kernel.h100.h2o.fused.log"
printf '# repro-log 1\nresult status=ok avg_ms=0.7' > "$tb/kernel.h100.roco.fused.log"
printf '# repro-log 1\nresult status=ok avg_ms=-5\n' > "$tb/kernel.h100.kf.fused.log"
printf '# repro-log 1\nresult status=ok avg_ms=0\n' > "$tb/kernel.h100.corm.fused.log"
printf 'FIXTURE\n[our] avg nan ms, min nan ms, max nan ms (1 runs, 1 warmups)\n[our] avg 2.5 ms, min 2 ms, max 3 ms (1 runs, 1 warmups)\n' > "$tb/kernel.h100.attn.fused.log"
"$bin" table --config "$src/fig12/experiment.yaml" --logs "$tb" -o "$tmp/torn.csv" 2> "$tmp/torn.err"
check 'grep -q "^fig12,kernel,h100,h2o,fused,4096,error,,,,,,ours,.*torn log" "$tmp/torn.csv"' "torn status=erro: ERR, not the earlier 0.7214"
check 'grep -q "^fig12,kernel,h100,roco,fused,4096,error,,,,,,ours,.*torn log" "$tmp/torn.csv"' "cut number: ERR, not 0.7"
check 'grep -q "^fig12,kernel,h100,kf,fused,4096,error,.*avg_ms must be a positive number" "$tmp/torn.csv" && grep -q "^fig12,kernel,h100,corm,fused,4096,error,.*avg_ms must be a positive number" "$tmp/torn.csv"' "avg_ms -5 and 0: ERR with the reason"
check 'grep -q "^fig12,kernel,h100,attn,fused,4096,ok,2.5," "$tmp/torn.csv"' "avg nan never wins; the later line counts"
# 7e. empty folder (no qsort(NULL, 0) under UBSan) and nasty reasons: valid UTF-8, RFC 4180
mkdir -p "$tmp/empty"
"$bin" table --config "$src/fig12/experiment.yaml" --logs "$tmp/empty" -o "$tmp/empty.csv" 2> "$tmp/empty.err"
check '[ $? -eq 0 ] && [ "$(wc -l < "$tmp/empty.csv")" -eq 1 ] && ! grep -q "runtime error" "$tmp/empty.err"' "empty folder: header only, no UB"
"$bin" compare --config "$src/fig12/experiment.yaml" "$tmp/empty" "$tmp/empty" > /dev/null 2> "$tmp/empty.err"
check '! grep -q "runtime error" "$tmp/empty.err"' "compare of empty folders: no UB"
nr=$tmp/nasty; mkdir -p "$nr"
printf '# repro-log 1\nresult status=error reason="a, b \\"quoted\\"\\nsecond line \xc3\xbcn\xc3\xafc\xc3\xb6de \xff\xfe"\n' > "$nr/kernel.h100.h2o.fused.log"
long=$(printf '\xc3\xa9%.0s' $(seq 1 200))
printf '# repro-log 1\nresult status=error reason="%s"\n' "$long" > "$nr/kernel.h100.kf.fused.log"
"$bin" table --config "$src/fig12/experiment.yaml" --logs "$nr" -o "$tmp/nasty.csv" 2>/dev/null
"$bin" table --config "$src/fig12/experiment.yaml" --logs "$nr" --format json -o "$tmp/nasty.json" 2>/dev/null
if command -v python3 >/dev/null; then
  check 'python3 -c "import sys; open(sys.argv[1], encoding=\"utf-8\", errors=\"strict\").read(); open(sys.argv[2], encoding=\"utf-8\", errors=\"strict\").read()" "$tmp/nasty.csv" "$tmp/nasty.json"' "csv and json are valid UTF-8"
  check 'python3 -c "import json, sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))" "$tmp/nasty.json"' "nasty json parses"
  check 'python3 -c "import csv, sys; r = list(csv.reader(open(sys.argv[1], encoding=\"utf-8\", newline=\"\"))); assert len(r) == 3 and \"second line\" in r[1][14] or \"second line\" in r[2][14], r" "$tmp/nasty.csv"' "nasty csv parses (RFC 4180)"
fi
"$bin" merge -o "$tmp/nasty2.csv" "$tmp/nasty.csv" 2> "$tmp/nasty.err"
check '[ $? -eq 0 ] && cmp -s "$tmp/nasty.csv" "$tmp/nasty2.csv"' "merge reads back what table writes, byte for byte"

# 8. case lists (studies/tilebench): logs named by case keys, one template per experiment, the
#    seed's JSON fields, merge across GPUs, comparison and speedup figures per device
#    (fixtures/ours/tilebench: hand-written test logs, not measurements)
tbc=$src/studies/tilebench/experiment.yaml tbl=$fx/ours/tilebench
"$bin" table --config "$tbc" --logs "$tbl" --format json -o "$tmp/tb.json" 2> "$tmp/tb.err"
check '[ $? -eq 0 ]' "tilebench: table json exits 0"
row() { grep "\"source\": \"[^\"]*/$1\"" "$tmp/tb.json"; }
r=$(row gemm.h100.fp16.1024x1024x1024.pytorch.log)
check '[[ "$r" == *"\"kernel\": \"gemm\", \"backend\": \"pytorch\", \"arch\": \"sm_90\", \"gpu_model\": \"NVIDIA H100 80GB HBM3 (fixture)\", \"compute_capability\": \"9.0\""* ]]' "json: kernel, backend, arch from cc=9.0, gpu_model, compute_capability"
check '[[ "$r" == *"\"problem_size\": {\"dtype\": \"fp16\", \"m\": 1024, \"n\": 1024, \"k\": 1024}"* ]]' "json: problem_size from the log name's case keys, numbers as numbers"
check '[[ "$r" == *"\"latency_ms\": 0.01, \"tflops\": 214.7484, \"compilation_time\": 0.25}"* ]]' "json: latency_ms, tflops = gflops_s/1000, compilation_time from compile_s"
r=$(row gemm.a100.fp16.1024x1024x1024.cublas.log)
check '[[ "$r" == *"\"arch\": \"sm_80\""* && "$r" == *"\"compilation_time\": null"* ]]' "json: sm_80 from cc=8.0; no compile_s is null"
r=$(row gemm.h100.fp16.4096x4096x4096.wgmma.log)
check '[[ "$r" == *"\"status\": \"error\""* && "$r" == *"\"latency_ms\": null, \"tflops\": null"* ]]' "json: a failed check stays a row, status error"
r=$(row nsa.h100.b2.h16.s512.d64.bs32.g1.sel8.c1.fused.log)
check '[[ "$r" == *"\"problem_size\": {\"batch\": 2, \"heads\": 16, \"seq_len\": 512, \"dim\": 64, \"block_size\": 32, \"groups\": 1, \"selected_blocks\": 8, \"is_causal\": true, \"scale\": 0.1}"* ]]' "json: nsa problem_size in the template's order, the seed's key names, is_causal a boolean, scale from the config line"
# shellcheck disable=SC2034 # read by the checks, which check() evals
r=$(row mha.h100.b8.h32.s1024.d128.c0.torch.log)
check '[[ "$r" == *"\"problem_size\": {\"batch\": 8, \"heads\": 32, \"seq_len\": 1024, \"dim\": 128, \"is_causal\": false}"* ]]' "json: mha problem_size: is_causal false, no scale where the log has none"
check 'grep -q "nsa.h100.b2.h16.s512.d64.bs32.g1.sel8.c1.fused.log:4: file name says groups=1 but the log says 4" "$tmp/tb.err"' "a config line that contradicts a case key of the name is a warning"
if command -v python3 >/dev/null; then check 'python3 -m json.tool "$tmp/tb.json" >/dev/null' "tilebench json parses"; fi
"$bin" table --config "$tbc" --logs "$tbl" -o "$tmp/tb.csv" 2>/dev/null
check 'grep -q "^tilebench,gemm,h100,gemm,pytorch,0,ok,0.01,0.009,0.011,214748.4,8,ours,.*,,NVIDIA H100 80GB HBM3 (fixture),9.0,0.25,dtype=fp16 m=1024 n=1024 k=1024$" "$tmp/tb.csv"' "csv: gpu_model, compute_capability, compilation_time, problem_size at the end"
"$bin" merge -o "$tmp/tb2.csv" "$tmp/tb.csv" 2>/dev/null
check 'cmp -s "$tmp/tb.csv" "$tmp/tb2.csv"' "tilebench csv round-trips through merge byte for byte"
check 'grep -q ",nsa,h100,nsa,fused,512,ok,.*,batch=2 heads=16 seqlen=512 dim=64 block_size=32 groups=1 selected_blocks=8 causal=1 scale=0.1$" "$tmp/tb.csv"' "csv: problem_size ends with the config line's scale"
# merge across GPUs: the same cells from another GPU model (same device label) are kept, the
# same GPU's later input still wins
head -1 "$tmp/tb.csv" > "$tmp/h100.csv"; grep ",h100,.*(fixture),9.0," "$tmp/tb.csv" >> "$tmp/h100.csv"
sed 's/NVIDIA H100 80GB HBM3 (fixture),9.0,/NVIDIA H100 PCIe (fixture),9.0,/' "$tmp/h100.csv" > "$tmp/pcie.csv"
n=$(($(wc -l < "$tmp/h100.csv") - 1))
"$bin" merge -o "$tmp/m2.csv" "$tmp/h100.csv" "$tmp/pcie.csv" 2> "$tmp/m2.err"
check '[ $? -eq 0 ] && [ $(($(wc -l < "$tmp/m2.csv") - 1)) -eq $((2 * n)) ] && [ ! -s "$tmp/m2.err" ]' "merge keeps both GPUs' rows of the same cells ($n + $n)"
check 'grep -q "^tilebench,gemm,h100,gemm,cublas,0,ok,0.004,.*,NVIDIA H100 80GB HBM3 (fixture),9.0,,dtype=fp16 m=1024" "$tmp/m2.csv" && grep -q "^tilebench,gemm,h100,gemm,cublas,0,ok,0.004,.*,NVIDIA H100 PCIe (fixture),9.0,,dtype=fp16 m=1024" "$tmp/m2.csv"' "both GPUs' cuBLAS 1024 rows"
head -1 "$tmp/tb.csv" > "$tmp/a100.csv"; grep ",a100," "$tmp/tb.csv" >> "$tmp/a100.csv"
"$bin" merge -o "$tmp/m3.csv" "$tmp/h100.csv" "$tmp/a100.csv" 2> "$tmp/m3.err"
check '[ $(($(wc -l < "$tmp/m3.csv") - 1)) -eq $((n + 2)) ] && [ ! -s "$tmp/m3.err" ]' "an H100 and an A100 table: every row kept"
sed 's/^\(tilebench,gemm,h100,gemm,cublas,0,ok,\)0.004,/\10.0041,/' "$tmp/h100.csv" > "$tmp/h100b.csv"
"$bin" merge -o "$tmp/m4.csv" "$tmp/h100.csv" "$tmp/h100b.csv" 2> "$tmp/m4.err"
check '[ $(($(wc -l < "$tmp/m4.csv") - 1)) -eq $n ] && grep -q "^tilebench,gemm,h100,gemm,cublas,0,ok,0.0041," "$tmp/m4.csv" && ! grep -q ",ok,0.004,0.0039" "$tmp/m4.csv"' "the same GPU: the later input wins"
check 'grep -q "replaces gemm.h100.gemm.cublas@0\[dtype=fp16,m=1024,n=1024,k=1024\] on NVIDIA H100 80GB HBM3 (fixture)" "$tmp/m4.err"' "merge names the replaced cell with its case keys and GPU"
# a table written before the GPU and problem-size columns still reads
cut -d, -f1-15 "$tmp/ours.csv" > "$tmp/old.csv"
"$bin" merge -o "$tmp/old2.csv" "$tmp/old.csv" 2> "$tmp/old.err"
check '[ $? -eq 0 ] && [ $(wc -l < "$tmp/old2.csv") -eq $(wc -l < "$tmp/old.csv") ]' "an old 15-column table merges"
# the figures: one file per device with logs, panels ms (log) and TFLOP/s, speedup per kernel
"$bin" draw --config "$tbc" --logs "$tbl" --out "$tmp/tbd" --no-render > "$tmp/tbd.out" 2>&1
check '[ $? -eq 0 ]' "tilebench draw exits 0"
for f in gemm_comparison_h100 gemm_comparison_a100 mha_comparison_h100 nsa_comparison_h100 speedup_comparison_h100 speedup_comparison_a100; do
  check '[ -s "$tmp/tbd/$f.dat" ] && grep -q "template bars.gp" "$tmp/tbd/$f.gp"' "$f.dat and .gp written"
done
check '[ ! -e "$tmp/tbd/mha_comparison_a100.dat" ] && [ ! -e "$tmp/tbd/gemm_comparison.dat" ]' "no file for a device without logs of the kernel"
# shellcheck disable=SC2034 # read by the checks, which check() evals
g=$tmp/tbd/gemm_comparison_h100.dat
check 'grep -q "^# device=h100 experiment=gemm metric=ms range=0.001:1$" "$g" && grep -q "^# device=h100 experiment=gemm metric=tflops range=0:1000$" "$g"' "gemm panels: ms on decades, TFLOP/s linear"
check 'grep -q "^[-0-9.]* 0.005 15610743 1 .* 0 wgmma \"1024x1024x1024 fp16\" 0$" "$g"' "wgmma 1024: 0.005 ms, hatched (ours)"
check 'grep -q "^[-0-9.]* 429.497 15610743 1 .* 0 wgmma \"1024x1024x1024 fp16\" 0$" "$g"' "wgmma 1024: 429.5 TFLOP/s"
check 'grep -q "^[-0-9.]* nan 15610743 1 nan nan nan nan 1 wgmma \"4096x4096x4096 fp16\" 0$" "$g" && grep -q "\"ERR\" 90 .* mark" "$g"' "wgmma 4096 failed its check: no bar, ERR"
check 'grep -q "^array grouplabel\[4\] = \[\"1024x1024x1024 fp16\", \"4096x4096x4096 fp16\", \"1024x1024x1024 fp16\", \"4096x4096x4096 fp16\"\]" "$tmp/tbd/gemm_comparison_h100.gp"' "groups: the x: labels, sorted by size"
check 'grep -q "^title_text = \"GEMM on H100 (NVIDIA H100 80GB HBM3 (fixture))\"" "$tmp/tbd/gemm_comparison_h100.gp"' "title names the kernel, device and GPU"
check 'grep -q "^[-0-9.]* 0.02 .* 0 pytorch \"1024x1024x1024 fp16\" 0$" "$tmp/tbd/gemm_comparison_a100.dat"' "the A100 file holds the A100 logs"
check 'grep -q "\"OOM\" 90 .* mark" "$tmp/tbd/mha_comparison_h100.dat"' "mha causal fused: OOM"
# shellcheck disable=SC2034 # read by the checks, which check() evals
s=$tmp/tbd/speedup_comparison_h100.dat
check 'grep -q "^# device=h100 experiment=gemm metric=speedup baseline=pytorch " "$s" && grep -q "^# device=h100 experiment=mha metric=speedup baseline=torch " "$s" && grep -q "^# device=h100 experiment=nsa metric=speedup baseline=torch " "$s"' "speedup: one panel per kernel with its baseline"
check 'grep -q "^[-0-9.]* 2.5 .* 0 cublas \"1024x1024x1024 fp16\" 0$" "$s" && grep -q "^[-0-9.]* 1.25 .* 1 cublas \"4096x4096x4096 fp16\" 0$" "$s" && grep -q "^[-0-9.]* 2 .* 0 wgmma \"1024x1024x1024 fp16\" 0$" "$s"' "gemm speedups over pytorch: 0.01/0.004, 0.25/0.2, 0.01/0.005"
check 'grep -q "^[-0-9.]* 4 .* 0 fused \"B8 H32 S1024 D128 causal=0\" 0$" "$s" && grep -q "^[-0-9.]* 25 .* 0 fused \"B2 H16 S512 D64 bs32 g1 sel8\" 1$" "$s"' "mha 2/0.5 and nsa 1/0.04 over the naive torch (nsa.h100.*: stale in the config, flagged)"
check '! grep -q " pytorch \"\| torch \"" "$s"' "the baseline has no bar of its own"
check 'grep -q "^array panel_ref\[3\] = \[1, 1, 1\]" "$tmp/tbd/speedup_comparison_h100.gp" && grep -q "^array panel_log\[3\] = \[1, 1, 1\]" "$tmp/tbd/speedup_comparison_h100.gp"' "speedup panels: the line at 1, log axes"
check 'grep -q "^B8 H32 S1024 D128 causal=0 .*    4.00x$" "$tmp/tbd.out"' "terminal: speedup table"
check 'grep -q "missing  mha.h100.b8.h32.s1024.d128.c0.unfused.log" "$tmp/tbd.out" && grep -q "missing  gemm.h100.fp16.1024x1024x1024.tilelang.log" "$tmp/tbd.out"' "missing logs named by the case keys, the TileLang peers' among them"
sed 's/^  tilelang: {family: peers}/  tilelang: {family: peers, expected: false}/' "$tbc" > "$tmp/absent.yaml"
"$bin" draw --config "$tmp/absent.yaml" --logs "$tbl" --out "$tmp/tba" --no-render > "$tmp/tba.out" 2>&1
check 'grep -q "missing  mha.h100.b8.h32.s1024.d128.c0.unfused.log" "$tmp/tba.out" && ! grep -q "missing .*tilelang" "$tmp/tba.out"' "a system not expected (expected: false) is not listed as missing"
check 'grep -q "15 logs read: 15 drawn, 0 read and not drawn" "$tmp/tbd.out"' "every fixture log drawn"
check 'grep -q "^[-0-9.]* nan [0-9]* 0 nan nan nan nan 0 unfused \"B2 H16 S512 D64 bs32 g1 sel8\" 1$" "$tmp/tbd/nsa_comparison_h100.dat" && grep -q "^B2 H16 S512 D64 bs32 g1 sel8 .* ERR\* " "$tmp/tbd.out"' "a cell the runner wrote (no config line) is told by its name: ERR"
# stale logs (the config's plot: stale: names nsa.h100.*): hatched, starred, in no ratio or mean
check '[ "$(grep -c "^[-0-9.]* [0-9.]* [0-9]* [01] .* 1$" "$tmp/tbd/nsa_comparison_h100.dat")" -gt 2 ] && ! grep -q "^[-0-9.]* [0-9.]* [0-9]* [01] .* 0$" "$tmp/tbd/nsa_comparison_h100.dat" && ! grep -q " 1$" "$tmp/tbd/mha_comparison_h100.dat"' "stale: every NSA H100 bar flagged, no other kernel's"
check 'grep -q "^\*\* white-hatched: [0-9]* stale logs (plot: stale:), in no speedup or mean \*\*$" "$tmp/tbd.out" && grep -q "^note_text = \"white-hatched: " "$tmp/tbd/nsa_comparison_h100.gp" && grep -q "^note_text = \"\"" "$tmp/tbd/mha_comparison_h100.gp"' "stale: the figure's note says what the hatch means"
check 'grep -q "^B2 H16 S512 D64 bs32 g1 sel8  *1\.000\*  *NS  *NS  *ERR\*  *0\.040\*  *-$" "$tmp/tbd.out" && grep -q "^\* [0-9]* stale logs (plot: stale:), drawn but in no ratio or geometric mean: nsa.h100.\*: run at 4a4b952" "$tmp/tbd.out"' "stale: the table's value starred, no speedup, the reason under it"
# x: columns in a grid figure too (a panel per case), with a figure's own systems
sed 's/^  figures:$/  figures:\n    - {name: gemm_grid, kind: grid, experiment: gemm, x: "{m} {dtype}", systems: [pytorch, cublas, wgmma]}/' "$tbc" > "$tmp/grid.yaml"
"$bin" draw --config "$tmp/grid.yaml" --logs "$tbl" --out "$tmp/tbg" --no-render > "$tmp/tbg.out" 2>&1
check 'grep -q "^# device=h100 workload=1024 fp16 ymax=0.012$" "$tmp/tbg/gemm_grid.dat" && grep -q "^2 C 0.005 0.005 15610743 1 " "$tmp/tbg/gemm_grid.dat"' "grid with x: a panel per case, the figure's three systems"
check 'grep -q "^array collabel\[2\] = \[\"1024 fp16\", \"4096 fp16\"\]" "$tmp/tbg/gemm_grid.gp" && grep -q "^4096 fp16 .* ERR " "$tmp/tbg.out"' "grid with x: column labels and the table"
# config errors of the new figure keys name where
bad_tb() { # YAML-LINES EXPECTED
  printf 'experiments: {k: {log: "{experiment}.{device}.{m}.{system}.log"}}\nplot:\n  devices: [a]\n  systems: [s, t]\n  figures:\n%s\n' "$1" > "$tmp/badtb.yaml"
  "$bin" table --config "$tmp/badtb.yaml" --logs "$tmp/empty" > /dev/null 2> "$tmp/badtb.err"
  local rc=$? want=$2
  check '[ $rc -eq 1 ] && grep -qF "badtb.yaml:$want" "$tmp/badtb.err"' "config error: $2 ($(cat "$tmp/badtb.err"))"
}
bad_tb '    - {name: f, kind: comparison, experiment: k, x: "{m"}' '6:53: x: expected {key} placeholders'
bad_tb '    - {name: f, kind: comparison, experiment: k, x: "{system}"}' '6:53: x: {system} cannot be a column'
bad_tb '    - {name: f, kind: comparison, experiment: k, systems: [s, u]}' '6:63: systems: expected a name'
bad_tb '    - {name: f, kind: comparison, experiment: k, logy: [mib]}' '6:56: logy: only metrics the figure draws'
bad_tb '    - {name: f, kind: comparison}' '6:7: a comparison figure needs experiment'
bad_tb '    - {name: f, kind: comparison, experiment: k, systems: [s]}
    - {name: g, kind: speedup, panels: [{figure: f, baseline: t}]}' '7:63: baseline: expected one of the systems of figure f'
bad_tb '    - {name: g, kind: speedup, panels: [{figure: nope, baseline: t}]}' '6:50: panel figure: expected the name of a comparison or grid figure'
bad_tb '    - {name: f, kind: grid, experiment: k}
    - {name: f, kind: grid, experiment: k}' '7:7: figure f is listed twice'

# 9. merge reads JSON too: our json export (it must read back to the rows the csv gives) and
#    the tilebench seed's result files (fixtures/seed/seed_fixture.json: a hand-written test
#    fixture in the seed's format, not a measurement), detected by extension or content
seed=$fx/seed/seed_fixture.json
"$bin" merge -o "$tmp/rt_csv.csv" "$tmp/tb.csv" 2>/dev/null
"$bin" merge -o "$tmp/rt_json.csv" "$tmp/tb.json" 2> "$tmp/rt.err"
check '[ $? -eq 0 ] && cmp -s "$tmp/rt_csv.csv" "$tmp/rt_json.csv"' "our json export merges to the same csv as our csv ($(head -2 "$tmp/rt.err"))"
"$bin" merge --format json -o "$tmp/rt_json.json" "$tmp/tb.json" 2>/dev/null
"$bin" merge --format json -o "$tmp/rt_csv.json" "$tmp/tb.csv" 2>/dev/null
check 'cmp -s "$tmp/rt_json.json" "$tmp/tb.json" && cmp -s "$tmp/rt_csv.json" "$tmp/tb.json"' "json -> merge -> json and csv -> merge -> json give table's json byte for byte"
"$bin" compare "$tmp/tb.json" "$tmp/tb.csv" > "$tmp/rt.cmp" 2>&1
check 'grep -q "geometric mean of B/A over 11 cells: 1.0000" "$tmp/rt.cmp" && grep -q "only in A: 0; only in B: 0" "$tmp/rt.cmp"' "compare takes a json table"
"$bin" merge -o "$tmp/seed.csv" "$tmp/tb.csv" "$seed" 2> "$tmp/seed.err"
check '[ $? -eq 0 ] && [ $(($(wc -l < "$tmp/seed.csv") - 1)) -eq $(($(wc -l < "$tmp/tb.csv") - 1 + 4)) ] && [ ! -s "$tmp/seed.err" ]' "our 15 rows and the seed fixture's 4 merged ($(cat "$tmp/seed.err"))"
check 'grep -qF "tilebench,gemm,h100,gemm,pytorch,0,ok,0.01,0.009,0.011,214748.4,8,ours," "$tmp/seed.csv"' "our rows are kept"
check 'grep -qxF "tilebench,gemm,h100,gemm,tilelang,0,ok,0.25,,,549755.8,,seed,$seed,,NVIDIA H100 PCIe (fixture),9.0,3.5,m=4096 n=4096 k=4096 dtype=fp16" "$tmp/seed.csv"' "seed cuda gemm: system tilelang, device h100, tflops*1000, compile time, source the file"
check 'grep -qxF "tilebench,gemm,h100,gemm,pytorch,0,ok,0.3,,,458129.8,,seed,$seed,,NVIDIA H100 PCIe (fixture),9.0,,m=4096 n=4096 k=4096 dtype=fp16" "$tmp/seed.csv"' "seed pytorch gemm stays pytorch; keys M N K lower-cased; null compile time empty"
check 'grep -qxF "tilebench,nsa,h100,nsa,cutedsl,512,ok,0.543,,,45230,,seed,$seed,,NVIDIA H100 80GB HBM3 (fixture),9.0,2.15,batch=2 heads=16 seqlen=512 dim=64 block_size=32 groups=1 selected_blocks=8 causal=1 scale=0.1" "$tmp/seed.csv"' "seed cutedsl nsa: seq_len -> seqlen, is_causal true -> causal=1, scale, 45.23 TFLOP/s = 45230 GFLOP/s"
check 'grep -qxF "tilebench,mha,nvidia-geforce-rtx-4090-fixture,attn,torch,1024,ok,3,,,45800,,seed,$seed,,NVIDIA GeForce RTX 4090 (fixture),8.9,,batch=8 heads=32 seqlen=1024 dim=128 causal=0" "$tmp/seed.csv"' "seed pytorch mha: our torch (naive), workload attn, device from an unknown GPU model, is_causal false -> 0"
"$bin" merge --format json "$seed" > "$tmp/seed.json" 2>/dev/null
check 'grep -qF "\"system\": \"cutedsl\", \"seqlen\": 512, \"status\": \"ok\", \"avg_ms\": 0.543," "$tmp/seed.json" && grep -qF "\"backend\": \"cutedsl\", \"arch\": \"sm_90\", \"gpu_model\": \"NVIDIA H100 80GB HBM3 (fixture)\", \"compute_capability\": \"9.0\", \"problem_size\": {\"batch\": 2, \"heads\": 16, \"seq_len\": 512, \"dim\": 64, \"block_size\": 32, \"groups\": 1, \"selected_blocks\": 8, \"is_causal\": true, \"scale\": 0.1}, \"latency_ms\": 0.543, \"tflops\": 45.23, \"compilation_time\": 2.15}" "$tmp/seed.json"' "the seed's nsa row written back in the seed's names"
cp "$seed" "$tmp/seed_rows.txt"
"$bin" merge "$tmp/seed_rows.txt" > "$tmp/seed_txt.csv" 2>/dev/null
check '[ $? -eq 0 ] && [ $(wc -l < "$tmp/seed_txt.csv") -eq 5 ] && grep -q ",nsa,h100,nsa,cutedsl,512,ok,0.543," "$tmp/seed_txt.csv"' "json told by its content (no .json name)"
# bad json: the file, the line the row starts on, the row and what was expected; exit 1; no
# output file
bad_json() { # NAME CONTENT EXPECTED
  local want=$1$3
  printf '%s' "$2" > "$tmp/$1"
  rm -f "$tmp/badj.csv"
  "$bin" merge -o "$tmp/badj.csv" "$tmp/tb.csv" "$tmp/$1" > /dev/null 2> "$tmp/badj.err"
  # shellcheck disable=SC2034 # read by the checks, which check() evals
  local rc=$?
  check '[ $rc -eq 1 ] && [ ! -e "$tmp/badj.csv" ] && grep -qF "$want" "$tmp/badj.err"' "bad json: $want ($(cat "$tmp/badj.err"))"
}
bad_json x.json '[{"kernel": "nsa", "backend": "cutedsl", "gpu_model": "H100", "latency_ms": 1, "problem_size": [512]}]' ':1: row 1: problem_size: expected an object'
bad_json y.json '[{"kernel": "gemm", "backend": "cuda", "gpu_model": "H100", "latency_ms": 1},
 {"kernel": "gemm", "backend": "cuda", "gpu_model": "H100", "latency_ms": "fast"}]' ':2: row 2: latency_ms: expected a number or null'
bad_json z.json '[{"kernel": "gemm",
  "backend": }]' ':2:14: expected JSON (a list of row objects)'
bad_json w.json '{"kernel": "gemm"}' ':1: expected a list of row objects'
bad_json v.json '[{"kernel": "nsa", "backend": "cuda", "gpu_model": "H100", "latency_ms": 1, "problem_size": {"seq_len": 512, "seqlen": 512}}]' ':1: row 1: problem_size.seqlen: expected each key once'
bad_json u.json '[{"kernel": "gemm", "backend": "cuda", "latency_ms": 1}]' ':1: row 1: gpu_model: expected a GPU model'

# markdown: what the figures show as Markdown tables (README.md's results), with the paper's
# times of ours from fig12's plot: paper: beside the h100 grids
md=$tmp/ours.md
"$bin" table --config "$src/fig12/experiment.yaml" --logs "$fx/ours/fig12" --format markdown > "$md" 2>/dev/null
check '[ $? -eq 0 ] && grep -qxF "*fig12_kernel, H100: execution time, ms (lower is better)*" "$md"' "markdown: a title line per figure and device"
check 'grep -qxF "| workload | PyTorch | Inductor | TVM | FlexAttention | CUDA eager (ours) | ours (CUDA C) | speedup | paper | paper / ours |" "$md"' "markdown: system labels; those nobody runs here only with a log (flex); the paper columns"
check 'grep -qxF "| H2O | TLE | NS | NS | NS | NS | 1.300 | - | 1.300 | 1.00x |" "$md" && grep -qxF "| RoCo | OOM | NS | NS | NS | NS | NS | - | 1.360 | - |" "$md"' "markdown: marks, the paper's time and paper / ours"
check 'grep -qxF "| H2O | NS | NS | NS | 150.250 | - | 193.4 | 1.29x |" "$md" && grep -qxF "| geometric mean | | | | | - | | 1.29x |" "$md"' "markdown: the e2e paper time as written (193.4), the geometric means row"
"$bin" table --config "$src/fig13/experiment.yaml" --logs "$fx/ae/fig13" --format markdown --device h100 > "$tmp/f13.md" 2>/dev/null
check '[ $? -eq 0 ] && [ "$(grep -c "^\*fig13, H100: " "$tmp/f13.md")" -eq 2 ] && ! grep -q "paper" "$tmp/f13.md" && ! grep -q "H200\|A100" "$tmp/f13.md"' "markdown of a sweep: throughput and memory, --device h100 only, no paper column"
# case columns (x:): a case with logs on another device only has no row in this device's table
"$bin" table --config "$src/studies/tilebench/experiment.yaml" --logs "$src/backup_logs/tilebench" --format markdown --device h100 > "$tmp/tb100.md" 2>/dev/null
check '[ $? -eq 0 ] && grep -q "^| B2 H16 S512 D64 bs32 g1 sel8 | " "$tmp/tb100.md" && ! grep -q "^| B2 H16 S256 " "$tmp/tb100.md"' "markdown: a case column without a log on the device has no row"
"$bin" table --config "$src/studies/tilebench/experiment.yaml" --logs "$src/backup_logs/tilebench" --format markdown --device h200 > "$tmp/tb200.md" 2>/dev/null
check '[ $? -eq 0 ] && grep -q "^| B2 H16 S256 D64 bs32 g1 sel4 | " "$tmp/tb200.md"' "markdown: the cases with logs on the device keep their rows"
"$bin" table --config "$src/fig12/experiment.yaml" --logs "$fx/ours/fig12" --format markdown --device b200 > /dev/null 2> "$tmp/md.err"
check '[ $? -eq 1 ] && grep -qF -- "--device b200: not a device of fig12" "$tmp/md.err"' "markdown: an unknown --device is refused"
"$bin" table --config "$src/fig12/experiment.yaml" --logs "$fx/ours/fig12" --device h100 > /dev/null 2> "$tmp/md.err"
check '[ $? -eq 2 ] && grep -qF -- "--device: only with table --format markdown" "$tmp/md.err"' "--device without --format markdown is a usage error"

# render DIR NAME...: what it refuses before running anything (no gnuplot needed)
"$bin" render > /dev/null 2> "$tmp/render.err"
check '[ $? -eq 2 ] && grep -q "usage: repro-plot render DIR NAME" "$tmp/render.err"' "render without a folder and a name is a usage error"
"$bin" render "$tmp" sub/fig > /dev/null 2> "$tmp/render.err"
check '[ $? -eq 2 ] && grep -qF "\"sub/fig\": expected the name of a script NAME.gp in $tmp" "$tmp/render.err"' "render refuses a name with '/'"
"$bin" render "$tmp" no_such_fig > /dev/null 2> "$tmp/render.err"
check '[ $? -eq 2 ] && grep -qF "$tmp/no_such_fig.gp: no such gnuplot script" "$tmp/render.err"' "render names a missing NAME.gp"

finish
