#!/usr/bin/env bash
# gpu_check.sh: every PyTorch peer system x workload on the GPU machine, at a small size and
# at S=4096, plus the e2e model at a small size and once at full size; logs under
# $OUT/peers/, a table on stdout (and in $OUT/peers/table.txt). Builds nothing; about 5 min.
#
#   OUT=/some/dir scripts/peers/gpu_check.sh        (PYTHON=python3 by default)
#
# The workloads are the registry's (registry.py names, kernels/attention/registry/workloads.def), the systems
# systems.py's that need no tuning budget (systems.py names; tvm-ms, MetaSchedule, has its own
# check, tvm_gpu_check.sh).
# Stages (their logs' names start with the stage):
#   small  S=256, H=32, D=128, every system x workload, PAR (6) at a time (checks matter, not
#          times);
#          alongside, the S=4096 inductor/flex cells run once without timing to fill the
#          compile cache (TORCHINDUCTOR_CACHE_DIR), so stage big reports a warm compile_s
#   big    S=4096 (B=1, H=32, D=128), every system x workload that was not unsupported at
#          the small size (that is decided by the workload's form, not its size), one at a
#          time, the kit's default 100 warmups and 10 runs
#   e2e    the Llama prefill, 4 layers, hidden 1024, 8 heads, mlp 2816, S=512, every system x
#          workload, PAR at a time; then e2efull: torch h2o at Llama-2-7B size, S=4096
# Each cell runs under `timeout`; a stage that would pass DEADLINE_S (default 290 s from
# the start) is skipped and says so.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-python3}
OUT=${OUT:-$PWD/peers-check-out}
DEADLINE_S=${DEADLINE_S:-290}
PAR=${PAR:-6}
logs="$OUT/peers"
mkdir -p "$logs" || { echo "gpu_check.sh: cannot create $logs" >&2; exit 1; }
# the compile cache stays out of $OUT (thousands of files nobody needs back)
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-${TMPDIR:-/tmp}/peers-inductor-cache}
start=$(date +%s)
mapfile -t workloads < <("$PYTHON" "$here/registry.py" names)
mapfile -t systems < <("$PYTHON" "$here/systems.py" names)
if [ ${#workloads[@]} -eq 0 ] || [ ${#systems[@]} -eq 0 ]; then
  echo "gpu_check.sh: no workload (registry.py names) or no system (systems.py names) listed" >&2
  exit 1
fi
small=(--seqlen 256 --heads 32 --dim 128 --warmup 10 --runs 10)
big=(--seqlen 4096 --heads 32 --dim 128 --warmup 100 --runs 10)
e2e=(--e2e --seqlen 512 --layers 4 --hidden 1024 --heads 8 --mlp 2816 --vocab 32000
     --warmup 2 --runs 5)
e2efull=(--e2e --seqlen 4096 --layers 32 --warmup 2 --runs 5)

elapsed() { echo $(( $(date +%s) - start )); }

# cell NAME TIMEOUT ARGS...: one peer.py run, stdout to NAME.log, stderr to NAME.err
cell() {
  local name=$1 limit=$2
  shift 2
  timeout -k 10 "$limit" "$PYTHON" "$here/peer.py" "$@" >"$logs/$name.log" 2>"$logs/$name.err"
  local rc=$?
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "result status=timeout source=gpu_check reason=\"killed after ${limit}s\"" >>"$logs/$name.log"
  fi
  printf '%4ss  exit %-3s %s\n' "$(elapsed)" "$rc" "$name"
}
export -f cell elapsed
export here PYTHON logs start

# jobs_for STAGE ARGS...: one line per system x workload, "NAME ARGS..." for xargs
jobs_for() {
  local stage=$1
  shift
  for w in "${workloads[@]}"; do
    for s in "${systems[@]}"; do
      echo "$stage.$w.$s --system $s --workload $w $*"
    done
  done
}

run_parallel() {  # LIMIT: cells from stdin, PAR at a time
  # shellcheck disable=SC2016  # $0 and $@ belong to the inner bash
  xargs -P "$PAR" -L 1 bash -c 'name=$0; cell "$name" '"$1"' "$@"'
}

before_deadline() {  # STAGE NEEDED_S
  if [ $(( $(elapsed) + $2 )) -gt "$DEADLINE_S" ]; then
    echo "gpu_check.sh: stage $1 skipped: $(elapsed)s spent, it needs about $2s of the ${DEADLINE_S}s"
    return 1
  fi
}

echo "gpu_check.sh: $("$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")' 2>&1 | tail -1)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null

echo "== stage small (and the S=4096 compile warm-up)"
{
  jobs_for small "${small[@]}"
  for w in "${workloads[@]}"; do
    for s in inductor flex; do
      echo "warm.$w.$s --system $s --workload $w --seqlen 4096 --warmup 0 --runs 1 --no-check"
    done
  done
} | run_parallel 240

if before_deadline big 150; then
  echo "== stage big (S=4096, one at a time)"
  jobs_for big "${big[@]}" | while read -r name args; do
    if grep -q '^result status=unsupported' "$logs/small.${name#big.}.log" 2>/dev/null; then
      continue
    fi
    # shellcheck disable=SC2086  # args are our own words
    cell "$name" 120 $args
  done
fi

if before_deadline e2e 40; then
  echo "== stage e2e (small model)"
  jobs_for e2e "${e2e[@]}" | run_parallel 200
fi

if before_deadline e2efull 30; then
  echo "== stage e2efull (Llama-2-7B shape, S=4096)"
  cell e2efull.h2o.torch 150 --system torch --workload h2o "${e2efull[@]}"
fi

echo "== table ($(elapsed)s)"
shopt -s nullglob
tabled=("$logs"/small.*.log "$logs"/big.*.log "$logs"/e2e.*.log "$logs"/e2efull.*.log)
"$PYTHON" "$here/log_table.py" "${tabled[@]}" | tee "$logs/table.txt"
status=${PIPESTATUS[0]}
echo "gpu_check.sh: done in $(elapsed)s; logs in $logs"
exit "$status"
