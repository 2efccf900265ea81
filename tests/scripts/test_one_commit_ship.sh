#!/usr/bin/env bash
# results/h200-one-commit/ship.sh on runs of stand-in cells (tests/runner/standin.sh: fixture
# logs that say they measure nothing) which repro-run makes in a scratch tree, packed as the
# device step packs them:
#   - a run whose only failed cell is listed in known-failures.txt and holds its program's own
#     error ships whole, that error log included, byte for byte;
#   - a run with a failed cell the file does not list is refused, and so is a listed cell that
#     the runner killed (a timeout says nothing about the system);
#   - without --partial nothing ships while a target is missing or refused.
#   test_one_commit_ship.sh SOURCE_DIR REPRO_RUN WORK_DIR
source "$1/tests/runner/lib.sh"
src=$(cd "$1" && pwd) runner=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
build=$(cd "$(dirname "$runner")/.." && pwd)
[ -x "$build/bin/repro-plot" ] || skip "repro-plot is not built beside $runner"
scratch_repo "$3" results "$build"
here=$repo/results/h200-one-commit
mkdir -p "$here/packs"
ln -s "$src/results/h200-one-commit/ship.sh" "$here/ship.sh"
standin=$src/tests/runner/standin.sh
commit=$(sed -n 's/^commit=//p' "$src/results/h200-one-commit/ship.sh")
unset REPRO_CLUSTER REPRO_RUN_TEST_KILL

# pack TARGET FOLDER SYSTEM...: a local run of cell w of each system into FOLDER, packed as
# packs/TARGET.tgz (the run folder and ae_logs, as scripts/gpu-run.sh packs them)
pack() {
  local target=$1 folder=$repo/$2; shift 2
  mkdir -p "$folder"
  cat >"$folder/experiment.yaml" <<EOF2
figure: $(basename "$folder")
defaults: {standin: "$standin"}
systems:
  good: {command: "{standin} --workload {workload} --system {system} --commit $commit --gpu H200"}
  bad: {command: "{standin} --workload {workload} --system {system} --commit $commit --gpu H200 --mode fail"}
  slow: {command: "{standin} --workload {workload} --system {system} --commit $commit --gpu H200 --mode hang --sleep 30"}
experiments:
  main:
    log: "{device}.{workload}.{system}.log"
    time_limit: 2
    axes: {device: [h200], workload: [w], system: [$(IFS=,; echo "$*")]}
EOF2
  (cd "$folder" && "$runner" run experiment.yaml --local -q >run.out 2>&1)
  tar czf "$here/packs/$target.tgz" -C "$folder" runs ae_logs
}
pack fig13 fig13 good bad       # its failure listed: ships
pack fig14 fig14 good bad       # its failure not listed: refused
pack h2o-diag studies/h2o-diag good slow # listed, but the runner's kill: refused
cat >"$here/known-failures.txt" <<'EOF2'
# fixture of the shipping test
fig13 h200.w.bad.log the stand-in asked to fail
h2o-diag h200.w.slow.log listed, but a runner's timeout never ships
EOF2
check "the stand-in's failed cell says error" grep -q "status=error" "$repo"/fig13/runs/*/logs/h200.w.bad.log
check "the stand-in's slow cell timed out" grep -q "status=timeout" "$repo"/studies/h2o-diag/runs/*/logs/h200.w.slow.log

# without --partial: the other targets' packs are missing, nothing ships
"$here/ship.sh" --dest "$work/dest1" >"$work/out1" 2>&1
check_eq "a set not whole: exit 1" "$?" 1
check "a set not whole says so" grep -q "the set is not whole; nothing shipped" "$work/out1"
check "nothing shipped" test ! -e "$work/dest1"

"$here/ship.sh" --dest "$work/dest2" --partial >"$work/out2" 2>&1
check "fig13's ok log ships" cmp -s "$repo"/fig13/runs/*/logs/h200.w.good.log "$work/dest2/fig13/h200.w.good.log"
check "fig13's listed own error ships byte for byte" cmp -s "$repo"/fig13/runs/*/logs/h200.w.bad.log "$work/dest2/fig13/h200.w.bad.log"
check "both of fig13's logs ship" grep -q "dest2/fig13: 2 shipped, 0 replaced, 0 the same, 0 left out" "$work/out2"
check "fig14's unlisted failure is named" grep -q "fig14: not a known failure: error - h200.w.bad.log" "$work/out2"
check "fig14 is refused" grep -q "fig14: its run is not whole" "$work/out2"
check "nothing of fig14 ships" test ! -e "$work/dest2/fig14"
check "the listed timeout is named" grep -q "h2o-diag: not a known failure: timeout" "$work/out2"
check "nothing of h2o-diag ships" test ! -e "$work/dest2/h2o-diag"
check "the provenance names one commit and the error" grep -qE "dest2/fig13[[:space:]]+h200[[:space:]]+${commit}[[:space:]]+2[[:space:]].*error=1 ok=1" "$work/out2"
finish
