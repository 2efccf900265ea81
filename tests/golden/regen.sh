#!/usr/bin/env bash
# Golden outputs of the runner and the plotter for every experiment of this tree (README.md).
#   tests/golden/regen.sh REPRO_RUN REPRO_PLOT WORK            rewrite the stored files
#   tests/golden/regen.sh REPRO_RUN REPRO_PLOT WORK --check    compare with them (the ctest)
# Both modes generate everything under WORK/out (WORK is emptied first), normalised:
#   dry-run/NAME/CLUSTER/CASES/   `repro-run run --dry-run` of NAME's experiment.yaml with
#                                 clusters/CLUSTER.yaml, CASES default (no --cases) and each
#                                 other named case list (`--cases CASES`): the printed cells
#                                 (cells.txt), the runner's messages (stderr.txt), the run's
#                                 manifest and every array script (jobs/)
#   plot/backup_logs/NAME/        `repro-plot draw` of NAME's backup_logs (draw/: the printed
#                                 tables in draw.txt, every .dat and .gp, and the .svg files),
#                                 `table` as csv and json, `compare` of the logs with themselves
#   plot/fixtures/NAME/           the same for the plotter's test fixtures (no .svg)
#   plot/merge/                   `merge` of the tilebench table with the seed's JSON fixture
# A command's text file holds its stdout, then "--- stderr" and its stderr, then "--- exit N".
# Normalised, because they vary by machine and run: the repro-run binary (@RUNNER@), WORK's
# output folders (@OUT@), WORK (@WORK@), this tree's root (@ROOT@) and the run folder's UTC
# time (dry-run-@TIME@) and the run's random marker in job names (@MARKER@). Nothing else.
# The .svg files depend on gnuplot's version: they are compared only when `gnuplot --version`
# prints what svg-gnuplot.txt holds (else the check says so and skips them), and written only
# when gnuplot is installed. --check prints `diff -r` of what differs and exits 1.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
root=$(cd "$here/../.." && pwd -P)
runner=${1:?usage: regen.sh REPRO_RUN REPRO_PLOT WORK [--check]}
plotter=${2:?usage: regen.sh REPRO_RUN REPRO_PLOT WORK [--check]}
work=${3:?usage: regen.sh REPRO_RUN REPRO_PLOT WORK [--check]}
mode=${4:-}
case $mode in --check | "") ;; *) echo "regen.sh: unknown option $mode" >&2; exit 2 ;; esac
runner=$(cd "$(dirname "$runner")" && pwd -P)/$(basename "$runner")
plotter=$(cd "$(dirname "$plotter")" && pwd -P)/$(basename "$plotter")
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd -P)
out=$work/out scratch=$work/repo
mkdir -p "$out"

# The experiments: NAME and the folder of its experiment.yaml, relative to the root.
experiments=(fig12:fig12 fig13:fig13 fig14:fig14)
for y in "$root"/studies/*/experiment.yaml; do
  d=${y%/experiment.yaml}
  experiments+=("$(basename "$d"):studies/$(basename "$d")")
done

# sed's replacement text for a literal path (the characters sed treats specially escaped).
lit() { printf '%s' "$1" | sed -e 's/[][\/.^$*|&]/\\&/g'; }
# Writes file $1 normalised to $2 (the longest paths first: the outputs lie under WORK, the
# binaries and WORK may lie under the root).
normalise() {
  sed -e "s|$(lit "$runner")|@RUNNER@|g" -e "s|$(lit "$out")|@OUT@|g" -e "s|$(lit "$work")|@WORK@|g" \
      -e "s|$(lit "$root")|@ROOT@|g" -e 's/dry-run-[0-9]\{8\}T[0-9]\{6\}Z/dry-run-@TIME@/g' \
      -e 's/\(dry-run-@TIME@\)-[0-9a-f]\{8\}-/\1-@MARKER@-/g' -e 's/ marker=[0-9a-f]\{32\}/ marker=@MARKER@/g' "$1" >"$2"
}
# Runs a command, its stdout, stderr and exit status normalised into one text file $1.
capture() {
  local file=$1 rc
  shift
  "$@" >"$file.stdout" 2>"$file.stderr"
  rc=$?
  {
    cat "$file.stdout"
    echo "--- stderr"
    cat "$file.stderr"
    echo "--- exit $rc"
  } >"$file.raw"
  normalise "$file.raw" "$file"
  rm -f "$file.stdout" "$file.stderr" "$file.raw"
}

# The case lists an experiment file names (the keys under each `cases:`) besides default, which
# a run without --cases takes.
case_lists() {
  awk '/^[[:space:]]*cases:[[:space:]]*(#.*)?$/ { match($0, /^[[:space:]]*/); ind = RLENGTH; on = 1; next }
         on { match($0, /^[[:space:]]*/)
              if ($0 ~ /^[[:space:]]*(#.*)?$/) next
              if (RLENGTH <= ind) { on = 0; next }
              if ($0 ~ /^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*:[[:space:]]*(#.*)?$/) { sub(/^[[:space:]]*/, ""); sub(/:.*/, ""); print } }' "$1" |
    awk '$0 != "default" && !seen[$0]++'
}

# 1. Dry runs, in a scratch repository (WORK/repo marked with .repro-root) so that {root} is
#    the same placeholder whatever the checkout; fixed --bin and --python, no REPRO_* defaults.
mkdir -p "$scratch"
touch "$scratch/.repro-root"
for e in "${experiments[@]}"; do
  name=${e%%:*} dir=${e#*:}
  mkdir -p "$scratch/$dir"
  cp "$root/$dir/experiment.yaml" "$scratch/$dir/"
  for cl in "$root"/clusters/*.yaml; do
    c=$(basename "$cl" .yaml)
    while read -r cases; do
      d=$out/dry-run/$name/$c/$cases sel=()
      if [ "$cases" != default ]; then sel=(--cases "$cases"); fi
      mkdir -p "$d/jobs"
      rm -rf "$scratch/$dir/runs"
      (cd "$scratch/$dir" && capture "$d/cells.txt" env -u REPRO_PYTHON -u REPRO_CLUSTER \
          "$runner" run experiment.yaml --dry-run -c "$cl" "${sel[@]}" --bin /opt/kit/bin \
          --python /usr/bin/python3)
      for s in "$scratch/$dir"/runs/dry-run-*/jobs/*.sbatch; do
        [ -e "$s" ] && normalise "$s" "$d/jobs/$(basename "$s")"
      done
      for m in "$scratch/$dir"/runs/dry-run-*/manifest; do
        [ -e "$m" ] && normalise "$m" "$d/manifest"
      done
      rmdir "$d/jobs" 2>/dev/null
    done < <(echo default; case_lists "$root/$dir/experiment.yaml")
  done
done
rm -rf "$scratch"

# 2. The plotter. SVGs when gnuplot is installed; compared when its version is the stored one.
svg=0
if command -v gnuplot >/dev/null; then svg=1; fi
svg_note=
if [ "$mode" = --check ]; then
  want=$(cat "$here/svg-gnuplot.txt" 2>/dev/null)
  have=$(gnuplot --version 2>/dev/null)
  if [ "$svg" = 0 ] || [ "$have" != "$want" ]; then
    svg=0 svg_note="the .svg files are not compared: they were drawn by '$want', this machine has '${have:-no gnuplot}'"
  fi
fi
# Draws, tables and compares one experiment's logs into $1 (with_svg: 1 draws the .svg).
plot_set() {
  local d=$1 cfg=$2 logs=$3 with_svg=$4 f
  mkdir -p "$d/draw"
  capture "$d/draw.txt" "$plotter" draw --config "$cfg" --logs "$logs" --out "$d/draw" --no-render
  if [ "$with_svg" = 1 ]; then
    "$plotter" draw --config "$cfg" --logs "$logs" --out "$d/render" >/dev/null 2>&1
    for f in "$d"/render/*.svg; do [ -e "$f" ] && cp "$f" "$d/draw/"; done
    rm -rf "$d/render"
  fi
  for f in "$d"/draw/*.gp; do
    [ -e "$f" ] && normalise "$f" "$f.norm" && mv "$f.norm" "$f"
  done
  capture "$d/table.csv" "$plotter" table --config "$cfg" --logs "$logs" --format csv
  capture "$d/table.json" "$plotter" table --config "$cfg" --logs "$logs" --format json
  capture "$d/compare.txt" "$plotter" compare --config "$cfg" "$logs" "$logs"
}
for e in "${experiments[@]}"; do
  name=${e%%:*} dir=${e#*:}
  plot_set "$out/plot/backup_logs/$name" "$root/$dir/experiment.yaml" "$root/$dir/backup_logs" "$svg"
done
fx=$root/tests/plot/fixtures
for s in ae/fig12:fig12 ae/fig13:fig13 ae/fig14:fig14 ours/fig12:fig12 \
  ours/tilebench:studies/tilebench broken/fig12:fig12; do
  plot_set "$out/plot/fixtures/${s%%:*}" "$root/${s#*:}/experiment.yaml" "$fx/${s%%:*}" 0
done
m=$out/plot/merge
mkdir -p "$m"
"$plotter" table --config "$root/studies/tilebench/experiment.yaml" \
  --logs "$root/studies/tilebench/backup_logs" --format csv -o "$work/tilebench.csv" 2>/dev/null
capture "$m/merge.csv" "$plotter" merge --format csv "$work/tilebench.csv" "$fx/seed/seed_fixture.json"
capture "$m/merge.json" "$plotter" merge --format json "$work/tilebench.csv" "$fx/seed/seed_fixture.json"
rm -f "$work/tilebench.csv"

# 3. Store, or compare.
if [ "$mode" != --check ]; then
  rm -rf "$here/dry-run" "$here/plot"
  cp -r "$out/dry-run" "$out/plot" "$here/"
  if [ "$svg" = 1 ]; then gnuplot --version >"$here/svg-gnuplot.txt"; fi
  echo "regen.sh: golden outputs written to $here ($(find "$out" -type f | wc -l) files)"
  exit 0
fi
x=() notsvg=()
if [ "$svg" = 0 ]; then
  x=(-x '*.svg') notsvg=(! -name '*.svg')
  echo "regen.sh: $svg_note"
fi
diff -r -u "${x[@]}" "$here/dry-run" "$out/dry-run" >"$work/diff.txt"
r1=$?
diff -r -u "${x[@]}" "$here/plot" "$out/plot" >>"$work/diff.txt"
r2=$?
if [ "$r1" = 0 ] && [ "$r2" = 0 ]; then
  echo "regen.sh: $(find "$out" -type f "${notsvg[@]}" | wc -l) outputs byte-identical to tests/golden"
  exit 0
fi
head -c 200000 "$work/diff.txt"
echo
echo "regen.sh: outputs differ from tests/golden (diff above, full diff in $work/diff.txt);"
echo "  when the change is intended: tests/golden/regen.sh REPRO_RUN REPRO_PLOT WORK (README.md)"
exit 1
