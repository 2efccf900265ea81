"""FlashTensor itself as a peer system: the paper's compiler (3rd/asuka of monellz/FlashTensor-AE,
built by scripts/flashtensor/build.sh against Debian 12's MLIR 19) running the artifact's own
pipeline, compile.py's `our` branch, on the artifact's own model of a workload
(asuka_exp/cases/kernels):

  export     the model to ONNX (the artifact's torch_module_to_onnx, simplify=False)
  tuning     asuka_from_onnx, fission, simplify, Connected (its partitions), optimize; the
             artifact's "tuning time" (tuning_s)
  profile    every candidate kernel timed on the GPU by triton.testing.do_bench in a child
             process, as the artifact does (profile_s; kernel_ms= of the chosen ones)
  codegen    the fastest set of kernels that computes every output, as one Python module of
             Triton kernels; loaded, and called on the kit's inputs

The pipeline runs at the first call, for its inputs' shapes (the artifact's models are traced
at fixed shapes), so that call is the cell's compile_s; the phases' times, the chosen kernels in
call order (kernels=) and where the generated source went (source_py=) are on the result line.
The generated source is kept in --keep-source DIR (REPRO_FLASHTENSOR_KEEP), named by the cell
($REPRO_CELL, else its shape). The artifact prints its graphs and IR: that goes to stderr.

The artifact's profile benchmarks every candidate in one child process and aborts when one of
them fails; a candidate Triton cannot build on this GPU (one that needs more shared memory than
the GPU has, as some of kf's do: scripts/flashtensor/README.md) is then dropped, as the
artifact's optimize() drops one that fails to lower, and the profile runs again over the
others (dropped= on the result line): what every kernel computes is unchanged, codegen chooses
among fewer. Any other failing step ends the cell `unsupported` with the step and the artifact's
own error. Cells its models cannot express are refused before: another workload than the seven
models, GQA (the models assert group_size == 1), no causal mask, bf16 (the profile draws
fp16/fp32 inputs only: Kernel.prepare_dummy_inputs).

The built module and the patched artifact sources are a folder (site-<cache tag>:
asuka/, asuka_exp/, FLASHTENSOR_SOURCE) at $REPRO_FLASHTENSOR_SITE, else
build/flashtensor/site-<this Python's cache tag>.
"""
import contextlib
import importlib.util
import os
import re
import sys
import time

from errors import Unsupported

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSTALL = ("scripts/install.sh --flashtensor, then REPRO_FLASHTENSOR_DIR=<a checkout of "
           "monellz/FlashTensor-AE> scripts/flashtensor/build.sh --python %s "
           "(scripts/flashtensor/README.md)")
IMPL = "flashtensor-asuka-triton"
# the steps of the artifact's "tuning time" (compile.py's tik..tok), as Compiled.step names them
TUNING_STEPS = ("asuka_from_onnx", "fission", "simplify", "Connected", "optimize")


def site_dir():
    """The folder holding asuka/ (the module and its Python), asuka_exp/ and FLASHTENSOR_SOURCE."""
    given = os.environ.get("REPRO_FLASHTENSOR_SITE")
    if given:
        return given
    build = os.environ.get("REPRO_BUILD_DIR") or os.path.join(ROOT, "build")
    return os.path.join(build, "flashtensor", "site-" + sys.implementation.cache_tag)


def source_pairs(site):
    """The FLASHTENSOR_SOURCE file's key=value lines (the artifact's commit, the patch's hash,
    MLIR's version), as config pairs; [] when absent."""
    try:
        with open(os.path.join(site, "FLASHTENSOR_SOURCE")) as f:
            lines = [line.strip().split("=", 1) for line in f if "=" in line]
    except OSError:
        return []
    return [(k, v) for k, v in lines if re.fullmatch(r"[a-z_]+", k)]


def load():
    """The artifact's modules (asuka's passes, the model zoo, the ONNX exporter), imported from
    site_dir(); Unsupported, with how to build them, when they are not there."""
    site = site_dir()
    if not os.path.isdir(os.path.join(site, "asuka")):
        raise Unsupported("FlashTensor (the artifact's compiler) is not built for this Python "
                          "(%s; no %s): %s" % (sys.implementation.cache_tag, site,
                                               INSTALL % sys.executable))
    if site not in sys.path:
        sys.path.insert(0, site)
    try:
        import onnx  # noqa: F401 (the exporter's)
        from asuka.asuka_ffi import ir  # noqa: F401 (the C++ module)
        from asuka.partition.connected import Connected
        from asuka.transform import fission
        from asuka.transform.common import simplify
        from asuka.translate import asuka_from_onnx
        from asuka_exp.cases.kernels import KERNEL_ZOO
        from asuka_exp.utils import torch_module_to_onnx
    except ImportError as e:
        raise Unsupported("FlashTensor's modules in %s do not import: %s" % (site, e)) from e
    return {"Connected": Connected, "fission": fission, "simplify": simplify,
            "asuka_from_onnx": asuka_from_onnx, "KERNEL_ZOO": KERNEL_ZOO,
            "torch_module_to_onnx": torch_module_to_onnx}


class Captured:
    """The artifact's stdout sent to stderr, its last `keep` characters kept for a reason."""

    def __init__(self, keep=1 << 16):
        self.keep, self.text = keep, ""

    def write(self, text):
        sys.__stderr__.write(text)
        self.text = (self.text + text)[-self.keep:]
        return len(text)

    def flush(self):
        sys.__stderr__.flush()

    def plain(self):
        """The text with the newlines of a printed bytes object (the profile's child stderr,
        which the artifact prints as b'...\\n...') made real."""
        return self.text.replace("\\n", "\n")

    def error_line(self):
        """The artifact's last line that names an error, if any."""
        lines = [line.strip() for line in self.plain().splitlines()]
        errors = [line for line in lines if re.search(r"error|Error|out of resource|failed", line)]
        return errors[-1] if errors else ""


@contextlib.contextmanager
def stdout_to_stderr(captured):
    """Python's and the C++ module's stdout to stderr for the duration (the cell's stdout is its
    log)."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(captured):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


# a line of codegen's function: `  k0_out_0, k0_out_1 = H2O_p1(arg_0, arg_1, arg_2)`
CALL_LINE = re.compile(r"^  ([\w, ]+) = (\w+)\(([\w, ]*)\)$", re.M)


def caller_source(py_str, func_name):
    """codegen's function (its `def FUNC(` block, the last thing it writes): the calls of the
    chosen kernels in order, CALL_LINE's lines."""
    return py_str[py_str.rfind("\ndef %s(" % func_name):]


def failed_candidate(text, partition):
    """The candidate whose benchmark the profile script was in when it failed (its traceback's
    last `in bench_NAME` frame), if it is one of the partition's kernels."""
    names = re.findall(r"in bench_(\w+)", text)
    kernels = [k.kernel_name for k in partition.kernels]
    return names[-1] if names and names[-1] in kernels else None


def drop_candidate(partition, name):
    """Removes candidate `name` from the partition, as the artifact's optimize() removes one
    that fails (its partition, outputs, kernel and the module's kernel)."""
    i = [k.kernel_name for k in partition.kernels].index(name)
    partition.module.erase_kernel(name)
    del partition.partitions[i], partition.output_ops[i], partition.kernels[i]


def refusal(workload, zoo, causal, dtype, groups, on_gpu):
    """Why the artifact cannot run this cell, or None."""
    if workload not in zoo:
        return ("the artifact has no model of %s (asuka_exp/cases/kernels: %s)"
                % (workload, ", ".join(sorted(zoo))))
    if groups > 1:
        return ("the artifact's models assert one K/V head per query head (group_size == 1); "
                "--groups %d" % groups)
    if not causal:
        return "the artifact's models are causal (a triu -inf mask in each forward)"
    if dtype != "fp16":
        return ("the artifact's compiler profiles kernels on fp16/fp32 inputs only "
                "(Kernel.prepare_dummy_inputs); --dtype %s" % dtype)
    if not on_gpu:
        return "the artifact's compiler profiles and runs Triton kernels on a CUDA GPU"
    return None


def config_pairs():
    """The artifact's commit, the patch's hash, MLIR's and Triton's versions."""
    import triton
    return source_pairs(site_dir()) + [("triton", triton.__version__)]


class Compiled:
    """f(*inputs) -> outputs: the artifact's pipeline on the first call's inputs, then its
    generated function."""

    def __init__(self, api, model, func_name, input_names, output_names, keep_dir, cell):
        self.api, self.model, self.func_name = api, model, func_name
        self.input_names, self.output_names = input_names, output_names
        self.keep_dir, self.cell = keep_dir, cell
        self.fn, self.phase_s, self.kernels, self.kernel_ms = None, {}, [], []
        self.source_py = ""
        self.module_source = ""  # codegen's function (caller_source)
        self.generated = None  # the generated module
        self.dropped = []  # candidates the profile could not run

    def compiled(self, inputs):
        """The generated function, the pipeline run for these inputs' shapes the first time."""
        if self.fn is None:
            self.fn = self.compile(inputs)
        return self.fn

    def __call__(self, *inputs):
        outputs = self.compiled(inputs)(*inputs)
        return outputs if isinstance(outputs, tuple) else (outputs,)

    def step(self, name, captured, work):
        t0 = time.perf_counter()
        try:
            return work()
        except Exception as e:  # noqa: BLE001 (the artifact's own failure, reported as is)
            detail = captured.error_line()
            raise Unsupported("the artifact's compiler failed at %s: %s: %s%s" % (
                name, type(e).__name__, " ".join(str(e).split())[:300],
                "; its output: " + detail[:300] if detail else "")) from e
        finally:
            self.phase_s[name] = self.phase_s.get(name, 0.0) + time.perf_counter() - t0

    def compile(self, inputs):
        api, captured = self.api, Captured()
        with stdout_to_stderr(captured):
            onnx_model = self.step("export", captured, lambda: api["torch_module_to_onnx"](
                module=self.model, input_names=self.input_names, inputs=list(inputs),
                output_names=self.output_names, simplify=False))
            module = self.step("asuka_from_onnx", captured,
                               lambda: api["asuka_from_onnx"](onnx_model, self.func_name))
            self.step("fission", captured, lambda: api["fission"](module))
            self.step("simplify", captured, lambda: api["simplify"](module))
            partition = self.step("Connected", captured,
                                  lambda: api["Connected"](module, self.func_name))
            self.step("optimize", captured, partition.optimize)
            perf = self.step("profile", captured, lambda: self.profile(partition, captured))
            py_str = self.step("codegen", captured, lambda: partition.codegen(perf))
            self.module_source = caller_source(py_str, self.func_name)
            self.kernels = [kernel for _, kernel, _ in CALL_LINE.findall(self.module_source)]
            self.kernel_ms = [perf.get(k, float("nan")) for k in self.kernels]
            return self.step("load", captured, lambda: self.load_source(py_str))

    def profile(self, partition, captured):
        """The artifact's profile; a candidate whose benchmark fails (Triton cannot build it on
        this GPU) is dropped as the artifact's optimize() drops one that fails to lower, and the
        profile runs again over the others (dropped= on the result line)."""
        while True:
            try:
                return partition.profile()
            except Exception:
                failed = failed_candidate(captured.plain(), partition)
                if failed is None or len(partition.kernels) < 2:
                    raise
                drop_candidate(partition, failed)
                self.dropped.append(failed)

    def phase_calls(self, inputs):
        """(name, call) per chosen kernel in call order, each bound to the inputs it gets in
        the generated function (the earlier kernels' outputs: run once here to make them).
        name: the artifact's kernel name without the model's prefix (H2O_p1 -> p1)."""
        self.compiled(inputs)
        module = self.generated
        values = {"arg_%d" % i: t for i, t in enumerate(inputs)}
        calls = []
        for outs, kernel, args in CALL_LINE.findall(self.module_source):
            fn = getattr(module, kernel)
            bound = [values[a.strip()] for a in args.split(",")]
            result = fn(*bound)
            result = result if isinstance(result, tuple) else (result,)
            values.update(zip([o.strip() for o in outs.split(",")], result))
            short = kernel[len(self.func_name) + 1:] if kernel.startswith(self.func_name + "_") \
                else kernel
            calls.append((short, lambda fn=fn, bound=bound: fn(*bound)))
        return calls

    def load_source(self, py_str):
        """The generated module (a file: Triton reads its kernels' source), as compile.py
        loads it."""
        import tempfile
        folder = self.keep_dir or tempfile.mkdtemp(prefix="flashtensor-")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, self.cell + ".py")
        with open(path, "w") as f:
            f.write(py_str)
        self.source_py = path
        spec = importlib.util.spec_from_file_location("flashtensor_" + self.cell.replace(".", "_"),
                                                      path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self.generated = module
        return getattr(module, self.func_name)

    def result_pairs(self):
        tuning = sum(self.phase_s.get(s, 0.0) for s in TUNING_STEPS)
        pairs = [("export_s", "%.2f" % self.phase_s.get("export", 0.0)),
                 ("tuning_s", "%.2f" % tuning),
                 ("profile_s", "%.2f" % self.phase_s.get("profile", 0.0)),
                 ("codegen_s", "%.2f" % (self.phase_s.get("codegen", 0.0)
                                         + self.phase_s.get("load", 0.0)))]
        if self.dropped:
            pairs.append(("dropped", ",".join(self.dropped)))
        if self.kernels:
            pairs += [("kernels", ",".join(self.kernels)),
                      ("kernel_ms", ",".join("%.6g" % t for t in self.kernel_ms))]
        if self.source_py:
            pairs.append(("source_py", self.source_py))
        return pairs


def cell_name(workload, batch, heads, seqlen, dim):
    cell = os.environ.get("REPRO_CELL", "")
    if cell.endswith(".log"):
        cell = cell[:-4]
    if re.fullmatch(r"[A-Za-z0-9._-]+", cell or ""):
        return cell
    return "%s.b%d.h%d.s%d.d%d" % (workload, batch, heads, seqlen, dim)


def build(workload, device, causal, dtype, groups, shape, keep_dir=None):
    """(Compiled, impl) for the workload; shape: (batch, heads, seqlen, dim)."""
    api = load()
    zoo = api["KERNEL_ZOO"]
    reason = refusal(workload, zoo, causal, dtype, groups, device.type == "cuda")
    if reason:
        raise Unsupported(reason)
    keep = keep_dir or os.environ.get("REPRO_FLASHTENSOR_KEEP") or None
    return compiled_for(api, workload, device, shape, keep), IMPL


def compiled_for(api, workload, device, shape, keep_dir=None):
    """The Compiled of the artifact's model of `workload` (MHA) at shape (batch, heads, seqlen,
    dim) on `device`, without build()'s refusals (the CPU test runs it to codegen)."""
    batch, heads, seqlen, dim = shape
    model = api["KERNEL_ZOO"][workload](kv_head_num=heads, head_num=heads, head_dim=dim)
    model = model.eval().to(device)
    # the names only: prepare() at one query and key draws nothing of size
    specs = model.prepare(batch_size=1, q_len=1, kv_len=1, device=device)
    return Compiled(api, model, type(model).__name__, list(specs["input"]),
                    list(specs["output"]), keep_dir, cell_name(workload, batch, heads, seqlen, dim))
