#!/usr/bin/env bash
# A short libFuzzer run (20 s) of the YAML loaders, seeded with the corpus files given.
#   fuzz_short.sh FUZZ_BINARY WORK_DIR SEED_FILE...
set -u
fuzz=$1 work=$2
shift 2
rm -rf "$work"; mkdir -p "$work/corpus"
i=0
for f in "$@"; do i=$((i + 1)); cp "$f" "$work/corpus/$i.yaml"; done
cd "$work" || exit 1
if "$fuzz" -max_total_time=20 -seed=1 -max_len=4096 -rss_limit_mb=1024 -print_final_stats=1 corpus >fuzz.log 2>&1; then
  grep -E "stat::number_of_executed_units|Done" fuzz.log | tail -2
  echo "1 passed, 0 failed"
else
  tail -40 fuzz.log
  echo "0 passed, 1 failed"
  exit 1
fi
