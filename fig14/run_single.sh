#!/usr/bin/env bash
# Reruns one cell (or a filter) into the current run:
#   ./run_single.sh WORKLOAD [SYSTEM] [key=value ...] [repro-run options]
#   ./run_single.sh gemma2 fused
# The words fill the axes workload, system in that order (the leading ones at least);
# key=value names any other axis or case key. repro-run's options pass through with their
# values (--dry-run, --local, -c FILE, --device LABEL, --only K=V, --cases NAME, ...). The
# cells run again in the current run (the one ae_logs points to), in its case lists and with
# its cluster file unless given: the new logs go to its logs/, the old ones move to its
# attempts/. Without a current run it stops (exit 2; ./run.sh starts one). Needs the build, as
# ./run.sh does.
#   ./run_single.sh -h | --help   this text (needs no build, writes nothing)
for a in "$@"; do
  case $a in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
done
# the repository root: the nearest folder above this one that holds .repro-root
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ] || [ "$PWD" = / ]; do cd ..; done && pwd)
[ -e "$root/.repro-root" ] || { echo "$0: no .repro-root above this folder" >&2; exit 2; }
exec "$root/scripts/run-single.sh" "$(dirname "$0")" "workload system" "$@"
