#!/usr/bin/env bash
# Runs figure matrices on this machine's GPU with the local executor (figNN/run.sh --local),
# then packs each run folder (manifest, logs, stderr) under $OUT for the trip home. Builds
# nothing: build/bin comes with the working tree.
#   scripts/gpu-run.sh [--budget SECONDS] TARGET...      TARGET: fig12 | fig12:kernel | fig12:e2e | fig13 | fig14
# A target is started only while the budget (default 540 s from the start) has at least 60 s
# left, and is stopped when it runs out; `figNN/run.sh --local --resume` continues a run cut
# short (bring its figNN/runs/<time>/ folder back first).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
budget=540
out=${OUT:-$root/gpu-run-out}
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) budget=${2:?--budget needs seconds}; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    fig1[234]|fig1[234]:[a-z0-9_]*) targets+=("$1") ;;
    *) echo "gpu-run.sh: unknown target '$1' (expected figNN or figNN:experiment)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$budget" =~ ^[0-9]+$ ]] || { echo "gpu-run.sh: --budget: expected seconds, got '$budget'" >&2; exit 2; }
[ ${#targets[@]} -gt 0 ] || { echo "gpu-run.sh: no target (see --help)" >&2; exit 2; }
mkdir -p "$out"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"

for target in "${targets[@]}"; do
  fig=${target%%:*}
  exp=""
  [[ "$target" == *:* ]] && exp=${target#*:}
  left=$((budget - ($(date +%s) - t0)))
  if [ "$left" -lt 60 ]; then
    echo "gpu-run.sh: $target skipped: ${left}s of the budget left"
    continue
  fi
  args=(--local --detach)
  [ -n "$exp" ] && args+=(--only "experiment=$exp")
  echo "== $target (budget left ${left}s)"
  timeout --kill-after=30 "$left" "$root/$fig/run.sh" "${args[@]}" > "$out/$fig${exp:+-$exp}.runner.txt" 2>&1
  echo "repro-run exit status: $?"
  run_dir=$(dirname "$(readlink -f "$root/$fig/ae_logs")")
  "$root/build/bin/repro-run" status "$run_dir" 2>&1 | tail -n 15
  tar czf "$out/$fig${exp:+-$exp}.tgz" -C "$(dirname "$run_dir")" "$(basename "$run_dir")"
done
echo "gpu-run.sh: done in $(( $(date +%s) - t0 ))s; run folders packed in $out"
