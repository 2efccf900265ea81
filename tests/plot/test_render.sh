#!/usr/bin/env bash
# Renders Figures 12-14 with gnuplot through ./plot.sh, from a generated set of FIXTURE logs
# (gen_fixtures: synthetic, not measurements) and from an empty log root, and checks every
# PDF has one page (pdfinfo), every PNG/SVG is non-empty. Skips (77) without gnuplot/pdfinfo.
#   test_render.sh BUILD_DIR SOURCE_DIR
# check() evals its first argument: the single quotes keep its expansions for eval.
# shellcheck disable=SC2016
set -u
build=$1; src=$2
for tool in gnuplot pdfinfo; do
  command -v $tool >/dev/null || { echo "SKIP: $tool is not installed (scripts/install.sh --tests)"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
export REPRO_BUILD_DIR=$build

"$build/tests/plot/gen_fixtures" --format ae --out "$tmp/ae" --noise-kb 256
"$src/plot.sh" "$tmp/ae" --out "$tmp/out" > "$tmp/ae.out" 2>&1
check '[ $? -eq 0 ]' "plot.sh on AE fixtures exits 0 ($(tail -3 "$tmp/ae.out"))"
mkdir -p "$tmp/empty"
"$src/plot.sh" "$tmp/empty" --out "$tmp/out-empty" > "$tmp/empty.out" 2>&1
check '[ $? -eq 0 ] && grep -q "every cell is NS" "$tmp/empty.out"' "plot.sh on an empty root draws all-NS figures"
for dir in out out-empty; do
  for f in fig12/fig12_kernel fig12/fig12_e2e fig13/fig13 fig14/fig14; do
    pdf=$tmp/$dir/$f.pdf
    check '[ "$(pdfinfo "$pdf" 2>/dev/null | awk "/^Pages:/ {print \$2}")" = 1 ]' "$pdf has one page"
    check '[ -s "$tmp/$dir/$f.png" ] && [ -s "$tmp/$dir/$f.svg" ]' "$f png and svg written"
  done
done
# reproducible bit for bit: the same logs drawn again a second later give the same bytes
# (pdfcairo writes the wall clock as /CreationDate; render.c overwrites it)
sleep 1.1
"$src/plot.sh" "$tmp/ae" --out "$tmp/out2" > "$tmp/ae2.out" 2>&1
for f in fig12/fig12_kernel fig12/fig12_e2e fig13/fig13 fig14/fig14; do
  for ext in pdf png svg; do
    check 'cmp -s "$tmp/out/$f.$ext" "$tmp/out2/$f.$ext"' "$f.$ext is the same bytes when drawn twice"
  done
done
# the bar figures (comparison, speedup: plot/gnuplot/bars.gp) of studies/tilebench, from its
# FIXTURE logs: one file per kernel and device, one page each, the same bytes twice
for n in 1 2; do
  "$src/studies/tilebench/plot.sh" "$src/tests/plot/fixtures/ours/tilebench" --out "$tmp/tb$n" > "$tmp/tb$n.out" 2>&1
  check '[ $? -eq 0 ]' "tilebench plot.sh exits 0 ($(tail -3 "$tmp/tb$n.out"))"
done
for f in gemm_comparison_h100 gemm_comparison_a100 mha_comparison_h100 nsa_comparison_h100 speedup_comparison_h100 speedup_comparison_a100; do
  check '[ "$(pdfinfo "$tmp/tb1/$f.pdf" 2>/dev/null | awk "/^Pages:/ {print \$2}")" = 1 ] && [ -s "$tmp/tb1/$f.png" ] && [ -s "$tmp/tb1/$f.svg" ]' "$f: one PDF page, png and svg"
  check 'cmp -s "$tmp/tb1/$f.png" "$tmp/tb2/$f.png" && cmp -s "$tmp/tb1/$f.pdf" "$tmp/tb2/$f.pdf"' "$f is the same bytes when drawn twice"
done
check '! cat "$tmp/tb1"/*.gnuplot.log | grep -v "no valid points" | grep -q .' "bars.gp: gnuplot says nothing but empty bar sets"
check 'pdfinfo "$tmp/out/fig13/fig13.pdf" | grep -q "^CreationDate: .*1970"' "PDF date is SOURCE_DATE_EPOCH or the epoch, not the clock"
SOURCE_DATE_EPOCH=1700000000 "$src/plot.sh" "$tmp/ae" --out "$tmp/out3" > /dev/null 2>&1
check 'pdfinfo "$tmp/out3/fig13/fig13.pdf" | grep -q "^CreationDate: .*2023"' "PDF date follows SOURCE_DATE_EPOCH"
check 'grep -q "figures written to $tmp/out/fig12/: fig12_kernel.{pdf,png,svg} fig12_e2e.{pdf,png,svg}" "$tmp/ae.out"' "says where the figures are"
check 'grep -q "^KeyFormer .*   46.800 " "$tmp/ae.out"' "AE fixture value in the terminal table"
check '[ $(file -b --mime-type "$tmp/out/fig13/fig13.png" 2>/dev/null || echo image/png) = image/png ]' "png is a png"
# repro-plot render DIR NAME...: a script of one's own, rendered as draw renders its figures
mkdir -p "$tmp/own"
cat > "$tmp/own/own_fig.gp" <<'EOF'
do for [fmt in "png svg pdf"] {
  if (fmt eq "pdf") { set terminal pdfcairo size 4, 3 }
  if (fmt eq "png") { set terminal pngcairo size 400, 300 }
  if (fmt eq "svg") { set terminal svg size 400, 300 }
  set output "own_fig.".fmt
  plot x * x
}
EOF
printf 'set terminal svg\nset output "broken_fig.svg"\nplot no_such_function(x)\n' > "$tmp/own/broken_fig.gp"
"$build/bin/repro-plot" render "$tmp/own" own_fig > "$tmp/own.out" 2>&1
check '[ $? -eq 0 ] && [ -s "$tmp/own/own_fig.png" ] && [ -s "$tmp/own/own_fig.svg" ]' "render draws a script's png and svg ($(cat "$tmp/own.out"))"
check 'pdfinfo "$tmp/own/own_fig.pdf" | grep -q "^CreationDate: .*1970"' "render dates the PDF as draw does (the epoch)"
"$build/bin/repro-plot" render "$tmp/own" broken_fig > "$tmp/broken.out" 2>&1
check '[ $? -eq 1 ] && grep -q "broken_fig.gp: gnuplot failed" "$tmp/broken.out"' "render fails a script gnuplot rejects, naming it"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
