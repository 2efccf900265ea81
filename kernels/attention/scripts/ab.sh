#!/usr/bin/env bash
# kernels/attention/scripts/ab.sh: interleaved A/B rounds of attnvar columns, for a GPU machine (builds
# nothing). A column is an attnvar binary and one of its systems; each round runs every cell
# under every column once, in the same order, so a drift of the GPU (clocks, a neighbour's
# load) falls on every column alike. The table gives each column's avg ms in each round and
# each column's mean over the rounds divided by the first column's (the baseline): the
# numbers PERF notes quote as "N interleaved rounds".
#   kernels/attention/scripts/ab.sh [--rounds 3] [--warmup 10] [--runs 30] [--check] [--workload attn]
#                           [--cells NAME,NAME...] [--cell NAME='ATTNVAR OPTIONS']... COLUMN...
# COLUMN is LABEL=BIN:SYSTEM[@WORKLOAD] (WORKLOAD default --workload's), e.g. two builds and a
# peer, or our variants against our own attn in the same rounds:
#   base=/tmp/old/attnvar:fused new=build/bin/attnvar:fused fa3=build/bin/attnvar:fa3
#   attn=build/bin/attnvar:fused gemma2=build/bin/attnvar:fused@gemma2 h2o=build/bin/attnvar:fused@h2o
# The cells (--cells picks some; --cell adds one of its own, e.g. --cell 'b8:--batch 8 --heads 32
# --seqlen 8000 --dim 128 --causal 0'):
#   b16d128c   B16 H96 S4096 D128 causal fp16     b16d128cbf  the same in bf16
#   b16d64c    B16 H96 S4096 D64 causal fp16      b16d128nc   B16 H96 S4096 D128, no mask
#   b16d64nc   B16 H96 S4096 D64, no mask         b16d96c     B16 H96 S4096 D96 causal
#   b16d256c   B16 H48 S4096 D256 causal          fig12       B1 H32 S4096 D128 causal
#   b2s16k     B2 H32 S16384 D128 causal
# Timing only (--no-check) unless --check.
# Output under $OUT/ab: logs/<cell>.<label>.r<round>.log, order.txt (what ran, in order),
# gpu.txt, table.txt (also printed). A cell shows its avg ms, or as bench.sh's table why it has
# none (script_lib.sh's cell: NS refused, OOM, TLE, FAIL a failed check, ERR). Exit 0, 1 when a
# cell did not run but for NS, 2 usage.
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
prog=ab.sh
# shellcheck source=kernels/script_lib.sh
. "$root/kernels/script_lib.sh"

# The named cells: name, then attnvar's shape options.
builtin_cells=(
  "b16d128c   --batch 16 --heads 96 --seqlen 4096 --dim 128"
  "b16d128cbf --batch 16 --heads 96 --seqlen 4096 --dim 128 --dtype bf16"
  "b16d64c    --batch 16 --heads 96 --seqlen 4096 --dim 64"
  "b16d128nc  --batch 16 --heads 96 --seqlen 4096 --dim 128 --causal 0"
  "b16d64nc   --batch 16 --heads 96 --seqlen 4096 --dim 64 --causal 0"
  "b16d96c    --batch 16 --heads 96 --seqlen 4096 --dim 96"
  "b16d256c   --batch 16 --heads 48 --seqlen 4096 --dim 256"
  "fig12      --batch 1 --heads 32 --seqlen 4096 --dim 128"
  "b2s16k     --batch 2 --heads 32 --seqlen 16384 --dim 128"
)
cell_names=()
declare -A cell_args=()
for entry in "${builtin_cells[@]}"; do
  read -r name opts <<<"$entry"
  cell_names+=("$name")
  cell_args[$name]=$opts
done
rounds=3 warmup=10 runs=30 check=--no-check workload=attn picked="" extra=() columns=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) need_value "$@"; need_int "$1" "$2" 1; rounds=$2; shift ;;
    --warmup) need_value "$@"; need_int "$1" "$2"; warmup=$2; shift ;;
    --runs) need_value "$@"; need_int "$1" "$2" 1; runs=$2; shift ;;
    --check) check=--check ;;
    --workload) need_value "$@"; workload=$2; shift ;;
    --cells) need_value "$@"; picked=$2; shift ;;
    --cell) need_value "$@"; extra+=("$2"); shift ;;
    -h|--help) usage; exit 0 ;;
    -*) die_usage "unknown option '$1'" ;;
    *) columns+=("$1") ;;
  esac
  shift
done
[[ "$workload" =~ ^[a-z][a-z0-9_]*$ ]] || die_usage "--workload: expected a workload name, got '$workload'"
[ ${#columns[@]} -ge 1 ] || die_usage "expected at least one COLUMN (LABEL=BIN:SYSTEM)"

# The columns: label, binary, system, workload.
labels=() bins=() systems=() workloads=()
for spec in "${columns[@]}"; do
  [[ "$spec" =~ ^([A-Za-z0-9_-]+)=(.+):([a-z0-9-]+)(@([a-z][a-z0-9_]*))?$ ]] ||
    die_usage "column '$spec': expected LABEL=BIN:SYSTEM[@WORKLOAD] (e.g. new=build/bin/attnvar:fused)"
  label=${BASH_REMATCH[1]} bin=${BASH_REMATCH[2]} system=${BASH_REMATCH[3]}
  workloads+=("${BASH_REMATCH[5]:-$workload}")
  for l in "${labels[@]}"; do [ "$l" != "$label" ] || die_usage "column label '$label' given twice"; done
  [ -x "$bin" ] || die_usage "column '$label': $bin is not an executable"
  labels+=("$label") bins+=("$bin") systems+=("$system")
done

# The cells: the named ones (all, or --cells), then --cell's.
cells=()
if [ -n "$picked" ]; then
  IFS=',' read -r -a want <<<"$picked"
  for name in "${want[@]}"; do
    [ -n "${cell_args[$name]+set}" ] || die_usage "--cells: unknown cell '$name' (known: ${cell_names[*]})"
    cells+=("$name")
  done
elif [ ${#extra[@]} -eq 0 ]; then
  cells=("${cell_names[@]}")
fi
for spec in "${extra[@]}"; do
  [[ "$spec" =~ ^([a-z0-9_]+):(.+)$ ]] || die_usage "--cell '$spec': expected NAME:ATTNVAR OPTIONS"
  name=${BASH_REMATCH[1]} opts=${BASH_REMATCH[2]}
  [[ "$opts" =~ ^[-a-z0-9.\ ]+$ ]] ||
    die_usage "--cell '$name': options may hold only letters, digits, '-', '.' and spaces"
  [ -z "${cell_args[$name]+set}" ] || die_usage "--cell '$name': a cell of that name exists"
  cell_args[$name]=$opts
  cells+=("$name")
done

out=${OUT:?set OUT to the output folder}/ab
mkdir -p "$out/logs" || exit 1
: >"$out/order.txt"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
  for i in "${!labels[@]}"; do
    echo "column ${labels[$i]}: ${bins[$i]} --workload ${workloads[$i]} --system ${systems[$i]}"
  done
} >"$out/gpu.txt"

failed=0
for r in $(seq 1 "$rounds"); do
  for cell in "${cells[@]}"; do
    for i in "${!labels[@]}"; do
      log=$out/logs/$cell.${labels[$i]}.r$r.log
      # shellcheck disable=SC2086  # the cell's options are words
      timeout 300 "${bins[$i]}" --workload "${workloads[$i]}" --system "${systems[$i]}" ${cell_args[$cell]} \
        --warmup "$warmup" --runs "$runs" "$check" >"$log" 2>&1
      res=$(cell "$log" avg_ms)
      case $res in NS) ;; *[!0-9.]* | "") failed=1 ;; esac
      echo "r$r $cell ${labels[$i]} $res" >>"$out/order.txt"
    done
  done
done

# The table: per cell, each column's rounds, then each column's mean over the baseline's.
awk -v rounds="$rounds" -v ncol="${#labels[@]}" -v cols="${labels[*]}" -v cellorder="${cells[*]}" '
  { v[$2, $3, substr($1, 2)] = $4 }
  END {
    split(cols, label, " "); n = split(cellorder, cell, " ")
    w = 12 # the cell column: as wide as the longest name
    for (k = 1; k <= n; k++) if (length(cell[k]) > w) w = length(cell[k])
    printf "%-*s", w, "cell"
    for (c = 1; c <= ncol; c++) printf "  %-*s", 10 * rounds - 1, label[c] " (" rounds " rounds)"
    for (c = 2; c <= ncol; c++) printf "  %10s", label[c] "/" label[1]
    printf "\n"
    for (k = 1; k <= n; k++) {
      printf "%-*s", w, cell[k]
      for (c = 1; c <= ncol; c++) {
        sum[c] = 0; ok[c] = 1
        printf " "
        for (r = 1; r <= rounds; r++) {
          x = v[cell[k], label[c], r]; printf " %9s", x # a space before each: values wider than 9 stay apart
          if (x ~ /^[0-9.]+$/) sum[c] += x; else ok[c] = 0
        }
      }
      for (c = 2; c <= ncol; c++)
        if (ok[1] && ok[c] && sum[1] > 0) printf "  %10.3f", sum[c] / sum[1]; else printf "  %10s", "-"
      printf "\n"
    }
  }' "$out/order.txt" | tee "$out/table.txt"
echo "$prog: ${#cells[@]} cells x ${#labels[@]} columns x $rounds rounds; logs in $out/logs"
exit $failed
