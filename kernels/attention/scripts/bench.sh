#!/usr/bin/env bash
# kernels/attention/scripts/bench.sh: the kernel benchmark, for a GPU machine. Builds nothing: runs the carried
# build/bin/attnvar and, when present, the PyTorch peers (scripts/peers/peer.py), then prints
# one table of milliseconds and ratios.
#   part kernel  every workload (attnvar --list-workloads), unfused and fused, S = 4096,
#                B = 1, H = 32, D = 128
#   part sweep   h2o, unfused and fused, S = 1024 2048 4096 8192 (ms and peak MiB, Fig 13)
#   part peers   every peer system (scripts/peers/systems.py names) on the same cells
# Every attnvar cell runs with --check (verified numbers only; a failed check shows FAIL).
#
#   kernels/attention/scripts/bench.sh [--part all|kernel|sweep|peers] [--no-peers] [--warmup 100] [--runs 10]
#                    [--bin PATH] [--table-only]
# Logs: $OUT/bench/logs/{kernel.WL.SYS.log, h2o.SYS.S.log}; table: $OUT/bench/table.txt.
# --table-only re-prints the table from the logs already there (the workloads from attnvar,
# or without it from scripts/peers/registry.py).
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
prog=bench.sh
# shellcheck source=kernels/script_lib.sh
. "$root/kernels/script_lib.sh"
bin=$root/build/bin/attnvar
peer=$root/scripts/peers/peer.py
part=all
peers=1
warmup=100
runs=10
table_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --part) need_value "$@"; part=$2; shift ;;
    --no-peers) peers=0 ;;
    --warmup) need_value "$@"; warmup=$2; shift ;;
    --runs) need_value "$@"; runs=$2; shift ;;
    --bin) need_value "$@"; bin=$2; shift ;;
    --table-only) table_only=1 ;;
    -h|--help) usage; exit 0 ;;
    *) die_usage "unknown argument '$1'" ;;
  esac
  shift
done
case "$part" in all|kernel|sweep|peers) ;; *) die_usage "--part: expected all|kernel|sweep|peers, got '$part'" ;; esac
need_int --warmup "$warmup"
need_int --runs "$runs"

out=${OUT:-$root/build}/bench
logs=$out/logs
mkdir -p "$logs"
if [ "$table_only" = 1 ] && [ ! -x "$bin" ]; then
  workloads=$(python3 "$root/scripts/peers/registry.py" names | tr '\n' ' ')
  [ -n "${workloads// /}" ] || { echo "$prog: no workload list: $bin is not built and scripts/peers/registry.py gave none" >&2; exit 1; }
else
  [ -x "$bin" ] || { echo "$prog: $bin is not an executable (build it and carry build/)" >&2; exit 1; }
  workloads=$(workloads_of "$bin") || exit 1
fi
sweep="1024 2048 4096 8192"
peer_systems=$(python3 "$root/scripts/peers/systems.py" names 2>/dev/null | tr '\n' ' ')
[ -n "${peer_systems// /}" ] || echo "$prog: scripts/peers/systems.py names gave no peer system: no peer columns" >&2
sweep_peers="torch inductor"
cell_timeout=600

ours() { # log, attnvar args...
  local log=$1; shift
  echo "bench: $(basename "$log" .log)" >&2
  timeout "$cell_timeout" "$bin" "$@" --warmup "$warmup" --runs "$runs" --check >"$log" 2>"${log%.log}.err"
}
theirs() { # log, peer args...
  local log=$1; shift
  echo "bench: $(basename "$log" .log)" >&2
  timeout "$cell_timeout" python3 "$peer" "$@" --warmup "$warmup" --runs "$runs" >"$log" 2>"${log%.log}.err"
}

if [ "$table_only" = 0 ]; then
  if [ "$part" = all ] || [ "$part" = kernel ]; then
    for wl in $workloads; do
      for sys in unfused fused; do ours "$logs/kernel.$wl.$sys.log" --workload "$wl" --system "$sys" --seqlen 4096; done
    done
  fi
  if [ "$part" = all ] || [ "$part" = sweep ]; then
    for s in $sweep; do
      for sys in unfused fused; do ours "$logs/h2o.$sys.$s.log" --workload h2o --system "$sys" --seqlen "$s"; done
    done
  fi
  if { [ "$part" = all ] && [ "$peers" = 1 ]; } || [ "$part" = peers ]; then
    if [ -f "$peer" ]; then
      for wl in $workloads; do
        for sys in $peer_systems; do theirs "$logs/kernel.$wl.$sys.log" --system "$sys" --workload "$wl" --seqlen 4096; done
      done
      for s in $sweep; do
        for sys in $sweep_peers; do theirs "$logs/h2o.$sys.$s.log" --system "$sys" --workload h2o --seqlen "$s"; done
      done
    else
      echo "$prog: $peer not found: peers skipped" >&2
    fi
  fi
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }
paper_ms() {
  case $1 in attn) echo 0.615 ;; h2o) echo 1.300 ;; roco) echo 1.360 ;; kf) echo 3.067 ;;
             snapkv) echo 1.277 ;; corm) echo 1.655 ;; gemma2) echo 0.652 ;; *) echo - ;; esac
}

table=$out/table.txt
{
  echo "== kernels, B=1 H=32 D=128 S=4096 fp16, avg ms over $runs runs after $warmup warmups"
  printf '%-7s %8s %8s' workload unfused fused
  for sys in $peer_systems; do printf ' %8.8s' "$sys"; done
  printf ' | %7s %8s %9s %9s %9s\n' paper fu/paper unf/fused fu/fu-attn fused-MiB
  fused_attn=$(cell "$logs/kernel.attn.fused.log" avg_ms)
  for wl in $workloads; do
    u=$(cell "$logs/kernel.$wl.unfused.log" avg_ms); f=$(cell "$logs/kernel.$wl.fused.log" avg_ms)
    printf '%-7s %8s %8s' "$wl" "$u" "$f"
    for sys in $peer_systems; do printf ' %8s' "$(cell "$logs/kernel.$wl.$sys.log" avg_ms)"; done
    p=$(paper_ms "$wl")
    printf ' | %7s %8s %9s %9s %9s\n' "$p" "$(ratio "$f" "$p")" "$(ratio "$u" "$f")" \
      "$(ratio "$f" "$fused_attn")" "$(cell "$logs/kernel.$wl.fused.log" peak_mib)"
  done
  echo "targets: fu/paper < 1 everywhere; attn fused <= 1.25 x sdpa-cudnn and < sdpa-flash; fu/fu-attn <= 2"
  echo
  echo "== h2o sweep (Fig 13): avg ms / peak MiB"
  printf '%-6s' S
  for sys in unfused fused $sweep_peers; do printf ' %18s' "$sys"; done
  echo
  for s in $sweep; do
    printf '%-6s' "$s"
    for sys in unfused fused $sweep_peers; do
      printf ' %18s' "$(cell "$logs/h2o.$sys.$s.log" avg_ms) / $(cell "$logs/h2o.$sys.$s.log" peak_mib)"
    done
    echo
  done
  echo
  meta=$(grep -h '^meta ' "$logs"/*.log 2>/dev/null | head -1)
  echo "device: ${meta:-unknown (no logs)}"
} | tee "$table"
