"""layer.py: the Kronecker-factored layer in PyTorch: v3 (kernels/kron/'s kernels through the
compiled op torch.ops.kronlayer.kron_v3, differentiable, its autograd node in C++), the three
versions behind one function (`kron`), and the nn.Module KronLinear whose factors are
parameters.

v3's forward keeps what its backward reads (T_1..T_{m-1}, one [B, N] tensor per factor but the
last) in its autograd node (csrc/kron_torch.cpp); its backward computes the input's and every
factor's gradient in one pass. The factors are read where they are: no copy per call. CUDA
tensors run on the current CUDA stream; CPU tensors run the CPU backend of
kernels/kron/kron_cpu.c, which emulates v3's kernels thread by thread (exact but slow: for
tests and small shapes).
"""
import math

import torch

from .formulations import forward_naive, forward_v2

try:
    from . import _C  # noqa: F401  (registers torch.ops.kronlayer.*)

    _C_ERROR = None
except ImportError as e:  # the pure-Python versions work without it
    _C = None
    _C_ERROR = e

IMPLEMENTATIONS = ("v1", "v2", "v3")
INSTALL_HINT = ("build it from a clone: pip install --no-build-isolation kernels/kron/torch_ext "
                "(or python setup.py install there)")


def has_extension():
    """True when the compiled ops (v3) are importable."""
    return _C is not None


def built_with_cuda():
    """True when the compiled ops launch on CUDA tensors (built with KRON_EXT_CUDA on)."""
    return _C is not None and _C.has_cuda()


def _require_extension():
    if _C is None:
        raise RuntimeError("kronlayer_torch: v3 needs the compiled extension "
                           "(kronlayer_torch._C), which does not import (%s); %s"
                           % (_C_ERROR, INSTALL_HINT))


def _check_factors(x, factors):
    """Every factor a square matrix of x's dtype on x's device; returns their sizes."""
    if len(factors) < 1:
        raise ValueError("kronlayer: expected at least one factor")
    sizes = []
    for k, A in enumerate(factors):
        if not isinstance(A, torch.Tensor) or A.dim() != 2 or A.shape[0] != A.shape[1]:
            got = tuple(A.shape) if isinstance(A, torch.Tensor) else type(A).__name__
            raise ValueError("kronlayer: factor %d must be a square matrix [f, f], got %s"
                             % (k + 1, got))
        if A.dtype != x.dtype:
            raise TypeError("kronlayer: factor %d is %s but x is %s; expected one dtype"
                            % (k + 1, A.dtype, x.dtype))
        if A.device != x.device:
            raise ValueError("kronlayer: factor %d is on %s but x is on %s; expected one device"
                             % (k + 1, A.device, x.device))
        sizes.append(int(A.shape[0]))
    return sizes


class KronV3:
    """y = x·(A_1 ⊗ ... ⊗ A_m)^T with v3's kernels, differentiable in x and every factor:
    KronV3.apply(x, *factors), x [B, N] (fp32 or fp64), A_k [f_k, f_k] of x's dtype and device,
    N = prod f_k. The op torch.ops.kronlayer.kron_v3, whose autograd node is C++ (one dispatch
    per call); it keeps x, the factors and the forward's intermediates for the backward, which
    is not differentiable itself (no double backward)."""

    @staticmethod
    def apply(x, *factors):
        _require_extension()
        return torch.ops.kronlayer.kron_v3(x, list(factors))


def kron(x, factors, implementation="v3"):
    """y = x·(A_1 ⊗ ... ⊗ A_m)^T over the last dimension of x ([..., N], N = prod f_k), with
    implementation v1 (the seed's naive PyTorch), v2 (the seed's PyTorch-native) or v3 (our
    kernels, autograd through KronV3). Differentiable in x and every factor."""
    if implementation not in IMPLEMENTATIONS:
        raise ValueError("kronlayer: implementation must be one of %s, got %r"
                         % ("|".join(IMPLEMENTATIONS), implementation))
    factors = list(factors)
    sizes = _check_factors(x, factors)
    n = math.prod(sizes)
    if x.dim() < 1 or x.shape[-1] != n:
        raise ValueError("kronlayer: x must be [..., N] with N = prod(factors) = %d (factors %s), "
                         "got shape %s" % (n, sizes, tuple(x.shape)))
    if implementation == "v3":
        _require_extension()
        if x.dim() == 2:
            return torch.ops.kronlayer.kron_v3(x, factors)
        return torch.ops.kronlayer.kron_v3(x.reshape(-1, n), factors).reshape(x.shape)
    x2 = x.reshape(-1, n)
    y = forward_naive(x2, factors) if implementation == "v1" else forward_v2(x2, factors)
    return y.reshape(x.shape)


class KronLinear(torch.nn.Module):
    """A linear layer whose [N, N] weight is the Kronecker product A_1 ⊗ ... ⊗ A_m of small
    square factors (nn.Parameters `factors[k]`, [f_k, f_k]): y = x·(A_1 ⊗ ... ⊗ A_m)^T on the
    last dimension of x, N = prod f_k, N·sum(f_k) multiply-adds per row instead of N².
    Factors start as N(0, 1)/sqrt(f_k) (|y| ~ |x|)."""

    def __init__(self, factors, implementation="v3", device=None, dtype=None):
        super().__init__()
        sizes = [int(f) for f in factors]
        if not sizes or min(sizes) < 1:
            raise ValueError("KronLinear: factors must be positive sizes, got %s" % (factors,))
        if implementation not in IMPLEMENTATIONS:
            raise ValueError("KronLinear: implementation must be one of %s, got %r"
                             % ("|".join(IMPLEMENTATIONS), implementation))
        self.sizes = sizes
        self.implementation = implementation
        self.factors = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.empty(f, f, device=device, dtype=dtype)) for f in sizes])
        self.reset_parameters()

    @property
    def features(self):
        return math.prod(self.sizes)

    def reset_parameters(self):
        with torch.no_grad():
            for A, f in zip(self.factors, self.sizes):
                A.normal_(0.0, 1.0 / math.sqrt(f))

    def forward(self, x):
        return kron(x, list(self.factors), self.implementation)

    def extra_repr(self):
        return "factors=%s, features=%d, implementation=%s" % (
            "x".join(str(f) for f in self.sizes), self.features, self.implementation)


def plan_line(batch, factors, dtype=torch.float32, device="cpu"):
    """v3's plan for a shape, dtype and device as kronlayer's `plan` line prints it (its stages,
    tiles and gradient steps)."""
    _require_extension()
    device = torch.device(device)
    index = -1 if device.type == "cpu" else (device.index if device.index is not None
                                             else torch.cuda.current_device())
    if dtype not in (torch.float32, torch.float64):
        raise TypeError("kronlayer: dtype must be torch.float32 or torch.float64, got %s" % dtype)
    return _C.plan_line(int(batch), [int(f) for f in factors], dtype == torch.float64, index)
