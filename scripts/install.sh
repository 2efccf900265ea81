#!/usr/bin/env bash
# Installs the Debian 12 packages this kit needs. Idempotent: installs only what is missing.
#   scripts/install.sh            build + plot: compiler, cmake, libyaml, pcre2, jansson, gnuplot, python3 (peers, their tests)
#   scripts/install.sh --tests    also what the tests need: Slurm (slurmctld, slurmd, client), munge, poppler-utils,
#                                 clang-format (the format check), clang + libclang-rt-14-dev (the libFuzzer tests),
#                                 python3-venv and shellcheck (scripts/lint.sh), chromium (plot.report_browser:
#                                 the HTML report in a headless browser); then what --lint installs
#   scripts/install.sh --lint     ruff, pinned, for scripts/lint.sh: pip-installed into a venv (no root needed;
#                                 network needed: PyPI), REPRO_LINT_VENV (default build/lint-venv), made by
#                                 REPRO_LINT_PYTHON (default python3); nothing to do when it holds that version.
#                                 Fails, saying why, when it cannot (no python3-venv, PyPI unreachable)
#   scripts/install.sh --peers    the optional Python peers of the GPU machine, with pip (network needed; no apt):
#                                 TileLang and its CuTeDSL backend (tilelang, nvidia-cutlass-dsl) for tilebench's
#                                 tilelang and cutedsl systems, into the python3 that runs the peers
#                                 (REPRO_PYTHON, default python3; it must have torch, and nvcc must be on PATH)
#   scripts/install.sh --tvm      Apache TVM for the tvm and tvm-ms peers, with pip (network needed; no apt): the
#                                 pinned packages of `scripts/peers/tvm_backend.py pins` (TVM, MetaSchedule's
#                                 psutil and cloudpickle; its XGBoost cost model where the Python takes it) into a
#                                 folder of their own, REPRO_TVM_PATH (default build/tvm-site), which the peers put
#                                 first on their path: TileLang pins an older apache-tvm-ffi than TVM needs
#   scripts/install.sh --flashtensor   what scripts/flashtensor/build.sh needs to build FlashTensor itself (the
#                                 artifact's compiler) against Debian 12's MLIR 19: llvm-19-dev, libmlir-19-dev,
#                                 mlir-19-tools (mlir-tblgen), ninja-build, pybind11-dev, python3-dev and the
#                                 libraries LLVM's archives link (zlib, zstd, ncurses); about 190 MB of packages,
#                                 1.4 GB installed. Optional: CI and the figures do not need it
# When another apt or dpkg holds the package locks (unattended-upgrades, a second install),
# waits for it (up to REPRO_APT_WAIT seconds, default 600) instead of failing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

pkgs=(build-essential cmake pkg-config libyaml-dev libpcre2-dev libjansson-dev gnuplot-nox python3)
# The peers' Python packages, pinned to the versions the study's logs name (tilelang= cutlass_dsl=).
peer_pkgs=(tilelang==0.1.15 nvidia-cutlass-dsl==4.8.1)
# The ruff that scripts/lint.sh runs (Debian 12 has no package of it), pinned: rules change
# between versions.
ruff_version=0.17.6
lint_venv=${REPRO_LINT_VENV:-${REPRO_BUILD_DIR:-$root/build}/lint-venv}

# ruff $ruff_version in $lint_venv, unless it is there already.
install_ruff() {
  local py=${REPRO_LINT_PYTHON:-python3}
  if [ "$("$lint_venv/bin/ruff" --version 2>/dev/null)" = "ruff $ruff_version" ]; then
    echo "install.sh: ruff $ruff_version present ($lint_venv)"
    return 0
  fi
  echo "install.sh: pip install ruff==$ruff_version into $lint_venv"
  "$py" -m venv "$lint_venv" ||
    { echo "install.sh: $py -m venv $lint_venv failed (Debian: apt-get install python3-venv)" >&2; return 1; }
  "$lint_venv/bin/python" -m pip install --disable-pip-version-check -q "ruff==$ruff_version" ||
    { echo "install.sh: could not pip-install ruff==$ruff_version (is PyPI reachable?); scripts/lint.sh needs it" >&2; return 1; }
  "$lint_venv/bin/ruff" --version
}

lint=0
case "${1:-}" in
  --peers)
    py=${REPRO_PYTHON:-python3}
    "$py" -c "import torch" 2>/dev/null ||
      { echo "install.sh: $py has no torch: the peers run on PyTorch (install it first)" >&2; exit 1; }
    echo "install.sh: $py -m pip install ${peer_pkgs[*]}"
    "$py" -m pip install "${peer_pkgs[@]}"
    "$py" -c "import tilelang, cutlass; print('install.sh: tilelang', tilelang.__version__, 'and CuTeDSL import')"
    exit 0 ;;
  --tvm)
    py=${REPRO_PYTHON:-python3}
    site=${REPRO_TVM_PATH:-$root/build/tvm-site}
    "$py" -c "import torch, numpy" 2>/dev/null ||
      { echo "install.sh: $py has no torch or numpy: the tvm peers export PyTorch programs (install them first)" >&2; exit 1; }
    mapfile -t required < <("$py" "$root/scripts/peers/tvm_backend.py" pins required)
    mapfile -t optional < <("$py" "$root/scripts/peers/tvm_backend.py" pins cost-model)
    echo "install.sh: $py -m pip install --no-deps --target $site ${required[*]}"
    "$py" -m pip install --no-deps --upgrade --target "$site" "${required[@]}"
    "$py" -m pip install --no-deps --upgrade --target "$site" "${optional[@]}" ||
      echo "install.sh: ${optional[*]} not installed: tvm-ms tunes with MetaSchedule's random cost model" >&2
    PYTHONPATH=$site "$py" -c "import tvm; print('install.sh: tvm', tvm.__version__, 'imports from $site')"
    exit 0 ;;
  --lint) install_ruff; exit ;;
  --flashtensor) pkgs+=(git ninja-build llvm-19-dev libmlir-19-dev mlir-19-tools pybind11-dev python3-dev
                        zlib1g-dev libzstd-dev libncurses-dev) ;;
  --tests) pkgs+=(slurmctld slurmd slurm-client munge poppler-utils procps clang-format clang libclang-rt-14-dev
                  shellcheck python3-venv chromium)
           lint=1 ;;
  "") ;;
  *) echo "usage: $0 [--tests | --lint | --peers | --tvm | --flashtensor]" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install.sh: all ${#pkgs[@]} packages present"
  if [ $lint = 1 ]; then install_ruff; fi
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install.sh: missing packages: ${missing[*]}" >&2
  echo "install.sh: run as root (sudo $0 $*) or install them with apt-get" >&2
  exit 1
fi
echo "install.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
wait_s=${REPRO_APT_WAIT:-600}

# apt-get waits for the dpkg lock itself (DPkg::Lock::Timeout), but `apt-get update` does not
# wait for the package lists lock: retry it while the failure is a held lock.
apt_retry() {
  local deadline=$((SECONDS + wait_s)) err said=
  err=$(mktemp)
  while true; do
    if apt-get -o DPkg::Lock::Timeout="$wait_s" "$@" 2>"$err"; then rm -f "$err"; return 0; fi
    if ! grep -qiE "could not get lock|unable to lock|is another process using it" "$err" ||
       [ $SECONDS -ge $deadline ]; then
      cat "$err" >&2; rm -f "$err"; return 1
    fi
    [ -n "$said" ] || echo "install.sh: another apt/dpkg holds the lock; waiting (up to ${wait_s} s)" >&2
    said=1
    sleep "${REPRO_APT_POLL:-3}"
  done
}
apt_retry update -qq
# --no-install-recommends keeps slurm from pulling ~40 unneeded packages; service starts
# attempted by postinst scripts fail harmlessly where there is no init system.
apt_retry install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
if [ $lint = 1 ]; then install_ruff; fi
echo "install.sh: done"
