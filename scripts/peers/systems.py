"""The PyTorch peer systems: each turns a workload into a callable f(*inputs) -> outputs.

  torch       the eager formulation (workloads.eager)
  inductor    the same function through torch.compile (default mode, static shapes)
  sdpa-flash  scaled_dot_product_attention, flash backend only, is_causal=True
  sdpa-cudnn  scaled_dot_product_attention, cuDNN backend only, is_causal=True
  flex        FlexAttention (compiled) with a causal block mask; gemma2's cap as a score_mod

A workload a system cannot express raises Unsupported with the reason, which the log carries
as status=unsupported. The fused-attention systems return only P V (and at most the row
log-sum-exp), so they express attn (and, for flex, gemma2); the other workloads need column
reductions of P that no such kernel gives.
"""
import functools
import importlib

import torch

import workloads as wl

SYSTEMS = ("torch", "inductor", "sdpa-flash", "sdpa-cudnn", "flex")


class Unsupported(Exception):
    pass


def _column_outputs(workload):
    return ", ".join(wl.OUTPUTS[workload][1:])


def _attention_only(system, workload, allowed):
    if workload in allowed:
        return
    if workload == "gemma2":
        raise Unsupported("%s has no score modifier, so gemma2's logit soft-capping "
                          "(50*tanh(S/50)) cannot be expressed" % system)
    raise Unsupported("%s returns only the attention output P*V; %s also needs %s "
                      "(column reductions of P)" % (system, workload, _column_outputs(workload)))


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
        return wl.GEMMA2_SOFTCAP * torch.tanh(score / wl.GEMMA2_SOFTCAP)

    # The block mask depends only on S: built once, like a kernel plan, outside the timing.
    block_mask = create_block_mask(causal, None, None, seqlen, seqlen, device=device)
    score_mod = softcap if workload == "gemma2" else None

    def run(q, k, v):
        out = flex_attention(_to_bhsd(q), _to_bhsd(k), _to_bhsd(v), score_mod=score_mod,
                             block_mask=block_mask)
        return (out.transpose(1, 2).contiguous(),)
    return torch.compile(run, dynamic=False, fullgraph=True)


def build(system, workload, seqlen, device):
    """(callable, impl name). Compilation (inductor, flex) happens on the first call."""
    if system == "torch":
        return functools.partial(wl.eager, workload), "torch-eager"
    if system == "inductor":
        fn = torch.compile(functools.partial(wl.eager, workload), dynamic=False, fullgraph=True)
        return fn, "torch-compile-inductor"
    if system in ("sdpa-flash", "sdpa-cudnn"):
        _attention_only(system, workload, ("attn",))
        if system == "sdpa-cudnn" and device.type != "cuda":
            raise Unsupported("the cuDNN SDPA backend needs a CUDA device")
        backend = "FLASH_ATTENTION" if system == "sdpa-flash" else "CUDNN_ATTENTION"
        if not hasattr(importlib.import_module("torch.nn.attention").SDPBackend, backend):
            raise Unsupported("this torch %s has no SDPBackend.%s" % (torch.__version__, backend))
        return _sdpa(backend), "sdpa-" + backend.lower()
    if system == "flex":
        _attention_only(system, workload, ("attn", "gemma2"))
        try:
            importlib.import_module("torch.nn.attention.flex_attention")
        except ImportError as e:
            raise Unsupported("FlexAttention missing in torch %s: %s" % (torch.__version__, e))
        return _flex(workload, seqlen, device), "flex-attention-compiled"
    raise ValueError("unknown system " + system)
