#!/usr/bin/env bash
# End to end with the real kernel binaries in CPU mode: fig12's own experiment.yaml and the
# local test cluster file (CPU reference at small sizes), through the local executor and,
# when the test cluster answers, through Slurm. Skips when build/bin/attnvar does not exist.
#   e2e_kernels.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$1 work=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(dirname "$runner")
[ -x "$bin/attnvar" ] || skip "$bin/attnvar is not built (the kernels are not in this build)"
rm -rf "$work"; mkdir -p "$work/fig12"
cp "$src/fig12/experiment.yaml" "$work/fig12/"
ln -s "$src/scripts" "$work/scripts"
touch "$work/.repro-root"   # {root} is $work, like the repository root
cd "$work/fig12" || exit 1
cluster="$src/clusters/local-test.yaml"
# shellcheck disable=SC2054 # the commas are inside --only's values
cells=(--only experiment=kernel,system=fused --only experiment=kernel,system=unfused)

check_kernel_logs() {  # check_kernel_logs RUN_DIR DEVICE
  local n=0 w
  for w in h2o roco kf snapkv corm attn gemma2; do
    for s in unfused fused; do
      local log="$1/logs/kernel.$2.$w.$s.log"
      n=$((n + 1))
      check_eq "$w/$s status" "$(last_result "$log" status)" ok
      check "$w/$s ran on the CPU" grep -q '^config .*device=cpu' "$log"
      check "$w/$s checked its outputs" grep -q '^check .*ok=1' "$log"
    done
  done
  check_eq "kernel logs" "$(count_paths "$1/logs"/*)" "$n"
}

"$runner" run experiment.yaml -c "$cluster" --local --device h100 -j 2 -q "${cells[@]}" >out-local 2>&1
check_eq "local run exit" "$?" 0
check_kernel_logs "$(current_run)" h100

if slurm_reachable && sinfo -h -o %P | tr -d '*' | grep -qx a100; then
  "$runner" run experiment.yaml -c "$cluster" --slurm --device a100 --poll 1 -q "${cells[@]}" >out-slurm 2>&1
  check_eq "slurm run exit" "$?" 0
  check_kernel_logs "$(current_run)" a100
else
  echo "no test cluster: the Slurm half is skipped"
fi
finish
