#!/usr/bin/env bash
# scripts/install.sh with apt-get, dpkg-query and id replaced by stand-ins (nothing is
# installed): it must wait while another apt holds the lock, pass apt-get a lock timeout,
# and with --tests ask for clang and libclang-rt-14-dev (the libFuzzer tests need both), and for
# the linters' shellcheck, then put the pinned ruff into the lint venv (python stood in for too),
# as --lint does without apt; a pip that cannot reach PyPI fails it, saying so.
#   test_install.sh SOURCE_DIR
# check() evals its first argument: the single quotes keep its expansions for eval.
# shellcheck disable=SC2016
set -u
src=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
mkdir "$tmp/bin"
cat > "$tmp/bin/apt-get" <<'SH'
#!/bin/sh
echo "apt-get $*" >> "$FAKE_LOG"
n=$(grep -c " update" "$FAKE_LOG")
case "$*" in
  *update*) if [ "$n" -le 2 ]; then
      echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
      exit 100
    fi ;;
esac
exit 0
SH
printf '#!/bin/sh\nexit 1\n' > "$tmp/bin/dpkg-query"   # every package is missing
printf '#!/bin/sh\necho 0\n' > "$tmp/bin/id"            # root
# the lint venv's python: `-m venv DIR` makes DIR/bin/python (this script), whose `-m pip install
# ruff==V` puts beside it a ruff that says "ruff V" (with FAKE_NO_PYPI set, pip fails)
cat > "$tmp/bin/lintpy" <<'SH'
#!/bin/sh
echo "lintpy $*" >> "$FAKE_LOG"
case "$1 $2" in
  "-m venv") mkdir -p "$3/bin" && cp "$0" "$3/bin/python" ;;
  "-m pip")
    [ -z "${FAKE_NO_PYPI:-}" ] || { echo "ERROR: No matching distribution found for ruff" >&2; exit 1; }
    for a in "$@"; do case "$a" in ruff==*) v=${a#ruff==} ;; esac; done
    printf '#!/bin/sh\necho "ruff %s"\n' "$v" > "$(dirname "$0")/ruff"
    chmod +x "$(dirname "$0")/ruff" ;;
esac
SH
chmod +x "$tmp/bin/"*
export FAKE_LOG=$tmp/apt.log REPRO_APT_POLL=0.1 PATH=$tmp/bin:$PATH
export REPRO_LINT_PYTHON=$tmp/bin/lintpy REPRO_LINT_VENV=$tmp/venv

: > "$FAKE_LOG"
bash "$src/scripts/install.sh" > "$tmp/out" 2>&1
check '[ $? -eq 0 ]' "install.sh waits for the apt lists lock instead of failing ($(tail -2 "$tmp/out"))"
check '[ "$(grep -c " update" "$FAKE_LOG")" -eq 3 ]' "apt-get update retried until the lock is free"
check 'grep -q "waiting" "$tmp/out"' "says that it waits for another apt"
check 'grep " install " "$FAKE_LOG" | grep -q "DPkg::Lock::Timeout=600"' "apt-get install waits for the dpkg lock"

: > "$FAKE_LOG"
bash "$src/scripts/install.sh" --tests > "$tmp/out" 2>&1
check '[ $? -eq 0 ]' "install.sh --tests"
check 'grep " install " "$FAKE_LOG" | grep -qw clang' "--tests installs clang (libFuzzer tests)"
check 'grep " install " "$FAKE_LOG" | grep -qw libclang-rt-14-dev' "--tests installs libclang-rt-14-dev (-fsanitize=fuzzer)"
check 'grep " install " "$FAKE_LOG" | grep -qw shellcheck && grep " install " "$FAKE_LOG" | grep -qw python3-venv' "--tests installs shellcheck and python3-venv (scripts/lint.sh)"
ruff_pin=$(sed -n 's/^ruff_version=//p' "$src/scripts/install.sh")
check '[ -n "$ruff_pin" ] && grep -q "^lintpy -m venv $tmp/venv$" "$FAKE_LOG" && grep -q "^lintpy -m pip install .*ruff==$ruff_pin$" "$FAKE_LOG"' "--tests pip-installs the pinned ruff into the lint venv"
check '[ "$("$tmp/venv/bin/ruff" --version)" = "ruff $ruff_pin" ]' "the lint venv has ruff $ruff_pin"

# --lint: no apt; nothing to do when the venv has the pinned ruff; PyPI unreachable fails
: > "$FAKE_LOG"
bash "$src/scripts/install.sh" --lint > "$tmp/out" 2>&1
check '[ $? -eq 0 ] && grep -q "ruff $ruff_pin present" "$tmp/out" && [ ! -s "$FAKE_LOG" ]' "--lint with the pinned ruff there: nothing to do, no apt ($(tail -2 "$tmp/out"))"
: > "$FAKE_LOG"
FAKE_NO_PYPI=1 REPRO_LINT_VENV=$tmp/venv2 bash "$src/scripts/install.sh" --lint > "$tmp/out" 2>&1
check '[ $? -ne 0 ] && grep -q "could not pip-install ruff==$ruff_pin (is PyPI reachable?)" "$tmp/out" && ! grep -q apt-get "$FAKE_LOG"' "--lint fails, saying why, when pip cannot get ruff"

: > "$FAKE_LOG"
printf '#!/bin/sh\necho "E: Unable to fetch some archives" >&2; exit 100\n' > "$tmp/bin/apt-get"
REPRO_APT_WAIT=5 bash "$src/scripts/install.sh" > "$tmp/out" 2>&1
check '[ $? -ne 0 ] && grep -q "Unable to fetch" "$tmp/out"' "another apt failure is not retried and is shown"
# --peers: pip into REPRO_PYTHON (a stand-in recording its arguments), the pinned versions;
# refused without torch
cat > "$tmp/bin/fakepy" <<'SH'
#!/bin/sh
echo "py $*" >> "$FAKE_LOG"
case "$*" in *"import torch"*) [ -z "${FAKE_NO_TORCH:-}" ] ;; *) exit 0 ;; esac
SH
chmod +x "$tmp/bin/fakepy"
: > "$FAKE_LOG"
REPRO_PYTHON=$tmp/bin/fakepy bash "$src/scripts/install.sh" --peers > "$tmp/out" 2>&1
check '[ $? -eq 0 ]' "install.sh --peers ($(tail -2 "$tmp/out"))"
check 'grep -q "^py -m pip install tilelang==0.1.15 nvidia-cutlass-dsl==4.8.1$" "$FAKE_LOG"' "--peers pip-installs the pinned TileLang and CuTeDSL"
check '! grep -q "apt-get" "$FAKE_LOG"' "--peers runs no apt-get"
: > "$FAKE_LOG"
FAKE_NO_TORCH=1 REPRO_PYTHON=$tmp/bin/fakepy bash "$src/scripts/install.sh" --peers > "$tmp/out" 2>&1
check '[ $? -ne 0 ] && grep -q "no torch" "$tmp/out" && ! grep -q "pip install" "$FAKE_LOG"' "--peers refuses a python without torch"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
