#!/usr/bin/env bash
# The local executor on a machine with several GPUs, faked: a stub nvidia-smi lists them and a
# stub cell program records the GPU it was pinned to (CUDA_VISIBLE_DEVICES, REPRO_GPU_INDEX)
# and when it ran. Checks: one cell per GPU at a time, every GPU used, --gpus N|LIST, -j,
# CUDA_VISIBLE_DEVICES, GPUs of two models refused, bad --gpus refused before any cell runs,
# no pinning without GPUs, a failed cell on one GPU, and a killed runner resumed.
#   multi_gpu.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$1 work=$2
rm -rf "$work"; mkdir -p "$work/bin" "$work/fig"
work=$(cd "$work" && pwd)
export REPRO_KILL_GRACE_S=1
unset CUDA_VISIBLE_DEVICES REPRO_GPU_INDEX REPRO_GPU_UUID

# nvidia-smi stub: $STUB_GPUS rows "index, uuid, name" (the query the runner makes), or fails
# when STUB_GPUS is "fail".
cat >"$work/bin/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
# STUB nvidia-smi for the runner's tests: prints $STUB_GPUS, not a real GPU list.
[ "${STUB_GPUS:-}" = fail ] && exit 9
printf '%b' "$STUB_GPUS"
EOF
# cell stub: sleeps, then appends "pin index start_ns end_ns cell" to $work/ran and prints a
# log in the contract; workload "f" fails.
cat >"$work/bin/cell.sh" <<'EOF'
#!/usr/bin/env bash
# STUB cell program for the runner's tests: records its GPU pinning, measures nothing.
t0=$(date +%s%N)
echo "# repro-log 1"
echo "meta gpu=none stub=1"
echo "config workload=$1 system=$2 device=cpu impl=stub"
sleep "$3"
t1=$(date +%s%N)
echo "${CUDA_VISIBLE_DEVICES:-unset} ${REPRO_GPU_INDEX:-unset} $t0 $t1 $1.$2" >>"$4"
if [ "$1" = f ]; then echo 'result status=error reason="stub asked to fail"'; exit 1; fi
echo "result status=ok avg_ms=1 median_ms=1 min_ms=1 max_ms=1 runs=1 warmup=0"
EOF
chmod +x "$work/bin/nvidia-smi" "$work/bin/cell.sh"
export PATH="$work/bin:$PATH"
two_h100='0, GPU-aaaa1111-0000-0000-0000-000000000000, NVIDIA H100 80GB HBM3\n1, GPU-bbbb2222-0000-0000-0000-000000000000, NVIDIA H100 80GB HBM3\n'
uuid0=GPU-aaaa1111-0000-0000-0000-000000000000 uuid1=GPU-bbbb2222-0000-0000-0000-000000000000

# $1: the workloads of the matrix (YAML flow list)
matrix() {
  cat >"$work/fig/experiment.yaml" <<EOF
# test matrix: the stub cell program, not the kernels
figure: gpufig
defaults: {ran: "$work/ran", cell: "$work/bin/cell.sh"}
systems:
  s: {command: "{cell} {workload} {system} 0.6 {ran}"}
experiments:
  main:
    log: "{experiment}.{device}.{workload}.{system}.log"
    time_limit: 60
    axes: {device: [h100], workload: $1, system: [s]}
EOF
}

# Runs the matrix as a new run; $work/ran holds what ran. Prints the runner's exit code.
run_matrix() {
  rm -f "$work/ran"
  (cd "$work/fig" && "$runner" run experiment.yaml --local --device h100 "$@" >"$work/out" 2>&1)
  echo $?
}

# The most cells whose [start, end) intervals overlap, over all cells or those of one pin.
max_overlap() {
  awk -v pin="${1:-}" 'pin == "" || $1 == pin { print $3, 1; print $4, -1 }' "$work/ran" |
    sort -k1,1n -k2,2n | awk '{ n += $2; if (n > m) m = n } END { print m + 0 }'
}
pins() { awk '{ print $1 }' "$work/ran" | sort -u | tr '\n' ' '; }

matrix "[a, b, c, d, e, g]"

# 1. every GPU, one cell per GPU at a time
export STUB_GPUS=$two_h100
check_eq "default: exit" "$(run_matrix)" 0
check_eq "default: all cells ran" "$(wc -l <"$work/ran")" 6
check_eq "default: both GPUs used" "$(pins)" "$uuid0 $uuid1 "
check_eq "default: two cells at once" "$(max_overlap)" 2
check_eq "default: never two on GPU 0" "$(max_overlap "$uuid0")" 1
check_eq "default: never two on GPU 1" "$(max_overlap "$uuid1")" 1
# shellcheck disable=SC2016  # an awk program: $1 and $2 are its fields
check "default: index follows the pin" awk -v u0="$uuid0" -v u1="$uuid1" \
  '!(($1 == u0 && $2 == 0) || ($1 == u1 && $2 == 1)) { bad = 1 } END { exit bad }' "$work/ran"
check "default: the GPUs are announced" grep -q "2 GPU(s) NVIDIA H100 80GB HBM3 0 ($uuid0), 1 ($uuid1)" "$work/out"

# 2. --gpus N, --gpus LIST, -j
check_eq "--gpus 1: exit" "$(run_matrix --gpus 1)" 0
check_eq "--gpus 1: GPU 0 only" "$(pins)" "$uuid0 "
check_eq "--gpus 1: one at a time" "$(max_overlap)" 1
check_eq "--gpus 1,: exit" "$(run_matrix --gpus 1,)" 0
check_eq "--gpus 1,: GPU 1 only" "$(pins)" "$uuid1 "
check_eq "--gpus by UUID: exit" "$(run_matrix --gpus "$uuid1,$uuid0")" 0
check_eq "--gpus by UUID: both" "$(pins)" "$uuid0 $uuid1 "
check_eq "-j 1: exit" "$(run_matrix -j 1)" 0
check_eq "-j 1: one at a time" "$(max_overlap)" 1
check_eq "-j 4: exit" "$(run_matrix -j 4)" 0
check_eq "-j 4: still one cell per GPU" "$(max_overlap)" 2
check "-j 4: says why" grep -q -- "-j 4 > 2 GPU(s): timing cells never share a GPU" "$work/out"

# 3. CUDA_VISIBLE_DEVICES narrows the machine
check_eq "CUDA_VISIBLE_DEVICES=1: exit" "$(CUDA_VISIBLE_DEVICES=1 run_matrix)" 0
check_eq "CUDA_VISIBLE_DEVICES=1: GPU 1 only" "$(pins)" "$uuid1 "
check_eq "CUDA_VISIBLE_DEVICES=7: refused" "$(CUDA_VISIBLE_DEVICES=7 run_matrix)" 2
check "CUDA_VISIBLE_DEVICES=7: named" grep -q "CUDA_VISIBLE_DEVICES names GPU '7'" "$work/out"

# 4. bad --gpus: refused before anything runs
for spec in 3 0 "7," "x;rm -rf /" "GPU-zz" ","; do
  check_eq "--gpus '$spec': exit 2" "$(run_matrix --gpus "$spec")" 2
  check "--gpus '$spec': nothing ran" test ! -e "$work/ran"
done
check "--gpus 3: says how many" grep -q -- "--gpus 3: this machine offers 2 GPU(s)" <(run_matrix --gpus 3 >/dev/null; cat "$work/out")

# 5. two models: refused unless --gpus picks one
export STUB_GPUS='0, GPU-aaaa1111-0000-0000-0000-000000000000, NVIDIA H100 80GB HBM3\n1, GPU-cccc3333-0000-0000-0000-000000000000, NVIDIA A100-SXM4-80GB\n'
check_eq "two models: refused" "$(run_matrix)" 2
check "two models: named" grep -q "GPUs 0 (NVIDIA H100 80GB HBM3) and 1 (NVIDIA A100-SXM4-80GB) are different models" "$work/out"
check_eq "two models, --gpus 0,: exit" "$(run_matrix --gpus 0,)" 0
check_eq "two models, --gpus 0,: GPU 0" "$(pins)" "$uuid0 "

# 6. no GPU (nvidia-smi fails): unpinned, -j as before
export STUB_GPUS=fail
check_eq "no GPU: exit" "$(run_matrix -j 3)" 0
check_eq "no GPU: unpinned" "$(pins)" "unset "
check_eq "no GPU: -j 3" "$(max_overlap)" 3
check_eq "no GPU, --gpus 2: refused" "$(run_matrix --gpus 2)" 2

# 7. a failing cell on one GPU; the others run on
export STUB_GPUS=$two_h100
matrix "[a, f, c, d]"
check_eq "failed cell: exit 1" "$(run_matrix)" 1
check_eq "failed cell: all cells ran" "$(wc -l <"$work/ran")" 4
check "failed cell: named in the summary" grep -q "main.h100.f.s.log" "$work/out"

# 8. killed after its second start, then resumed on both GPUs: every cell gets a good log
matrix "[a, b, c, d, e, g]"
rm -f "$work/ran"
(cd "$work/fig" && REPRO_RUN_TEST_KILL=local-start:2 "$runner" run experiment.yaml --local --device h100 -q >"$work/out" 2>&1)
check_eq "killed runner" "$?" 137
(cd "$work/fig" && "$runner" run experiment.yaml --local --device h100 --resume -q >"$work/out" 2>&1)
check_eq "resume: exit" "$?" 0
run=$(cd "$work/fig" && readlink -f ae_logs)
good=$(grep -l '^result status=ok' "$run"/*.log 2>/dev/null | wc -l)
check_eq "resume: six good logs" "$good" 6
check_eq "resume: one cell per GPU" "$(max_overlap "$uuid0")" 1
finish
