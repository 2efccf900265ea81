#!/usr/bin/env bash
# Runner benchmarks (numbers quoted in runner/README.md):
#   1. a 10,000-cell matrix: load + expand + render every command (`check`), and the same plus
#      printing the cells and writing its array scripts (`--dry-run`);
#   2. with the test cluster: the 10,000 cells submitted held (REPRO_SBATCH_ARGS=--hold), then
#      one poll of the whole run (`status`: one squeue over every task), then cancelled.
#   bench.sh REPRO_RUN WORK_DIR
set -u
runner=$1 work=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work"; mkdir -p "$work/fig"
cd "$work/fig" || exit 1
vals() { seq -f "$1%g" 1 "$2" | paste -sd, -; }
{
  echo "# benchmark matrix: 1 device x 100 workloads x 100 systems = 10,000 cells of /bin/true"
  echo "defaults: {n: 1}"
  echo "systems:"
  for i in $(seq 1 100); do echo "  s$i: {command: \"/bin/true {workload} {system} {n}\"}"; done
  echo "experiments:"
  echo "  big:"
  echo "    log: \"{experiment}.{device}.{workload}.{system}.log\""
  echo "    time_limit: 60"
  echo "    axes: {device: [h100], workload: [$(vals w 100)], system: [$(vals s 100)]}"
} >experiment.yaml
ms() { echo $(( ($2 - $1) / 1000000 )); }
t0=$(date +%s%N); "$runner" check experiment.yaml >/dev/null; t1=$(date +%s%N)
echo "expand + render 10000 cells (check):            $(ms "$t0" "$t1") ms"
t0=$(date +%s%N); "$runner" run experiment.yaml --dry-run -q >/dev/null 2>&1; t1=$(date +%s%N)
echo "expand + print + write array scripts (dry-run): $(ms "$t0" "$t1") ms ($(find runs/dry-run-*/jobs -mindepth 1 -maxdepth 1 | wc -l) scripts, $(cat runs/dry-run-*/jobs/* | wc -c) bytes)"

if ! command -v sinfo >/dev/null || ! sinfo -h -o %P 2>/dev/null | tr -d '*' | grep -qx h100; then
  echo "no test cluster: poll benchmark skipped"
  exit 0
fi
cluster="$src/clusters/local-test.yaml"
t0=$(date +%s%N)
REPRO_SBATCH_ARGS=--hold "$runner" run experiment.yaml -c "$cluster" --no-wait -q >submit.txt 2>&1
t1=$(date +%s%N)
manifest=$(ls runs/2*/manifest)
mapfile -t jobs < <(grep '^job ' "$manifest" | grep -o 'jobid=[0-9]*' | cut -d= -f2)
echo "submit 10000 cells as held arrays:              $(ms "$t0" "$t1") ms (${#jobs[@]} arrays)"
for i in 1 2 3; do
  t0=$(date +%s%N); "$runner" status . >status.txt 2>&1; t1=$(date +%s%N)
  echo "one poll of 10000 pending tasks (status):       $(ms "$t0" "$t1") ms ($(grep -o 'pending [0-9]*' status.txt))"
done
t0=$(date +%s%N); n=$(squeue -h -r -t all -j "$(IFS=,; echo "${jobs[*]}")" -o '%i|%T' | wc -l); t1=$(date +%s%N)
echo "  of which the squeue call ($n lines):       $(ms "$t0" "$t1") ms"
scancel "${jobs[@]}"
