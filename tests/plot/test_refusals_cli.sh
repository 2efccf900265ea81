#!/usr/bin/env bash
# CLI tests of what repro-plot refuses to draw: a log whose own check failed, a time that is no
# finite decimal number, a key twice on one line, two logs of one cell (an error naming both;
# --latest draws the newest and names it), control characters in printed text, and symlinks
# that lead out of the log folder. The logs are written here (test data, not measurements).
#   test_refusals_cli.sh REPRO_PLOT SOURCE_DIR
# check() evals its first argument: the single quotes keep its expansions for eval.
# shellcheck disable=SC2016,SC2317
# shellcheck source=tests/plot/lib.sh
source "$(dirname "$0")/lib.sh"
bin=$1; src=$2
cfg=$src/fig12/experiment.yaml
# log DATE AVG: one of our logs (DATE empty: no meta line)
log() {
  printf '# repro-log 1\n'
  if [ -n "$1" ]; then printf 'meta gpu="NVIDIA H100" date=%s\n' "$1"; fi
  printf 'check output=out rel_l2=1.0e-04 ok=1\nresult status=ok avg_ms=%s\n' "$2"
}
# no_control FILE: no byte below 0x20 but newline, and no 0x7f
no_control() { ! LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177]')" "$1"; }

# 1. a log whose own check failed is ERR, named, and fails --strict
d=$tmp/check; mkdir -p "$d"
printf '# repro-log 1\ncheck output=out rel_l2=3.2e-01 max_abs=2.0e+00 ok=0\nresult status=ok avg_ms=1.5\n' \
  > "$d/kernel.h100.h2o.fused.log"
log "" 4 > "$d/kernel.h100.h2o.torch.log"
"$bin" table --config "$cfg" --logs "$d" -o "$tmp/check.csv" 2> "$tmp/check.err"
check 'grep -q "^fig12,kernel,h100,h2o,fused,4096,error,,,,,,ours,.*check output=out failed (line 2: rel_l2=3.2e-01" "$tmp/check.csv"' "failed check: ERR with the output and its rel_l2"
check 'grep -q "kernel.h100.h2o.fused.log:2: check output=out failed" "$tmp/check.err"' "failed check: listed with file:line"
"$bin" draw --config "$cfg" --logs "$d" --out "$tmp/check.d" --no-render > "$tmp/check.out" 2>&1
check 'grep -q "^H2O .* ERR " "$tmp/check.out"' "failed check: the table shows ERR"
"$bin" draw --config "$cfg" --logs "$d" --out "$tmp/check.d" --no-render --strict > /dev/null 2>&1
check '[ $? -eq 3 ]' "failed check: --strict exits 3"

# 2. numbers: decimal only; a time that is no finite decimal number is ERR (not NS, not 16)
d=$tmp/num; mkdir -p "$d"
printf '# repro-log 1\nresult status=ok avg_ms=0x10\n' > "$d/kernel.h100.h2o.fused.log"
printf '# repro-log 1\nresult status=ok avg_ms=nan\n' > "$d/kernel.h100.kf.fused.log"
printf '# repro-log 1\nresult status=ok avg_ms=1e999\n' > "$d/kernel.h100.roco.fused.log"
printf '# repro-log 1\nresult status=ok avg_ms=inf\n' > "$d/kernel.h100.corm.fused.log"
"$bin" table --config "$cfg" --logs "$d" -o "$tmp/num.csv" 2> "$tmp/num.err"
for w in h2o kf roco corm; do
  check 'grep -q "^fig12,kernel,h100,$w,fused,4096,error,,,,,,ours,.*avg_ms must be a positive number" "$tmp/num.csv"' "$w: ERR"
done
check '! grep -q ",16," "$tmp/num.csv" && grep -q "avg_ms=\"0x10\" is not a decimal number" "$tmp/num.err"' "0x10 is not read as 16"

# 3. a key twice on one line: ERR naming the key and the line
d=$tmp/dupkey; mkdir -p "$d"
printf '# repro-log 1\nconfig workload=h2o\nresult status=ok avg_ms=1.5 avg_ms=16\n' > "$d/kernel.h100.h2o.fused.log"
"$bin" table --config "$cfg" --logs "$d" -o "$tmp/dupkey.csv" 2> "$tmp/dupkey.err"
check 'grep -q "^fig12,kernel,h100,h2o,fused,4096,error,,,,,,ours,.*line 3: avg_ms appears twice" "$tmp/dupkey.csv"' "duplicate key: ERR with key and line"
check 'grep -q "kernel.h100.h2o.fused.log:3: .*avg_ms" "$tmp/dupkey.err"' "duplicate key: listed with file:line"

# 4. two logs of one cell: an error naming both; --latest draws the newest and names it. Logs of
#    two devices (h100, h200) are two cells.
d=$tmp/dups; mkdir -p "$d/sub"
log 2026-01-02T00:00:00Z 1 > "$d/kernel.h100.h2o.fused.log"
log 2026-03-01T00:00:00Z 2 > "$d/sub/kernel.h100.h2o.fused.log"
log 2026-01-02T00:00:00Z 3 > "$d/kernel.h200.h2o.fused.log"
log 2026-01-02T00:00:00Z 4 > "$d/kernel.h200.h2o.torch.log"
"$bin" draw --config "$cfg" --logs "$d" --out "$tmp/dups.d" --no-render > "$tmp/dups.out" 2>&1
check '[ $? -eq 0 ] && grep -q "^H2O .* ERR " "$tmp/dups.out"' "duplicates: the cell is ERR"
check 'grep -q "dups/kernel.h100.h2o.fused.log: 2 logs of one cell (.*--latest.*): this one and sub/kernel.h100.h2o.fused.log" "$tmp/dups.out"' "duplicates: both files named"
check 'grep -q "^H2O .* 4.000 .* 3.000 " "$tmp/dups.out"' "duplicates: h200 is another cell, drawn"
"$bin" draw --config "$cfg" --logs "$d" --out "$tmp/dups.d" --no-render --strict > /dev/null 2>&1
check '[ $? -eq 3 ]' "duplicates: --strict exits 3"
"$bin" draw --config "$cfg" --logs "$d" --out "$tmp/dups.l" --no-render --latest > "$tmp/latest.out" 2>&1
check '[ $? -eq 0 ] && grep -q "^H2O .* 2.000 " "$tmp/latest.out"' "--latest: the newest (2 ms) is drawn"
check 'grep -q "not drawn .*dups/kernel.h100.h2o.fused.log: .*--latest draws .*sub/kernel.h100.h2o.fused.log (dated 2026-03-01T00:00:00Z)" "$tmp/latest.out"' "--latest: the output names the drawn file"
"$bin" table --config "$cfg" --logs "$d" --latest -o "$tmp/latest.csv" 2>/dev/null
check 'grep -q "^fig12,kernel,h100,h2o,fused,4096,ok,2,.*/sub/kernel.h100.h2o.fused.log" "$tmp/latest.csv" && [ "$(wc -l < "$tmp/latest.csv")" -eq 4 ]' "table --latest: one row per cell, the newest"
"$bin" compare --config "$cfg" "$d" "$d" > "$tmp/dups.cmp" 2>&1
check 'grep -q "kernel.h100.h2o.fused@4096 .* error .* error" "$tmp/dups.cmp"' "compare: the cell is ERR too"

# 5. control characters in file names and reasons are escaped everywhere they are printed
d=$tmp/ctl; esc=$(printf '\033'); mkdir -p "$d/dir${esc}[31m"
{ # a log, not a binary file: under 1% control bytes
  printf '# repro-log 1\nmeta gpu="NVIDIA H100" date=2026-01-02T00:00:00Z host=test-machine-with-a-long-name\n'
  printf 'config workload=h2o system=fused batch=1 heads=32 dim=128 seqlen=4096 dtype=fp16 device=gpu\n'
  printf 'result status=error reason="bad \033[2J\007 run\\nnext"\n'
} > "$d/dir${esc}[31m/kernel.h100.h2o.fused.log"
printf 'x\n' > "$d/notes${esc}]0;title$(printf '\007').txt"
"$bin" draw --config "$cfg" --logs "$d" --out "$tmp/ctl.d" --no-render > "$tmp/ctl.out" 2> "$tmp/ctl.err"
"$bin" table --config "$cfg" --logs "$d" -o "$tmp/ctl.csv" 2> "$tmp/ctl.terr"
"$bin" table --config "$cfg" --logs "$d" --format json -o "$tmp/ctl.json" 2>/dev/null
for f in ctl.out ctl.err ctl.csv ctl.terr ctl.json; do
  check 'no_control "$tmp/$f"' "$f holds no control characters"
done
check 'grep -qF "notes\\x1b]0;title\\x07.txt: unknown file" "$tmp/ctl.out" && grep -qF "notes\\x1b]0;title\\x07.txt: unknown file" "$tmp/ctl.terr"' "file names escaped in the issue list (stdout and stderr)"
check 'grep -qF "dir\\x1b[31m/kernel.h100.h2o.fused.log,\"bad \\x1b[2J\\x07 run\\x0anext\"" "$tmp/ctl.csv" || grep -qF "dir\\x1b[31m/kernel.h100.h2o.fused.log,bad \\x1b[2J\\x07 run\\x0anext," "$tmp/ctl.csv"' "csv: source and reason escaped"
check 'grep -qF "\"reason\": \"bad \\\\x1b[2J\\\\x07 run\\\\x0anext\"" "$tmp/ctl.json"' "json: the reason's escapes, as text"
if command -v python3 >/dev/null; then check 'python3 -m json.tool "$tmp/ctl.json" >/dev/null' "json parses"; fi

# 6. symlinks out of the log folder are not followed (warned once, by the link's name); links
#    inside it are, and the folder itself may be a link
out=$tmp/outside; mkdir -p "$out/sub" "$tmp/root/.inner"
log "" 7 > "$out/kernel.h100.kf.fused.log"
log "" 8 > "$out/sub/kernel.h100.corm.fused.log"
log "" 9 > "$tmp/root/kernel.h100.h2o.fused.log"
log "" 5 > "$tmp/root/.inner/kernel.h100.roco.fused.log"
ln -s "$out/kernel.h100.kf.fused.log" "$tmp/root/kernel.h100.kf.fused.log"
ln -s ../outside/sub "$tmp/root/more"
ln -s .inner/kernel.h100.roco.fused.log "$tmp/root/kernel.h100.roco.fused.log"
ln -s root "$tmp/rootlink"
"$bin" table --config "$cfg" --logs "$tmp/rootlink" -o "$tmp/links.csv" 2> "$tmp/links.err"
check '[ $? -eq 0 ] && [ "$(wc -l < "$tmp/links.csv")" -eq 3 ] && grep -q ",h2o,fused,4096,ok,9," "$tmp/links.csv" && grep -q ",roco,fused,4096,ok,5," "$tmp/links.csv"' "the logs inside are read, through a linked root"
check '[ "$(grep -c "rootlink/kernel.h100.kf.fused.log: symlink leads out of" "$tmp/links.err")" -eq 1 ] && [ "$(grep -c "rootlink/more: symlink leads out of" "$tmp/links.err")" -eq 1 ]' "each link out is warned once, by its name"
check '! grep -q "kernel.h100.corm" "$tmp/links.err" "$tmp/links.csv"' "nothing under a link out is read"

finish
