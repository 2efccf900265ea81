#!/usr/bin/env bash
# The csv that `repro-plot table` writes and `merge` / `compare` read back:
# - texts from logs that a spreadsheet would run as a formula (=, +, -, @ first: OWASP's CSV
#   injection list; its tab and carriage return are written as the text \x09, \x0d) are written
#   quoted with an apostrophe before them,
#   number fields stay bare numbers, and merge reads the texts back as they were (byte for byte
#   through merge; json shows them without the apostrophe);
# - a table's times are held to the log reader's rule (pt_check_numbers): under status=ok an
#   avg_ms <= 0 or none makes the row ERR with the reader's reason, a negative other number does
#   not count; a warning names file:line (json: the line the row starts on, and row N);
# - a csv cut short (inside its last field, inside a quoted field, a last line without all its
#   fields) is refused naming the file, the line and what was expected.
#   test_csv_tables.sh REPRO_PLOT SOURCE_DIR
# check() evals its first argument: the single quotes keep its expansions for eval (and the
# variables it reads are set before it: SC2034).
# shellcheck disable=SC2016,SC2034,SC2317
# shellcheck source=tests/plot/lib.sh
source "$(dirname "$0")/lib.sh"
bin=$1; src=$2
cfg=$src/fig12/experiment.yaml
hdr="figure,experiment,device,workload,system,seqlen,status,avg_ms,min_ms,max_ms,gflops_s,peak_mib,format,source,reason,gpu_model,compute_capability,compilation_time,problem_size"

# ---- formula-like texts: logs whose reason and GPU begin with =, +, -, @, a tab; a folder
# whose name begins with = (the source column)
log() {  # log FILE STATUS REASON [GPU]: one of our logs (a test fixture, not a measurement)
  {
    echo "# repro-log 1"
    echo "# FIXTURE: written by test_csv_tables.sh, not a measurement"
    printf 'meta gpu="%s" cc=9.0 commit=fixture date=2026-01-01T00:00:00Z\n' "${4:-Fixture GPU}"
    echo "config seqlen=4096 device=gpu"
    if [ "$2" = ok ]; then
      echo "result status=ok avg_ms=1.5 min_ms=1.25 max_ms=2 gflops_s=100 peak_mib=7"
    else
      printf 'result status=%s reason="%s"\n' "$2" "$3"
    fi
  } > "$1"
}
mkdir -p "$tmp/=logs"
L=$tmp/=logs
log "$L/kernel.h100.h2o.fused.log" ok "" "=cmd|' /C calc'!A0"
log "$L/kernel.h100.h2o.torch.log" error '=HYPERLINK(\"http://x.invalid\",\"click\")'
log "$L/kernel.h100.roco.torch.log" unsupported '+1+2'
log "$L/kernel.h100.roco.flex.log" error '-2+3'
log "$L/kernel.h100.kf.torch.log" error '@SUM(1;2)'
log "$L/kernel.h100.kf.flex.log" error "$(printf '\tpadded')"
log "$L/kernel.h100.snapkv.torch.log" error "'=already quoted"
log "$L/kernel.h100.snapkv.flex.log" error 'plain, with a comma'
(cd "$tmp" && "$bin" table --config "$cfg" --logs "=logs" -o t.csv) 2> "$tmp/t.err"
check '[ $? -eq 0 ]' "table of formula-like logs exits 0"
csv=$tmp/t.csv
q="'"
has() { grep -qF -- "$1" "$csv"; }  # has TEXT: the csv holds TEXT
want=",\"${q}=HYPERLINK(\"\"http://x.invalid\"\",\"\"click\"\")\","
check 'has "$want"' "a reason =HYPERLINK(...) is written quoted with an apostrophe before it"
want=",\"${q}+1+2\","
check 'has "$want"' "a reason +1+2 gets the apostrophe"
want=",\"${q}-2+3\","
check 'has "$want"' "a reason -2+3 gets the apostrophe"
want=",\"${q}@SUM(1;2)\","
check 'has "$want"' "a reason @SUM(...) gets the apostrophe"
want=',\x09padded,'
check 'has "$want"' "a reason beginning with a tab begins with the text \\x09 (a control character never begins a field)"
want=",\"${q}${q}=already quoted\","
check 'has "$want"' "a reason '=... gets one more apostrophe (read back unambiguously)"
want=',"plain, with a comma",'
check 'has "$want"' "a plain reason is quoted only for its comma"
want=",\"${q}=cmd|${q} /C calc${q}!A0\",9.0,"
check 'has "$want"' "a GPU model beginning with = gets the apostrophe"
want=",\"${q}=logs/kernel.h100.h2o.fused.log\","
check 'has "$want"' "a source path beginning with = gets the apostrophe"
check 'grep -q "^fig12,kernel,h100,h2o,fused,4096,ok,1.5,1.25,2,100,7,ours," "$csv"' "number fields stay bare numbers"
bad_cells=$(tail -n +2 "$csv" | tr ',' '\n' | grep -c '^[=+@-]')
check '[ "$bad_cells" -eq 0 ]' "no field of the csv begins with = + - @ ($bad_cells do)"
"$bin" merge -o "$tmp/m.csv" "$csv" 2> "$tmp/m.err"
check '[ $? -eq 0 ] && cmp -s "$csv" "$tmp/m.csv"' "merge reads the guarded texts back: the same csv byte for byte"
"$bin" merge --format json "$csv" > "$tmp/m.json" 2>> "$tmp/m.err"
want1='"reason": "=HYPERLINK(\"http://x.invalid\",\"click\")"'
want2="\"reason\": \"${q}=already quoted\""
want3='"reason": "-2+3"'
check 'grep -qF -- "$want1" "$tmp/m.json" && grep -qF -- "$want2" "$tmp/m.json" && grep -qF -- "$want3" "$tmp/m.json"' \
  "read back, the texts are the logs' own (json: no apostrophe added)"

# ---- times in tables, as the log reader rules: status=ok needs avg_ms > 0
row() {  # row SYSTEM STATUS AVG [MIN] [PEAK]
  echo "fig12,kernel,h100,h2o,$1,4096,$2,$3,${4:-},,,${5:-},ours,x.log,,,,,"
}
{
  echo "$hdr"
  row fused ok 1.5
  row torch ok 0
  row flex ok -1.5
  row flash ok ""
  row sdpa ok 2.5 -1 -3
  row inductor error -4
} > "$tmp/times.csv"
"$bin" merge "$tmp/times.csv" > "$tmp/times.out" 2> "$tmp/times.err"
check '[ $? -eq 0 ]' "merge of a table with bad times exits 0 (the rows become ERR, as logs do)"
check 'grep -q "^fig12,kernel,h100,h2o,fused,4096,ok,1.5," "$tmp/times.out"' "a positive time stays ok"
for s in torch flex flash inductor; do
  check 'grep -q "^fig12,kernel,h100,h2o,'"$s"',4096,error,,,,,,ours,x.log,avg_ms must be a positive number," "$tmp/times.out"' \
    "$s: avg_ms not positive (or none under ok) is ERR with the log reader's reason"
done
check 'grep -qF "$tmp/times.csv:3: warning: avg_ms must be a positive number (got 0): the cell is ERR" "$tmp/times.err"' "avg_ms=0: a warning naming file:line"
check 'grep -qF "$tmp/times.csv:4: warning: avg_ms must be a positive number (got -1.5): the cell is ERR" "$tmp/times.err"' "avg_ms=-1.5: a warning naming file:line"
check 'grep -qF "$tmp/times.csv:5: warning: avg_ms must be a positive number (got none): the cell is ERR" "$tmp/times.err"' "status=ok without avg_ms: a warning naming file:line"
check 'grep -q "^fig12,kernel,h100,h2o,sdpa,4096,ok,2.5,,,,,ours," "$tmp/times.out" && grep -qF "$tmp/times.csv:6: warning: min_ms=-1 is not a finite number >= 0; it does not count" "$tmp/times.err" && grep -qF "$tmp/times.csv:6: warning: peak_mib=-3 is not" "$tmp/times.err"' \
  "a negative min_ms or peak_mib does not count (as in a log)"
{ echo "$hdr"; row fused ok 1.5; row torch ok 2; } > "$tmp/a.csv"
{ echo "$hdr"; row fused ok -1.5; row torch ok 2; } > "$tmp/b.csv"
"$bin" compare "$tmp/a.csv" "$tmp/b.csv" > "$tmp/cmp.out" 2> "$tmp/cmp.err"
check 'grep -q "kernel.h100.h2o.fused@4096 *ok *error *-" "$tmp/cmp.out" && grep -q "geometric mean of B/A over 1 cells: 1.0000" "$tmp/cmp.out"' \
  "compare: a negative time is ERR, not a ratio"
check 'grep -qF "$tmp/b.csv:2: warning: avg_ms must be a positive number (got -1.5)" "$tmp/cmp.err"' "compare: the warning names file:line"
printf '[{"figure": "fig12", "experiment": "kernel", "device": "h100", "workload": "h2o", "system": "fused", "status": "ok", "avg_ms": 0},\n {"kernel": "gemm", "backend": "cublas", "gpu_model": "NVIDIA H100", "latency_ms": 1.5, "tflops": -2}]\n' > "$tmp/times.json"
"$bin" merge "$tmp/times.json" > "$tmp/tj.out" 2> "$tmp/tj.err"
check '[ $? -eq 0 ] && grep -q "^fig12,kernel,h100,h2o,fused,0,error,,,,,,seed,$tmp/times.json,avg_ms must be a positive number," "$tmp/tj.out"' "json: avg_ms=0 under status ok is ERR"
check 'grep -qF "$tmp/times.json:1: warning: row 1: avg_ms must be a positive number (got 0): the cell is ERR" "$tmp/tj.err" && grep -qF "$tmp/times.json:2: warning: row 2: gflops_s=-2000 is not a finite number >= 0" "$tmp/tj.err"' \
  "json: the warnings name the file, the line the row starts on and the row"

# ---- a csv cut short is refused, naming file:line and what was expected
"$bin" table --config "$cfg" --logs "$src/fig12/backup_logs" -o "$tmp/full.csv" 2> /dev/null
lines=$(wc -l < "$tmp/full.csv")
head -c -4 "$tmp/full.csv" > "$tmp/cut.csv"   # inside the last field, no line end
"$bin" merge "$tmp/cut.csv" > "$tmp/cut.out" 2> "$tmp/cut.err"
check '[ $? -eq 1 ] && [ ! -s "$tmp/cut.out" ]' "merge refuses a csv cut inside its last field (exit 1, nothing written)"
want="$tmp/cut.csv:$lines: expected the record${q}s line end: the file ends inside its last field (a table cut short)"
check 'grep -qF -- "$want" "$tmp/cut.err"' \
  "the cut csv's message names file:line and what was expected"
"$bin" compare "$tmp/full.csv" "$tmp/cut.csv" > /dev/null 2> "$tmp/cut.err"
check '[ $? -eq 1 ] && grep -qF "$tmp/cut.csv:$lines: expected the record" "$tmp/cut.err"' "compare refuses the cut csv too"
# the last field cut with every field there: "seqlen=4096" cut to "seqlen=40"
{ echo "$hdr"; row fused ok 1.5; printf 'fig12,kernel,h100,h2o,torch,4096,ok,2.5,,,,,ours,x.log,,,,,seqlen=40'; } > "$tmp/cutf.csv"
"$bin" merge "$tmp/cutf.csv" > "$tmp/cutf.out" 2> "$tmp/cutf.err"
rc=$?
want="$tmp/cutf.csv:3: expected the record${q}s line end: the file ends inside its last field (a table cut short)"
check '[ $rc -eq 1 ] && [ ! -s "$tmp/cutf.out" ] && grep -qF -- "$want" "$tmp/cutf.err"' \
  "a csv cut inside its last field with all its fields: refused naming file:line, nothing written"
{ echo "$hdr"; row fused ok 1.5; printf 'fig12,kernel,h100,h2o,torch,4096,error,,,,,,ours,x.log,"cut, inside'; } > "$tmp/cutq.csv"
"$bin" merge "$tmp/cutq.csv" > /dev/null 2> "$tmp/cutq.err"
check '[ $? -eq 1 ] && grep -qF "$tmp/cutq.csv:3: expected a closing quote: the file ends inside a quoted field (a table cut short)" "$tmp/cutq.err"' \
  "a csv cut inside a quoted field: refused naming file:line and the closing quote"
{ echo "$hdr"; row fused ok 1.5; echo "fig12,kernel,h100,h2o,torch,4096,error,,"; } > "$tmp/short.csv"
"$bin" merge "$tmp/short.csv" > /dev/null 2> "$tmp/short.err"
check '[ $? -eq 1 ] && grep -qF "$tmp/short.csv:3: expected 19 comma-separated fields, got fewer" "$tmp/short.err"' \
  "a last line missing fields: refused naming file:line"
printf '%s' "$hdr" > "$tmp/hdr.csv"
"$bin" merge "$tmp/hdr.csv" > /dev/null 2> "$tmp/hdr.err"
check '[ $? -eq 1 ] && grep -qF "$tmp/hdr.csv:1: expected the record" "$tmp/hdr.err"' "a header without its line end is a cut table too"
{ echo "$hdr"; row fused ok 1.5; } > "$tmp/whole.csv"
"$bin" merge "$tmp/whole.csv" > "$tmp/whole.out" 2> "$tmp/whole.err"
check '[ $? -eq 0 ] && cmp -s "$tmp/whole.csv" "$tmp/whole.out" && [ ! -s "$tmp/whole.err" ]' "a whole table still merges, byte for byte, without a warning"

finish
