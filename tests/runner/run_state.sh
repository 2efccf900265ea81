#!/usr/bin/env bash
# A run's state on disk is the runner's alone, through the local executor:
#   - the manifest, logs/, attempts/, the run folder itself or the figure's ae_logs pointer
#     replaced by a link, a FIFO or garbage: `status`, `--resume` and `--rerun` stop naming the
#     path, return at once and write nothing, in the run folder or where the link points;
#   - --resume, --rerun and run_single.sh continue with the run's own cluster file unless -c
#     is given (then they say that it overrides the run's); run_single.sh without a current
#     run says so and makes none;
#   - `status` writes nothing and exits 1 when cells failed;
#   - ae_logs points to the run the runner last worked on, when that run is in runs/.
#   run_state.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") work=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
standin=$src/tests/runner/standin.sh
scratch_repo "$work" fig
export REPRO_RUN=$runner
unset REPRO_CLUSTER
cp "$src/fig12/run.sh" "$study/"
sed 's/"experiment workload system"/"workload system"/' "$src/fig12/run_single.sh" >"$study/run_single.sh"
chmod +x "$study/run_single.sh"
# {tag} comes from the cluster file: a cell's log and the count file say which one it ran with
cat >"$study/experiment.yaml" <<EOF2
figure: statefig
defaults: {count: "$study/count", standin: "$standin", tag: none}
systems:
  good: {command: "{standin} --workload {workload}.{tag} --system {system} --count {count}"}
  bad:  {command: "{standin} --workload {workload}.{tag} --system {system} --mode fail --count {count}"}
experiments:
  main:
    log: "{experiment}.{device}.{workload}.{system}.log"
    time_limit: 60
    axes: {device: [h100], workload: [a, b], system: [good, bad]}
EOF2
for t in A B; do
  cat >"$work/cluster$t.yaml" <<EOF2
name: cluster$t
executor: local
vars: {tag: $t}
devices:
  h100: {partition: h100}
EOF2
done
cA=$work/clusterA.yaml cB=$work/clusterB.yaml
cd "$study" || exit 1
started() { local n; n=$(grep -c " $1\$" count 2>/dev/null); echo "${n:-0}"; }
# every path under the folders with its type, size, mode and modification time
snapshot() { find "$@" -printf '%p %y %s %m %T@\n' 2>/dev/null | sort; }

# 5. run_single.sh with no current run says so and makes none
./run_single.sh a good -c "$cA" -q >out0 2>&1
check_eq "run_single without a current run: exit 2" "$?" 2
check "run_single without a current run: says so" grep -q "no current run" out0
check_eq "run_single without a current run: no run made" "$(count_paths runs/*)" 0

# the run every case below starts from: made with cluster A, two failed cells
"$runner" run experiment.yaml -c "$cA" -q >out1 2>&1
check_eq "first run (failed cells)" "$?" 1
run=$(current_run)
check_eq "cells ran with cluster A" "$(started a.A.good)$(started a.A.bad)$(started b.A.bad)" 111

# status: exit 1 when cells failed, writes nothing (not even the end of a torn record)
printf 'job sub=1 jobi' >>"$run/manifest"
before=$(snapshot "$run")
"$runner" status . >st1 2>&1
check_eq "status exit with failed cells" "$?" 1
check "status lists the failed cell" grep -q "main.h100.a.bad.log" st1
check_eq "status wrote nothing" "$(snapshot "$run")" "$before"
"$runner" status "$run" >/dev/null 2>&1
check_eq "status of the run folder: exit 1" "$?" 1
"$runner" run experiment.yaml --resume --only system=good -q >/dev/null 2>&1
check_eq "resume after a torn record" "$?" 0
"$runner" status . >/dev/null 2>&1
check_eq "status after the torn record was ended" "$?" 1

# 4. --resume/--rerun/run_single.sh keep the run's cluster file
REPRO_CLUSTER=$cB "$runner" run experiment.yaml --resume -q >out2 2>&1
check_eq "resume with REPRO_CLUSTER set (failed cells again)" "$?" 1
check_eq "resume ran the failed cells with the run's cluster A" "$(started a.A.bad)$(started a.B.bad)" 20
REPRO_CLUSTER=$cB ./run_single.sh a bad -q >out3 2>&1
check_eq "run_single exit (the cell fails)" "$?" 1
check_eq "run_single ran with the run's cluster A" "$(started a.A.bad)$(started a.B.bad)" 30
"$runner" run experiment.yaml --rerun --only workload=b,system=bad -c "$cB" -q >out4 2>&1
check_eq "rerun with -c (the cell fails)" "$?" 1
check_eq "rerun with -c ran with cluster B" "$(started b.B.bad)" 1
check "rerun with -c says it overrides the run's" grep -q "overrides the run's cluster file $cA" out4

# 1. run state replaced by links, FIFOs or garbage
refused() {  # refused WHAT PATH-IN-MESSAGE COMMAND...: exit 2 at once, the message names the path
  local what=$1 path=$2 rc
  shift 2
  timeout 20 "$@" >err.txt 2>&1
  rc=$?
  check_eq "$what: refused" "$rc" 2
  if grep -qF -- "$path" err.txt; then ok; else bad "$what: expected '$path' in: $(head -c 400 err.txt)"; fi
}
resume=("$runner" run experiment.yaml --resume -q)
rerun=("$runner" run experiment.yaml --rerun --only workload=a -q)
nruns=$(count_paths runs/*)

# the manifest a link to a journal elsewhere (as root: a system file)
mkdir -p "$work/victim"
cp "$run/manifest" "$work/victim/journal"
mv "$run/manifest" "$run/manifest.real"
ln -s "$work/victim/journal" "$run/manifest"
before=$(snapshot "$run" "$work/victim")
refused "manifest link: resume" "$run/manifest" "${resume[@]}"
refused "manifest link: rerun" "$run/manifest" "${rerun[@]}"
refused "manifest link: status" "$run/manifest" "$runner" status .
refused "manifest link: status of the run folder" "$run/manifest" "$runner" status "$run"
check "manifest link: says it is a link" grep -q "link" err.txt
check_eq "manifest link: nothing written" "$(snapshot "$run" "$work/victim")" "$before"
rm "$run/manifest"

# the manifest a FIFO: nothing blocks
mkfifo "$run/manifest"
before=$(snapshot "$run")
refused "manifest FIFO: status" "$run/manifest" "$runner" status .
refused "manifest FIFO: resume" "$run/manifest" "${resume[@]}"
check_eq "manifest FIFO: nothing written" "$(snapshot "$run")" "$before"
rm "$run/manifest"

# an empty or garbage manifest is refused naming the line, not resumed as the whole figure
: >"$run/manifest"
refused "empty manifest: resume" "$run/manifest:1:" "${resume[@]}"
refused "empty manifest: status" "$run/manifest:1:" "$runner" status .
{ head -3 "$run/manifest.real"; printf '\001\002 garbage =\n'; tail -n +4 "$run/manifest.real"; } >"$run/manifest"
refused "garbage line: resume" "$run/manifest:4:" "${resume[@]}"
refused "garbage line: status" "$run/manifest:4:" "$runner" status .
grep -v '^select' "$run/manifest.real" >"$run/manifest"
refused "no selection: resume" "$run/manifest" "${resume[@]}"
check "no selection: says what is missing" grep -q "select" err.txt
check_eq "no cell ran from a refused manifest" "$(started a.A.good)$(started b.A.good)" 11
mv "$run/manifest.real" "$run/manifest"

# logs/ and attempts/ links to another folder: the cells' logs would land there
for d in logs attempts; do
  mkdir -p "$work/other-$d"
  cp -a "$run/$d/." "$work/other-$d/"
  mv "$run/$d" "$run/$d.real"
  ln -s "$work/other-$d" "$run/$d"
  before=$(snapshot "$run" "$work/other-$d")
  refused "$d link: resume" "$run/$d" "${resume[@]}"
  refused "$d link: rerun" "$run/$d" "${rerun[@]}"
  check_eq "$d link: nothing written" "$(snapshot "$run" "$work/other-$d")" "$before"
  rm "$run/$d"
  mv "$run/$d.real" "$run/$d"
done
# logs/ a file
mv "$run/logs" "$run/logs.real"
touch "$run/logs"
refused "logs a file: resume" "$run/logs" "${resume[@]}"
rm "$run/logs"
mv "$run/logs.real" "$run/logs"

# the run folder a link, and ae_logs pointing outside runs/
id=$(basename "$run")
mkdir -p "$work/outside"
mv "$run" "$work/outside/$id"
ln -s "$work/outside/$id" "runs/$id"
before=$(snapshot "$work/outside")
refused "run folder link: resume" "runs/$id" "${resume[@]}"
refused "run folder link: status" "runs/$id" "$runner" status .
refused "run folder link: --run" "runs/$id" "${resume[@]}" --run "runs/$id"
rm "runs/$id"
ln -sfn "$work/outside/$id/logs" ae_logs
refused "ae_logs outside runs/: resume" "ae_logs" "${resume[@]}"
refused "ae_logs outside runs/: status" "ae_logs" "$runner" status .
refused "ae_logs outside runs/: run_single" "ae_logs" ./run_single.sh a good
check_eq "links: nothing written outside" "$(snapshot "$work/outside")" "$before"
mv "$work/outside/$id" "$run"
ln -sfn "runs/$id/logs" ae_logs
check_eq "no run made by a refused command" "$(count_paths runs/*)" "$nruns"
check_eq "nothing ran from a refused command" "$(started a.A.good)$(started b.A.good)" 11

# the restored run continues
"$runner" run experiment.yaml --resume --only system=good -q >out9 2>&1
check_eq "restored run resumes" "$?" 0

# 6. ae_logs follows the run the runner works on: --resume --run of an older run of runs/
# makes it current again; a run folder elsewhere (a copy brought from another machine) is
# resumed where it is, and ae_logs stays (the runner does not say it points there)
"$runner" run experiment.yaml --only system=good -c "$cA" -q >out10 2>&1
check_eq "a second run" "$?" 0
second=$(current_run)
check "the second run is current" test "$second" != "$run"
"$runner" run experiment.yaml --resume --run "$run" -q >out11 2>&1
check_eq "resume --run of the first run (its failed cells again)" "$?" 1
check_eq "the resumed run is current" "$(current_run)" "$run"
check "resume --run says ae_logs points there" grep -qF "logs: $run/logs (ae_logs points there)" out11
mkdir -p "$work/elsewhere"
cp -r "$second" "$work/elsewhere/"
copy=$work/elsewhere/$(basename "$second")
rm -f "$copy/logs/main.h100.a.good.log"
"$runner" run experiment.yaml --resume --run "$copy" -q >out12 2>&1
check_eq "resume --run of a copy outside runs/" "$?" 0
check "the copy's missing cell ran into the copy" test -s "$copy/logs/main.h100.a.good.log"
check_eq "ae_logs stays on the run it named" "$(current_run)" "$run"
check "resume of the copy names its logs" grep -qF "logs: $copy/logs" out12
check "resume of the copy does not say ae_logs points there" sh -c "! grep -q 'ae_logs points there' out12"
"$runner" run experiment.yaml --rerun --run "$copy" --only workload=a,system=good -q >out13 2>&1
check_eq "rerun --run of the copy" "$?" 0
check_eq "rerun of the copy leaves ae_logs too" "$(current_run)" "$run"
check "the copy's rerun kept the old log in its attempts/" test -n "$(ls "$copy/attempts")"
finish
