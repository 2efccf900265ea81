#!/usr/bin/env bash
# The body of every figNN/run_single.sh and studies/NAME/run_single.sh: reruns one cell (or any
# filter) into the current run.
#   run-single.sh FIGDIR "AXIS1 AXIS2 ..." [VALUE1 [VALUE2 ...]] [key=value ...] [repro-run options]
# Positional values fill the figure's axes in the given order (e.g. fig12: experiment
# workload system), key=value words add any other axis or case key (m=4096, seqlen=1024);
# a value outside an axis's list that its range allows (diag_k=3) is an ad-hoc cell, which
# joins the current run (runner/README.md, "Ad-hoc values"); the old logs move to attempts/. Options pass through to repro-run, with their values
# (`--only system=fused` or `--only=system=fused`, `--cases nsa_only`); a --only of the user's
# narrows the positional words (both must hold), several --only are still OR. The run keeps
# its case lists and its cluster file: without --cases or -c, repro-run reruns in the lists and
# with the cluster file the current run was made with. Without a current run it stops.
# --help: the folder's run_single.sh header (its usage and examples), then the rules below.
set -euo pipefail
# shellcheck source=scripts/lib/root.sh
. "$(dirname "$0")/lib/root.sh"
fig=$1
read -r -a axes <<<"$2"
shift 2
if repro_wants_help "$@"; then
  if [ -f "$fig/run_single.sh" ]; then repro_usage "$fig/run_single.sh"; fi
  printf -v listed '%s, ' "${axes[@]}"
  cat <<EOF
The words fill the axes ${listed%, } in that order (the leading ones at least);
key=value names any other axis or case key. repro-run's options pass through with their
values (--dry-run, --local, -c FILE, --device LABEL, --only K=V, --cases NAME, ...). The
cells run again in the current run (the one ae_logs points to), in its case lists and with
its cluster file unless given: the new logs go to its logs/, the old ones move to its
attempts/. Without a current run it stops (exit 2; ./run.sh starts one). Needs the build, as
./run.sh does.
  ./run_single.sh -h | --help   this text (needs no build, writes nothing)
EOF
  exit 0
fi
# repro-run's options that take a value (the next word, unless written --opt=value)
takes_value='^(-c|--cluster|--only|--device|--run|--poll|--bin|--python|--cases|-j)$'
conds=() opts=() onlys=() i=0
while [ $# -gt 0 ]; do
  a=$1
  shift
  case "$a" in
    --only=*) onlys+=("${a#--only=}") ;;
    --only)
      [ $# -gt 0 ] || { echo "run_single.sh: --only needs key=value[,key=value...]" >&2; exit 2; }
      onlys+=("$1"); shift ;;
    -*)
      opts+=("$a")
      if [[ "$a" =~ $takes_value ]]; then
        [ $# -gt 0 ] || { echo "run_single.sh: $a needs a value" >&2; exit 2; }
        opts+=("$1"); shift
      fi ;;
    *=*) conds+=("$a") ;;
    *)
      if [ $i -lt ${#axes[@]} ]; then
        conds+=("${axes[$i]}=$a"); i=$((i + 1))
      else
        echo "run_single.sh: too many values: the axes are ${axes[*]}" >&2; exit 2
      fi ;;
  esac
done
if [ ${#conds[@]} -eq 0 ] && [ ${#onlys[@]} -eq 0 ]; then
  echo "usage: run_single.sh ${axes[*]} (leading ones at least) [key=value ...] [options]" >&2
  echo "  key=value: any other axis or case key of the experiment file (e.g. m=4096)" >&2
  exit 2
fi
# the cells go into the current run (or --run DIR): without one there is nothing to rerun
has_run=0 dry=0
for a in ${opts[@]+"${opts[@]}"}; do
  case "$a" in --run|--run=*) has_run=1 ;; -n|--dry-run) dry=1 ;; esac
done
if [ $has_run = 0 ] && [ $dry = 0 ] && [ ! -L "$fig/ae_logs" ] && [ ! -e "$fig/ae_logs" ]; then
  echo "run_single.sh: $(cd "$fig" && pwd) has no current run (no ae_logs): it reruns cells of the current run; start one with ./run.sh" >&2
  exit 2
fi
pos=$(IFS=,; echo "${conds[*]-}")
filters=()
if [ ${#onlys[@]} -eq 0 ]; then
  filters+=(--only "$pos")
else
  for f in "${onlys[@]}"; do filters+=(--only "${pos:+$pos,}$f"); done
fi
exec "$(dirname "$0")/run-figure.sh" "$fig" --rerun "${filters[@]}" ${opts[@]+"${opts[@]}"}
