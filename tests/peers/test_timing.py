#!/usr/bin/env python3
"""How peer.py times a call, with a stand-in torch whose GPU is a simulated clock (no torch or
GPU needed): a call of 2 ms or more is one call between two events (timing=events); a short
call is a CUDA graph of enough calls to fill 2 ms (timing=graph, calls_per_run=N), and
back-to-back calls when the capture fails or holds fewer kernels than calls (a library that
launches on another stream: timing=loop); the result line carries timing= and graph_kernels=.
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


class Stream:
    def wait_stream(self, other):
        pass


class FakeGpu:
    """A stream clock: a call adds its kernel time plus a launch gap, a graph replay adds the
    captured kernels' time plus one launch gap."""

    def __init__(self):
        self.now = 0.0
        self.capturing = None  # the capture's kernel list while a capture runs
        self.capture_stream = None
        self.current = Stream()  # the current stream (torch.cuda.stream sets it)
        self.fail_capture = False
        self.escape_capture = False  # launches go to a stream the capture does not see

    def launch(self, ms, stream=None):
        """A kernel on `stream` (default: the current stream); the capture holds it only when
        it goes to the capturing stream."""
        target = self.current if stream is None else stream
        if (self.capturing is not None and not self.escape_capture
                and target is self.capture_stream):
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
        def __init__(self, keep_graph=False):
            self.kernels = []
            self.instantiated = False

        def instantiate(self):
            self.instantiated = True

        def replay(self):
            assert self.instantiated, "replay before instantiate"
            gpu.now += LAUNCH_MS + sum(self.kernels)

    @contextlib.contextmanager
    def use_stream(stream):
        before, gpu.current = gpu.current, stream
        try:
            yield
        finally:
            gpu.current = before

    @contextlib.contextmanager
    def graph(g, stream=None):  # torch captures on `stream`, else on a side stream of its own
        capture_stream = Stream() if stream is None else stream
        gpu.capturing, gpu.capture_stream = g.kernels, capture_stream
        try:
            with use_stream(capture_stream):
                yield
        finally:
            gpu.capturing, gpu.capture_stream = None, None

    cuda.Event, cuda.CUDAGraph, cuda.graph, cuda.Stream = Event, CUDAGraph, graph, Stream
    cuda.stream = use_stream
    cuda.current_stream = lambda: gpu.current
    cuda.synchronize = lambda: None
    cuda.reset_peak_memory_stats = lambda: None
    cuda.max_memory_allocated = lambda: 0
    torch.cuda = cuda
    return torch


def timed(peer, kernel_ms, fail_capture=False, escape_capture=False, runs=5, bound=None,
          stream=None):
    """time_calls of a call of kernel_ms. bound: the stream the call's kernel always goes to
    (a backward's: its forward's stream), whichever is current; stream: time_calls' stream."""
    gpu = FakeGpu()
    gpu.fail_capture = fail_capture
    gpu.escape_capture = escape_capture
    torch = fake_torch(gpu)
    calls = []

    def call():
        calls.append(1)
        gpu.launch(kernel_ms, bound)

    samples = peer.time_calls(torch, call, warmup=3, runs=runs, on_gpu=True, stream=stream)
    return samples, len(calls), torch


class FakeDriver:
    """libcuda's three graph queries over a table: graph -> nodes, node -> type or child."""

    def __init__(self, graphs, types, children):
        self.graphs, self.types, self.children = graphs, types, children

    def cuGraphGetNodes(self, graph, nodes, count):
        held = self.graphs[graph.value]
        if nodes is not None:
            for i, node in enumerate(held[:count._obj.value]):
                nodes[i] = node
        count._obj.value = len(held)
        return 0

    def cuGraphNodeGetType(self, node, kind):
        kind._obj.value = self.types[node.value]
        return 0

    def cuGraphChildGraphNodeGetGraph(self, node, child):
        child._obj.value = self.children[node.value]
        return 0


def pairs_of(peer, torch, samples):
    args = types.SimpleNamespace(runs=len(samples), warmup=3)
    return dict(peer.result_pairs(torch, samples, args, True))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers-dir", required=True)
    opts = ap.parse_args()
    sys.path.insert(0, opts.peers_dir)
    import peer
    # the driver's node count of a captured graph, read from the stand-in's capture
    peer.graph_kernel_count = lambda graph: len(graph.kernels)

    # a long call: one call per run between two events
    samples, _, torch = timed(peer, 5.0)
    check(samples.method == "events" and samples.calls == 1,
          "5 ms call: %s x%d, want events x1" % (samples.method, samples.calls))
    check(len(samples) == 5, "5 ms call: %d samples, want 5" % len(samples))
    check(abs(samples[0] - (5.0 + LAUNCH_MS)) < 1e-9, "5 ms call: sample %r" % samples[0])
    pairs = pairs_of(peer, torch, samples)
    check(pairs.get("timing") == "events", "result pairs: timing=%r" % pairs.get("timing"))
    check("calls_per_run" not in pairs, "one call per run: no calls_per_run")
    # samples_ms: each run's time in run order, as the C harness lists them; none past 1000 runs
    ordered = peer.Samples([3.0, 1.0, 2.0], "events")
    listed = pairs_of(peer, torch, ordered).get("samples_ms")
    check(listed == "3,1,2", "result pairs: samples_ms=%r, want run order" % listed)
    # a microsecond cell: 3.2e-5 ms keeps >= 2 significant digits in every time field (never
    # 0.0000) and reads back as that number (the C harness's HX_MS_FMT, %.6g)
    tiny = pairs_of(peer, torch, peer.Samples([3.2e-5, 3.2e-5], "graph", 256, 256))
    for key in ("avg_ms", "median_ms", "min_ms", "max_ms", "samples_ms"):
        val = str(tiny.get(key, "")).split(",")[0]
        digits = len(val.split("e")[0].replace(".", "").lstrip("0"))
        check(digits >= 2 and abs(float(val or "nan") - 3.2e-5) <= 3.2e-10,
              "3.2e-5 ms: %s=%r, want 3.2e-05 with >= 2 significant digits" % (key, val))
    check(pairs_of(peer, torch, peer.Samples([1.234567], "events"))["avg_ms"] == "1.23457",
          "6 significant digits")
    many = peer.Samples([1.0] * (peer.MAX_LISTED_SAMPLES + 1), "events")
    check("samples_ms" not in pairs_of(peer, torch, many), "1001 runs: no samples_ms")
    listed = pairs_of(peer, torch, many[:peer.MAX_LISTED_SAMPLES]).get("samples_ms", "")
    check(listed.count(",") == peer.MAX_LISTED_SAMPLES - 1, "1000 runs: %d listed"
          % (listed.count(",") + 1))

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
    check(pairs.get("graph_kernels") == samples.calls, "result pairs: graph_kernels=%r"
          % pairs.get("graph_kernels"))

    # a short call whose kernels escape the capture: the graph is empty, so back-to-back calls
    samples, _, torch = timed(peer, 0.01, escape_capture=True)
    check(samples.method == "loop" and samples.calls > 1,
          "escaping call: %s x%d, want loop" % (samples.method, samples.calls))
    check(abs(samples[0] - events_only) < 1e-6, "escaping call: sample %r, want %r"
          % (samples[0], events_only))
    pairs = pairs_of(peer, torch, samples)
    check(pairs.get("timing") == "loop" and pairs.get("graph_kernels") == 0,
          "escaping call: timing=%r graph_kernels=%r, want loop and 0"
          % (pairs.get("timing"), pairs.get("graph_kernels")))

    # a call whose kernel goes to a stream of its own (a backward on its forward's stream):
    # captured on a side stream it escapes (loop); timed on its stream it is a graph
    forward_stream = Stream()
    samples, _, torch = timed(peer, 0.01, bound=forward_stream)
    check(samples.method == "loop" and samples.graph_kernels == 0,
          "call on its own stream, side-stream capture: %s, graph_kernels=%r, want loop and 0"
          % (samples.method, samples.graph_kernels))
    samples, _, torch = timed(peer, 0.01, bound=forward_stream, stream=forward_stream)
    check(samples.method == "graph" and samples.graph_kernels == samples.calls,
          "call on its own stream, captured there: %s, graph_kernels=%r, want graph and %d"
          % (samples.method, samples.graph_kernels, samples.calls))
    err = abs(samples[0] - 0.01) / 0.01
    check(err < 0.15, "call captured on its own stream: %.4f ms per call, %.0f %% off 0.01"
          % (samples[0], 100 * err))

    # the node count unknown (no driver to ask): back-to-back calls, no graph_kernels
    counter, peer.graph_kernel_count = peer.graph_kernel_count, lambda graph: None
    samples, _, torch = timed(peer, 0.01)
    peer.graph_kernel_count = counter
    pairs = pairs_of(peer, torch, samples)
    check(samples.method == "loop" and "graph_kernels" not in pairs,
          "uncounted graph: %s, graph_kernels=%r, want loop and none"
          % (samples.method, pairs.get("graph_kernels")))

    # a short call that cannot be captured: back-to-back calls
    samples, _, torch = timed(peer, 0.01, fail_capture=True)
    check(samples.method == "loop" and samples.calls > 1,
          "uncapturable call: %s x%d, want loop" % (samples.method, samples.calls))
    check(abs(samples[0] - events_only) < 1e-6, "loop sample %r, want %r (launch paid per call)"
          % (samples[0], events_only))
    check(pairs_of(peer, torch, samples).get("timing") == "loop", "result pairs: timing=loop")

    # the driver walk: kernel nodes counted, child graphs entered, other nodes skipped
    kernel, memset, child = (peer.CU_GRAPH_NODE_TYPE_KERNEL, 2, peer.CU_GRAPH_NODE_TYPE_GRAPH)
    driver = FakeDriver({100: [1, 2, 3], 200: [4, 5], 300: []},
                        {1: kernel, 2: memset, 3: child, 4: kernel, 5: kernel}, {3: 200})
    got = peer._kernel_nodes(driver, 100)
    check(got == 3, "driver walk: %d kernel nodes, want 3 (1 + 2 in the child)" % got)
    got = peer._kernel_nodes(driver, 300)
    check(got == 0, "driver walk of an empty graph: %d kernel nodes, want 0" % got)

    # the CPU: the wall clock
    samples = peer.time_calls(None, lambda: None, warmup=1, runs=4, on_gpu=False)
    check(samples.method == "wall" and len(samples) == 4,
          "CPU: %s x%d" % (samples.method, len(samples)))
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
