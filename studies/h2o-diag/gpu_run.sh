#!/usr/bin/env bash
# The study on a GPU machine, building nothing (build/bin comes with the working tree):
#   (a) correctness of fused-diag: k in {0, 1, 2, 4, 31} x cache {fp32, fp16} on the wgmma
#       path and with --force-sm80, at S = 1, 17, 100, 257, 1000 (D 64 and 128, H 1..3,
#       batch 2 once, one shape without a mask; h2o, and roco and snapkv once each), two
#       shapes under compute-sanitizer memcheck, and S = 4096 H = 32 (fp32 GPU reference);
#       plus the fused system on both paths: k = 0's check lines must be identical to its
#       (k = 0 runs fused's kernels), and so must out's at k > 0 (the same forward with the
#       cache hook);
#   (b) the study's matrix (experiment.yaml) with the local executor.
# Everything lands in $OUT (default ./gpu-run-out): gpu_check/ (logs, table.txt), the run
# folder packed as h2o-diag-run.tgz, the logs in logs/, figures/ from ./plot_diag.sh.
#   studies/h2o-diag/gpu_run.sh [--no-matrix] [--no-check] [--jobs N]
# Exit 0 when every check passed and every cell of the matrix ended ok (or unsupported where
# the system cannot run here), 1 otherwise.
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ]; do [ "$PWD" != / ] || exit; cd ..; done && pwd) ||
  { echo "$0: no .repro-root above this folder" >&2; exit 2; }
# shellcheck source=scripts/lib/root.sh
. "$root/scripts/lib/root.sh"
set -uo pipefail
bin=$root/build/bin/attnvar
out=${OUT:-$here/gpu-run-out}
jobs=4 matrix=1 check=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-matrix) matrix=0 ;;
    --no-check) check=0 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift ;;
    -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "gpu_run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$bin" ] || { echo "gpu_run.sh: $bin is not built (build it and carry build/)" >&2; exit 1; }
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
t0=$(date +%s)
failed=0

if [ "$check" = 1 ]; then
  gc=$out/gpu_check
  mkdir -p "$gc/logs" "$gc/results"
  rm -f "$gc"/results/*.res
  sanitizer=$(command -v compute-sanitizer || true)
  [ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && sanitizer=/usr/local/cuda/bin/compute-sanitizer
  # name tool args: one case a line
  cases=$gc/cases.txt
  : >"$cases"
  shapes="s1|--seqlen 1 --heads 1 --dim 64
s17|--seqlen 17 --heads 2 --dim 128
s100|--seqlen 100 --heads 3 --dim 64
s257|--seqlen 257 --heads 1 --dim 128
s257b2|--seqlen 257 --heads 2 --dim 64 --batch 2
s1000|--seqlen 1000 --heads 3 --dim 128
s257nc|--seqlen 257 --heads 3 --dim 128 --causal 0"
  for k in 0 1 2 4 31; do
    for c in fp32 fp16; do
      while IFS='|' read -r name args; do
        for path in sm90 sm80; do
          extra=""; [ "$path" = sm80 ] && extra="--force-sm80"
          tool=plain
          [ "$name" = s100 ] && [ "$k" = 2 ] && tool=memcheck
          echo "h2o.$name.k$k.$c.$path|$tool|--workload h2o --system fused-diag --diag-k $k --cache-dtype $c $extra $args" >>"$cases"
        done
      done <<<"$shapes"
      echo "h2o.s4096.k$k.$c.sm90|plain|--workload h2o --system fused-diag --diag-k $k --cache-dtype $c --seqlen 4096 --heads 32 --dim 128" >>"$cases"
    done
  done
  for wl in roco snapkv; do
    for path in sm90 sm80; do
      extra=""; [ "$path" = sm80 ] && extra="--force-sm80"
      echo "$wl.s1000.k2.fp16.$path|plain|--workload $wl --system fused-diag --diag-k 2 --cache-dtype fp16 $extra --seqlen 1000 --heads 3 --dim 128" >>"$cases"
      echo "$wl.s257.k31.fp32.$path|memcheck|--workload $wl --system fused-diag --diag-k 31 $extra --seqlen 257 --heads 2 --dim 64" >>"$cases"
    done
  done
  # the fused system itself on both paths (compared below)
  while IFS='|' read -r name args; do
    echo "h2o.$name.fused.sm90|plain|--workload h2o --system fused $args" >>"$cases"
    echo "h2o.$name.fused.sm80|plain|--workload h2o --system fused --force-sm80 $args" >>"$cases"
  done <<<"$shapes"
  echo "h2o.s4096.fused.sm90|plain|--workload h2o --system fused --seqlen 4096 --heads 32 --dim 128" >>"$cases"

  # shellcheck disable=SC2317 # run by xargs through `bash -c` (export -f below)
  run_case() { # name tool args...
    local name=$1 tool=$2 log err rc status detail
    shift 2
    log=$gc/logs/$name.log err=$gc/logs/$name.err
    if [ "$tool" = memcheck ] && [ -n "$sanitizer" ]; then
      "$sanitizer" --tool memcheck --error-exitcode 99 --print-limit 20 "$bin" "$@" --check --warmup 0 --runs 1 >"$log" 2>"$err"
    else
      "$bin" "$@" --check --warmup 0 --runs 1 >"$log" 2>"$err"
    fi
    rc=$?
    case $rc in
      0) status=PASS ;; 3) status=OOM ;; 4) status=UNSUP ;; 5) status=FAIL ;; 99) status=MEMCHECK ;; *) status=ERROR ;;
    esac
    if [ "$tool" = memcheck ] && grep -q "ERROR SUMMARY: [1-9]" "$log" "$err" 2>/dev/null; then status=MEMCHECK; fi
    detail=$(awk '/^check /{o="";r="";k="";for(i=2;i<=NF;i++){split($i,a,"=");if(a[1]=="output")o=a[2];if(a[1]=="rel_l2")r=a[2];if(a[1]=="ok")k=a[2]}
                  printf "%s%s=%s%s", sep, o, r, (k=="1"?"":"(FAIL)"); sep=" "}
                  /^config /{for(i=2;i<=NF;i++){split($i,a,"=");if(a[1]=="impl")im=a[2];if(a[1]=="cached_tiles")ct=a[2]}}
                  END{printf " impl=%s cached_tiles=%s", im, ct}' "$log")
    [ "$status" = PASS ] || [ "$status" = FAIL ] || detail="$(grep -o 'reason=.*' "$log" | tail -1) exit $rc"
    printf '%s|%s|%s\n' "$name" "$status" "$detail" >"$gc/results/$name.res"
  }
  export -f run_case
  export bin gc sanitizer
  # shellcheck disable=SC2317 # run by xargs through `bash -c`
  line_case() {
    local name tool args argv
    IFS='|' read -r name tool args <<<"$1"
    read -r -a argv <<<"$args"
    run_case "$name" "$tool" "${argv[@]}"
  }
  export -f line_case
  # shellcheck disable=SC2016 # $1 is the inner bash's
  grep -v '\.s4096\.' "$cases" | tr '\n' '\0' | xargs -0 -P "$jobs" -I{} bash -c 'line_case "$1"' _ {}
  # shellcheck disable=SC2016 # $1 is the inner bash's
  grep '\.s4096\.' "$cases" | tr '\n' '\0' | xargs -0 -P 1 -I{} bash -c 'line_case "$1"' _ {}

  # k = 0 is the fused system: identical check lines (rel_l2, max_abs of every output). k > 0
  # runs fused's kernels with the cache hook: where it runs the same forward (impl= is fused's
  # plus +diag), out's check line is identical too; the column statistic differs by rounding.
  impl_of() { grep '^config ' "$1" | grep -o ' impl=[^ ]*' | cut -d= -f2; }
  : >"$gc/k0_vs_fused.txt"
  for f in "$gc"/logs/h2o.*.fused.sm[89]0.log; do
    path=${f%.log}; path=${path##*.}
    shape=$(basename "$f" ".fused.$path.log")
    for k in 0 1 2 4 31; do
      for c in fp32 fp16; do
        d=$gc/logs/$shape.k$k.$c.$path.log
        [ -f "$d" ] || continue
        if [ "$k" = 0 ]; then
          what="every output"; want='^check '
        elif [ "$(impl_of "$d")" = "$(impl_of "$f")+diag" ]; then
          what="out"; want='^check output=out '
        else
          continue
        fi
        if diff <(grep "$want" "$f") <(grep "$want" "$d") >/dev/null; then
          echo "$shape k$k $c $path: $what identical to fused" >>"$gc/k0_vs_fused.txt"
        else
          echo "$shape k$k $c $path: $what DIFFERS from fused" >>"$gc/k0_vs_fused.txt"
          failed=1
        fi
      done
    done
  done
  {
    cat "$gc"/results/*.res | sort | awk -F'|' '{printf "%-30s %-8s %s\n", $1, $2, $3}'
    echo
    cat "$gc"/results/*.res | awk -F'|' '{n[$2]++; t++} END {printf "%d cases:", t; for (s in n) printf " %s=%d", s, n[s]; printf "\n"}'
    cat "$gc/k0_vs_fused.txt"
    echo "memcheck: ${sanitizer:-off}; wall so far: $(( $(date +%s) - t0 )) s"
  } | tee "$gc/table.txt" | tail -n 25
  grep -qE '\|(FAIL|ERROR|MEMCHECK|OOM|UNSUP)\|' "$gc"/results/*.res && failed=1
fi

if [ "$matrix" = 1 ]; then
  echo "== the study's matrix (local executor)"
  "$here/run.sh" --local --detach >"$out/runner.txt" 2>&1
  echo "repro-run exit status: $?"
  run_dir=$(dirname "$(readlink -f "$here/ae_logs")")
  "$root/build/bin/repro-run" status "$run_dir" 2>&1 | tail -n 15
  tar czf "$out/h2o-diag-run.tgz" -C "$(dirname "$run_dir")" "$(basename "$run_dir")"
  mkdir -p "$out/logs"
  cp "$run_dir"/logs/*.log "$out/logs/" 2>/dev/null
  "$here/plot_diag.sh" "$out/logs" --out "$out/figures" | tee "$out/table.txt"
  # every cell of ours ok, every check passed (peers may be unsupported without PyTorch)
  for f in "$out"/logs/*.log; do
    st=$(grep '^result ' "$f" | tail -1 | grep -o 'status=[a-z]*')
    case "$(basename "$f")" in
      *.torch.* | *.inductor.*) [ "$st" = status=ok ] || [ "$st" = status=unsupported ] || { echo "FAILED: $f ($st)"; failed=1; } ;;
      *) [ "$st" = status=ok ] || { echo "FAILED: $f ($st)"; failed=1; } ;;
    esac
    grep -q '^check .*ok=0' "$f" && { echo "CHECK FAILED: $f"; failed=1; }
  done
fi
echo "gpu_run.sh: done in $(( $(date +%s) - t0 )) s, $([ $failed = 0 ] && echo 'all passed' || echo 'FAILURES above'); output in $out"
exit $failed
