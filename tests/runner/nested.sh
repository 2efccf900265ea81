#!/usr/bin/env bash
# An experiment folder nested deep in the tree (studies/nested/a/b/, from the fixture
# tests/runner/nested/a/b/) runs through the shipped wrappers: dry run, a local run with the
# stand-in program, run_single, and plot.sh. {root} must be the folder holding .repro-root,
# not the experiment folder's parent; without a marker above, the wrappers and {root} fail
# with a message.
#   nested.sh REPRO_RUN WORK_DIR
source "$(dirname "$0")/lib.sh"
runner=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") work=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$(dirname "$runner")/.." && pwd)
scratch_repo "$work" studies/nested/a/b
cp "$src/tests/runner/nested/a/b/experiment.yaml" "$src/fig12/run.sh" "$src/fig12/plot.sh" "$study/"
sed 's/"experiment workload system"/"workload system"/' "$src/fig12/run_single.sh" >"$study/run_single.sh"
chmod +x "$study/run_single.sh"
export REPRO_RUN=$runner REPRO_BUILD_DIR=$build
cluster=$repo/clusters/local-test.yaml

# dry run: {root} is the marked folder, four levels up
(cd "$study" && ./run.sh --dry-run --local -c "$cluster" >cells.txt 2>err.txt)
check_eq "dry-run exit" "$?" 0
check_eq "cells" "$(cut -f1 "$study/cells.txt" | tr '\n' ' ')" "kernel.h100.attn.base.log kernel.h100.attn.ours.log "
check_eq "{root} is the marked folder" "$(head -1 "$study/cells.txt" | cut -f2)" \
  "$repo/tests/runner/standin.sh --workload attn --system base"

# a real local run, then one cell again through run_single.sh
(cd "$study" && ./run.sh --local --device h100 -c "$cluster" -q >out.txt 2>&1)
check_eq "local run exit" "$?" 0
for s in base ours; do
  check_eq "$s log ok" "$(last_result "$study/ae_logs/kernel.h100.attn.$s.log" status)" ok
done
(cd "$study" && ./run_single.sh attn ours --local --device h100 -c "$cluster" -q >single.txt 2>&1)
check_eq "run_single exit" "$?" 0
check "run_single kept the previous log" test -n "$(ls "$study"/ae_logs/../attempts/ 2>/dev/null)"

# plot.sh draws from ae_logs, the log name taken from the experiment's log:
(cd "$study" && ./plot.sh --out "$work/figs" --no-render >plot.txt 2>&1)
check_eq "plot exit" "$?" 0
check "plot read both logs" grep -q "2 logs read from .*ae_logs (nested)" "$study/plot.txt"
check "plot wrote the data" test -s "$work/figs/nested_kernel.dat"
check "both systems drawn" grep -q "^array sysname\[2\] = \[\"base\", \"ours\"\]" "$work/figs/nested_kernel.gp"

# no marker above the folder: the wrapper and {root} say so
lost=$(mktemp -d /tmp/repro-nested-XXXXXX)
mkdir -p "$lost/x/y"
cp "$study/experiment.yaml" "$study/run.sh" "$lost/x/y/"
(cd "$lost/x/y" && ./run.sh --dry-run >out.txt 2>&1)
check_eq "no marker: run.sh exit" "$?" 2
check "no marker: run.sh names it" grep -q "no .repro-root above" "$lost/x/y/out.txt"
"$runner" run "$lost/x/y/experiment.yaml" --dry-run >/dev/null 2>"$lost/err.txt"
check_eq "no marker: repro-run exit" "$?" 2
check "no marker: {root} error names the folder" grep -q "{root}: no repository root above $lost/x/y" "$lost/err.txt"
rm -rf "$lost"
finish
