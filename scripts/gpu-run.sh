#!/usr/bin/env bash
# Runs experiment matrices on this machine's GPUs with the local executor (FOLDER/run.sh
# --local: one cell per GPU at a time, every GPU it sees), then packs each run folder
# (manifest, logs, stderr) and the folder's ae_logs link under $OUT for the trip home. Builds
# nothing: build/bin comes with the working tree.
#   scripts/gpu-run.sh [--budget SECONDS] [--resume [--widen]] [--only K=V[,K=V]]
#                      [--exclude K=V[,K=V]] [--dry-run] TARGET...
#   TARGET: FOLDER[:EXPERIMENT][@CASES], FOLDER a figure (fig12, fig13, fig14) or a study
#   (h2o-diag, kron-layer, sdpa-scale, tilebench: studies/NAME), EXPERIMENT one experiment of it
#   (run.sh --only experiment=EXPERIMENT), CASES a case list (run.sh --cases CASES), e.g.
#   fig12:kernel, tilebench@nsa_only.
# A target is started only while the budget (default 540 s from the start) has at least 60 s
# left, and is stopped when it runs out. --resume continues each folder's current run (the run
# its ae_logs points to: bring the packed runs/<time>/ folder and ae_logs back into the folder
# first) with only the cells that have no good log; nothing is deleted (a study with two case
# lists runs them one after the other: only the last one's run is current). --only and
# --exclude narrow every target's cells as run.sh's do (an --only joins a target's experiment
# with AND, so that fig12:kernel --only system=tvm-ms is the kernel experiment's tvm-ms cells);
# --widen (with --resume) adds the --only's cells to the run. They let cells of one system run
# apart, e.g. the quick ones first and a long tuning alone. --dry-run prints each target's
# command and runs nothing.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
budget=540
resume=0
dry=0
widen=0
only=""
excludes=()
out=${OUT:-$root/gpu-run-out}
targets=()
die() { echo "gpu-run.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) budget=${2:?--budget needs seconds}; shift ;;
    --resume) resume=1 ;;
    --widen) widen=1 ;;
    --only|--exclude)
      [[ "${2:-}" =~ ^[A-Za-z0-9_.-]+!?=[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+!?=[A-Za-z0-9_.-]+)*$ ]] ||
        die "$1: expected K=V[,K=V...] (K!=V too) of names, got '${2:-}'"
      if [ "$1" = --only ]; then
        [ -z "$only" ] || die "--only: give one (its pairs joined with commas: AND)"
        only=$2
      else excludes+=(--exclude "$2")
      fi
      shift ;;
    --dry-run) dry=1 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) die "unknown option '$1'" ;;
    *) [[ "$1" =~ ^[a-z0-9-]+(:[A-Za-z0-9_.-]+)?(@[A-Za-z0-9_.-]+)?$ ]] ||
         die "target '$1': expected FOLDER[:EXPERIMENT][@CASES]"
       targets+=("$1") ;;
  esac
  shift
done
[[ "$budget" =~ ^[0-9]+$ ]] || die "--budget: expected seconds, got '$budget'"
[ "$widen" = 0 ] || [ "$resume" = 1 ] || die "--widen adds cells to a run: use it with --resume"
[ ${#targets[@]} -gt 0 ] || die "no target (see --help)"

# A target's folder, relative to the root: figNN or studies/NAME, whichever has a run.sh.
folder_of() {
  local name=$1
  if [[ "$name" =~ ^fig[0-9]+$ ]] && [ -x "$root/$name/run.sh" ]; then echo "$name"
  elif [ -x "$root/studies/$name/run.sh" ]; then echo "studies/$name"
  else return 1
  fi
}
for target in "${targets[@]}"; do
  name=${target%%[:@]*}
  folder_of "$name" >/dev/null || die "target '$target': no figure or study '$name' with a run.sh"
done

[ "$dry" = 1 ] || mkdir -p "$out"
t0=$(date +%s)
[ "$dry" = 1 ] || nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"

for target in "${targets[@]}"; do
  name=${target%%[:@]*}
  folder=$(folder_of "$name")
  exp="" cases=""
  rest=${target#"$name"}
  if [[ "$rest" == @* ]]; then cases=${rest#@}; else
    exp=${rest#:}; exp=${exp%%@*}
    [[ "$rest" == *@* ]] && cases=${rest#*@}
  fi
  args=(--local --detach)
  filter=${exp:+experiment=$exp}
  [ -n "$only" ] && filter=${filter:+$filter,}$only
  [ -n "$filter" ] && args+=(--only "$filter")
  args+=(${excludes[@]+"${excludes[@]}"})
  [ -n "$cases" ] && args+=(--cases "$cases")
  [ "$resume" = 1 ] && args+=(--resume)
  [ "$widen" = 1 ] && args+=(--widen)
  tag=${target//[:@\/]/-}
  if [ "$dry" = 1 ]; then
    echo "$target: $folder/run.sh ${args[*]}"
    continue
  fi
  left=$((budget - ($(date +%s) - t0)))
  if [ "$left" -lt 60 ]; then
    echo "gpu-run.sh: $target skipped: ${left}s of the budget left"
    continue
  fi
  echo "== $target (budget left ${left}s)"
  timeout --kill-after=30 "$left" "$root/$folder/run.sh" "${args[@]}" > "$out/$tag.runner.txt" 2>&1
  echo "repro-run exit status: $?"
  run_dir=$(dirname "$(readlink -f "$root/$folder/ae_logs")")
  "$root/build/bin/repro-run" status "$run_dir" 2>&1 | tail -n 15
  tar czf "$out/$tag.tgz" -C "$root/$folder" "runs/$(basename "$run_dir")" ae_logs
done
[ "$dry" = 1 ] || echo "gpu-run.sh: done in $(( $(date +%s) - t0 ))s; run folders packed in $out"
