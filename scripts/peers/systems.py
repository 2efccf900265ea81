#!/usr/bin/env python3
"""The PyTorch peer systems, the one list of them (SYSTEMS; `systems.py names` prints it one
per line for the shell scripts): each turns a workload into a callable f(*inputs) -> outputs.

  torch       the eager formulation (workloads.eager)
  inductor    the same function through torch.compile (default mode, static shapes)
  sdpa-flash  scaled_dot_product_attention, flash backend only, is_causal=True
  sdpa-cudnn  scaled_dot_product_attention, cuDNN backend only, is_causal=True
  flex        FlexAttention (compiled) with a causal block mask; LOGITS_SOFTCAP as a score_mod

A workload a system cannot express raises Unsupported with the reason, which the log carries
as status=unsupported. The fused-attention systems return only P V (and at most the row
log-sum-exp), so they express the workloads whose column feature is COL_NONE, and only with
plain scaled logits for SDPA (flex also takes LOGITS_SOFTCAP); the other columns need
reductions of P over the queries that no such kernel gives. Which workloads that is follows
from the registry rows' features, not from their names.
"""
import functools
import importlib
import sys

try:
    import torch
except ImportError:  # SYSTEMS and Unsupported are needed without torch (peer.py's CLI)
    torch = None

import workloads as wl

SYSTEMS = ("torch", "inductor", "sdpa-flash", "sdpa-cudnn", "flex")
COMPILED = ("inductor", "flex")  # their first call compiles; the log reports compile_s


class Unsupported(Exception):
    pass


def _attention_only(system, workload, logits_allowed):
    """Unsupported unless the workload is P V alone with logits the system can express."""
    row = wl.spec(workload)
    if len(row.outputs) > 1:
        raise Unsupported("%s returns only the attention output P*V; %s also needs %s "
                          "(column reductions of P)" % (system, workload,
                                                        ", ".join(row.outputs[1:])))
    if row.logits not in logits_allowed:
        raise Unsupported("%s has no score modifier, so %s's logit soft-capping "
                          "(50*tanh(S/50)) cannot be expressed" % (system, workload))


def _to_bhsd(t):
    return t.transpose(1, 2)


def _sdpa(backend_name):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    backend = getattr(SDPBackend, backend_name)

    def run(q, k, v):
        with sdpa_kernel([backend]):
            out = F.scaled_dot_product_attention(_to_bhsd(q), _to_bhsd(k), _to_bhsd(v),
                                                 is_causal=True)
        return (out.transpose(1, 2).contiguous(),)
    return run


def _flex(workload, seqlen, device):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    def causal(b, h, q_idx, kv_idx):
        return kv_idx <= q_idx

    def softcap(score, b, h, q_idx, kv_idx):
        return wl.softcap(score)

    # The block mask depends only on S: built once, like a kernel plan, outside the timing.
    block_mask = create_block_mask(causal, None, None, seqlen, seqlen, device=device)
    score_mod = softcap if wl.spec(workload).logits == "LOGITS_SOFTCAP" else None

    def run(q, k, v):
        out = flex_attention(_to_bhsd(q), _to_bhsd(k), _to_bhsd(v), score_mod=score_mod,
                             block_mask=block_mask)
        return (out.transpose(1, 2).contiguous(),)
    return torch.compile(run, dynamic=False, fullgraph=True)


def build(system, workload, seqlen, device):
    """(callable, impl name). Compilation (inductor, flex) happens on the first call."""
    wl.spec(workload)  # Unformulated when the registry row has a feature not formulated here
    if system == "torch":
        return functools.partial(wl.eager, workload), "torch-eager"
    if system == "inductor":
        fn = torch.compile(functools.partial(wl.eager, workload), dynamic=False, fullgraph=True)
        return fn, "torch-compile-inductor"
    if system in ("sdpa-flash", "sdpa-cudnn"):
        _attention_only(system, workload, ("LOGITS_SCALED",))
        if system == "sdpa-cudnn" and device.type != "cuda":
            raise Unsupported("the cuDNN SDPA backend needs a CUDA device")
        backend = "FLASH_ATTENTION" if system == "sdpa-flash" else "CUDNN_ATTENTION"
        if not hasattr(importlib.import_module("torch.nn.attention").SDPBackend, backend):
            raise Unsupported("this torch %s has no SDPBackend.%s" % (torch.__version__, backend))
        return _sdpa(backend), "sdpa-" + backend.lower()
    if system == "flex":
        _attention_only(system, workload, ("LOGITS_SCALED", "LOGITS_SOFTCAP"))
        try:
            importlib.import_module("torch.nn.attention.flex_attention")
        except ImportError as e:
            raise Unsupported("FlexAttention missing in torch %s: %s" % (torch.__version__, e))
        return _flex(workload, seqlen, device), "flex-attention-compiled"
    raise ValueError("unknown system " + system)


if __name__ == "__main__":
    if sys.argv[1:] != ["names"]:
        sys.exit("usage: systems.py names    (the peer systems, one per line)")
    print("\n".join(SYSTEMS))
