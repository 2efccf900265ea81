#!/usr/bin/env bash
# Ad-hoc values of a ranged axis (`k: {values: [1, 2, 4], range: [1, 31]}`) end to end through
# the local executor: a dry run of --only k=3 prints exactly the k = 3 cells with the matrix's
# log names; values outside the range, not integers or not written plainly are refused naming
# the value and the range (exit 2); a listed k selects what it did; an axis without a range
# takes none. A real run: --rerun --only ...,k=3 adds the cell to the run (its select record),
# a second rerun keeps the first log in attempts/, --resume reruns the ad-hoc cell's missing
# log and nothing the run never held; ad-hoc cells beside matrix cells outside a narrowed run
# are refused with the --widen hint, which adds them.
#   adhoc.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$1 work=$2
logs() { (cd "$1" && printf '%s ' *); }
cells() { cut -f1 "$1" | tr '\n' ' '; }
rm -rf "$work"; mkdir -p "$work/fig"
cd "$work/fig" || exit 1
cat >experiment.yaml <<YAML
defaults: {count: "$work/fig/count"}
experiments:
  sweep:
    log: "{experiment}.{device}.{system}.k{k}.{dtype}.log"
    time_limit: 30
    axes: {device: [h100], system: [a], k: {values: [1, 2, 4], range: [1, 31]}, dtype: [x, y]}
    systems:
      a: {command: "echo {system}.{k}.{dtype} >>{count}; echo note {system} k={k} {dtype}; echo result status=ok avg_ms=1 median_ms=1 min_ms=1 max_ms=1"}
  fixed:
    log: "{experiment}.{device}.{system}.k{k}.log"
    time_limit: 30
    axes: {device: [h100], system: [b], k: [1, 2]}
    systems:
      b: {command: "echo {system}.{k} >>{count}; echo note {system} k={k}; echo result status=ok avg_ms=1 median_ms=1 min_ms=1 max_ms=1"}
YAML
started() { local n; n=$(grep -c "^$1\$" count 2>/dev/null); echo "${n:-0}"; }

# 1. dry runs: the matrix as it is, k = 3 alone, the refusals
"$runner" run experiment.yaml --local --dry-run >dry0 2>/dev/null
check_eq "the matrix without ad-hoc values" "$(cells dry0)" \
  "sweep.h100.a.k1.x.log sweep.h100.a.k1.y.log sweep.h100.a.k2.x.log sweep.h100.a.k2.y.log sweep.h100.a.k4.x.log sweep.h100.a.k4.y.log fixed.h100.b.k1.log fixed.h100.b.k2.log "
"$runner" run experiment.yaml --local --dry-run --only experiment=sweep,k=3,dtype=x >dry1 2>dry1.err
check_eq "--only k=3: exit 0" "$?" 0
check_eq "--only k=3: one cell, the matrix's log name" "$(cells dry1)" "sweep.h100.a.k3.x.log "
check "--only k=3: k in the command" grep -q "	echo a.3.x >>.*; echo note a k=3 x; " dry1
check "--only k=3: one selected of the 8 and the 2 ad-hoc" grep -q "1 cells selected of 10" dry1.err
"$runner" run experiment.yaml --local --dry-run --only k=3 --only k=1 >dry2 2>/dev/null
check_eq "--only k=3 --only k=1: the listed cells first, then the ad-hoc ones" "$(cells dry2)" \
  "sweep.h100.a.k1.x.log sweep.h100.a.k1.y.log sweep.h100.a.k3.x.log sweep.h100.a.k3.y.log fixed.h100.b.k1.log "
"$runner" run experiment.yaml --local --dry-run --only k=2 >dry3 2>/dev/null
check_eq "a listed k: as before" "$(cells dry3)" "sweep.h100.a.k2.x.log sweep.h100.a.k2.y.log fixed.h100.b.k2.log "
for bad in 0 32 abc 03 -1 3.0; do
  "$runner" run experiment.yaml --local --dry-run --only "k=$bad" >/dev/null 2>err
  check_eq "--only k=$bad: exit 2" "$?" 2
  check "--only k=$bad: names the value and the range" \
    grep -qF -- "has k=$bad (axis k takes its listed values or, as an ad-hoc value, a plain integer (no + or leading 0) in [1, 31] in experiments sweep)" err
done
"$runner" run experiment.yaml --local --dry-run --only k=+3 >/dev/null 2>err
check "--only k=+3: refused, quoted" grep -qF "has k='+3' (axis k takes" err
"$runner" run experiment.yaml --local --dry-run --exclude k=3 >dry4 2>/dev/null
check_eq "--exclude of a value the range allows: nothing added, nothing left out" "$(cells dry4)" "$(cells dry0)"
"$runner" run experiment.yaml --local --dry-run --exclude k=40 >/dev/null 2>err
check_eq "--exclude of a value outside the range: exit 2" "$?" 2
"$runner" run experiment.yaml --local --dry-run --only experiment=sweep --only k=5,dtype=y >dry5 2>/dev/null
check "an --only that names no ad-hoc value selects no ad-hoc cell" test "$(grep -c 'k5\.x' dry5)" = 0
check "the one naming it does" grep -q "^sweep.h100.a.k5.y.log	" dry5
"$runner" check experiment.yaml --only k=7 >check.out 2>&1
check "check renders the ad-hoc cells" grep -q "ok: 2 experiments, 10 cells, 2 selected" check.out

# 2. a real run of the matrix, then k = 3 into it through --rerun
"$runner" run experiment.yaml --local -q >run.out 2>&1
check_eq "run exit" "$?" 0
run=$(current_run)
"$runner" run experiment.yaml --local -q --rerun --only experiment=sweep,k=3,dtype=x >rerun1.out 2>&1
check_eq "rerun --only k=3: exit 0" "$?" 0
check "the ad-hoc cell joins the run, said" grep -q "1 ad-hoc cells .* join run" rerun1.out
check_eq "its log beside the matrix's" "$(logs "$run/logs")" \
  "fixed.h100.b.k1.log fixed.h100.b.k2.log sweep.h100.a.k1.x.log sweep.h100.a.k1.y.log sweep.h100.a.k2.x.log sweep.h100.a.k2.y.log sweep.h100.a.k3.x.log sweep.h100.a.k4.x.log sweep.h100.a.k4.y.log "
check "the log is k = 3's" grep -q "^note a k=3 x" "$run/logs/sweep.h100.a.k3.x.log"
check "the select record keeps it" grep -q '^select only="experiment=sweep,k=3,dtype=x"$' "$run/manifest"
"$runner" run experiment.yaml --local -q --rerun --only experiment=sweep,k=3,dtype=x >rerun2.out 2>&1
check_eq "rerun again: exit 0" "$?" 0
check "rerun again: no second join" test "$(grep -c 'join run' rerun2.out)" = 0
check_eq "rerun again: one select record more in all" "$(grep -c '^select' "$run/manifest")" 2
check_eq "rerun again: the first log kept in attempts/" "$(count_paths "$run"/attempts/sweep.h100.a.k3.x.log.*)" 1
check_eq "k = 3 ran twice" "$(started a.3.x)" 2

# 3. --resume keeps the ad-hoc cell (and only the one the run holds)
rm "$run/logs/sweep.h100.a.k3.x.log"
"$runner" run experiment.yaml --local -q --resume >resume.out 2>&1
check_eq "resume exit" "$?" 0
check "resume: the ad-hoc cell's log again" test -s "$run/logs/sweep.h100.a.k3.x.log"
check_eq "resume: k = 3 ran a third time" "$(started a.3.x)" 3
check_eq "resume: no k = 3 cell the run never held" "$(started a.3.y)" 0
check_eq "resume: the matrix's cells kept" "$(started a.1.x)" 1

# 4. a narrowed run: ad-hoc cells beside matrix cells outside it need --widen
"$runner" run experiment.yaml --local -q --only experiment=fixed >run2.out 2>&1
check_eq "narrowed run exit" "$?" 0
run2=$(current_run)
"$runner" run experiment.yaml --local -q --rerun --only k=9 --only experiment=sweep,k=1 >rerun3.out 2>&1
check_eq "ad-hoc and matrix cells outside the run: exit 2" "$?" 2
check "says how to widen" grep -q -- "--widen" rerun3.out
check_eq "nothing ran" "$(started a.9.x)$(started a.1.x)" 01
"$runner" run experiment.yaml --local -q --rerun --widen --only k=9 --only experiment=sweep,k=1 >rerun4.out 2>&1
check_eq "--widen: exit 0" "$?" 0
check_eq "--widen: the cells ran" "$(started a.9.x)$(started a.9.y)$(started a.1.x)" 112
check "--widen: in the narrowed run" test -s "$run2/logs/sweep.h100.a.k9.y.log"
finish
