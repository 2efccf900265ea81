#!/usr/bin/env bash
# Writers that share an output: several `repro-plot report -o same.html` at once, several
# `repro-plot draw` into one --out, and `table -o same.csv`, each writer reading another log
# folder so that each one's output differs. Every file repro-plot writes goes through a
# temporary of its own beside it and one rename (common/fileio.c; gnuplot draws in a private
# folder, plot/render.c), so the contract is: every writer exits 0 and reports its own output
# (the byte count of its report), each exit 0 means its whole output was renamed into place;
# the file left is exactly one writer's whole output (the last rename wins; for a draw, each
# figure file is one draw's whole file); no temporary or private folder is left behind.
# Then a write that fails (the file-size limit, as a full disk would) names the file, exits 1,
# and leaves the previous output as it was.
#   test_concurrent_writes.sh REPRO_PLOT SOURCE_DIR [ROUNDS]
# check() evals its first argument: the single quotes keep its expansions for eval (and the
# variables it reads are set before it: SC2034).
# shellcheck disable=SC2016,SC2034
# shellcheck source=tests/plot/lib.sh
source "$(dirname "$0")/lib.sh"
bin=$1; src=$2; rounds=${3:-8}
cfg=$src/fig12/experiment.yaml
mkdir "$tmp/empty"
logs=("$src/fig12/backup_logs" "$src/tests/plot/fixtures/ours/fig12" "$src/tests/plot/fixtures/ae/fig12" "$tmp/empty")
n=${#logs[@]}

# which reference file (ref_dir/NAME for each ref_dir given) equals file; prints its index
which_ref() {  # which_ref FILE NAME REF...
  local file=$1 name=$2 i=0 ref
  shift 2
  for ref in "$@"; do
    if cmp -s "$file" "$ref/$name"; then echo "$i"; return 0; fi
    i=$((i + 1))
  done
  return 1
}

# ---- reports: references one writer at a time, then all writers at once, several rounds
for i in $(seq 0 $((n - 1))); do
  mkdir -p "$tmp/ref$i"
  "$bin" report -o "$tmp/ref$i/same.html" --config "$cfg" --logs "${logs[$i]}" \
    --figures "$src/fig12/figures" > /dev/null 2>&1
done
distinct=1
for i in $(seq 1 $((n - 1))); do cmp -s "$tmp/ref0/same.html" "$tmp/ref$i/same.html" && distinct=0; done
check '[ $distinct = 1 ]' "the writers' reports differ from each other (the test can tell them apart)"
mkdir "$tmp/rep"
bad_exit=0 bad_said=0 bad_final=0 leftovers=0
for _ in $(seq 1 "$rounds"); do
  pids=()
  for i in $(seq 0 $((n - 1))); do
    "$bin" report -o "$tmp/rep/same.html" --config "$cfg" --logs "${logs[$i]}" \
      --figures "$src/fig12/figures" > "$tmp/rep.$i.out" 2>&1 &
    pids+=($!)
  done
  for i in $(seq 0 $((n - 1))); do
    wait "${pids[$i]}" || { bad_exit=$((bad_exit + 1)); cat "$tmp/rep.$i.out" >&2; }
    want="report written to $tmp/rep/same.html ($(stat -c %s "$tmp/ref$i/same.html") bytes)"
    grep -qxF "$want" "$tmp/rep.$i.out" || bad_said=$((bad_said + 1))
  done
  refs=()
  for i in $(seq 0 $((n - 1))); do refs+=("$tmp/ref$i"); done
  which_ref "$tmp/rep/same.html" same.html "${refs[@]}" > /dev/null || bad_final=$((bad_final + 1))
  [ "$(ls -A "$tmp/rep")" = same.html ] || { leftovers=$((leftovers + 1)); ls -A "$tmp/rep" >&2; }
done
check '[ $bad_exit = 0 ]' "concurrent reports: every writer exits 0 ($bad_exit of $((rounds * n)) did not)"
check '[ $bad_said = 0 ]' "concurrent reports: each writer reports its own report's size ($bad_said did not)"
check '[ $bad_final = 0 ]' "concurrent reports: same.html is one writer's whole report ($bad_final of $rounds rounds left a mix)"
check '[ $leftovers = 0 ]' "concurrent reports: no temporary left beside same.html ($leftovers of $rounds rounds)"

# ---- csv tables: the same contract through table -o
for i in $(seq 0 $((n - 1))); do
  "$bin" table --config "$cfg" --logs "${logs[$i]}" -o "$tmp/ref$i/same.csv" > /dev/null 2>&1
done
mkdir "$tmp/csv"
bad_exit=0 bad_final=0 leftovers=0
for _ in $(seq 1 "$rounds"); do
  pids=()
  for i in $(seq 0 $((n - 1))); do
    "$bin" table --config "$cfg" --logs "${logs[$i]}" -o "$tmp/csv/same.csv" > /dev/null 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || bad_exit=$((bad_exit + 1)); done
  which_ref "$tmp/csv/same.csv" same.csv "${refs[@]}" > /dev/null || bad_final=$((bad_final + 1))
  [ "$(ls -A "$tmp/csv")" = same.csv ] || leftovers=$((leftovers + 1))
done
check '[ $bad_exit = 0 ] && [ $bad_final = 0 ] && [ $leftovers = 0 ]' \
  "concurrent table -o: all exit 0 ($bad_exit did not), one writer's whole csv ($bad_final mixed), no temporary ($leftovers)"

# ---- draws into one --out: every figure file is one draw's whole file
render=()
command -v gnuplot > /dev/null || { render=(--no-render); echo "note: no gnuplot: draws with --no-render (.dat and .gp only)"; }
for i in $(seq 0 $((n - 1))); do
  "$bin" draw --config "$cfg" --logs "${logs[$i]}" --out "$tmp/dref$i" "${render[@]}" > /dev/null 2>&1
done
drefs=()
for i in $(seq 0 $((n - 1))); do drefs+=("$tmp/dref$i"); done
files=$(ls -A "$tmp/dref0")
check '[ -n "$files" ] && ! cmp -s "$tmp/dref0/fig12_kernel.dat" "$tmp/dref3/fig12_kernel.dat"' \
  "the draws' figures differ from each other (the test can tell them apart)"
mkdir "$tmp/dout"
bad_exit=0 bad_file=0 leftovers=0
for _ in $(seq 1 "$rounds"); do
  pids=()
  for i in $(seq 0 $((n - 1))); do
    "$bin" draw --config "$cfg" --logs "${logs[$i]}" --out "$tmp/dout" "${render[@]}" -j 2 \
      > "$tmp/draw.$i.out" 2>&1 &
    pids+=($!)
  done
  for i in $(seq 0 $((n - 1))); do
    wait "${pids[$i]}" || { bad_exit=$((bad_exit + 1)); tail -5 "$tmp/draw.$i.out" >&2; }
  done
  for f in $files; do
    which_ref "$tmp/dout/$f" "$f" "${drefs[@]}" > /dev/null || { bad_file=$((bad_file + 1)); echo "mixed: $f" >&2; }
  done
  [ "$(ls -A "$tmp/dout")" = "$files" ] || { leftovers=$((leftovers + 1)); ls -A "$tmp/dout" >&2; }
done
check '[ $bad_exit = 0 ]' "concurrent draws: every draw exits 0 ($bad_exit of $((rounds * n)) did not)"
check '[ $bad_file = 0 ]' "concurrent draws: each figure file is one draw's whole file ($bad_file were not)"
check '[ $leftovers = 0 ]' "concurrent draws: no temporary or private folder left in --out ($leftovers of $rounds rounds)"

# ---- repro-plot render (a study's own scripts) of one folder, several at once
if command -v gnuplot > /dev/null; then
  mkdir "$tmp/rend"
  cp "$tmp/dref0/fig12_kernel.gp" "$tmp/dref0/fig12_kernel.dat" "$tmp/rend/"
  bad_exit=0 bad_file=0
  for _ in $(seq 1 "$rounds"); do
    pids=()
    for i in $(seq 0 $((n - 1))); do "$bin" render "$tmp/rend" fig12_kernel > /dev/null 2>&1 & pids+=($!); done
    for p in "${pids[@]}"; do wait "$p" || bad_exit=$((bad_exit + 1)); done
    for e in pdf png svg; do cmp -s "$tmp/rend/fig12_kernel.$e" "$tmp/dref0/fig12_kernel.$e" || bad_file=$((bad_file + 1)); done
  done
  check '[ $bad_exit = 0 ] && [ $bad_file = 0 ]' \
    "concurrent render of one folder: all exit 0 ($bad_exit did not), whole figures ($bad_file were not)"
  check '[ "$(ls -A "$tmp/rend" | tr "\n" " ")" = "fig12_kernel.dat fig12_kernel.gnuplot.log fig12_kernel.gp fig12_kernel.pdf fig12_kernel.png fig12_kernel.svg " ]' \
    "concurrent render: no temporary or private folder left"
fi

# ---- a write that fails keeps the previous output (the file-size limit stands in for a full
# disk: write(2) fails with EFBIG once SIGXFSZ is ignored)
mkdir "$tmp/full"
printf 'previous report\n' > "$tmp/full/r.html"
printf 'previous table\n' > "$tmp/full/t.csv"
(ulimit -f 8; trap '' XFSZ; exec "$bin" report -o "$tmp/full/r.html" --config "$cfg" \
  --logs "${logs[0]}" --figures "$src/fig12/figures") > "$tmp/full.out" 2> "$tmp/full.err"
check '[ $? -eq 1 ] && grep -qF "$tmp/full/r.html: report not written: writing failed: File too large (the file is as it was)" "$tmp/full.err"' \
  "report: a failed write exits 1 naming the file and why"
check '[ "$(cat "$tmp/full/r.html")" = "previous report" ] && ! grep -q "report written" "$tmp/full.out"' \
  "report: a failed write leaves the previous report and says nothing was written"
(ulimit -f 8; trap '' XFSZ; exec "$bin" table --config "$cfg" --logs "${logs[0]}" -o "$tmp/full/t.csv") \
  > /dev/null 2> "$tmp/full.err"
check '[ $? -eq 1 ] && grep -qF "$tmp/full/t.csv: writing failed: File too large (the file is as it was)" "$tmp/full.err"' \
  "table -o: a failed write exits 1 naming the file and why"
check '[ "$(cat "$tmp/full/t.csv")" = "previous table" ]' "table -o: a failed write leaves the previous table"
check '[ "$(ls -A "$tmp/full" | tr "\n" " ")" = "r.html t.csv " ]' "a failed write leaves no temporary"

finish
