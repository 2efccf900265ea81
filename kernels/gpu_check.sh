#!/usr/bin/env bash
# kernels/gpu_check.sh: correctness sweep of the GPU systems, for a GPU machine. Builds
# nothing: it runs build/bin/attnvar (built elsewhere and carried) over
#   every workload (attnvar --list-workloads) x {unfused, fused, fused --force-sm80,
#   fused --sm90-fwd lockstep (the v4-v8 Hopper forward; the default is warp-specialized)}
#   x odd sizes (S = 1, 17, 100, 257; heads 1..3; dim 64 and 128; batch 2 once), causal,
#     and without a mask (--causal 0), and one bf16 shape (unsupported where a system is fp16
#     only), the smallest ones under compute-sanitizer memcheck (cuBLAS included); three
#     shapes have more query tiles than an H100 has SMs, so the persistent Hopper forward's
#     CTAs walk several tiles each (the K/V ring and the Q reload across tiles)
#   x the benchmark size S = 4096, H = 32, D = 128, causal and not (checked against the fp32
#     GPU reference)
# every run with --check (outputs poisoned, every output compared). Logs go to
# $OUT/gpu_check/logs/, the pass/fail table to stdout and $OUT/gpu_check/table.txt.
#
#   kernels/gpu_check.sh [--no-sanitizer] [--no-small|--no-big] [--jobs N] [--bin PATH]
# Exit 0 when nothing failed (unsupported cells are listed, not failures), 1 otherwise.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prog=gpu_check.sh
# shellcheck source=kernels/script_lib.sh
. "$root/kernels/script_lib.sh"
bin=$root/build/bin/attnvar
jobs=4
sanitize=1
big=1
small=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-sanitizer) sanitize=0 ;;
    --no-big) big=0 ;;
    --no-small) small=0 ;;
    --jobs) need_value "$@"; jobs=$2; shift ;;
    --bin) need_value "$@"; bin=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die_usage "unknown argument '$1'" ;;
  esac
  shift
done
need_int --jobs "$jobs" 1
[ -x "$bin" ] || { echo "$prog: $bin is not an executable (build it and carry build/)" >&2; exit 1; }
workloads=$(workloads_of "$bin") || exit 1

out=${OUT:-$root/build}/gpu_check
mkdir -p "$out/logs" "$out/results"
rm -f "$out"/results/*.res

sanitizer=""
if [ "$sanitize" = 1 ]; then
  sanitizer=$(command -v compute-sanitizer || true)
  [ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && sanitizer=/usr/local/cuda/bin/compute-sanitizer
  [ -z "$sanitizer" ] && echo "$prog: compute-sanitizer not found; running without memcheck" >&2
fi

systems="unfused fused fused-sm80 fused-lockstep"
# name:args of the shapes; the ones marked memcheck also run under compute-sanitizer
small_shapes="s1:--seqlen 1 --heads 1 --dim 64:memcheck
s17:--seqlen 17 --heads 2 --dim 128:memcheck
s100:--seqlen 100 --heads 3 --dim 64:memcheck
s257:--seqlen 257 --heads 1 --dim 128:plain
s257b2:--seqlen 257 --heads 2 --dim 64 --batch 2:plain
s1000:--seqlen 1000 --heads 1 --dim 128:plain
s100nc:--seqlen 100 --heads 3 --dim 64 --causal 0:memcheck
s257nc:--seqlen 257 --heads 2 --dim 128 --causal 0 --batch 2:plain
s17bf16:--seqlen 17 --heads 2 --dim 128 --dtype bf16:plain
s300h48:--seqlen 300 --heads 48 --dim 128:memcheck
s400h60d64:--seqlen 400 --heads 60 --dim 64:memcheck
s1000h40b3:--seqlen 1000 --heads 40 --dim 64 --batch 3 --causal 0:plain"
big_shape="s4096:--seqlen 4096 --heads 32 --dim 128:plain
s4096nc:--seqlen 4096 --heads 32 --dim 128 --causal 0:plain"

# One case: run attnvar (maybe under memcheck), classify, write one .res line:
#   name|status|detail   status: PASS FAIL UNSUP ERROR OOM MEMCHECK
run_case() {
  local name=$1 tool=$2; shift 2
  local log=$out/logs/$name.log err=$out/logs/$name.err rc status detail
  if [ "$tool" = memcheck ] && [ -n "$sanitizer" ]; then
    "$sanitizer" --tool memcheck --error-exitcode 99 --print-limit 20 "$bin" "$@" >"$log" 2>"$err"
  else
    "$bin" "$@" >"$log" 2>"$err"
  fi
  rc=$?
  case $rc in
    0) status=PASS ;; 3) status=OOM ;; 4) status=UNSUP ;; 5) status=FAIL ;; 99) status=MEMCHECK ;;
    *) status=ERROR ;;
  esac
  # memcheck may also report and keep the program's exit code
  if [ "$tool" = memcheck ] && grep -q "ERROR SUMMARY: [1-9]" "$log" "$err" 2>/dev/null; then status=MEMCHECK; fi
  if [ "$status" = PASS ] || [ "$status" = FAIL ]; then
    detail=$(awk '/^check /{o="";r="";k="";for(i=2;i<=NF;i++){split($i,a,"=");if(a[1]=="output")o=a[2];if(a[1]=="rel_l2")r=a[2];if(a[1]=="ok")k=a[2]}
                  printf "%s%s=%s%s", sep, o, r, (k=="1"?"":"(FAIL)"); sep=" "}' "$log")
  else
    detail=$(grep -o 'reason=.*' "$log" | tail -1)
    [ -z "$detail" ] && detail="exit $rc: $(tail -1 "$err")"
  fi
  printf '%s|%s|%s\n' "$name" "$status" "$detail" >"$out/results/$name.res"
}
export -f run_case
export bin out sanitizer

# The case list: name, tool, attnvar arguments (one per line, fields split by spaces).
cases=$out/cases.txt
: >"$cases"
add_cases() { # shapes-text
  local line shape args tool wl sys sysargs
  while IFS= read -r line; do
    [ -z "$line" ] && continue
    shape=${line%%:*}; args=${line#*:}; tool=${args##*:}; args=${args%:*}
    for wl in $workloads; do
      for sys in $systems; do
        sysargs="--system $sys"
        [ "$sys" = fused-sm80 ] && sysargs="--system fused --force-sm80"
        [ "$sys" = fused-lockstep ] && sysargs="--system fused --sm90-fwd lockstep"
        echo "$wl.$sys.$shape $tool --workload $wl $sysargs $args --check --warmup 1 --runs 2" >>"$cases"
      done
    done
  done <<<"$1"
}
[ "$small" = 1 ] && add_cases "$small_shapes"
[ "$big" = 1 ] && add_cases "$big_shape"

t0=$(date +%s)
# small cells in parallel; the big ones (GB of memory each) one at a time
grep -v '\.s4096' "$cases" | xargs -P "$jobs" -L 1 bash -c 'run_case "$@"' _
grep '\.s4096' "$cases" | xargs -P 1 -L 1 bash -c 'run_case "$@"' _
t1=$(date +%s)

table=$out/table.txt
{
  printf '%-28s %-8s %s\n' CASE STATUS "DETAIL (rel_l2 per output, or reason)"
  cat "$out"/results/*.res | sort | awk -F'|' '{printf "%-28s %-8s %s\n", $1, $2, $3}'
  echo
  cat "$out"/results/*.res | sort | awk -F'|' '{n[$2]++; t++} END {printf "%d cases:", t; for (s in n) printf " %s=%d", s, n[s]; printf "\n"}'
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "memcheck: ${sanitizer:-off}; wall: $((t1 - t0)) s; logs: $out/logs"
} | tee "$table"

if grep -qE '\|(FAIL|ERROR|MEMCHECK|OOM)\|' "$out"/results/*.res; then exit 1; fi
exit 0
