#!/usr/bin/env bash
# kernels/attention/scripts/gpu_check.sh, bench.sh and ab.sh driven by the fixture tests/kernels/fake_attnvar.sh
# (no GPU): the case list covers every workload x system x shape, exit codes are classified,
# a failed check fails the sweep, and bench's table turns logs into ms, ratios, FAIL/OOM/NS.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
fake=$root/tests/kernels/fake_attnvar.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
expect() { # description, command...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: $what" >&2; fi
}

OUT=$tmp/gc "$root/kernels/attention/scripts/gpu_check.sh" --bin "$fake" --no-sanitizer --jobs 2 >"$tmp/gc.txt" 2>&1
rc=$?
t=$tmp/gc/gpu_check/table.txt
expect "gpu_check exits 1 when a check fails" test "$rc" = 1
expect "1819 cases (8 workloads x (4 systems x 41 shapes + 3 fused systems x 3 scaled shapes + fused-r192 x 7 D=64 shapes) + (fa3, fa2, flashinfer x attn, gemma2) x 44 shapes + fused x 7 dense workloads x 8 --gpuref both shapes + corm x 3 systems x 3 varied-mask shapes + nsa's 25 x 2 systems)" grep -q '^1819 cases:' "$t"
expect "head dim 96 runs on every system" grep -qE '^h2o\.fused-ws1\.d96h48bf16 +PASS' "$t"
expect "GQA runs on the peers" grep -qE '^gemma2\.flashinfer\.g4nc +PASS' "$t"
expect "fa3 runs attn at the big shape" grep -qE '^attn\.fa3\.s4096bf16 +PASS' "$t"
expect "fa2 runs gemma2 at the big shape" grep -qE '^gemma2\.fa2\.s4096bf16 +PASS' "$t"
expect "flashinfer runs gemma2 at the big shape" grep -qE '^gemma2\.flashinfer\.s4096bf16 +PASS' "$t"
expect "fa3 runs gemma2 (its soft-cap) at the big shape" grep -qE '^gemma2\.fa3\.s4096bf16 +PASS' "$t"
expect "nsa's cases are timed in the closing table" grep -qE '^n_4k +2\.0000 +0\.5000 +4\.00$' "$t"
expect "the failed check is listed with its output" grep -qE '^corm\.unfused\.s17 +FAIL +out=1.0e-04 corm_score=1.0e-01\(FAIL\)' "$t"
expect "sm80 cells are unsupported, with the reason" grep -qE '^h2o\.fused-sm80\.s1 +UNSUP +reason="fixture: sm80 path absent"' "$t"
expect "oom is classified" grep -qE '^kf\.fused\.s4096 +OOM' "$t"
expect "the 192-row forward has its own cases" grep -qE '^attn\.fused-r192\.w700sc +PASS' "$t"
expect "the causal 192-row shape with rows past the end is a case" grep -qE '^attn\.fused-r192\.w1000b3 +PASS' "$t"
expect "passing cells show rel_l2" grep -qE '^attn\.unfused\.s257b2 +PASS +out=2.0e-04$' "$t"
expect "one log per case" test "$(find "$tmp/gc/gpu_check/logs" -maxdepth 1 -name '*.log' | wc -l)" = 1819
c=$tmp/gc/gpu_check/cases.txt
expect "the GPU reference's forms run against each other on fused, dense workloads" \
  grep -qE '^h2o\.fused\.gr_d256g2 .* --gpuref both --check ' "$c"
expect "no --gpuref both case for nsa (one form of its reference)" test "$(grep -c '^nsa\.[^ ]*\.gr_' "$c")" = 0
expect "corm's general path runs with a varied mask" grep -qE '^corm\.fused-ws1\.cv_s4096 .*--corm-mask varied' "$c"
expect "the fig12-shape cross-check samples two groups" grep -qE '^kf\.fused\.s4096gr .*--check-pairs 2 --gpuref both' "$c"

OUT=$tmp/gcq "$root/kernels/attention/scripts/gpu_check.sh" --bin "$fake" --no-sanitizer --cases '\.g2$' >/dev/null 2>&1
expect "--cases keeps the matching cases (8 workloads x 4 systems + 6 peer cells at g2)" \
  grep -q '^38 cases:' "$tmp/gcq/gpu_check/table.txt"
OUT=$tmp/gcn "$root/kernels/attention/scripts/gpu_check.sh" --bin "$fake" --cases 'nothing-matches' >/dev/null 2>"$tmp/err"
expect "--cases matching nothing is a usage error" test $? = 2
expect "--cases matching nothing says so" grep -q "no case matches --cases 'nothing-matches'" "$tmp/err"

# memcheck cases under the fixture sanitizer: a peer wrong only under it is SANOUT (its plain
# rerun passes) and does not fail the sweep; ours wrong under it stays FAIL
mkdir -p "$tmp/san" && ln -s "$root/tests/kernels/fake_sanitizer.sh" "$tmp/san/compute-sanitizer"
PATH=$tmp/san:$PATH OUT=$tmp/gcs "$root/kernels/attention/scripts/gpu_check.sh" --bin "$fake" \
  --cases '^(attn|gemma2)\.(flashinfer|fa3)\.s400h60d64$' >/dev/null 2>&1
expect "a peer wrong only under the sanitizer does not fail the sweep" test $? = 0
t=$tmp/gcs/gpu_check/table.txt
expect "SANOUT with the sanitized and the plain result" \
  grep -qE '^attn\.flashinfer\.s400h60d64 +SANOUT +sanitized: out=5\.0e-02\(FAIL\); plain: out=2\.0e-04$' "$t"
expect "the sanitized log is kept beside the plain one" \
  test -s "$tmp/gcs/gpu_check/logs/gemma2.flashinfer.s400h60d64.sanitized.log"
expect "a peer right under the sanitizer passes" grep -qE '^attn\.fa3\.s400h60d64 +PASS' "$t"
PATH=$tmp/san:$PATH OUT=$tmp/gco "$root/kernels/attention/scripts/gpu_check.sh" --bin "$fake" \
  --cases '^attn\.fused\.d96$' >/dev/null 2>&1
expect "ours wrong under the sanitizer fails the sweep" test $? = 1
expect "ours wrong under the sanitizer stays FAIL" \
  grep -qE '^attn\.fused\.d96 +FAIL +out=5\.0e-02\(FAIL\)$' "$tmp/gco/gpu_check/table.txt"

OUT=$tmp/nsa "$root/kernels/attention/scripts/gpu_check.sh" --bin "$fake" --no-sanitizer --nsa-only >"$tmp/nsa.txt" 2>&1
expect "--nsa-only passes (nsa's cells pass in the fixture)" test $? = 0
expect "--nsa-only: 50 cases" grep -q '^50 cases:' "$tmp/nsa/gpu_check/table.txt"
expect "--nsa-only: unfused and fused of one case" grep -qE '^nsa\.unfused\.n_kv1s8 +PASS' "$tmp/nsa/gpu_check/table.txt"

OUT=$tmp/b "$root/kernels/attention/scripts/gpu_check.sh" --jobs x >/dev/null 2>"$tmp/err"
expect "bad --jobs is a usage error" test $? = 2
expect "bad --jobs names the option" grep -q -- "--jobs: expected an integer >= 1, got 'x'" "$tmp/err"

OUT=$tmp/b "$root/kernels/attention/scripts/bench.sh" --bin "$fake" --no-peers --warmup 1 --runs 1 >"$tmp/b.txt" 2>/dev/null
expect "bench exits 0" test $? = 0
expect "bench row: ms and ratios (paper 1.300 -> 0.38, unfused/fused 4.00)" \
  grep -qE '^h2o +2\.0000 +0\.5000( +-)+ \| +1\.300 +0\.38 +4\.00 +1\.00 +100\.0$' "$tmp/b.txt"
expect "bench row: oom shown as OOM" grep -qE '^kf +2\.0000 +OOM ' "$tmp/b.txt"
expect "sweep row: ms / MiB" grep -qE '^8192 +2\.0000 / 3000\.0 +0\.5000 / 100\.0 ' "$tmp/b.txt"
expect "device from the meta line" grep -q 'device: meta gpu="FIXTURE (no GPU)"' "$tmp/b.txt"
"$root/kernels/attention/scripts/bench.sh" --part nope >/dev/null 2>"$tmp/err"
expect "bad --part is a usage error" test $? = 2

# ab.sh: interleaved rounds of columns (binary:system), the table of rounds and ratios
ab=$root/kernels/attention/scripts/ab.sh
OUT=$tmp/ab "$ab" --rounds 2 --cells fig12,b16d64c "unf=$fake:unfused" "new=$fake:fused" >"$tmp/ab.txt" 2>&1
expect "ab exits 0 when every cell ran" test $? = 0
expect "ab row: both rounds of each column, the ratio of the means" \
  grep -qE '^fig12 +2\.0000 +2\.0000 +0\.5000 +0\.5000 +0\.250$' "$tmp/ab/ab/table.txt"
expect "ab interleaves: each round runs every cell under every column before the next round" \
  test "$(awk '{ print $1, $2, $3 }' "$tmp/ab/ab/order.txt" | tr '\n' ,)" = \
  "r1 fig12 unf,r1 fig12 new,r1 b16d64c unf,r1 b16d64c new,r2 fig12 unf,r2 fig12 new,r2 b16d64c unf,r2 b16d64c new,"
printf '#!/usr/bin/env bash\necho "$*" >>"%s"\nexec "%s" "$@"\n' "$tmp/argv.txt" "$fake" >"$tmp/argv_attnvar"
chmod +x "$tmp/argv_attnvar"
OUT=$tmp/abargv "$ab" --rounds 1 --cells b16d64c "a=$tmp/argv_attnvar:fused" >/dev/null 2>&1
expect "ab runs the cell's shape with the timing options, no check" grep -qx -- \
  '--workload attn --system fused --batch 16 --heads 96 --seqlen 4096 --dim 64 --warmup 10 --runs 30 --no-check' \
  "$tmp/argv.txt"
expect "ab keeps a log per cell, column and round" test "$(find "$tmp/ab/ab/logs" -name '*.log' | wc -l)" = 8
OUT=$tmp/abw "$ab" --rounds 1 --cells fig12 "a=$tmp/argv_attnvar:fused" "g=$tmp/argv_attnvar:fused@gemma2" >/dev/null 2>&1
expect "ab: a column's @WORKLOAD replaces --workload for that column" \
  test "$(tail -2 "$tmp/argv.txt" | cut -d' ' -f1-4 | tr '\n' ,)" = \
  "--workload attn --system fused,--workload gemma2 --system fused,"
OUT=$tmp/ab2 "$ab" --rounds 1 --workload kf --cells fig12 "a=$fake:unfused" "b=$fake:fused" >/dev/null 2>&1
expect "ab exits 1 when a cell failed (oom)" test $? = 1
expect "ab shows OOM and no ratio" grep -qE '^fig12 +2\.0000 +OOM +-$' "$tmp/ab2/ab/table.txt"
OUT=$tmp/ab3 "$ab" --rounds 1 --workload gemma2 --cell 'd96:--batch 1 --heads 4 --seqlen 64 --dim 96' \
  "a=$fake:fused" "fi=$fake:flashinfer" >/dev/null 2>&1
expect "ab: a column that refuses the cell shows NS (exit 0)" \
  bash -c "[ $? = 0 ] && grep -qE '^d96 +0\.5000 +NS +-$' '$tmp/ab3/ab/table.txt'"
for bad in "" "nolabel" "a=$fake" "a=/no/such/bin:fused" "--cells nope a=$fake:fused" \
           "--rounds 0 a=$fake:fused" "a=$fake:fused a=$fake:fa3"; do
  # shellcheck disable=SC2086  # each case is words
  OUT=$tmp/abu "$ab" $bad >/dev/null 2>"$tmp/err"
  expect "ab usage error: '$bad'" test $? = 2
done
OUT=$tmp/abu "$ab" --cell 'x:--batch 1; rm -rf /' "a=$fake:fused" >/dev/null 2>"$tmp/err"
expect "ab refuses a --cell whose options are not plain words" grep -q "options may hold only" "$tmp/err"

# scripts/gpu-run.sh: figure and study targets, an experiment, a case list, --resume
gr=$root/scripts/gpu-run.sh
"$gr" --dry-run --resume fig12:kernel tilebench@nsa_only sdpa-scale:d128-c1-fp16 >"$tmp/gr.txt" 2>&1
expect "gpu-run: a figure's experiment, continued" \
  grep -qx 'fig12:kernel: fig12/run.sh --local --detach --only experiment=kernel --resume' "$tmp/gr.txt"
expect "gpu-run: a study's case list" \
  grep -qx 'tilebench@nsa_only: studies/tilebench/run.sh --local --detach --cases nsa_only --resume' "$tmp/gr.txt"
expect "gpu-run: a study's experiment" grep -q '^sdpa-scale:d128-c1-fp16: studies/sdpa-scale/run.sh .*--only experiment=d128-c1-fp16' "$tmp/gr.txt"
"$gr" --dry-run --resume --widen --only system=tvm-ms --exclude seqlen=1024 fig12:kernel fig13 >"$tmp/gr2.txt" 2>&1
expect "gpu-run: --only joins the target's experiment (AND), --exclude and --widen pass on" \
  grep -qx 'fig12:kernel: fig12/run.sh --local --detach --only experiment=kernel,system=tvm-ms --exclude seqlen=1024 --resume --widen' "$tmp/gr2.txt"
expect "gpu-run: --only alone for a whole folder" \
  grep -qx 'fig13: fig13/run.sh --local --detach --only system=tvm-ms --exclude seqlen=1024 --resume --widen' "$tmp/gr2.txt"
for bad in "--only a;id=b fig13" "--exclude system fig13" "--only a=b --only c=d fig13" "--widen fig13"; do
  # shellcheck disable=SC2086  # each case is words
  "$gr" --dry-run $bad >/dev/null 2>"$tmp/err"
  expect "gpu-run usage error: '$bad'" test $? = 2
done
"$gr" --dry-run fig99 >/dev/null 2>"$tmp/err"
expect "gpu-run: an unknown folder is a usage error" test $? = 2
expect "gpu-run: ... named" grep -q "no figure or study 'fig99'" "$tmp/err"
"$gr" --dry-run 'fig12;id' >/dev/null 2>"$tmp/err"
expect "gpu-run: a target of other characters is refused" grep -q "expected FOLDER\[:EXPERIMENT\]\[@CASES\]" "$tmp/err"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
