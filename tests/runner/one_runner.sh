#!/usr/bin/env bash
# One runner per figure folder, and a run keeps to its selection (issue 11):
#   local: a second runner of the same figure is refused naming the first one's pid and run,
#          --allow-concurrent lets it start its own run, the lock does not leak into cells;
#          --resume keeps to the run's --only/--device, --widen adds cells explicitly;
#   slurm: a runner that exited with its jobs still queued blocks a new run until they end,
#          and cells that end unsupported or oom leave their Slurm job COMPLETED.
#   one_runner.sh REPRO_RUN WORK_DIR local|slurm
source "$(dirname "$0")/lib.sh"
runner=$1 work=$2 mode=$3
standin=$(cd "$(dirname "$0")" && pwd)/standin.sh
rm -rf "$work"; mkdir -p "$work/fig"
cd "$work/fig" || exit 1
cat >experiment.yaml <<EOF2
figure: onefig
defaults: {count: "$work/fig/count", standin: "$standin"}
systems:
  good:  {command: "{standin} --workload {workload} --system {system} --count {count}"}
  bad:   {command: "{standin} --workload {workload} --system {system} --mode fail --count {count}"}
  slow:  {command: "{standin} --workload {workload} --system {system} --sleep 4 --count {count}"}
  unsup: {command: "{standin} --workload {workload} --system {system} --mode unsupported --count {count}"}
  oom:   {command: "{standin} --workload {workload} --system {system} --mode oom --count {count}"}
experiments:
  main:
    log: "{experiment}.{device}.{workload}.{system}.log"
    time_limit: 120
    axes: {device: [h100, a100], workload: [a, b], system: [good, bad]}
  long:
    log: "{experiment}.{device}.{system}.log"
    time_limit: 120
    axes: {device: [h100], workload: [w], system: [slow]}
  ends:
    log: "{experiment}.{device}.{system}.log"
    time_limit: 120
    axes: {device: [h100], workload: [e], system: [unsup, oom]}
EOF2
started() { local n; n=$(grep -c " $1\$" count 2>/dev/null); echo "${n:-0}"; }  # 0 without count

if [ "$mode" = local ]; then
  # 1. a second runner of the figure is refused while the first works
  "$runner" run experiment.yaml --local --device h100 --only experiment=long -q >out1 2>&1 &
  first=$!
  for _ in $(seq 100); do [ "$(started w.slow)" -ge 1 ] && break; sleep 0.1; done
  run1=$(current_run)
  "$runner" run experiment.yaml --local --device h100 --only experiment=main -q >out2 2>&1
  check_eq "second runner refused" "$?" 2
  check "refusal names the first runner's pid" grep -q "pid $first" out2
  check "refusal names the first runner's run" grep -qF "$(basename "$run1")" out2
  check "refusal names the way out" grep -q -- "--allow-concurrent" out2
  "$runner" run experiment.yaml --local --device h100 --resume -q >out3 2>&1
  check_eq "resume during the first runner refused" "$?" 2
  check_eq "no second run folder" "$(count_paths runs/*)" 1
  # a deliberate second run
  "$runner" run experiment.yaml --local --device h100 --only experiment=main,system=good --allow-concurrent -q >out4 2>&1
  check_eq "--allow-concurrent runs" "$?" 0
  check_eq "its own run folder" "$(count_paths runs/*)" 2
  wait "$first"
  check_eq "first runner ok" "$?" 0

  # 2. the lock is the runner's: a killed runner's orphan cell does not hold it (close-on-exec)
  REPRO_RUN_TEST_KILL=local-start:1 "$runner" run experiment.yaml --local --device h100 --only experiment=long -q >out5 2>&1
  check_eq "runner killed" "$?" 137
  "$runner" run experiment.yaml --local --device h100 --only experiment=long --resume -q >out6 2>&1
  check_eq "resume after the kill takes the lock" "$?" 0

  # 2b. the same with the orphan cell still between its fork and its exec for a second (it
  # holds the runner's descriptors until exec closes them, and is not yet tagged as the run's):
  # the resume waits for the exec (the lock's holder is dead) instead of refusing
  REPRO_RUN_TEST_KILL=local-start:1 REPRO_RUN_TEST_DELAY=local-child:1000 "$runner" run experiment.yaml --local --device h100 --only experiment=long -q >out5b 2>&1
  check_eq "runner killed (cell not yet exec'd)" "$?" 137
  "$runner" run experiment.yaml --local --device h100 --only experiment=long --resume -q >out6b 2>&1
  check_eq "resume while the orphan has not exec'd waits and takes the lock" "$?" 0

  # 3. --resume keeps to the run's selection
  rm -f count
  "$runner" run experiment.yaml --local --device h100 --only system=bad >out7 2>&1
  check_eq "run of the bad cells" "$?" 1
  check "failure summary names the reason" grep -q "stand-in asked to fail" out7
  check "no progress line printed twice" test -z "$(grep '^\[onefig\] done' out7 | sed 's/  elapsed.*//' | uniq -d)"
  "$runner" run experiment.yaml --local --resume -q >out8 2>&1
  check_eq "resume reruns the run's own failed cells" "$?" 1
  check_eq "resume ran no good cell" "$(started a.good)$(started b.good)" 00
  check_eq "resume ran no a100 cell" "$(grep -c 'a.bad' count)" 2
  check "the run remembers its selection" grep -q '^select ' "$(current_run)/manifest"
  "$runner" run experiment.yaml --local --resume --only system=good -q >out9 2>&1
  check_eq "resume with cells outside the run refused" "$?" 2
  check "says how to widen" grep -q -- "--widen" out9
  "$runner" run experiment.yaml --local --resume --widen --device h100 --only experiment=main,system=good -q >out10 2>&1
  check_eq "--widen runs the added cells" "$?" 0
  check_eq "good cells ran once" "$(started a.good)$(started b.good)" 11
  "$runner" run experiment.yaml --local --resume >out11 2>&1
  check_eq "resume after widening: the run's failed cells again" "$?" 1
  check_eq "resume after widening keeps the good cells" "$(started a.good)$(started b.good)" 11
  check "kept message" grep -q "2 cells already have a good log: kept" out11
  check_eq "a100 cells never ran (all starts: 2+2+2+2 on h100)" "$(grep -c ' [ab]\.' count)" 8

  # 4. `finish` (the last command of an array task) exits 0 for a final answer the log keeps
  # (ok, unsupported, oom), so Slurm records COMPLETED; a failed cell's code stays
  run=$(current_run)
  for c in "unsupported 4 0" "oom 3 0" "ok 0 0" "error 1 1" "ok 4 4"; do
    read -r -a words <<<"$c"
    set -- "${words[@]}"
    printf 'result status=%s avg_ms=1\n' "$1" >"$run/tmp/fin.$1.$2"
    "$runner" finish "$run" "fin.$1.$2.log" "$run/tmp/fin.$1.$2" "$2" 2>/dev/null
    check_eq "finish exit for status=$1 after exit $2" "$?" "$3"
  done
  check_eq "the log keeps unsupported" "$(last_result "$run/logs/fin.unsupported.4.log" status)" unsupported
  check_eq "the log keeps oom" "$(last_result "$run/logs/fin.oom.3.log" status)" oom
  check_eq "exit 4 after ok is an error in the log" "$(last_result "$run/logs/fin.ok.4.log" status)" error
  finish
fi

# slurm
need_test_cluster
cluster="$(cd "$(dirname "$0")/../.." && pwd)/clusters/local-test.yaml"
# the EXIT trap: cancel this test's jobs
# shellcheck disable=SC2317 # reached through the trap, which shellcheck 0.9 does not follow
cancel_run_jobs() {
  local jobs
  mapfile -t jobs < <(grep -h '^job ' "$work"/fig/runs/*/manifest 2>/dev/null | grep -o 'jobid=[0-9]*' | cut -d= -f2)
  [ ${#jobs[@]} -eq 0 ] || scancel "${jobs[@]}" 2>/dev/null
}
trap cancel_run_jobs EXIT
# 4. a runner that returned with its jobs queued (held here) blocks a second run
REPRO_SBATCH_ARGS=--hold "$runner" run experiment.yaml -c "$cluster" --only experiment=main --no-wait -q >out1 2>&1
check_eq "submitted and returned" "$?" 0
run1=$(current_run)
"$runner" run experiment.yaml -c "$cluster" --only experiment=ends -q >out2 2>&1
check_eq "second run refused while the first run's cells are queued" "$?" 2
check "names the queued run" grep -qF "$(basename "$run1")" out2
check "says how" grep -q -- "--allow-concurrent" out2
check_eq "no second run folder" "$(count_paths runs/*)" 1
# 5. --allow-concurrent: a deliberate second run; unsupported and oom end COMPLETED in Slurm
"$runner" run experiment.yaml -c "$cluster" --only experiment=ends --allow-concurrent --poll 1 -q >out3 2>&1
check_eq "--allow-concurrent run" "$?" 0
run2=$(current_run)
jid=$(grep '^job ' "$run2/manifest" | tail -1 | grep -o 'jobid=[0-9]*' | cut -d= -f2)
st=$(scontrol show job "$jid" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort -u | tr '\n' ' ')
check_eq "Slurm state of the unsupported and oom tasks" "$st" "JobState=COMPLETED "
check_eq "unsupported log" "$(last_result "$run2/logs/ends.h100.unsup.log" status)" unsupported
check_eq "oom log" "$(last_result "$run2/logs/ends.h100.oom.log" status)" oom
# 6. once the first run's jobs are gone, a new run starts
mapfile -t jobs1 < <(grep '^job ' "$run1/manifest" | grep -o 'jobid=[0-9]*' | cut -d= -f2)
scancel "${jobs1[@]}"
for _ in $(seq 60); do [ -z "$(squeue -h -r -j "$(grep '^job ' "$run1/manifest" | grep -o 'jobid=[0-9]*' | cut -d= -f2 | paste -sd,)" -t PD,R,CG 2>/dev/null)" ] && break; sleep 0.5; done
"$runner" run experiment.yaml -c "$cluster" --only experiment=ends --poll 1 -q >out4 2>&1
check_eq "new run after the queue emptied" "$?" 0
"$runner" status "$run1" >out5 2>&1
check "status names the reason of cancelled cells" grep -q "CANCELLED" out5
finish
