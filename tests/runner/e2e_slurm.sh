#!/usr/bin/env bash
# End to end against a real Slurm cluster (scripts/slurm-local.sh): the stand-in matrix as
# three job arrays, with
#   - the runner SIGKILLed right after its 2nd sbatch returned (job id never journaled),
#     then resumed: the landed array is found again, nothing is submitted twice;
#   - a failing and a crashing cell (FAILED), a cell past its 1-minute limit (TIMEOUT);
#   - the node set DOWN while a cell runs: Slurm requeues it (same job), it reruns and ends ok,
#     the killed attempt's output is kept, and the resume's summary and `status` (which
#     writes nothing and exits 1: cells failed) name the requeued cells and the node.
# Skips when no Slurm is reachable (as root it starts the local cluster first).
#   e2e_slurm.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$1 work=$2
need_test_cluster
node=$(sinfo -h -N -p a100 -o %N | head -1)
# a node still cleaning up after earlier jobs delays everything: wait until it is idle
for _ in $(seq 120); do [ "$(sinfo -h -N -n "$node" -o %T | head -1)" = idle ] && break; sleep 0.5; done
rm -rf "$work"; mkdir -p "$work"
make_matrix "$work/fig" 60 600 12 a100
cluster="$(cd "$(dirname "$0")/../.." && pwd)/clusters/local-test.yaml"
cd "$work/fig" || exit 1
# job ids this test submitted (from the run's journal); cancelled when the test ends
run_jobs() { grep -h '^job ' "$work"/fig/runs/*/manifest 2>/dev/null | grep -o 'jobid=[0-9]*' | cut -d= -f2; }
trap 'j=$(run_jobs); [ -n "$j" ] && scancel $j 2>/dev/null' EXIT

# 1. killed after the 2nd sbatch (tle.h100) returned, before its job id was journaled
REPRO_RUN_TEST_KILL=after-sbatch:2 "$runner" run experiment.yaml -c "$cluster" --poll 1 >out1 2>&1
check_eq "runner died of SIGKILL" "$?" 137
run=$(current_run)
check_eq "job records before the resume" "$(grep -c '^job ' "$run/manifest")" 1
tle_name=$(grep '^submit ' "$run/manifest" | grep 'group=tle.h100' | grep -o 'jobname=[^ ]*' | cut -d= -f2)
check "tle submission announced" test -n "$tle_name"

# 2. resume in the background; take the node down while the rq cell runs
"$runner" run experiment.yaml -c "$cluster" --resume --poll 1 >out2 2>&1 &
resumer=$!
for _ in $(seq 600); do ls "$run"/tmp/rq.a100.r.slow.log.* >/dev/null 2>&1 && break; sleep 0.2; done
check "rq cell started" ls "$run"/tmp/rq.a100.r.slow.log.*
sleep 2
scontrol update nodename="$node" state=down reason=repro-test
sleep 2
scontrol update nodename="$node" state=resume 2>/dev/null || true
# A requeued job waits ~2 minutes (BeginTime) and is held if relaunched while the node still
# cleans up; the test does not wait: once the node is idle, release and start the run's jobs.
for _ in $(seq 60); do
  case "$(sinfo -h -N -n "$node" -o %T | head -1)" in idle|mixed|allocated) break ;; esac
  sleep 0.5
done
for _ in $(seq 30); do
  pending=$(squeue -h -r -t PD -o %i -j "$(run_jobs | paste -sd,)" 2>/dev/null)
  [ -z "$pending" ] && break
  for j in $pending; do scontrol release "$j" 2>/dev/null; scontrol update jobid="$j" starttime=now 2>/dev/null; done
  sleep 1
done
wait "$resumer"
check_eq "resume exit (failed cells present)" "$?" 1
check "recovered the landed submission" grep -q "reached Slurm as job" out2
check "the resume's summary names the requeued cell" grep -q "requeued .*rq.a100.r.slow.log" out2
check "the resume's summary names the node that went DOWN" grep -q "nodes that went DOWN: $node" out2
check_matrix_logs "$run/logs" a100

# 3. nothing submitted twice: one job per submission name, 3 job records in all
while read -r name; do
  check_eq "jobs named $name" "$(squeue -h -t all -n "$name" -o %F | sort -u | wc -l)" 1
done < <(grep '^submit ' "$run/manifest" | grep -o 'jobname=[^ ]*' | cut -d= -f2)
check_eq "job records" "$(grep -c '^job ' "$run/manifest")" 3
check_eq "submissions" "$(grep -c '^submit ' "$run/manifest")" 3
# each main cell started once; the requeued cell twice under one job id
starts count >starts.txt
check_eq "main cells that started once" "$(grep '^[ab]\.' starts.txt | awk '$2 == 1' | wc -l)" 6
check_eq "rq cell starts" "$(awk '$1 == "r.slow"' starts.txt | cut -d' ' -f2)" 2
check_eq "rq job ids" "$(grep ' r.slow$' count | cut -d' ' -f1 | sort -u | wc -l)" 1
check "killed attempt of rq kept" test -f "$run/tmp/rq.a100.r.slow.log.$(grep ' r.slow$' count | head -1 | cut -d' ' -f1).r0"
rq_job=$(grep ' r.slow$' count | head -1 | cut -d' ' -f1 | cut -d_ -f1)
check "Slurm counted a restart" bash -c "scontrol show job $rq_job | grep -q 'Restarts=[1-9]'"

# 4. status reads the finished run
before=$(find "$run" -printf '%p %y %s %T@\n' | sort)
"$runner" status . >out4 2>&1
check_eq "status exit (failed cells)" "$?" 1
check_eq "status wrote nothing" "$(find "$run" -printf '%p %y %s %T@\n' | sort)" "$before"
check "status names the node that went DOWN" grep -q "rq.a100.r.slow.log.*$node went DOWN" out4
check "status counts" grep -q "5 cells without a good log" out4
check "status shows the requeued cell" grep -q "requeued .*rq.a100.r.slow.log" out4
check "status says why a cell is requeued" grep -q "rq.a100.r.slow.log.*node failure" out4
check "status names the TIMEOUT" grep -q "timeout *TIMEOUT *tle.h100.z.hang.log" out4
finish
