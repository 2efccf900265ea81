#!/usr/bin/env bash
# Where ./plot.sh and a figure's plot.sh write, in a fresh clone (tests/scripts/fresh_clone.sh)
# drawing with the given repro-plot (REPRO_PLOT_BIN, linked into the clone's build-plot/bin, so
# the report's default place is the clone's build-plot/report.html, which holds a stand-in):
#  1. ./plot.sh ROOT, ROOT a temporary folder run3/ holding a copy of the shipped fig12 logs
#     (less the torch cells, so that its figures differ from the committed ones):
#     exit 0, Figures 12-14 (.dat, .gp, .pdf, .png, .svg) in plots/run3/figNN/ and the report
#     in plots/run3/report.html; every other file of the clone (the committed figures, the
#     stand-in report) keeps its bytes, and none is added or removed outside plots/;
#  2. cd fig12 && ./plot.sh .../FlashTensor-AE/fig12/backup_logs (README's example, a copy of
#     the shipped logs): plots/FlashTensor-AE/fig12/, its figures and report.html, nothing else
#     (each step's "nothing else" against the tree as the step before left it);
#  3. ./plot.sh ROOT --out DIR: DIR/figNN/ and DIR/report.html, nothing in the clone;
#  4. ./plot.sh without ROOT, run from another folder: the clone's own backup_logs (every log
#     read, no folder missing) drawn into the committed figNN/figures/ and the report into
#     build-plot/report.html; plots/ as it was.
# Skips (77) without gnuplot.
#   test_plot_out.sh SOURCE_DIR REPRO_PLOT
set -u
src=$(cd "$1" && pwd) plot_bin=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot is not installed (scripts/install.sh --tests)"; exit 77; }
source "$(dirname "$0")/fresh_clone.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
unset REPRO_BUILD_DIR
clone=$tmp/clone
fresh_clone "$src" "$clone"
mkdir -p "$clone/build-plot/bin"
ln -s "$plot_bin" "$clone/build-plot/bin/repro-plot"
export REPRO_PLOT_BIN=$clone/build-plot/bin/repro-plot
echo "a stand-in: ./plot.sh of another folder must leave this file alone" >"$clone/build-plot/report.html"
mkdir -p "$tmp/run3" "$tmp/FlashTensor-AE/fig12"
cp -rL "$clone/fig12/backup_logs" "$tmp/run3/fig12"
cp -rL "$clone/fig12/backup_logs" "$tmp/FlashTensor-AE/fig12/backup_logs"
# without the torch cells their figures differ from the committed ones
rm -f "$tmp"/run3/fig12/*.torch.log "$tmp"/FlashTensor-AE/fig12/backup_logs/*.torch.log

# the clone's files outside plots/ with their checksums and modification times (a file written
# again with the same bytes shows too), and every path outside plots/
sums() {
  (cd "$clone" && find . -path ./plots -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
    find . -path ./plots -prune -o ! -type d -printf '%p %T@\n' -o -print | LC_ALL=C sort)
}
# unchanged LABEL BEFORE: the clone outside plots/ is as BEFORE says
unchanged() {
  local now
  now=$(sums)
  if [ "$now" = "$2" ]; then
    ok
  else
    bad "$1 changed the tree outside plots/: $(diff <(echo "$2") <(echo "$now") | grep '^[<>]' | head -4 | tr '\n' ' ')"
  fi
}
# drawn LABEL DIR NAME...: DIR holds each NAME's .dat, .gp, .pdf, .png and .svg, none empty
drawn() {
  local label=$1 dir=$2 name ext missing=
  shift 2
  for name in "$@"; do
    for ext in dat gp pdf png svg; do [ -s "$dir/$name.$ext" ] || missing="$missing $name.$ext"; done
  done
  if [ -z "$missing" ]; then ok; else bad "$label: not in $dir:$missing"; fi
}
# report LABEL FILE: FILE is an HTML report
report() {
  if grep -qi '<html' "$2" 2>/dev/null; then ok; else bad "$1: no HTML report at $2"; fi
}

# 1. another log root: plots/run3/
before=$(sums)
(cd "$clone" && ./plot.sh "$tmp/run3") >"$tmp/1.out" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok; else bad "./plot.sh ROOT: exit $rc: $(tail -3 "$tmp/1.out")"; fi
drawn "./plot.sh ROOT" "$clone/plots/run3/fig12" fig12_kernel fig12_e2e
drawn "./plot.sh ROOT" "$clone/plots/run3/fig13" fig13
drawn "./plot.sh ROOT" "$clone/plots/run3/fig14" fig14
report "./plot.sh ROOT" "$clone/plots/run3/report.html"
if grep -q "drawing into $clone/plots/run3/" "$tmp/1.out"; then ok; else bad "./plot.sh ROOT does not say where it draws"; fi
unchanged "./plot.sh ROOT" "$before"

# 2. a figure's plot.sh of another log folder: plots/FlashTensor-AE/fig12/
before=$(sums)
(cd "$clone/fig12" && ./plot.sh "$tmp/FlashTensor-AE/fig12/backup_logs") >"$tmp/2.out" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok; else bad "fig12/plot.sh LOGDIR: exit $rc: $(tail -3 "$tmp/2.out")"; fi
drawn "fig12/plot.sh LOGDIR" "$clone/plots/FlashTensor-AE/fig12" fig12_kernel fig12_e2e
report "fig12/plot.sh LOGDIR" "$clone/plots/FlashTensor-AE/fig12/report.html"
unchanged "fig12/plot.sh LOGDIR" "$before"

# 3. --out DIR: DIR alone
before=$(sums)
plots_before=$(listing "$clone/plots")
(cd "$clone" && ./plot.sh "$tmp/run3" --out "$tmp/out") >"$tmp/3.out" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok; else bad "./plot.sh ROOT --out DIR: exit $rc: $(tail -3 "$tmp/3.out")"; fi
drawn "./plot.sh ROOT --out DIR" "$tmp/out/fig12" fig12_kernel fig12_e2e
report "./plot.sh ROOT --out DIR" "$tmp/out/report.html"
unchanged "./plot.sh ROOT --out DIR" "$before"
if [ "$(listing "$clone/plots")" = "$plots_before" ]; then ok; else bad "./plot.sh ROOT --out DIR wrote in plots/"; fi

# 4. no ROOT, from another folder: the repository's backup_logs into the committed place
mkdir -p "$tmp/elsewhere"
(cd "$tmp/elsewhere" && "$clone/plot.sh") >"$tmp/4.out" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok; else bad "./plot.sh: exit $rc: $(tail -3 "$tmp/4.out")"; fi
for fig in fig12 fig13 fig14; do
  if grep -qE "^repro-plot: [1-9][0-9]* logs read from $clone/backup_logs/$fig " "$tmp/4.out"; then
    ok
  else
    bad "./plot.sh from another folder did not read $clone/backup_logs/$fig"
  fi
done
if grep -q 'every cell is NS' "$tmp/4.out"; then bad "./plot.sh from another folder: a log folder is missing"; else ok; fi
drawn "./plot.sh" "$clone/fig12/figures" fig12_kernel fig12_e2e
drawn "./plot.sh" "$clone/fig14/figures" fig14
report "./plot.sh" "$clone/build-plot/report.html"
if [ "$(listing "$clone/plots")" = "$plots_before" ]; then ok; else bad "./plot.sh wrote in plots/"; fi
if [ -z "$(find "$tmp/elsewhere" -mindepth 1)" ]; then ok; else bad "./plot.sh wrote in the folder it ran from"; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
