#!/usr/bin/env bash
# kernels/gemm/gpu_check.sh: gemmbench's correctness sweep and benchmark, for a GPU machine
# (an H100: under 3 minutes). Builds nothing: it runs build/bin/gemmbench (built elsewhere
# and carried) over
#   1. every system (ref, cublas, wgmma, mma) x dtype (fp16, bf16, fp32) x shape (256x384x512,
#      1024^3, 4096^3, 8192^3) with --check (ref past its CPU cap and wgmma/mma in fp32 end
#      unsupported, with the reason: listed, not failures)
#   2. edge shapes (264x136x72: M, N and K edges at once; 1000x1000x1000) for wgmma at both
#      tile widths, wgmma --cluster 2 and mma, fp16 and bf16; the smallest in fp16 under
#      compute-sanitizer memcheck (but the cluster kernel); then wgmma --cluster 2 over the
#      matrix's shapes (fp16, bf16)
#   3. a negative control: wgmma with GEMM_TEST_FAULT=1 (one spoiled entry of C) must fail its
#      check (exit 5), so a sweep of passes means the checks can fail
#   4. the bench: 8192^3 fp16, cublas vs wgmma (and wgmma --cluster 2) vs mma (and the
#      PyTorch peer where torch imports), --runs 20
# Each case has a time limit (a hung kernel is killed and reported TIMEOUT; after one, the
# system's remaining cases are skipped so the sweep stays short). Logs go to OUTDIR/logs/,
# the summary (one line per case: system, shape, dtype, status, ms, TFLOP/s, check) to
# stdout and OUTDIR/summary.txt.
#
#   kernels/gemm/gpu_check.sh OUTDIR [--bin PATH] [--no-sanitizer] [--no-peer] [--limit S]
# (--limit: seconds per case, default 30, three times that under memcheck)
# Exit 0 when nothing failed (unsupported cells are listed, not failures), 1 otherwise.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prog=gpu_check.sh
# shellcheck source=kernels/script_lib.sh
. "$root/kernels/script_lib.sh"
bin=$root/build/bin/gemmbench
sanitize=1
peer=1
limit=30
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) need_value "$@"; bin=$2; shift ;;
    --no-sanitizer) sanitize=0 ;;
    --no-peer) peer=0 ;;
    --limit) need_value "$@"; limit=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) die_usage "unknown option '$1'" ;;
    *) [ -z "$out" ] || die_usage "one OUTDIR only (got '$out' and '$1')"; out=$1 ;;
  esac
  shift
done
[ -n "$out" ] || die_usage "OUTDIR is required"
need_int --limit "$limit" 1
[ -x "$bin" ] || { echo "$prog: $bin is not an executable (build it and carry build/)" >&2; exit 1; }
mkdir -p "$out/logs" || exit 1
rm -f "$out"/logs/*.log "$out"/logs/*.err "$out/results.txt"
results=$out/results.txt
: >"$results"

sanitizer=""
if [ "$sanitize" = 1 ]; then
  sanitizer=$(command -v compute-sanitizer || true)
  [ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && sanitizer=/usr/local/cuda/bin/compute-sanitizer
  [ -z "$sanitizer" ] && echo "$prog: compute-sanitizer not found; running without memcheck" >&2
fi
python=${GEMM_PEER_PYTHON:-python3}
if [ "$peer" = 1 ] && ! "$python" -c 'import torch' 2>/dev/null; then
  echo "$prog: $python cannot import torch: the PyTorch peer is left out of the bench" >&2
  peer=0
fi

# value KEY LOG: the last result line's KEY (unquoted values only), or "-"
value() { grep '^result ' "$2" 2>/dev/null | tail -1 | grep -o " $1=[^ ]*" | head -1 | cut -d= -f2 | grep . || echo -; }
# check_of LOG: ok / FAIL (with the failing outputs) / - when no check line; plus c's rel_l2
check_of() {
  awk '/^check /{n++; o=""; r=""; k=""; s="";
         for(i=2;i<=NF;i++){split($i,a,"="); if(a[1]=="output")o=a[2]; if(a[1]=="rel_l2")r=a[2];
                            if(a[1]=="ok")k=a[2]; if(a[1]=="sampled")s=a[2]}
         if(k!="1") bad=bad " " o; if(o=="c"){rel=r; smp=s}}
       END{ if(!n){print "-"; exit}
            if(bad!="") printf "FAIL:%s", bad; else printf "ok";
            if(rel!="") printf " (c rel_l2 %s%s)", rel, (smp!="" ? ", sampled " smp : ", full");
            printf "\n"}' "$1"
}

declare -A hung
# run_case NAME SYSTEM SHAPE DTYPE TOOL [ENV=VAL] -- ARGS...: one gemmbench (or peer) run and
# one summary record: name|system|shape|dtype|status|ms|tflops|check
run_case() {
  local name=$1 sys=$2 shape=$3 dt=$4 tool=$5; shift 5
  local envs=() cmd=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  local log=$out/logs/$name.log err=$out/logs/$name.err rc status lim=$limit
  local base=${sys%-128} # wgmma-128/-256 and wgmma share a kernel: one timeout skips all
  base=${base%-256}
  if [ -n "${hung[$base]:-}" ]; then
    printf '%s|%s|%s|%s|SKIPPED|-|-|after a timeout of %s\n' "$name" "$sys" "$shape" "$dt" "$base" >>"$results"
    return
  fi
  if [ "$sys" = pytorch ]; then cmd=("$python" "$root/scripts/peers/gemm.py"); else cmd=("$bin"); fi
  if [ "$tool" = memcheck ] && [ -n "$sanitizer" ]; then
    cmd=("$sanitizer" --tool memcheck --error-exitcode 99 --print-limit 20 "${cmd[@]}")
    lim=$((limit * 3))
  fi
  env "${envs[@]}" timeout -k 5 "$lim" "${cmd[@]}" "$@" >"$log" 2>"$err"
  rc=$?
  case $rc in
    0) status=PASS ;; 3) status=OOM ;; 4) status=UNSUP ;; 5) status=FAIL ;; 99) status=MEMCHECK ;;
    124|137) status=TIMEOUT; hung[$base]=1 ;; *) status=ERROR ;;
  esac
  if [ "$tool" = memcheck ] && grep -q "ERROR SUMMARY: [1-9]" "$log" "$err" 2>/dev/null; then status=MEMCHECK; fi
  local ms tf chk
  ms=$(value avg_ms "$log")
  tf=$(value gflops_s "$log")
  [ "$tf" != - ] && tf=$(awk -v g="$tf" 'BEGIN{printf "%.1f", g / 1000}')
  chk=$(check_of "$log")
  if [ "$status" != PASS ] && [ "$status" != FAIL ]; then
    local why
    why=$(grep -o 'reason=.*' "$log" | tail -1)
    [ -z "$why" ] && why="exit $rc: $(tail -1 "$err" 2>/dev/null)"
    chk="$chk $why"
  fi
  [ "$status" = PASS ] && [ "${chk%% *}" = - ] && status=OK # ran, nothing to check (bench)
  printf '%s|%s|%s|%s|%s|%s|%s|%s\n' "$name" "$sys" "$shape" "$dt" "$status" "$ms" "$tf" "$chk" >>"$results"
}

mnk() { local s=$1; echo "--m ${s%%x*} --n $(echo "$s" | cut -dx -f2) --k ${s##*x}"; }
# sys_args LABEL: gemmbench's options for a case label (wgmma-128: --tile-n 128, wgmma-c2:
# --cluster 2, anything else: the system itself)
sys_args() {
  case $1 in
    wgmma-128|wgmma-256) echo "--system wgmma --tile-n ${1#wgmma-}" ;;
    wgmma-c2) echo "--system wgmma --cluster 2" ;;
    *) echo "--system $1" ;;
  esac
}

t0=$(date +%s)
# 1. the matrix (small shapes first: a broken kernel shows at once)
for shape in 256x384x512 1024x1024x1024 4096x4096x4096 8192x8192x8192; do
  for sys in ref cublas wgmma mma; do
    runs=(--warmup 2 --runs 5)
    [ "$sys" = ref ] && runs=(--warmup 0 --runs 1) # the CPU: seconds per run at 1024^3
    for dt in fp16 bf16 fp32; do
      # shellcheck disable=SC2046  # mnk prints separate words
      run_case "$sys.$shape.$dt" "$sys" "$shape" "$dt" plain -- --system "$sys" $(mnk "$shape") \
        --dtype "$dt" --check "${runs[@]}"
    done
  done
done
# 2. edges: both wgmma tile widths and mma; the smallest shape under memcheck
for shape in 264x136x72 1000x1000x1000; do
  for dt in fp16 bf16; do
    for label in wgmma-128 wgmma-256 wgmma-c2 mma; do
      tool=plain # memcheck: the smallest shape, not the cluster kernel (multicast into a peer)
      [ "$shape.$dt" = 264x136x72.fp16 ] && [ "$label" != wgmma-c2 ] && tool=memcheck
      # shellcheck disable=SC2046
      run_case "edge.$label.$shape.$dt" "$label" "$shape" "$dt" "$tool" -- $(sys_args "$label") \
        $(mnk "$shape") --dtype "$dt" --check --warmup 1 --runs 2
    done
  done
done
# 2b. wgmma with clusters of 2 CTAs (B multicast), the matrix's shapes in fp16 and bf16
for shape in 256x384x512 1024x1024x1024 4096x4096x4096 8192x8192x8192; do
  for dt in fp16 bf16; do
    # shellcheck disable=SC2046
    run_case "cluster.wgmma-c2.$shape.$dt" wgmma-c2 "$shape" "$dt" plain -- $(sys_args wgmma-c2) \
      $(mnk "$shape") --dtype "$dt" --check --warmup 2 --runs 5
  done
done
# 3. the negative control: the check must catch one spoiled entry (exit 5)
# shellcheck disable=SC2046
run_case control.wgmma-fault wgmma 4096x4096x4096 fp16 plain GEMM_TEST_FAULT=1 -- --system wgmma \
  $(mnk 4096x4096x4096) --dtype fp16 --check --warmup 0 --runs 1
sed -i 's/^\(control\.[^|]*|[^|]*|[^|]*|[^|]*|\)FAIL|/\1CAUGHT|/; s/^\(control\.[^|]*|[^|]*|[^|]*|[^|]*|\)PASS|/\1MISSED|/' "$results"
# 4. the bench
bench_sys="cublas wgmma wgmma-c2 mma"
[ "$peer" = 1 ] && bench_sys="$bench_sys pytorch"
for sys in $bench_sys; do
  # shellcheck disable=SC2046
  run_case "bench.$sys" "$sys" 8192x8192x8192 fp16 plain -- $(sys_args "$sys") \
    $(mnk 8192x8192x8192) --dtype fp16 --no-check --warmup 10 --runs 20
done
t1=$(date +%s)

summary=$out/summary.txt
{
  printf '%-10s %-10s %-16s %-5s %-8s %9s %8s %s\n' CASE SYSTEM SHAPE DTYPE STATUS MS TFLOP/s CHECK
  awk -F'|' '{kind=$1; sub(/\..*/, "", kind); if (kind !~ /^(bench|edge|control|cluster)$/) kind = "check";
              printf "%-10s %-10s %-16s %-5s %-8s %9s %8s %s\n", kind, $2, $3, $4, $5, $6, $7, $8}' "$results"
  echo
  cub=$(awk -F'|' '$1 == "bench.cublas" {print $6}' "$results")
  awk -F'|' -v cub="$cub" '$1 ~ /^bench\./ && $6 != "-" && cub != "-" && cub != "" {
      printf "bench 8192^3 fp16: %-8s %8s ms %8s TFLOP/s  %5.1f %% of cublas\n", $2, $6, $7, 100 * cub / $6}' "$results"
  awk -F'|' '{n[$5]++; t++} END {printf "%d cases:", t; for (s in n) printf " %s=%d", s, n[s]; printf "\n"}' "$results"
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "memcheck: ${sanitizer:-off}; wall: $((t1 - t0)) s; logs: $out/logs"
} | tee "$summary"

if grep -qE '^[^|]*\|[^|]*\|[^|]*\|[^|]*\|(FAIL|ERROR|MEMCHECK|OOM|TIMEOUT|SKIPPED|MISSED)\|' "$results"; then exit 1; fi
exit 0
