#!/usr/bin/env bash
# The test command (README quick start, .ci/run): installs what is missing (as root; the pinned
# ruff, into a venv, also without root), checks the format, lints the shell scripts
# (shellcheck) and the Python (ruff) with scripts/lint.sh, builds (warnings are errors),
# starts the local single-node Slurm cluster for the end-to-end tests, runs every CTest test,
# then runs the unit tests again in a build of the C code with AddressSanitizer and
# UndefinedBehaviorSanitizer.
#   scripts/test.sh [CTEST ARGS...]     e.g. -L unit for the fast set only
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ "$(id -u)" = 0 ]; then scripts/install.sh --tests; else scripts/install.sh --lint; fi
scripts/format.sh --check
scripts/lint.sh
scripts/build.sh
if [ "$(id -u)" = 0 ] && [ -x scripts/slurm-local.sh ]; then
  scripts/slurm-local.sh start
else
  echo "test.sh: not root, the local Slurm cluster is not started; the Slurm tests skip unless one is running"
fi
ctest --test-dir "${REPRO_BUILD_DIR:-$root/build}" --output-on-failure -j"$(nproc)" "$@"

# ASan + UBSan: the C code without CUDA, the fast tests.
san=${REPRO_SANITIZE_BUILD_DIR:-$root/build-sanitize}
cmake -S "$root" -B "$san" -DCMAKE_BUILD_TYPE=Debug -DREPRO_SANITIZE=ON -DREPRO_WITH_CUDA=OFF >/dev/null
cmake --build "$san" -j"$(nproc)" >/dev/null
ctest --test-dir "$san" --output-on-failure -j"$(nproc)" -L unit
