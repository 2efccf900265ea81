#!/usr/bin/env bash
# FIXTURE, not a real GPU run: stands in for build/bin/attnvar so the tests can exercise the
# plumbing of kernels/attention/scripts/gpu_check.sh and kernels/attention/scripts/bench.sh (case list, exit-code classification,
# tables) on a machine without a GPU. Its numbers are made up and say so in the meta line.
# --list-workloads and --list-systems answer like attnvar: the registries' names
# (kernels/attention/registry/workloads.def, kernels/attention/registry/systems.c).
if [ "${1:-}" = --list-workloads ]; then
  exec python3 "$(dirname "$0")/../../scripts/peers/registry.py" names
fi
if [ "${1:-}" = --list-systems ]; then
  sed -nE 's/^ *\{"([a-z0-9-]+)", [01],.*/\1\tgpu\tfixture/p' "$(dirname "$0")/../../kernels/attention/registry/systems.c"
  exit 0
fi
echo "# repro-log 1"
echo 'meta gpu="FIXTURE (no GPU)" cc=0.0 driver=none cuda=none commit=fixture date=1970-01-01T00:00:00Z host=fixture'
# GQA (--groups G > 1) on the config line, as attnvar logs it: groups=G kv_heads=H/G
heads=32 groups=1 prev=
for a in "$@"; do
  case $prev in --heads) heads=$a ;; --groups) groups=$a ;; esac
  prev=$a
done
[ "$groups" -gt 1 ] && echo "config groups=$groups kv_heads=$((heads / groups))"
# Under tests/kernels/fake_sanitizer.sh: a peer's and one of ours' outputs go wrong (as
# FlashInfer's do under compute-sanitizer on an H200), with no memcheck error.
if [ "${FIXTURE_SANITIZED:-0}" = 1 ]; then
  case " $* " in
    *" --system flashinfer "*"--seqlen 400 "* | *" --workload attn --system fused "*"--dim 96 "*)
      echo "check output=out rel_l2=5.0e-02 max_abs=2.7 ok=0"
      echo 'result status=error reason="check failed: see the check lines with ok=0"'; exit 5 ;;
  esac
fi
case " $* " in
  *" --force-sm80 "*) echo 'result status=unsupported reason="fixture: sm80 path absent"'; exit 4 ;;
  *" --system flashinfer "*"--dim 96 "*) echo 'result status=unsupported reason="fixture: no hdim 96"'; exit 4 ;;
  *" --workload corm --system unfused "*"--seqlen 17 "*)
    echo "check output=out rel_l2=1.0e-04 max_abs=1.0e-03 ok=1"
    echo "check output=corm_score rel_l2=1.0e-01 max_abs=1 ok=0"
    echo 'result status=error reason="check failed: see the check lines with ok=0"'; exit 5 ;;
  *" --workload kf --system fused "*) echo 'result status=oom reason="fixture oom"'; exit 3 ;;
esac
echo "check output=out rel_l2=2.0e-04 max_abs=1.0e-03 ok=1"
case " $* " in
  *" --system fused "*) echo "result status=ok avg_ms=0.5000 median_ms=0.5 min_ms=0.5 max_ms=0.5 runs=1 warmup=1 gflops_s=1.0 peak_mib=100.0" ;;
  *) echo "result status=ok avg_ms=2.0000 median_ms=2 min_ms=2 max_ms=2 runs=1 warmup=1 gflops_s=1.0 peak_mib=3000.0" ;;
esac
