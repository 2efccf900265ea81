#!/usr/bin/env bash
# Lints the kit's shell scripts and Python (CI: scripts/test.sh runs it after the format check).
#   scripts/lint.sh            both
#   scripts/lint.sh --shell    shellcheck on every shell script: the tracked *.sh files and the
#                              files without an extension whose first line is a bash or sh
#                              shebang (run.sh, plot.sh, .ci/run, ...); settings in .shellcheckrc
#   scripts/lint.sh --python   ruff check on every tracked *.py (scripts/peers, tests/peers);
#                              settings in ruff.toml. The ruff is the pinned one that
#                              `scripts/install.sh --lint` puts in REPRO_LINT_VENV (default
#                              build/lint-venv), else the one on PATH.
# Exits 1 when a finding is left or a linter is missing (never skips).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mode=${1:-}
case "$mode" in --shell|--python|"") ;; *) echo "usage: $0 [--shell | --python]" >&2; exit 2 ;; esac

# The tree's files: tracked and new ones git does not ignore (every file where the tree is no git
# checkout), without symbolic links.
files() {
  local f
  { git ls-files --cached --others --exclude-standard 2>/dev/null || find . -type f ! -path './.git/*' ! -path './build*' | sed 's|^\./||'; } |
    while IFS= read -r f; do [ -f "$f" ] && [ ! -L "$f" ] && printf '%s\n' "$f"; done
}

rc=0
if [ "$mode" != --python ]; then
  command -v shellcheck >/dev/null ||
    { echo "lint.sh: shellcheck not found (scripts/install.sh --tests installs it)" >&2; exit 1; }
  scripts=()
  while IFS= read -r f; do
    case "${f##*/}" in
      *.sh) scripts+=("$f") ;;
      *.*) ;;
      *) IFS= read -r first <"$f" || true
         if [[ "$first" =~ ^#!.*[/\ ](bash|sh)([[:space:]]|$) ]]; then scripts+=("$f"); fi ;;
    esac
  done < <(files)
  if shellcheck "${scripts[@]}"; then
    echo "lint.sh: shellcheck $(shellcheck --version | awk '/^version:/ {print $2}'): ${#scripts[@]} scripts clean"
  else
    echo "lint.sh: shellcheck found problems (above)" >&2; rc=1
  fi
fi

if [ "$mode" != --shell ]; then
  venv=${REPRO_LINT_VENV:-${REPRO_BUILD_DIR:-$root/build}/lint-venv}
  if [ -x "$venv/bin/ruff" ]; then ruff=$venv/bin/ruff
  elif command -v ruff >/dev/null; then ruff=ruff
  else echo "lint.sh: ruff not found: scripts/install.sh --lint installs it (PyPI must be reachable)" >&2; exit 1
  fi
  mapfile -t py < <(files | grep '\.py$')
  if "$ruff" check --no-cache --quiet "${py[@]}"; then
    echo "lint.sh: $("$ruff" --version): ${#py[@]} Python files clean"
  else
    echo "lint.sh: ruff found problems (above)" >&2; rc=1
  fi
fi
exit $rc
