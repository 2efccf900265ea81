#!/usr/bin/env python3
"""peer.py: one FlashTensor workload (or the e2e Llama prefill) run by a PyTorch peer system,
printed as one log of the kit's contract (README.md "Log contract", common/kvline.h).

    peer.py --system S --workload W       (S: systems.SYSTEMS;
                                           W: kernels/attention/registry/workloads.def)
            [--seqlen 4096] [--batch 1] [--heads 32] [--dim 128] [--warmup N] [--runs N]
            [--seed 1] [--check|--no-check] [--check-pairs N] [--device gpu|cpu]
            [--causal 1|0] [--dtype fp16|bf16]       (attention-only workloads: COL_NONE)
            [--e2e [--layers 32] [--hidden 4096] [--mlp 11008] [--vocab 32000]]
            [--groups 1]                        (query heads per K/V head; kernel cells)
            [--block-size 32] [--selected-blocks 8] [--scale X]
                                                (selected-block workloads: KEYS_SELECTED_BLOCKS)
            [--tune-trials N [--tune-db DIR]]   (tvm-ms: MetaSchedule's budget and database)
            [--keep-source DIR] [--phase-times] (flashtensor: its generated Triton source;
                                                 each chosen kernel timed alone)

Rules shared with the kit's binaries (scripts/peers/README.md says more):
  inputs   q ~ N(0, 1) fp16 [B, S, H, D], k, v [B, S, H/G, D] from torch.Generator(seed),
           G = --groups the query heads per K/V head (the tile-benchmark seed's and TileLang's
           groups; 1: MHA; GQA's column statistics are per K/V head, [B, H/G, S], summed over
           the group, any for flags); COL_KEYFORMER's exp_rand = 1 + |N(0, 1)| fp32
           [B, H, S, S]; COL_ANY_GE_MASK's corm_mask[i][j] = 1 / (i + 1) fp32 [S, S];
           KEYS_SELECTED_BLOCKS: block_idx [B, S, H/G, T] (workloads.block_lists: the rule of
           kernels/attention/registry/selected_blocks.h)
  timing   `warmup` untimed calls, then `runs` timed runs (the first call, which compiles for
           inductor and flex, comes before and is reported as compile_s); avg/median/min/max
           in ms per call. A call of 2 ms or more is one run between two CUDA events
           (timing=events); a shorter one is timed as a CUDA graph of calls_per_run calls
           replayed between two events (timing=graph), or as that many back-to-back calls
           (timing=loop) when it cannot be captured or the graph holds fewer kernel nodes
           than calls (graph_kernels=, counted by the driver: launches that escaped the
           capture), so Python's launch cost is amortised as the C harness's is; on the CPU
           the wall clock (timing=wall). The tvm systems are
           timed by TVM's time evaluator (timing=tvm_time_evaluator, calls_per_run the same)
  flops    4*B*H*S^2*D per call, halved when causal (the paper's count); selected blocks:
           4*D per attended (b, h, query, key); no gflops for e2e
  memory   torch.cuda.reset_peak_memory_stats() right before the timed runs, then
           max_memory_allocated(): live inputs (and e2e weights, cache) plus the largest
           transient of a call; the CUDA context and the allocator's cached blocks are not in it
  check    the first call's outputs against an independent reference (fp32 on the GPU, fp64
           on the CPU) at the same size: `check output=... rel_l2=... max_abs=... ok=0|1`
Exit codes: 0 ok, 1 error, 2 usage, 3 oom, 4 unsupported, 5 check failed.
"""
import argparse
import contextlib
import ctypes
import errno
import os
import statistics
import sys
import time

import kvlog
import meta
import registry
import tvm_backend
from errors import Unsupported, one_line
from timing import MAX_CALLS_PER_SAMPLE, SAMPLE_MS, Samples, calls_per_sample  # noqa: F401

# The timing rule's numbers, SAMPLE_MS and MAX_CALLS_PER_SAMPLE, are named through peer too.
# systems, workloads and llama read the workload registry as they are imported, so peer.py
# imports them in the functions that use them, after main() has read it (a malformed
# workloads.def is one line on stderr, not a traceback); gemm.py and kron.py, which take their
# log, meta line and timing from peer, never read it.

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_OOM, EXIT_UNSUPPORTED, EXIT_CHECK = 0, 1, 2, 3, 4, 5
DTYPES = {"fp16": "float16", "bf16": "bfloat16"}  # --dtype -> torch attribute


def log_failed(where, err):
    """Ends the process with EXIT_ERROR after "PROG: writing the log to WHERE failed: REASON" on
    stderr: a log that cannot be written whole is no answer (the runner and the plot take a cut
    log as failed). The bytes still buffered for the log are dropped: they cannot be written."""
    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "peer.py"
    sys.stderr.write("%s: writing the log to %s failed: %s\n"
                     % (prog, where, getattr(err, "strerror", None) or err))
    sys.stderr.flush()
    os._exit(EXIT_ERROR)


class Log:
    """Writes kvline records to stdout, one flush per record (a killed run keeps its lines).
    A failed write or flush, and at close() a failed close, end the process (log_failed)."""

    def __init__(self, out=sys.stdout):
        self.out = out
        self.where = "stdout" if out is sys.__stdout__ else getattr(out, "name", "the log")
        self.tags = set()

    def _put(self, text):
        """Writes text whole, through the stream's binary layer: a short write (a full disk) is
        written on until it fails, where stdout's text layer under PYTHONUNBUFFERED would drop
        what a short write left and return as if all were written."""
        try:
            self.out.flush()
            binary = getattr(self.out, "buffer", None)
            if binary is None:  # a text stream with no bytes below (io.StringIO)
                self.out.write(text)
                return
            encoding, errors = self.out.encoding or "utf-8", self.out.errors or "strict"
            data = memoryview(text.encode(encoding, errors))
            while data:
                n = binary.write(data)
                if not n:
                    raise OSError(errno.EIO, "the log's stream took no bytes")
                data = data[n:]
            binary.flush()
        except OSError as e:
            log_failed(self.where, e)

    def comment(self, text):
        self._put("# %s\n" % text)

    def record(self, tag, pairs):
        self._put(kvlog.line(tag, pairs) + "\n")
        self.tags.add(tag)

    def close(self):
        """Flushes and closes the stream and its file descriptor, as gnulib's close_stdout does
        (a write error can first show at close: NFS, a full disk); log_failed when one fails.
        sys.stdout does not own descriptor 1, so that is closed here after the stream, then
        pointed at /dev/null: a stray write after the log (a library's teardown) neither fails
        nor lands in a file that took its number."""
        if self.out.closed:
            return
        raw = getattr(getattr(self.out, "buffer", None), "raw", None)
        try:
            fd = self.out.fileno() if raw is not None and not raw.closefd else None
            self.out.flush()
            self.out.close()
            if fd is not None:
                os.close(fd)
        except OSError as e:
            log_failed(self.where, e)
        if fd is not None:
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def exit_now(code):
    """Ends the process with `code` once stdout and stderr are flushed, skipping the
    interpreter's teardown: there PyTorch's autograd threads can abort the process ("terminate
    called without an active exception", signal 6) after the result line is written, which
    the runner would record as a failed cell. A failed flush of stdout (the log) ends it with
    EXIT_ERROR instead (log_failed)."""
    try:
        if not sys.stdout.closed:
            sys.stdout.flush()
    except OSError as e:
        log_failed("stdout", e)
    sys.stderr.flush()
    os._exit(code)


class Outcome(Exception):
    """Ends the run with a result line: status, exit code, reason."""

    def __init__(self, status, code, reason, pairs=()):
        super().__init__(reason)
        self.status, self.code, self.reason = status, code, reason
        self.pairs = list(pairs)  # timing etc. of a run that completed but failed its check


# ---- arguments -------------------------------------------------------------------------------

def int_at_least(minimum):
    """argparse type: an integer >= minimum (a bad value is a usage error, exit 2)."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError("expected an integer, got %r" % text) from None
        if value < minimum:
            raise argparse.ArgumentTypeError("expected an integer >= %d, got %d" % (minimum, value))
        return value
    return parse


positive_int, non_negative_int = int_at_least(1), int_at_least(0)


def positive_float(text):
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number, got %r" % text) from None
    if not (0 < value < float("inf")):
        raise argparse.ArgumentTypeError("expected a finite number > 0, got %r" % text)
    return value


def parse_tuning(p, args):
    """args.tuning: tvm-ms's budget (tvm_backend.Tuning, its database folder named by the
    cell), None for the other systems, which refuse the tuning options."""
    args.tuning = None
    if args.system != "tvm-ms":
        for option, value in (("--tune-trials", args.tune_trials), ("--tune-db", args.tune_db)):
            if value is not None:
                p.error("%s is tvm-ms's (MetaSchedule), not --system %s's%s" % (
                    option, args.system, " (TVM's default schedules, untuned)"
                    if args.system == "tvm" else ""))
        return
    if args.tune_trials is None:
        p.error("--system tvm-ms needs --tune-trials N (MetaSchedule's trial budget)")
    cell = "%s.b%d.h%d.s%d.d%d.%s.c%d" % (args.workload, args.batch, args.heads, args.seqlen,
                                          args.dim, args.dtype, args.causal)
    if (args.groups or 1) > 1 and registry.find(args.workload).keys == "KEYS_DENSE":
        cell += ".g%d" % args.groups  # GQA: other shapes, a database of their own
    args.tuning = tvm_backend.Tuning(args.tune_trials, args.tune_db, cell)


def parse_args(argv):
    import systems
    p = argparse.ArgumentParser(prog="peer.py", description=__doc__.split("\n")[0])
    p.add_argument("--system", required=True, choices=systems.SYSTEMS)
    p.add_argument("--workload", required=True, choices=registry.names())
    p.add_argument("--seqlen", type=positive_int, default=4096)
    p.add_argument("--batch", type=positive_int, default=1)
    p.add_argument("--heads", type=positive_int, default=32)
    p.add_argument("--dim", type=positive_int, default=128)
    p.add_argument("--warmup", type=non_negative_int, default=None,
                   help="untimed calls (default 100, e2e 2)")
    p.add_argument("--runs", type=positive_int, default=None,
                   help="timed calls (default 10, e2e 5)")
    p.add_argument("--seed", type=non_negative_int, default=1)
    p.add_argument("--check", dest="check", action="store_true", default=True)
    p.add_argument("--no-check", dest="check", action="store_false")
    p.add_argument("--check-pairs", type=non_negative_int, default=0,
                   help="check only N (b, h) pairs spread over the batch and heads "
                        "(0: all; the check line names them)")
    p.add_argument("--causal", type=int, choices=(0, 1), default=1,
                   help="causal mask (1) or none (0); 0 only for attention-only workloads")
    p.add_argument("--dtype", choices=("fp16", "bf16"), default="fp16",
                   help="q, k, v and output dtype; bf16 only for attention-only workloads")
    p.add_argument("--device", choices=("gpu", "cpu"), default="gpu")
    p.add_argument("--e2e", action="store_true", help="the Llama-2-7B-shaped prefill")
    p.add_argument("--layers", type=positive_int, default=32)
    p.add_argument("--hidden", type=positive_int, default=4096)
    p.add_argument("--mlp", type=positive_int, default=11008)
    p.add_argument("--vocab", type=positive_int, default=32000)
    p.add_argument("--groups", type=positive_int, default=None,
                   help="query heads per K/V head, dividing --heads (--heads / GROUPS K/V "
                   "heads), the seed's and TileLang's groups (every workload's kernel cells; "
                   "default 1: MHA)")
    p.add_argument("--block-size", type=positive_int, default=None,
                   help="keys per block (selected-block workloads; default 32)")
    p.add_argument("--selected-blocks", type=positive_int, default=None,
                   help="blocks per query's list (selected-block workloads; default 8)")
    p.add_argument("--scale", type=positive_float, default=None,
                   help="softmax scale (selected-block workloads; default 1/sqrt(dim))")
    p.add_argument("--tune-trials", type=positive_int, default=None,
                   help="MetaSchedule's trial budget over all of the module's functions "
                   "(tvm-ms, which needs it)")
    p.add_argument("--tune-db", default=None, metavar="DIR",
                   help="folder of tvm-ms's tuning databases, one subfolder per cell, reused "
                   "by a rerun (default: a temporary one)")
    p.add_argument("--keep-source", default=None, metavar="DIR",
                   help="folder for flashtensor's generated Triton source, one file per cell "
                   "(flashtensor only; default: a temporary folder)")
    p.add_argument("--phase-times", action="store_true",
                   help="also time each of the system's kernels alone, one `phase` line each "
                   "(flashtensor: the kernels its codegen chose, named as the artifact names "
                   "them without the model's prefix: p1, p4, ...)")
    args = p.parse_args(argv)
    parse_tuning(p, args)
    if args.phase_times and (args.system != "flashtensor" or args.e2e):
        p.error("--phase-times is flashtensor's kernel cells' (its chosen kernels one by one), "
                "not --system %s%s" % (args.system, " --e2e" if args.e2e else ""))
    if args.keep_source is not None and args.system != "flashtensor":
        p.error("--keep-source is flashtensor's (its generated source), not --system %s's"
                % args.system)
    block_opts = [o for o, v in (("--block-size", args.block_size),
                                 ("--selected-blocks", args.selected_blocks),
                                 ("--scale", args.scale)) if v is not None]
    args.blocks = None
    groups = args.groups or 1
    if args.heads % groups:
        p.error("--groups %d must divide --heads %d (--groups is the query heads per K/V "
                "head: H/G K/V heads)" % (groups, args.heads))
    if registry.find(args.workload).keys == "KEYS_SELECTED_BLOCKS":
        import workloads as wl
        args.blocks = wl.Blocks(groups, args.block_size or 32, args.selected_blocks or 8,
                                args.scale)
    elif block_opts:
        p.error("%s is an option of the selected-block workloads, not of --workload %s"
                % (block_opts[0], args.workload))
    args.gqa = groups if args.blocks is None else 1  # a dense workload's G (GQA when > 1)
    if args.warmup is None:
        args.warmup = 2 if args.e2e else 100
    if args.runs is None:
        args.runs = 5 if args.e2e else 10
    if args.e2e:
        if args.batch != 1:
            p.error("--e2e runs batch 1 only (got --batch %d)" % args.batch)
        if args.hidden % args.heads or (args.hidden // args.heads) % 2:
            p.error("--hidden %d must be --heads %d times an even head dim"
                    % (args.hidden, args.heads))
        args.dim = args.hidden // args.heads
    return args


# ---- config ----------------------------------------------------------------------------------

def config_pairs(args, impl):
    pairs = []
    if args.e2e:
        pairs.append(("experiment", "e2e"))
    pairs += [("workload", args.workload), ("system", args.system), ("batch", args.batch),
              ("heads", args.heads), ("dim", args.dim), ("seqlen", args.seqlen)]
    if args.e2e:
        pairs += [("layers", args.layers), ("hidden", args.hidden), ("mlp", args.mlp),
                  ("vocab", args.vocab)]
    pairs += [("dtype", args.dtype), ("causal", args.causal), ("device", args.device),
              ("impl", impl), ("seed", args.seed)]
    import systems
    if args.system in systems.TVM:
        pairs.append(("tune_trials", args.tune_trials or 0))
    if impl != "none":  # the package versions of a system that got as far as its build
        pairs += systems.config_pairs(args.system)
    if args.gqa > 1:  # a dense workload's GQA (MHA's config line has neither)
        pairs += [("groups", args.gqa), ("kv_heads", args.heads // args.gqa)]
    if args.blocks is not None:
        pairs += [("groups", args.blocks.groups),
                  ("kv_heads", args.blocks.kv_heads(args.heads)),
                  ("block_size", args.blocks.block_size),
                  ("selected_blocks", args.blocks.selected),
                  ("scale", "%.6g" % args.blocks.scale_for(args.dim))]
    return pairs


# ---- timing ----------------------------------------------------------------------------------

def fmt(x):
    """A time on the result line: 6 significant digits, as the C harness's HX_MS_FMT (a
    microsecond time keeps its digits: 3.2e-05, never 0.0000)."""
    return "%.6g" % x


# A result line lists each run's time (samples_ms=) up to this many runs, as the C harness's
# HX_MAX_LISTED_SAMPLES.
MAX_LISTED_SAMPLES = 1000


def event_ms(torch, launch):
    """Milliseconds between two CUDA events around launch()."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    launch()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_GRAPH = 0, 5  # CUgraphNodeType (cuda.h)


def _graph_nodes(driver, raw_graph):
    """The nodes of a CUgraph, through the driver's cuGraphGetNodes."""
    count = ctypes.c_size_t(0)
    if driver.cuGraphGetNodes(ctypes.c_void_p(raw_graph), None, ctypes.byref(count)) != 0:
        raise RuntimeError("cuGraphGetNodes failed")
    nodes = (ctypes.c_void_p * count.value)()
    if count.value and driver.cuGraphGetNodes(ctypes.c_void_p(raw_graph), nodes,
                                              ctypes.byref(count)) != 0:
        raise RuntimeError("cuGraphGetNodes failed")
    return list(nodes)[:count.value]


def _kernel_nodes(driver, raw_graph):
    """Kernel nodes in a CUgraph, child graphs included."""
    kernels = 0
    for node in _graph_nodes(driver, raw_graph):
        kind = ctypes.c_int(-1)
        if driver.cuGraphNodeGetType(ctypes.c_void_p(node), ctypes.byref(kind)) != 0:
            raise RuntimeError("cuGraphNodeGetType failed")
        if kind.value == CU_GRAPH_NODE_TYPE_KERNEL:
            kernels += 1
        elif kind.value == CU_GRAPH_NODE_TYPE_GRAPH:
            child = ctypes.c_void_p()
            if driver.cuGraphChildGraphNodeGetGraph(ctypes.c_void_p(node),
                                                    ctypes.byref(child)) != 0:
                raise RuntimeError("cuGraphChildGraphNodeGetGraph failed")
            kernels += _kernel_nodes(driver, child.value)
    return kernels


def graph_kernel_count(graph):
    """The kernel nodes a captured torch.cuda.CUDAGraph(keep_graph=True) holds, or None when
    the driver cannot be asked. A call that launches on a stream other than the capturing
    one (or whose launch fails quietly) leaves no node, and replaying the graph then times
    nothing, so the count decides whether the graph can stand for the calls."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
        raw = graph.raw_cuda_graph()
        return _kernel_nodes(driver, int(raw))
    except Exception:  # noqa: BLE001 (no driver or no raw graph: the count is unknown)
        return None


def capture_graph(torch, call, calls, stream=None):
    """(graph, kernel nodes) for a CUDA graph of `calls` calls, instantiated; (None, None)
    when the call cannot be captured (a host sync, a generator that is not graph-safe, ...).
    stream: the stream the call's kernels run on, captured there (a backward runs on its
    forward's stream, not on the capture's own); else a side stream."""
    side = stream if stream is not None else torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    try:
        with torch.cuda.stream(side):
            call()  # the allocator's warmup on the capture stream
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph(keep_graph=True)
        with torch.cuda.graph(graph, stream=stream):  # stream None: torch's own side stream
            for _ in range(calls):
                call()
        torch.cuda.synchronize()
        kernels = graph_kernel_count(graph)
        graph.instantiate()
        return graph, kernels
    except Exception:  # noqa: BLE001 (any capture failure means: time it without a graph)
        torch.cuda.synchronize()
        return None, None


def on_stream(torch, stream):
    """The context that makes `stream` the current CUDA stream (nothing when it is None)."""
    return contextlib.nullcontext() if stream is None else torch.cuda.stream(stream)


def time_calls(torch, call, warmup, runs, on_gpu, stream=None):
    """Samples of `runs` timed runs after `warmup` untimed calls. On the GPU, a call shorter
    than SAMPLE_MS is timed as the runs of a CUDA graph of enough calls to fill SAMPLE_MS,
    divided by their number; back-to-back calls instead when the call cannot be captured or
    the graph holds fewer kernel nodes than calls (its launches escaped the capture), or
    when the nodes cannot be counted. stream: the stream the call's kernels run on (a
    backward's: its forward's stream); the calls, their events and the capture run there."""
    stream = stream if on_gpu else None
    with on_stream(torch, stream):
        return _time_calls(torch, call, warmup, runs, on_gpu, stream)


def _time_calls(torch, call, warmup, runs, on_gpu, stream):
    for _ in range(warmup):
        call()
    if not on_gpu:
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            call()
            times.append((time.perf_counter() - t0) * 1e3)
        return Samples(times, "wall")
    torch.cuda.synchronize()
    one = min(event_ms(torch, call) for _ in range(3))
    calls = calls_per_sample(one)
    if calls == 1:
        return Samples([event_ms(torch, call) for _ in range(runs)], "events")
    graph, kernels = capture_graph(torch, call, calls, stream)
    if graph is not None and kernels is not None and kernels >= calls:
        graph.replay()  # its first replay uploads the graph
        return Samples([event_ms(torch, graph.replay) / calls for _ in range(runs)], "graph",
                       calls, kernels)

    def loop():
        for _ in range(calls):
            call()
    return Samples([event_ms(torch, loop) / calls for _ in range(runs)], "loop", calls, kernels)


def timing_pairs(times):
    return [("avg_ms", fmt(statistics.fmean(times))), ("median_ms", fmt(statistics.median(times))),
            ("min_ms", fmt(min(times))), ("max_ms", fmt(max(times)))]


def first_call(torch, call, on_gpu):
    """(outputs, seconds) of the first call: the compile for inductor and flex."""
    if on_gpu:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    outputs = call()
    if on_gpu:
        torch.cuda.synchronize()
    return outputs, time.perf_counter() - t0


# ---- the two experiments ---------------------------------------------------------------------

def check_pairs(name, got, want, compare, tol):
    rel, max_abs, ok = compare(got, want, tol)
    return ok, [("output", name), ("rel_l2", "%.3e" % rel), ("max_abs", "%.3e" % max_abs),
                ("ok", int(ok))]


def run_kernel(torch, args, log, device):
    import systems
    import workloads as wl
    on_gpu = device.type == "cuda"
    causal = bool(args.causal)
    fn, impl = systems.build(args.system, args.workload, args.seqlen, device, causal=causal,
                             dtype=args.dtype, blocks=args.blocks, tuning=args.tuning,
                             seed=args.seed, groups=args.gqa,
                             shape=(args.batch, args.heads, args.seqlen, args.dim),
                             keep_source=args.keep_source)
    log.record("config", config_pairs(args, impl) + list(getattr(fn, "config_pairs", list)()))
    inputs = wl.make_inputs(args.workload, args.batch, args.seqlen, args.heads, args.dim,
                            args.seed, device, dtype=getattr(torch, DTYPES[args.dtype]),
                            blocks=args.blocks, groups=args.gqa)
    outputs, compile_s = first_call(torch, lambda: fn(*inputs), on_gpu)
    checks_ok = True
    if args.check:
        ref_dtype = torch.float32 if on_gpu else torch.float64
        bh = wl.sample_pairs(args.batch, args.heads, args.check_pairs)
        want = wl.reference(args.workload, *inputs, dtype=ref_dtype, causal=causal, pairs=bh,
                            blocks=args.blocks)
        for name, got, ref in zip(wl.OUTPUTS[args.workload], outputs, want):
            ok, pairs = check_pairs(name, wl.select_pairs(name == "out", got, bh, args.gqa),
                                    ref, wl.compare, wl.tolerance(args.workload, name))
            if bh is not None:
                pairs.insert(-1, ("pairs", " ".join("%d:%d" % p for p in bh)))
            checks_ok &= ok
            log.record("check", pairs)
        del want
    del outputs

    def call():
        fn(*inputs)  # outputs dropped at once: one call's outputs are live at a time
    timer = getattr(fn, "time_runs", None)  # a system that times itself (tvm)
    times = timed_runs(torch, call, args, on_gpu,
                       timer and (lambda: timer(inputs, args.warmup, args.runs)))
    if args.phase_times:
        record_phases(torch, fn, inputs, args, log, on_gpu)
    gflop = wl.gflop(args.workload, args.batch, args.seqlen, args.heads, args.dim, causal,
                     args.blocks)
    extra = list(getattr(fn, "result_pairs", list)())
    pairs = result_pairs(torch, times, args, on_gpu, gflop * 1e9,
                         getattr(fn, "tvm_bytes", 0))
    return finish(pairs, checks_ok, compile_pairs(args.system, compile_s) + extra)


def run_e2e(torch, args, log, device):
    import llama
    import systems
    import workloads as wl
    on_gpu = device.type == "cuda"
    cfg = llama.Config(layers=args.layers, hidden=args.hidden, heads=args.heads, mlp=args.mlp,
                       vocab=args.vocab, seqlen=args.seqlen)
    layer_fn = llama.layer_forward
    if args.system == "inductor":
        # the whole decoder layer (attention included) compiled; the selection stays eager
        attn_fn, _ = systems.build("torch", args.workload, args.seqlen, device)
        layer_fn = torch.compile(llama.layer_forward, dynamic=False)
        impl = "torch-compile-inductor-layer"
    else:
        attn_fn, impl = systems.build(args.system, args.workload, args.seqlen, device)
    log.record("config", config_pairs(args, impl))
    weights = llama.make_weights(cfg, args.seed, device)
    corm_mask = (wl.corm_mask(cfg.seqlen, device) if wl.extra_input(args.workload) == "corm_mask"
                 else None)
    cache = llama.Cache(cfg, args.workload, device)

    def forward(gen):
        return llama.forward(attn_fn, args.workload, cfg, weights, cache, corm_mask, gen,
                             layer_fn=layer_fn)

    def generator(seed):
        g = torch.Generator(device=device)
        g.manual_seed(seed)
        return g
    # the check's forward and the reference draw kf's exp_rand from the same stream
    hidden, compile_s = first_call(torch, lambda: forward(generator(args.seed + 1)), on_gpu)
    checks_ok = True
    if args.check:
        ref_dtype = torch.float32 if on_gpu else torch.float64
        want = llama.reference_forward(args.workload, cfg, weights, corm_mask,
                                       generator(args.seed + 1), dtype=ref_dtype)
        checks_ok, pairs = check_pairs("hidden", hidden, want, wl.compare, wl.HIDDEN_TOLERANCE)
        log.record("check", pairs)
        del want
    del hidden
    gen = generator(args.seed + 2)
    times = timed_runs(torch, lambda: forward(gen), args, on_gpu)
    pairs = result_pairs(torch, times, args, on_gpu)
    return finish(pairs, checks_ok, compile_pairs(args.system, compile_s))


def record_phases(torch, fn, inputs, args, log, on_gpu):
    """One `phase` line per kernel of a system that runs as a sequence of kernels (flashtensor's
    chosen ones, fn.phase_calls), each timed alone on its own inputs under the same rule."""
    for name, call in fn.phase_calls(inputs):
        times = time_calls(torch, call, args.warmup, args.runs, on_gpu)
        log.record("phase", [("name", name)] + timing_pairs(times) + [("runs", args.runs)]
                   + ([("timing", times.method)] if hasattr(times, "method") else []))


def timed_runs(torch, call, args, on_gpu, timer=None, stream=None):
    """The times (ms) of args.runs calls after args.warmup; peak memory counts from here.
    timer: a system's own timing of them, returning Samples (tvm); stream: time_calls'."""
    if on_gpu:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    if timer is not None:
        return timer()
    return time_calls(torch, call, args.warmup, args.runs, on_gpu, stream)


def result_pairs(torch, times, args, on_gpu, flops=None, outside_torch=0):
    """The result pairs of a timed cell: times, runs, GFLOP/s of `flops` per call when given,
    peak MiB on the GPU (torch's peak plus `outside_torch` bytes held by another allocator,
    TVM's)."""
    pairs = timing_pairs(times) + [("runs", args.runs), ("warmup", args.warmup)]
    if hasattr(times, "method"):  # Samples (timing.Samples, a backend's own too)
        pairs.append(("timing", times.method))
        if times.calls > 1:
            pairs.append(("calls_per_run", times.calls))
        if times.graph_kernels is not None:
            pairs.append(("graph_kernels", times.graph_kernels))
    if flops is not None:
        pairs.append(("gflops_s", "%.1f" % (flops / (statistics.fmean(times) / 1e3) / 1e9)))
    if on_gpu:
        peak = torch.cuda.max_memory_allocated() + outside_torch
        pairs.append(("peak_mib", "%.1f" % (peak / 2 ** 20)))
    return pairs + samples_pairs(times)


def samples_pairs(times):
    """samples_ms: each run's time in the order the runs ran, as the C harness lists them (none
    for more than MAX_LISTED_SAMPLES runs), so a slow run shows where it fell."""
    if not 0 < len(times) <= MAX_LISTED_SAMPLES:
        return []
    return [("samples_ms", ",".join(fmt(t) for t in times))]


def compile_pairs(system, compile_s):
    """compile_s for the systems that compile (their first call's extra time)."""
    import systems
    return [("compile_s", "%.2f" % compile_s)] if system in systems.COMPILED else []


def finish(pairs, checks_ok, extra=(),
           failed="an output is off the reference (see the check lines)"):
    """The result pairs of a completed run (with `extra` appended), or Outcome when a check
    failed (the pairs still logged)."""
    pairs = pairs + list(extra)
    if not checks_ok:
        raise Outcome("error", EXIT_CHECK, "check failed: " + failed, pairs)
    return pairs


# ---- main ------------------------------------------------------------------------------------

def is_oom(torch, exc):
    oom_type = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError",
                                                                   None)
    return (oom_type is not None and isinstance(exc, oom_type)) or "out of memory" in str(exc)


def run_logged(args, log, cell, config, classify=None, also_needs=""):
    """Writes one cell's whole log and returns its exit code: the header, the meta line, what
    cell(torch) records (it returns the result pairs or raises Outcome), and a result line
    whatever happens; config() gives the config pairs of a log that failed before its own,
    classify(exc) may name (status, code) for an exception that is neither OOM nor an error;
    also_needs ends the reason of a cell without torch (what else the system needs). The log
    is closed at the end (Log.close: a failed write ends the process with EXIT_ERROR)."""
    code = write_log(args, log, cell, config, classify, also_needs)
    log.close()
    return code


def write_log(args, log, cell, config, classify, also_needs):
    """run_logged's log up to its result line; the exit code."""
    log.comment("repro-log 1")
    try:
        import torch
    except ImportError as e:
        torch = None
        missing = "PyTorch is not installed (%s)%s" % (one_line(e), also_needs)
    log.record("meta", meta.meta_pairs(torch, args.device))
    try:
        if torch is None:
            raise Outcome("unsupported", EXIT_UNSUPPORTED, missing)
        if args.device == "gpu" and not torch.cuda.is_available():
            raise Outcome("unsupported", EXIT_UNSUPPORTED, "torch %s sees no CUDA device"
                          % torch.__version__)
        pairs = cell(torch)
        log.record("result", [("status", "ok")] + pairs)
        return EXIT_OK
    except Outcome as o:
        if "config" not in log.tags:
            log.record("config", config())
        log.record("result", [("status", o.status)] + o.pairs + [("reason", o.reason)])
        return o.code
    except Exception as e:  # every failure still ends the log with a result line
        if torch is not None and is_oom(torch, e):
            status, code = "oom", EXIT_OOM
        else:
            status, code = (classify and classify(e)) or ("error", EXIT_ERROR)
        if "config" not in log.tags:
            log.record("config", config())
        log.record("result", [("status", status), ("reason", "%s: %s" % (type(e).__name__,
                                                                          one_line(e)))])
        return code


def attention_cell(torch, args, log):
    """An attention cell of peer.py (kernel or e2e): its result pairs, or Outcome."""
    device = torch.device("cuda" if args.device == "gpu" else "cpu")
    if args.e2e and args.blocks is not None:
        raise Outcome("unsupported", EXIT_UNSUPPORTED, "workload %s attends to selected key "
                      "blocks: the e2e model has no block lists or KV-cache selection rule "
                      "for it" % args.workload)
    import systems
    if args.e2e and args.system in systems.KERNEL_ONLY:
        raise Outcome("unsupported", EXIT_UNSUPPORTED, "%s runs kernel cells only (--e2e: "
                      "the model around the attention is PyTorch)" % args.system)
    if args.e2e and args.gqa > 1:
        raise Outcome("unsupported", EXIT_UNSUPPORTED, "the e2e model is MHA (Llama-2-7B "
                      "shaped: as many K/V heads as query heads); --groups is for kernel cells")
    if args.e2e and (args.causal != 1 or args.dtype != "fp16"):
        raise Outcome("unsupported", EXIT_UNSUPPORTED, "the e2e model is a causal fp16 "
                      "prefill (--causal 0 and --dtype bf16 are for kernel cells)")
    try:
        runner = run_e2e if args.e2e else run_kernel
        return runner(torch, args, log, device)
    except Unsupported as e:
        raise Outcome("unsupported", EXIT_UNSUPPORTED, str(e)) from e


def run(args, log):
    """Runs the cell; returns the exit code after writing the result line."""
    def no_sdpa_kernel(e):  # SDPA refusing the shape is "unsupported", not a failure
        if args.system.startswith("sdpa") and "No available kernel" in str(e):
            return "unsupported", EXIT_UNSUPPORTED
        return None
    import systems
    return run_logged(args, log, lambda torch: attention_cell(torch, args, log),
                      lambda: config_pairs(args, "none"), no_sdpa_kernel,
                      systems.also_needs(args.system))


def main(argv=None):
    try:
        registry.workloads()
    except registry.RegistryError as e:
        print("peer.py: %s" % e, file=sys.stderr)
        return EXIT_ERROR
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run(args, Log())


if __name__ == "__main__":
    sys.exit(main())
