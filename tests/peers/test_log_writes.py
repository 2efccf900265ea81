#!/usr/bin/env python3
"""The Python peers' log is written whole or the peer fails (no torch needed): peer.py, gemm.py
and kron.py, whose logs run_logged writes through peer.Log, exit 1 with
"NAME: writing the log to stdout failed: REASON" on stderr when stdout takes no bytes
(/dev/full), and when it takes only part of the result line (a file size limit ends the file in
the middle of it, as a full disk does), with stdout buffered or not (PYTHONUNBUFFERED, where
Python's text layer drops what a short write left and reports success). peer.exit_now fails
the same way when its last flush of stdout fails.

    test_log_writes.py --peers-dir scripts/peers
Ends with "N passed, N failed"; exit status 1 when anything failed.
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile

from tally import Tally

tally = Tally()
check = tally.check

# name, arguments of a small cell that writes a whole log without torch (unsupported, exit 4)
PEERS = [
    ("peer.py", ["--system", "torch", "--workload", "h2o", "--seqlen", "256"]),
    ("gemm.py", ["--system", "pytorch", "--m", "64", "--n", "64", "--k", "64"]),
    ("kron.py", ["--system", "torch-v2", "--shape", "4x8x8", "--pass", "bwd"]),
]


def run(script, args, stdout, env, limit=None):
    """The CompletedProcess of the peer with stdout on the open file stdout; limit: the largest
    file it may write (RLIMIT_FSIZE: a write past it fails with EFBIG, Python ignores SIGXFSZ)."""
    def limit_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    return subprocess.run([sys.executable, os.path.join(PEERS_DIR, script)] + args, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, env=env, timeout=120,
                          preexec_fn=limit_size if limit is not None else None)


def check_failed(what, name, res, reason):
    check(res.returncode == 1, "%s: exit %d, want 1 (stderr %r)" % (what, res.returncode,
                                                                 res.stderr[-300:]))
    want = "%s: writing the log to stdout failed: %s" % (name, reason)
    check(want in res.stderr, "%s: stderr %r lacks %r" % (what, res.stderr[-300:], want))


def test_peer(name, args, env, tmp):
    mode = "unbuffered" if env.get("PYTHONUNBUFFERED") else "buffered"
    whole = os.path.join(tmp, "whole.log")
    with open(whole, "w") as out:
        res = run(name, args, out, env)
    check(res.returncode == 4, "%s %s: a whole run exits %d, want 4 (stderr %r)"
          % (name, mode, res.returncode, res.stderr[-300:]))
    with open(whole, "rb") as f:
        data = f.read()
    check(data.endswith(b"\n"), "%s %s: the whole log does not end in a newline" % (name, mode))

    with open("/dev/full", "w") as out:
        check_failed("%s %s to /dev/full" % (name, mode), name, run(name, args, out, env),
                     "No space left on device")

    # the file ends in the middle of the result line
    cut_at = data.rindex(b"\nresult ") + 20
    cut = os.path.join(tmp, "cut.log")
    with open(cut, "w") as out:
        res = run(name, args, out, env, limit=cut_at)
    check_failed("%s %s cut in its result line" % (name, mode), name, res, "File too large")
    with open(cut, "rb") as f:
        got = f.read()
    check(len(got) == cut_at and not got.endswith(b"\n"),
          "%s %s: the cut log holds %d bytes, want %d without a newline"
          % (name, mode, len(got), cut_at))


def test_exit_now(env):
    """exit_now's flush of stdout fails: exit 1 with the message, not the code asked for."""
    code = ("import sys; sys.path.insert(0, %r); import peer; sys.stdout.write('result x=1\\n'); "
            "peer.exit_now(0)" % PEERS_DIR)
    env = {k: v for k, v in env.items() if k != "PYTHONUNBUFFERED"}  # buffered: flush at exit
    with open("/dev/full", "w") as out:
        res = subprocess.run([sys.executable, "-c", code], stdout=out, stderr=subprocess.PIPE,
                             text=True, env=env, timeout=60)
    check(res.returncode == 1, "exit_now(0) with stdout on /dev/full: exit %d, want 1"
          % res.returncode)
    check("writing the log to stdout failed: No space left on device" in res.stderr,
          "exit_now: stderr %r" % res.stderr[-300:])


def main():
    global PEERS_DIR
    p = argparse.ArgumentParser()
    p.add_argument("--peers-dir", required=True)
    PEERS_DIR = os.path.abspath(p.parse_args().peers_dir)
    with tempfile.TemporaryDirectory() as tmp:
        fake = os.path.join(tmp, "notorch")
        os.makedirs(os.path.join(fake, "torch"))
        with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
            f.write('raise ImportError("stand-in torch of test_log_writes.py: no torch here")\n')
        base = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
        base["PYTHONPATH"] = fake
        for env in (base, dict(base, PYTHONUNBUFFERED="1")):
            for name, args in PEERS:
                test_peer(name, args, env, tmp)
        test_exit_now(base)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
