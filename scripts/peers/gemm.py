#!/usr/bin/env python3
"""gemm.py: the PyTorch peer of gemmbench (kernels/gemm/): C = A·B with torch.matmul, one log
of the kit's contract (the same lines as gemmbench; peer.py has the log, meta and timing).

    gemm.py --system pytorch|tilelang|cutedsl --m M --n N --k K [--dtype fp16|bf16|fp32]
            [--warmup 10] [--runs 20] [--seed 1] [--device gpu|cpu] [--check|--no-check]
            [--list-systems]

  pytorch  torch.matmul(A, B, out=C): A [M, K], B [K, N], C [M, N] row-major, C in the input
           dtype; fp32 accumulation asked for (allow_tf32 and the reduced-precision fp16/bf16
           reductions off), so it computes what gemmbench's systems compute
  inputs   A, B ~ N(0, 1) from torch.Generator(seed) on the device, rounded to the dtype (the
           values differ from gemmbench's counter-based generator; the distribution is the same)
  flops    2·M·N·K per call
  check    the first call's C against fp64 on the CPU: all of C up to M·N·K = 2^27, above that
           a 64 x 64 grid of entries (one row in each of 64 strata of [0, M), the first 0 and
           the last M-1; columns likewise), `check output=c ... sampled=4096`; the tolerances
           of gemmbench (kernels/gemm/gemm.h): fp16/bf16 rel_l2 2u and max_abs 2u·max|want|
           (u = 2^-11, 2^-8), fp32 rel_l2 max(1e-5, 8·2^-24·sqrt(K)) and 4x that times max|want|
Exit codes: 0 ok, 1 error, 2 usage, 3 oom, 4 unsupported, 5 check failed.
"""
import argparse
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer  # noqa: E402  (the log, meta line, timing and outcome of every peer)
import tilelang_backend  # noqa: E402
import tilelang_gemm  # noqa: E402
from errors import Unsupported  # noqa: E402

SYSTEMS = {"pytorch": "torch.matmul (cuBLAS through PyTorch), fp32 accumulation",
           "tilelang": "the TileLang GEMM (tilelang_gemm.py) through TileLang's CUDA backend",
           "cutedsl": "the same TileLang GEMM through TileLang's CuTeDSL backend"}
IMPLS = {"pytorch": "torch.matmul", "tilelang": "tilelang-gemm", "cutedsl": "cutedsl-gemm"}
DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}
MAX_DIM = 65536
FULL_CHECK_MACS = 2 ** 27
SAMPLE_SIDE = 64


def dim(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            "expected an integer in [1, %d], got %r" % (MAX_DIM, text)) from None
    if not 1 <= v <= MAX_DIM:
        raise argparse.ArgumentTypeError("expected an integer in [1, %d], got %d" % (MAX_DIM, v))
    return v


class ListSystems(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        for name, about in SYSTEMS.items():
            print("%s\tgpu\t%s" % (name, about))
        parser.exit(0)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="gemm.py", description=__doc__.split("\n")[0])
    p.add_argument("--list-systems", nargs=0, action=ListSystems,
                   help="print name<TAB>gpu<TAB>about per system and exit")
    p.add_argument("--system", required=True, choices=tuple(SYSTEMS))
    p.add_argument("--m", required=True, type=dim)
    p.add_argument("--n", required=True, type=dim)
    p.add_argument("--k", required=True, type=dim)
    p.add_argument("--dtype", choices=tuple(DTYPES), default="fp16")
    p.add_argument("--warmup", type=peer.non_negative_int, default=10)
    p.add_argument("--runs", type=peer.positive_int, default=20)
    p.add_argument("--seed", type=peer.non_negative_int, default=1)
    p.add_argument("--check", dest="check", action="store_true", default=True)
    p.add_argument("--no-check", dest="check", action="store_false")
    p.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    return p.parse_args(argv)


def config_pairs(args, built=True):
    pairs = [("workload", "gemm"), ("system", args.system), ("m", args.m), ("n", args.n),
             ("k", args.k), ("dtype", args.dtype), ("device", args.device),
             ("impl", IMPLS[args.system]), ("seed", args.seed)]
    if built and args.system != "pytorch":
        pairs += tilelang_backend.config_pairs(args.system)
    return pairs


def matmul(torch, args, a, b, c):
    """(call, compile seconds or None): the system's C = A·B into c."""
    if args.system == "pytorch":
        return (lambda: torch.matmul(a, b, out=c)), None
    try:
        tilelang_backend.load(args.system, on_gpu=args.device == "gpu")
    except Unsupported as e:
        raise peer.Outcome("unsupported", peer.EXIT_UNSUPPORTED, str(e)) from e
    refused = tilelang_gemm.refuses(args.dtype)
    if refused:
        raise peer.Outcome("unsupported", peer.EXIT_UNSUPPORTED, "%s: %s" % (args.system, refused))
    t0 = time.perf_counter()
    kernel = tilelang_backend.compile_kernel(args.system, tilelang_gemm, tilelang_gemm.kernel(
        args.m, args.n, args.k, args.dtype))
    return (lambda: kernel(a, b, c)), time.perf_counter() - t0


# ---- the check --------------------------------------------------------------------------------

def strata(length, rng):
    """One index per stratum of [0, length): the first 0, the last length - 1."""
    n = min(length, SAMPLE_SIDE)
    out = []
    for s in range(n):
        lo, hi = length * s // n, max(length * (s + 1) // n, length * s // n + 1)
        out.append(rng.randrange(lo, hi))
    out[0], out[-1] = 0, length - 1
    return out


def tolerance(dtype, k, max_want):
    if dtype == "fp32":
        rel = max(1e-5, 8 * 2.0 ** -24 * math.sqrt(k))
        return rel, 4 * rel * max_want
    u = 2.0 ** -11 if dtype == "fp16" else 2.0 ** -8
    return 2 * u, 2 * u * max_want


def compare(torch, got, want, dtype, k):
    """(pairs of the check line, ok): got any dtype, want fp64 CPU tensors of one shape."""
    got = got.double().cpu()
    finite = torch.isfinite(got)
    nonfinite = int((~finite).sum().item())
    diff = (got - want)[finite]
    ref = want.norm().item()
    rel = diff.norm().item() / ref if ref > 0 else diff.norm().item()
    max_abs = diff.abs().max().item() if diff.numel() else 0.0
    if nonfinite:
        rel = max_abs = math.inf
    tol_rel, tol_abs = tolerance(dtype, k, want.abs().max().item())
    ok = nonfinite == 0 and rel <= tol_rel and max_abs <= tol_abs
    pairs = [("output", "c"), ("rel_l2", "%.3e" % rel), ("max_abs", "%.3e" % max_abs),
             ("tol_rel_l2", "%.1e" % tol_rel), ("tol_max_abs", "%.1e" % tol_abs),
             ("n", want.numel())]
    if nonfinite:
        pairs.append(("nonfinite", nonfinite))
    return pairs, ok


def check(torch, args, a, b, c):
    if args.m * args.n * args.k <= FULL_CHECK_MACS:
        want = a.double().cpu() @ b.double().cpu()
        pairs, ok = compare(torch, c, want, args.dtype, args.k)
        return pairs + [("ok", int(ok))], ok
    rng = random.Random(args.seed)
    rows, cols = strata(args.m, rng), strata(args.n, rng)
    ri = torch.tensor(rows, device=a.device)
    ci = torch.tensor(cols, device=a.device)
    want = a.index_select(0, ri).double().cpu() @ b.index_select(1, ci).double().cpu()
    got = c.index_select(0, ri).index_select(1, ci)
    pairs, ok = compare(torch, got, want, args.dtype, args.k)
    return pairs + [("sampled", want.numel()), ("ok", int(ok))], ok


# ---- the run ------------------------------------------------------------------------------------

def run_cell(torch, args, log):
    on_gpu = args.device == "gpu"
    device = torch.device("cuda" if on_gpu else "cpu")
    dtype = getattr(torch, DTYPES[args.dtype])
    # fp32 accumulation, as gemmbench: no tf32, no reduced-precision split-K reductions
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    if hasattr(torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction"):
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    g = torch.Generator(device=device)
    g.manual_seed(args.seed)
    a = torch.randn(args.m, args.k, generator=g, device=device, dtype=torch.float32).to(dtype)
    b = torch.randn(args.k, args.n, generator=g, device=device, dtype=torch.float32).to(dtype)
    c = torch.full((args.m, args.n), math.nan, device=device, dtype=dtype)

    call, compile_s = matmul(torch, args, a, b, c)
    log.record("config", config_pairs(args))
    _, first_s = peer.first_call(torch, call, on_gpu)
    if compile_s is not None:  # CuTeDSL compiles its kernel at the first call: count it too
        compile_s += first_s
    checks_ok = True
    if args.check:
        pairs, checks_ok = check(torch, args, a, b, c)
        log.record("check", pairs)
    times = peer.timed_runs(torch, call, args, on_gpu)
    pairs = peer.result_pairs(torch, times, args, on_gpu, 2.0 * args.m * args.n * args.k)
    extra = [] if compile_s is None else [("compile_s", "%.2f" % compile_s)]
    return peer.finish(pairs, checks_ok, extra,
                       failed="C is off the fp64 reference (see the check line)")


def run(args, log):
    return peer.run_logged(args, log, lambda torch: run_cell(torch, args, log),
                           lambda: config_pairs(args, built=False))


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run(args, peer.Log())


if __name__ == "__main__":
    sys.exit(main())
