#!/usr/bin/env python3
"""The flashtensor peer (scripts/peers/flashtensor_backend.py) on the CPU:

  - through peer.py, without a built compiler (REPRO_FLASHTENSOR_SITE at an empty folder):
    status=unsupported, exit 4, naming the build script; cells its models cannot express
    (nsa, --groups 2, --causal 0, --dtype bf16, and any cell on the CPU) refused with their
    reasons;
  - where the compiler is built for this Python (build/flashtensor/site-<tag>, or
    REPRO_FLASHTENSOR_SITE) and torch and onnx import: the artifact's pipeline on each of its
    seven models at B=1 H=32 S=1024 D=128, from the ONNX export through codegen. The profile is
    a FIXTURE: the artifact times every candidate kernel on a GPU, here each candidate gets a
    fixed time (1 ms; then the chosen ones 1000 ms, so codegen must choose again where another
    covering set exists; then, for attn, a first profile that fails in one candidate's benchmark,
    which must be dropped and the profile run again), and the SM count the partitioner reads from
    the GPU is fixed at 132 (an H100's and an H200's). Checked: codegen's function calls only
    candidate kernels, returns one value per model output, is valid Python, and every argument
    of every call is an input or an earlier call's output (what phase_calls binds).

    test_flashtensor.py --peer scripts/peers/peer.py
Exit 77 (skipped) after the first part when torch, onnx or the built compiler is missing,
saying which. Ends with "N passed, N failed"; exit status 1 when anything failed.
"""
import argparse
import os
import sys
import tempfile

from tally import Tally, run_script

SKIP = 77
SEQLEN = 1024  # the artifact's partitioner finds no kernels below about 1024 keys
tally = Tally()


def check(cond, what, detail=""):
    """One check; what failed is printed with its detail."""
    return tally.check(cond, "%s%s" % (what, (": %s" % detail) if detail and not cond else ""))


def run_peer(args, env_extra=None):
    return run_script(PEER, args, env_extra)


def result_of(text):
    lines = [line for line in text.splitlines() if line.startswith("result ")]
    return lines[-1] if lines else ""


def refusals():
    """peer.py's answers without a compiler, and for cells the models cannot express."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    with tempfile.TemporaryDirectory() as empty:
        res = run_peer(["--system", "flashtensor", "--workload", "attn", "--seqlen", "64",
                        "--device", "cpu"], {"REPRO_FLASHTENSOR_SITE": empty})
        line = result_of(res.stdout)
        check(res.returncode == 4 and "status=unsupported" in line
              and "scripts/flashtensor/build.sh" in line,
              "no compiler: unsupported with the build command", line)
    if not os.path.isdir(SITE):
        return True
    cases = [(["--workload", "nsa"], "no model of nsa"),
             (["--workload", "attn", "--groups", "2"], "group_size == 1"),
             (["--workload", "attn", "--causal", "0"], "causal"),
             (["--workload", "attn", "--dtype", "bf16"], "fp16/fp32"),
             (["--workload", "attn"], "CUDA GPU")]
    for extra, reason in cases:
        res = run_peer(["--system", "flashtensor", "--seqlen", "64", "--device", "cpu"] + extra,
                       {"REPRO_FLASHTENSOR_SITE": SITE})
        line = result_of(res.stdout)
        check(res.returncode == 4 and "status=unsupported" in line and reason in line,
              "refused: %s" % " ".join(extra), line)
    return True


def fixture_profile(times, fail_first=False):
    """A stand-in for PartitionConfig.profile: what the artifact's profile does to the kernel
    list (_add_uncovered_ops), then times(kernel_name) instead of a GPU's. fail_first: the first
    call fails as the artifact's does when a candidate's benchmark fails (the child's traceback
    printed, naming bench_<the first candidate>, then Exception("profile failed"))."""
    calls = []

    def profile(self):
        self._add_uncovered_ops()
        calls.append(1)
        if fail_first and len(calls) == 1:
            print(b'Traceback:\n  File "/tmp/x.py", line 9, in bench_%s\nOutOfResources'
                  % self.kernels[0].kernel_name.encode())
            raise Exception("profile failed")
        return {k.kernel_name: times(k.kernel_name) for k in self.kernels}
    return profile


def pipeline(fb, api, workload, slow=(), fail_first=False):
    """(Compiled after codegen, the candidate names, the generated source) with the fixture
    profile."""
    import torch
    import workloads as wl
    from asuka.partition.config import PartitionConfig
    candidates = []

    def times(name):
        candidates.append(name)
        return 1000.0 if name in slow else 1.0
    PartitionConfig.profile = fixture_profile(times, fail_first)
    compiled = fb.compiled_for(api, workload, torch.device("cpu"), (1, 32, SEQLEN, 128),
                               KEEP)
    inputs = wl.make_inputs(workload, 1, SEQLEN, 32, 128, 1, torch.device("cpu"))
    captured = fb.Captured()
    py_str = None
    original = fb.Compiled.load_source

    def keep_source(self, text):  # codegen's module, not loaded: Triton needs a GPU to run it
        nonlocal py_str
        py_str = text
        return None
    fb.Compiled.load_source = keep_source
    try:
        with fb.stdout_to_stderr(captured):
            compiled.compile(inputs)
    finally:
        fb.Compiled.load_source = original
    return compiled, candidates, py_str


def check_codegen(fb, workload, compiled, candidates, py_str):
    import workloads as wl
    kernels = compiled.kernels
    check(bool(kernels) and all(k in candidates for k in kernels),
          "%s: codegen calls candidate kernels only" % workload, "%s of %s" % (kernels,
                                                                              candidates))
    try:
        compile(py_str, workload + ".py", "exec")
        valid = True
    except SyntaxError as e:
        valid = str(e)
    check(valid is True, "%s: the generated module is Python" % workload, valid)
    body = compiled.module_source
    returned = body[body.rfind("  return ") + 9:].strip().split(",")
    check(len(returned) == len(wl.OUTPUTS[workload]),
          "%s: the function returns one value per output" % workload,
          "%s vs %s" % (returned, wl.OUTPUTS[workload]))
    known = {"arg_%d" % i for i in range(len(compiled.input_names))}
    bound = True
    for outs, _kernel, args in fb.CALL_LINE.findall(body):
        bound &= all(a.strip() in known for a in args.split(","))
        known |= {o.strip() for o in outs.split(",")}
    check(bound, "%s: every call's arguments are inputs or earlier outputs" % workload, body)


def pipelines():
    try:
        import onnx  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:
        print("skip: the pipeline needs torch and onnx (%s)" % e)
        return False
    sys.path.insert(0, PEERS)
    os.environ["REPRO_FLASHTENSOR_SITE"] = SITE
    import flashtensor_backend as fb
    try:
        api = fb.load()
    except Exception as e:  # noqa: BLE001 (systems.Unsupported: not built / not importable)
        print("skip: %s" % e)
        return False
    import asuka.partition.connected as connected
    connected.get_sm_num = lambda *a: 132  # FIXTURE: the GPU's SM count (H100, H200)
    for workload in sorted(api["KERNEL_ZOO"]):
        compiled, candidates, py_str = pipeline(fb, api, workload)
        check_codegen(fb, workload, compiled, candidates, py_str)
        first = list(compiled.kernels)
        compiled, candidates, py_str = pipeline(fb, api, workload, slow=set(first))
        check_codegen(fb, workload, compiled, candidates, py_str)
        total = sum(1000.0 if k in first else 1.0 for k in compiled.kernels)
        check(set(compiled.kernels) != set(first) or total >= 1000.0 * len(first),
              "%s: codegen takes the fixture's times (its first choice made slow)" % workload,
              "%s then %s" % (first, compiled.kernels))
    # a candidate whose benchmark fails is dropped and the profile runs again without it
    compiled, candidates, py_str = pipeline(fb, api, "attn", fail_first=True)
    check_codegen(fb, "attn", compiled, candidates, py_str)
    check(len(compiled.dropped) == 1 and compiled.dropped[0] not in compiled.kernels
          and compiled.dropped[0] not in candidates
          and ("dropped", compiled.dropped[0]) in compiled.result_pairs(),
          "a failed candidate is dropped, named on the result line, not chosen",
          "%s, chose %s" % (compiled.dropped, compiled.kernels))
    return True


def main():
    global PEER, PEERS, SITE, KEEP
    p = argparse.ArgumentParser()
    p.add_argument("--peer", required=True)
    args = p.parse_args()
    PEER = os.path.abspath(args.peer)
    PEERS = os.path.dirname(PEER)
    root = os.path.dirname(os.path.dirname(PEERS))
    SITE = os.environ.get("REPRO_FLASHTENSOR_SITE") or os.path.join(
        os.environ.get("REPRO_BUILD_DIR") or os.path.join(root, "build"), "flashtensor",
        "site-" + sys.implementation.cache_tag)
    with tempfile.TemporaryDirectory() as keep:
        KEEP = keep
        ran = refusals()
        if not ran:
            print("skip: no torch for peer.py's flashtensor cells")
            return SKIP
        if not os.path.isdir(SITE):
            tally.finish()
            print("skip: the compiler is not built for this Python (no %s): "
                  "scripts/flashtensor/build.sh" % SITE)
            return SKIP if tally.failures == 0 else 1
        if not pipelines():
            tally.finish()
            return SKIP if tally.failures == 0 else 1
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
