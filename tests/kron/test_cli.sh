#!/usr/bin/env bash
# kronlayer end to end on the CPU: the issue's done criterion, the seed's positional form,
# bench and profile output (with a Chrome trace that parses as JSON), a check that fails,
# and usage errors that name their option.
#   test_cli.sh KRONLAYER
set -u
bin=$1
work=$(mktemp -d /tmp/kron-cli-XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
check_eq() { if [ "$2" = "$3" ]; then ok; else bad "$1: expected '$3', got '$2'"; fi; }

# the done criterion of issue 14
"$bin" --device cpu --dtype d --batch 16 --factors 32,32 check >"$work/check.log" 2>"$work/check.err"
check_eq "done criterion exit" "$?" 0
check_eq "check lines: 3 versions x 4 outputs + 3 pairs x 4" "$(grep -c '^check ' "$work/check.log")" 24
check_eq "no failed check" "$(grep -c '^check .* ok=0' "$work/check.log")" 0
check "a check of v3's gA2 against the reference" grep -q '^check output=gA2.v3 ' "$work/check.log"
check "a pair check" grep -q '^check output=gx.v3_vs_v1 ' "$work/check.log"
check "fp64 tolerance" grep -q 'output=y.v1 .*tol_rel_l2=1.0e-12' "$work/check.log"
check_eq "norm lines" "$(grep -c '^norm ' "$work/check.log")" 4
check "result ok" grep -q '^result status=ok ' "$work/check.log"
# samples_ms: the best version's runs, in order: as many as runs=, their min and max the line's
samples_match() {
  awk '/^result /{for(i=1;i<=NF;i++){split($i,kv,"="); f[kv[1]]=kv[2]}
    n=split(f["samples_ms"],v,","); lo=v[1]; hi=v[1]
    for(i=2;i<=n;i++){if(v[i]+0<lo+0)lo=v[i]; if(v[i]+0>hi+0)hi=v[i]}
    exit !(n==f["runs"] && n>0 && lo==f["min_ms"] && hi==f["max_ms"])}' "$1"
}
check "samples_ms lists the best version's runs" samples_match "$work/check.log"
check "header" grep -q '^# repro-log 1' "$work/check.log"
check "config names shape and version" grep -q '^config workload=16x32x32 system=all mode=check' "$work/check.log"

# fp32: the tolerance of the precision
"$bin" --device cpu --dtype f --shape 4x8x4x2 --impl v3 check >"$work/f.log" 2>&1
check_eq "fp32 v3 check exit" "$?" 0
check "fp32 tolerance" grep -q 'output=y.v3 .*tol_rel_l2=1.0e-05' "$work/f.log"

# v3's plans: one stage per axis, or the whole row fused (the plan line says which)
"$bin" --device cpu --dtype f --shape 2x8x4x6 --impl v3 --v3-fuse off check >"$work/off.log" 2>&1
check_eq "v3 per axis: exit" "$?" 0
check "v3 per axis: three stages" grep -q '^plan impl=v3 pass=bwd fuse=off .*stages=3 .*s3=axes3-3' "$work/off.log"
check "v3 per axis: gradient steps" grep -q '^plan impl=v3 pass=bwd .* gA3=' "$work/off.log"
"$bin" --device cpu --dtype d --shape 2x8x4x6 --impl v3 --v3-fuse on check >"$work/on.log" 2>&1
check_eq "v3 fused: exit" "$?" 0
check "v3 fused: one stage" grep -q '^plan impl=v3 pass=fwd fuse=on .*stages=1 .*s1=axes1-3' "$work/on.log"

# a check that fails: exit 5, ok=0 on exactly that output, status=error
KRON_TEST_FAULT=v2 "$bin" --device cpu --dtype d --shape 2x4x4 check >"$work/fault.log" 2>&1
check_eq "spoiled check exit" "$?" 5
check "spoiled output flagged" grep -q '^check output=gA2.v2 .*ok=0' "$work/fault.log"
check "result error" grep -q '^result status=error reason="check failed' "$work/fault.log"

# the seed's positional form, bench summary
"$bin" --device cpu --dtype f 4 8 8 bench --runs 2 --warmup 0 >"$work/bench.log" 2>&1
check_eq "positional bench exit" "$?" 0
check "bench line" grep -q '^bench n=64 macs_fwd=4096 ai_mac_per_elem=' "$work/bench.log"
check_eq "time lines" "$(grep -c '^time ' "$work/bench.log")" 6
check "seed table" grep -q '^# state size : 64' "$work/bench.log"
check "best line" grep -q '^best impl=v[123] pass=fwd' "$work/bench.log"
# the seed's AI for 32x128x128: 1.2e+02 multiply-adds per element (N=16384 > the CPU cap? no: 1.3e8 MACs)
"$bin" --device cpu --dtype f --shape 32x128x128 --impl v3 --runs 1 --warmup 0 bench >"$work/ai.log" 2>&1
check_eq "32x128x128 bench exit" "$?" 0
check "seed's AI" grep -q '^# AI         : 1.2e+02' "$work/ai.log"
check "result of a single version" grep -q '^result status=ok ' "$work/ai.log"

# profile: kernel lines and a Chrome trace
"$bin" --device cpu --dtype d --shape 2x4x4x4 --impl v1 profile --trace "$work/t.json" >"$work/prof.log" 2>&1
check_eq "profile exit" "$?" 0
check "kernel lines" grep -q '^kernel impl=v1 pass=fwd name=v1.gemm\[3\]' "$work/prof.log"
check "bwd kernel lines" grep -q '^kernel impl=v1 pass=bwd name=v1.gemm_gA\[1\]' "$work/prof.log"
check "trace is JSON with traceEvents" python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))
ev = [e for e in t['traceEvents'] if e['ph'] == 'X']
assert len(ev) == 3 * 3 + 3 * 2, len(ev)
assert all(e['dur'] >= 0 for e in ev)" "$work/t.json"

# bad input: exit 2, the option named
usage() { # what, expected stderr fragment, args...
  local what=$1 want=$2; shift 2
  "$bin" "$@" >"$work/u.out" 2>"$work/u.err"
  check_eq "$what: exit" "$?" 2
  check "$what: names '$want'" grep -qF -- "$want" "$work/u.err"
}
usage "zero factor" "--factors: factor 2 is 0" --device cpu --factors 32,0 check
usage "bad factor list" "--factors: expected" --device cpu --factors 32,,4 check
usage "bad dtype" "--dtype: unknown 'h'" --dtype h check
usage "bad batch" "--batch: expected an integer" --batch x check
usage "bad impl" "--impl: unknown 'v4'" --impl v4 check
usage "no mode" "a mode is required" --device cpu
usage "two modes" "one mode only" check bench
usage "profile needs one version" "--impl v1|v2|v3 is required" --device cpu profile
usage "shape twice" "the shape is given twice" --batch 4 16 32 check
usage "bad shape" "--shape: expected BATCHxF1" --shape 16-32 check
usage "unknown option" "unknown option '--bogus'" --bogus check
usage "trace outside profile" "--trace: only in profile mode" --trace x.json check
usage "bad fusion" "--v3-fuse: unknown 'maybe'" --v3-fuse maybe check
usage "bad route" "--v3-route: unknown 'cublas'" --v3-route cublas check

# v3's auto route: a factor of 128 or more runs v2's GEMMs (checked like every version), a knob
# that forces a stage plan runs the stages
"$bin" --device cpu --dtype f --shape 1x2048 --impl v3 check >"$work/route.log" 2>&1
check_eq "route auto: exit" "$?" 0
check "route auto: the plan says v2's GEMMs" grep -q '^plan impl=v3 pass=fwd fuse=auto tc=auto route=auto .*stages=0 gemm=v2' "$work/route.log"
"$bin" --device cpu --dtype f --shape 2x32x32 --impl v3 check >"$work/route32.log" 2>&1
check "route auto: fp32 at 32 runs the stages" grep -q '^plan impl=v3 pass=fwd .* stages=1 ' "$work/route32.log"
"$bin" --device cpu --dtype f --shape 2x32x32 --impl v3 --v3-route gemm check >"$work/routeg.log" 2>&1
check_eq "route gemm: exit" "$?" 0
check "route gemm: both passes" test "$(grep -c '^plan impl=v3 .*route=gemm .*gemm=v2' "$work/routeg.log")" = 2

# a factor too big for v3's shared memory: unsupported, with a log
"$bin" --device cpu --dtype d --shape 1x2048 --impl v3 --v3-route stages --v3-smem-kib 16 check >"$work/v3.log" 2>&1
check_eq "v3 too big: exit" "$?" 4
check "v3 too big: status" grep -q '^result status=unsupported reason=".*factor 1 (2048)' "$work/v3.log"
# ... and with --impl all v3 is skipped, the others run
"$bin" --device cpu --dtype d --shape 1x2048 --v3-route stages --v3-smem-kib 16 check >"$work/v3all.log" 2>&1
check_eq "v3 skipped: exit" "$?" 0
check "v3 skipped: line" grep -q '^skip impl=v3 reason=' "$work/v3all.log"
# REPRO_KRON_GA_SPLIT (a measurement switch): the gradient's row blocks as asked, still checked
REPRO_KRON_GA_SPLIT=3 "$bin" --device cpu --dtype d --shape 4x16x32 --impl v3 check >"$work/gasplit.log" 2>&1
check_eq "GA_SPLIT=3: exit" "$?" 0
check "GA_SPLIT=3: the plan's gA steps split in 3" grep -q '^plan impl=v3 pass=bwd .*gA1=[^ ]*ksplit3,' "$work/gasplit.log"
check "GA_SPLIT=3: gA checked" grep -q '^check output=gA2.v3 .*ok=1' "$work/gasplit.log"

# too much for the CPU: unsupported, not a hang
"$bin" --device cpu --shape 64x256x256x256 bench >"$work/big.log" 2>&1
check_eq "too big for the CPU: exit" "$?" 4
check "too big for the CPU: status" grep -q '^result status=unsupported' "$work/big.log"
# the GPU path without a GPU (or without CUDA): a complete log, error or unsupported
if ! nvidia-smi -L >/dev/null 2>&1; then
  "$bin" --shape 2x4x4 check >"$work/gpu.log" 2>&1
  rc=$?
  check "no GPU: exit 1 or 4" test "$rc" = 1 -o "$rc" = 4
  check "no GPU: result line" grep -q '^result status=\(error\|unsupported\)' "$work/gpu.log"
  check "no GPU: config line" grep -q '^config ' "$work/gpu.log"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
