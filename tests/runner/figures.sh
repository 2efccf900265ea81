#!/usr/bin/env bash
# The shipped figure folders: every experiment.yaml validates against both cluster files,
# ./run.sh --dry-run prints the matrix and writes one array script per (experiment, device),
# and ./run_single.sh maps its words onto the right axes.
#   figures.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$1 work=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work"; mkdir -p "$work"
ln -s "$src/scripts" "$work/scripts"
touch "$work/.repro-root"   # {root} is $work, like the repository root
ln -s "$src/clusters" "$work/clusters"
export REPRO_RUN=$runner
# expected selected cells with the local test cluster (h100 + a100) and the arrays written
declare -A cells=([fig12]=158 [fig13]=64 [fig14]=40) arrays=([fig12]=4 [fig13]=2 [fig14]=2)
for f in fig12 fig13 fig14; do
  check "$f: backup_logs resolves" test -d "$src/$f/backup_logs"
  check "$f: run.sh executable" test -x "$src/$f/run.sh"
  for c in generic local-test; do
    check "$f validates with $c" "$runner" check "$src/$f/experiment.yaml" -c "$src/clusters/$c.yaml"
  done
  mkdir -p "$work/$f"
  cp "$src/$f/experiment.yaml" "$src/$f/run.sh" "$src/$f/run_single.sh" "$work/$f/"
  (cd "$work/$f" && ./run.sh --dry-run -c ../clusters/local-test.yaml >cells.txt 2>err.txt)
  check_eq "$f dry-run exit" "$?" 0
  check_eq "$f cells printed" "$(wc -l <"$work/$f/cells.txt")" "${cells[$f]}"
  check_eq "$f array scripts" "$(count_paths "$work/$f"/runs/dry-run-*/jobs/*.sbatch)" "${arrays[$f]}"
  check "$f: no ae_logs from a dry run" test ! -e "$work/$f/ae_logs"
  for s in "$work/$f"/runs/dry-run-*/jobs/*.sbatch; do
    check "$f script $(basename "$s") parses" bash -n "$s"
  done
done
# every fig12 cell of kernel/roco on both devices; then exactly one cell
out=$(cd "$work/fig12" && ./run_single.sh kernel roco --dry-run -c ../clusters/local-test.yaml 2>/dev/null | cut -f1 | sort | tr '\n' ' ')
check_eq "run_single kernel roco" "$out" "kernel.a100.roco.flashtensor.log kernel.a100.roco.fused.log kernel.a100.roco.inductor.log kernel.a100.roco.torch.log kernel.a100.roco.tvm-ms.log kernel.a100.roco.tvm.log kernel.a100.roco.unfused.log kernel.h100.roco.flashtensor.log kernel.h100.roco.fused.log kernel.h100.roco.inductor.log kernel.h100.roco.torch.log kernel.h100.roco.tvm-ms.log kernel.h100.roco.tvm.log kernel.h100.roco.unfused.log "
out=$(cd "$work/fig12" && ./run_single.sh kernel roco fused device=h100 --dry-run -c ../clusters/local-test.yaml 2>/dev/null | cut -f1)
check_eq "run_single kernel roco fused device=h100" "$out" "kernel.h100.roco.fused.log"
out=$(cd "$work/fig13" && ./run_single.sh fused 8192 --dry-run -c ../clusters/local-test.yaml --device a100 2>/dev/null | cut -f1)
check_eq "fig13 run_single fused 8192" "$out" "a100.fused.8192.log"
# options with values pass through; a user's --only narrows the positional words (AND)
out=$(cd "$work/fig12" && ./run_single.sh --only system=fused --dry-run -c ../clusters/local-test.yaml --device h100 2>/dev/null | cut -f1 | grep -c '^\(e2e\|kernel\)\.h100\..*\.fused\.log$')
check_eq "run_single --only system=fused (every fused cell of h100)" "$out" 14
out=$(cd "$work/fig12" && ./run_single.sh kernel --only=system=fused --only system=torch --device=h100 -n -c ../clusters/local-test.yaml 2>/dev/null | cut -f1 | grep -c '^kernel\.h100\..*\.\(fused\|torch\)\.log$')
check_eq "run_single kernel --only=... --only ... (each AND kernel)" "$out" 14
(cd "$work/fig12" && ./run_single.sh kernel rocco --dry-run -c ../clusters/local-test.yaml >/dev/null 2>err.txt)
check_eq "typo in a filter refused" "$?" 2
check "typo named" grep -q "workload=rocco" "$work/fig12/err.txt"
finish
