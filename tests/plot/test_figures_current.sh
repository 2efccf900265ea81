#!/usr/bin/env bash
# The committed figures are the ones the shipped logs draw: ./plot.sh (Figures 12-14) and each
# study's plot.sh (and plot_*.sh), run on its backup_logs into a temporary folder, write SVGs
# byte-identical to the committed figNN/figures/*.svg and studies/*/figures/*.svg, and no
# figure more or less.
# Only the SVGs are compared: they are text whose coordinates and labels carry every drawn
# number, while the bytes of a PNG or PDF also depend on the fonts installed. A failure names
# the stale figure; redraw it with its plot.sh. Skips (77) without gnuplot.
#   test_figures_current.sh REPRO_PLOT SOURCE_DIR
set -u
plot_bin=$1 src=$2
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot is not installed (scripts/install.sh --tests)"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export REPRO_PLOT_BIN=$plot_bin
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# compare DRAWN_DIR COMMITTED_DIR LABEL: the same SVG names, each byte for byte
compare() {
  local drawn=$1 committed=$2 label=$3 names
  names=$( (cd "$drawn" && ls -- *.svg; cd "$committed" && ls -- *.svg) 2>/dev/null | sort -u)
  [ -n "$names" ] || { bad "$label: no SVG drawn or committed"; return; }
  for name in $names; do
    if [ ! -f "$committed/$name" ]; then
      bad "$label: $name is drawn from the shipped logs but not committed (run its plot.sh)"
    elif [ ! -f "$drawn/$name" ]; then
      bad "$label: $name is committed but the shipped logs no longer draw it"
    elif ! cmp -s "$drawn/$name" "$committed/$name"; then
      bad "$label: $name differs from what the shipped logs draw (stale: run its plot.sh)"
    else
      ok
    fi
  done
}

if (cd "$src" && ./plot.sh ./backup_logs --out "$tmp/figs" --no-report) >"$tmp/figs.out" 2>&1; then
  for fig in fig12 fig13 fig14; do compare "$tmp/figs/$fig" "$src/$fig/figures" "$fig"; done
else
  bad "./plot.sh ./backup_logs failed: $(tail -3 "$tmp/figs.out")"
fi
# a study's figures: its plot.sh, and its own plot_*.sh for the figure kinds repro-plot lacks
for study in "$src"/studies/*/; do
  name=$(basename "$study")
  if [ ! -x "$study/plot.sh" ] || [ ! -d "$study/figures" ]; then continue; fi
  drawn=1
  for script in "$study"/plot.sh "$study"/plot_*.sh; do
    [ -x "$script" ] || continue
    if ! (cd "$study" && "./$(basename "$script")" backup_logs --out "$tmp/$name") \
        >"$tmp/$name.out" 2>&1; then
      bad "studies/$name/$(basename "$script") backup_logs failed: $(tail -3 "$tmp/$name.out")"
      drawn=0
    fi
  done
  [ $drawn -eq 1 ] && compare "$tmp/$name" "$study/figures" "studies/$name"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
