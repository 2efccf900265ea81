#!/usr/bin/env bash
# kernels/attention/peer_dims_check.sh: the peers built from other projects' source (fa3, fa2,
# flashinfer: kernels/attention/{fa3,fa2,flashinfer}/) at the head dims real models use and
# with GQA, for a GPU machine. Builds nothing: it runs build/bin/attnvar (built elsewhere with
# the peers configured, and carried) over
#   each peer x the workloads its project computes (fa3: attn; fa2, flashinfer: attn and gemma2,
#     of those attnvar lists) x head dim 64, 96, 128, 256 x --causal 1, 0 x fp16, bf16
#     x --groups 1 (MHA) and 4 (GQA: H/4 K/V heads; --groups LIST picks others)
#   at B=2, H=8, S=1024 (--shape ARGS for another), every run with --check: outputs poisoned and
#   compared with the fp32 GPU reference (the cells are beyond the CPU reference's size).
# flashinfer at head dim 96 is expected unsupported (its sm_90 prefill has no such kernel:
# flashinfer/README.md); every other cell must pass. A GQA cell must log groups=G and
# kv_heads=H/G on its config line (else NOGQA: attnvar ran it as MHA); a GQA cell attnvar refuses
# as a usage error (exit 2: an attnvar that refuses --groups for dense workloads) is NOGROUPS.
# Logs go to $OUT/peer_dims_check/logs/, the table to stdout and $OUT/peer_dims_check/table.txt.
#
#   kernels/attention/peer_dims_check.sh [--bin PATH] [--jobs N] [--groups "1 4"] [--shape ARGS]
# Exit 0 when every cell passed (or was the expected refusal), 1 otherwise (FAIL, ERROR, OOM,
# an unexpected UNSUP, NOGQA, NOGROUPS), 2 on a usage error.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prog=peer_dims_check.sh
# shellcheck source=kernels/script_lib.sh
. "$root/kernels/script_lib.sh"
bin=$root/build/bin/attnvar
jobs=2
groups_list="1 4"
shape="--batch 2 --heads 8 --seqlen 1024"
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) need_value "$@"; bin=$2; shift ;;
    --jobs) need_value "$@"; jobs=$2; shift ;;
    --groups) need_value "$@"; groups_list=$2; shift ;;
    --shape) need_value "$@"; shape=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die_usage "unknown argument '$1'" ;;
  esac
  shift
done
need_int --jobs "$jobs" 1
[ -n "${groups_list// /}" ] || die_usage "--groups: expected a list of group sizes, got '$groups_list'"
for g in $groups_list; do need_int --groups "$g" 1; done
heads=$(awk '{for (i = 1; i < NF; i++) if ($i == "--heads") print $(i + 1)}' <<<"$shape")
heads=${heads:-32} # attnvar's default
need_int "--shape's --heads" "$heads" 1
for g in $groups_list; do
  [ $((heads % g)) = 0 ] || die_usage "--groups $g does not divide the shape's $heads heads"
done
[ -x "$bin" ] || { echo "$prog: $bin is not an executable (build it and carry build/)" >&2; exit 1; }
workloads=$(workloads_of "$bin") || exit 1
systems=$("$bin" --list-systems 2>/dev/null | cut -f1)

out=${OUT:-$root/build}/peer_dims_check
mkdir -p "$out/logs" "$out/results"
rm -f "$out"/results/*.res

# One case: run attnvar, classify, write one .res line: name|status|detail
#   status: PASS FAIL UNSUP(expected) UNSUP ERROR OOM NOGQA NOGROUPS
# shellcheck disable=SC2317 # run by xargs through `bash -c` (export -f below)
run_case() {
  local name=$1 expect=$2 kv=$3; shift 3
  local log=$out/logs/$name.log err=$out/logs/$name.err rc status detail
  "$bin" "$@" >"$log" 2>"$err"
  rc=$?
  case $rc in
    0) status=PASS ;; 3) status=OOM ;; 4) status=UNSUP ;; 5) status=FAIL ;; *) status=ERROR ;;
  esac
  [ "$rc" = 2 ] && [ "$kv" != - ] && status=NOGROUPS
  [ "$status" = UNSUP ] && [ "$expect" = unsup ] && status="UNSUP(expected)"
  # GQA ran as GQA: the config line names the K/V heads
  if [ "$status" = PASS ] && [ "$kv" != - ] && ! grep -qE "^config .*kv_heads=$kv( |$)" "$log"; then
    status=NOGQA
  fi
  if [ "$status" = PASS ] || [ "$status" = FAIL ] || [ "$status" = NOGQA ]; then
    detail=$(awk '/^check /{o="";r="";k="";for(i=2;i<=NF;i++){split($i,a,"=");if(a[1]=="output")o=a[2];if(a[1]=="rel_l2")r=a[2];if(a[1]=="ok")k=a[2]}
                  printf "%s%s=%s%s", sep, o, r, (k=="1"?"":"(FAIL)"); sep=" "}' "$log")
  else
    detail=$(grep -o 'reason=.*' "$log" | tail -1)
    [ -z "$detail" ] && detail="exit $rc: $(tail -1 "$err")"
  fi
  printf '%s|%s|%s\n' "$name" "$status" "$detail" >"$out/results/$name.res"
}
export -f run_case
export bin out

# The case list: name, expectation (run|unsup), K/V heads of a GQA cell (- for MHA), arguments.
cases=$out/cases.txt
: >"$cases"
served() { local w o=""; for w in "$@"; do case " $workloads " in *" $w "*) o+="$w " ;; esac; done; echo "$o"; }
peers=("fa3:$(served attn)" "fa2:$(served attn gemma2)" "flashinfer:$(served attn gemma2)")
for p in "${peers[@]}"; do
  sys=${p%%:*} wls=${p#*:}
  grep -qx "$sys" <<<"$systems" || { echo "$prog: $bin lists no system $sys: its cells skipped" >&2; continue; }
  for wl in $wls; do
    for d in 64 96 128 256; do
      expect=run
      [ "$sys" = flashinfer ] && [ "$d" = 96 ] && expect=unsup
      for causal in 1 0; do
        for dtype in fp16 bf16; do
          for g in $groups_list; do
            kv=- gargs=""
            # MHA is attnvar's default: --groups 1 is not passed
            if [ "$g" != 1 ]; then kv=$((heads / g)) gargs="--groups $g"; fi
            echo "$wl.$sys.d$d.c$causal.$dtype.g$g $expect $kv --workload $wl --system $sys $shape" \
              "--dim $d --causal $causal --dtype $dtype $gargs --check --warmup 1 --runs 2" >>"$cases"
          done
        done
      done
    done
  done
done
[ -s "$cases" ] || { echo "$prog: no peer cells to run (does $bin list fa3, fa2, flashinfer?)" >&2; exit 1; }

t0=$(date +%s)
xargs -P "$jobs" -L 1 bash -c 'run_case "$@"' _ <"$cases"
t1=$(date +%s)

table=$out/table.txt
{
  printf '%-34s %-15s %s\n' CASE STATUS "DETAIL (rel_l2 per output, or reason)"
  cat "$out"/results/*.res | sort -V | awk -F'|' '{printf "%-34s %-15s %s\n", $1, $2, $3}'
  echo
  cat "$out"/results/*.res | sort | awk -F'|' '{n[$2]++; t++} END {printf "%d cases:", t; for (s in n) printf " %s=%d", s, n[s]; printf "\n"}'
  if grep -q '|NOGROUPS|' "$out"/results/*.res; then
    echo "NOGROUPS: this attnvar refuses --groups for these workloads (a usage error); --groups 1 runs the MHA cells alone"
  fi
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "shape: $shape; groups: $groups_list; wall: $((t1 - t0)) s; logs: $out/logs"
} | tee "$table"

if grep -qvE '\|(PASS|UNSUP\(expected\))\|' "$out"/results/*.res; then exit 1; fi
exit 0
