#!/usr/bin/env python3
"""kron.py: the Kronecker-factored layer y = x·(A1 ⊗ ... ⊗ Am)^T in PyTorch, the seed's two
versions, as one log of the kit's contract (the same lines as peer.py; kernels/kron/kron.h
has the math; the seed is shared/seeds/001_0b3871eacf715a71.txt). The formulations, the inputs
and the tolerance live in kernels/kron/torch_ext/kronlayer_torch/formulations.py, shared with
the PyTorch extension.

    kron.py --system torch-naive|torch-v2 --shape 16x32x32 [--dtype f|d] [--pass fwd|bwd]
            [--warmup 20] [--runs 100] [--seed 1] [--check|--no-check] [--device gpu|cpu]

  torch-naive  the seed's v1: per factor (last first) one matmul [B·N/f, f]·A^T and a permute
               (transpose + contiguous) that brings the next factor's axis last
  torch-v2     the seed's v2: per factor one broadcast batched matmul A·X over the [B·P, f, Q]
               view, no copies
  inputs       x, gy ~ N(0, 1) [B, N]; A_k ~ N(0, 1)/sqrt(f_k), from torch.Generator(seed)
  fwd          y from x and the factors; bwd: torch.autograd.grad of y with gy for x and
               every A_k, on a graph kept from one forward (retain_graph): the backward alone,
               timed on the stream the forward ran on (where its kernels run)
  check        y, gx and every gA_k against the other version's formulation in fp64 on the CPU
               (relative L2; the tolerances of kronlayer: 1e-5 fp32, 1e-12 fp64, or
               4·eps·sqrt(reduction length) where that is larger)
Exit codes: 0 ok, 1 error, 2 usage, 3 oom, 4 unsupported, 5 check failed.
"""
import argparse
import importlib.util
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer  # noqa: E402  (the log, meta line, timing and outcome of every peer)

SYSTEMS = ("torch-naive", "torch-v2")


def parse_shape(text):
    if not re.fullmatch(r"[0-9]+(x[0-9]+){1,8}", text or ""):
        raise argparse.ArgumentTypeError("expected BATCHxF1[xF2...] (e.g. 16x32x32), got %r" % text)
    dims = [int(t) for t in text.split("x")]
    if min(dims) < 1:
        raise argparse.ArgumentTypeError("every size must be >= 1, got %r" % text)
    return dims[0], dims[1:]


def parse_args(argv):
    p = argparse.ArgumentParser(prog="kron.py", description=__doc__.split("\n")[0])
    p.add_argument("--system", required=True, choices=SYSTEMS)
    p.add_argument("--shape", required=True, type=parse_shape)
    p.add_argument("--dtype", choices=("f", "d"), default="f")
    p.add_argument("--pass", dest="pass_", choices=("fwd", "bwd"), default="fwd")
    p.add_argument("--warmup", type=peer.non_negative_int, default=20)
    p.add_argument("--runs", type=peer.positive_int, default=100)
    p.add_argument("--seed", type=peer.non_negative_int, default=1)
    p.add_argument("--check", dest="check", action="store_true", default=True)
    p.add_argument("--no-check", dest="check", action="store_false")
    p.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    args = p.parse_args(argv)
    args.batch, args.factors = args.shape
    return args


def config_pairs(args):
    n = math.prod(args.factors)
    return [("workload", "x".join(str(v) for v in [args.batch] + args.factors)),
            ("system", args.system), ("mode", "bench"), ("pass", args.pass_),
            ("batch", args.batch), ("factors", ",".join(str(f) for f in args.factors)),
            ("n", n), ("dtype", "fp64" if args.dtype == "d" else "fp32"),
            ("device", args.device), ("impl", args.system), ("seed", args.seed)]


# ---- the two formulations: their one home is the extension's pure-Python module -----------

def load_formulations():
    """kernels/kron/torch_ext/kronlayer_torch/formulations.py, loaded by its path (it needs
    neither torch at import nor the compiled extension)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "kernels", "kron", "torch_ext", "kronlayer_torch",
                        "formulations.py")
    spec = importlib.util.spec_from_file_location("kron_formulations", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


formulations = load_formulations()
FORWARD = {"torch-naive": formulations.forward_naive, "torch-v2": formulations.forward_v2}
OTHER = {"torch-naive": formulations.forward_v2, "torch-v2": formulations.forward_naive}
tolerance = formulations.tolerance


def rel_l2(got, want):
    diff = (got.double().cpu() - want).norm().item()
    ref = want.norm().item()
    return diff / ref if ref > 0 else diff, (got.double().cpu() - want).abs().max().item()


def run_cell(torch, args, log):
    on_gpu = args.device == "gpu"
    device = torch.device("cuda" if on_gpu else "cpu")
    dtype = torch.float64 if args.dtype == "d" else torch.float32
    log.record("config", config_pairs(args))
    x, gy, *factors = formulations.make_inputs(args.batch, args.factors, args.seed, device, dtype)
    fwd = FORWARD[args.system]
    xs = x.clone().requires_grad_(True)
    As = [A.clone().requires_grad_(True) for A in factors]
    # The backward's kernels run on the stream its forward ran on, so the forward runs on the
    # stream the backward is timed and captured on (on the default stream they escape the
    # capture and the backward is timed as back-to-back calls).
    bwd_stream = torch.cuda.Stream() if on_gpu and args.pass_ == "bwd" else None
    if bwd_stream is not None:
        bwd_stream.wait_stream(torch.cuda.current_stream())
    with peer.on_stream(torch, bwd_stream):
        y = fwd(xs, As)
    grads = torch.autograd.grad(y, [xs] + As, gy, retain_graph=True)
    checks_ok = True
    if args.check:
        xr = x.double().cpu().requires_grad_(True)
        Ar = [A.double().cpu().requires_grad_(True) for A in factors]
        yr = OTHER[args.system](xr, Ar)
        want = [yr.detach()] + [t.detach() for t in torch.autograd.grad(yr, [xr] + Ar,
                                                                         gy.double().cpu())]
        bn, sumf = args.batch * math.prod(args.factors), sum(args.factors)
        names = ["y", "gx"] + ["gA%d" % (k + 1) for k in range(len(factors))]
        lengths = [sumf, sumf] + [bn / f + sumf for f in args.factors]
        for name, got, ref, length in zip(names, [y.detach()] + list(grads), want, lengths):
            tol = tolerance(args.dtype, length)
            rel, max_abs = rel_l2(got, ref)
            ok = rel <= tol
            checks_ok &= ok
            log.record("check", [("output", name), ("rel_l2", "%.3e" % rel),
                                 ("max_abs", "%.3e" % max_abs), ("tol_rel_l2", "%.1e" % tol),
                                 ("ok", int(ok))])
    if args.pass_ == "fwd":
        def call():
            with torch.no_grad():
                fwd(x, factors)
    else:
        def call():
            torch.autograd.grad(y, [xs] + As, gy, retain_graph=True)
    times = peer.timed_runs(torch, call, args, on_gpu, stream=bwd_stream)
    macs = args.batch * math.prod(args.factors) * sum(args.factors)
    pairs = peer.result_pairs(torch, times, args, on_gpu, (2 if args.pass_ == "fwd" else 4) * macs)
    return peer.finish(pairs, checks_ok)


def run(args, log):
    return peer.run_logged(args, log, lambda torch: run_cell(torch, args, log),
                           lambda: config_pairs(args))


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run(args, peer.Log())


if __name__ == "__main__":
    peer.exit_now(main())
