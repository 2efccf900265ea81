#!/usr/bin/env bash
# End to end through the local executor: a failing cell, a crashing one, a cell past its time
# limit, and the runner SIGKILLed after starting its second cell then resumed: no cell runs
# twice except the one killed mid-run, no log is lost, orphans of the dead runner are ended.
#   e2e_local.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$1 work=$2
rm -rf "$work"; mkdir -p "$work"
make_matrix "$work/fig" 2 60 1 h100
cd "$work/fig" || exit 1
export REPRO_KILL_GRACE_S=1

# 1. killed by SIGKILL right after the 2nd cell started (-j 2: both slots busy)
REPRO_RUN_TEST_KILL=local-start:2 "$runner" run experiment.yaml --local --device h100 -j 2 -q >out1 2>&1
check_eq "runner died of SIGKILL" "$?" 137
run=$(current_run)
check "journal exists" test -s "$run/manifest"
orphans=$(grep -l "REPRO_LOCAL_RUN=$run" /proc/[0-9]*/environ 2>/dev/null | wc -l)
check "cells of the killed runner still run (orphans)" test "$orphans" -ge 1
# the two cells started before the kill may not have reached their program yet (a loaded
# machine): let them say they started, or the resume below ends them first
for _ in $(seq 100); do [ "$(wc -l <count 2>/dev/null || echo 0)" -ge 2 ] && break; sleep 0.05; done

# 2. resume: the orphans are ended, cells without a good log run, in the same run folder
t0=$(date +%s)
"$runner" run experiment.yaml --local --device h100 --resume -j 3 -q >out2 2>&1
rc=$?
check_eq "resume exit (failed cells present)" "$rc" 1
check "failure summary names the TIMEOUT" grep -q "timeout *TIMEOUT *tle.h100.z.hang.log" out2
check_eq "resumed into the same run" "$(current_run)" "$run"
orphans=$(grep -l "REPRO_LOCAL_RUN=$run" /proc/[0-9]*/environ 2>/dev/null | wc -l)
check_eq "no process of the run left" "$orphans" 0
check_matrix_logs "$run/logs" h100
check "tle cell ended within limit+grace" test $(( $(date +%s) - t0 )) -lt 30
# the two cells started before the kill ran twice (killed attempt + rerun), all others once
twice=$(starts count | awk '$2 == 2' | wc -l)
more=$(starts count | awk '$2 > 2' | wc -l)
check_eq "cells that ran twice" "$twice" 2
check_eq "cells that ran more than twice" "$more" 0
check_eq "cells that ran" "$(starts count | wc -l)" 8
# the killed attempts' partial output is still there
check "killed attempts kept in tmp/" test "$(count_paths "$run/tmp"/*)" -ge 2

# 3. resume again: nothing to do (bad cells rerun, good ones kept)
"$runner" run experiment.yaml --local --device h100 --resume --only system=good >out3 2>&1
check_eq "second resume has nothing to do" "$?" 0
check "kept message" grep -q "2 cells already have a good log: kept" out3

# 4. rerun one cell into the current run: the old log moves to attempts/
"$runner" run experiment.yaml --local --device h100 --rerun --only workload=a,system=good -q >out4 2>&1
check_eq "rerun exit" "$?" 0
check "old log kept in attempts/" test -f "$run/attempts/main.h100.a.good.log.1"
check_eq "rerun log ok" "$(last_result "$run/logs/main.h100.a.good.log" status)" ok

# 5. a fresh run never deletes the old one
"$runner" run experiment.yaml --local --device h100 -q --only experiment=main,system=good >out5 2>&1
check_eq "new run exit" "$?" 0
check "old run still there" test -f "$run/logs/main.h100.a.good.log"
check "ae_logs moved to the new run" test "$(current_run)" != "$run"
check_eq "runs" "$(count_paths runs/*)" 2

# 6. the local executor refuses to mix devices
sed -i 's/device: \[h100\], workload: \[z\]/device: [h100, a100], workload: [z]/' experiment.yaml
"$runner" run experiment.yaml --local -q >out6 2>&1
check_eq "mixed devices refused" "$?" 2
check "says why" grep -q "pick one with --device" out6
finish
