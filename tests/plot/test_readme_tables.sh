#!/usr/bin/env bash
# The results tables of README.md and of the studies' READMEs are what the shipped logs give
# (scripts/readme-tables.sh --check, through repro-plot's tidy table or a study's own
# `--markdown` program), and the check fails when they are not: a copy with one number
# changed, a row dropped, or a marker without its pair is refused; rewriting the copy gives the
# README back byte for byte.
#   test_readme_tables.sh REPRO_PLOT SOURCE_DIR WORK
# check() evals its first argument: the single quotes keep its expansions for eval.
# shellcheck disable=SC2016
set -u
bin=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work"
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
export REPRO_PLOT_BIN=$bin
script=(bash "$src/scripts/readme-tables.sh")

# 1. the READMEs as committed (no FILE: README.md and every study README with a marker)
"${script[@]}" --check > "$work/check.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || cat "$work/check.out" >&2
check '[ $rc -eq 0 ]' "the READMEs' tables are what the shipped logs give (diff above; scripts/readme-tables.sh rewrites them)"
check '[ "$(grep -c "^<!-- tables .* begin -->$" "$src/results/README.md")" -ge 1 ] && grep -q "^| workload | .* | paper | paper / ours |$" "$src/results/README.md"' "results/README.md has generated tables, the paper column among them"
# README.md's headlines: one line per figure and metric, each GPU's geometric mean
check 'grep -q "^- \*\*fig12_kernel (execution time)\*\*: H100 [0-9.]*x, H200 [0-9.]*x (speedup = " "$src/README.md" && [ "$(grep -c "^- \*\*fig1[234]" "$src/README.md")" = 5 ]' "README.md has the generated headline of each figure and metric"
[ "$(wc -l < "$src/README.md")" -le 150 ]; check '[ $? -eq 0 ]' "README.md is at most 150 lines ($(wc -l < "$src/README.md"))"
for study in h2o-diag sdpa-scale tilebench; do
  check 'grep -q "^<!-- tables studies/$study .* begin -->$" "$src/studies/$study/README.md" && grep -qF "studies/$study/README.md: the results tables are what the shipped logs give" "$work/check.out"' "studies/$study/README.md has generated tables, checked"
done

# 2. one number changed in a copy (the first number of the first H2O row): refused, with a diff
cp "$src/results/README.md" "$work/edited.md"
sed -i '0,/^| H2O | [0-9.]* |/s/^\(| H2O | [0-9]*\)\.\([0-9]\)/\1.9\2/' "$work/edited.md"
check '! cmp -s "$src/results/README.md" "$work/edited.md"' "the edit changed a number"
"${script[@]}" --check "$work/edited.md" > "$work/edited.out" 2>&1
check '[ $? -eq 1 ] && grep -q "^-| H2O |" "$work/edited.out" && grep -q "differ from what the shipped logs give" "$work/edited.out"' "a changed number fails the check, with a diff"

# 3. rewriting the copy in place gives results/README.md back
"${script[@]}" "$work/edited.md" > /dev/null 2>&1
check '[ $? -eq 0 ] && cmp -s "$src/results/README.md" "$work/edited.md"' "rewriting the edited copy restores results/README.md byte for byte"
# ... and a changed headline too
sed 's/^\(- \*\*fig14 (execution time)\*\*: H100 \)[0-9]/\19/' "$src/README.md" > "$work/head.md"
"${script[@]}" --check "$work/head.md" > "$work/head.out" 2>&1
check '[ $? -eq 1 ] && ! cmp -s "$src/README.md" "$work/head.md"' "a changed headline fails the check"

# 3b. the same in the studies' READMEs: a number of a repro-plot block (tilebench, h2o-diag's
# base comparison) and of a study's own program (h2o-diag's plot_diag.sh, sdpa-scale's
# report.sh) changed in a copy fails the check with a diff; rewriting the copy restores it
edit_study() { # STUDY SED-EXPRESSION EDITED-LINE-START
  local name=$1 want=$3 f=$src/studies/$1/README.md out=$work/$1.md
  cp "$f" "$out"
  sed -i "$2" "$out"
  check '! cmp -s "$f" "$out"' "$name: the edit changed a number ($want)"
  "${script[@]}" --check "$out" > "$work/$name.out" 2>&1
  check '[ $? -eq 1 ] && grep -qF -- "-$want" "$work/$name.out" && grep -q "differ from what the shipped logs give" "$work/$name.out"' "$name: a changed number fails the check, with a diff ($want)"
  "${script[@]}" "$out" > /dev/null 2>&1
  check '[ $? -eq 0 ] && cmp -s "$f" "$out"' "$name: rewriting the edited copy restores its README byte for byte"
}
edit_study h2o-diag 's/^| fp32 cache: total | 0\.712 |/| fp32 cache: total | 0.721 |/' "| fp32 cache: total | 0.721 |"
edit_study sdpa-scale 's/^| D128 causal fp16 | 12\.34 (535) |/| D128 causal fp16 | 12.43 (535) |/' "| D128 causal fp16 | 12.43 (535) |"
edit_study tilebench 's/^| B8 H32 S4096 D128 causal=1 | 63\.643 |/| B8 H32 S4096 D128 causal=1 | 63.634 |/' "| B8 H32 S4096 D128 causal=1 | 63.634 |"
cp "$src/studies/h2o-diag/README.md" "$work/base.md"
sed -i 's/^| H2O | 8\.457 |/| H2O | 8.475 |/' "$work/base.md"
"${script[@]}" --check "$work/base.md" > /dev/null 2>&1
check '[ $? -eq 1 ] && ! cmp -s "$src/studies/h2o-diag/README.md" "$work/base.md"' "h2o-diag: a changed number of its repro-plot block fails the check"
printf '<!-- tables studies/h2o-diag h100 nosuch.sh begin -->\n<!-- tables studies/h2o-diag h100 nosuch.sh end -->\n' > "$work/noprog.md"
"${script[@]}" --check "$work/noprog.md" > /dev/null 2> "$work/noprog.err"
check '[ $? -eq 1 ] && grep -q "no program studies/h2o-diag/nosuch.sh" "$work/noprog.err"' "a block naming a program its folder lacks is refused"

# 3c. README.md's table of the studies (a block `tables studies h200 summary`): one row per
# study, the GPU, the range of its speedup column and its logs' commit; a changed number fails
for study in h2o-diag kron-layer sdpa-scale tilebench; do
  check 'sed -n "/^<!-- tables studies h200 summary begin -->$/,/^<!-- tables studies h200 summary end -->$/p" "$src/README.md" | grep -q "^| \`studies/$study/\` | NVIDIA H200 | [0-9.x-]* | [0-9]* | \`[0-9a-f]\{7,\}\` ([0-9]*)"' "README.md's studies table has $study's H200 row, generated"
done
sed 's/^\(| `studies\/h2o-diag\/` | NVIDIA H200 | \)[0-9.]*x/\11.99x/' "$src/README.md" > "$work/studies.md"
check '! cmp -s "$src/README.md" "$work/studies.md"' "the edit changed the studies table"
"${script[@]}" --check "$work/studies.md" > "$work/studies.out" 2>&1
check '[ $? -eq 1 ] && grep -q "^-| \`studies/h2o-diag/\` | NVIDIA H200 | 1.99x" "$work/studies.out"' "a changed number of the studies table fails the check, with a diff"

# 4. a row dropped, and the paper's column left out: refused
grep -v "^| RoCo |" "$src/results/README.md" > "$work/dropped.md"
"${script[@]}" --check "$work/dropped.md" > /dev/null 2>&1
check '[ $? -eq 1 ]' "a dropped row fails the check"
sed 's/ | paper | paper \/ ours |$/ |/' "$src/results/README.md" > "$work/nopaper.md"
"${script[@]}" --check "$work/nopaper.md" > /dev/null 2>&1
check '[ $? -eq 1 ] && ! cmp -s "$src/results/README.md" "$work/nopaper.md"' "a table without the paper column fails the check"

# 5. markers: a begin without its end, an end alone, none at all
grep -v "^<!-- tables fig12 h100 end -->$" "$src/results/README.md" > "$work/noend.md"
"${script[@]}" --check "$work/noend.md" > /dev/null 2> "$work/noend.err"
check '[ $? -eq 1 ] && grep -q "has no end marker\|a block begins inside" "$work/noend.err"' "a block without its end marker is refused"
grep -v "^<!-- tables fig14 h100 begin -->$" "$src/results/README.md" > "$work/nobegin.md"
"${script[@]}" --check "$work/nobegin.md" > /dev/null 2> "$work/nobegin.err"
check '[ $? -eq 1 ] && grep -q "a marker without its pair" "$work/nobegin.err"' "an end marker alone is refused"
printf '# no tables\n' > "$work/none.md"
"${script[@]}" --check "$work/none.md" > /dev/null 2> "$work/none.err"
check '[ $? -eq 1 ] && grep -q "no <!-- tables FOLDER DEVICE begin --> markers" "$work/none.err"' "a file without markers is refused"
printf '<!-- tables fig99 h100 begin -->\n<!-- tables fig99 h100 end -->\n' > "$work/unknown.md"
"${script[@]}" --check "$work/unknown.md" > /dev/null 2> "$work/unknown.err"
check '[ $? -eq 1 ] && grep -q "no fig99/experiment.yaml" "$work/unknown.err"' "a block of an unknown folder is refused"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
