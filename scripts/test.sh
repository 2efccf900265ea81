#!/usr/bin/env bash
# The test command (README quick start, .ci/run): installs what is missing (as root), builds,
# starts the local single-node Slurm cluster for the end-to-end tests, runs every CTest test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ "$(id -u)" = 0 ]; then scripts/install.sh --tests; fi
scripts/build.sh
if [ "$(id -u)" = 0 ] && [ -x scripts/slurm-local.sh ]; then
  scripts/slurm-local.sh start
else
  echo "test.sh: not root, the local Slurm cluster is not started; the Slurm tests skip unless one is running"
fi
ctest --test-dir "${REPRO_BUILD_DIR:-$root/build}" --output-on-failure -j"$(nproc)" "$@"
