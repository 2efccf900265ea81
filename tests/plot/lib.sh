# shellcheck shell=bash
# Shared by the plotter's shell tests (sourced): a scratch folder $tmp removed at exit, and the
# counted checks. check() evals its first argument, so the tests quote its expansions in single
# quotes for eval. End a test with `finish`.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit
}
