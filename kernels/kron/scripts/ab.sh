#!/usr/bin/env bash
# kernels/kron/scripts/ab.sh: v3 against cuBLAS's v2 (and v3's other plans) in interleaved rounds,
# for a GPU machine. Builds nothing: it runs build/bin/kronlayer (built elsewhere and carried).
# Each round runs, for every study shape x dtype, `kronlayer --impl all bench` (v1, v2, v3 as
# dispatched, one process) and v3 under each forced plan (--v3-fuse on, --v3-fuse off, --v3-tc
# off), in the same order every round; then prints, per shape, dtype and pass, the median over
# the rounds of each one's median_us, and v3 / v2 (> 1: cuBLAS's v2 is faster).
#   kernels/kron/scripts/ab.sh [--rounds N] [--bin PATH] [--shapes "BxF1xF2 ..."]
# Raw lines go to $OUT/kron_ab/raw.txt (one per run and impl), the table to stdout and
# $OUT/kron_ab/table.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
rounds=3 bin=$root/build/bin/kronlayer
shapes="16x32x32 32x128x128 16x16x16x16 8x64x64x64"
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=${2:?}; shift 2 ;;
    --bin) bin=${2:?}; shift 2 ;;
    --shapes) shapes=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "ab.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "ab.sh: no kronlayer at $bin" >&2; exit 1; }
out=${OUT:-/tmp}/kron_ab
mkdir -p "$out"
raw=$out/raw.txt
: >"$raw"
variants=("dispatched|--impl all" "fuse-on|--impl v3 --v3-fuse on" "fuse-off|--impl v3 --v3-fuse off"
          "tc-off|--impl v3 --v3-tc off")
for r in $(seq 1 "$rounds"); do
  for s in $shapes; do
    for d in f d; do
      for v in "${variants[@]}"; do
        label=${v%%|*} args=${v#*|}
        # shellcheck disable=SC2086
        if ! log=$("$bin" --dtype "$d" --shape "$s" $args bench 2>&1); then
          echo "ab.sh: round $r $s $d $label failed:" >&2
          printf '%s\n' "$log" | tail -5 >&2
          exit 1
        fi
        printf '%s\n' "$log" | awk -v r="$r" -v s="$s" -v d="$d" -v l="$label" '
          /^time / { impl = ""; pass = ""; med = ""
            for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "impl") impl = kv[2]
              if (kv[1] == "pass") pass = kv[2]; if (kv[1] == "median_us") med = kv[2] }
            name = (l == "dispatched") ? impl : impl "." l
            print r, s, d, pass, name, med }
          /^plan impl=v3/ && l == "dispatched" { sub(/^plan /, ""); print "#plan", r, s, d, $0 }' >>"$raw"
      done
    done
  done
done
# the median over the rounds of each (shape, dtype, pass, impl)
awk '!/^#/ { k = $2 " " $3 " " $4 " " $5; v[k] = v[k] " " $6 }
  END { for (k in v) { n = split(v[k], a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
          if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
        print k, (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) } }' "$raw" | sort >"$out/medians.txt"
{
  echo "median over $rounds rounds of each run's median_us; v3/v2 > 1: cuBLAS's v2 is faster"
  printf '%-12s %-2s %-4s %9s %9s %9s %9s %9s %9s %7s\n' shape dt pass v1 v2 v3 v3.fuse-on v3.fuse-off v3.tc-off v3/v2
  awk '{ m[$1 " " $2 " " $3, $4] = $5; key[$1 " " $2 " " $3] = 1 }
    END { for (k in key) { split(k, p, " ")
      printf "%-12s %-2s %-4s %9s %9s %9s %9s %9s %9s %7.3f\n", p[1], p[2], p[3], m[k, "v1"], m[k, "v2"], m[k, "v3"],
        m[k, "v3.fuse-on"], m[k, "v3.fuse-off"], m[k, "v3.tc-off"], m[k, "v3"] / m[k, "v2"] } }' "$out/medians.txt" | sort
} | tee "$out/table.txt"
