#!/usr/bin/env python3
"""The tilebench study's TileLang kernels (scripts/peers/tilelang_*.py) lower and compile for
sm_90a through both of the seed's backends, with no GPU: TileLang's CUDA path (CUDA C++ through
nvcc) and its CuTeDSL path (CuTeDSL Python source; its own JIT runs at the first call, on a
GPU). Checks what the generated source holds: Hopper wgmma for the GEMM and MHA tiles, the
G query heads of one K/V head as the rows of the NSA tiles.

Needs tilelang (and nvidia-cutlass-dsl for the CuTeDSL half) and nvcc; exits 77 (skipped)
without them. Point REPRO_TILELANG_PYTHON at an interpreter that has them:
    test_tilelang_compile.py --peers-dir scripts/peers
Ends with "N passed, N failed"; exit status 1 when anything failed.
"""
import argparse
import importlib
import os
import shutil
import sys

from tally import Tally

tally = Tally()
check = tally.check
ARCH = "sm_90a"


def cases():
    """(name, module name, kernel args, what the CUDA source must hold)."""
    return [
        ("gemm fp16 512^3", "tilelang_gemm", (512, 512, 512, "fp16"), "wgmma"),
        ("gemm bf16 1024^3", "tilelang_gemm", (1024, 1024, 1024, "bf16"), "wgmma"),
        ("mha causal B1 H4 S512 D128", "tilelang_mha", (1, 4, 512, 128, True, "fp16", 0.088),
         "wgmma"),
        ("mha B1 H4 S512 D64", "tilelang_mha", (1, 4, 512, 64, False, "fp16", 0.125), "wgmma"),
        ("nsa H16 G16 S256 D32 BS32 T1", "tilelang_nsa", (2, 16, 256, 32, 16, 32, 1, "fp16", 0.1),
         "mma"),
        ("nsa H16 G1 S256 D64 BS32 T4", "tilelang_nsa", (2, 16, 256, 64, 1, 32, 4, "fp16", 0.1),
         "mma"),
    ]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--peers-dir", required=True)
    a = p.parse_args()
    sys.path.insert(0, os.path.abspath(a.peers_dir))
    os.environ["TILELANG_DISABLE_CACHE"] = "1"
    if shutil.which("nvcc") is None and os.path.exists("/usr/local/cuda/bin/nvcc"):
        os.environ["PATH"] = "/usr/local/cuda/bin:" + os.environ.get("PATH", "")
    try:
        importlib.import_module("tilelang")
    except Exception as e:
        print("skipped: tilelang does not import (%s)" % e)
        return 77
    if shutil.which("nvcc") is None:
        print("skipped: no nvcc")
        return 77
    try:
        importlib.import_module("cutlass")
        systems = ("tilelang", "cutedsl")
    except Exception as e:
        print("note: nvidia-cutlass-dsl does not import (%s): the CuTeDSL half is skipped" % e)
        systems = ("tilelang",)
    import tilelang_backend
    import tilelang_gemm
    check("tf32" in (tilelang_gemm.refuses("fp32") or ""), "fp32 GEMM not refused")
    # cutedsl last: its load sets TILELANG_USE_GEMM_V1 for the rest of the process, as in a
    # cell of the cutedsl system
    for system in systems:
        for name, module_name, args, holds in cases():
            module = importlib.import_module(module_name)
            what = "%s (%s)" % (name, system)
            try:
                source = tilelang_backend.compile_kernel(system, module, module.kernel(*args),
                                                         arch=ARCH).get_kernel_source()
            except Exception as e:
                check(False, "%s: %s: %s" % (what, type(e).__name__, str(e)[:300]))
                continue
            if system == "cutedsl":
                check("@cute.kernel" in source, "%s: no @cute.kernel in the source" % what)
            else:
                check(holds in source, "%s: the CUDA source has no %s" % (what, holds))
            print("ok %s: %d characters of source" % (what, len(source)))
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
