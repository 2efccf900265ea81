"""The tile-benchmark seed's two TileLang backends as peer systems: the same TileLang kernels
(tilelang_gemm.py, tilelang_mha.py, tilelang_nsa.py) compiled for

  tilelang  TileLang's default CUDA path (target "cuda": CUDA C++ through NVCC)
  cutedsl   TileLang's CuTeDSL backend (target "cutedsl": CUTLASS's Python DSL), with
            TILELANG_USE_GEMM_V1=1 as the seed's runner sets it

A kernel is compiled for the shape of its first call (TileLang kernels are shape-specialised),
so that call's extra time is the cell's compile_s, the seed's compilation_time. TileLang's
kernel cache is off (TILELANG_DISABLE_CACHE=1): every cell compiles, so compile_s is a compile.
A missing package makes the cell unsupported, with the reason and the install command."""
import importlib
import logging
import os
import sys

import tilelang_mha
import tilelang_nsa
from errors import Unsupported, one_line

SYSTEMS = ("tilelang", "cutedsl")
TARGETS = {"tilelang": "cuda", "cutedsl": "cutedsl"}
INSTALL = ("scripts/install.sh --peers (pip install tilelang==0.1.15 nvidia-cutlass-dsl==4.8.1); "
           "a GPU machine without network: shared/gpu-wheels")


def _version(module_name):
    try:
        from importlib.metadata import version
        return version(module_name)
    except Exception:
        return "unknown"


def _import(module_name, package):
    """The module; Unsupported naming the package and the install command when it does not
    import (ImportError, or a broken install failing inside its import)."""
    try:
        return importlib.import_module(module_name)
    except Exception as e:
        raise Unsupported("%s does not import (%s: %s); install: %s"
                          % (package, type(e).__name__, one_line(e, 200), INSTALL)) from e


def load(system, on_gpu=True):
    """The tilelang module, set up for `system`; Unsupported when a package is missing or the
    cell is not on a GPU (the kernels are CUDA)."""
    if system not in SYSTEMS:
        raise ValueError("unknown TileLang system " + system)
    os.environ.setdefault("TILELANG_DISABLE_CACHE", "1")
    if system == "cutedsl":
        os.environ["TILELANG_USE_GEMM_V1"] = "1"
    tilelang = _import("tilelang", "TileLang")
    _log_to_stderr(logging.getLogger("tilelang"))
    if system == "cutedsl":
        _import("cutlass", "CuTeDSL (nvidia-cutlass-dsl)")
    if not on_gpu:
        raise Unsupported("%s compiles CUDA kernels: --device gpu only" % system)
    return tilelang


def _log_to_stderr(logger):
    """TileLang's log (compile start and end) writes to stdout, which is the cell's log of the
    kit's contract: its records go to stderr instead (the runner keeps that beside the log)."""
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    to_stderr = logging.StreamHandler(sys.stderr)
    to_stderr.setFormatter(logging.Formatter("%(asctime)s [TileLang:%(name)s:%(levelname)s] "
                                             "%(message)s"))
    logger.addHandler(to_stderr)


def config_pairs(system):
    """The versions a cell of `system` ran with, for its config line."""
    pairs = [("tilelang", _version("tilelang")), ("tvm_ffi", _version("apache-tvm-ffi"))]
    if system == "cutedsl":
        pairs += [("cutlass_dsl", _version("nvidia-cutlass-dsl")),
                  ("gemm_v1", os.environ.get("TILELANG_USE_GEMM_V1", "0"))]
    return pairs


def compile_kernel(system, module, prim_func, arch=None):
    """prim_func (made by `module`, one of the tilelang_*.py kernels) compiled for the system's
    target with the module's PASS_CONFIGS (names of tilelang.PassConfigKey, all set true); arch
    (e.g. "sm_90a") names the GPU where there is none to detect it from."""
    tilelang = load(system)
    configs = {getattr(tilelang.PassConfigKey, name): True for name in module.PASS_CONFIGS}
    target = TARGETS[system] if arch is None else {"kind": TARGETS[system], "arch": arch}
    return tilelang.compile(prim_func, target=target, pass_configs=configs)


class Lazy:
    """A callable that compiles make(*args) into a kernel at its first call (with the shapes it
    is called with) and then runs it: f(*args) -> tuple of outputs."""

    def __init__(self, system, module, make):
        self.system, self.module, self.make, self.kernel = system, module, make, None

    def __call__(self, *args):
        if self.kernel is None:
            self.kernel = compile_kernel(self.system, self.module, self.make(*args))
        return self.run(self.kernel, *args)

    def run(self, kernel, *args):
        raise NotImplementedError


class Attention(Lazy):
    """Q, K, V [B, S, H, D] -> (out,) through tilelang_mha."""

    def __init__(self, system, causal, dtype, scale):
        def make(q, k, v):
            b, s, h, d = q.shape
            return tilelang_mha.kernel(b, h, s, d, causal, dtype, scale or d ** -0.5)
        super().__init__(system, tilelang_mha, make)

    def run(self, kernel, q, k, v):
        import torch
        out = torch.empty_like(q)
        kernel(q, k, v, out)
        return (out,)


class SelectedBlocks(Lazy):
    """Q [B, S, H, D], K, V [B, S, H/G, D], block_idx [B, S, H/G, T] -> (out,) through
    tilelang_nsa. The int64 block lists become int32 once per list tensor (a plan made once,
    outside the timed calls after the first), as the kernel indexes with int32."""

    def __init__(self, system, blocks, dtype):
        self.idx32 = {}

        def make(q, k, v, idx):
            b, s, h, d = q.shape
            return tilelang_nsa.kernel(b, h, s, d, blocks.groups, blocks.block_size,
                                       idx.shape[3], dtype, blocks.scale_for(d))
        super().__init__(system, tilelang_nsa, make)

    def run(self, kernel, q, k, v, idx):
        import torch
        key = (idx.data_ptr(), tuple(idx.shape))
        if key not in self.idx32:
            self.idx32 = {key: idx.to(torch.int32).contiguous()}
        out = torch.empty_like(q)
        kernel(q, k, v, self.idx32[key], out)
        return (out,)
