#!/usr/bin/env bash
# Adversarial corpus (tests/runner/adversarial/): hostile values reach the program unchanged
# and never execute, through the local executor and through the generated array script (run
# here with a fake srun); hostile files are refused with file:line:col and a reason.
#   adversarial.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$1 work=$2
corpus=$(cd "$(dirname "$0")/adversarial" && pwd)
rm -rf "$work"; mkdir -p "$work/fig" "$work/fakebin"
cd "$work/fig" || exit 1
cp "$corpus/ok-values.yaml" experiment.yaml

# 1. through the local executor
"$runner" run experiment.yaml --local -q >out 2>&1
check_eq "local run exit" "$?" 0
log=ae_logs/adv.h100.echo.log
check "local: values arrive unchanged" diff <(grep '^v<' "$log" | head -c 100000) <(cat "$corpus/ok-values.expected")
check_eq "local: nothing injected ran" "$(find "$work" -name 'pwned*' | wc -l)" 0

# 2. through the array script, as a Slurm task would run it (fake srun: drop options, exec)
cat >"$work/fakebin/srun" <<'EOF2'
#!/bin/bash
while [ "${1#--}" != "$1" ]; do shift; done
exec "$@"
EOF2
chmod +x "$work/fakebin/srun"
"$runner" run experiment.yaml --dry-run -q >/dev/null 2>&1
script=$(ls "$PWD"/runs/dry-run-*/jobs/*.sbatch)
rundir=$(dirname "$(dirname "$script")")
check "array script parses" bash -n "$script"
(cd "$rundir" && PATH="$work/fakebin:$PATH" SLURM_ARRAY_JOB_ID=1 SLURM_ARRAY_TASK_ID=0 SLURM_JOB_NAME=t bash "$script")
check_eq "array task exit" "$?" 0
check "array: values arrive unchanged" diff <(grep '^v<' "$rundir/logs/adv.h100.echo.log") "$corpus/ok-values.expected"
check_eq "array: nothing injected ran" "$(find "$work" -name 'pwned*' | wc -l)" 0

# 4. an edited journal cannot make the runner touch paths outside the run folder: every name
# taken from the manifest (cell logs, job names, run id, job ids) is checked when it is read
cat >"$work/fakebin/sbatch" <<'EOF2'
#!/bin/bash
exit 1
EOF2
cat >"$work/fakebin/squeue" <<'EOF2'
#!/bin/bash
exit 0
EOF2
cat >"$work/fakebin/sacct" <<'EOF2'
#!/bin/bash
echo "1_0|FAILED|1:0"
EOF2
chmod +x "$work/fakebin/sbatch" "$work/fakebin/squeue" "$work/fakebin/sacct"
good=$(cd -P ae_logs/.. && pwd)
n=0
for rec in "cell sub=99 task=0 log=../../../../repro-escape-log|submit sub=99 executor=slurm group=g jobname=j99|job sub=99 jobid=1" \
           "cell sub=99 task=0 log=/tmp/repro-escape-abs|submit sub=99 executor=slurm group=g jobname=j99|job sub=99 jobid=1" \
           "cell sub=99 task=0 log=ok.log|submit sub=99 executor=slurm group=g jobname=../../../../repro-escape-job" \
           "cell sub=99 task=0 log=ok.log|submit sub=99 executor=slurm group=g jobname=j99|job sub=99 jobid=1/../../x" \
           "run id=../../../../repro-escape-id"; do
  n=$((n + 1))
  copy="$work/fig/runs/edited$n"
  cp -r "$good" "$copy"
  printf '%s\n' "$rec" | tr '|' '\n' >>"$copy/manifest"
  PATH="$work/fakebin:$PATH" "$runner" status "$copy" >"$work/status$n.txt" 2>&1
  check_eq "edited manifest $n refused" "$?" 2
  check "edited manifest $n: the reason names the line" grep -q "manifest:[0-9]*: .*not a valid" "$work/status$n.txt"
  PATH="$work/fakebin:$PATH" "$runner" run experiment.yaml --resume --run "$copy" --local -q >"$work/resume$n.txt" 2>&1
  check_eq "edited manifest $n: resume refused" "$?" 2
done
check_eq "nothing written outside the run folders" "$(find "$(dirname "$work")" /tmp -name "repro-escape-*" 2>/dev/null | wc -l)" 0

# 3. hostile files are refused, with the reason and (where given) the position
for f in "$corpus"/bad-*.yaml; do
  name=$(basename "$f")
  want=$(sed -n '1s/^# expect: //p' "$f")
  at=$(sed -n '2s/^# at: //p' "$f")
  cp "$f" "$work/$name"
  if [ "${name#bad-cluster-}" != "$name" ]; then
    (cd "$work" && timeout 20 "$runner" check fig/experiment.yaml -c "$name" >/dev/null 2>err.txt)
  else
    (cd "$work" && timeout 20 "$runner" check "$name" >/dev/null 2>err.txt)
  fi
  rc=$?
  check_eq "$name refused" "$rc" 2
  if grep -qF -- "$want" "$work/err.txt"; then ok; else bad "$name: expected '$want' in: $(head -c 300 "$work/err.txt")"; fi
  if [ -n "$at" ]; then
    if grep -qF -- "$at:" "$work/err.txt"; then ok; else bad "$name: expected position $at in: $(head -c 300 "$work/err.txt")"; fi
  fi
done
finish
