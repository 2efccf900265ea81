#!/usr/bin/env bash
# STAND-IN PROGRAM FOR THE RUNNER'S TESTS. It measures nothing: it prints a log in the kit's
# log contract (labelled impl=standin, with the wall time of its own sleep) and behaves as
# asked, so the runner's handling of every outcome can be tested without the kernels.
#   standin.sh --workload W --system S [--mode MODE] [--sleep SECONDS] [--count FILE]
#              [--commit SHA] [--gpu NAME]
# MODE: ok (default), fail (result status=error, exit 1), crash (no result line, exit 7),
#       oom (status=oom, exit 3), unsupported (exit 4), hang (print the config, then sleep).
# --count FILE appends "<job id or pid> <workload>.<system>" when it starts, so tests can
# count how often each cell really ran. --commit SHA puts commit=SHA in the meta line (for
# the shipping tests, which ship only logs that name their commit), --gpu NAME gpu="NAME" (the
# device provenance reads).
set -u
workload=none system=none mode=ok sleep_s=0 count="" commit="" gpu=none
while [ $# -gt 0 ]; do
  case "$1" in
    --workload) workload=$2; shift 2 ;;
    --system) system=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --sleep) sleep_s=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --commit) commit=$2; shift 2 ;;
    --gpu) gpu="\"$2\""; shift 2 ;;
    *) echo "standin.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ -n "$count" ]; then echo "${SLURM_ARRAY_JOB_ID:-$$}_${SLURM_ARRAY_TASK_ID:-0} $workload.$system" >>"$count"; fi
echo "# repro-log 1"
echo "# stand-in output for the runner tests: not a measurement"
echo "meta gpu=$gpu host=$(hostname -s)${commit:+ commit=$commit} date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "config workload=$workload system=$system device=cpu impl=standin"
t0=$(date +%s%N)
case "$mode" in
  hang) exec sleep "$sleep_s" ;;
  *) sleep "$sleep_s" ;;
esac
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
case "$mode" in
  ok) echo "result status=ok avg_ms=$ms median_ms=$ms min_ms=$ms max_ms=$ms runs=1 warmup=0" ;;
  fail) echo "result status=error reason=\"stand-in asked to fail\""; exit 1 ;;
  crash) echo "stand-in crashing without a result line" >&2; exit 7 ;;
  oom) echo "result status=oom reason=\"stand-in out of memory\""; exit 3 ;;
  unsupported) echo "result status=unsupported reason=\"stand-in does not support this\""; exit 4 ;;
  *) echo "standin.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
