#!/usr/bin/env bash
# studies/h2o-diag without a GPU: the experiment file validates with both shipped cluster
# files; the dry run prints the matrix of issue 13 (cells and log names); run_single.sh maps
# its words and the seed's spelling (--system=ours --diagonal_k=4) onto cells, any k in 1-31
# (one that diag does not list as one ad-hoc cell), and refuses anything else; a local run in
# CPU mode (the CPU reference, cluster local-test) of a few real cells through the shipped
# run.sh with the real attnvar writes logs whose config carries diag_k and cache_dtype;
# --diagonal_k=3 adds its cell to that run (kept by --resume, its old log kept on a rerun);
# and plot_diag.sh and repro-plot read those logs, k = 3 as one more point.
#   study.sh REPRO_RUN BUILD_DIR WORK_DIR
source "$(dirname "$0")/../runner/lib.sh"
runner=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") build=$(cd "$2" && pwd) work=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$build/bin/attnvar" ] || skip "attnvar is not built"
scratch_repo "$work" studies/h2o-diag "$build"
cp "$src"/studies/h2o-diag/{experiment.yaml,run.sh,run_single.sh,plot.sh,plot_diag.sh,gpu_run.sh} "$study/"
export REPRO_RUN=$runner REPRO_BUILD_DIR=$build REPRO_PLOT_BIN=$build/bin/repro-plot
cluster=$repo/clusters/local-test.yaml

for c in generic local-test; do
  check "validates with $c" "$runner" check "$study/experiment.yaml" -c "$repo/clusters/$c.yaml"
done
check "gpu_run.sh parses" bash -n "$study/gpu_run.sh"
check "plot_diag.sh parses" bash -n "$study/plot_diag.sh"

# the matrix on one device: base 4 (tensorrt is absent: no cell), diag 7 x 2, scale 2 x 3 x 2
(cd "$study" && ./run.sh --dry-run --local --device h100 -c "$cluster" >cells.txt 2>err.txt)
check_eq "dry-run exit" "$?" 0
check_eq "cells" "$(wc -l <"$study/cells.txt")" 31
check_eq "base cells" "$(grep -c '^base\.' "$study/cells.txt")" 5
check_eq "diag cells" "$(grep -c '^diag\.' "$study/cells.txt")" 14
check_eq "scale cells" "$(grep -c '^scale\.' "$study/cells.txt")" 12
check "ours in base is k=1" grep -q "^base.h100.ours.4096.k1.fp32.log	.*--system fused-diag --diag-k 1 --cache-dtype fp32 --phase-times" "$study/cells.txt"
check "fused-k0 is fused-diag k=0" grep -q "^base.h100.fused-k0.4096.k1.fp32.log	.*--system fused-diag --diag-k 0 --phase-times" "$study/cells.txt"
check "flashtensor is the artifact's compiler" grep -q "^base.h100.flashtensor.4096.k1.fp32.log	.*peer.py --system flashtensor --phase-times" "$study/cells.txt"
check "diag k=31 fp16" grep -q "^diag.h100.ours.4096.k31.fp16.log	.*--diag-k 31 --cache-dtype fp16" "$study/cells.txt"
check "scale S=8192 k=4" grep -q "^scale.h100.ours.8192.k4.fp32.log	.*--diag-k 4 .*--seqlen 8192" "$study/cells.txt"
check "no scale S=4096" test "$(grep -c '^scale\.h100\.ours\.4096' "$study/cells.txt")" = 0

# run_single.sh: the kit's words and the seed's spelling
single() { (cd "$study" && ./run_single.sh "$@" --dry-run --local --device h100 -c "$cluster" 2>/dev/null | cut -f1 | sort | tr '\n' ' '); }
check_eq "run_single diag ours diag_k=4" "$(single diag ours diag_k=4)" "diag.h100.ours.4096.k4.fp16.log diag.h100.ours.4096.k4.fp32.log "
check_eq "seed: --system=ours --diagonal_k=4" "$(single --system=ours --diagonal_k=4)" "diag.h100.ours.4096.k4.fp32.log "
check_eq "seed: --diagonal_k=16 cache_dtype=fp16" "$(single --system=ours --diagonal_k=16 cache_dtype=fp16)" "diag.h100.ours.4096.k16.fp16.log "
check_eq "seed: --system=flashtensor" "$(single --system=flashtensor)" "base.h100.flashtensor.4096.k1.fp32.log "
check_eq "seed: --system=torchinductor" "$(single --system=torchinductor)" "base.h100.inductor.4096.k1.fp32.log "
(cd "$study" && ./run_single.sh --system=torch --diagonal_k=4 --dry-run -c "$cluster" >/dev/null 2>err2.txt)
check_eq "--diagonal_k with torch refused" "$?" 2
check "--diagonal_k with torch named" grep -q "option of --system=ours" "$study/err2.txt"
# any k of the seed's 1-31: one diag does not list is one ad-hoc cell with the matrix's log name
check_eq "seed: --diagonal_k=3 (ad-hoc)" "$(single --system=ours --diagonal_k=3)" "diag.h100.ours.4096.k3.fp32.log "
check_eq "seed: --diagonal_k=1 (listed)" "$(single --system=ours --diagonal_k=1)" "diag.h100.ours.4096.k1.fp32.log "
check_eq "seed: --diagonal_k=31 (listed)" "$(single --system=ours --diagonal_k=31)" "diag.h100.ours.4096.k31.fp32.log "
check_eq "seed: --diagonal_k=30 cache_dtype=fp16 (ad-hoc)" "$(single --system=ours --diagonal_k=30 cache_dtype=fp16)" "diag.h100.ours.4096.k30.fp16.log "
check_eq "run_single diag ours diag_k=5 (ad-hoc, both dtypes)" "$(single diag ours diag_k=5)" "diag.h100.ours.4096.k5.fp16.log diag.h100.ours.4096.k5.fp32.log "
check_eq "run_single scale ours seqlen=2048 diag_k=3" "$(single scale ours seqlen=2048 diag_k=3 cache_dtype=fp32)" "scale.h100.ours.2048.k3.fp32.log "
(cd "$study" && ./run_single.sh --system=ours --diagonal_k=3 --dry-run --local --device h100 -c "$cluster" >k3.txt 2>/dev/null)
check "k=3 reaches attnvar" grep -q "^diag.h100.ours.4096.k3.fp32.log	.*--system fused-diag --diag-k 3 --cache-dtype fp32 --phase-times" "$study/k3.txt"
for k in 0 32 abc "" 03 "3;x" -1; do
  (cd "$study" && ./run_single.sh --system=ours --diagonal_k="$k" --dry-run --local --device h100 -c "$cluster" >out.txt 2>err.txt)
  check_eq "--diagonal_k='$k' refused: exit 2" "$?" 2
  check "--diagonal_k='$k' refused: the value and the range named" \
    grep -qF "run_single.sh: --diagonal_k=$(printf %q "$k"): expected an integer in 1-31" "$study/err.txt"
  check "--diagonal_k='$k' refused: no cell" test ! -s "$study/out.txt"
done
(cd "$study" && ./run_single.sh diag ours diag_k=32 --dry-run --local --device h100 -c "$cluster" >/dev/null 2>err.txt)
check_eq "diag_k=32 refused by the runner: exit 2" "$?" 2
check "diag_k=32: the range named" grep -qF "has diag_k=32 (axis diag_k takes its listed values or, as an ad-hoc value, a plain integer (no + or leading 0) in [0, 31] in experiments diag, scale)" "$study/err.txt"

# a real local run in CPU mode: base's fused-k0 and ours, diag k in {0, 4} (the cells run
# at the cluster's S = 512, heads 2; log names are rendered without the cluster's vars, so they
# keep the matrix's 4096)
(cd "$study" && ./run.sh --local --device h100 -c "$cluster" -q \
  --only experiment=base,system=fused-k0 --only experiment=base,system=ours \
  --only experiment=diag,diag_k=0 --only experiment=diag,diag_k=4 >run.txt 2>&1)
check_eq "local run exit" "$?" 0
for f in base.h100.fused-k0.4096.k1.fp32 base.h100.ours.4096.k1.fp32 diag.h100.ours.4096.k4.fp16 diag.h100.ours.4096.k0.fp32; do
  check_eq "$f ok" "$(last_result "$study/ae_logs/$f.log" status)" ok
done
check "k=4 fp16 in the config" grep -q "^config .*system=fused-diag .*seqlen=512 .*diag_k=4 cache_dtype=fp16" "$study/ae_logs/diag.h100.ours.4096.k4.fp16.log"
check "fused-k0 is k=0" grep -q "^config .*diag_k=0" "$study/ae_logs/base.h100.fused-k0.4096.k1.fp32.log"

# k = 3 through the seed's spelling into that run: an ad-hoc cell that joins it, its log in
# ae_logs beside the others; again: the first log kept in attempts/; --resume keeps it
(cd "$study" && ./run_single.sh --system=ours --diagonal_k=3 --local --device h100 -c "$cluster" -q >k3run.txt 2>&1)
check_eq "run_single --diagonal_k=3 exit" "$?" 0
k3=$study/ae_logs/diag.h100.ours.4096.k3.fp32.log
check_eq "k=3 ok" "$(last_result "$k3" status)" ok
check "k=3 in the config" grep -q "^config .*system=fused-diag .*diag_k=3 cache_dtype=fp32" "$k3"
check "k=3 joined the run" grep -q "1 ad-hoc cells .* join run" "$study/k3run.txt"
check "the run's select record keeps k=3" grep -q '^select device=h100 only="experiment=diag,system=ours,diag_k=3,cache_dtype=fp32"$' "$study/ae_logs/../manifest"
(cd "$study" && ./run_single.sh --system=ours --diagonal_k=3 --local --device h100 -c "$cluster" -q >k3run2.txt 2>&1)
check_eq "run_single --diagonal_k=3 again: exit" "$?" 0
check_eq "again: the first k=3 log kept in attempts/" "$(count_paths "$study"/ae_logs/../attempts/diag.h100.ours.4096.k3.fp32.log.*)" 1
check_eq "again: the other logs stay" "$(count_paths "$study"/ae_logs/*)" 7
mv "$k3" "$work/k3.moved"
(cd "$study" && ./run.sh --resume --local -c "$cluster" >resume.txt 2>&1)
check_eq "--resume exit" "$?" 0
check_eq "--resume: the ad-hoc cell's log again" "$(last_result "$k3" status)" ok
check "--resume: the other six kept" grep -q "6 cells already have a good log: kept" "$study/resume.txt"
check "--resume: k=3 alone ran" grep -q ": 1 cells to run" "$study/resume.txt"
check_eq "--resume: no fp16 k=3 (the run never held it)" "$(count_paths "$study"/ae_logs/diag.h100.ours.4096.k3.fp16.log)" 0

# plot_diag.sh: the table has every log (CPU logs: no phase lines, so no figure data but no error)
(cd "$study" && ./plot_diag.sh --out "$work/figs" --no-render >plot_diag.txt 2>&1)
check_eq "plot_diag exit" "$?" 0
check_eq "plot_diag rows" "$(($(wc -l <"$work/figs/h2o_diag.tsv") - 1))" 7
check "plot_diag: k=4 fp16 ok" grep -qP "^diag\th100\tours\t4096\t4\tfp16\tok\t" "$work/figs/h2o_diag.tsv"
check "plot_diag: the ad-hoc k=3 ok" grep -qP "^diag\th100\tours\t4096\t3\tfp32\tok\t" "$work/figs/h2o_diag.tsv"
check_eq "plot_diag: k=3 one more point of the k figure" "$(awk '!/^#/ { printf "%s ", $1 }' "$work/figs/h2o_diag_k.h100.dat")" "0 3 4 "
check "plot_diag wrote the k data" test -s "$work/figs/h2o_diag_k.h100.dat"
check "plot_diag wrote the gnuplot script" test -s "$work/figs/h2o_diag_k.gp"

# repro-plot reads the base logs with the study's plot section
(cd "$study" && ./plot.sh --out "$work/figs" --no-render >plot.txt 2>&1)
check_eq "plot.sh exit" "$?" 0
check "plot wrote the base data" test -s "$work/figs/h2o_diag_base.dat"
finish
