"""The meta line of every peer's log (peer.py, gemm.py, kron.py): the GPU, driver, CUDA, torch
and Python versions, the commit the tree was built from, the date and the host; on a GPU also
the model in numbers (SMs, max SM clock, power limit) and the GPU the runner pinned the cell
to. It imports nothing of the kit."""
import datetime
import os
import socket
import subprocess
import sys


def command_output(cmd, cwd=None):
    """stdout of cmd stripped, or None when it cannot run or fails."""
    try:
        res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout.strip() if res.returncode == 0 else None


def git_commit():
    """The commit this tree was built from: $REPRO_COMMIT, else $REPRO_BUILD_DIR/bin/COMMIT or
    build/bin/COMMIT (written by every build, beside the binaries the same run uses), else git
    (with -dirty).

    The build's record comes before git because a copy of the tree can carry a .git that is
    not its own: on the GPU machines git answered the checkout's first commit, '-dirty',
    while the files were a later commit's (the peer logs of 2026-11-22 say 90faf1f-dirty for
    a tree at e18d394/6cef2bc)."""
    here = os.path.dirname(os.path.abspath(__file__))
    commit = os.environ.get("REPRO_COMMIT", "").strip()
    builds = [os.path.join(here, "..", "..", "build")]
    if os.environ.get("REPRO_BUILD_DIR"):  # the build the runner's binaries come from
        builds.insert(0, os.environ["REPRO_BUILD_DIR"])
    for build in builds:
        if commit:
            break
        try:
            with open(os.path.join(build, "bin", "COMMIT")) as f:
                commit = f.read().strip()
        except OSError:
            commit = ""
    if commit:
        return commit
    commit = command_output(["git", "rev-parse", "--short", "HEAD"], cwd=here)
    if not commit:
        return "unknown"
    dirty = command_output(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here)
    return commit + ("-dirty" if dirty else "")


def nvidia_smi_query(fields, units=True):
    """nvidia-smi's CSV answer for the GPU the runner pinned this cell to ($REPRO_GPU_UUID;
    nvidia-smi ignores CUDA_VISIBLE_DEVICES), else for every GPU; None when it cannot run."""
    cmd = ["nvidia-smi", "--query-gpu=" + fields,
           "--format=csv,noheader" + ("" if units else ",nounits")]
    if os.environ.get("REPRO_GPU_UUID"):
        cmd += ["-i", os.environ["REPRO_GPU_UUID"]]
    return command_output(cmd)


def nvidia_smi_gpu():
    """(name, cc, driver) of this cell's GPU (the first nvidia-smi lists), or None."""
    text = nvidia_smi_query("name,compute_cap,driver_version")
    if not text:
        return None
    fields = [f.strip() for f in text.splitlines()[0].split(",")]
    return tuple(fields) if len(fields) == 3 else None


def nvidia_smi_limits():
    """(max SM clock MHz, power limit W) of this cell's GPU as nvidia-smi prints them, or None:
    with the SM count they tell an H100 SXM (132 SMs, 1980 MHz, 700 W) from a PCIe one."""
    text = nvidia_smi_query("clocks.max.sm,power.limit", units=False)
    if not text:
        return None
    fields = [f.strip() for f in text.splitlines()[0].split(",")]
    return tuple(fields) if len(fields) == 2 else None


def meta_pairs(torch, device):
    smi = nvidia_smi_gpu()
    sms, uuid = None, ""
    gpu, cc, driver = smi if smi else ("none", "none", "unknown")
    cuda, torch_version = "unknown", "none"
    if torch is not None:
        torch_version = torch.__version__
        cuda = torch.version.cuda or "none"
        if device == "gpu" and torch.cuda.is_available():
            index = torch.cuda.current_device()
            gpu = torch.cuda.get_device_name(index)
            cc = "%d.%d" % torch.cuda.get_device_capability(index)
            props = torch.cuda.get_device_properties(index)
            sms = props.multi_processor_count
            uuid = str(getattr(props, "uuid", "") or "")
    if device == "cpu":
        gpu, cc = "none", "none"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    pairs = [("gpu", gpu), ("cc", cc), ("driver", driver), ("cuda", cuda),
             ("torch", torch_version), ("python", "%d.%d.%d" % sys.version_info[:3]),
             ("commit", git_commit()), ("date", date), ("host", socket.gethostname())]
    if device == "gpu":  # the GPU model in numbers (the device table of studies/sdpa-scale)
        limits = nvidia_smi_limits()
        if sms is not None:
            pairs.append(("sms", sms))
        if limits:
            pairs += [("clock_mhz", limits[0]), ("power_w", limits[1])]
        if os.environ.get("REPRO_GPU_INDEX"):  # the GPU the runner pinned this cell to
            pairs.append(("gpu_index", os.environ["REPRO_GPU_INDEX"]))
        if uuid:
            pairs.append(("gpu_uuid", uuid if uuid.startswith("GPU-") else "GPU-" + uuid))
    return pairs
