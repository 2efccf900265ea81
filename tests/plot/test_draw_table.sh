#!/usr/bin/env bash
# `repro-plot draw --table FILE` (and table, report): a table is drawn as the logs it was made
# of are.
# - The shipped logs of studies/tilebench (comparison and speedup figures), fig12 (grid), fig13
#   (sweep) and the artifact-format fixtures of fig12: `table --format json` (and csv) of the
#   logs, then `draw --table` of it writes every .dat and .gp byte for byte as `draw --logs`
#   does. The printed tables too, but for what differs by right: the first line (what was
#   read: "N logs read from DIR" / "N rows read from FILE") and the count line's noun ("N logs
#   read:" / "N rows read:"); and the logs' line warnings (a config line against its file name,
#   in the tilebench fixture), which `table` printed when it wrote the table: a table holds
#   each row's status and reason, not its log's lines.
# - A CPU run is known from the table's gpu "none" (the log is not reopened): the CPU note.
# - The tilebench seed's own JSON (fixtures/seed/seed_fixture.json, a hand-written fixture)
#   draws; merged with ours, a cell with rows of two GPUs under one device is ERR, as two logs
#   of one cell are; a later table's row of a cell on the same GPU wins; rows of another
#   figure are left out; `table --table` writes the table back byte for byte.
# - A cut or malformed table is refused naming file:line, exit 1, nothing written; a number
#   the log reader would drop makes a warning naming file:line (--strict: exit 3); --table with
#   --logs or --latest, or with merge, is a usage error (exit 2).
#   test_draw_table.sh REPRO_PLOT SOURCE_DIR
# check() evals its first argument: the single quotes keep its expansions for eval.
# shellcheck disable=SC2016,SC2317
# shellcheck source=tests/plot/lib.sh
source "$(dirname "$0")/lib.sh"
bin=$1; src=$2
fx=$src/tests/plot/fixtures
tbc=$src/studies/tilebench/experiment.yaml
seed=$fx/seed/seed_fixture.json

# The printed text of a draw, less what differs by right between logs and a table (above).
printed() {
  sed -e 1d -e 's/^\([0-9]*\) logs read: /\1 rows read: /' "$1" | grep -v '^== broken\|^  warning \|^$'
}

# 1. the same .dat and .gp (and printed tables) from a table as from its logs
same_draw() { # NAME CONFIG LOGDIR FORMAT
  local n=$1 cfg=$2 logs=$3 fmt=$4 d=$tmp/$1
  mkdir -p "$d"
  "$bin" table --config "$cfg" --logs "$logs" --format "$fmt" -o "$d/t.$fmt" 2> /dev/null
  "$bin" draw --config "$cfg" --logs "$logs" --out "$d/logs" --no-render > "$d/logs.out" 2>&1
  local rl=$?
  "$bin" draw --config "$cfg" --table "$d/t.$fmt" --out "$d/table" --no-render > "$d/table.out" 2>&1
  local rt=$?
  check '[ $rl -eq 0 ] && [ $rt -eq 0 ] && [ -n "$(ls "$d/logs")" ]' "$n $fmt: both draws exit 0 ($rl, $rt; $(tail -2 "$d/table.out"))"
  diff -r "$d/logs" "$d/table" > "$d/diff" 2>&1
  check '[ $? -eq 0 ]' "$n $fmt: every .dat and .gp the same bytes ($(head -5 "$d/diff"))"
  check 'diff <(printed "$d/logs.out") <(printed "$d/table.out") > /dev/null' "$n $fmt: the printed tables the same but for what was read"
  check 'grep -qF "rows read from $d/t.$fmt (" "$d/table.out"' "$n $fmt: the draw says it read the table"
}
same_draw tilebench "$tbc" "$src/studies/tilebench/backup_logs" json
same_draw tilebench "$tbc" "$src/studies/tilebench/backup_logs" csv
same_draw tilebench_fixture "$tbc" "$fx/ours/tilebench" json
same_draw fig12 "$src/fig12/experiment.yaml" "$src/fig12/backup_logs" json
same_draw fig13 "$src/fig13/experiment.yaml" "$src/fig13/backup_logs" json
same_draw fig12_ae "$src/fig12/experiment.yaml" "$fx/ae/fig12" json
tb=$tmp/tilebench/t.json

# 2. CPU runs: the note from the table's gpu "none", as from the log's meta line
cpu=$tmp/cpu_logs; cp -r "$fx/ours/tilebench" "$cpu"
sed -i 's/^meta gpu="[^"]*"/meta gpu=none/' "$cpu/mha.h100.b8.h32.s1024.d128.c0.fused.log"
same_draw cpu "$tbc" "$cpu" json
check 'grep -q "^note_text = \".* logs are CPU reference runs" "$tmp/cpu/table/mha_comparison_h100.gp"' "cpu: the CPU note from the table"

# 3. table --table: the table back byte for byte; report --table
"$bin" table --config "$tbc" --table "$tb" --format json -o "$tmp/back.json" 2> "$tmp/back.err"
check '[ $? -eq 0 ] && cmp -s "$tb" "$tmp/back.json"' "table --table: the json back byte for byte"
"$bin" table --config "$tbc" --table "$tmp/tilebench/t.csv" -o "$tmp/back.csv" 2> /dev/null
check '[ $? -eq 0 ] && cmp -s "$tmp/tilebench/t.csv" "$tmp/back.csv"' "table --table: the csv back byte for byte"
tb_rows=$(grep -c '^ *{"figure": ' "$tb")
"$bin" report -o "$tmp/r.html" --config "$tbc" --table "$tb" --figures "$tmp/tilebench/table" > /dev/null 2>&1
check '[ $? -eq 0 ] && [ "$tb_rows" -gt 0 ] && grep -qF "tables <code>$tb</code>: $tb_rows rows read, $tb_rows drawn" "$tmp/r.html"' "report --table: the section's rows from the table ($tb_rows, counted in the json here)"

# 4. the seed's own JSON format draws (its rows' GPUs name the devices)
s=$tmp/seed; mkdir -p "$s"
"$bin" draw --config "$tbc" --table "$seed" --out "$s/d" --no-render > "$s/out" 2>&1
check '[ $? -eq 0 ]' "seed json: draw exit 0 ($(tail -3 "$s/out"))"
check 'grep -q " 0.3 [0-9]* 0 .* pytorch \"4096x4096x4096 fp16\" 0$" "$s/d/gemm_comparison_h100.dat" && grep -q " 0.25 [0-9]* 0 .* tilelang \"4096x4096x4096 fp16\" 0$" "$s/d/gemm_comparison_h100.dat"' "seed json: the pytorch and cuda (tilelang) GEMM bars"
check 'grep -q " 0.543 [0-9]* 0 .* cutedsl \"B2 H16 S512 D64 bs32 g1 sel8\" [01]$" "$s/d/nsa_comparison_h100.dat" && grep -q "^# device=h100 experiment=gemm metric=speedup baseline=pytorch" "$s/d/speedup_comparison_h100.dat"' "seed json: the NSA bar and the speedup chart"
check 'grep -qF "not drawn $seed: device nvidia-geforce-rtx-4090-fixture is not in tilebench" "$s/out"' "seed json: a GPU without a device of the plot is listed as not drawn"
"$bin" draw --config "$tbc" --table "$seed" --out "$s/d" --no-render --strict > /dev/null 2>&1
check '[ $? -eq 3 ]' "seed json: --strict fails on the row not drawn"
# merged with ours: two GPUs' rows under one device make the cell ERR; rows of fig12 left out
"$bin" draw --config "$tbc" --table "$tb" --table "$tmp/fig12/t.json" --table "$seed" --out "$s/m" --no-render > "$s/m.out" 2> "$s/m.err"
check '[ $? -eq 0 ] && grep -q " nan [0-9]* 0 .* pytorch \"4096x4096x4096 fp16\" 0$" "$s/m/gemm_comparison_h100.dat"' "merged: the cell of two GPUs has no bar"
check 'grep -q "\"ERR\" .*" "$s/m/gemm_comparison_h100.dat" && grep -qF "2 rows of this cell from different GPUs: NVIDIA H100 80GB HBM3; NVIDIA H100 PCIe (fixture) (the cell is ERR)" "$s/m.out"' "merged: ERR, naming both GPUs"
fig12_rows=$(grep -c '^ *{"figure": "fig12"' "$tmp/fig12/t.json")
check '[ "$fig12_rows" -gt 0 ] && grep -qF "$tmp/fig12/t.json: $fig12_rows rows of other figures than tilebench left out" "$s/m.err"' "merged: another figure's rows ($fig12_rows, counted in the json here) are left out, said ($(cat "$s/m.err"))"
# the same GPU: the later table's row wins, said
sed 's/"avg_ms": 0.0054, "min_ms": 0.0054/"avg_ms": 0.0077, "min_ms": 0.0054/' "$tb" > "$tmp/later.json"
"$bin" draw --config "$tbc" --table "$tb" --table "$tmp/later.json" --out "$s/l" --no-render > /dev/null 2> "$s/l.err"
check '[ $? -eq 0 ] && grep -q " 0.0077 [0-9]* 0 .* cublas \"1024x1024x1024 bf16\" 0$" "$s/l/gemm_comparison_h100.dat"' "the later table's row of a cell on the same GPU is drawn"
check 'grep -qF "repro-plot: $tmp/later.json replaces gemm.h100.gemm.cublas@0[dtype=bf16,m=1024,n=1024,k=1024] on NVIDIA H100 80GB HBM3, a row read before it" "$s/l.err"' "the replaced row is said"

# 5. refused: a cut or malformed table names file:line, exits 1 and writes nothing
refused() { # NAME FILE EXPECTED
  local out=$tmp/ref.$1 want=$3
  "$bin" draw --config "$tbc" --table "$2" --out "$out" --no-render > "$out.out" 2> "$out.err"
  local rc=$?
  check '[ $rc -eq 1 ] && [ ! -e "$out" ] && grep -qF -- "$want" "$out.err"' "$1: exit 1 ($rc), nothing written, \"$want\" ($(cat "$out.err"))"
}
head -c 5000 "$tb" > "$tmp/cut.json"
# the line the file ends on (it ends inside it: one more than its line ends)
last_line() { echo $(($(wc -l < "$1") + 1)); }
refused cut_json "$tmp/cut.json" "$tmp/cut.json:$(last_line "$tmp/cut.json"):"
head -c -3 "$tb" > "$tmp/cut2.json" # the list's end cut off
refused cut_list "$tmp/cut2.json" "$tmp/cut2.json:$(last_line "$tmp/cut2.json"):"
: > "$tmp/empty.json"
refused empty "$tmp/empty.json" "$tmp/empty.json:1:0: expected JSON"
sed '3s/"avg_ms": [0-9.]*/"avg_ms": "fast"/' "$tb" > "$tmp/fast.json"
refused row_line "$tmp/fast.json" "$tmp/fast.json:3: row 2: avg_ms: expected a number or null"
sed 's/"latency_ms": 0.543/"latency_ms": "fast"/' "$seed" > "$tmp/seed_bad.json"
refused seed_row_line "$tmp/seed_bad.json" "$tmp/seed_bad.json:24: row 3: latency_ms: expected a number or null"
sed '3s/"system": "cublas"/"system": "cu blas"/' "$tb" > "$tmp/name.json"
refused bad_name "$tmp/name.json" "$tmp/name.json:3: row 2: system: expected a name [A-Za-z0-9._-]+"
head -c -9 "$tmp/tilebench/t.csv" > "$tmp/cut.csv"
refused cut_csv "$tmp/cut.csv" "$tmp/cut.csv:$(wc -l < "$tmp/tilebench/t.csv"): expected the record's line end"
refused missing "$tmp/nope.json" "$tmp/nope.json: cannot open"
# a time the log reader refuses: the cell ERR, a warning naming file:line, --strict exit 3
sed '3s/"avg_ms": [0-9.]*/"avg_ms": -1/' "$tb" > "$tmp/neg.json"
"$bin" draw --config "$tbc" --table "$tmp/neg.json" --out "$tmp/neg" --no-render > "$tmp/neg.out" 2>&1
check '[ $? -eq 0 ] && grep -qF "warning $tmp/neg.json:3: row 2: avg_ms must be a positive number (got -1): the cell is ERR" "$tmp/neg.out"' "a negative time: a warning naming file:line"
check 'grep -q " nan [0-9]* 0 .* cublas \"4096x4096x4096 bf16\" 0$" "$tmp/neg/gemm_comparison_h100.dat"' "a negative time: the cell has no bar (ERR)"
"$bin" draw --config "$tbc" --table "$tmp/neg.json" --out "$tmp/neg" --no-render --strict > /dev/null 2>&1
check '[ $? -eq 3 ]' "a negative time: --strict exit 3"

# 6. usage
"$bin" draw --config "$tbc" --table "$tb" --logs "$src/studies/tilebench/backup_logs" --out "$tmp/u" > /dev/null 2> "$tmp/u.err"
check '[ $? -eq 2 ] && grep -qF "give --logs DIR or --table FILE..., not both" "$tmp/u.err"' "--logs with --table: exit 2"
"$bin" draw --config "$tbc" --table "$tb" --latest --out "$tmp/u" > /dev/null 2> "$tmp/u.err"
check '[ $? -eq 2 ] && grep -qF -- "--latest: only with --logs" "$tmp/u.err"' "--latest with --table: exit 2"
"$bin" merge --table "$tb" > /dev/null 2> "$tmp/u.err"
check '[ $? -eq 2 ] && grep -qF -- "--table: only with draw, table and report" "$tmp/u.err"' "merge --table: exit 2"
"$bin" draw --help > "$tmp/help.txt"
check 'grep -qF -- "--table FILE" "$tmp/help.txt" && "$bin" --help | grep -qF "(--logs DIR | --table FILE...)"' "draw --help and the usage name --table"

finish
