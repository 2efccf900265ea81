# shellcheck shell=bash
# scripts/lib/root.sh: the repository root and the usage text of the figure and study scripts,
# sourced by each of them (figNN/*.sh, studies/NAME/*.sh) and by the shared bodies in scripts/
# that they call. An entry point finds it with the one walk up to .repro-root, its first line
# of code (the nearest folder at or above the script's own that holds the marker, so
# studies/NAME/ and deeper folders work like fig12/), then sources it:
#   root=$(cd "$(dirname "$0")" && until [ -e .repro-root ]; do [ "$PWD" != / ] || exit; cd ..; done && pwd) ||
#     { echo "$0: no .repro-root above this folder" >&2; exit 2; }
#   # shellcheck source=scripts/lib/root.sh
#   . "$root/scripts/lib/root.sh"
# (the directive names the file for scripts/lint.sh, which runs shellcheck at the root). A
# script in scripts/ sources "$(dirname "$0")/lib/root.sh" instead. Sourcing it sets
#   root   the repository root: the folder two above this file, which holds .repro-root
#   here   the folder of the script that sourced it ($0's), absolute
# and defines repro_usage, repro_wants_help and repro_help. It sets no shell option.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ -e "$root/.repro-root" ] || { echo "${0##*/}: no .repro-root in $root" >&2; exit 2; }
# shellcheck disable=SC2034  # read by the scripts that source this file
here=$(cd "$(dirname "$0")" && pwd)

# repro_usage FILE: FILE's header comment, from its second line to its first line of code,
# without the leading "# " (an entry point's usage)
repro_usage() { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$1"; }

# repro_wants_help WORD...: true when -h or --help is one of the words
repro_wants_help() {
  local a
  for a in "$@"; do case $a in -h | --help) return 0 ;; esac; done
  return 1
}

# repro_help "$@": when the words ask for it, the sourcing script's usage on stdout and exit 0
# (before anything is built or written)
repro_help() { if repro_wants_help "$@"; then repro_usage "$0"; exit 0; fi; }
