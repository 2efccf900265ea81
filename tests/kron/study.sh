#!/usr/bin/env bash
# The study studies/kron-layer/: its experiment.yaml validates with both cluster files, the
# dry run prints the whole matrix, a CPU-mode local run of the small shape through the shipped
# wrappers (ours: every version, both passes, both dtypes; one peer) ends every cell with a
# good status, run_single.sh maps its words onto the axes, and plot.sh draws from the logs.
#   study.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/../runner/lib.sh"
runner=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") work=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$(dirname "$runner")/.." && pwd)
[ -x "$build/bin/kronlayer" ] || skip "kronlayer is not built"
scratch_repo "$work" studies/kron-layer
cp "$src/studies/kron-layer/"{experiment.yaml,run.sh,run_single.sh,plot.sh} "$study/"
export REPRO_RUN=$runner REPRO_BUILD_DIR=$build
cluster=$repo/clusters/local-test.yaml

check "backup_logs resolves" test -d "$src/studies/kron-layer/backup_logs"
for c in generic local-test; do
  check "validates with $c" "$runner" check "$src/studies/kron-layer/experiment.yaml" -c "$src/clusters/$c.yaml"
done

# dry run: 4 experiments x 4 shapes x 5 systems, one array per experiment
(cd "$study" && ./run.sh --dry-run --local -c "$cluster" >cells.txt 2>err.txt)
check_eq "dry-run exit" "$?" 0
check_eq "cells" "$(wc -l <"$study/cells.txt")" 80
check_eq "array scripts" "$(count_paths "$study"/runs/dry-run-*/jobs/*.sbatch)" 4
line=$(grep '^bwd-d.h100.8x64x64x64.v3.log' "$study/cells.txt" | cut -f2)
check_eq "a cell's command" "$line" \
  "$build/bin/kronlayer --impl v3 --shape 8x64x64x64 --dtype d --pass bwd --warmup 1 --runs 2 --device cpu --check bench"
check "a peer's command" grep -q "^fwd-f.h100.16x32x32.torch-naive.log	python3 $repo/scripts/peers/kron.py --system torch-naive --shape 16x32x32 --dtype f --pass fwd" "$study/cells.txt"
out=$(cd "$study" && ./run_single.sh bwd-f 32x128x128 v2 --dry-run --local -c "$cluster" 2>/dev/null | cut -f1)
check_eq "run_single bwd-f 32x128x128 v2" "$out" "bwd-f.h100.32x128x128.v2.log"

# a local CPU run of the small shape: ours (12 cells) and one peer (4 cells: ok with torch,
# unsupported without)
# shellcheck disable=SC2054 # the commas are inside --only's values
only=(--only workload=16x32x32,system=v1 --only workload=16x32x32,system=v2
      --only workload=16x32x32,system=v3 --only workload=16x32x32,system=torch-v2)
(cd "$study" && ./run.sh --local --device h100 -c "$cluster" -q "${only[@]}" >out.txt 2>&1)
check_eq "local run exit" "$?" 0
for e in fwd-f bwd-f fwd-d bwd-d; do
  for s in v1 v2 v3; do
    log=$study/ae_logs/$e.h100.16x32x32.$s.log
    check_eq "$e $s ok" "$(last_result "$log" status)" ok
    check "$e $s checked" grep -q "^check output=gA2.$s .*ok=1" "$log"
  done
  st=$(last_result "$study/ae_logs/$e.h100.16x32x32.torch-v2.log" status)
  check "$e torch-v2 ok or unsupported ($st)" test "$st" = ok -o "$st" = unsupported
done
check "a bwd cell times the backward" grep -q '^config workload=16x32x32 system=v3 mode=bench pass=bwd .*dtype=fp64' \
  "$study/ae_logs/bwd-d.h100.16x32x32.v3.log"

# gpu_run.sh (the GPU session script): a usage error, and --torch where python has no CUDA torch
# skips the extension, saying why (the GPU label from REPRO_DEVICE: no nvidia-smi here)
REPRO_BUILD_DIR=$build OUT=$work/gpu "$src/studies/kron-layer/gpu_run.sh" --bogus >/dev/null 2>&1
check_eq "gpu_run.sh: usage error" "$?" 2
REPRO_BUILD_DIR=$build REPRO_DEVICE=h200 REPRO_PYTHON=$work/no-python OUT=$work/gpu \
  "$src/studies/kron-layer/gpu_run.sh" --torch >"$work/gpu.txt" 2>&1
check_eq "gpu_run.sh --torch without torch: exit" "$?" 0
check "gpu_run.sh --torch: says why it skipped" grep -q "no-python has no CUDA torch: kronlayer_torch not built" "$work/gpu/summary.txt"

# plot.sh draws from ae_logs with the study's log name
(cd "$study" && ./plot.sh --out "$work/figs" --no-render >plot.txt 2>&1)
check_eq "plot exit" "$?" 0
check "plot read the logs" grep -q "logs read from .*ae_logs" "$study/plot.txt"
for f in kron_fwd_f kron_bwd_f kron_fwd_d kron_bwd_d; do
  check "$f data" test -s "$work/figs/$f.dat"
done
finish
