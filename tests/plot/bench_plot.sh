#!/usr/bin/env bash
# Plot-time benchmark: `./plot.sh ROOT` wall time for (a) an empty log root and (b) a full,
# realistic set of FIXTURE logs of Figures 12-14 in the artifact's format (gen_fixtures:
# synthetic data, several MB of tuner chatter per TVM/TensorRT log); then (c) the quick start
# in a fresh clone of the committed tree: `./plot.sh ./backup_logs` builds repro-plot itself
# (build-plot/, no CUDA) and must finish in under FRESH_SECONDS (50) and leave `git status`
# clean (the committed figures reproduced bit for bit).
#   bench_plot.sh BUILD_DIR SOURCE_DIR [MAX_SECONDS] [FRESH_SECONDS]   exit 1 when a run is slower
set -u
build=$1; src=$2; max=${3:-5}; fresh=${4:-50}
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
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  git clone --quiet "$src" "$tmp/clone"
  t0=$(date +%s.%N)
  (cd "$tmp/clone" && env -u REPRO_BUILD_DIR -u REPRO_PLOT_BIN ./plot.sh ./backup_logs) > "$tmp/fresh.out" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
  dirty=$(git -C "$tmp/clone" status --porcelain | wc -l)
  echo "fresh clone: ./plot.sh ./backup_logs, build included: $secs s (exit $rc), $dirty files changed"
  if [ $rc -eq 0 ] && [ "$dirty" -eq 0 ] && awk -v s="$secs" -v m="$fresh" 'BEGIN{exit !(s < m)}'; then
    pass=$((pass+1))
  else
    fail=$((fail+1)); tail -5 "$tmp/fresh.out"; git -C "$tmp/clone" status --short | head
  fi
else
  echo "fresh clone: $src is not a git checkout; not measured"
fi
echo "$pass passed, $fail failed (plots under $max s, the fresh clone under $fresh s)"
[ $fail -eq 0 ]
