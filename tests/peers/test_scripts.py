#!/usr/bin/env python3
"""Tests of the GPU-machine shell scripts without a GPU: kernels/attention/scripts/bench.sh,
kernels/attention/scripts/gpu_check.sh, kernels/e2e/gpu_check.sh and scripts/peers/gpu_check.sh
take their workload list from the binary (`--list-workloads`) or the registry (registry.py
names), never from a list of their own. Stand-in binaries (shell scripts) list a few workloads and
answer every cell at once:

  - the cells run are exactly the listed workloads' (a workload the binary does not list is
    not run, one it lists is);
  - a binary whose --list-workloads fails, lists nothing, or prints text that is no workload
    name stops the script with a message saying so;
  - option errors exit 2 and name the option.

    test_scripts.py --root REPO
Ends with "N passed, N failed"; exit status 1 when anything failed.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from tally import Tally

tally = Tally()
check = tally.check

# $1 of the stand-in: --list-workloads prints LIST (and exits RC); anything else is a cell
STAND_IN = """#!/bin/sh
if [ "$1" = --list-workloads ]; then
  printf '{listing}'
  exit {rc}
fi
echo "# repro-log 1"
echo "config $*"
echo "result status=ok avg_ms=1.5 median_ms=1.5 min_ms=1.5 max_ms=1.5 peak_mib=3.0"
"""


def stand_in(directory, name, listing, rc=0):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(STAND_IN.format(listing=listing, rc=rc))
    os.chmod(path, 0o755)
    return path


def run(cmd, out, env_extra=None):
    env = dict(os.environ, OUT=out)
    env.update(env_extra or {})
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


BAD_LISTS = [("", 0, "listed no workload"), ("attn\n", 2, "failed (exit 2)"),
             ("Usage: attnvar [options]\n", 0, "not a workload name")]


def test_kernel_gpu_check(tmp):
    script = os.path.join(ROOT, "kernels", "attention", "scripts", "gpu_check.sh")
    fake = stand_in(os.path.join(tmp, "gc"), "attnvar", "h2o\\ngemma2\\n")
    out = os.path.join(tmp, "gc_out")
    res = run([script, "--bin", fake, "--no-sanitizer", "--no-big", "--jobs", "2"], out)
    check(res.returncode == 0, "gpu_check.sh with a stand-in: exit %d: %s" % (
        res.returncode, (res.stdout + res.stderr)[-500:]))
    cases_txt = os.path.join(out, "gpu_check", "cases.txt")
    cases = open(cases_txt).read() if os.path.exists(cases_txt) else ""
    run_workloads = sorted({line.split(".")[0] for line in cases.splitlines()})
    check(run_workloads == ["gemma2", "h2o"], "gpu_check.sh ran the workloads %s, want the listed "
          "h2o gemma2" % run_workloads)
    for listing, rc, words in BAD_LISTS:
        fake = stand_in(os.path.join(tmp, "gc_bad"), "attnvar", listing.replace("\n", "\\n"), rc)
        res = run([script, "--bin", fake, "--no-sanitizer"], out)
        check(res.returncode == 1 and words in res.stderr,
              "gpu_check.sh with --list-workloads %r exit %d: exit %d, stderr %r"
              % (listing, rc, res.returncode, res.stderr))
    res = run([script, "--jobs", "0"], out)
    check(res.returncode == 2 and "--jobs" in res.stderr, "gpu_check.sh --jobs 0: %d %r"
          % (res.returncode, res.stderr))
    res = run([script, "--bogus"], out)
    check(res.returncode == 2 and "--bogus" in res.stderr, "gpu_check.sh --bogus: %d %r"
          % (res.returncode, res.stderr))
    res = run([script, "--help"], out)
    check(res.returncode == 0 and "--no-sanitizer" in res.stdout and "set -uo" not in res.stdout,
          "gpu_check.sh --help: %r" % res.stdout[-300:])


def test_bench(tmp):
    script = os.path.join(ROOT, "kernels", "attention", "scripts", "bench.sh")
    fake = stand_in(os.path.join(tmp, "bench"), "attnvar", "attn\\nroco\\n")
    out = os.path.join(tmp, "bench_out")
    res = run([script, "--bin", fake, "--part", "kernel", "--no-peers", "--warmup", "0",
               "--runs", "1"], out)
    check(res.returncode == 0, "bench.sh with a stand-in: exit %d: %s" % (
        res.returncode, (res.stdout + res.stderr)[-500:]))
    logdir = os.path.join(out, "bench", "logs")
    logs = sorted(os.listdir(logdir)) if os.path.isdir(logdir) else []
    want = sorted("kernel.%s.%s.%s" % (w, s, e) for w in ("attn", "roco")
                  for s in ("unfused", "fused") for e in ("log", "err"))
    check(logs == want, "bench.sh logs %s, want %s" % (logs, want))
    rows = [line.split()[0] for line in res.stdout.splitlines()[2:4]]
    check(rows == ["attn", "roco"], "bench.sh table rows %s:\n%s" % (rows, res.stdout))
    check(" 1.5 " in res.stdout, "bench.sh table lacks the stand-in's 1.5 ms:\n" + res.stdout)
    for listing, rc, words in BAD_LISTS:
        fake = stand_in(os.path.join(tmp, "bench_bad"), "attnvar", listing.replace("\n", "\\n"),
                        rc)
        res = run([script, "--bin", fake, "--part", "kernel"], out)
        check(res.returncode == 1 and words in res.stderr,
              "bench.sh with --list-workloads %r exit %d: exit %d, stderr %r"
              % (listing, rc, res.returncode, res.stderr))
    for args, option in ((["--part", "x"], "--part"), (["--warmup", "a"], "--warmup"),
                         (["--runs"], "--runs"), (["--what"], "--what")):
        res = run([script] + args, out)
        check(res.returncode == 2 and option in res.stderr, "bench.sh %s: exit %d, %r"
              % (args, res.returncode, res.stderr))


def test_e2e_gpu_check(tmp):
    script = os.path.join(ROOT, "kernels", "e2e", "gpu_check.sh")
    out = os.path.join(tmp, "e2e_out")
    bindir = os.path.join(tmp, "e2e_bin")
    stand_in(bindir, "llama_e2e", "kf\\n")
    res = run([script, bindir], out)
    check(res.returncode == 0, "e2e/gpu_check.sh with a stand-in: exit %d: %s" % (
        res.returncode, (res.stdout + res.stderr)[-500:]))
    tiny = os.path.join(out, "tiny")
    ran = sorted(os.listdir(tiny)) if os.path.isdir(tiny) else []
    check(ran and all(name.startswith("kf.") for name in ran),
          "e2e/gpu_check.sh ran %s, want only the listed kf" % ran)
    for listing, rc, words in BAD_LISTS:
        stand_in(bindir, "llama_e2e", listing.replace("\n", "\\n"), rc)
        res = run([script, bindir], out)
        check(res.returncode == 2 and words in res.stderr,
              "e2e/gpu_check.sh with --list-workloads %r exit %d: exit %d, stderr %r"
              % (listing, rc, res.returncode, res.stderr))


def test_peers_gpu_check(tmp):
    script = os.path.join(ROOT, "scripts", "peers", "gpu_check.sh")
    bad = os.path.join(tmp, "empty.def")
    with open(bad, "w") as f:
        f.write("/* no rows */\n")
    res = run([script], os.path.join(tmp, "peers_out"), {"REPRO_WORKLOADS_DEF": bad})
    check(res.returncode == 1 and "no workload" in res.stderr and bad in res.stderr,
          "peers gpu_check.sh with an empty registry: exit %d, stderr %r"
          % (res.returncode, res.stderr))


def main():
    global ROOT
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    ROOT = os.path.abspath(p.parse_args().root)
    with tempfile.TemporaryDirectory() as tmp:
        test_kernel_gpu_check(tmp)
        test_bench(tmp)
        test_e2e_gpu_check(tmp)
        test_peers_gpu_check(tmp)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
