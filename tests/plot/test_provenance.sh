#!/usr/bin/env bash
# repro-plot provenance on fixture logs written here (fixtures, not runs): the table groups
# logs by folder, GPU (from the meta line, not the file name) and commit; --one-commit passes on
# one clean commit and fails on two commits, a -dirty commit, a failed check or a log without a
# meta line; --device keeps one GPU's logs; --exclude leaves out logs by file name.
#   test_provenance.sh REPRO_PLOT WORK
# check() evals its first argument: the single quotes keep its expansions for eval.
# shellcheck disable=SC2016
set -u
plot=$1; work=$2
rm -rf "$work"; mkdir -p "$work"
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
prov=("$plot" provenance)

# fixture GPU COMMIT DATE OK STATUS FILE: one log in the contract's shape
fixture() {
  mkdir -p "$(dirname "$6")"
  printf '# repro-log 1\n# fixture written by test_provenance.sh, not a run\n' > "$6"
  printf 'meta gpu="%s" cc=9.0 driver=1 cuda=13.0 commit=%s date=%s host=t\n' "$1" "$2" "$3" >> "$6"
  printf 'config workload=attn system=fused\ncheck output=out rel_l2=0 ok=%s\nresult status=%s avg_ms=1.0\n' "$4" "$5" >> "$6"
}
# the folders by relative names, as given (a trailing / dropped)
cd "$work" || exit 1
a=a; b=b
fixture "NVIDIA H200" abc1234 2026-01-02T00:00:00Z 1 ok "$a/x.h200.attn.log"
fixture "NVIDIA H200" abc1234 2026-01-01T00:00:00Z 1 unsupported "$a/sub/y.h200.attn.log"
fixture "NVIDIA H100 80GB HBM3" def5678 2026-01-03T00:00:00Z 1 ok "$a/named.h200.but.h100.log"
fixture "NVIDIA H200" abc1234 2026-01-04T00:00:00Z 1 ok "$b/z.h200.log"
fixture "NVIDIA H200" abc1234ffffffffffffffffffffffffffffffff 2026-01-04T00:00:00Z 1 ok "$b/full-hash.log"

out=$("${prov[@]}" --device h200 "$a/" "$b"); rc=$?
check '[ $rc -eq 0 ]' "a table is printed (rc $rc)"
check 'printf "%s\n" "$out" | grep -qP "^$a\th200\tabc1234\t2\t2026-01-01T00:00:00Z\t2026-01-02T00:00:00Z\t2\t0\tunsupported=1 ok=1$"' "folder a's h200 row: two logs, date span, checks, statuses ($out)"
check 'printf "%s\n" "$out" | grep -qP "^$b\th200\tabc1234\t2\t"' "folder b's h200 row: a full hash counts as its short form"
check '! printf "%s\n" "$out" | grep -q def5678' "--device h200 leaves out the H100's log, whatever its file name says"
out=$("${prov[@]}" "$a")
check 'printf "%s\n" "$out" | grep -qP "^$a\th100\tdef5678\t1\t"' "without --device every GPU has its row"

"${prov[@]}" --device h200 --one-commit "$a" "$b" > /dev/null 2>&1; rc=$?
check '[ $rc -eq 0 ]' "one clean commit passes --one-commit (rc $rc)"
"${prov[@]}" --one-commit "$a" > /dev/null 2> "$work/err"; rc=$?
check '[ $rc -eq 1 ] && grep -q "more than one commit" "$work/err"' "two commits fail --one-commit"
# --exclude GLOB leaves out the logs whose file name matches (the H100 log of another commit)
"${prov[@]}" --exclude "*.but.h100.log" --one-commit "$a" > "$work/out" 2> "$work/err"; rc=$?
check '[ $rc -eq 0 ] && grep -q "1 log(s) left out by --exclude" "$work/err" && ! grep -q def5678 "$work/out"' "--exclude leaves the other commit's log out (rc $rc)"
"${prov[@]}" --exclude "*.nothing" --one-commit "$a" > /dev/null 2>&1; rc=$?
check '[ $rc -eq 1 ]' "an --exclude that matches nothing keeps every log (rc $rc)"

fixture "NVIDIA H200" abc1234-dirty 2026-01-05T00:00:00Z 1 ok "$b/dirty.log"
"${prov[@]}" --device h200 --one-commit "$b" > /dev/null 2> "$work/err"; rc=$?
check '[ $rc -eq 1 ] && grep -q "no clean commit" "$work/err"' "a -dirty commit fails --one-commit"
rm "$b/dirty.log"

fixture "NVIDIA H200" abc1234 2026-01-05T00:00:00Z 0 ok "$b/bad.log"
"${prov[@]}" --device h200 --one-commit "$b" > /dev/null 2> "$work/err"; rc=$?
check '[ $rc -eq 1 ] && grep -q "failed check" "$work/err"' "a check with ok=0 fails --one-commit"
rm "$b/bad.log"

printf 'config workload=attn\nresult status=ok avg_ms=1\n' > "$b/nometa.log"
"${prov[@]}" --device h200 --one-commit "$b" > /dev/null 2> "$work/err"; rc=$?
check '[ $rc -eq 1 ]' "a log without a meta line fails --one-commit"
rm "$b/nometa.log"

"${prov[@]}" --device 'h2;x' "$a" > /dev/null 2>&1; rc=$?
check '[ $rc -eq 2 ]' "a --device that is not a name is refused (rc $rc)"
"${prov[@]}" missing > /dev/null 2>&1; rc=$?
check '[ $rc -eq 2 ]' "a missing folder is refused (rc $rc)"
"${prov[@]}" --device a100 "$a" > /dev/null 2>&1; rc=$?
check '[ $rc -eq 1 ]' "no logs of the GPU asked for is an error (rc $rc)"

fixture "NVIDIA H200" abc1234 2026-01-05T00:00:00Z 1 ok "$b/unreadable.log"
chmod 000 "$b/unreadable.log"
if ! cat "$b/unreadable.log" > /dev/null 2>&1; then # root reads any file: then nothing to test
  "${prov[@]}" --device h200 --one-commit "$b" > /dev/null 2> "$work/err"; rc=$?
  check '[ $rc -eq 1 ] && grep -q "could not be read" "$work/err"' "an unreadable log fails --one-commit"
fi
rm -f "$b/unreadable.log"

echo "provenance: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
