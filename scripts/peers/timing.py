"""The timing rule's numbers and its samples, shared by peer.py (time_calls) and the backends
that time themselves (tvm_backend.py, TVM's time evaluator); it imports nothing of the kit."""

# A timed sample lasts at least this long, so the launch cost of a short call is amortised
# (the C harness launches from C, where it is a few microseconds).
SAMPLE_MS = 2.0
MAX_CALLS_PER_SAMPLE = 256


def calls_per_sample(one_ms):
    """The calls one sample times, for a call of `one_ms` ms: enough to last SAMPLE_MS, at most
    MAX_CALLS_PER_SAMPLE, at least one."""
    return max(1, min(MAX_CALLS_PER_SAMPLE, int(SAMPLE_MS / max(one_ms, 1e-3)) + 1))


class Samples(list):
    """Milliseconds per call, one sample per timed run, and how they were taken: `method` is
    graph (one CUDA graph of `calls` calls replayed between two events), loop (`calls`
    back-to-back calls between two events), events (one call between two events), wall
    (the CPU's clock) or a backend's own (tvm_time_evaluator). graph_kernels: the kernel nodes
    the capture held (None: no capture)."""

    def __init__(self, times, method, calls=1, graph_kernels=None):
        super().__init__(times)
        self.method, self.calls, self.graph_kernels = method, calls, graph_kernels
