#!/usr/bin/env bash
# Installs the Debian 12 packages this kit needs. Idempotent: installs only what is missing.
#   scripts/install.sh            build + plot: compiler, cmake, libyaml, pcre2, gnuplot, python3 (peers, their tests)
#   scripts/install.sh --tests    also what the tests need: Slurm (slurmctld, slurmd, client), munge, poppler-utils,
#                                 clang-format (the format check)
set -euo pipefail

pkgs=(build-essential cmake pkg-config libyaml-dev libpcre2-dev gnuplot-nox python3)
case "${1:-}" in
  --tests) pkgs+=(slurmctld slurmd slurm-client munge poppler-utils procps clang-format) ;;
  "") ;;
  *) echo "usage: $0 [--tests]" >&2; exit 2 ;;
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
apt-get update -qq
# --no-install-recommends keeps slurm from pulling ~40 unneeded packages; service starts
# attempted by postinst scripts fail harmlessly where there is no init system.
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install.sh: done"
