#!/usr/bin/env bash
# The C log writers (attnvar, gemmbench, kronlayer, llama_e2e: harness.c's hx_log_exit_check)
# write their log whole or fail: a small CPU cell exits 0 with a log ending in a newline, and
# exits 1 with "NAME: writing the log to stdout failed: REASON" on stderr when stdout is
# /dev/full, or when a file size limit (ulimit -f, SIGXFSZ ignored: the write fails with EFBIG,
# as a full disk fails with ENOSPC) ends the log in the middle of its result line. No root.
#   log_writes.sh BIN_DIR WORK_DIR
set -u
bin=$1 work=$2
passed=0 failed=0
check() { local what=$1; shift; if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $what" >&2; fi; }
ends_in_newline() { [ -s "$1" ] && [ -z "$(tail -c1 "$1")" ]; }
not() { ! "$@"; }
rm -rf "$work"; mkdir -p "$work"
block=1024 # ulimit -f counts KiB

writers=(
  "attnvar|$bin/attnvar --workload h2o --system ref --device cpu --seqlen 128 --heads 2 --dim 32"
  "gemmbench|$bin/gemmbench --system ref --m 64 --n 64 --k 64 --device cpu"
  "kronlayer|$bin/kronlayer --device cpu --shape 4x8x8 check"
  "llama_e2e|$bin/llama_e2e --workload h2o --system ref --seqlen 64 --layers 1 --hidden 64 --heads 2 --mlp 64 --vocab 100 --warmup 0 --runs 1 --device cpu"
)
for w in "${writers[@]}"; do
  IFS='|' read -r name cmd <<<"$w"
  read -ra argv <<<"$cmd"
  if [ ! -x "${argv[0]}" ]; then echo "$name is not built: skipped"; continue; fi
  "${argv[@]}" >"$work/$name.log" 2>"$work/$name.err"
  check "$name: a whole run exits 0 (got $?)" test "$?" = 0
  check "$name: its log ends in a newline" ends_in_newline "$work/$name.log"

  "${argv[@]}" >/dev/full 2>"$work/$name.full.err"
  rc=$?
  check "$name to /dev/full: exit 1 (got $rc)" test "$rc" = 1
  check "$name to /dev/full: the message" \
    grep -q "^$name: writing the log to stdout failed: No space left on device" "$work/$name.full.err"

  # a comment line of pad bytes first, so that the limit falls halfway into the result line
  off=$(grep -b '^result ' "$work/$name.log" | tail -1 | cut -d: -f1)
  line=$(grep '^result ' "$work/$name.log" | tail -1)
  cross=$((off + ${#line} / 2))
  blocks=$(((cross + 64 + block - 1) / block))
  pad=$((blocks * block - cross))
  (
    trap '' XFSZ
    ulimit -f "$blocks"
    printf '# pad '; head -c "$((pad - 7))" /dev/zero | tr '\0' '#'; printf '\n'
    exec "${argv[@]}"
  ) >"$work/$name.cut.log" 2>"$work/$name.cut.err"
  rc=$?
  check "$name cut in its result line: exit 1 (got $rc)" test "$rc" = 1
  check "$name cut in its result line: the message" \
    grep -q "^$name: writing the log to stdout failed: File too large" "$work/$name.cut.err"
  check "$name: the cut log holds $((blocks * block)) bytes" test "$(stat -c %s "$work/$name.cut.log")" = $((blocks * block))
  check "$name: the cut log's last line has no newline" not ends_in_newline "$work/$name.cut.log"
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
