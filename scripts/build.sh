#!/usr/bin/env bash
# Configures and builds everything into build/ (CUDA kernels too when nvcc is on PATH).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${REPRO_BUILD_DIR:-$root/build}
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo} >/dev/null
cmake --build "$build" -j"$(nproc)"
