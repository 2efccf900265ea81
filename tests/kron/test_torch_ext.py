#!/usr/bin/env python3
"""test_torch_ext.py: kronlayer_torch (kernels/kron/torch_ext) as built, on one device.
  - torch.autograd.gradcheck of v3 in fp64 (x and every factor) on small shapes
  - v3's forward and backward against v1 and v2 (the seed's formulations) in fp32 and fp64
  - KronLinear: its factors are parameters, a few SGD steps lower a regression loss, its
    gradients match the v1 module's, inputs of shape [..., N]
  - the backward twice on one graph (retain_graph), an empty batch, v3's plan line
  - factors as views of one buffer, transposed, a non-contiguous x, no_grad and inference_mode
  - refused inputs name what was expected (dtype, shape, contiguity, factors, devices)
  - the comparison can fail: a spoiled gradient is caught
Prints "N passed, N failed"; exit 1 on a failure.

    test_torch_ext.py [--device cpu|cuda] [--expect-cuda 0|1]
(the package must be importable: installed, or PYTHONPATH at a build's lib folder)
"""
import argparse
import sys

import kronlayer_torch as kl
import torch

passed = failed = 0


def check(what, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s %s" % (what, detail), file=sys.stderr)


def raises(what, fn, exc, text):
    """fn() raises exc with text in its message"""
    try:
        fn()
    except exc as e:
        check(what, text in str(e), "message %r lacks %r" % (str(e), text))
        return
    except Exception as e:  # the wrong kind of error is a failure, reported
        check(what, False, "raised %s: %s" % (type(e).__name__, e))
        return
    check(what, False, "did not raise")


def rel(got, want):
    d = (got.double() - want.double()).norm().item()
    w = want.double().norm().item()
    return d / w if w > 0 else d


def tensors(batch, factors, device, dtype, seed=3):
    x, gy, *mats = kl.make_inputs(batch, factors, seed, device, dtype)
    return x.requires_grad_(True), gy, [A.requires_grad_(True) for A in mats]


def grads_of(impl, x, factors, gy):
    y = kl.kron(x, factors, impl)
    return [y.detach()] + list(torch.autograd.grad(y, [x] + factors, gy))


def test_gradcheck(device):
    for batch, factors in ((3, [4, 5]), (2, [3, 4, 2]), (2, [6])):
        x, _, mats = tensors(batch, factors, device, torch.float64)

        def fn(x, *mats):
            return kl.kron(x, mats, "v3")

        ok = torch.autograd.gradcheck(fn, (x, *mats), eps=1e-6, atol=1e-8, rtol=1e-6)
        check("gradcheck fp64 %dx%s" % (batch, "x".join(map(str, factors))), ok)


def test_versions(device):
    shapes = ((4, [16, 16]), (2, [3, 5, 7]), (3, [2, 3, 4, 2]), (5, [40]), (2, [32, 64]))
    for dtype, tol in ((torch.float32, 2e-5), (torch.float64, 1e-12)):
        for batch, factors in shapes:
            x, gy, mats = tensors(batch, factors, device, dtype)
            v3 = grads_of("v3", x, mats, gy)
            for ref in ("v1", "v2"):
                want = grads_of(ref, x, mats, gy)
                names = ["y", "gx"] + ["gA%d" % (k + 1) for k in range(len(factors))]
                for name, got, exp in zip(names, v3, want):
                    e = rel(got, exp)
                    check("%s %s %dx%s v3 vs %s" % (name, dtype, batch,
                                                     "x".join(map(str, factors)), ref),
                          e <= tol and got.dtype == dtype and got.device == x.device,
                          "rel %.3e > %.0e" % (e, tol))


def test_module(device):
    torch.manual_seed(0)
    layer = kl.KronLinear([4, 5], device=device, dtype=torch.float32)
    check("module: factors are parameters", [p.shape for p in layer.parameters()]
          == [torch.Size([4, 4]), torch.Size([5, 5])])
    check("module: repr", "factors=4x5" in repr(layer) and "implementation=v3" in repr(layer))
    target = kl.KronLinear([4, 5], device=device, dtype=torch.float32)
    x = torch.randn(16, 20, device=device)
    with torch.no_grad():
        want = target(x)
    opt = torch.optim.SGD(layer.parameters(), lr=0.5)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = (layer(x) - want).square().mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    check("module: training lowers the loss", losses[-1] < 0.25 * losses[0],
          "losses %s" % losses[::5])
    # the same parameters through v1: the same gradients
    ref = kl.KronLinear([4, 5], implementation="v1", device=device, dtype=torch.float32)
    ref.load_state_dict(layer.state_dict())
    layer.zero_grad()
    xb = torch.randn(2, 3, 20, device=device)      # batch dimensions are flattened
    y3, y1 = layer(xb), ref(xb)
    check("module: [..., N] in, [..., N] out", y3.shape == xb.shape)
    y3.square().sum().backward()
    y1.square().sum().backward()
    for k, (a, b) in enumerate(zip(layer.factors, ref.factors)):
        e = rel(a.grad, b.grad)
        check("module: grad of factor %d vs v1" % (k + 1), e < 2e-5, "rel %.3e" % e)


def test_graph_and_edges(device):
    x, gy, mats = tensors(3, [4, 5], device, torch.float64)
    y = kl.kron(x, mats, "v3")
    first = torch.autograd.grad(y, [x] + mats, gy, retain_graph=True)
    second = torch.autograd.grad(y, [x] + mats, gy)
    # (on a GPU the factors' gradients sum partials with atomics: equal up to rounding)
    check("backward twice on one graph", all(rel(a, b) < 1e-12 for a, b in zip(first, second)))
    only_a = torch.autograd.grad(kl.kron(x.detach(), mats, "v3"), mats, gy)
    check("gradients of the factors alone", rel(only_a[1], first[2]) < 1e-12)
    empty = torch.zeros(0, 20, dtype=torch.float64, device=device, requires_grad=True)
    ye = kl.kron(empty, mats, "v3")
    ge = torch.autograd.grad(ye.sum(), mats)
    check("empty batch", ye.shape == (0, 20) and all(float(g.abs().sum()) == 0 for g in ge))
    dev = "cpu" if device == "cpu" else torch.device(device)
    line = kl.plan_line(32, [128, 128], torch.float32, dev)
    check("plan line", line.startswith("plan impl=v3 pass=fwd stages=") and "pass=bwd" in line
          and "gA2=" in line, line)


def test_refusals(device):
    x, _, mats = tensors(3, [4, 5], device, torch.float32)
    raises("half x", lambda: kl.kron(x.half(), [A.half() for A in mats]), RuntimeError,
           "x must be float32 or float64")
    raises("factor dtype", lambda: kl.kron(x, [mats[0].double(), mats[1]]), TypeError,
           "factor 1 is torch.float64 but x is torch.float32")
    raises("factor shape", lambda: kl.kron(x, [mats[0][:, :3], mats[1]]), ValueError,
           "factor 1 must be a square matrix [f, f], got (4, 3)")
    raises("N", lambda: kl.kron(x[:, :19], mats), ValueError, "N = prod(factors) = 20")
    raises("no factors", lambda: kl.kron(x, []), ValueError, "at least one factor")
    raises("implementation", lambda: kl.kron(x, mats, "v4"), ValueError, "v1|v2|v3")
    ops = torch.ops.kronlayer
    fd = [A.detach() for A in mats]
    xt = torch.randn(20, 3, device=device).t()
    raises("op: contiguity", lambda: ops.v3_forward(xt, fd), RuntimeError, "x must be contiguous")
    raises("op: a factor's contiguity", lambda: ops.v3_forward(x.detach(), [fd[0].t(), fd[1]]),
           RuntimeError, "factor 1 must be contiguous")
    raises("op: a factor's shape", lambda: ops.v3_forward(x.detach(), [fd[0], fd[1][:4]]),
           ValueError, "factor 2 must be a square matrix [f, f], got shape [4, 5]")
    raises("op: a factor's dtype", lambda: ops.v3_forward(x.detach(), [fd[0], fd[1].double()]),
           TypeError, "factor 2 is Double but x is Float")
    raises("op: factors' product", lambda: ops.v3_forward(x.detach(), [fd[0], fd[0]]),
           RuntimeError, "multiply to 16")
    raises("op: 1-D x", lambda: ops.v3_forward(x.detach()[0], fd), RuntimeError,
           "x must be 2-D [B, N]")
    y, saved = ops.v3_forward(x.detach(), fd)
    raises("op: gy's shape", lambda: ops.v3_backward(x.detach(), fd, saved, y[:2]),
           RuntimeError, "gy (the gradient of y) must have")
    raises("op: saved's dtype", lambda: ops.v3_backward(x.detach(), fd, saved.double(), y),
           RuntimeError, "must be Float like x")
    raises("op: nine factors", lambda: ops.v3_forward(
        torch.zeros(1, 512, device=device), [torch.zeros(2, 2, device=device)] * 9),
        ValueError, "expected 1 to 8 factors")
    raises("op: no double backward", lambda: torch.autograd.grad(
        torch.autograd.grad(kl.kron(x, mats).square().sum(), x, create_graph=True)[0].sum(), x),
        RuntimeError, "not differentiable itself")
    if not kl.built_with_cuda() and torch.cuda.is_available():
        raises("CUDA tensors in a CPU build", lambda: kl.kron(x.cuda(), [A.cuda() for A in mats]),
               RuntimeError, "has no CUDA")


def test_factor_layouts(device):
    """v3 reads each factor where it is: views into one buffer, a transposed (non-contiguous)
    factor, factors of another tensor's storage; gradients land on each factor"""
    x, gy, mats = tensors(3, [4, 5], device, torch.float64)
    want = grads_of("v1", x, mats, gy)
    flat = torch.cat([A.detach().reshape(-1) for A in mats]).requires_grad_(True)
    views = [flat[:16].view(4, 4), flat[16:].view(5, 5)]
    got = grads_of("v3", x, views, gy)
    check("factors as views of one tensor: y, gx",
          rel(got[0], want[0]) < 1e-12 and rel(got[1], want[1]) < 1e-12)
    gflat = torch.autograd.grad(kl.kron(x, views, "v3"), flat, gy)[0]
    check("factors as views: the buffer's gradient",
          rel(gflat, torch.cat([want[2].reshape(-1), want[3].reshape(-1)])) < 1e-12)
    At = mats[1].detach().t().contiguous().requires_grad_(True)
    got = grads_of("v3", x, [mats[0], At.t()], gy)
    check("a transposed factor", rel(got[0], want[0]) < 1e-12 and rel(got[3], want[3]) < 1e-12)
    xt = x.detach().t().contiguous().t().requires_grad_(True)
    got = grads_of("v3", xt, mats, gy)
    check("a non-contiguous x", rel(got[0], want[0]) < 1e-12 and rel(got[1], want[1]) < 1e-12)
    with torch.no_grad():
        check("no_grad: the forward alone", rel(kl.kron(x, mats, "v3"), want[0]) < 1e-12)
    with torch.inference_mode():
        check("inference_mode", rel(kl.kron(x.detach(), [A.detach() for A in mats], "v3"),
                                    want[0]) < 1e-12)


def test_can_fail(device):
    """the comparison this test uses catches one spoiled element of a gradient"""
    x, gy, mats = tensors(3, [4, 5], device, torch.float32)
    g3 = grads_of("v3", x, mats, gy)[3].clone()
    g1 = grads_of("v1", x, mats, gy)[3]
    g3.view(-1)[7] += 1e-3 * g1.abs().max()
    check("a spoiled gradient fails", rel(g3, g1) > 2e-5, "rel %.3e" % rel(g3, g1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--expect-cuda", choices=("0", "1"), help="the build's CUDA switch")
    args = p.parse_args()
    print("kronlayer_torch from %s, torch %s, CUDA build: %s, device %s" % (
        kl.__file__, torch.__version__, kl.built_with_cuda(), args.device))
    check("the extension imports", kl.has_extension(), "(kronlayer_torch._C missing)")
    if not kl.has_extension():
        print("%d passed, %d failed" % (passed, failed))
        return 1
    if args.expect_cuda is not None:
        check("CUDA switch", kl.built_with_cuda() == (args.expect_cuda == "1"))
    if args.device == "cuda" and not (kl.built_with_cuda() and torch.cuda.is_available()):
        print("--device cuda needs a CUDA build and a CUDA device", file=sys.stderr)
        return 1
    test_gradcheck(args.device)
    test_versions(args.device)
    test_module(args.device)
    test_graph_and_edges(args.device)
    test_refusals(args.device)
    test_factor_layouts(args.device)
    test_can_fail(args.device)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
