#!/usr/bin/env python3
"""test.py: the seed's test of the Kronecker layer inside PyTorch: v1 (the seed's naive
version), v2 (the seed's PyTorch-native version) and v3 (our kernels, kronlayer_torch),
forward and backward, with the seed's command line and output.

    python test.py --dtype d 16 32 32 check                      # every version, compared
    python test.py --dtype f 16 32 32 profile --implementation v3 # torch.profiler + a trace
    python test.py --dtype f 32 128 128 bench                    # torch.utils.benchmark table

Sizes: the batch, then the factors (16 32 32: x [16, 1024], two 32x32 factors).
  check    y = layer(x) and g = the gradient of x given gy for every version; the seed's
           lines `||v1_y|| = ...` and `v1_y == v3_y: True (...)` (True when the relative L2
           distance is within twice kronlayer's tolerance; in parentheses ||a - b||), and the
           same for gA (every factor's gradient, which the seed's v3 did not have). Exit 5 when
           any pair differs.
  profile  each --implementation (v3 when none is given): forward and backward under
           torch.profiler, its table, and a Chrome trace (chrome://tracing, ui.perfetto.dev)
           at --trace ({impl} is replaced by the version)
  bench    the seed's `state size` and `AI` lines, then torch.utils.benchmark's table: one row
           for the forward (the seed's), one for the backward, a column per version
Exit codes: 0 ok, 1 error (torch or kronlayer_torch not importable: the usage, then one line
saying which), 2 usage, 5 check failed. --help needs neither (exit 0).
"""
import argparse
import importlib
import math
import os
import sys

torch = kl = None  # imported by load(), after the command line is read


def import_kronlayer():
    """kronlayer_torch as installed (with its compiled _C), before the source folder beside this
    file, which Python puts first on the path and which has no _C unless built in place."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.path[:]
    sys.path[:] = [p for p in path if os.path.abspath(p or os.curdir) != here]
    try:
        return importlib.import_module("kronlayer_torch")
    except ImportError:
        sys.path[:] = path
        return importlib.import_module("kronlayer_torch")
    finally:
        sys.path[:] = path


def load():
    """Imports torch and kronlayer_torch (torch, kl); None, or the one line saying which is not
    importable."""
    global torch, kl
    try:
        import torch
    except ImportError as e:
        return "test.py: torch is not importable (%s): install PyTorch to run it" % e
    try:
        kl = import_kronlayer()
    except ImportError as e:
        return ("test.py: kronlayer_torch is not importable (%s): kernels/kron/README.md says how "
                "to build it" % e)
    return None


def no_extension():
    """The line saying v3's compiled extension is missing, or None when it is there."""
    if kl.has_extension():
        return None
    return "test.py: v3 needs kronlayer_torch's compiled extension: %s" % kl.layer.INSTALL_HINT


def make_parser():
    """The command line; torch is not needed to build it or to print --help."""
    p = argparse.ArgumentParser(prog="test.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sizes", nargs="+", type=int, metavar="N",
                   help="the batch, then the factors (e.g. 16 32 32)")
    p.add_argument("mode", choices=("check", "profile", "bench"))
    p.add_argument("--dtype", choices=("f", "d"), default="f", help="fp32 (default) or fp64")
    p.add_argument("--implementation", action="append", metavar="IMPL",
                   help="v1, v2 or v3 (kronlayer_torch.IMPLEMENTATIONS), repeatable; check and "
                   "bench default to all three, profile to v3")
    p.add_argument("--device", choices=("cuda", "cpu"),
                   help="default cuda when this torch sees a CUDA device; cpu runs v3 on the CPU "
                   "emulation of its kernels (small shapes only)")
    p.add_argument("--seed", type=int, default=1, help="the inputs' seed (default 1)")
    p.add_argument("--runs", type=int, default=3, help="profile: forward+backward runs (default 3)")
    p.add_argument("--min-run-time", type=float, default=1.0,
                   help="bench: seconds each measurement runs at least (default 1.0)")
    p.add_argument("--trace", default="kron_trace_{impl}.json",
                   help="profile: the Chrome trace's path ({impl}: the version)")
    return p


def parse_args(p, argv):
    args = p.parse_args(argv)
    if len(args.sizes) < 2 or min(args.sizes) < 1:
        p.error("sizes: expected the batch and at least one factor, all >= 1, got %s" % args.sizes)
    args.batch, args.factors = args.sizes[0], args.sizes[1:]
    bad = [i for i in args.implementation or [] if i not in kl.IMPLEMENTATIONS]
    if bad:
        p.error("--implementation: %s is not one of %s" % (bad[0], ", ".join(kl.IMPLEMENTATIONS)))
    if args.device is None:
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: this torch sees no CUDA device")
    if args.implementation is None:
        args.implementation = ["v3"] if args.mode == "profile" else list(kl.IMPLEMENTATIONS)
    return args


def inputs(args):
    """x, gy and the factors, seeded (formulations.make_inputs), x and the factors requiring
    gradients."""
    dtype = torch.float64 if args.dtype == "d" else torch.float32
    x, gy, *factors = kl.make_inputs(args.batch, args.factors, args.seed, args.device, dtype)
    return x.requires_grad_(True), gy, [A.requires_grad_(True) for A in factors]


def sync(args):
    if args.device == "cuda":
        torch.cuda.synchronize()


# ---- check -------------------------------------------------------------------------------------

def run_check(args):
    x, gy, factors = inputs(args)
    out = {}
    for impl in args.implementation:
        y = kl.kron(x, factors, impl)
        grads = torch.autograd.grad(y, [x] + factors, gy)
        out[impl] = {"y": y.detach(), "g": grads[0],
                     "gA": torch.cat([g.reshape(-1) for g in grads[1:]])}
    names = ("y", "g", "gA")
    for impl in args.implementation:
        for name in names:
            print("||%s_%s|| = %r" % (impl, name, out[impl][name].double().norm().item()))
    bn, sumf = args.batch * math.prod(args.factors), sum(args.factors)
    length = {"y": sumf, "g": sumf, "gA": bn / min(args.factors) + sumf}
    ok = True
    impls = args.implementation
    for i, a in enumerate(impls):
        for b in impls[i + 1:]:
            for name in names:
                got, want = out[b][name].double(), out[a][name].double()
                diff = (got - want).norm().item()
                ref = want.norm().item()
                rel = diff / ref if ref > 0 else diff
                same = rel <= 2 * kl.tolerance(args.dtype, length[name])
                ok &= same
                print("%s_%s == %s_%s: %s (%.1e)" % (a, name, b, name, same, diff))
    return 0 if ok else 5


# ---- profile -----------------------------------------------------------------------------------

def run_profile(args):
    from torch.profiler import ProfilerActivity, profile, record_function

    x, gy, factors = inputs(args)
    activities = [ProfilerActivity.CPU]
    if args.device == "cuda":
        activities.append(ProfilerActivity.CUDA)
    sort_by = "device_time_total" if args.device == "cuda" else "cpu_time_total"
    for impl in args.implementation:
        torch.autograd.grad(kl.kron(x, factors, impl), [x] + factors, gy)  # warm start
        sync(args)
        with profile(activities=activities, record_shapes=True) as prof:
            for _ in range(args.runs):
                with record_function("%s.forward" % impl):
                    y = kl.kron(x, factors, impl)
                with record_function("%s.backward" % impl):
                    torch.autograd.grad(y, [x] + factors, gy)
            sync(args)
        print("%s, %s, %s, %d runs of forward + backward:" % (
            impl, " x ".join(str(s) for s in args.sizes), "fp64" if args.dtype == "d" else "fp32",
            args.runs))
        print(prof.key_averages().table(sort_by=sort_by, row_limit=15))
        path = args.trace.replace("{impl}", impl)
        prof.export_chrome_trace(path)
        print("trace: %s (chrome://tracing or https://ui.perfetto.dev)" % os.path.abspath(path))
    return 0


# ---- bench -------------------------------------------------------------------------------------

def run_bench(args):
    from torch.utils import benchmark

    x, gy, factors = inputs(args)
    n = math.prod(args.factors)
    macs = args.batch * n * sum(args.factors)
    elems = 2 * args.batch * n + sum(f * f for f in args.factors)
    print("state size : %d" % n)
    print("AI         : %.1e" % (macs / elems))
    label = "%s (%.3e)" % (" x ".join(str(s) for s in args.sizes), macs)
    results = []
    xd, fd = x.detach(), [A.detach() for A in factors]
    for impl in args.implementation:
        env = {"kl": kl, "torch": torch, "x": xd, "factors": fd, "impl": impl}
        fwd = benchmark.Timer(stmt="kl.kron(x, factors, impl)", globals=env, label="benchmark",
                              sub_label=label, description=impl)
        results.append(fwd.blocked_autorange(min_run_time=args.min_run_time))
        y = kl.kron(x, factors, impl)
        env = {"torch": torch, "y": y, "inputs": [x] + factors, "gy": gy}
        bwd = benchmark.Timer(stmt="torch.autograd.grad(y, inputs, gy, retain_graph=True)",
                              globals=env, label="benchmark", sub_label=label + " bwd",
                              description=impl)
        results.append(bwd.blocked_autorange(min_run_time=args.min_run_time))
    benchmark.Compare(results).print()
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = make_parser()
    missing = load()
    if "-h" in argv or "--help" in argv:  # the usage, then what is missing to run it
        p.print_help()
        sys.stdout.flush()
        missing = missing or no_extension()
        if missing:
            print(missing, file=sys.stderr)
        return 0
    if missing:
        p.print_usage(sys.stderr)
        print(missing, file=sys.stderr)
        return 1
    args = parse_args(p, argv)
    if "v3" in args.implementation and no_extension():
        print(no_extension(), file=sys.stderr)
        return 1
    run = {"check": run_check, "profile": run_profile, "bench": run_bench}[args.mode]
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
