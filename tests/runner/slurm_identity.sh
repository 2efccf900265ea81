#!/usr/bin/env bash
# On the test cluster of scripts/slurm-local.sh, a run's jobs are its own:
#   - two figures submitted in the same second get job names that differ and name their figure,
#     and each job carries its run's marker as its comment (squeue %k);
#   - a resume looking for a submission whose job id was never journaled takes only a job whose
#     comment is its run's: a job of the same name the user submitted held is neither adopted
#     nor released, and the run's cells are submitted again;
#   - a late job of a given-up submission is cancelled, a same-named job of the user is not.
# Skips when no Slurm is reachable (as root it starts the local cluster first).
#   slurm_identity.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") work=$2
need_test_cluster
src=$(cd "$(dirname "$0")/../.." && pwd)
standin=$src/tests/runner/standin.sh
scratch_repo "$work" figA
unset REPRO_CLUSTER REPRO_SBATCH_ARGS REPRO_SBATCH_WAIT_S REPRO_RUN_TEST_KILL
cluster=$src/clusters/local-test.yaml
# make_figure DIR NAME: a two-cell figure of the stand-in program
make_figure() {
  mkdir -p "$1"
  cat >"$1/experiment.yaml" <<EOF2
figure: $2
defaults: {count: "$1/count", standin: "$standin"}
systems:
  good: {command: "{standin} --workload {workload} --system {system} --count {count}"}
  slow: {command: "{standin} --workload {workload} --system {system} --sleep 15 --count {count}"}
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
}
figA=$study figB=$repo/figB
make_figure "$figA" identa
make_figure "$figB" identb
marker() { grep '^run ' "$1" | grep -o 'marker=[0-9a-f]*' | cut -d= -f2; }
started() { local n; n=$(grep -c " $2\$" "$1/count" 2>/dev/null); echo "${n:-0}"; }
foreign=()
# a job of the user's with NAME, held: it must stay held and pending
user_job() { sbatch --parsable --hold -p h100 -J "$1" -o /dev/null --wrap true; }
make_slow_sbatch "$work"
# shellcheck disable=SC2317 # reached through the trap
cleanup() { cancel_test_jobs "$work" "${foreign[*]:-}" "$repo"/fig*/runs/*/manifest; }
trap cleanup EXIT

# 1. two figures in one second: distinct names that say whose they are, each with its marker
(cd "$figA" && REPRO_SBATCH_ARGS=--hold "$runner" run experiment.yaml -c "$cluster" --only experiment=main --no-wait -q >out1 2>&1) &
(cd "$figB" && REPRO_SBATCH_ARGS=--hold "$runner" run experiment.yaml -c "$cluster" --only experiment=main --no-wait -q >out1 2>&1) &
wait
runA=$(cd "$figA" && current_run) runB=$(cd "$figB" && current_run)
nameA=$(jobnames "$runA/manifest") nameB=$(jobnames "$runB/manifest")
check "figure A submitted" test -n "$nameA"
check "figure B submitted" test -n "$nameB"
check "the job names differ" test "$nameA" != "$nameB"
case $nameA in repro-identa-*) ok ;; *) bad "figure A's job name names it: $nameA" ;; esac
case $nameB in repro-identb-*) ok ;; *) bad "figure B's job name names it: $nameB" ;; esac
markerA=$(marker "$runA/manifest")
check_eq "the marker: 32 hex digits" "${#markerA}" 32
check "the markers differ" test "$markerA" != "$(marker "$runB/manifest")"
idA=$(jobids "$runA/manifest")
check_eq "figure A's job carries its marker" "$(squeue -h -j "$idA" -o %k | sort -u)" "repro-run:$markerA"
# shellcheck disable=SC2046 # a list of ids
scancel $(jobids "$runA/manifest" "$runB/manifest")

# 2. killed before its sbatch; a held job of the user's takes the submission's name: the resume
#    leaves it held and submits the cells again
cd "$figA" || exit 1
rm -f count
REPRO_RUN_TEST_KILL=before-sbatch:1 "$runner" run experiment.yaml -c "$cluster" --only experiment=main --poll 1 -q >out2 2>&1
check_eq "runner killed before sbatch" "$?" 137
run2=$(current_run)
name2=$(jobnames "$run2/manifest" | head -1)
check "the submission is journaled" test -n "$name2"
user1=$(user_job "$name2")
foreign+=("$user1")
"$runner" run experiment.yaml -c "$cluster" --resume --poll 1 >out3 2>&1
check_eq "resume" "$?" 0
check "the user's job was not adopted" test -z "$(grep "jobid=$user1\$" "$run2/manifest")"
check "the resume says the submission never reached Slurm" grep -q "never reached Slurm" out3
check_eq "the user's job: still pending" "$(squeue -h -j "$user1" -o %T)" PENDING
check_eq "the user's job: still held" "$(squeue -h -j "$user1" -o %r)" JobHeldUser
check_eq "each cell ran once" "$(started "$figA" a.good)$(started "$figA" b.good)" 11
check_eq "logs" "$(last_result "$run2/logs/main.h100.a.good.log" status)$(last_result "$run2/logs/main.h100.b.good.log" status)" okok

# 3. the resume gives up waiting for a slow sbatch; a held job of the user's shares the name of
#    the given-up submission: the run's late job is cancelled, the user's is not
rm -f count "$work/slowbin/started"
SLOW_SBATCH_S=8 PATH="$work/slowbin:$PATH" REPRO_RUN_TEST_KILL=sbatch-started:1 \
  "$runner" run experiment.yaml -c "$cluster" --only experiment=long --poll 1 -q >out4 2>&1
check_eq "runner killed while sbatch blocks" "$?" 137
run3=$(current_run)
first=$(jobnames "$run3/manifest" | head -1)
user2=$(user_job "$first")
foreign+=("$user2")
REPRO_SBATCH_WAIT_S=1 "$runner" run experiment.yaml -c "$cluster" --resume --poll 1 >out5 2>&1
check_eq "resume (2)" "$?" 0
check "resume gave up the first submission" grep -q "submitted again" out5
check "resume cancelled the run's late job" grep -q "cancelled it" out5
late=$(squeue -h -t all -n "$first" -o "%F %k" | awk -v m="repro-run:$(marker "$run3/manifest")" '$2 == m {print $1}' | sort -u)
check "the late job reached Slurm" test -n "$late"
check_eq "the late job: cancelled" "$(squeue -h -t all -j "${late:-0}" -o %T 2>/dev/null | sort -u)" CANCELLED
check_eq "the user's job of that name: still pending" "$(squeue -h -j "$user2" -o %T)" PENDING
check_eq "the slow cell ran once" "$(started "$figA" w.slow)" 1
check_eq "its log" "$(last_result "$run3/logs/long.h100.w.slow.log" status)" ok
finish
