#!/usr/bin/env python3
"""How peer.py times a call, with a stand-in torch whose GPU is a simulated clock (no torch or
GPU needed): a call of 2 ms or more is one call between two events (timing=events); a short
call is a CUDA graph of enough calls to fill 2 ms (timing=graph, calls_per_run=N), and
back-to-back calls when the capture fails (timing=loop); the result line carries timing=.
The per-call time the samples report is the call's simulated time plus the launch cost that
each method pays once per sample, so a graph of N calls reports close to the call's own time.

    test_timing.py --peers-dir scripts/peers
Ends with "N passed, N failed"; exit status 1 when anything failed.
"""
import argparse
import contextlib
import sys
import types

from tally import Tally

tally = Tally()
check = tally.check
LAUNCH_MS = 0.02  # what one launch from Python costs the stand-in GPU's stream


class FakeGpu:
    """A stream clock: a call adds its kernel time plus a launch gap, a graph replay adds the
    captured kernels' time plus one launch gap."""

    def __init__(self):
        self.now = 0.0
        self.capturing = None
        self.fail_capture = False

    def launch(self, ms):
        if self.capturing is not None:
            if self.fail_capture:
                raise RuntimeError("operation not permitted when stream is capturing")
            self.capturing.append(ms)
            return
        self.now += LAUNCH_MS + ms


def fake_torch(gpu):
    torch = types.SimpleNamespace()
    cuda = types.SimpleNamespace()

    class Event:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self):
            self.t = gpu.now

        def synchronize(self):
            pass

        def elapsed_time(self, end):
            return end.t - self.t

    class CUDAGraph:
        def __init__(self):
            self.kernels = []

        def replay(self):
            gpu.now += LAUNCH_MS + sum(self.kernels)

    @contextlib.contextmanager
    def graph(g):
        gpu.capturing = g.kernels
        try:
            yield
        finally:
            gpu.capturing = None

    class Stream:
        def wait_stream(self, other):
            pass

    cuda.Event, cuda.CUDAGraph, cuda.graph, cuda.Stream = Event, CUDAGraph, graph, Stream
    cuda.stream = lambda s: contextlib.nullcontext()
    cuda.current_stream = lambda: Stream()
    cuda.synchronize = lambda: None
    cuda.reset_peak_memory_stats = lambda: None
    cuda.max_memory_allocated = lambda: 0
    torch.cuda = cuda
    return torch


def timed(peer, kernel_ms, fail_capture=False, runs=5):
    gpu = FakeGpu()
    gpu.fail_capture = fail_capture
    torch = fake_torch(gpu)
    calls = []

    def call():
        calls.append(1)
        gpu.launch(kernel_ms)

    samples = peer.time_calls(torch, call, warmup=3, runs=runs, on_gpu=True)
    return samples, len(calls), torch


def pairs_of(peer, torch, samples):
    args = types.SimpleNamespace(runs=len(samples), warmup=3)
    return dict(peer.result_pairs(torch, samples, args, True))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers-dir", required=True)
    opts = ap.parse_args()
    sys.path.insert(0, opts.peers_dir)
    import peer

    # a long call: one call per run between two events
    samples, _, torch = timed(peer, 5.0)
    check(samples.method == "events" and samples.calls == 1,
          "5 ms call: %s x%d, want events x1" % (samples.method, samples.calls))
    check(len(samples) == 5, "5 ms call: %d samples, want 5" % len(samples))
    check(abs(samples[0] - (5.0 + LAUNCH_MS)) < 1e-9, "5 ms call: sample %r" % samples[0])
    pairs = pairs_of(peer, torch, samples)
    check(pairs.get("timing") == "events", "result pairs: timing=%r" % pairs.get("timing"))
    check("calls_per_run" not in pairs, "one call per run: no calls_per_run")

    # a short call: a graph of enough calls to fill 2 ms; the launch cost is amortised
    samples, ncalls, torch = timed(peer, 0.01)
    check(samples.method == "graph", "10 us call: method %s, want graph" % samples.method)
    eager_ms = samples.calls * (0.01 + LAUNCH_MS)  # the calls' time as launched one by one
    check(eager_ms >= peer.SAMPLE_MS or samples.calls == peer.MAX_CALLS_PER_SAMPLE,
          "10 us call: %d calls per run do not fill a sample" % samples.calls)
    err = abs(samples[0] - 0.01) / 0.01
    check(err < 0.15, "10 us call in a graph: %.4f ms per call, %.0f %% off 0.01"
          % (samples[0], 100 * err))
    events_only = 0.01 + LAUNCH_MS
    check(samples[0] < events_only, "graph sample %.4f not below one call between events %.4f"
          % (samples[0], events_only))
    pairs = pairs_of(peer, torch, samples)
    check(pairs.get("timing") == "graph", "result pairs: timing=%r" % pairs.get("timing"))
    check(pairs.get("calls_per_run") == samples.calls, "result pairs: calls_per_run=%r"
          % pairs.get("calls_per_run"))
    check(ncalls >= 3 + 1, "warmup calls made (%d calls)" % ncalls)

    # a short call that cannot be captured: back-to-back calls
    samples, _, torch = timed(peer, 0.01, fail_capture=True)
    check(samples.method == "loop" and samples.calls > 1,
          "uncapturable call: %s x%d, want loop" % (samples.method, samples.calls))
    check(abs(samples[0] - events_only) < 1e-6, "loop sample %r, want %r (launch paid per call)"
          % (samples[0], events_only))
    check(pairs_of(peer, torch, samples).get("timing") == "loop", "result pairs: timing=loop")

    # the CPU: the wall clock
    samples = peer.time_calls(None, lambda: None, warmup=1, runs=4, on_gpu=False)
    check(samples.method == "wall" and len(samples) == 4,
          "CPU: %s x%d" % (samples.method, len(samples)))
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
