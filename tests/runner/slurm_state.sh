#!/usr/bin/env bash
# On the test cluster of scripts/slurm-local.sh:
#   - `status` writes nothing (cells whose jobs were cancelled keep no log) and exits 1 when
#     cells failed;
#   - the runner killed while its sbatch blocks (a slow controller: a wrapper sbatch that
#     sleeps), then resumed before that sbatch returns: the resume waits for the orphaned
#     sbatch and adopts its job (its job id recorded), so no cell runs twice; when it gives up
#     waiting (REPRO_SBATCH_WAIT_S), the late job reaches Slurm held and is cancelled, and the
#     cells run once, from their new submission;
#   - run_single.sh reruns with the run's cluster file, not the one run.sh would pick.
# Skips when no Slurm is reachable (as root it starts the local cluster first).
#   slurm_state.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") work=$2
need_test_cluster
src=$(cd "$(dirname "$0")/../.." && pwd)
standin=$src/tests/runner/standin.sh
scratch_repo "$work" fig
export REPRO_RUN=$runner
unset REPRO_CLUSTER REPRO_SBATCH_ARGS REPRO_SBATCH_WAIT_S
cp "$src/fig12/run.sh" "$study/"
sed 's/"experiment workload system"/"workload system"/' "$src/fig12/run_single.sh" >"$study/run_single.sh"
chmod +x "$study/run_single.sh"
cat >"$study/experiment.yaml" <<EOF2
figure: slurmstatefig
defaults: {count: "$study/count", standin: "$standin", tag: none}
systems:
  good: {command: "{standin} --workload {workload}.{tag} --system {system} --count {count}"}
  slow: {command: "{standin} --workload {workload}.{tag} --system {system} --sleep 15 --count {count}"}
experiments:
  main:
    log: "{experiment}.{device}.{workload}.{system}.log"
    time_limit: 120
    axes: {device: [h100], workload: [a, b], system: [good]}
  long:
    log: "{experiment}.{device}.{workload}.{system}.log"
    time_limit: 120
    axes: {device: [h100], workload: [w], system: [slow]}
EOF2
# the test cluster's file with a value of its own: the logs say which file a cell ran with
sed 's/^vars:$/vars:\n  tag: A/' "$src/clusters/local-test.yaml" >"$work/clusterA.yaml"
cA=$work/clusterA.yaml
# a slow controller: this sbatch blocks SLOW_SBATCH_S seconds, then submits
make_slow_sbatch "$work"
cd "$study" || exit 1
started() { local n; n=$(grep -c " $1\$" count 2>/dev/null); echo "${n:-0}"; }
snapshot() { find "$@" -printf '%p %y %s %m %T@\n' 2>/dev/null | sort; }
# shellcheck disable=SC2317 # reached through the trap
cleanup() { cancel_test_jobs "$work" "" "$study"/runs/*/manifest; }
trap cleanup EXIT
wait_gone() {  # wait_gone JOBIDS: until none is pending, running or completing
  for _ in $(seq 60); do [ -z "$(squeue -h -r -j "$1" -t PD,R,CG 2>/dev/null)" ] && return; sleep 0.5; done
}

# 1. status writes nothing and says failed: cells whose jobs were cancelled while held
REPRO_SBATCH_ARGS=--hold "$runner" run experiment.yaml -c "$cA" --only experiment=main --no-wait -q >out1 2>&1
check_eq "submitted held and returned" "$?" 0
run1=$(current_run)
ids=$(jobids "$run1/manifest" | paste -sd,)
check "job recorded" test -n "$ids"
scancel "${ids//,/ }"
wait_gone "$ids"
before=$(snapshot "$run1")
"$runner" status . >st1 2>&1
check_eq "status exit (cancelled cells)" "$?" 1
check "status names the state" grep -q "CANCELLED *main.h100.a.good.log" st1
check_eq "status wrote no log" "$(count_paths "$run1"/logs/*)" 0
check_eq "status wrote nothing" "$(snapshot "$run1")" "$before"

# 2. killed while sbatch blocks, resumed before it returns: the orphan's job is adopted
rm -f count "$work/slowbin/started"
PATH="$work/slowbin:$PATH" REPRO_RUN_TEST_KILL=sbatch-started:1 \
  "$runner" run experiment.yaml -c "$cA" --only experiment=main --poll 1 -q >out2 2>&1
check_eq "runner killed while sbatch blocks" "$?" 137
run2=$(current_run)
# the runner dies right after forking sbatch: let the orphan say it started (a loaded machine)
for _ in $(seq 100); do [ -s "$work/slowbin/started" ] && break; sleep 0.05; done
check "the orphaned sbatch still runs" kill -0 "$(head -1 "$work/slowbin/started")"
"$runner" run experiment.yaml -c "$cA" --resume --poll 1 >out3 2>&1
check_eq "resume" "$?" 0
check "resume waited for the orphaned sbatch" grep -q "waiting for the sbatch" out3
check "resume adopted the orphan's job" grep -q "reached Slurm as job" out3
# let an orphan that was not waited for submit, and its job end, before counting
orphan=$(head -1 "$work/slowbin/started")
for _ in $(seq 100); do kill -0 "$orphan" 2>/dev/null || break; sleep 0.2; done
for n in $(jobnames "$run2/manifest"); do wait_gone "$(squeue -h -t all -n "$n" -o %F | sort -u | paste -sd,)"; done
check_eq "job records" "$(grep -c '^job ' "$run2/manifest")" 1
check_eq "no submission given up" "$(grep -c '^cancel ' "$run2/manifest")" 0
check_eq "submissions" "$(grep -c '^submit ' "$run2/manifest")" 1
check_eq "jobs of the submission" "$(squeue -h -t all -n "$(jobnames "$run2/manifest" | head -1)" -o %F | sort -u | wc -l)" 1
check_eq "each cell ran once" "$(started a.A.good)$(started b.A.good)" 11
check_eq "logs" "$(last_result "$run2/logs/main.h100.a.good.log" status)$(last_result "$run2/logs/main.h100.b.good.log" status)" okok

# 3. run_single.sh: the run's cluster file, not the one run.sh picks on this cluster
./run_single.sh a good --poll 1 -q >out4 2>&1
check_eq "run_single exit" "$?" 0
check_eq "run_single ran with the run's cluster file" "$(started a.A.good)$(started a.none.good)" 20

# 4. the resume gives up waiting: the late job reaches Slurm held and is cancelled
rm -f count "$work/slowbin/started"
SLOW_SBATCH_S=8 PATH="$work/slowbin:$PATH" REPRO_RUN_TEST_KILL=sbatch-started:1 \
  "$runner" run experiment.yaml -c "$cA" --only experiment=long --poll 1 -q >out5 2>&1
check_eq "runner killed while sbatch blocks (2)" "$?" 137
run3=$(current_run)
first=$(jobnames "$run3/manifest" | head -1)
REPRO_SBATCH_WAIT_S=1 "$runner" run experiment.yaml -c "$cA" --resume --poll 1 >out6 2>&1
check_eq "resume (2)" "$?" 0
check "resume gave up the first submission" grep -q "submitted again" out6
check "resume cancelled the late job" grep -q "cancelled it" out6
check_eq "the late job: cancelled" "$(squeue -h -t all -n "$first" -o %T | sort -u)" CANCELLED
check_eq "the slow cell ran once" "$(started w.A.slow)" 1
check_eq "its log" "$(last_result "$run3/logs/long.h100.w.slow.log" status)" ok
finish
