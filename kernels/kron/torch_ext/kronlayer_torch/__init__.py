"""kronlayer_torch: the Kronecker-factored layer y = x·(A_1 ⊗ ... ⊗ A_m)^T of kernels/kron/
(kronlayer) in PyTorch: v3, our kernels, as an autograd Function (KronV3) and an nn.Module
(KronLinear, the factors as parameters), next to the seed's two PyTorch versions v1 and v2.
fp32 and fp64, CUDA tensors (the kernels, on the current stream) and CPU tensors (the CPU
emulation of the kernels). kernels/kron/README.md says how to build and use it.

    import torch, kronlayer_torch as kl
    layer = kl.KronLinear([32, 32], device="cuda")           # N = 1024, two 32x32 factors
    y = layer(torch.randn(16, 1024, device="cuda"))          # v3 forward
    y.square().sum().backward()                              # v3 backward: x's and the factors'
    y1 = kl.kron(x, factors, "v1")                           # the seed's naive version
"""
from .formulations import forward_naive, forward_v2, make_inputs, tolerance
from .layer import (
    IMPLEMENTATIONS,
    KronLinear,
    KronV3,
    built_with_cuda,
    has_extension,
    kron,
    plan_line,
)

__all__ = ["IMPLEMENTATIONS", "KronLinear", "KronV3", "built_with_cuda", "forward_naive",
           "forward_v2", "has_extension", "kron", "make_inputs", "plan_line", "tolerance"]
