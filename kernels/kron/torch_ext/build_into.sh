#!/usr/bin/env bash
# Builds kronlayer_torch with PYTHON into WORK, nothing in the tree: the package and its
# compiled _C under WORK/lib (put it on PYTHONPATH), the C library and objects beside it.
# setup.py's switches pass through the environment (KRON_EXT_CUDA, KRON_EXT_WERROR,
# TORCH_CUDA_ARCH_LIST, MAX_JOBS). Used by the tests (CPU-only) and the study's GPU run.
#   build_into.sh PYTHON WORK       exit status: setup.py's; its output on stdout and stderr
set -u
[ $# = 2 ] || { echo "usage: $0 PYTHON WORK" >&2; exit 2; }
py=$1 work=$2
cd "$(dirname "$0")" || exit 1
"$py" setup.py -q build_py --build-lib "$work/lib" \
  build_clib --build-temp "$work/tmp" --build-clib "$work/clib" \
  build_ext --build-temp "$work/tmp" --build-lib "$work/lib"
