#!/usr/bin/env bash
# tvm_gpu_check.sh: the tvm and tvm-ms peers (tvm_backend.py) on the GPU machine, through the
# figures' own runner and experiment files: fig12's kernel cells and fig13's cells of tvm (TVM's
# default schedules), and fig12's attn cell of tvm-ms (MetaSchedule, fig12's tvm_trials budget),
# tuned and then rerun (--rerun): the rerun finds the tuning database beside the run's logs and
# tunes nothing (tune_reused=1). Builds nothing. On an H100 (2026-11-27) the tuning of the
# attn cell (128 trials, XGBoost) took 7 minutes and the rerun 1 (results/tvm/); a dlight cell
# compiles in 63-76 s (compile_s in fig12/backup_logs/kernel.h100.*.tvm.log).
#
#   OUT=/some/dir scripts/peers/tvm_gpu_check.sh
#
# It needs the runner (REPRO_BUILD_DIR/bin/repro-run, default build/; nothing else of the build)
# and TVM's wheels in REPRO_TVM_PATH (default /tmp/site). The GPU machine has no network; the
# wheels are made where there is one, in the repository root (two folders of TVM, MetaSchedule's
# psutil and cloudpickle; one more, optional, of the XGBoost cost model, else tvm-ms tunes with
# the random one):
#   printf '/.gw-tvm/\n/.gw-tvm-xgb/\n' >> .git/info/exclude
#   ../shared/gpu-wheels/fetch.sh .gw-tvm $(python3 scripts/peers/tvm_backend.py pins required)
#   ../shared/gpu-wheels/fetch.sh .gw-tvm-xgb $(python3 scripts/peers/tvm_backend.py pins cost-model)
# and installed here once per folder, in order: bash .gw-tvm/N/install.sh .gw-tvm/N (into
# /tmp/site; a /tmp/site that holds TileLang's wheels, whose apache-tvm-ffi is older, will not do).
#
# Steps (STEPS, default "fig12 tune rerun fig13"), in this order, each a runner under `timeout`
# with what is left of BUDGET_S (default 480 s: a 600-s call less the last wheels' install); a
# step that would start with less than MIN_STEP_S (default 30 s) left is skipped, and says so
# (run it again in a call of its own: STEPS=fig13, or STEPS="tune rerun"):
#   fig12  ./run.sh --local --only system=tvm          (fig12: every kernel workload)
#   tune   fig12 --resume --widen --only system=tvm-ms,workload=attn   (into step fig12's run;
#          without that step a new run)
#   rerun  fig12 --rerun --only system=tvm-ms,workload=attn
#   fig13  ./run.sh --local --only system=tvm          (fig13: every length)
# CLUSTER=FILE replaces clusters/generic.yaml, DEVICE=NAME the device nvidia-smi names (a CPU
# run: CLUSTER=clusters/local-test.yaml DEVICE=h100).
# Output under $OUT/tvm: env.txt (versions), fig12/ and fig13/: logs/ (the run's logs; the
# rerun's predecessor in attempts/), err/ (each cell's stderr), runner.txt, and fig12's
# tvm-ms/ (the tuning database); table.txt (log_table.py) and summary.txt, also on stdout.
# Exits 1 when a step failed or a log is not ok.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${REPRO_BUILD_DIR:-$root/build}
out=${OUT:?set OUT to the output folder}/tvm
budget=${BUDGET_S:-480}
min_step=${MIN_STEP_S:-30}
steps=${STEPS:-fig12 tune rerun fig13}
py=${REPRO_PYTHON:-python3}
export REPRO_RUN=${REPRO_RUN:-$build/bin/repro-run}
export REPRO_TVM_PATH=${REPRO_TVM_PATH:-/tmp/site}
# the runner's cells and MetaSchedule's workers import tvm from there too
export PYTHONPATH=$REPRO_TVM_PATH${PYTHONPATH:+:$PYTHONPATH}
[ -x "$REPRO_RUN" ] || { echo "tvm_gpu_check.sh: $REPRO_RUN is not built (REPRO_BUILD_DIR)" >&2; exit 2; }
mkdir -p "$out" || exit 2
start=$(date +%s)
left() { echo $(( budget - ($(date +%s) - start) )); }

{
  echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "nvcc $(command -v nvcc || echo none) CUDA_PATH=${CUDA_PATH:-}"
  "$py" - <<'PY' 2>&1
import importlib, importlib.metadata as md, sys
print("python", sys.version.split()[0])
for dist in ("torch", "apache-tvm", "apache-tvm-ffi", "cuda-bindings", "psutil", "cloudpickle",
             "xgboost-cpu", "scipy", "numpy", "ml_dtypes"):
    try:
        print(dist, md.version(dist))
    except Exception as e:
        print(dist, "missing:", type(e).__name__)
try:
    import torch
    import tvm
    print("tvm", tvm.__version__, tvm.__file__, "cuda(0).exist", tvm.cuda(0).exist)
except Exception as e:
    print("tvm import failed:", type(e).__name__, e)
PY
} >"$out/env.txt"
cat "$out/env.txt"

status=0
: >"$out/summary.txt"
say() { echo "$*" | tee -a "$out/summary.txt"; }

# step NAME FIG ARGS...: ./run.sh of FIG with ARGS under what is left of the budget
step() {
  local name=$1 fig=$2 rc=0 t
  shift 2
  case " $steps " in *" $name "*) ;; *) return 0 ;; esac
  t=$(left)
  if [ "$t" -lt "$min_step" ]; then
    say "step $name: skipped, ${t}s of ${budget}s left"
    status=1
    return 0
  fi
  mkdir -p "$out/$fig"
  echo "== step $name: ./run.sh --local $* (${t}s left)" >>"$out/$fig/runner.txt"
  (cd "$root/$fig" && timeout -k 10 "$t" ./run.sh --local "$@") >>"$out/$fig/runner.txt" 2>&1 || rc=$?
  [ $rc -eq 0 ] || status=1
  ran="$ran $name"
  say "step $name: runner exit $rc$([ $rc = 124 ] && echo ' (budget reached)') at $(( $(date +%s) - start ))s"
}

ran=""
dev=()  # run.sh names the device from nvidia-smi
[ -n "${DEVICE:-}" ] && dev=(--device "$DEVICE")
new_run=(-c "${CLUSTER:-$root/clusters/generic.yaml}" ${dev[@]+"${dev[@]}"})
step fig12 fig12 "${new_run[@]}" --only system=tvm
case " $ran " in
  *" fig12 "*) step tune fig12 --resume --widen ${dev[@]+"${dev[@]}"} --only system=tvm-ms,workload=attn ;;
  *) step tune fig12 "${new_run[@]}" --only system=tvm-ms,workload=attn ;;
esac
step rerun fig12 --rerun ${dev[@]+"${dev[@]}"} --only system=tvm-ms,workload=attn
step fig13 fig13 "${new_run[@]}" --only system=tvm

for fig in fig12 fig13; do
  run=$(readlink -f "$root/$fig/ae_logs" 2>/dev/null) || continue
  run=$(dirname "$run")
  [ -d "$run/logs" ] || continue
  mkdir -p "$out/$fig"
  cp -r "$run/logs" "$run/err" "$out/$fig/" 2>/dev/null
  [ -d "$run/attempts" ] && cp -r "$run/attempts" "$out/$fig/"
  [ -d "$run/tvm-ms" ] && cp -r "$run/tvm-ms" "$out/$fig/"
done
logs=$(find "$out/fig12/logs" "$out/fig13/logs" -name '*.log' 2>/dev/null | sort)
if [ -n "$logs" ]; then
  # shellcheck disable=SC2086  # one path per log, no spaces in the runner's names
  "$py" "$here/log_table.py" $logs >"$out/table.txt" 2>&1
  cat "$out/table.txt"
  for f in $logs; do
    grep -q '^result status=ok' "$f" || { say "not ok: $f: $(grep '^result' "$f" | tail -1 | cut -c1-300)"; status=1; }
    grep -H '^check .*ok=0' "$f" | tee -a "$out/summary.txt"
  done
  find "$out/fig12" -name '*.tvm-ms.log*' -exec grep -H '^result' {} + | sed 's/^/tvm-ms: /' | tee -a "$out/summary.txt"
else
  say "no logs"
  status=1
fi
exit $status
