"""setup.py: builds kronlayer_torch, the PyTorch extension of kernels/kron/ (v3 of the
Kronecker layer as torch ops, an autograd Function and an nn.Module), from the kit's own
sources by their paths in this checkout: no copies.

    pip install --no-build-isolation kernels/kron/torch_ext     (from the repository root)
    cd kernels/kron/torch_ext && python setup.py install         (the seed's way)
    cd kernels/kron/torch_ext && python setup.py build_ext --inplace   (no install: test.py here
                                                                 then finds the package beside it)

What it compiles:
  C (build_clib, the C compiler: the library kron_api.h on kron_algo.c's call sequences)
      kernels/kron/{kron_common,kron_algo,kron_cpu,kron_api,kron_api_harness}.c
  CUDA (nvcc, with CUDA only): kernels/kron/kron_launch.cu (v3's launches on a stream) and
      kron_kernels.cu (v3's kernels), for TORCH_CUDA_ARCH_LIST (default "8.0;9.0a", as CMake's
      80-real 90a-real)
  C++: kronlayer_torch/csrc/kron_torch.cpp, the ops torch.ops.kronlayer.v3_forward/v3_backward

CUDA or not: KRON_EXT_CUDA=1 builds with CUDA (and fails saying why when it cannot), 0 without
(CPU tensors only); unset, with CUDA when torch is a CUDA build and nvcc is found (CUDA_HOME or
PATH), else without, saying why. KRON_EXT_WERROR=1 makes warnings in the C sources errors
(the kit's tests set it).
"""
import os
import sys

from setuptools import setup

try:
    import torch
    from torch.utils import cpp_extension
except ImportError:
    sys.exit("kronlayer_torch: setup.py needs PyTorch importable in this Python "
             "(pip install torch; with pip, build with --no-build-isolation)")

HERE = os.path.dirname(os.path.abspath(__file__))
KRON = os.path.dirname(HERE)                        # kernels/kron
ROOT = os.path.dirname(os.path.dirname(KRON))       # the repository
INCLUDES = [KRON, os.path.join(ROOT, "kernels", "cuda"),
            os.path.join(ROOT, "kernels", "harness"), os.path.join(ROOT, "common")]
C_SOURCES = ["kron_common.c", "kron_algo.c", "kron_cpu.c", "kron_api.c", "kron_api_harness.c"]
CUDA_SOURCES = ["kron_launch.cu", "kron_kernels.cu"]


def use_cuda():
    """(with CUDA?, why) from KRON_EXT_CUDA, torch's build and the CUDA toolkit."""
    env = os.environ.get("KRON_EXT_CUDA", "")
    have_nvcc = cpp_extension.CUDA_HOME is not None and os.path.exists(
        os.path.join(cpp_extension.CUDA_HOME, "bin", "nvcc"))
    if env not in ("", "0", "1"):
        sys.exit("kronlayer_torch: KRON_EXT_CUDA must be 0 or 1, got %r" % env)
    if env == "0":
        return False, "KRON_EXT_CUDA=0"
    missing = None
    if torch.version.cuda is None:
        missing = "this torch (%s) has no CUDA" % torch.__version__
    elif not have_nvcc:
        missing = "no CUDA toolkit found (set CUDA_HOME or put nvcc on PATH)"
    if missing and env == "1":
        sys.exit("kronlayer_torch: KRON_EXT_CUDA=1 but %s" % missing)
    return (False, missing) if missing else (True, "CUDA %s at %s" % (torch.version.cuda,
                                                                      cpp_extension.CUDA_HOME))


def c_library(cuda):
    """The C sources as a static library, compiled as C11 like CMake compiles them."""
    cflags = ["-std=c11", "-O2", "-Wall", "-Wextra"]
    if os.environ.get("KRON_EXT_WERROR") == "1":
        cflags.append("-Werror")
    macros = [("_DEFAULT_SOURCE", None), ("_POSIX_C_SOURCE", "200809L")]
    includes = list(INCLUDES)
    if cuda:
        macros.append(("KRON_API_CUDA", None))
        includes.append(os.path.join(cpp_extension.CUDA_HOME, "include"))
    return ("kron_c", {"sources": [os.path.join(KRON, s) for s in C_SOURCES],
                       "include_dirs": includes, "macros": macros, "cflags": cflags})


def extension(cuda):
    sources = [os.path.join(HERE, "kronlayer_torch", "csrc", "kron_torch.cpp")]
    args = {"cxx": ["-O2"]}
    if not cuda:
        return cpp_extension.CppExtension("kronlayer_torch._C", sources, include_dirs=INCLUDES,
                                          extra_compile_args=args)
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "8.0;9.0a")
    sources += [os.path.join(KRON, s) for s in CUDA_SOURCES]
    args["cxx"].append("-DKRON_API_CUDA")
    args["nvcc"] = ["-O3", "-lineinfo", "-DKRON_API_CUDA"]
    return cpp_extension.CUDAExtension("kronlayer_torch._C", sources, include_dirs=INCLUDES,
                                       extra_compile_args=args)


if not os.path.exists(os.path.join(KRON, "kron_api.h")):
    sys.exit("kronlayer_torch: %s has no kron_api.h: build from the repository's tree "
             "(pip install --no-build-isolation kernels/kron/torch_ext)" % KRON)
class BuildExt(cpp_extension.BuildExtension):
    """torch's build_ext, after the C library (also when build_ext runs alone: --inplace)."""

    def run(self):
        self.run_command("build_clib")
        super().run()


cuda, why = use_cuda()
print("kronlayer_torch: building %s CUDA (%s)" % ("with" if cuda else "without", why))
setup(
    name="kronlayer_torch",
    version="0.1.0",
    description="The Kronecker-factored layer of kernels/kron as a PyTorch extension",
    packages=["kronlayer_torch"],
    libraries=[c_library(cuda)],
    ext_modules=[extension(cuda)],
    cmdclass={"build_ext": BuildExt},
    zip_safe=False,
)
