#!/usr/bin/env bash
# Renders Figures 12-14 with gnuplot through ./plot.sh, from a generated set of FIXTURE logs
# (gen_fixtures: synthetic, not measurements) and from an empty log root, and checks every
# PDF has one page (pdfinfo), every PNG/SVG is non-empty. Skips (77) without gnuplot/pdfinfo.
#   test_render.sh BUILD_DIR SOURCE_DIR
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
check 'pdfinfo "$tmp/out/fig13/fig13.pdf" | grep -q "^CreationDate: .*1970"' "PDF date is SOURCE_DATE_EPOCH or the epoch, not the clock"
SOURCE_DATE_EPOCH=1700000000 "$src/plot.sh" "$tmp/ae" --out "$tmp/out3" > /dev/null 2>&1
check 'pdfinfo "$tmp/out3/fig13/fig13.pdf" | grep -q "^CreationDate: .*2023"' "PDF date follows SOURCE_DATE_EPOCH"
check 'grep -q "figures written to $tmp/out/fig12/: fig12_kernel.{pdf,png,svg} fig12_e2e.{pdf,png,svg}" "$tmp/ae.out"' "says where the figures are"
check 'grep -q "^KeyFormer .*   46.800 " "$tmp/ae.out"' "AE fixture value in the terminal table"
check '[ $(file -b --mime-type "$tmp/out/fig13/fig13.png" 2>/dev/null || echo image/png) = image/png ]' "png is a png"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
