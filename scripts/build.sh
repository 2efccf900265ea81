#!/usr/bin/env bash
# Builds the kit with CMake.
#   scripts/build.sh                  everything into build/ (CUDA kernels too when nvcc is on PATH)
#   scripts/build.sh --target T ...   only target T (and what it needs) into build/; repeatable
#   scripts/build.sh --plot           only repro-plot, for ./plot.sh; prints the binary's path.
#                                     Uses build/ when it is configured (an up-to-date check),
#                                     else build-plot/, configured without CUDA: a fresh clone
#                                     draws its figures in seconds, not after the kernels' build.
# REPRO_BUILD_DIR overrides the folder (build/ or build-plot/); CMAKE_BUILD_TYPE the build type.
# REPRO_FA3_DIR (a flash-attention checkout), REPRO_CUTLASS_DIR, REPRO_FA3_SOURCE: the fa3 peer's
# kernels too (kernels/attention/fa3/README.md), passed to CMake as the same-named cache variables.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
targets=()
plot=0
while [ $# -gt 0 ]; do
  case $1 in
    --target) targets+=("${2:?--target needs a name}"); shift 2 ;;
    --plot) plot=1; shift ;;
    *) echo "usage: $0 [--target T]... | --plot" >&2; exit 2 ;;
  esac
done
if [ $plot = 1 ]; then
  build=${REPRO_BUILD_DIR:-}
  if [ -z "$build" ]; then
    if [ -f "$root/build/CMakeCache.txt" ]; then build=$root/build; else build=$root/build-plot; fi
  fi
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  {
    if [ ! -f "$build/CMakeCache.txt" ]; then
      echo "build.sh: building repro-plot into $build (no CUDA; about 15 s once)" >&2
      cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" -DREPRO_WITH_CUDA=OFF
    fi
    cmake --build "$build" --target repro-plot -j"$(nproc)"
  } >"$log" 2>&1 || { cat "$log" >&2; echo "build.sh: building repro-plot failed" >&2; exit 1; }
  echo "$build/bin/repro-plot"
  exit 0
fi
build=${REPRO_BUILD_DIR:-$root/build}
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
fa3=()
for v in REPRO_FA3_DIR REPRO_CUTLASS_DIR REPRO_FA3_SOURCE; do
  [ -n "${!v:-}" ] && fa3+=("-D$v=${!v}")
done
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" "${fa3[@]}" >/dev/null
t=()
for x in "${targets[@]}"; do t+=(--target "$x"); done
cmake --build "$build" "${t[@]}" -j"$(nproc)"
