#!/usr/bin/env bash
# `repro-plot report` without a browser: usage errors; every string from a log HTML-escaped
# and a hostile figure cut down to the SVG a figure needs (fixtures/report/, TEST FIXTURES);
# the tables' rows equal `repro-plot table`'s, section by section; --compare (ratios, cells
# outside the tolerance, cells of one side only), --paper (the artifact's logs as a column) and
# the paper column from a config's plot: paper: without it; plot: claims: and plot: stale:
# refused when malformed; the report of every shipped log and committed figure: the verdict
# first (the paper's claims against this run), tilebench's stale H100 NSA logs marked and left
# out of the means, cells nobody ran grey (not red), every table of cells folded, the studies'
# own figures (h2o-diag's k sweep and cache) inlined, the same bytes twice, under 1 MB.
#   test_report.sh REPRO_PLOT SOURCE_DIR WORK
# check() evals its first argument: the single quotes keep its expansions for eval, and the
# variables it reads look unused to shellcheck.
# shellcheck disable=SC2016,SC2034
set -u
bin=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work"
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
fx=$src/tests/plot/fixtures
cfg12=$src/fig12/experiment.yaml

# The number of rows of the report's tables of logs (class tidy) in section $2 of report $1.
tidy_rows() {
  awk -v sec="$2" '
    /<section data-figure="/ { s = $0; sub(/.*<section data-figure="/, "", s); sub(/".*/, "", s) }
    /<table class="sort tidy/ { t = 1 }
    t && /^<tr/ && s == sec { n++ }
    /<\/tbody><\/table>/ { t = 0 }
    END { print n + 0 }' "$1"
}
# The rows of `repro-plot table` (the tidy table) of config $1 and logs $2.
table_rows() { echo $(($("$bin" table --config "$1" --logs "$2" 2>/dev/null | wc -l) - 1)); }
# FlashTensor's time ratio to the best baseline, its geometric mean over the workloads (two
# decimals), computed here from the tidy table's csv of config $1 and logs $2 for experiment
# $3 and device $4, not by the report: a baseline is any system with an ok time there but those
# the config marks `ours: true` (FlashTensor (artifact) and ours (CUDA C)).
ft_ratio() {
  local ours
  ours=$(sed -n 's/^  \([a-z0-9_-]*\): *{.*ours: true.*/\1/p' "$1" | tr '\n' ' ')
  "$bin" table --config "$1" --logs "$2" 2>/dev/null | awk -F, -v ex="$3" -v dev="$4" -v ours="$ours" '
    BEGIN { n = split(ours, o, " "); for (i = 1; i <= n; i++) is_ours[o[i]] = 1 }
    NR > 1 && $2 == ex && $3 == dev && $7 == "ok" && $8 != "" {
      cell = $4 SUBSEP $6
      if ($5 == "flashtensor") ft[cell] = $8
      else if (!($5 in is_ours) && (!(cell in best) || $8 + 0 < best[cell])) best[cell] = $8 + 0
    }
    END {
      for (c in ft) if (c in best) { s += log(best[c] / ft[c]); k++ }
      if (k) printf "%.2f %d\n", exp(s / k), k
    }'
}
# The verdict's words and class for ratio $1 against the paper's $2 (the rule the report states:
# reproduced when above 1 and at least 0.8 x the paper's).
verdict_of() {
  awk -v r="$1" -v p="$2" 'BEGIN { if (r > 1 && r >= 0.8 * p) print "ok reproduced"; else print "warn not reproduced" }'
}

# 1. usage
"$bin" report > /dev/null 2>&1
check '[ $? -eq 2 ]' "report without --config is a usage error"
"$bin" report --logs "$fx/ae/fig12" --config "$cfg12" > /dev/null 2>&1
check '[ $? -eq 2 ]' "--logs before any --config is a usage error"
"$bin" report --config "$cfg12" > /dev/null 2>&1
check '[ $? -eq 2 ]' "a --config without --logs is a usage error"
"$bin" report --config "$cfg12" --logs "$fx/ae/fig12" --tolerance -1 > /dev/null 2>&1
check '[ $? -eq 2 ]' "a negative --tolerance is a usage error"
"$bin" report -o "$work/x.html" --config "$work/none.yaml" --logs "$fx/ae/fig12" > /dev/null 2>&1
check '[ $? -eq 1 ] && [ ! -e "$work/x.html" ]' "a missing config fails and writes nothing"

# 2. hostile strings and a hostile figure (fixtures): text, never elements
h=$work/hostile.html
"$bin" report -o "$h" --config "$cfg12" --logs "$fx/report/fig12" --figures "$fx/report/svg" > "$work/h.out" 2>&1
check '[ $? -eq 0 ] && grep -q "report written to $h" "$work/h.out"' "report of the hostile fixtures ($(tail -2 "$work/h.out"))"
check '[ "$(grep -o "<script" "$h" | wc -l)" -eq 1 ]' "one script element: the report's own sort"
check 'grep -q "check failed: &lt;script&gt;alert(&#39;reason&#39;)&lt;/script&gt; &amp; &#39;quotes&#39; &quot;dq&quot;" "$h"' "the reason is escaped"
check 'grep -q "<td>&lt;script&gt;alert(&#39;gpu&#39;)&lt;/script&gt;</td>" "$h"' "the GPU name is escaped"
check '! grep -q "<img" "$h" && grep -q "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" "$h"' "the commit is escaped"
check 'grep -q "<td>5&lt;b&gt;80&lt;/b&gt;</td>" "$h"' "the driver is escaped"
check 'grep -q "<td class=\"bad\">✗ &lt;svg_onload=alert(2)&gt; 1.0e-01" "$h"' "a failed check: its output escaped, its rel_l2"
check 'grep -q "<span class=\"ok\">✓ out 2.5e-04</span><br><span class=\"bad\">✗ h2o_score 7.5e-02" "$h"' "a passed and a failed check of one log"
fig=$(grep -o '<figure class="fig" data-name="fig12_kernel" id="z0">.*</figure>' "$h")
svg=$(printf '%s' "$fig" | grep -o '<svg .*</svg>')
check '[ -n "$svg" ] && [[ $fig == *"<a class=\"zoom\" href=\"#z0\" title=\"enlarge\"><svg "* ]]' "the figure is inlined, a click on it enlarges it (#z0)"
check '[[ $svg != *alert* && $svg != *example.invalid* && $svg != *oreign* && $svg != *"<a "* && $svg != *"<title"* && $svg != *">link<"* ]]' "the figure has no script, handler, link, foreignObject or title"
check '[[ $svg == *"id=\"f0-gpPat1\""* && $svg == *"url(#f0-gpPat1)"* ]]' "the figure's ids and references are prefixed"
check '[[ $svg == *"&lt;script&gt;kept as text"* && $svg == *"<g class=\"q c w1\">"* && $svg == *"#0072b2"* ]]' "the figure's text, group classes and colours"
# the text's group folded into the text (its translate as x and y), the empty group dropped
check '[ "$(printf "%s" "$svg" | grep -o "<g " | wc -l)" -eq 1 ] && [[ $svg == *"<text class=\"t f8 as\" x=\"1\" y=\"30\">"* ]]' "a group of one element is folded into it, the empty group dropped"
check '[[ $svg == *"<path fill=\"#0072b2\" d=\"M1,1h8v8h-8z\"/>"* ]]' "a polygon is a path of h and v steps"
check 'grep -q "<figure class=\"fig\" data-name=\"fig12_e2e\" id=\"z1\"><p class=\"note nofig\">" "$h"' "a figure without its svg says so"

# 3. the tables hold the tidy table's rows: fixtures of both formats, per-device figures
for set in ae/fig12:fig12 ours/fig12:fig12 report/fig12:fig12 broken/fig12:fig12 \
  ours/tilebench:studies/tilebench ae/fig13:fig13 ae/fig14:fig14; do
  cfg=$src/${set#*:}/experiment.yaml logs=$fx/${set%%:*}
  "$bin" report -o "$work/rows.html" --config "$cfg" --logs "$logs" > /dev/null 2>&1
  name=$(sed -n 's/^figure: *//p' "$cfg")
  want=$(table_rows "$cfg" "$logs") got=$(tidy_rows "$work/rows.html" "$name")
  check '[ "$want" -gt 0 ] && [ "$got" = "$want" ]' "${set%%:*}: $got table rows in the report, $want in the tidy table"
done

# 4. --compare: one cell 1.5x slower, one log on each side only
mkdir -p "$work/base" "$work/new"
cp -r "$src/backup_logs/fig14" "$work/base/fig14"
cp -r "$src/backup_logs/fig14" "$work/new/fig14"
sed -i 's/ avg_ms=[0-9.]*/ avg_ms=9.5/' "$work/new/fig14/h100.attn.flex.log"
rm "$work/new/fig14/h200.gemma2.torch.log" "$work/base/fig14/h100.attn.torch.log"
"$bin" report -o "$work/cmp.html" --config "$src/fig14/experiment.yaml" --logs "$work/new/fig14" \
  --compare "$work/base" > /dev/null 2>&1
check '[ $? -eq 0 ]' "report --compare"
check '[ "$(grep -c "<tr class=\"out\">" "$work/cmp.html")" -eq 1 ] && grep -q "<b class=\"bad\">1 outside &plusmn;10%</b>; only here: 1; only in compare: 1" "$work/cmp.html"' "one cell outside +-10%, one only here, one only in compare"
check 'grep -q "<tr class=\"out\"><td>h100<td>attn<td>flex<td>" "$work/cmp.html"' "the slower cell is the highlighted one"
check 'grep -q "only here<td>.*<td>h100.attn.torch.log<td>" "$work/cmp.html"' "the cell only here says so"
check 'grep -q "<td>h200.gemma2.torch.log$" "$work/cmp.html"' "the cell only in the compared logs is listed"
"$bin" report -o "$work/cmp2.html" --config "$src/fig14/experiment.yaml" --logs "$work/new/fig14" \
  --compare "$work/base" --tolerance 100 > /dev/null 2>&1
check '! grep -q "<tr class=\"out\">" "$work/cmp2.html" && grep -q "0 outside &plusmn;10000%" "$work/cmp2.html"' "--tolerance widens the band"

# 5. --paper: the artifact's logs (AE-format fixtures) as the paper's column
"$bin" report -o "$work/paper.html" --config "$cfg12" --logs "$fx/ours/fig12" --paper "$fx/ae" > /dev/null 2>&1
check '[ $? -eq 0 ] && grep -q "<th class=\"n\">paper ms</th>" "$work/paper.html"' "--paper adds the paper's column"
# the artifact's `our` is FlashTensor (artifact), another system than ours (CUDA C): ours' row
# has no artifact time beside it
check 'grep -q "<td>h100<td>h2o<td>fused<td>seqlen=4096<td class=\"ok\">ok<td>1.300<td>105.7<td>417.0<td><td" "$work/paper.html"' "ours 1.300 ms with no artifact time beside it (its our is FlashTensor (artifact))"
# without --paper: the paper's own times of ours from fig12's plot: paper: (h100 only), with
# paper / ours among the geometric means; a config without plot: paper: has no paper column
"$bin" report -o "$work/cfgpaper.html" --config "$cfg12" --logs "$fx/ours/fig12" > /dev/null 2>&1
check '[ $? -eq 0 ] && grep -q "<th class=\"n\">paper ms</th>" "$work/cfgpaper.html" && grep -q "from the <code>plot: paper:</code>" "$work/cfgpaper.html"' "plot: paper: gives the paper column without --paper"
check 'grep -q "<td>h100<td>h2o<td>fused<td>seqlen=4096<td class=\"ok\">ok<td>150.250<td>[^<]*<td>[^<]*<td>193.4<td" "$work/cfgpaper.html"' "ours' e2e 150.250 ms beside the paper's 193.4 ms, written as the config writes it"
check 'grep -q "<td>h100<td>h2o<td>fused<td>seqlen=4096<td class=\"ok\">ok<td>1.300<td>[^<]*<td>[^<]*<td>1.300<td" "$work/cfgpaper.html"' "ours' kernel 1.300 ms beside the paper's 1.300 ms"
check 'grep -q "<td>h100<td>roco<td>torch<td>seqlen=4096<td class=\"bad\">OOM<td><td><td><td><td" "$work/cfgpaper.html"' "another system's row has an empty paper cell"
check 'grep -q "H100 paper / ours: <b>1.29&times;</b> (1 of 7 workloads)" "$work/cfgpaper.html"' "paper / ours geometric mean (193.4 / 150.25)"
# the summary counts roco torch's OOM in its own grey column, h2o torch's timeout as failed (red),
# the cells nobody ran as not run (grey: nobody ran them, no failure)
check 'grep -q "<td>fig12_kernel</td><td class=\"n ok\" data-v=\"1\">1</td><td class=\"n\" data-v=\"0\">0</td><td class=\"n ns\" data-v=\"32\">32</td><td class=\"n bad\" data-v=\"1\">1</td><td class=\"n ns\" data-v=\"1\">1</td><td class=\"n ns\" data-v=\"42\">42</td>" "$work/cfgpaper.html"' "summary: 1 drawn, 0 stale, 32 not run (grey), 1 failed (TLE, red), 1 OOM, 42 NS (the 7 of FlashTensor (artifact) among them)"
check 'grep -q "<details class=\"notrun\"><summary class=\"ns\">32 cells not run (no log)" "$work/cfgpaper.html"' "the cells nobody ran are listed grey, folded"
"$bin" report -o "$work/nopaper.html" --config "$src/fig14/experiment.yaml" --logs "$fx/ours/fig12" > /dev/null 2>&1
check '[ $? -eq 0 ] && ! grep -q "paper ms" "$work/nopaper.html" && ! grep -q "paper / ours" "$work/nopaper.html"' "no paper column without --paper and plot: paper:"

# 6. plot: claims: and plot: stale: refused when malformed, naming file:line:column
bad_cfg() { # $1: a name, $2: the plot lines to append to fig14's experiment.yaml
  sed '/^  claims:/,$d' "$src/fig14/experiment.yaml" > "$work/$1.yaml"
  printf '%s\n' "$2" >> "$work/$1.yaml"
  "$bin" report -o "$work/$1.html" --config "$work/$1.yaml" --logs "$src/backup_logs/fig14" > "$work/$1.out" 2>&1
  rc=$?
}
bad_cfg claims-fig $'  claims:\n    system: flashtensor\n    fig99: {ms: {h100: 1.1}}'
check '[ $rc -eq 1 ] && grep -q "claims-fig.yaml:[0-9]*:[0-9]*: claims: figure \"fig99\" is not in plot: figures" "$work/claims-fig.out"' "a claim of an unknown figure is refused ($(head -1 "$work/claims-fig.out"))"
bad_cfg claims-metric $'  claims:\n    system: flashtensor\n    fig14: {tflops: {h100: 1.1}}'
check '[ $rc -eq 1 ] && grep -q "claims: fig14 shows no ratio of metric \"tflops\"" "$work/claims-metric.out"' "a claim of a metric the figure does not show is refused"
bad_cfg claims-ratio $'  claims:\n    system: flashtensor\n    fig14: {ms: {h100: fast}}'
check '[ $rc -eq 1 ] && grep -q "claims: expected the claimed ratio on h100, a positive decimal number" "$work/claims-ratio.out"' "a claim that is no number is refused"
bad_cfg claims-sys $'  claims:\n    fig14: {ms: {h100: 1.1}}'
check '[ $rc -eq 1 ] && grep -q "claims: system: expected the plot system the claims are of" "$work/claims-sys.out"' "claims without their system are refused"
bad_cfg stale-reason $'  stale:\n    - {log: "h100.*"}'
check '[ $rc -eq 1 ] && grep -q "stale: each entry needs log and reason" "$work/stale-reason.out"' "a stale entry without its reason is refused"
bad_cfg stale-key $'  stale:\n    - {log: "h100.*", reason: old, since: 2026}'
check '[ $rc -eq 1 ] && grep -q "unknown key \"since\"; expected log, reason" "$work/stale-key.out"' "a stale entry with an unknown key is refused"

# 7. every shipped log and committed figure: 7 sections, all rows, every figure the plot draws
# (its .dat) and every figure of a study's folder (studies/h2o-diag/plot_diag.sh draws two more,
# from no plot config), under 1 MB, the same bytes twice
sections=()
for d in fig12 fig13 fig14 studies/h2o-diag studies/kron-layer studies/sdpa-scale studies/tilebench; do
  sections+=(--config "$src/$d/experiment.yaml" --logs "$src/$d/backup_logs" --figures "$src/$d/figures")
done
"$bin" report -o "$work/all.html" "${sections[@]}" > /dev/null 2>&1
check '[ $? -eq 0 ]' "report of every backup log"
"$bin" report -o "$work/all2.html" "${sections[@]}" > /dev/null 2>&1
check 'cmp -s "$work/all.html" "$work/all2.html"' "the same bytes twice"
size=$(wc -c < "$work/all.html")
check '[ "$size" -lt 1000000 ]' "the report is under 1 MB ($size bytes)"
check '! grep -q "class=\"note nofig\"" "$work/all.html"' "every committed figure is inlined"
for d in fig12 fig13 fig14 studies/h2o-diag studies/kron-layer studies/sdpa-scale studies/tilebench; do
  name=$(sed -n 's/^figure: *//p' "$src/$d/experiment.yaml")
  want=$(table_rows "$src/$d/experiment.yaml" "$src/$d/backup_logs") got=$(tidy_rows "$work/all.html" "$name")
  check '[ "$want" -gt 0 ] && [ "$got" = "$want" ]' "$name: $got rows in the report, $want in the tidy table"
  "$bin" draw --config "$src/$d/experiment.yaml" --logs "$src/$d/backup_logs" --out "$work/dat/$name" \
    --no-render > /dev/null 2>&1
  for dat in "$work/dat/$name"/*.dat; do
    check 'grep -Eq "<figure class=\"fig\" data-name=\"$(basename "$dat" .dat)\" id=\"z[0-9]+\"><a class=\"zoom\" href=\"#z[0-9]+\" title=\"enlarge\"><svg " "$work/all.html"' "$name: $(basename "$dat" .dat) inlined"
  done
  # every figure of the folder, a study's own (h2o_diag_k, h2o_diag_cache) among them
  for svgf in "$src/$d"/figures/*.svg; do
    check 'grep -Eq "<figure class=\"fig\" data-name=\"$(basename "$svgf" .svg)\" id=\"z[0-9]+\"><a class=\"zoom\"" "$work/all.html"' "$name: $(basename "$svgf") of its folder inlined"
  done
done
check 'grep -q "<div class=\"figblock own\" data-name=\"h2o_diag_k\"><h3>h2o_diag_k <small>drawn by the study" "$work/all.html"' "h2o-diag's k sweep (plot_diag.sh's, no plot: figure) is in the report"
# the verdict: the first table, a row per figure and GPU with the paper's claim, this run's
# FlashTensor (artifact) and ours (CUDA C), the verdict by the rule stated under it
first=$(grep -o '<table[^>]*>' "$work/all.html" | head -1)
check '[ "$first" = "<table class=\"verdict\">" ]' "the verdict is the report's first table ($first)"
read -r ft12 n12 <<< "$(ft_ratio "$cfg12" "$src/fig12/backup_logs" kernel h200)"
read -r cls12 word12 <<< "$(verdict_of "${ft12:-0}" 3.03)"
check '[ "${n12:-0}" = 7 ] && grep -q "<tr><td>fig12_kernel</td><td>H200</td><td>speedup: best baseline ms / its ms</td><td>3.03x (H100)</td><td>${ft12}x (7 of 7 workloads)</td><td>[0-9.]*x (7 of 7 workloads)</td><td class=\"$cls12\">$word12: FlashTensor (artifact) ${ft12}x vs paper 3.03x (H100)</td></tr>" "$work/all.html"' "verdict: fig12 kernels on the H200, FlashTensor ${ft12:-?}x over ${n12:-0} workloads against the artifact's 3.03x: $word12"
check 'grep -q "<tr><td>fig12_kernel</td><td>A100</td><td>speedup: best baseline ms / its ms</td><td>2.72x</td><td class=\"ns\">no log</td><td class=\"ns\">no log</td><td class=\"ns\">not run on this GPU</td></tr>" "$work/all.html"' "verdict: the A100 not run"
read -r ft14 n14 <<< "$(ft_ratio "$src/fig14/experiment.yaml" "$src/fig14/backup_logs" kernel h200)"
read -r cls14 word14 <<< "$(verdict_of "${ft14:-0}" 1.13)"
check '[ "${n14:-0}" = 2 ] && grep -q "<td>fig14</td><td>H200</td>.*<td>${ft14}x (2 of 2 workloads)</td>.*<td class=\"$cls14\">$word14: FlashTensor (artifact) ${ft14}x vs paper 1.13x (H100)</td>" "$work/all.html"' "verdict: fig14 on the H200, FlashTensor ${ft14:-?}x over ${n14:-0} workloads against the paper's 1.13x: $word14"
check 'grep -q "FlashTensor (artifact) not run on this GPU; ours (CUDA C) 5.38x vs paper 3.03x: <span class=\"ok\">the claim holds for it" "$work/all.html"' "verdict: on the H100 the rule is applied to ours, said so"
check 'grep -q "Verdict: <b>reproduced</b> when FlashTensor (artifact).s ratio in this run is above 1 and at least 0.8 &times; the paper.s" "$work/all.html"' "the verdict's rule is stated"
# tilebench's H100 NSA logs (README: run under the old --groups): drawn, marked stale, left out
check '[ "$(grep -c "^<tr class=\"stale\"><td>h100<td>nsa<td>" "$work/all.html")" = 9 ] && [ "$(grep -c "^<tr class=\"stale\">" "$work/all.html")" = 9 ]' "the 9 H100 NSA rows (and no other) are marked stale"
check 'grep -q "<td class=\"stale\">ok, stale<td>" "$work/all.html" && grep -q "<span class=\"stale\">stale: run at 4a4b952 under the old meaning of --groups" "$work/all.html"' "a stale row says so, with the reason"
check '! grep -q "H100 speedup: <b>3.59" "$work/all.html" && grep -q "H100 speedup: - (none of the cases has both ours and another system; <span class=\"stale\">3 cases with stale logs left out</span>)" "$work/all.html"' "the stale rows are left out of the H100 NSA speedup (3.59x before)"
check 'grep -q "<td>nsa_comparison</td><td class=\"n ok\" data-v=\"104\">104</td><td class=\"n stale\" data-v=\"9\">9</td>" "$work/all.html"' "the summary counts the 9 stale cells"
check 'grep -q "<p class=\"stale\">9 of the bars are drawn from stale logs" "$work/all.html"' "the NSA figure says which bars are stale"
# cells nobody ran: grey, never red; every table of cells folded
check '! grep -Eq "<td class=\"n bad\" data-v=\"[0-9]+\">[0-9]+</td><td class=\"n( bad)?\" data-v=\"[0-9]+\">[0-9]+</td><td class=\"n( ns)?\" data-v=\"[0-9]+\">[0-9]+</td><td class=\"n( ns)?\" data-v=\"[0-9]+\">[0-9]+</td><td>" "$work/all.html" && grep -q "<td>gemm_comparison</td><td class=\"n ok\" data-v=\"72\">72</td><td class=\"n\" data-v=\"0\">0</td><td class=\"n ns\" data-v=\"18\">18</td>" "$work/all.html"' "not run is grey (tilebench's 18 GEMM cells nobody ran)"
ntidy=$(grep -c '<table class="sort tidy' "$work/all.html")
nfold=$(grep -c '<details class="cells"><summary>[^<]*: [0-9]* logs.*</summary>$' "$work/all.html")
check '[ "$ntidy" -gt 20 ] && [ "$nfold" = "$ntidy" ] && ! grep -q "<details open" "$work/all.html"' "every table of cells is folded ($nfold of $ntidy, none open)"
echo "report of every backup log: $size bytes"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
