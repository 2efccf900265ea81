#!/usr/bin/env python3
"""The tvm peer systems (scripts/peers/tvm_backend.py) on the CPU, through peer.py:

  - with torch and a stand-in tvm that cannot import (REPRO_TVM_PATH): every tvm cell ends
    status=unsupported, exit 4, with the import error and the install command;
  - with TVM importable (REPRO_TVM_PATH, build/tvm-site, or the interpreter's own): tvm on
    the CPU (target llvm) at a tiny shape, for a plain workload, a column workload and a
    workload with an extra input, checked against the reference, timed by TVM's time evaluator
    (timing=tvm_time_evaluator), compile_s reported; nsa (gathered key blocks) ends unsupported
    with the Relax importer's error; --e2e is refused.

    test_tvm.py --peer scripts/peers/peer.py
Exit 77 (skipped) without torch, and after the stand-in part when TVM does not import (saying
why and how to install it). Ends with "N passed, N failed"; exit status 1 when anything failed.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from tally import Tally, run_script

SKIP = 77
tally = Tally()
check = tally.check
SHAPE = ["--seqlen", "64", "--heads", "2", "--dim", "16", "--batch", "1", "--device", "cpu",
         "--warmup", "2", "--runs", "3"]


def run_peer(args, env_extra=None):
    return run_script(PEER, args, env_extra)


def records(text):
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            tag, pairs = kvlog.parse(line)
            out[tag] = dict(pairs)
    return out


def checks(text):
    return [dict(kvlog.parse(line)[1]) for line in text.splitlines() if line.startswith("check ")]


def test_stand_in(tmp):
    tvm_dir = os.path.join(tmp, "tvm-site")
    os.makedirs(os.path.join(tvm_dir, "tvm"))
    with open(os.path.join(tvm_dir, "tvm", "__init__.py"), "w") as f:
        f.write('raise ImportError("stand-in tvm of test_tvm.py")\n')
    for system, extra in (("tvm", []), ("tvm-ms", ["--tune-trials", "2"])):
        res = run_peer(["--system", system, "--workload", "h2o"] + SHAPE + extra,
                       {"REPRO_TVM_PATH": tvm_dir})
        rec = records(res.stdout)
        result = rec.get("result", {})
        check(res.returncode == 4 and result.get("status") == "unsupported",
              "%s with a stand-in tvm: exit %d, result %r (stderr %s)"
              % (system, res.returncode, result, res.stderr[-400:]))
        reason = result.get("reason", "")
        check("stand-in tvm" in reason and "scripts/install.sh --tvm" in reason,
              "%s: reason %r lacks the import error or the install command" % (system, reason))


def tvm_importable():
    """None when TVM imports the way the backend imports it, else why not."""
    code = ("import sys; sys.path.insert(0, %r); import tvm_backend, systems\n"
            "try:\n    tvm_backend.load('tvm', on_gpu=False)\n"
            "except systems.Unsupported as e:\n    print(e)\n" % os.path.dirname(PEER))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        return "the probe failed: %s" % res.stderr[-300:]
    return res.stdout.strip() or None


def test_cpu_cells():
    for workload in ("attn", "h2o", "kf"):
        res = run_peer(["--system", "tvm", "--workload", workload] + SHAPE)
        rec = records(res.stdout)
        config, result = rec.get("config", {}), rec.get("result", {})
        what = "tvm %s on the CPU" % workload
        check(res.returncode == 0 and result.get("status") == "ok",
              "%s: exit %d, result %r (stderr %s)" % (what, res.returncode, result,
                                                      res.stderr[-600:]))
        check(config.get("impl") == "tvm-relax-dlight" and config.get("target") == "llvm"
              and config.get("tune_trials") == "0" and config.get("tvm", "unknown") != "unknown",
              "%s: config %r" % (what, config))
        cks = checks(res.stdout)
        names = [c.get("output") for c in cks]
        want = {"attn": ["out"], "h2o": ["out", "h2o_score"], "kf": ["out", "kf_score"]}[workload]
        check(names == want and all(c.get("ok") == "1" for c in cks),
              "%s: checks %r, want %s passing" % (what, cks, want))
        check(result.get("timing") == "tvm_time_evaluator" and "compile_s" in result
              and float(result.get("avg_ms", "0")) > 0 and "peak_mib" not in result,
              "%s: result %r" % (what, result))
    res = run_peer(["--system", "tvm", "--workload", "nsa"] + SHAPE)
    result = records(res.stdout).get("result", {})
    check(res.returncode == 4 and result.get("status") == "unsupported"
          and "Relax import (from_exported_program)" in result.get("reason", ""),
          "tvm nsa: exit %d, result %r: want unsupported with the importer's error"
          % (res.returncode, result))
    res = run_peer(["--system", "tvm", "--workload", "attn", "--e2e", "--layers", "1",
                    "--hidden", "64", "--heads", "2", "--mlp", "128", "--vocab", "100",
                    "--seqlen", "16", "--device", "cpu"])
    result = records(res.stdout).get("result", {})
    check(res.returncode == 4 and "kernel cells only" in result.get("reason", ""),
          "tvm --e2e: exit %d, result %r" % (res.returncode, result))


def main():
    global PEER, kvlog
    p = argparse.ArgumentParser()
    p.add_argument("--peer", required=True)
    a = p.parse_args()
    PEER = os.path.abspath(a.peer)
    sys.path.insert(0, os.path.dirname(PEER))
    import kvlog as kvlog_module
    kvlog = kvlog_module
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print("skipped: %s has no torch (%s); REPRO_TVM_PYTHON names one that has" % (
            sys.executable, e))
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        test_stand_in(tmp)
    why = tvm_importable()
    if why is None:
        test_cpu_cells()
    rc = tally.finish()
    if rc == 0 and why is not None:
        print("skipped the CPU cells: %s" % why)
        return SKIP
    return rc


if __name__ == "__main__":
    sys.exit(main())
