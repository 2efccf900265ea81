#!/usr/bin/env bash
# CLI tests of repro-plot: .dat contents, broken inputs reported (not fatal; fatal with
# --strict), csv/json export, merge and compare. Fixture logs: tests/plot/fixtures/ (test data).
#   test_cli.sh REPRO_PLOT SOURCE_DIR
set -u
bin=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }
fx=$src/tests/plot/fixtures

# 1. .dat contents from the AE fixtures (fig12 kernel, row h100, column h2o = block 0)
"$bin" draw --config "$src/fig12/experiment.yaml" --logs "$fx/ae/fig12" --out "$tmp/d12" --no-render > "$tmp/d12.out" 2>&1
check '[ $? -eq 0 ]' "draw --no-render exits 0"
dat=$tmp/d12/fig12_kernel.dat
check 'grep -q "^# device=h100 workload=h2o ymax=30$" "$dat"' "first block is h100/h2o with ymax 30"
check 'grep -q "^1 B 4 4 [0-9]* 0 [0-9.]* [0-9.]* 0.0000 0.1600$" "$dat"' "inductor (dynamo) bar of 4 ms"
check 'grep -q "^8 I 1.25 1.25 14034728 1 " "$dat" && grep -q "^8 [0-9.]* \"3.2×\" .* speedup " "$dat"' "ours: 1.25 ms, hatched, speedup 3.2x"
check 'grep -q "^0 A nan nan [0-9]* 0 nan" "$dat" && grep -q "^0 [0-9.]* \"NS\" 90 .* mark " "$dat"' "missing torch is NS, no zero bar"
check 'grep -q "\"OOM\"" "$dat" && grep -q "\"TLE\"" "$dat"' "OOM and TLE marks"
check 'grep -q "^outbase = \"fig12_kernel\"" "$tmp/d12/fig12_kernel.gp" && grep -q "template grid.gp" "$tmp/d12/fig12_kernel.gp"' ".gp has header and template"
check 'grep -q "geometric mean speedup of FlashTensor (ours) over the best other system: 3.20x (1 of 7 workloads)" "$tmp/d12.out"' "terminal table geomean"
check 'grep -q "missing  kernel.h100.roco.torch.log" "$tmp/d12.out"' "missing logs listed by file name"

# 2. broken inputs: reported and skipped, not fatal; --strict makes them fatal
cp -r "$fx/broken/fig12" "$tmp/broken"
: > "$tmp/broken/kernel.h100.gemma2.fused.log"
printf 'ELF\001\000\000\000\377\376binary' > "$tmp/broken/kernel.h100.corm.fused.log"
"$bin" draw --config "$src/fig12/experiment.yaml" --logs "$tmp/broken" --out "$tmp/b" --no-render > "$tmp/b.out" 2>&1
check '[ $? -eq 0 ]' "broken logs are not fatal"
check 'grep -q "skipped kernel.*gemma2.fused.log: empty file\|skipped .*kernel.h100.gemma2.fused.log: empty file" "$tmp/b.out"' "empty file reported"
check 'grep -q "kernel.h100.corm.fused.log: binary file" "$tmp/b.out"' "binary file reported"
check 'grep -q "kernel.h100.roco.our.log:2: time line does not match" "$tmp/b.out"' "cut AE time line reported with its line"
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

# 4. merge: AE + ours tables; the later input wins a shared cell
"$bin" table --config "$src/fig12/experiment.yaml" --logs "$fx/ae/fig12" -o "$tmp/ae.csv" 2>/dev/null
"$bin" merge -o "$tmp/merged.csv" "$tmp/ae.csv" "$tmp/ours.csv" 2> "$tmp/merge.err"
check '[ $? -eq 0 ] && [ $(wc -l < "$tmp/merged.csv") -eq 11 ]' "merge: 6 + 5 - 1 shared cell = 10 rows"
check 'grep -q "replaces kernel.h100.h2o.fused" "$tmp/merge.err" && grep -q "^fig12,kernel,h100,h2o,fused,4096,ok,1.2997," "$tmp/merged.csv"' "later input wins"
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
check 'grep -q "only in B: 4" "$tmp/c3.out"' "compare tables: cells only in B"

# 6. bad usage and bad config are clear errors
"$bin" draw --config "$src/fig12/experiment.yaml" > /dev/null 2>&1
check '[ $? -eq 2 ]' "missing --logs is a usage error"
printf 'experiments: {k: {log: "{device}.log"}}\nplot:\n  devices: [{name: a}]\n  systems: [{name: s}]\n  figures: [{name: f, kind: pie}]\n' > "$tmp/bad.yaml"
"$bin" draw --config "$tmp/bad.yaml" --logs "$tmp" 2> "$tmp/bad.err" > /dev/null
check '[ $? -eq 1 ] && grep -q "bad.yaml:5:29: expected kind: grid or sweep" "$tmp/bad.err"' "bad config names file:line:column"
# the log name is the experiment's own: a leftover plot: log_name is refused, with where
printf 'experiments: {k: {log: "{device}.log"}}\nplot:\n  log_name: "{device}.log"\n  devices: [{name: a}]\n  systems: [{name: s}]\n  figures: [{name: f, kind: grid}]\n' > "$tmp/bad.yaml"
"$bin" draw --config "$tmp/bad.yaml" --logs "$tmp" 2> "$tmp/bad.err" > /dev/null
check '[ $? -eq 1 ] && grep -q "bad.yaml:3:3: plot: log_name is not read" "$tmp/bad.err"' "plot: log_name refused"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
