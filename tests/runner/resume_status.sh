#!/usr/bin/env bash
# A run's executor and its status, through the local executor (no Slurm needed):
#   - `status` exits 1 when cells lack a good log and nothing works on them (the local runner
#     was killed), 0 while a runner holds the run;
#   - --resume of a run made with --local continues locally, though its cluster file says
#     slurm (stub sbatch/squeue/scontrol on PATH fail the test when called);
#   - a journal write that fails for a full disk (as root: a small tmpfs) names the manifest.
#   resume_status.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") work=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
standin=$src/tests/runner/standin.sh
scratch_repo "$work" fig
unset REPRO_CLUSTER REPRO_RUN_TEST_KILL REPRO_SBATCH_ARGS
cat >"$study/experiment.yaml" <<EOF2
figure: resumefig
defaults: {count: "$study/count", standin: "$standin"}
systems:
  good: {command: "{standin} --workload {workload} --system {system} --count {count}"}
  slow: {command: "{standin} --workload {workload} --system {system} --sleep 3 --count {count}"}
experiments:
  main:
    log: "{experiment}.{device}.{workload}.{system}.log"
    time_limit: 60
    axes: {device: [h100], workload: [a, b, c], system: [good]}
  long:
    log: "{experiment}.{device}.{workload}.{system}.log"
    time_limit: 60
    axes: {device: [h100], workload: [w], system: [slow]}
EOF2
# a cluster file that says slurm; the stubs make any use of Slurm visible
cat >"$work/slurmy.yaml" <<EOF2
name: slurmy
executor: slurm
devices:
  h100: {partition: h100, gres: "gpu:h100:1"}
EOF2
mkdir -p "$work/stubs"
for tool in sbatch squeue scontrol sacct scancel; do
  printf '#!/bin/sh\necho "%s $*" >>"%s/slurm-calls"\nexit 1\n' "$tool" "$work" >"$work/stubs/$tool"
  chmod +x "$work/stubs/$tool"
done
cd "$study" || exit 1
started() { local n; n=$(grep -c " $1\$" count 2>/dev/null); echo "${n:-0}"; }

# 1. a local run killed while starting its second cell: status says nothing works on the rest
REPRO_RUN_TEST_KILL=local-start:2 "$runner" run experiment.yaml -c "$work/slurmy.yaml" --local \
  --only experiment=main -q >out1 2>&1
check_eq "runner killed" "$?" 137
run1=$(current_run)
"$runner" status . >st1 2>&1
check_eq "status: cells without a log and no runner: exit 1" "$?" 1
check "status says no runner holds the run" grep -q "no runner holds the run" st1

# 2. --resume keeps the run's executor (local), not the cluster file's (slurm)
PATH="$work/stubs:$PATH" "$runner" run experiment.yaml --resume -q >out2 2>&1
check_eq "resume" "$?" 0
check "resume said it continues with the local executor" grep -q "made with the local executor" out2
check "resume asked nothing of Slurm" test ! -e "$work/slurm-calls"
for w in a b c; do
  check_eq "main $w" "$(last_result "$run1/logs/main.h100.$w.good.log" status)" ok
done
"$runner" status . >st2 2>&1
check_eq "status of the finished run" "$?" 0

# 3. status while a runner holds the run: exit 0 (the runner is at work)
rm -f count
"$runner" run experiment.yaml --local --only experiment=long -q >out3 2>&1 &
bg=$!
for _ in $(seq 100); do [ "$(started w.slow)" = 1 ] && break; sleep 0.05; done
check_eq "the slow cell started" "$(started w.slow)" 1
"$runner" status . >st3 2>&1
check_eq "status while the runner works: exit 0" "$?" 0
wait "$bg"
check_eq "the runner of the slow cell" "$?" 0

# 4. a full disk: the journal's write fails, and the message names it (root: a tmpfs)
if [ "$(id -u)" = 0 ] && mkdir -p "$work/full" && mount -t tmpfs -o size=64k tmpfs "$work/full" 2>/dev/null; then
  trap 'umount "$work/full" 2>/dev/null' EXIT
  mkdir -p "$work/full/fig"
  cp experiment.yaml "$work/full/fig/"
  mkdir -p "$work/full/fig/runs"
  dd if=/dev/zero of="$work/full/filler" bs=4k 2>/dev/null # until the disk is full
  (cd "$work/full/fig" && "$runner" run experiment.yaml --local --only experiment=main -q >"$work/out4" 2>&1)
  check_eq "full disk: exit 2" "$?" 2
  check "full disk: the manifest named" grep -q "manifest: No space left on device" "$work/out4"
  umount "$work/full"
  trap - EXIT
else
  echo "not root or no tmpfs: the full-disk case is skipped"
fi
finish
