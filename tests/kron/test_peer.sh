#!/usr/bin/env bash
# scripts/peers/kron.py: usage errors, a complete log without PyTorch (status=unsupported,
# exit 4), and, where PyTorch is installed, both formulations checked on the CPU.
#   test_peer.sh
source "$(dirname "$0")/../runner/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
peer=$src/scripts/peers/kron.py
work=$(mktemp -d /tmp/kron-peer-XXXXXX)
trap 'rm -rf "$work"' EXIT

python3 "$peer" --system torch-v2 --shape 16-32 >/dev/null 2>"$work/err"
check_eq "bad shape exit" "$?" 2
check "bad shape named" grep -q -- "--shape: expected BATCHxF1" "$work/err"
python3 "$peer" --system torch-v9 --shape 4x4 >/dev/null 2>"$work/err"
check_eq "bad system exit" "$?" 2

if python3 -c 'import torch' 2>/dev/null; then
  for s in torch-naive torch-v2; do
    for d in f d; do
      for p in fwd bwd; do
        python3 "$peer" --system $s --shape 3x4x5x2 --dtype $d --pass $p --device cpu --warmup 0 --runs 2 >"$work/l" 2>&1
        check_eq "$s $d $p exit" "$?" 0
        check_eq "$s $d $p checks" "$(grep -c '^check .*ok=1' "$work/l")" 5
      done
    done
  done
else
  python3 "$peer" --system torch-naive --shape 16x32x32 --device cpu >"$work/l" 2>&1
  check_eq "no torch: exit" "$?" 4
  check "no torch: header" grep -q '^# repro-log 1' "$work/l"
  check "no torch: config" grep -q '^config workload=16x32x32 system=torch-naive' "$work/l"
  check "no torch: result" grep -q '^result status=unsupported reason="PyTorch is not installed' "$work/l"
fi
finish
