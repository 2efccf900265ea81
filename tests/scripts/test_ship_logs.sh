#!/usr/bin/env bash
# scripts/ship-logs.sh on fixture logs written here (they say they are fixtures): ok, oom and
# unsupported logs ship byte for byte; failed ones, logs without a commit or a result, links
# and logs of another commit than --commit are left out and listed (exit 1); a name the
# destination holds with other bytes is kept unless --replace; a run folder's logs/ are read;
# usage errors exit 2; --failed-ok ships a named log's own error and nothing else.
#   test_ship_logs.sh SOURCE_DIR
# check() evals its first argument: the single quotes keep its expansions (rc, before) for eval.
# shellcheck disable=SC2016,SC2034
set -u
src=$1
ship=$src/scripts/ship-logs.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }

# fixture LOG COMMIT STATUS: a log in our format (a test fixture, not a run)
fixture() {
  {
    echo "# repro-log 1"
    [ -n "$2" ] && echo "meta gpu=\"Fixture GPU\" commit=$2 date=2026-11-29T00:00:00Z fixture=1"
    echo "config workload=attn system=fused seqlen=4096 fixture=1"
    [ -n "$3" ] && echo "result status=$3 avg_ms=1.0000 runs=3 samples_ms=1.0000,0.9000,1.1000"
  } > "$1"
}
run=$tmp/runs/20261129T000000Z
mkdir -p "$run/logs"
L=$run/logs
fixture "$L/a.ok.log" abc1234 ok
fixture "$L/b.oom.log" abc1234 oom
fixture "$L/c.unsupported.log" abc1234 unsupported
fixture "$L/d.error.log" abc1234 error
fixture "$L/e.nocommit.log" "" ok
fixture "$L/f.noresult.log" abc1234 ""
fixture "$L/g.other.log" def5678 ok
# a runner's kill line after the program's own result: the last result counts
fixture "$L/h.killed.log" abc1234 ok
echo 'result status=timeout source=runner state=TIMEOUT' >> "$L/h.killed.log"
ln -s "$L/a.ok.log" "$L/i.link.log"

dest=$tmp/backup/fig
"$ship" --commit abc1234 "$run" "$dest" > "$tmp/out1" 2>&1
rc=$?
check '[ $rc -eq 1 ]' "logs left out: exit 1 ($(tail -1 "$tmp/out1"))"
for f in a.ok b.oom c.unsupported; do
  check 'cmp -s "$L/$f.log" "$dest/$f.log"' "$f.log shipped byte for byte"
  check 'grep -q "^shipped   $f.log (" "$tmp/out1"' "$f.log listed as shipped"
done
for f in d.error e.nocommit f.noresult g.other h.killed i.link; do
  check '[ ! -e "$dest/$f.log" ]' "$f.log not shipped"
done
check 'grep -q "^left out  d.error.log: status=error" "$tmp/out1"' "the failed log says why"
check 'grep -q "^left out  e.nocommit.log: no meta line with commit=" "$tmp/out1"' "no commit says why"
check 'grep -q "^left out  f.noresult.log: no usable result line" "$tmp/out1"' "no result says why"
check 'grep -q "^left out  g.other.log: commit def5678, not abc1234" "$tmp/out1"' "another commit says why"
check 'grep -q "^left out  h.killed.log: status=timeout" "$tmp/out1"' "the last result line counts"
check 'grep -q "^left out  i.link.log: not a regular file" "$tmp/out1"' "a link is left out"
check 'grep -q "3 shipped, 0 replaced, 0 the same, 6 left out or kept; commits shipped: abc1234$" "$tmp/out1"' "summary"

# without --commit another commit ships, and the summary names both commits
rm "$L"/d.error.log "$L"/e.nocommit.log "$L"/f.noresult.log "$L"/h.killed.log "$L"/i.link.log
"$ship" "$L" "$dest" > "$tmp/out2" 2>&1
rc=$?
check '[ $rc -eq 0 ]' "all shippable: exit 0 ($(tail -1 "$tmp/out2"))"
check 'grep -q "1 shipped, 0 replaced, 3 the same, 0 left out or kept; commits shipped: def5678$" "$tmp/out2"' "the same bytes are not copied again"

# a name the destination holds with other bytes: kept, then replaced with --replace
fixture "$L/a.ok.log" abc1234 ok
echo "phase name=p1 avg_ms=0.5 fixture=1" >> "$L/a.ok.log"
before=$(cat "$dest/a.ok.log")
"$ship" "$L" "$dest" > "$tmp/out3" 2>&1
rc=$?
check '[ $rc -eq 1 ] && grep -q "^kept      a.ok.log: " "$tmp/out3"' "other bytes under a shipped name: kept, exit 1"
check '[ "$(cat "$dest/a.ok.log")" = "$before" ]' "the shipped log is untouched"
"$ship" --replace "$L" "$dest" > "$tmp/out4" 2>&1
rc=$?
check '[ $rc -eq 0 ] && grep -q "^replaced  a.ok.log (ok, abc1234)" "$tmp/out4"' "--replace replaces"
check 'cmp -s "$L/a.ok.log" "$dest/a.ok.log"' "the replacement is byte for byte"
check '[ -z "$(find "$dest" -mindepth 1 -name ".*")" ]' "no temporary file is left"

# usage
"$ship" "$L" > /dev/null 2>&1
rc=$?
check '[ $rc -eq 2 ]' "one folder: usage"
"$ship" --commit 'x;rm' "$L" "$dest" > /dev/null 2> "$tmp/err"
rc=$?
check '[ $rc -eq 2 ] && grep -q "expected a commit" "$tmp/err"' "a --commit that is not a commit"
"$ship" --bogus "$L" "$dest" > /dev/null 2>&1
rc=$?
check '[ $rc -eq 2 ]' "unknown option"
"$ship" "$tmp/none" "$dest" > /dev/null 2>&1
rc=$?
check '[ $rc -eq 2 ]' "a missing folder"

# status=ok that the one log rule refuses (repro-run verdict): a failed check, no time, a cut line
B=$tmp/refused
mkdir -p "$B"
fixture "$B/j.badcheck.log" abc1234 ok
sed -i '/^result /i check output=out rel_l2=3.0e-01 ok=0' "$B/j.badcheck.log"
fixture "$B/k.zero.log" abc1234 ok
sed -i 's/avg_ms=1.0000/avg_ms=0/' "$B/k.zero.log"
fixture "$B/l.cut.log" abc1234 ok
printf 'check output=lse rel' >>"$B/l.cut.log"
"$ship" "$B" "$tmp/backup/refused" >"$tmp/out9" 2>&1
check '[ $? -eq 1 ]' "refused logs: exit 1"
check 'grep -q "^left out  j.badcheck.log: status=bad: check output=out failed" "$tmp/out9"' "an ok log with a failed check is left out, saying why"
check 'grep -q "^left out  k.zero.log: status=bad: avg_ms must be a positive number" "$tmp/out9"' "an ok log with avg_ms=0 is left out, saying why"
check 'grep -q "^left out  l.cut.log: status=cut: torn log" "$tmp/out9"' "a cut log is left out, saying why"
check '[ -z "$(ls -A "$tmp/backup/refused")" ]' "none of them shipped"

# --failed-ok NAME: the program's own error ships byte for byte (the figures mark it ERR); a
# runner's cancel under a named log, an error not named and a named one of another commit do not
E=$tmp/failed
mkdir -p "$E"
for f in m.err n.cancel o.unnamed p.other; do fixture "$E/$f.log" abc1234 ""; done
fixture "$E/p.other.log" def5678 ""
echo 'result status=error reason="ValueError: a fixture failure"' | tee -a "$E/m.err.log" "$E/o.unnamed.log" "$E/p.other.log" > /dev/null
echo 'result status=error source=runner state=CANCELLED reason="the runner was interrupted"' >> "$E/n.cancel.log"
"$ship" --commit abc1234 --failed-ok m.err.log --failed-ok n.cancel.log --failed-ok p.other.log \
  "$E" "$tmp/backup/failed" > "$tmp/out10" 2>&1
check '[ $? -eq 1 ]' "failed logs left out beside the allowed one: exit 1"
check 'cmp -s "$E/m.err.log" "$tmp/backup/failed/m.err.log"' "the named own error ships byte for byte"
check 'grep -q "^shipped   m.err.log (error, abc1234)" "$tmp/out10"' "the named own error is listed as an error"
check 'grep -q "^left out  n.cancel.log: status=error" "$tmp/out10"' "a runner's cancel is left out though named"
check 'grep -q "^left out  o.unnamed.log: status=error" "$tmp/out10"' "an error not named is left out"
check 'grep -q "^left out  p.other.log: commit def5678, not abc1234" "$tmp/out10"' "a named error of another commit is left out"
check '[ "$(ls "$tmp/backup/failed")" = m.err.log ]' "nothing else shipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
