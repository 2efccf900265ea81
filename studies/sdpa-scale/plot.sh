#!/usr/bin/env bash
# Redraws this folder's figures from a folder of logs; scripts/plot-folder.sh is the body and its
# header this script's usage (./plot.sh --help).
root=$(cd "$(dirname "$0")" && until [ -e .repro-root ]; do [ "$PWD" != / ] || exit; cd ..; done && pwd) ||
  { echo "$0: no .repro-root above this folder" >&2; exit 2; }
# shellcheck source=scripts/lib/root.sh
. "$root/scripts/lib/root.sh"
exec "$root/scripts/plot-folder.sh" "$here" "$@"
