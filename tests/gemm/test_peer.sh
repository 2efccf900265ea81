#!/usr/bin/env bash
# scripts/peers/gemm.py, the PyTorch peer of gemmbench.
#   test_peer.sh cli        usage errors, --list-systems, and without PyTorch a complete log
#                           (status=unsupported, exit 4); no torch needed
#   test_peer.sh semantics  with PyTorch (GEMM_PEER_PYTHON, default python3): every dtype on
#                           the CPU against fp64, the sampled check above 2^27 multiply-adds,
#                           and the checker failing on one wrong entry; exit 77 (skip) without
source "$(dirname "$0")/../runner/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
peer=$src/scripts/peers/gemm.py
py=${GEMM_PEER_PYTHON:-python3}
work=$(mktemp -d /tmp/gemm-peer-XXXXXX)
trap 'rm -rf "$work"' EXIT
has_torch() { "$py" -c 'import torch' 2>/dev/null; }

case "${1:-}" in
cli)
  usage() { # what, stderr fragment, args...
    local what=$1 want=$2; shift 2
    python3 "$peer" "$@" >/dev/null 2>"$work/err"
    check_eq "$what: exit" "$?" 2
    check "$what: names '$want'" grep -qF -- "$want" "$work/err"
  }
  usage "bad system" "argument --system: invalid choice: 'tvm'" --system tvm --m 8 --n 8 --k 8
  usage "zero m" "argument --m: expected an integer in [1, 65536], got 0" --system pytorch --m 0 --n 8 --k 8
  usage "no k" "the following arguments are required: --k" --system pytorch --m 8 --n 8
  usage "bad dtype" "argument --dtype: invalid choice: 'fp8'" --system pytorch --m 8 --n 8 --k 8 --dtype fp8
  usage "zero runs" "argument --runs: expected an integer >= 1, got 0" --system pytorch --m 8 --n 8 --k 8 --runs 0
  python3 "$peer" --list-systems >"$work/list" 2>&1
  check_eq "--list-systems exit" "$?" 0
  check_eq "--list-systems" "$(cut -f1,2 "$work/list" | tr '\n' ' ')" "pytorch	gpu tilelang	gpu cutedsl	gpu "
  if ! python3 -c 'import torch' 2>/dev/null; then
    python3 "$peer" --system pytorch --m 64 --n 48 --k 80 --device cpu >"$work/l" 2>&1
    check_eq "no torch: exit" "$?" 4
    check "no torch: header" grep -q '^# repro-log 1' "$work/l"
    check "no torch: config" grep -q '^config workload=gemm system=pytorch m=64 n=48 k=80 dtype=fp16 device=cpu impl=torch.matmul seed=1$' "$work/l"
    check "no torch: result" grep -q '^result status=unsupported reason="PyTorch is not installed' "$work/l"
    python3 "$peer" --system tilelang --m 64 --n 48 --k 80 >"$work/t" 2>&1
    check_eq "no torch, tilelang: exit" "$?" 4
    check "no torch, tilelang: config names the system, no versions" grep -q '^config workload=gemm system=tilelang m=64 n=48 k=80 dtype=fp16 device=gpu impl=tilelang-gemm seed=1$' "$work/t"
  fi
  finish
  ;;
semantics)
  has_torch || skip "no PyTorch in $py (set GEMM_PEER_PYTHON to an interpreter that has it)"
  for dt in fp16 bf16 fp32; do
    "$py" "$peer" --system pytorch --m 64 --n 48 --k 80 --dtype $dt --device cpu --warmup 0 --runs 2 >"$work/l" 2>/dev/null
    check_eq "$dt exit" "$?" 0
    check "$dt: full check passes" grep -qE '^check output=c .* n=3072 ok=1$' "$work/l"
    check "$dt: config" grep -q "^config workload=gemm system=pytorch m=64 n=48 k=80 dtype=$dt device=cpu " "$work/l"
    check "$dt: result" grep -qE '^result status=ok .* runs=2 warmup=0 gflops_s=' "$work/l"
  done
  # above 2^27 multiply-adds: the 64 x 64 sample
  "$py" "$peer" --system pytorch --m 520 --n 512 --k 1024 --dtype fp32 --device cpu --warmup 0 --runs 1 >"$work/s" 2>/dev/null
  check_eq "sampled exit" "$?" 0
  check "sampled check" grep -qE '^check output=c .* n=4096 sampled=4096 ok=1$' "$work/s"
  # the checker itself: one wrong sampled entry, a NaN, and a correct product
  "$py" - "$src/scripts/peers" <<'PY' 2>/dev/null
import random, sys
sys.path.insert(0, sys.argv[1])
import torch, gemm
torch.manual_seed(3)
a = torch.randn(300, 96).half(); b = torch.randn(96, 200).half()
want = a.double() @ b.double()
c = (a.float() @ b.float()).half()
_, ok = gemm.compare(torch, c, want, "fp16", 96)
assert ok, "a correct fp16 product passes"
bad = c.clone(); bad[17, 41] += 3 * 2 * 2 ** -11 * want.abs().max().item()
_, ok = gemm.compare(torch, bad, want, "fp16", 96)
assert not ok, "one wrong entry fails"
bad = c.clone(); bad[0, 0] = float("nan")
pairs, ok = gemm.compare(torch, bad, want, "fp16", 96)
assert not ok and dict(pairs).get("nonfinite") == 1, "a NaN fails"
rows = gemm.strata(8192, random.Random(1))
assert len(rows) == 64 and rows[0] == 0 and rows[-1] == 8191
assert all(128 * i <= r < 128 * (i + 1) for i, r in enumerate(rows)), "one row per stratum"
PY
  check_eq "the peer's checker catches a wrong entry" "$?" 0
  finish
  ;;
*) echo "usage: $0 cli|semantics" >&2; exit 2 ;;
esac
