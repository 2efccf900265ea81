#!/usr/bin/env bash
# Installs the Debian 12 packages this kit needs. Idempotent: installs only what is missing.
#   scripts/install.sh            build + plot: compiler, cmake, libyaml, pcre2, jansson, gnuplot, python3 (peers, their tests)
#   scripts/install.sh --tests    also what the tests need: Slurm (slurmctld, slurmd, client), munge, poppler-utils,
#                                 clang-format (the format check), clang + libclang-rt-14-dev (the libFuzzer tests)
#   scripts/install.sh --peers    the optional Python peers of the GPU machine, with pip (network needed; no apt):
#                                 TileLang and its CuTeDSL backend (tilelang, nvidia-cutlass-dsl) for tilebench's
#                                 tilelang and cutedsl systems, into the python3 that runs the peers
#                                 (REPRO_PYTHON, default python3; it must have torch, and nvcc must be on PATH)
# When another apt or dpkg holds the package locks (unattended-upgrades, a second install),
# waits for it (up to REPRO_APT_WAIT seconds, default 600) instead of failing.
set -euo pipefail

pkgs=(build-essential cmake pkg-config libyaml-dev libpcre2-dev libjansson-dev gnuplot-nox python3)
# The peers' Python packages, pinned to the versions the study's logs name (tilelang= cutlass_dsl=).
peer_pkgs=(tilelang==0.1.15 nvidia-cutlass-dsl==4.8.1)
case "${1:-}" in
  --peers)
    py=${REPRO_PYTHON:-python3}
    "$py" -c "import torch" 2>/dev/null ||
      { echo "install.sh: $py has no torch: the peers run on PyTorch (install it first)" >&2; exit 1; }
    echo "install.sh: $py -m pip install ${peer_pkgs[*]}"
    "$py" -m pip install "${peer_pkgs[@]}"
    "$py" -c "import tilelang, cutlass; print('install.sh: tilelang', tilelang.__version__, 'and CuTeDSL import')"
    exit 0 ;;
  --tests) pkgs+=(slurmctld slurmd slurm-client munge poppler-utils procps clang-format clang libclang-rt-14-dev) ;;
  "") ;;
  *) echo "usage: $0 [--tests | --peers]" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install.sh: all ${#pkgs[@]} packages present"
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
echo "install.sh: done"
