# kernels/script_lib.sh: helpers sourced by the kernel scripts (bench.sh, gpu_check.sh, ab.sh,
# e2e/gpu_check.sh). The caller sets `prog` (its name in messages) before sourcing it.
# shellcheck shell=bash
: "${prog:?kernels/script_lib.sh: set prog before sourcing it}"

# usage: the caller's header comment (from line 2 to the first line that is not a comment)
usage() { awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"; }

# die_usage MESSAGE: a usage error, exit 2
die_usage() { echo "$prog: $* (see --help)" >&2; exit 2; }

# need_value OPTION "$@": the option has a value after it (call as `need_value "$@"`)
need_value() { [ $# -ge 2 ] || die_usage "$1 needs a value"; }

# need_int OPTION VALUE [MIN]: VALUE is an integer >= MIN (default 0)
need_int() {
  if ! [[ "$2" =~ ^[0-9]+$ ]] || [ "$2" -lt "${3:-0}" ]; then
    die_usage "$1: expected an integer >= ${3:-0}, got '$2'"
  fi
}

# workloads_of BIN: the workloads BIN lists with --list-workloads (one name a line, in the
# registry's order, kernels/attention/registry/workloads.def), printed on one line. Exits 1 with the reason when
# BIN fails, lists none, or prints something that is not a workload name. Use it as
# `workloads=$(workloads_of "$bin") || exit 1`.
workloads_of() {
  local list rc name
  list=$("$1" --list-workloads 2>&1)
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "$prog: '$1 --list-workloads' failed (exit $rc): $(echo "$list" | tail -1)" >&2
    exit 1
  fi
  for name in $list; do
    [[ "$name" =~ ^[a-z][a-z0-9_]*$ ]] || {
      echo "$prog: '$1 --list-workloads' printed '$name', not a workload name" >&2
      exit 1
    }
  done
  if [ -z "${list//[[:space:]]/}" ]; then
    echo "$prog: '$1 --list-workloads' listed no workload" >&2
    exit 1
  fi
  # shellcheck disable=SC2086  # one line of names
  echo $list
}

# Value of key in the last result line of a log; cells that did not run say why.
#   ok -> avg_ms (or the key asked), oom -> OOM, unsupported -> NS, timeout -> TLE,
#   failed check (exit 5) -> FAIL, other errors -> ERR, no log -> "-"
cell() { # log key
  local log=$1 key=$2
  [ -f "$log" ] || { echo "-"; return; }
  awk -v key="$key" '
    /^result / { line = $0 }
    END {
      if (line == "") { print "ERR"; exit }
      n = split(line, f, " "); st = ""; v = ""
      for (i = 2; i <= n; i++) { eq = index(f[i], "="); if (!eq) continue
        k = substr(f[i], 1, eq - 1); val = substr(f[i], eq + 1)
        if (k == "status") st = val; if (k == key) v = val }
      if (st == "ok") print (v == "" ? "?" : v)
      else if (st == "oom") print "OOM"
      else if (st == "unsupported") print "NS"
      else if (st == "timeout") print "TLE"
      else if (line ~ /check failed/) print "FAIL"
      else print "ERR"
    }' "$log"
}
