#!/usr/bin/env bash
# kernels/kron/torch_ext (kronlayer_torch, the PyTorch extension): built CPU-only
# (KRON_EXT_CUDA=0, warnings in the C sources as errors) into WORK_DIR with PYTHON, then
#  - test_torch_ext.py: gradcheck in fp64, v3 against v1/v2 in fp32 and fp64, KronLinear in a
#    training step, the refusals (on the CPU backend: the CPU emulation of v3's kernels)
#  - test.py, the seed's command line: check (every norm and pair line, all True), profile (the
#    table and a Chrome trace of valid JSON with v3's ops), bench (the seed's lines and the
#    torch.utils.benchmark table), a usage error
# Skips (77) where PYTHON cannot import torch, saying how to install it.
#   test_torch_ext.sh PYTHON WORK_DIR
source "$(dirname "$0")/../runner/lib.sh"
py=$1 work=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
ext=$src/kernels/kron/torch_ext
if ! why=$("$py" -c 'import torch' 2>&1); then
  skip "$py cannot import torch ($(printf '%s' "$why" | tail -1)); install it into a venv" \
    "(python3 -m venv V && V/bin/pip install torch setuptools wheel) and configure with" \
    "-DREPRO_PEERS_PYTHON=V/bin/python"
fi
rm -rf "$work"
mkdir -p "$work"
out=$work/lib

# the build: C library, C++ op, the package's Python, all under WORK_DIR (nothing in the tree)
KRON_EXT_CUDA=0 KRON_EXT_WERROR=1 "$ext/build_into.sh" "$py" "$work" >"$work/build.log" 2>&1
rc=$?
check_eq "build exit" "$rc" 0
if [ "$rc" != 0 ]; then tail -40 "$work/build.log"; finish; fi
check "built without CUDA" grep -q "building without CUDA (KRON_EXT_CUDA=0)" "$work/build.log"
check "no warning in the C sources" bash -c "! grep -E 'kernels/kron/[a-z_]+\\.c:[0-9]+:[0-9]+: warning' '$work/build.log'"
export PYTHONPATH=$out

"$py" "$src/tests/kron/test_torch_ext.py" --device cpu --expect-cuda 0 >"$work/unit.txt" 2>&1
check_eq "test_torch_ext.py exit" "$?" 0
tail -1 "$work/unit.txt"
grep FAIL "$work/unit.txt" >&2
check "test_torch_ext.py imports the build" grep -q "kronlayer_torch from $out" "$work/unit.txt"

# test.py from elsewhere: the package comes from PYTHONPATH, not the source folder
t=$ext/test.py
cd "$work" || exit 1
for dt in d f; do
  "$py" "$t" --dtype $dt 3 4 5 check --device cpu >"check-$dt.txt" 2>&1
  check_eq "check $dt exit" "$?" 0
  check_eq "check $dt norms" "$(grep -cE '^\|\|v[123]_(y|g|gA)\|\| = [0-9.e+-]+$' "check-$dt.txt")" 9
  check_eq "check $dt pairs" "$(grep -cE '^v[12]_(y|g|gA) == v[23]_(y|g|gA): True \([0-9.e+-]+\)$' "check-$dt.txt")" 9
done
"$py" "$t" --dtype f 2 3 4 2 check --device cpu --implementation v1 --implementation v3 >check-4.txt 2>&1
check_eq "check 4 factors exit" "$?" 0
check "check 4 factors: v1 == v3" grep -q '^v1_g == v3_g: True' check-4.txt

"$py" "$t" --dtype f 3 4 5 profile --device cpu --implementation v3 --implementation v1 \
  --runs 2 --trace "$work/trace_{impl}.json" >profile.txt 2>&1
check_eq "profile exit" "$?" 0
check "profile table" grep -q 'kronlayer::v3_backward' profile.txt
for impl in v3 v1; do
  check "profile $impl trace named" grep -q "^trace: $work/trace_$impl.json" profile.txt
  check "trace $impl is JSON with events" "$py" -c "import json, sys
d = json.load(open(sys.argv[1]))
names = {e.get('name') for e in d['traceEvents']}
sys.exit(0 if '$impl.forward' in names and '$impl.backward' in names else 1)" "$work/trace_$impl.json"
done
check "trace v3 has v3's ops" grep -q 'kronlayer::v3_forward' "$work/trace_v3.json"

"$py" "$t" --dtype f 4 8 8 bench --device cpu --min-run-time 0.02 >bench.txt 2>&1
check_eq "bench exit" "$?" 0
check "bench state size" grep -q '^state size : 64$' bench.txt
check "bench AI" grep -q '^AI         : 6.4e+00$' bench.txt
check "bench header" grep -qE '^ +\| +v1 +\| +v2 +\| +v3 *$' bench.txt
check "bench forward row" grep -qE '^ +4 x 8 x 8 \(4\.096e\+03\) +\| +[0-9.]+ +\| +[0-9.]+ +\| +[0-9.]+ *$' bench.txt
check "bench backward row" grep -qE '^ +4 x 8 x 8 \(4\.096e\+03\) bwd +\| +[0-9.]+' bench.txt
check "bench units" grep -q 'Times are in microseconds (us).' bench.txt

"$py" "$t" --dtype f 5 check >usage.txt 2>&1
check_eq "usage error exit" "$?" 2
check "usage error names the sizes" grep -q 'sizes: expected the batch and at least one factor' usage.txt
finish
