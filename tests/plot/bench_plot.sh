#!/usr/bin/env bash
# Plot-time benchmark: `./plot.sh ROOT` wall time for (a) an empty log root and (b) a full,
# realistic set of FIXTURE logs of Figures 12-14 in the artifact's format (gen_fixtures:
# synthetic data, several MB of tuner chatter per TVM/TensorRT log).
#   bench_plot.sh BUILD_DIR SOURCE_DIR [MAX_SECONDS]     exit 1 when a run exceeds MAX_SECONDS
set -u
build=$1; src=$2; max=${3:-5}
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot is not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export REPRO_BUILD_DIR=$build
"$build/tests/plot/gen_fixtures" --format ae --out "$tmp/ae" --noise-kb 2048
mkdir -p "$tmp/empty"
pass=0; fail=0
for set in empty ae; do
  mb=$(du -sm "$tmp/$set" | cut -f1); files=$(find "$tmp/$set" -type f | wc -l)
  t0=$(date +%s.%N)
  "$src/plot.sh" "$tmp/$set" --out "$tmp/out-$set" > "$tmp/$set.out" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
  echo "plot.sh on $set: $files logs, $mb MB: $secs s (exit $rc)"
  if [ $rc -eq 0 ] && awk -v s="$secs" -v m="$max" 'BEGIN{exit !(s < m)}'; then pass=$((pass+1)); else fail=$((fail+1)); fi
done
echo "$pass passed, $fail failed (each under $max s)"
[ $fail -eq 0 ]
