#!/usr/bin/env bash
# Figures made to be read, checked on the .dat/.gp repro-plot writes from the shipped logs
# (--no-render: no gnuplot needed):
# - fig14's y axis stops at its plot: ymax (2 ms, as the paper's Fig 14): every panel's axis
#   max is the clip, every taller bar is drawn to the top with a break and labelled with its own
#   time ("8.02") inside its top; the clip is the YAML's (a copy with ymax: 3 draws 3);
# - speedup labels have two decimals everywhere (every figure's .dat here, the studies' too):
#   0.96 is "0.96×" (fig14's H100 Attn, ours against FlashAttention-3), kron-layer's lowest
#   likewise, never "1.0×";
# - every ratio is named, in one direction (> 1: ours is the faster): the grid figures' red
#   labels (ratio_text), the speedup figures' panel titles, the terminal and Markdown tables
#   (speedup, ours/best, saving, paper / ours as a time ratio);
# - the tilebench bar figures: a device's figure has only the cases that device ran, group
#   labels too wide for their groups lose the words every case shares (named in the x label),
#   panels too wide side by side are stacked.
#   test_readable.sh REPRO_PLOT SOURCE_DIR
# check() evals its first argument: the single quotes keep its expansions for eval.
# shellcheck disable=SC2016
set -u
bin=$1 src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
draw() { # draw NAME CONFIG LOGDIR [--format markdown]
  "$bin" draw --config "$2" --logs "$3" --out "$tmp/$1" --no-render > "$tmp/$1.out" 2>&1
}
draw fig14 "$src/fig14/experiment.yaml" "$src/backup_logs/fig14"
draw fig12 "$src/fig12/experiment.yaml" "$src/backup_logs/fig12"
for s in kron-layer sdpa-scale h2o-diag tilebench; do draw "$s" "$src/studies/$s/experiment.yaml" "$src/backup_logs/$s"; done
dat=$tmp/fig14/fig14.dat gp=$tmp/fig14/fig14.gp

# ---- fig14: the clip ----
check 'grep -q "^array panel_ymax\[4\] = \[2, 2, 2, 2\]$" "$gp"' "fig14: every panel's y axis stops at the clip, 2 ms ($(grep "^array panel_ymax" "$gp"))"
check '[ "$(grep -c "^# device=.* ymax=2$" "$dat")" -eq 4 ]' "fig14: the .dat's panels say ymax=2"
# per panel: each bar taller than ymax is drawn to ymax, has a break below its top and a cut
# label with its own time inside its top; prints one line per clipped bar, or a violation
clipped() {
  awk '
    function val(v) { return v < 10 ? sprintf("%.2f", v) : sprintf("%.1f", v) }
    /^# device=/ { ymax = $NF; sub(/ymax=/, "", ymax); nb = 0; mode = "bars"; next }
    /^# labels:/ { mode = "labels"; for (i = 1; i <= NF; i++) if ($i == "x" && $(i - 1) ~ /^[0-9.]+$/) { ph = $(i + 1) }
      nl = 0; next }
    /^#/ { next }
    NF == 0 { if (mode == "labels" && nl >= 0) { judge(); nl = -1 } next }
    mode == "bars" && $3 != "nan" { nb++; v[nb] = $3; h[nb] = $4; x0[nb] = $7; x1[nb] = $8 }
    mode == "labels" && $1 != "nan" { nl++; t[nl] = $3; gsub(/"/, "", t[nl]); k[nl] = $9; lx[nl] = ($10 + $11) / 2; ly1[nl] = $13 }
    function judge(   b, j, found) {
      for (b = 1; b <= nb; b++) {
        if (v[b] + 0 <= ymax + 0) continue
        found = 0
        for (j = 1; j <= nl; j++) if (k[j] == "cut" && lx[j] > x0[b] && lx[j] < x1[b]) found = j
        if (h[b] + 0 != ymax + 0) print "bad: bar of " v[b] " drawn to " h[b] ", not to the clip " ymax
        else if (!found) print "bad: bar of " v[b] " has no cut label"
        else if (t[found] != val(v[b])) print "bad: bar of " v[b] " labelled " t[found]
        else if (ly1[found] < ph - 0.06) print "bad: the label of " v[b] " is not at the top of its bar"
        else print "ok " t[found]
      }
    }' "$1"
}
clipped "$dat" > "$tmp/clip"
check '! grep -q "^bad" "$tmp/clip" && [ "$(grep -c "^ok" "$tmp/clip")" -ge 8 ]' "fig14: each clipped bar reaches the top and is labelled with its value ($(grep -c "^ok" "$tmp/clip") ok; $(grep "^bad" "$tmp/clip" | head -3 | tr '\n' ';'))"
check 'grep -qx "ok 8.02" "$tmp/clip" && grep -qx "ok 10.3" "$tmp/clip"' "fig14: PyTorch's 8.02 ms (H100 Attn) and 10.3 ms (H100 Gemma2) written on their bars"
check 'grep -q "using (strcol(9) eq \"cut\" ? \$1 : NaN):(\$2 - 0.06 / ph \* ym):(0.44):(ym \* 0.012) with boxxyerror .*\"white\"" "$gp"' "fig14: a clipped bar is drawn with a white break below its value"
# the clip is data: the YAML's ymax
mkdir -p "$tmp/cfg3"
sed 's/kind: grid, experiment: kernel, ymax: 2, ytics: 0.5,/kind: grid, experiment: kernel, ymax: 3, ytics: 1,/' "$src/fig14/experiment.yaml" > "$tmp/cfg3/experiment.yaml"
draw fig14y3 "$tmp/cfg3/experiment.yaml" "$src/backup_logs/fig14"
check 'grep -q "^array panel_ymax\[4\] = \[3, 3, 3, 3\]$" "$tmp/fig14y3/fig14.gp"' "fig14: the clip is the YAML's ymax (3 in a copy)"

# ---- speedup labels: two decimals ----
check 'grep -q "\"0.96×\" .* speedup" "$dat"' "fig14 H100 Attn: ours 0.219 ms against FlashAttention-3's 0.211 is labelled 0.96×"
check 'grep -q "^Attn .* 0.211 .* 0.219 .* 0.96x$" "$tmp/fig14.out"' "fig14's table: the same 0.96x"
# kron-layer's lowest speedup label (below 1 in the shipped logs) keeps two decimals too
low=$(cat "$tmp"/kron-layer/*.dat | awk '$9 == "speedup" { t = $3; gsub(/"/, "", t); v = t + 0; if (!n++ || v < m) { m = v; l = t } } END { print l }')
check '[ -n "$low" ] && printf "%s" "$low" | grep -qE "^[0-9]+\.[0-9][0-9]×$"' "kron-layer: its lowest speedup is labelled with two decimals ($low)"
cat "$tmp"/*/*.dat | awk '$9 == "speedup" { t = $3; gsub(/"/, "", t); if (t !~ /^[0-9]+\.[0-9][0-9]×$/) print t }' > "$tmp/onedec"
check '[ "$(grep -c " speedup " "$tmp"/fig12/*.dat | awk -F: "{s += \$2} END {print s}")" -gt 0 ] && [ ! -s "$tmp/onedec" ]' "every speedup label has two decimals: $(head -5 "$tmp/onedec" | tr '\n' ' ')"

# ---- ratios named, one direction ----
check 'grep -q "^ratio_text = \"red: speedup of ours (CUDA C) = the fastest other logged system.s time / its time (> 1: it is faster)\"$" "$gp"' "fig14's red labels are named on the figure"
for g in "$tmp"/fig12/*.gp "$tmp"/kron-layer/*.gp "$tmp"/sdpa-scale/*.gp "$tmp"/h2o-diag/*.gp; do
  check 'grep -q "^ratio_text = \"red: speedup of .* = the fastest other logged system.s time / its time" "$g"' "$(basename "$g"): the red labels named"
done
for g in "$tmp"/tilebench/speedup_comparison_*.gp; do
  check 'grep "^array panel_title" "$g" | grep -q "GEMM: speedup = PyTorch (torch.matmul).s time / each system.s (> 1: faster)"' "$(basename "$g"): each panel names its ratio"
done
check 'grep -q "speedup of ours = the best other system.s time / ours. (> 1: ours is faster)" "$tmp/fig14.out"' "terminal: the speedup named"
check 'grep -q "paper / ours = the paper.s time of ours / this run.s (> 1: this run is faster)" "$tmp/fig12.out"' "terminal: paper / ours named a time ratio"
"$bin" table --config "$src/fig12/experiment.yaml" --logs "$src/backup_logs/fig12" --format markdown --device h100 > "$tmp/md12" 2>&1
check 'grep -q "^speedup = the best other system.s time / ours. (> 1: ours is faster); paper / ours = the paper.s time of ours / this run.s (> 1: this run is faster)\.$" "$tmp/md12"' "markdown: the ratios named below each title"
"$bin" table --config "$src/studies/tilebench/experiment.yaml" --logs "$src/backup_logs/tilebench" --format markdown --device h200 > "$tmp/mdtb" 2>&1
check 'grep -q "^ours/best = ours. TFLOP/s / the best other system.s (> 1: ours is faster)\.$" "$tmp/mdtb"' "markdown: the throughput ratio named"

# ---- tilebench: cases per device, short labels, stacked panels ----
tb=$tmp/tilebench
check 'grep -q "^array panel_ng\[2\] = \[3, 3\]$" "$tb/nsa_comparison_h100.gp"' "nsa on the H100: only its 3 cases ($(grep "^array panel_ng" "$tb/nsa_comparison_h100.gp"))"
check 'grep -q "^array panel_ng\[2\] = \[19, 19\]$" "$tb/nsa_comparison_h200.gp"' "nsa on the H200: its 19 cases"
check 'grep -q "^array grouplabel\[38\] = \[\"S256 D64 bs32 g1 sel4\"" "$tb/nsa_comparison_h200.gp" && grep -q "^array panel_xlabel\[2\] = \[\"problem size (every case: B2 H16)\"" "$tb/nsa_comparison_h200.gp"' "nsa: the words every case shares (B2 H16) leave the labels for the x label"
check 'grep -q " \"B2 H16 S256 D64 bs32 g1 sel4 causal=1\" [01]$\| \"B2 H16 S256 D64 bs32 g1 sel4\" [01]$" "$tb/nsa_comparison_h200.dat"' "nsa: the .dat keeps each case's whole label"
check 'grep -q "^nrows = 2$" "$tb/nsa_comparison_h200.gp" && grep -q "^ncols = 1$" "$tb/nsa_comparison_h200.gp" && awk "/^W = / { exit !(\$3 <= 11) }" "$tb/nsa_comparison_h200.gp"' "nsa: 19 cases' panels stacked, the page at most 11 in wide"
check 'grep -q "^nrows = 1$" "$tb/mha_comparison_h200.gp" && grep -q "^ncols = 2$" "$tb/mha_comparison_h200.gp"' "mha (6 cases): its two panels side by side"
check 'grep -q "^nrows = 2$" "$tb/gemm_comparison_h200.gp"' "gemm (9 cases of 6 bars): its panels stacked"
check '[ -z "$(awk "/^W = / && \$3 > 11.5 { print FILENAME }" "$tb"/*.gp)" ]' "every tilebench figure at most 11.5 in wide"
check 'grep -q "font font_name.\",7\" offset" "$tb/nsa_comparison_h200.gp" && ! grep -q "xtics.*font font_name.\",6\"" "$tb/nsa_comparison_h200.gp"' "the group labels at 7 pt"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
