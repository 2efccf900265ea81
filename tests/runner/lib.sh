# shellcheck shell=bash
# Shared helpers of the runner's shell tests (sourced). Each test counts its checks and ends
# with "N passed, N failed"; exit 77 means skipped (CTest SKIP_RETURN_CODE).
set -u
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
check() { local what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
check_eq() { if [ "$2" = "$3" ]; then ok; else bad "$1: expected '$3', got '$2'"; fi; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" = 0 ]; exit $?; }
skip() { echo "SKIP: $*"; exit 77; }
# How many of the paths exist: `count_paths DIR/*` counts DIR's entries (`ls DIR | wc -l`);
# a glob that matched nothing counts 0.
count_paths() {
  local p n=0
  for p in "$@"; do if [ -e "$p" ] || [ -L "$p" ]; then n=$((n + 1)); fi; done
  echo "$n"
}

# A scratch repository for a study or nested-folder test: WORK/repo marked with .repro-root,
# the source folders linked from $src (the sourcing test sets it), build/ linked when BUILD
# is given, and the experiment folder WORK/repo/SUBDIR created. Sets work, repo and study.
#   scratch_repo WORK SUBDIR [BUILD]
scratch_repo() {
  rm -rf "$1"; mkdir -p "$1"
  work=$(cd "$1" && pwd)
  repo=$work/repo study=$work/repo/$2
  mkdir -p "$study"
  touch "$repo/.repro-root"
  local d
  for d in common scripts plot tests clusters kernels; do ln -s "${src:?}/$d" "$repo/$d"; done
  if [ -n "${3:-}" ]; then ln -s "$3" "$repo/build"; fi
}

# The last result line's value of KEY in a log.
last_result() { grep '^result ' "$1" 2>/dev/null | tail -1 | grep -o "$2=[^ ]*" | head -1 | cut -d= -f2; }

# A figure folder for tests: experiment.yaml with the stand-in program. The good cells take
# a second, so a runner killed right after starting them leaves them running (orphans).
#   make_matrix DIR TIME_LIMIT HANG_SECONDS SLOW_SECONDS RQ_DEVICE
make_matrix() {
  local dir=$1 limit=$2 hang=$3 slow=$4 rqdev=$5 standin
  standin=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/standin.sh
  mkdir -p "$dir"
  cat >"$dir/experiment.yaml" <<EOF2
# test matrix: the stand-in program (tests/runner/standin.sh), not the kernels
figure: testfig
defaults: {count: "$dir/count", standin: "$standin"}
systems:
  good:  {command: "{standin} --workload {workload} --system {system} --sleep 1 --count {count}"}
  bad:   {command: "{standin} --workload {workload} --system {system} --mode fail --count {count}"}
  crash: {command: "{standin} --workload {workload} --system {system} --mode crash --count {count}"}
  hang:  {command: "{standin} --workload {workload} --system {system} --mode hang --sleep $hang --count {count}"}
  slow:  {command: "{standin} --workload {workload} --system {system} --sleep $slow --count {count}"}
experiments:
  main:
    log: "{experiment}.{device}.{workload}.{system}.log"
    time_limit: 300
    axes: {device: [h100], workload: [a, b], system: [good, bad, crash]}
  tle:
    log: "{experiment}.{device}.{workload}.{system}.log"
    time_limit: $limit
    axes: {device: [h100], workload: [z], system: [hang]}
  rq:
    log: "{experiment}.{device}.{workload}.{system}.log"
    time_limit: 300
    axes: {device: [$rqdev], workload: [r], system: [slow]}
EOF2
}

# Checks the final states every executor must reach on that matrix.
#   check_matrix_logs LOGS_DIR RQ_DEVICE
check_matrix_logs() {
  local logs=$1 rqdev=$2 n
  n=$(count_paths "$logs"/*)
  check_eq "number of logs" "$n" 8
  for w in a b; do
    check_eq "main $w good" "$(last_result "$logs/main.h100.$w.good.log" status)" ok
    check_eq "main $w bad (its own result line)" "$(last_result "$logs/main.h100.$w.bad.log" status)" error
    check "main $w bad keeps the program's line" grep -q 'reason="stand-in asked to fail"' "$logs/main.h100.$w.bad.log"
    check_eq "main $w crash" "$(last_result "$logs/main.h100.$w.crash.log" status)" error
    check_eq "main $w crash source" "$(last_result "$logs/main.h100.$w.crash.log" source)" runner
    check_eq "main $w crash exit" "$(last_result "$logs/main.h100.$w.crash.log" exit)" 7:0
  done
  check_eq "tle status" "$(last_result "$logs/tle.h100.z.hang.log" status)" timeout
  check_eq "tle state" "$(last_result "$logs/tle.h100.z.hang.log" state)" TIMEOUT
  check "tle log keeps the program's output" grep -q '^config workload=z system=hang' "$logs/tle.h100.z.hang.log"
  check_eq "rq status" "$(last_result "$logs/rq.$rqdev.r.slow.log" status)" ok
}

# The run folder ae_logs points to (physical path).
current_run() { (cd -P ae_logs/.. && pwd); }

# How often each cell started, from the stand-in's count file: "<cell> <times>" lines.
starts() { awk '{print $2}' "$1" | sort | uniq -c | awk '{print $2, $1}'; }

slurm_reachable() { command -v sinfo >/dev/null && timeout 10 sinfo -h -o %P 2>/dev/null | grep -q .; }

# Skips unless the test cluster (partitions h100 and a100) answers; root starts it.
need_test_cluster() {
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  if ! slurm_reachable; then
    if [ "$(id -u)" = 0 ] && [ -x "$root/scripts/slurm-local.sh" ]; then
      "$root/scripts/slurm-local.sh" start >/dev/null 2>&1 || skip "could not start the local Slurm cluster"
    else
      skip "no Slurm cluster reachable (scripts/slurm-local.sh start, as root, makes one)"
    fi
  fi
  local parts
  parts=$(sinfo -h -o %P 2>/dev/null | tr -d '*' | tr '\n' ' ')
  case " $parts " in *" h100 "*) ;; *) skip "no partition h100: not the test cluster" ;; esac
  case " $parts " in *" a100 "*) ;; *) skip "no partition a100: not the test cluster" ;; esac
}

# The job ids (journaled `job` records) and job names (`submit` records) of run manifests.
jobids() { grep -h '^job ' "$@" 2>/dev/null | grep -o 'jobid=[0-9]*' | cut -d= -f2; }
jobnames() { grep '^submit ' "$1" | grep -o 'jobname=[^ ]*' | cut -d= -f2; }

# A slow controller for the Slurm tests: WORK/slowbin/sbatch sleeps $SLOW_SBATCH_S seconds
# (default 4), then runs the real sbatch; each one's pid goes to WORK/slowbin/started.
#   make_slow_sbatch WORK
make_slow_sbatch() {
  local real
  real=$(command -v sbatch)
  mkdir -p "$1/slowbin"
  cat >"$1/slowbin/sbatch" <<EOF2
#!/bin/bash
echo "\$\$" >>"$1/slowbin/started"
sleep "\${SLOW_SBATCH_S:-4}"
exec "$real" "\$@"
EOF2
  chmod +x "$1/slowbin/sbatch"
}

# Cancels the jobs the runs of these manifests journaled or named, and the jobs given by id
# (EXTRA: a space-separated list), then ends the slow sbatches of WORK still running.
#   cancel_test_jobs WORK "EXTRA" MANIFEST...
cancel_test_jobs() {
  local work=$1 j=$2 n p
  shift 2
  j="$j $(jobids "$@")"
  while read -r n; do
    [ -n "$n" ] && j="$j $(squeue -h -n "$n" -o %F 2>/dev/null)"
  done < <(grep -h '^submit ' "$@" 2>/dev/null | grep -o 'jobname=[^ ]*' | cut -d= -f2)
  # shellcheck disable=SC2086 # a list of ids
  [ -n "${j// /}" ] && scancel $j 2>/dev/null
  while read -r p; do grep -qs slowbin "/proc/$p/cmdline" && kill "$p"; done <"$work/slowbin/started" 2>/dev/null
  return 0
}
