#!/usr/bin/env bash
# A faster peer that exists only as a log: a figure whose bars leave fa3 out (a copy of
# sdpa-scale's config without fa3 in its D=128 causal fp16 figure) still labels ours' speedup
# over it (fa3 11.55 ms, ours 11.93 ms, SDPA cuDNN slower: 0.97x, not cuDNN's 1.09x), and
# so do the terminal table (with a note saying so) and the report's summary, where fa3's log
# is a row saying why it has no bar; `draw --strict` refuses the undrawn log, naming it. The logs
# are hand-written fixtures (fixtures/ours/sdpa-unlisted, the study's log names and format).
#   test_unlisted.sh REPRO_PLOT SOURCE_DIR
# check() evals its first argument: the single quotes keep its expansions for eval.
# shellcheck disable=SC2016
# shellcheck source=tests/plot/lib.sh
source "$(dirname "$0")/lib.sh"
bin=$1 src=$2
sed '/name: sdpa_d128_c1_fp16/s/ fa3,//' "$src/studies/sdpa-scale/experiment.yaml" >"$tmp/experiment.yaml"
mkdir -p "$tmp/logs"
for s in fused fa3 sdpa-cudnn; do
  cp "$src/tests/plot/fixtures/ours/sdpa-unlisted/d128-c1-fp16.h200.$s.log" "$tmp/logs/"
done
"$bin" draw --config "$tmp/experiment.yaml" --logs "$tmp/logs" --out "$tmp/out" --no-render >"$tmp/draw.txt" 2>&1
check '[ $? = 0 ]' "draw exits 0"
check '! grep -q "\"fa3\"" "$tmp/out/sdpa_d128_c1_fp16.gp"' "fa3 has no bar in the figure"
check 'grep -q "\"0.97×\"" "$tmp/out/sdpa_d128_c1_fp16.dat"' "ours' label is its speedup over the undrawn fa3 (0.97×)"
check '! grep -q "\"1.09×\"" "$tmp/out/sdpa_d128_c1_fp16.dat"' "not its speedup over SDPA cuDNN alone (1.09×)"
check 'grep -q "^Attn .* 11.926  *0.97x$" "$tmp/draw.txt" && grep -q "^(in 1 workloads the speedup counts a system with a log there but no column here" "$tmp/draw.txt"' "the terminal table's speedup is over fa3 too, and says so"
"$bin" report -o "$tmp/r.html" --config "$tmp/experiment.yaml" --logs "$tmp/logs" >/dev/null 2>&1
check 'grep -q "speedup: <b>0.97&times;</b> (1 of 1 workloads)" "$tmp/r.html" && ! grep -q "1.09&times;" "$tmp/r.html"' "the report's summary: 0.97x over fa3"
check 'grep -q "<td>fa3<td>.*<td class=\"warn\">no: system fa3 is in no systems: list of sdpa-scale&#39;s figures of experiment d128-c1-fp16" "$tmp/r.html"' "the report: fa3's log is a row of its own, saying why it has no bar"
"$bin" draw --config "$tmp/experiment.yaml" --logs "$tmp/logs" --out "$tmp/out2" --no-render --strict >"$tmp/strict.txt" 2>&1
check '[ $? = 3 ]' "draw --strict refuses an undrawn log (exit 3)"
check 'grep -q "not drawn .*d128-c1-fp16.h200.fa3.log" "$tmp/strict.txt"' "--strict names the undrawn log"
finish
