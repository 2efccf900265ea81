#!/usr/bin/env bash
# `repro-plot report` without a browser: usage errors; every string from a log HTML-escaped
# and a hostile figure cut down to the SVG a figure needs (fixtures/report/, TEST FIXTURES);
# the tables' rows equal `repro-plot table`'s, section by section; --compare (ratios, cells
# outside the tolerance, cells of one side only), --paper (the artifact's logs as a column) and
# the paper column from a config's plot: paper: without it;
# the same bytes twice; the report of every shipped log and committed figure under 2 MB.
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
    /<table class="sort tidy">/ { t = 1 }
    t && /^<tr/ && s == sec { n++ }
    /<\/tbody><\/table>/ { t = 0 }
    END { print n + 0 }' "$1"
}
# The rows of `repro-plot table` (the tidy table) of config $1 and logs $2.
table_rows() { echo $(($("$bin" table --config "$1" --logs "$2" 2>/dev/null | wc -l) - 1)); }

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
check 'grep -q "&#10007; &lt;svg_onload=alert(2)&gt; 1.0e-01" "$h"' "a failed check: its output escaped, its rel_l2"
check 'grep -q "&#10003; out 2.5e-04</span><br><span class=\"bad\">&#10007; h2o_score 7.5e-02" "$h"' "a passed and a failed check of one log"
fig=$(grep -o '<figure class="fig" data-name="fig12_kernel">.*</figure>' "$h")
check '[ -n "$fig" ] && [[ $fig == *"<svg "* ]]' "the figure is inlined"
check '[[ $fig != *alert* && $fig != *example.invalid* && $fig != *oreign* && $fig != *"<a "* && $fig != *"<title"* ]]' "the figure has no script, handler, link, foreignObject or title"
check '[[ $fig == *"id=\"f0-gpPat1\""* && $fig == *"url(#f0-gpPat1)"* ]]' "the figure's ids and references are prefixed"
check '[[ $fig == *"&lt;script&gt;kept as text"* && $fig == *"class=\"q\""* && $fig == *"#0072b2"* ]]' "the figure's text, group class and colours"
check '[ "$(printf "%s" "$fig" | grep -o "<g " | wc -l)" -eq 2 ]' "the empty group is dropped"
check 'grep -q "<figure class=\"fig\" data-name=\"fig12_e2e\"><p class=\"note nofig\">" "$h"' "a figure without its svg says so"

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
check 'grep -q "<tr class=\"out\"><td>h100</td><td>attn</td><td>flex</td>" "$work/cmp.html"' "the slower cell is the highlighted one"
check 'grep -q "only here</td>.*<td class=\"f\">h100.attn.torch.log</td>" "$work/cmp.html"' "the cell only here says so"
check 'grep -q "<td>h200.gemma2.torch.log</td></tr>" "$work/cmp.html"' "the cell only in the compared logs is listed"
"$bin" report -o "$work/cmp2.html" --config "$src/fig14/experiment.yaml" --logs "$work/new/fig14" \
  --compare "$work/base" --tolerance 100 > /dev/null 2>&1
check '! grep -q "<tr class=\"out\">" "$work/cmp2.html" && grep -q "0 outside &plusmn;10000%" "$work/cmp2.html"' "--tolerance widens the band"

# 5. --paper: the artifact's logs (AE-format fixtures) as the paper's column
"$bin" report -o "$work/paper.html" --config "$cfg12" --logs "$fx/ours/fig12" --paper "$fx/ae" > /dev/null 2>&1
check '[ $? -eq 0 ] && grep -q "<th>paper ms</th>" "$work/paper.html"' "--paper adds the paper's column"
# the artifact's `our` is FlashTensor (artifact), another system than ours (CUDA C): ours' row
# has no artifact time beside it
check 'grep -q "<td>h100</td><td>h2o</td><td>fused</td><td>seqlen=4096</td><td class=\"ok\">ok</td><td class=\"n\" data-v=\"1.2997\">1.300</td><td class=\"n\" data-v=\"105.749\">105.7</td><td class=\"n\" data-v=\"417\">417.0</td><td class=\"n\" data-v=\"\"></td>" "$work/paper.html"' "ours 1.300 ms with no artifact time beside it (its our is FlashTensor (artifact))"
# without --paper: the paper's own times of ours from fig12's plot: paper: (h100 only), with
# paper / ours among the geometric means; a config without plot: paper: has no paper column
"$bin" report -o "$work/cfgpaper.html" --config "$cfg12" --logs "$fx/ours/fig12" > /dev/null 2>&1
check '[ $? -eq 0 ] && grep -q "<th>paper ms</th>" "$work/cfgpaper.html" && grep -q "from the <code>plot: paper:</code>" "$work/cfgpaper.html"' "plot: paper: gives the paper column without --paper"
check 'grep -q "<td>h100</td><td>h2o</td><td>fused</td><td>seqlen=4096</td><td class=\"ok\">ok</td><td class=\"n\" data-v=\"150.25\">150.250</td>.*<td class=\"n\" data-v=\"193.4\">193.4</td>" "$work/cfgpaper.html"' "ours' e2e 150.250 ms beside the paper's 193.4 ms, written as the config writes it"
check 'grep -q "<td>h100</td><td>h2o</td><td>fused</td><td>seqlen=4096</td><td class=\"ok\">ok</td><td class=\"n\" data-v=\"1.2997\">1.300</td>.*<td class=\"n\" data-v=\"1.3\">1.300</td>" "$work/cfgpaper.html"' "ours' kernel 1.300 ms beside the paper's 1.300 ms"
check 'grep -q "<td>h100</td><td>roco</td><td>torch</td><td>seqlen=4096</td><td class=\"bad\">OOM</td><td class=\"n\" data-v=\"\"></td><td class=\"n\" data-v=\"\"></td><td class=\"n\" data-v=\"\"></td><td class=\"n\" data-v=\"\"></td><td>" "$work/cfgpaper.html"' "another system's row has an empty paper cell"
check 'grep -q "H100 paper / ours: <b>1.29&times;</b> (1 of 7 workloads)" "$work/cfgpaper.html"' "paper / ours geometric mean (193.4 / 150.25)"
# the summary counts roco torch's OOM in its own grey column, h2o torch's timeout as failed
check 'grep -q "<td>fig12_kernel</td><td class=\"n ok\" data-v=\"1\">1</td><td class=\"n bad\" data-v=\"32\">32</td><td class=\"n bad\" data-v=\"1\">1</td><td class=\"n ns\" data-v=\"1\">1</td><td class=\"n ns\" data-v=\"42\">42</td>" "$work/cfgpaper.html"' "summary: 1 drawn, 32 missing, 1 failed (TLE), 1 OOM, 42 NS (the 7 of FlashTensor (artifact) among them)"
"$bin" report -o "$work/nopaper.html" --config "$src/fig14/experiment.yaml" --logs "$fx/ours/fig12" > /dev/null 2>&1
check '[ $? -eq 0 ] && ! grep -q "paper ms" "$work/nopaper.html" && ! grep -q "paper / ours" "$work/nopaper.html"' "no paper column without --paper and plot: paper:"

# 6. every shipped log and committed figure: 7 sections, all rows, every figure the plot draws
# (its .dat; studies/h2o-diag/plot_diag.sh draws two more, from no plot config), under 2 MB,
# the same bytes twice
sections=()
for d in fig12 fig13 fig14 studies/h2o-diag studies/kron-layer studies/sdpa-scale studies/tilebench; do
  sections+=(--config "$src/$d/experiment.yaml" --logs "$src/$d/backup_logs" --figures "$src/$d/figures")
done
"$bin" report -o "$work/all.html" "${sections[@]}" > /dev/null 2>&1
check '[ $? -eq 0 ]' "report of every backup log"
"$bin" report -o "$work/all2.html" "${sections[@]}" > /dev/null 2>&1
check 'cmp -s "$work/all.html" "$work/all2.html"' "the same bytes twice"
size=$(wc -c < "$work/all.html")
check '[ "$size" -lt 2000000 ]' "the report is under 2 MB ($size bytes)"
check '! grep -q "class=\"note nofig\"" "$work/all.html"' "every committed figure is inlined"
for d in fig12 fig13 fig14 studies/h2o-diag studies/kron-layer studies/sdpa-scale studies/tilebench; do
  name=$(sed -n 's/^figure: *//p' "$src/$d/experiment.yaml")
  want=$(table_rows "$src/$d/experiment.yaml" "$src/$d/backup_logs") got=$(tidy_rows "$work/all.html" "$name")
  check '[ "$want" -gt 0 ] && [ "$got" = "$want" ]' "$name: $got rows in the report, $want in the tidy table"
  "$bin" draw --config "$src/$d/experiment.yaml" --logs "$src/$d/backup_logs" --out "$work/dat/$name" \
    --no-render > /dev/null 2>&1
  for dat in "$work/dat/$name"/*.dat; do
    check 'grep -q "<figure class=\"fig\" data-name=\"$(basename "$dat" .dat)\"><svg " "$work/all.html"' "$name: $(basename "$dat" .dat) inlined"
  done
done
echo "report of every backup log: $size bytes"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
