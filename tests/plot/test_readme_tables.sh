#!/usr/bin/env bash
# README.md's results tables are what the shipped logs give (scripts/readme-tables.sh --check,
# through repro-plot's tidy table), and the check fails when they are not: a copy of README.md
# with one number changed, a row dropped, or a marker without its pair is refused; rewriting
# the copy gives README.md back byte for byte.
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

# 1. the README as committed
"${script[@]}" --check > "$work/check.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || cat "$work/check.out" >&2
check '[ $rc -eq 0 ]' "README.md's tables are what the shipped logs give (diff above; scripts/readme-tables.sh rewrites them)"
check '[ "$(grep -c "^<!-- tables .* begin -->$" "$src/README.md")" -ge 1 ] && grep -q "^| workload | .* | paper | paper / ours |$" "$src/README.md"' "README.md has generated tables, the paper column among them"

# 2. one number changed in a copy (the first number of the first H2O row): refused, with a diff
cp "$src/README.md" "$work/edited.md"
sed -i '0,/^| H2O | [0-9.]* |/s/^\(| H2O | [0-9]*\)\.\([0-9]\)/\1.9\2/' "$work/edited.md"
check '! cmp -s "$src/README.md" "$work/edited.md"' "the edit changed a number"
"${script[@]}" --check "$work/edited.md" > "$work/edited.out" 2>&1
check '[ $? -eq 1 ] && grep -q "^-| H2O |" "$work/edited.out" && grep -q "differ from what the shipped logs give" "$work/edited.out"' "a changed number fails the check, with a diff"

# 3. rewriting the copy in place gives README.md back
"${script[@]}" "$work/edited.md" > /dev/null 2>&1
check '[ $? -eq 0 ] && cmp -s "$src/README.md" "$work/edited.md"' "rewriting the edited copy restores README.md byte for byte"

# 4. a row dropped, and the paper's column left out: refused
grep -v "^| RoCo |" "$src/README.md" > "$work/dropped.md"
"${script[@]}" --check "$work/dropped.md" > /dev/null 2>&1
check '[ $? -eq 1 ]' "a dropped row fails the check"
sed 's/ | paper | paper \/ ours |$/ |/' "$src/README.md" > "$work/nopaper.md"
"${script[@]}" --check "$work/nopaper.md" > /dev/null 2>&1
check '[ $? -eq 1 ] && ! cmp -s "$src/README.md" "$work/nopaper.md"' "a table without the paper column fails the check"

# 5. markers: a begin without its end, an end alone, none at all
grep -v "^<!-- tables fig12 h100 end -->$" "$src/README.md" > "$work/noend.md"
"${script[@]}" --check "$work/noend.md" > /dev/null 2> "$work/noend.err"
check '[ $? -eq 1 ] && grep -q "has no end marker\|a block begins inside" "$work/noend.err"' "a block without its end marker is refused"
grep -v "^<!-- tables fig14 h100 begin -->$" "$src/README.md" > "$work/nobegin.md"
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
