#!/usr/bin/env bash
# Formats the C, C++ and CUDA sources with .clang-format, or checks that they are formatted.
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   list the files that differ and exit 1 (CI)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mode=${1:-}
case "$mode" in --check|"") ;; *) echo "usage: $0 [--check]" >&2; exit 2 ;; esac
command -v clang-format >/dev/null || { echo "format.sh: clang-format not found (scripts/install.sh --tests)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cu' '*.cuh' 2>/dev/null || find . -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh')
if [ "$mode" = --check ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format.sh: ${#bad[@]} file(s) not formatted (run scripts/format.sh): ${bad[*]}" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files formatted"
else
  clang-format -i "${files[@]}"
fi
