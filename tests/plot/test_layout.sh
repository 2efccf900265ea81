#!/usr/bin/env bash
# Label layout of the figures, checked numerically on the .dat/.gp repro-plot writes (no
# gnuplot needed): every label (NS/OOM/TLE/ERR marks, values of cut bars, ours' speedup) has a
# box in inches in the .dat; no two labels touch (adjacent NS marks must not run together
# into "NSNSNS"), every label stays inside its panel, a speedup never lies over another
# system's bar, a cut bar's value contrasts with the bar (WCAG ratio >= 4.5), the left margin
# holds the tick labels and the row labels; figures drawn from CPU-mode logs carry a note.
# Inputs: backup_logs (real logs), the AE fixtures (cut bars, OOM, TLE), and copies of
# backup_logs turned into CPU-mode logs.
#   test_layout.sh REPRO_PLOT SOURCE_DIR
# check() evals its first argument: the single quotes keep its expansions for eval.
# shellcheck disable=SC2016
set -u
bin=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }

# CPU-mode copies: meta gpu=none, config device=cpu, times x300 (taller than fig12's 30 ms)
mkdir -p "$tmp/cpu"
for fig in fig12 fig13 fig14; do
  mkdir -p "$tmp/cpu/$fig"
  for f in "$src/backup_logs/$fig"/*.log; do
    awk '/^meta /{sub(/gpu="[^"]*"/, "gpu=none")} /^config /{sub(/ device=gpu/, " device=cpu")}
         /^result /{for (i = 1; i <= NF; i++) if ($i ~ /^avg_ms=/) { split($i, a, "="); $i = "avg_ms=" a[2] * 300 }}
         {print}' "$f" > "$tmp/cpu/$fig/$(basename "$f")"
  done
done

draw() { # draw NAME FIG LOGDIR
  "$bin" draw --config "$src/$2/experiment.yaml" --logs "$3" --out "$tmp/$1/$2" --no-render > "$tmp/$1.$2.out" 2>&1
}
for fig in fig12 fig13 fig14; do
  draw real $fig "$src/backup_logs/$fig"
  draw cpu $fig "$tmp/cpu/$fig"
done
draw ae fig12 "$src/tests/plot/fixtures/ae/fig12"
draw ae fig13 "$src/tests/plot/fixtures/ae/fig13"
# bar figures (comparison, speedup: the sweep's columns) from the tilebench fixtures and from no logs
"$bin" draw --config "$src/studies/tilebench/experiment.yaml" --logs "$src/tests/plot/fixtures/ours/tilebench" --out "$tmp/tb/tilebench" --no-render > "$tmp/tb.out" 2>&1
mkdir -p "$tmp/none"
"$bin" draw --config "$src/studies/tilebench/experiment.yaml" --logs "$tmp/none" --out "$tmp/tb0/tilebench" --no-render > "$tmp/tb0.out" 2>&1

# One awk pass per .dat: blocks alternate bars / labels (see plot/gnuplot/*.gp).
layout_errors() { # prints one line per violation
  awk -v kind="$2" '
    function meet(ax0, ay0, ax1, ay1, bx0, by0, bx1, by1, pad) {
      return ax0 < bx1 + pad && bx0 < ax1 + pad && ay0 < by1 + pad && by0 < ay1 + pad }
    function lum(c,   r, g, b) { r = int(c / 65536) % 256; g = int(c / 256) % 256; b = c % 256
      return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b) }
    function lin(v) { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ^ 2.4 }
    function contrast(a, b,   la, lb) { la = lum(a); lb = lum(b); return la > lb ? (la + 0.05) / (lb + 0.05) : (lb + 0.05) / (la + 0.05) }
    function check_panel(   i, j) {
      for (i = 1; i <= nl; i++) {
        if (lx0[i] < -1e-3 || lx1[i] > pw + 1e-3 || ly0[i] < -1e-3 || ly1[i] > ph + 1e-3)
          printf "panel %d: %s \"%s\" outside the panel\n", panel, lk[i], lt[i]
        for (j = i + 1; j <= nl; j++)
          if (meet(lx0[i], ly0[i], lx1[i], ly1[i], lx0[j], ly0[j], lx1[j], ly1[j], 0.015))
            printf "panel %d: %s \"%s\" touches %s \"%s\"\n", panel, lk[i], lt[i], lk[j], lt[j]
        if (lk[i] == "speedup")
          for (j = 1; j <= nb; j++)
            if (!(bo[j] && lb[i]) && meet(lx0[i], ly0[i], lx1[i], ly1[i], bx0[j], by0[j], bx1[j], by1[j], 0))
              printf "panel %d: speedup \"%s\" lies over bar %d\n", panel, lt[i], j
        if (lk[i] == "cut" && contrast(lfg[i], lbg[i]) < 4.5)
          printf "panel %d: cut value \"%s\" has contrast %.2f\n", panel, lt[i], contrast(lfg[i], lbg[i])
      }
    }
    /^# idx|^# x value/ { mode = "bars"; nb = 0; next }
    /^# labels:/ { mode = "labels"; nl = 0; panel++
      for (i = 1; i <= NF; i++) if ($i == "x" && $(i - 1) ~ /^[0-9.]+$/) { pw = $(i - 1); ph = $(i + 1); sub(/\)/, "", ph) }
      next }
    /^#/ || NF == 0 { if (mode == "labels" && NF == 0 && nl >= 0) { check_panel(); nl = -1 } next }
    mode == "bars" { c = (kind == "grid") ? 7 : 5; if ($c == "nan") next   # box columns
      nb++; bx0[nb] = $c; bx1[nb] = $(c + 1); by0[nb] = $(c + 2); by1[nb] = $(c + 3)
      bo[nb] = (kind == "grid") ? $6 : $4 }
    mode == "labels" && $1 != "nan" {
      # x y "text" rot bold boxed fg bg kind x0 x1 y0 y1 (texts hold no spaces)
      nl++; lt[nl] = $3; gsub(/"/, "", lt[nl]); lb[nl] = $6; lfg[nl] = $7; lbg[nl] = $8; lk[nl] = $9
      lx0[nl] = $10; lx1[nl] = $11; ly0[nl] = $12; ly1[nl] = $13 }
  ' "$1"
}

for set in real cpu ae tb tb0; do
  for dat in "$tmp/$set"/*/*.dat; do
    name=$(basename "$dat" .dat); kind=grid; [ "$name" = fig13 ] || [ "${set#tb}" != "$set" ] && kind=sweep
    layout_errors "$dat" $kind > "$tmp/err" 2>&1
    check '[ ! -s "$tmp/err" ] && grep -q "^# labels:.*box" "$dat"' "$set/$name: label layout: $(head -3 "$tmp/err" | tr '\n' ';')"
  done
done
# the layouts the checks above would miss if nothing were placed
check 'grep -c "\"NS\" 90 .* mark" "$tmp/real/fig13/fig13.dat" | grep -qv "^0$"' "fig13 has NS marks to lay out"
check 'grep -q " cut " "$tmp/cpu/fig12/fig12_kernel.dat"' "cut bars present"
# the checker itself: two NS marks 0.08 in apart at one height (the old fixed layout) fail
printf '%s\n' "# idx letter value_ms bar_h color ours box_x0 box_x1 box_y0 box_y1" "0 A 5 5 0 0 0.1 0.2 0 0.5" "" "" \
  "# labels: x y text rot bold boxed fg bg kind box_x0 box_x1 box_y0 box_y1 (panel 1.4500 x 1.2000 in)" \
  '2 1 "NS" 90 0 0 0 16777215 mark 0.40 0.50 0.05 0.20' '3 1 "NS" 90 0 0 0 16777215 mark 0.48 0.58 0.05 0.20' \
  '1 1 "2.0×" 0 1 0 0 16777215 speedup 0.05 0.30 0.30 0.40' "" "" > "$tmp/bad.dat"
layout_errors "$tmp/bad.dat" grid > "$tmp/err"
check 'grep -q "touches" "$tmp/err" && grep -q "lies over bar" "$tmp/err"' "the checker catches touching marks and a speedup over a bar"
# the H100's KeyFormer speedup, 5.82x in the table below (the shipped H100 logs')
check 'grep -q "\"5.82×\" .* speedup" "$tmp/real/fig12/fig12_kernel.dat"' "KeyFormer speedup (a taller neighbour) laid out, two decimals"
# adjacent NS marks in fig13 (bars 0.11 in apart) are stacked: not all at one height
check '[ "$(awk "/\"NS\" 90/ {print \$12}" "$tmp/real/fig13/fig13.dat" | sort -u | wc -l)" -ge 2 ]' "fig13's adjacent NS marks stack"

check '[ "$(ls "$tmp/tb/tilebench"/*.dat | wc -l)" -eq 6 ] && [ "$(ls "$tmp/tb0/tilebench"/*.dat | wc -l)" -eq 12 ]' "tilebench: a file per kernel and device with logs (every device without logs)"
check 'grep -q "\"ERR\" 90 .* mark" "$tmp/tb/tilebench/speedup_comparison_h100.dat"' "bar figures have marks to lay out"

# margins: the tick labels (7 pt drawn at 4/3, digits 0.636 em) fit between the row labels and the axis
for set in real cpu tb; do
  for gp in "$tmp/$set"/*/*.gp; do
    check 'awk -v set=$set "
      /^left = / { left = \$3 }
      /^array panel_(ymax|hi)\\[/ || /^array panel_step\\[/ { s = \$0; sub(/.*\\[/, \"\", s); sub(/\\].*/, \"\", s); gsub(/ /, \"\", s)
        if (\$2 ~ /step/) nst = split(s, st, \",\"); else nhi = split(s, hi, \",\") }
      /^array grouplabel/ { sweep = 1 }
      END { w = 0
        for (i = 1; i <= nhi; i++) if (st[i] > 0) for (v = 0; v <= hi[i] * 1.000001; v += st[i]) {
          l = length(sprintf(\"%g\", v)); if (l > w) w = l }
        need = (sweep ? 0.12 : 0.3) + 0.08 + w * 0.636 * 7 * 4 / 3 / 72
        exit !(left >= need) }" "$gp"' "$set/$(basename "$gp"): left margin holds the row label and the tick labels"
  done
done

# CPU-mode logs say so on the figure and in the terminal table; GPU logs do not
for fig in fig12/fig12_kernel fig13/fig13 fig14/fig14; do
  check 'grep -q "^note_text = \"CPU reference logs.*measure nothing\"" "$tmp/cpu/$fig.gp"' "$fig from CPU-mode logs carries the note"
  check 'grep -q "^note_text = \"\"" "$tmp/real/$fig.gp"' "$fig from GPU logs carries no note"
done
check 'grep -q "CPU reference logs" "$tmp/cpu.fig13.out"' "terminal output says the logs are CPU runs"

# terminal tables show the figure's quantities: fig13 throughput (TFLOP/s) and peak MiB per
# length, not ms; a header that names the workload once; grid figures ms and the speedup
# shellcheck disable=SC2034 # read by the checks, which check() evals
t=$tmp/real.fig13.out
check 'grep -q "^== fig13: H2O by sequence length: throughput in TFLOP/s and peak memory in MiB" "$t" && ! grep -q "h2o h2o" "$t"' "fig13 table header names what the figure shows"
check 'grep -q "^\[H200\] throughput, TFLOP/s" "$t" && grep -q "^\[H200\] peak memory, MiB" "$t" && ! grep -q " ms" "$t"' "fig13 tables are TFLOP/s and MiB, no ms"
# (the numbers are the shipped H100 logs'; an H100 rerun changes them here too)
check 'grep -q "^4096 .* 344.5 .* 7.48x$" "$t"' "fig13 throughput row: ours 344.5 TFLOP/s, 7.48x the best other"
check 'grep -q "^4096 .* 161.0 .* 13.53x$" "$t"' "fig13 memory row: ours 161 MiB, 13.5x less than the lowest other"
check 'grep -q "^KeyFormer .* 0.934 .* 5.82x .* 3.067 .* 3.28x$" "$tmp/real.fig12.out"' "fig12 table: ms and the speedup the figure writes"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
