#!/usr/bin/env bash
# --exclude, --only K!=V and --set end to end through the local executor: a dry run prints only
# the cells left after the exclusions, with the --set values in their commands; a real run
# records them in its manifest's select record; --resume (no filters of its own) reruns only
# cells of that selection with the same --set values; a different --set on resume is refused.
#   exclude.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$1 work=$2
logs() { (cd "$1" && printf '%s ' *); }
rm -rf "$work"; mkdir -p "$work/fig"
cd "$work/fig" || exit 1
cat >experiment.yaml <<'YAML'
defaults: {warmup: 10, runs: 30}
systems:
  a: {command: "echo note {system} {workload} {warmup} {runs}; echo result status=ok avg_ms=1 median_ms=1 min_ms=1 max_ms=1"}
  b: {command: "echo note {system} {workload} {warmup} {runs}; echo result status=ok avg_ms=1 median_ms=1 min_ms=1 max_ms=1"}
  c: {command: "echo note {system} {workload} {warmup} {runs}; echo result status=ok avg_ms=1 median_ms=1 min_ms=1 max_ms=1"}
experiments:
  k:
    log: "{experiment}.{device}.{workload}.{system}.log"
    time_limit: 30
    axes: {device: [h100], workload: [w1, w2], system: [a, b, c]}
YAML

"$runner" run experiment.yaml --local --dry-run --exclude system=c --exclude workload=w2,system=b >dry 2>dry.err
check_eq "dry run exit" "$?" 0
check_eq "dry run cells (6 - 2 c - w2 b)" "$(cut -f1 dry | tr '\n' ' ')" \
  "k.h100.w1.a.log k.h100.w1.b.log k.h100.w2.a.log "
"$runner" run experiment.yaml --local --dry-run --only 'system!=a,workload=w2' >dry2 2>/dev/null
check_eq "--only K!=V" "$(cut -f1 dry2 | tr '\n' ' ')" "k.h100.w2.b.log k.h100.w2.c.log "
"$runner" run experiment.yaml --local --dry-run --only system=a --set warmup=2 --set runs=5 >dry3 2>&1
check "--set in the commands" grep -q "^k.h100.w1.a.log	echo note a w1 2 5; " dry3
"$runner" run experiment.yaml --local --dry-run --exclude system=d >/dev/null 2>err4
check_eq "unknown excluded value: exit 2" "$?" 2
check "unknown excluded value named" grep -q "exclude: no experiment in .* has system=d" err4
"$runner" run experiment.yaml --local --dry-run --set workload=w3 >/dev/null 2>err5
check_eq "--set of an axis: exit 2" "$?" 2
check "--set of an axis refused" grep -q "set workload: workload is an axis" err5
# shellcheck disable=SC2016 # the literal text $(x): it must reach the command quoted
"$runner" run experiment.yaml --local --dry-run --set 'warmup=$(x)' >dry6 2>&1
check "--set value is quoted" grep -q "echo note a w1 '\$(x)' 30; " dry6
"$runner" run experiment.yaml --local --dry-run --set 'warmup' >/dev/null 2>err7
check "--set without a value" grep -q "expected NAME=VALUE" err7

# a real run remembers its exclusions and --set; a resume keeps both
"$runner" run experiment.yaml --local -q --exclude system=c --set warmup=3 >run.out 2>&1
check_eq "run exit" "$?" 0
run=$(current_run)
check "select record" grep -q '^select exclude="system=c" set="warmup=3"$' "$run/manifest"
check_eq "run: logs" "$(logs "$run/logs")" "k.h100.w1.a.log k.h100.w1.b.log k.h100.w2.a.log k.h100.w2.b.log "
check "run: --set in a log" grep -q "a w1 3 30" "$run/logs/k.h100.w1.a.log"
rm "$run/logs/k.h100.w2.a.log"
"$runner" run experiment.yaml --local -q --resume >resume.out 2>&1
check_eq "resume exit" "$?" 0
check_eq "resume: no excluded cell ran" "$(logs "$run/logs")" "k.h100.w1.a.log k.h100.w1.b.log k.h100.w2.a.log k.h100.w2.b.log "
check "resume: the run's --set" grep -q "a w2 3 30" "$run/logs/k.h100.w2.a.log"
"$runner" run experiment.yaml --local -q --resume --set warmup=4 >resume2.out 2>&1
check_eq "resume with another --set: exit 2" "$?" 2
check "resume with another --set: refused naming the run's" grep -q "was made with --set warmup=3" resume2.out
"$runner" run experiment.yaml --local -q --rerun --only system=c >rerun.out 2>&1
check_eq "rerun of excluded cells: refused (exit 2)" "$?" 2
check "rerun: the excluded cells are outside the run" grep -q "made with --exclude system=c" rerun.out
finish
