#!/usr/bin/env bash
# --help and -h of every command, in a fresh clone (the tree's tracked files copied to a
# temporary folder: no build): ./plot.sh and each figure's and study's run.sh, run_single.sh,
# plot.sh and gpu_run.sh, run from their folder, exit 0 and print a usage on stdout (naming the
# script and its options), nothing on stderr, no build instruction or error in place of it, and
# write nothing (the clone's listing of paths, sizes and times is the same after);
# kernels/kron/torch_ext/test.py does so where torch cannot be imported (a torch package that
# raises ImportError comes first on PYTHONPATH), its usage then one line saying so, and without
# --help it exits 1 the same way, never with a traceback. With the binaries, each command that
# `repro-plot --help` and `repro-run --help` list (draw, table, ...; run, check, status, ...)
# answers `COMMAND --help` and `COMMAND -h` with its usage (exit 0), in an empty folder that
# stays empty.
#   test_help.sh SOURCE_DIR [REPRO_PLOT REPRO_RUN]
set -u
src=$(cd "$1" && pwd) plot_bin=${2:-} run_bin=${3:-}
source "$(dirname "$0")/fresh_clone.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
# no variable that points the wrappers at a build or an output folder
unset REPRO_PLOT_BIN REPRO_RUN REPRO_BUILD_DIR REPRO_CLUSTER OUT
clone=$tmp/clone
fresh_clone "$src" "$clone"
[ -x "$clone/plot.sh" ] || { echo "FAIL: the fresh clone has no plot.sh"; exit 1; }
if [ -e "$clone/build" ] || [ -e "$clone/build-plot" ]; then bad "the fresh clone has a build folder"; fi

# expect_help LABEL RC OUT ERR NAME [any]: exit 0, a usage on stdout naming NAME and (unless
# "any": a command without options) an --option, nothing on stderr, no build instruction or error
expect_help() {
  local label=$1 rc=$2 out=$3 err=$4 name=$5 why=
  [ "$rc" -eq 0 ] || why="exit $rc"
  grep -qF -- "$name" "$out" || why="${why:+$why, }stdout does not name $name"
  [ "${6:-}" = any ] || grep -qE -- '(^|[ [|(])--[a-z]' "$out" ||
    why="${why:+$why, }stdout names no --option"
  [ ! -s "$err" ] || why="${why:+$why, }stderr: $(head -c 200 "$err")"
  if grep -qiE 'not built|build it|scripts/build\.sh first|unknown (option|argument)|needs a value|Traceback' "$out" "$err"; then
    why="${why:+$why, }an error or build instruction in place of the usage"
  fi
  if [ -n "$why" ]; then bad "$label: $why"; else ok; fi
}

# the wrappers: ./plot.sh, then each experiment folder's
wrappers=(plot.sh)
for dir in "$clone"/fig*/ "$clone"/studies/*/; do
  for w in run.sh run_single.sh plot.sh gpu_run.sh; do
    [ -f "$dir$w" ] && wrappers+=("${dir#"$clone"/}$w")
  done
done
for w in fig12/run.sh fig12/run_single.sh fig12/plot.sh studies/kron-layer/run.sh \
  studies/tilebench/plot.sh studies/sdpa-scale/gpu_run.sh; do
  [[ " ${wrappers[*]} " == *" $w "* ]] || bad "no $w in the clone"
done
for w in "${wrappers[@]}"; do
  for flag in --help -h; do
    before=$(listing "$clone")
    (cd "$clone/$(dirname "$w")" && timeout 120 "./$(basename "$w")" "$flag") >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    expect_help "$w $flag" "$rc" "$tmp/out" "$tmp/err" "$(basename "$w")"
    if [ "$(listing "$clone")" != "$before" ]; then
      bad "$w $flag wrote in the tree: $(diff <(echo "$before") <(listing "$clone") | grep '^>' | head -3 | tr '\n' ' ')"
    else
      ok
    fi
  done
done
# an option before --help, as a user types it: the usage all the same
(cd "$clone/fig12" && ./run.sh --local --help) >"$tmp/out" 2>"$tmp/err" </dev/null
expect_help "fig12/run.sh --local --help" $? "$tmp/out" "$tmp/err" run.sh
(cd "$clone" && ./plot.sh ./backup_logs --out "$tmp/figs" --help) >"$tmp/out" 2>"$tmp/err" </dev/null
expect_help "./plot.sh ROOT --out DIR --help" $? "$tmp/out" "$tmp/err" plot.sh
if [ -e "$tmp/figs" ]; then bad "./plot.sh ROOT --out DIR --help wrote $tmp/figs"; else ok; fi

# kernels/kron/torch_ext/test.py where torch is not importable
py=python3
if command -v "$py" >/dev/null; then
  mkdir -p "$tmp/no-torch/torch"
  echo 'raise ImportError("No module named torch (hidden by test_help.sh)")' >"$tmp/no-torch/torch/__init__.py"
  t=kernels/kron/torch_ext/test.py
  [ -f "$clone/$t" ] || bad "no $t in the clone"
  for flag in --help -h; do
    before=$(listing "$clone")
    (cd "$clone/$(dirname "$t")" && PYTHONPATH=$tmp/no-torch PYTHONDONTWRITEBYTECODE=1 \
      "$py" test.py "$flag") >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    why=
    [ "$rc" -eq 0 ] || why="exit $rc"
    head -1 "$tmp/out" | grep -q '^usage: test.py' || why="${why:+$why, }stdout does not begin with its usage"
    grep -q -- '--implementation' "$tmp/out" || why="${why:+$why, }the usage names no --implementation"
    ! grep -q Traceback "$tmp/out" "$tmp/err" || why="${why:+$why, }a traceback"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'torch is not importable' "$tmp/err" ||
      why="${why:+$why, }stderr is not one line saying torch is missing: $(head -c 300 "$tmp/err")"
    if [ -n "$why" ]; then bad "$t $flag without torch: $why"; else ok; fi
    if [ "$(listing "$clone")" = "$before" ]; then ok; else bad "$t $flag wrote in the tree"; fi
  done
  (cd "$clone/$(dirname "$t")" && PYTHONPATH=$tmp/no-torch PYTHONDONTWRITEBYTECODE=1 \
    "$py" test.py --dtype f 16 32 32 check) >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  why=
  [ "$rc" -eq 1 ] || why="exit $rc, not 1"
  head -1 "$tmp/err" | grep -q '^usage: test.py' || why="${why:+$why, }stderr does not begin with its usage"
  [ "$(grep -c 'torch is not importable' "$tmp/err")" -eq 1 ] || why="${why:+$why, }no line saying torch is missing"
  ! grep -q Traceback "$tmp/out" "$tmp/err" || why="${why:+$why, }a traceback"
  if [ -n "$why" ]; then bad "$t check without torch: $why"; else ok; fi
else
  bad "no $py to run test.py with"
fi

# the binaries' commands, each as `--help` lists it, in an empty folder
# commands BIN: the command names of BIN --help's usage lines ("[run]" is run)
commands() { "$1" --help | sed -nE "s/^ *(usage:)? *${1##*/} \[?([a-z]+)\]?( .*)?$/\2/p" | sort -u; }
for pair in "repro-plot:$plot_bin:draw table merge compare report provenance render" \
  "repro-run:$run_bin:run check status cancel finish"; do
  IFS=: read -r name bin want <<<"$pair"
  if [ -z "$bin" ]; then
    echo "note: no $name given: its commands' --help not checked"
    continue
  fi
  for flag in --help -h; do
    "$bin" "$flag" >"$tmp/out" 2>"$tmp/err"
    expect_help "$name $flag" $? "$tmp/out" "$tmp/err" "$name"
  done
  have=$(commands "$bin" | tr '\n' ' ')
  for c in $want; do [[ " $have " == *" $c "* ]] || bad "$name --help lists no command $c (lists: $have)"; done
  mkdir -p "$tmp/empty"
  for c in $have; do
    for flag in --help -h; do
      (cd "$tmp/empty" && "$bin" "$c" "$flag") >"$tmp/out" 2>"$tmp/err" </dev/null
      rc=$?
      expect_help "$name $c $flag" "$rc" "$tmp/out" "$tmp/err" "$name" any
      if ! grep -qE "^usage: $name \[?$c\]?( |$)" "$tmp/out"; then
        bad "$name $c $flag: its usage does not begin 'usage: $name $c'"
      fi
      if [ -n "$(find "$tmp/empty" -mindepth 1)" ]; then
        bad "$name $c $flag wrote $(find "$tmp/empty" -mindepth 1 | head -3 | tr '\n' ' ')"
      fi
    done
  done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
