"""Apache TVM as two peer systems, the paper's TVM baseline with today's TVM:

  tvm     the workload's eager formulation (workloads.eager, the `torch` peer's function)
          exported with torch.export, imported into Relax
          (tvm.relax.frontend.torch.from_exported_program) and built by tvm.compile with
          TVM's default pipeline for the device: on CUDA its fused TIR functions get the
          dlight default GPU schedules (Matmul, GEMV, Reduction, GeneralReduction, Fallback)
  tvm-ms  the same Relax module with its fused TIR functions tuned by MetaSchedule: a
          budget of --tune-trials N trials over all of them, the records in a JSON database
          under --tune-db DIR (one folder per cell, named by its shape, dtype, mask, target
          and budget, so that concurrent cells never share one), the best schedules applied
          (MetaScheduleApplyDatabase) and dlight scheduling what the database lacks. A folder
          whose tuning ran to the end holds the file `tuned`: a rerun applies its records
          without tuning again (tune_reused=1 on the result line); an unfinished one is tuned
          again, MetaSchedule starting from the records it holds. The search is tune_relax's
          (evolutionary, default rules, gradient task scheduler) on the process's CPUs, its
          builder's worker processes kept for the whole search, its runner's random inputs
          kept per signature (_builder, _runner_init); on CUDA the candidates and the module
          are built with TIR's StorageRewrite off (TUNE_PASS_CONFIG: TVM 0.27's tensor-core
          schedules of float16 matmuls with float32 accumulation do not build with it)

The module is built for the shapes of the first call, so that call's extra time, export,
import, tuning and build included, is the cell's compile_s; tune_s on the result line is the
MetaSchedule search alone. The timed runs are TVM's own time evaluator on the VM's `main`
(timing=tvm_time_evaluator; calls_per_run calls per sample, timing.calls_per_sample's count,
as peer.py's for a CUDA graph). The VM allocates from TVM's pooled allocator, not torch's:
peak_mib is torch's peak (the inputs) plus tvm_mib, the device memory TVM holds after its first
call (cudaMemGetInfo before building the VM and after the call, less what torch reserved in
between). A workload TVM cannot export, import or build is `unsupported` with TVM's error.

TVM lives in a package folder of its own (TileLang 0.1.15 pins apache-tvm-ffi < 0.1.13,
apache-tvm 0.27 needs >= 0.1.14): $REPRO_TVM_PATH, else build/tvm-site (scripts/install.sh
--tvm puts it there), goes first on sys.path and PYTHONPATH (MetaSchedule's builder and
runner workers import tvm too). apache-tvm-ffi 0.1.15.post2 crashes (SIGSEGV) when
MetaSchedule builds a TuneContext with apache-tvm 0.27.0.post1; 0.1.14.post1 does not, so that
is the pinned one.
"""
import contextlib
import importlib
import os
import sys
import time

import timing
from errors import Unsupported, one_line

SYSTEMS = ("tvm", "tvm-ms")
IMPL = {"tvm": "tvm-relax-dlight", "tvm-ms": "tvm-relax-metaschedule"}
# The packages, pinned (`tvm_backend.py pins` prints them for scripts/install.sh --tvm and the
# GPU machine's wheels): TVM itself (numpy and typing_extensions come with torch); what
# MetaSchedule's search and worker pools import (tvm-ms); its XGBoost cost model, without which
# tvm-ms tunes with MetaSchedule's random cost model (cost_model= on the config line says which).
PINS = ("apache-tvm==0.27.0.post1", "apache-tvm-ffi==0.1.14.post1", "ml_dtypes==0.6.0")
TUNE_PINS = ("psutil==7.2.2", "cloudpickle==3.1.2")
COST_MODEL_PINS = ("xgboost-cpu==3.4.1", "scipy==1.18.1")
TUNE_MODULES = ("psutil", "cloudpickle")
INSTALL = ("scripts/install.sh --tvm (pip install --no-deps --target build/tvm-site %s %s, "
           "optionally %s; a folder of its own, REPRO_TVM_PATH); a GPU machine without network: "
           "the wheels of scripts/peers/tvm_gpu_check.sh"
           % (" ".join(PINS), " ".join(TUNE_PINS), " ".join(COST_MODEL_PINS)))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILDER_TIMEOUT_S = 300  # one candidate's build; a worker's first also imports tvm
RUNNER_TIMEOUT_S = 120  # one measurement: load (CUDA: NVRTC), inputs, runs
# tvm-ms on CUDA builds its candidates and its module with TIR's StorageRewrite off: in TVM
# 0.27.0.post1 it lets a tensor-core schedule's float32 output staging buffer reuse the float16
# operand buffers in shared memory, and LowerIntrin then rejects the wmma store's
# tvm_access_ptr ("tvm_access_ptr element type must match the source buffer (T.float16 vs.
# T.float32)"): every candidate of a float16 matmul with float32 accumulation failed to build.
TUNE_PASS_CONFIG = {"tirx.disable_storage_rewrite": True}
ALLOC_ARGUMENT = "repro.tvm_ms.alloc_argument"  # the runner's inputs, kept per signature


def site_dir():
    """The folder TVM is installed in: $REPRO_TVM_PATH, else build/tvm-site when it exists."""
    path = os.environ.get("REPRO_TVM_PATH", "")
    if path:
        return path
    default = os.path.join(ROOT, "build", "tvm-site")
    return default if os.path.isdir(default) else None


def _version(dist):
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:
        return "unknown"


def _fix_full_dtype(topi):
    """TVM 0.27.0.post1 legalises relax.full with its dtype as a PrimType, and topi.full tests
    `"float" in dtype` when the fill value is infinite (the causal mask's -inf): TypeError
    "argument of type 'PrimType' is not iterable". The dtype's name passes the test."""
    full = topi.full
    if getattr(full, "repro_fixed", False):
        return

    def fixed(shape, dtype, fill_value):
        return full(shape, dtype if isinstance(dtype, str) else str(dtype), fill_value)
    fixed.repro_fixed = True
    topi.full = fixed


def load(system, on_gpu=True):
    """The tvm module, with TVM's folder first on the paths; Unsupported when TVM does not
    import, sees no CUDA device for a GPU cell, or (tvm-ms) MetaSchedule's packages are
    missing."""
    if system not in SYSTEMS:
        raise ValueError("unknown TVM system " + system)
    path = site_dir()
    if path and path not in sys.path:
        sys.path.insert(0, path)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (path, os.environ.get("PYTHONPATH", "")) if p)
    try:
        tvm = importlib.import_module("tvm")
        importlib.import_module("tvm.relax.frontend.torch")
    except Exception as e:
        raise Unsupported("TVM does not import (%s: %s); install: %s"
                          % (type(e).__name__, one_line(e, 200), INSTALL)) from e
    _fix_full_dtype(importlib.import_module("tvm.topi"))
    if system == "tvm-ms":
        ffi = _version("apache-tvm-ffi")
        if ffi.startswith("0.1.15"):
            raise Unsupported("apache-tvm-ffi %s crashes (SIGSEGV) in MetaSchedule's TuneContext "
                              "with apache-tvm %s; install: %s"
                              % (ffi, _version("apache-tvm"), INSTALL))
        for module in TUNE_MODULES:
            try:
                importlib.import_module(module)
            except ImportError as e:
                raise Unsupported("MetaSchedule needs %s (%s); install: %s"
                                  % (module, one_line(e, 200), INSTALL)) from e
    if on_gpu and not tvm.cuda(0).exist:
        raise Unsupported("TVM %s sees no CUDA device (libtvm_runtime_cuda.so needs "
                          "libcudart.so.13 and libcuda.so.1)" % tvm.__version__)
    if on_gpu:
        _share_cudart()
    return tvm


def _share_cudart():
    """TVM's CUDA runtime library needs libcudart.so.13, which this process has from torch's
    wheels; MetaSchedule's workers import tvm without torch, so its folder goes on their
    LD_LIBRARY_PATH."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "libcudart.so" in line}
    except OSError:
        return
    folders = sorted({os.path.dirname(p) for p in paths if p.startswith("/")})
    old = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]
    os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(folders + [p for p in old
                                                               if p not in folders])


def config_pairs():
    """The versions a TVM cell ran with, for its config line."""
    return [("tvm", _version("apache-tvm")), ("tvm_ffi", _version("apache-tvm-ffi"))]


def cuda_compiler():
    """How TVM compiles its CUDA source: NVRTC through cuda-bindings (TVM's default), else
    nvcc; TVM_CUDA_COMPILE_MODE, when set, decides."""
    mode = os.environ.get("TVM_CUDA_COMPILE_MODE", "")
    if not mode:
        mode = "nvrtc" if importlib.util.find_spec("cuda") and _has_nvrtc() else "nvcc"
        os.environ["TVM_CUDA_COMPILE_MODE"] = mode
    return mode


def _has_nvrtc():
    try:
        importlib.import_module("cuda.bindings.nvrtc")
        return True
    except Exception:
        return False


@contextlib.contextmanager
def stdout_to_stderr():
    """Everything written to the process's stdout meanwhile (TVM's and MetaSchedule's logs,
    its workers' output) goes to stderr: stdout is the cell's log."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def tune_pass_config(target):
    """The PassContext config of tvm-ms's builds (candidates and module) for `target`."""
    return dict(TUNE_PASS_CONFIG) if target.kind.name == "cuda" else {}


def cores():
    """The CPUs this process may run on (MetaSchedule counts the machine's, psutil)."""
    return len(os.sched_getaffinity(0))


def _builder(workers, pass_config):
    """MetaSchedule's LocalBuilder, but its `workers` processes live for the whole tuning
    (LocalBuilder starts a pool per round, and its default_build imports
    tvm.s_tir.tensor_intrin in every worker: scripts/peers/README.md), and a candidate
    is built under `pass_config`. The build is default_build's without that import: a
    candidate's module holds its tensorized bodies, and the intrinsics' registry is the
    search's (this process). The workers get the functions by value (cloudpickle), so they
    import only tvm."""
    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.builder import BuilderResult, PyBuilder
    from tvm.support.popen_pool import PopenPoolExecutor, StatusKind

    def build_one(mod, target):  # in a worker
        import tvm
        from tvm.driver import build
        from tvm.s_tir.meta_schedule.builder.local_builder import default_export
        from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock
        with tvm.transform.PassContext(config=pass_config):
            module = build(RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod),
                           target=target)
        return default_export(module)

    @derived_object
    class PooledBuilder(PyBuilder):
        def __init__(self):
            super().__init__()
            self.pool = PopenPoolExecutor(max_workers=workers, timeout=BUILDER_TIMEOUT_S)

        def build(self, build_inputs):
            results = []
            for done in self.pool.map_with_error_catching(
                    lambda job: build_one(*job), [(b.mod, b.target) for b in build_inputs]):
                if done.status == StatusKind.COMPLETE:
                    results.append(BuilderResult(done.value, None))
                elif done.status == StatusKind.TIMEOUT:
                    results.append(BuilderResult(None, "LocalBuilder: Timeout, killed after "
                                                 "%d seconds" % BUILDER_TIMEOUT_S))
                else:
                    results.append(BuilderResult(None, "LocalBuilder: An exception occurred\n"
                                                 + str(done.value)))
            return results
    return PooledBuilder()


def _runner_init():
    """The initializer of the runner's worker: registers ALLOC_ARGUMENT, MetaSchedule's
    default_alloc_argument (tensors on the device, random_fill_for_measure) keeping the tensors
    of each signature for the next candidates, least recently used out first beyond a quarter
    of the device's memory. The fill runs on the host (this TVM has no cuRAND), so drawing the
    inputs of a task over the S x S scores again for every candidate costs more than its run
    (scripts/peers/README.md)."""
    name = ALLOC_ARGUMENT

    def init():  # in the runner's worker
        import collections

        import tvm
        import tvm_ffi
        from tvm.s_tir.meta_schedule.runner.local_runner import default_alloc_argument
        kept = collections.OrderedDict()  # key -> (arguments, bytes)

        def nbytes(info):
            count = 1
            for extent in info[2]:
                count *= int(extent)
            dtype = tvm.DataType(str(info[1]))
            return count * max(1, dtype.bits * dtype.lanes // 8)

        def alloc(device, args_info, alloc_repeat):
            key = (str(device), repr(args_info), alloc_repeat)
            if key in kept:
                kept.move_to_end(key)
                return kept[key][0]
            size = alloc_repeat * sum(nbytes(info) for info in args_info)
            limit = (device.total_global_memory or 2 ** 34) // 4
            while kept and sum(b for _, b in kept.values()) + size > limit:
                kept.popitem(last=False)
            args = default_alloc_argument(device, args_info, alloc_repeat)
            kept[key] = (args, size)
            return args
        tvm_ffi.register_global_func(name, alloc, override=True)
    return init


def trials_per_iter(trials):
    """Trials of one round of MetaSchedule's search: an eighth of the budget, 8 to 64 (its
    default), so that a small budget still reaches every task of the module."""
    return max(8, min(64, trials // 8))


class Tuning:
    """tvm-ms's budget: `trials` MetaSchedule trials, the database in DB/CELL.ARCH.tTRIALS
    (`db` None: a temporary folder, removed at the end); `cell` names the cell's shape."""

    def __init__(self, trials, db=None, cell="cell"):
        self.trials, self.db, self.cell = trials, db, cell


def _module(fn):
    """The nn.Module torch.export takes, around a function of tensors."""
    import torch

    class Wrapped(torch.nn.Module):
        def forward(self, *args):
            return fn(*args)
    return Wrapped()


class Compiled:
    """f(*inputs) -> tuple of torch tensors: at the first call the function `fn` (torch
    tensors in, a tuple of tensors out) is exported for the call's shapes, imported into Relax,
    tuned (tvm-ms), built for the device and loaded in a Relax VM; every call runs the VM."""

    def __init__(self, system, fn, device, tuning=None, seed=1):
        import torch
        import tvm
        self.tvm, self.system, self.fn, self.seed = tvm, system, fn, seed
        self.on_gpu = device.type == "cuda"
        self.dev = tvm.cuda(torch.cuda.current_device()) if self.on_gpu else tvm.cpu(0)
        self.target = tvm.target.Target.from_device(self.dev)
        if tuning is not None and self.target.kind.name == "llvm":  # MetaSchedule's CPU rules
            self.target = tvm.target.Target(dict(self.target.export(),
                                                 **{"num-cores": len(os.sched_getaffinity(0))}))
        self.compiler = cuda_compiler() if self.on_gpu else None
        self.tuning = tuning
        self.tune_dir = None
        if tuning is not None:
            arch = str(self.target.attrs.get("arch", "")) or self.target.kind.name
            self.tune_dir = os.path.join(tuning.db or "", "%s.%s.t%d" % (tuning.cell, arch,
                                                                        tuning.trials))
        self.vm = self.main = None
        self.tune_s, self.tune_reused, self.tvm_bytes = 0.0, 0, 0
        self.args_key, self.args = None, None

    def config_pairs(self):
        """The target and, for tvm-ms, the database folder, for the config line."""
        pairs = [("target", self.target.kind.name)]
        if "arch" in self.target.attrs:
            pairs.append(("arch", str(self.target.attrs["arch"])))
        if self.compiler:
            pairs.append(("cuda_compiler", self.compiler))
        if self.tuning is not None:
            pairs += [("tune_db", self.tune_dir if self.tuning.db else "temporary"),
                      ("cost_model", self._cost_model())]
        return pairs

    def result_pairs(self):
        pairs = [("tvm_mib", "%.1f" % (self.tvm_bytes / 2 ** 20))] if self.on_gpu else []
        if self.tuning is not None:
            pairs += [("tune_s", "%.2f" % self.tune_s), ("tune_reused", self.tune_reused)]
        return pairs

    @staticmethod
    def _cost_model():
        """MetaSchedule's XGBoost cost model where xgboost imports, else its random one."""
        try:
            importlib.import_module("xgboost")
            return "xgb"
        except Exception:
            return "random"

    def _relax(self, inputs):
        import torch
        from tvm.relax.frontend.torch import from_exported_program
        try:
            program = torch.export.export(_module(self.fn), tuple(inputs))
        except Exception as e:
            raise Unsupported("torch.export: %s: %s" % (type(e).__name__,
                                                         one_line(e, 600))) from e
        try:
            return from_exported_program(program)
        except Exception as e:
            raise Unsupported("Relax import (from_exported_program): %s: %s"
                              % (type(e).__name__, one_line(e, 600))) from e

    def _tune(self, mod):
        """mod with its fused TIR functions scheduled from MetaSchedule's database (tuned first
        unless the folder says its tuning ended)."""
        import tempfile
        tvm = self.tvm
        from tvm import relax
        with self.target:
            mod = tvm.transform.Sequential([relax.transform.DecomposeOpsForInference(),
                                            relax.transform.CanonicalizeBindings(),
                                            relax.get_pipeline("zero")])(mod)
        scratch = None
        if not self.tuning.db:
            scratch = tempfile.TemporaryDirectory(prefix="tvm-ms-")
            self.tune_dir = scratch.name
        try:
            done = os.path.join(self.tune_dir, "tuned")
            if os.path.exists(done):
                self.tune_reused = 1
            else:
                os.makedirs(self.tune_dir, exist_ok=True)
                t0 = time.perf_counter()
                self._search(mod)
                self.tune_s = time.perf_counter() - t0
                with open(done, "w") as f:
                    f.write("trials=%d tune_s=%.2f cost_model=%s\n"
                            % (self.tuning.trials, self.tune_s, self._cost_model()))
            with self.target:
                # A tuned record may name tensor intrinsics (wmma_*), which the registry holds
                # once tvm.s_tir.tensor_intrin is imported: the search imports it, a rerun that
                # reuses the records must too.
                importlib.import_module("tvm.s_tir.tensor_intrin")
                return relax.transform.MetaScheduleApplyDatabase(self.tune_dir)(mod)
        finally:
            if scratch is not None:
                scratch.cleanup()

    def _search(self, mod):
        """MetaSchedule's tune_relax, with the search's threads, the builder's processes and the
        runner's inputs as described at _builder and _runner_init."""
        from tvm.s_tir import meta_schedule as ms
        per_iter = trials_per_iter(self.tuning.trials)
        contexts, weights = ms.relax_integration.extracted_tasks_to_tune_contexts(
            ms.relax_integration.extract_tasks(mod, self.target), self.tune_dir,
            num_threads=cores(), seed=self.seed)
        builder = _builder(min(cores(), per_iter), tune_pass_config(self.target))
        runner = None
        try:
            runner = ms.runner.LocalRunner(timeout_sec=RUNNER_TIMEOUT_S,
                                           f_alloc_argument=ALLOC_ARGUMENT,
                                           initializer=_runner_init())
            ms.tune_tasks(tasks=contexts, task_weights=weights, work_dir=self.tune_dir,
                          max_trials_global=self.tuning.trials, num_trials_per_iter=per_iter,
                          builder=builder, runner=runner, cost_model=self._cost_model())
        finally:  # the workers go now: the runner's holds device memory
            builder.pool.shutdown()
            if runner is not None:
                runner.pool.shutdown()

    def _build(self, inputs):
        tvm = self.tvm
        from tvm import relax
        with stdout_to_stderr():
            mod = self._relax(inputs)
            if self.tuning is not None:
                mod = self._tune(mod)
            try:
                config = tune_pass_config(self.target) if self.tuning is not None else {}
                with (tvm.transform.PassContext(config=config) if config
                      else contextlib.nullcontext()):
                    executable = tvm.compile(mod, target=self.target)
            except Exception as e:
                raise Unsupported("tvm.compile for %s: %s: %s" % (
                    self.target.kind.name, type(e).__name__, one_line(e, 600))) from e
        _console_to_stderr()
        import torch
        free0 = reserved0 = 0
        if self.on_gpu:
            torch.cuda.synchronize()
            free0, reserved0 = torch.cuda.mem_get_info()[0], torch.cuda.memory_reserved()
        self.vm = relax.VirtualMachine(executable, self.dev)
        self.main = self.vm["main"]
        return free0, reserved0

    def _tvm_args(self, inputs):
        """The inputs as TVM tensors (zero-copy, DLPack), converted once per set of inputs."""
        key = tuple((t.data_ptr(), tuple(t.shape)) for t in inputs)
        if key != self.args_key:
            self.args_key = key
            self.args = [self.tvm.runtime.from_dlpack(t) for t in inputs]
        return self.args

    def __call__(self, *inputs):
        import torch
        first = self.vm is None
        if first:
            free0, reserved0 = self._build(inputs)
        result = self.main(*self._tvm_args(inputs))
        if first and self.on_gpu:
            torch.cuda.synchronize()
            self.dev.sync()
            grown = torch.cuda.memory_reserved() - reserved0
            self.tvm_bytes = max(0, free0 - torch.cuda.mem_get_info()[0] - grown)
        outputs = (result,) if hasattr(result, "shape") else tuple(result)
        return tuple(torch.from_dlpack(o) for o in outputs)

    def time_runs(self, inputs, warmup, runs):
        """timing.Samples of `runs` samples by TVM's time evaluator after `warmup` calls, each
        sample the mean of calls_per_run calls, enough to last timing.SAMPLE_MS."""
        args = self._tvm_args(inputs)
        for _ in range(warmup):
            self.main(*args)
        self.dev.sync()
        probe = self.vm.time_evaluator("main", self.dev, number=1, repeat=3)(*args)
        one_ms = min(probe.results) * 1e3
        calls = timing.calls_per_sample(one_ms)
        timer = self.vm.time_evaluator("main", self.dev, number=calls, repeat=runs)
        return timing.Samples([t * 1e3 for t in timer(*args).results], "tvm_time_evaluator", calls)


def _console_to_stderr():
    """MetaSchedule's console handler writes to the sys.stdout of its setup: to stderr now."""
    import logging
    for handler in logging.getLogger("tvm.s_tir.meta_schedule").handlers:
        if isinstance(handler, logging.StreamHandler) and getattr(handler, "stream",
                                                                  None) is sys.stdout:
            handler.setStream(sys.stderr)


def build(system, fn, device, tuning=None, seed=1):
    """(callable, impl name) of `fn` run by TVM (load() first)."""
    load(system, on_gpu=device.type == "cuda")
    if system == "tvm-ms" and (tuning is None or tuning.trials < 1):
        raise ValueError("tvm-ms needs a tuning budget (--tune-trials N, N >= 1)")
    return Compiled(system, fn, device, tuning if system == "tvm-ms" else None,
                    seed), IMPL[system]


if __name__ == "__main__":
    SETS = {"": PINS + TUNE_PINS + COST_MODEL_PINS, "required": PINS + TUNE_PINS,
            "cost-model": COST_MODEL_PINS}
    if sys.argv[1:2] != ["pins"] or len(sys.argv) > 3 or " ".join(sys.argv[2:]) not in SETS:
        sys.exit("usage: tvm_backend.py pins [required|cost-model]    (the packages, "
                 "NAME==VERSION one per line: all, those tvm and tvm-ms need, the XGBoost cost "
                 "model's)")
    print("\n".join(SETS[" ".join(sys.argv[2:])]))
