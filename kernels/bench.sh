#!/usr/bin/env bash
# kernels/bench.sh: the kernel benchmark, for a GPU machine. Builds nothing: runs the carried
# build/bin/attnvar and, when present, the PyTorch peers (scripts/peers/peer.py), then prints
# one table of milliseconds and ratios.
#   part kernel  all seven workloads, unfused and fused, S = 4096, B = 1, H = 32, D = 128
#   part sweep   h2o, unfused and fused, S = 1024 2048 4096 8192 (ms and peak MiB, Fig 13)
#   part peers   torch, inductor, sdpa-flash, sdpa-cudnn, flex on the same cells
# Every attnvar cell runs with --check (verified numbers only; a failed check shows FAIL).
#
#   kernels/bench.sh [--part all|kernel|sweep|peers] [--no-peers] [--warmup 100] [--runs 10]
#                    [--bin PATH] [--table-only]
# Logs: $OUT/bench/logs/{kernel.WL.SYS.log, h2o.SYS.S.log}; table: $OUT/bench/table.txt.
# --table-only re-prints the table from the logs already there.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/bin/attnvar
peer=$root/scripts/peers/peer.py
part=all
peers=1
warmup=100
runs=10
table_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --part) part=${2:?--part needs a value}; shift ;;
    --no-peers) peers=0 ;;
    --warmup) warmup=${2:?}; shift ;;
    --runs) runs=${2:?}; shift ;;
    --bin) bin=${2:?}; shift ;;
    --table-only) table_only=1 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
case "$part" in all|kernel|sweep|peers) ;; *) echo "bench.sh: --part: expected all|kernel|sweep|peers, got '$part'" >&2; exit 2 ;; esac
for n in "$warmup" "$runs"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "bench.sh: --warmup/--runs: expected an integer, got '$n'" >&2; exit 2; }
done

out=${OUT:-$root/build}/bench
logs=$out/logs
mkdir -p "$logs"
workloads="attn h2o roco kf snapkv corm gemma2"
sweep="1024 2048 4096 8192"
peer_systems="torch inductor sdpa-flash sdpa-cudnn flex"
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
  [ -x "$bin" ] || { echo "bench.sh: $bin is not an executable (build it and carry build/)" >&2; exit 1; }
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
      echo "bench.sh: $peer not found: peers skipped" >&2
    fi
  fi
fi

# Value of key in the last result line of a log; cells that did not run say why.
#   ok -> avg_ms (or the key asked), oom -> OOM, unsupported -> NS, timeout -> TLE,
#   failed check (exit 5) -> FAIL, other errors -> ERR, no log -> "-"
cell() { # log key
  local log=$1 key=$2
  [ -f "$log" ] || { echo "-"; return; }
  awk -v key="$key" '
    /^result / { line = $0 }
    END {
      if (line == "") { print "ERR"; exit }
      n = split(line, f, " "); st = ""; v = ""
      for (i = 2; i <= n; i++) { eq = index(f[i], "="); if (!eq) continue
        k = substr(f[i], 1, eq - 1); val = substr(f[i], eq + 1)
        if (k == "status") st = val; if (k == key) v = val }
      if (st == "ok") print (v == "" ? "?" : v)
      else if (st == "oom") print "OOM"
      else if (st == "unsupported") print "NS"
      else if (st == "timeout") print "TLE"
      else if (line ~ /check failed/) print "FAIL"
      else print "ERR"
    }' "$log"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'; }
paper_ms() {
  case $1 in attn) echo 0.615 ;; h2o) echo 1.300 ;; roco) echo 1.360 ;; kf) echo 3.067 ;;
             snapkv) echo 1.277 ;; corm) echo 1.655 ;; gemma2) echo 0.652 ;; esac
}

table=$out/table.txt
{
  echo "== kernels, B=1 H=32 D=128 S=4096 fp16, avg ms over $runs runs after $warmup warmups"
  printf '%-7s %8s %8s %8s %8s %8s %8s %8s | %7s %8s %9s %9s %9s\n' workload unfused fused \
    torch inductor sdpa-fl sdpa-cu flex paper fu/paper unf/fused fu/fu-attn fused-MiB
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
