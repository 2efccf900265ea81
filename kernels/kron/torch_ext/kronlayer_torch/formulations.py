"""formulations.py: the seed's two PyTorch versions of the Kronecker-factored layer
y = x·(A1 ⊗ ... ⊗ Am)^T (kernels/kron/kron.h has the math), its seeded inputs and the
checks' tolerance. Their one home: kronlayer_torch imports it as a module, and
scripts/peers/kron.py loads it by its path, so it imports nothing at the top (torch comes in
with the tensors), and runs without the compiled extension.

  forward_naive  the seed's v1: per factor (last first) one matmul [B·N/f, f]·A^T and a permute
                 (transpose + contiguous) that brings the next factor's axis last
  forward_v2     the seed's v2: per factor one broadcast batched matmul A·X over the
                 [B·P, f, Q] view, no copies
"""
import math


def forward_naive(x, factors):
    """The seed's v1: rotate the factor axes through the last position."""
    b, n = x.shape
    cur = x
    for A in reversed(factors):
        f = A.shape[0]
        y = cur.reshape(-1, f) @ A.t()                     # [B·N/f, f]
        cur = y.reshape(b, n // f, f).transpose(1, 2).contiguous().reshape(b, n)
    return cur


def forward_v2(x, factors):
    """The seed's v2: A applied on each axis of the [B·P, f, Q] view, broadcast over slabs."""
    b, n = x.shape
    cur = x
    p = 1
    for A in factors:
        f = A.shape[0]
        q = n // (p * f)
        cur = (A @ cur.reshape(b * p, f, q)).reshape(b, n)
        p *= f
    return cur


def make_inputs(batch, factors, seed, device, dtype):
    """[x, gy, A1, ..., Am]: x, gy ~ N(0, 1) [B, N], A_k ~ N(0, 1)/sqrt(f_k) (keeps |y| ~ |x|),
    drawn in fp64 on the CPU from torch.Generator(seed), then moved to device and dtype."""
    import torch

    g = torch.Generator(device="cpu")
    g.manual_seed(seed)
    n = math.prod(factors)
    x = torch.randn(batch, n, generator=g, dtype=torch.float64)
    mats = [torch.randn(f, f, generator=g, dtype=torch.float64) / math.sqrt(f) for f in factors]
    gy = torch.randn(batch, n, generator=g, dtype=torch.float64)
    return [t.to(device=device, dtype=dtype) for t in [x, gy] + mats]


def tolerance(dtype_char, length):
    """Relative L2 tolerance of an output made of reductions of total length `length` (dtype
    "f" or "d"): kronlayer's, 1e-5 fp32 and 1e-12 fp64, or 4·eps·sqrt(length) where that is
    larger."""
    eps = 2.0 ** -53 if dtype_char == "d" else 2.0 ** -24
    base = 1e-12 if dtype_char == "d" else 1e-5
    return max(base, 4 * eps * math.sqrt(length))
