#!/usr/bin/env python3
"""The PyTorch peer systems, the one list of them (SYSTEMS; `systems.py names all` prints it one
per line, `systems.py names` those a shell script can run with the common options alone, every
one but those that need a tuning budget): each turns a workload into a callable
f(*inputs) -> outputs.

  torch       the eager formulation (workloads.eager; nsa: the naive gather NSA)
  inductor    the same function through torch.compile (default mode, static shapes)
  sdpa-flash      scaled_dot_product_attention, flash backend only
  sdpa-cudnn      scaled_dot_product_attention, cuDNN backend only
  sdpa-efficient  scaled_dot_product_attention, memory-efficient backend only
  sdpa-compiled   scaled_dot_product_attention inside torch.compile (fullgraph, static
                  shapes), torch's own backend choice
  flex            FlexAttention (compiled) with a causal block mask (none when not causal);
                  LOGITS_SOFTCAP as a score_mod
  tilelang        the tile-benchmark seed's TileLang kernels (tilelang_mha.py for dense keys,
                  tilelang_nsa.py for selected blocks) through TileLang's CUDA backend
  cutedsl         the same kernels through TileLang's CuTeDSL backend (tilelang_backend.py)
  tvm             the eager formulation exported (torch.export), imported into Apache TVM's
                  Relax and built with TVM's default schedules (dlight on CUDA)
  tvm-ms          the same with MetaSchedule tuning (--tune-trials, --tune-db)
                  (tvm_backend.py)
  flashtensor     FlashTensor itself: the artifact's compiler (3rd/asuka, built by
                  scripts/flashtensor/build.sh) on the artifact's own model of the workload,
                  its generated Triton kernels called on the kit's inputs
                  (flashtensor_backend.py)

Every system takes causal (default True) and dtype ("fp16" default, "bf16"): the SDPA ones
pass is_causal; non-causal or bf16 cells are formulated for the rows without a column
statistic (COL_NONE) only, since the column workloads are the artifact's causal fp16 ones.
GQA (groups G > 1, the query heads per K/V head; k, v [B, S, H/G, D]) on the dense workloads:
torch, inductor and the tvm systems run the eager formulation (K/V repeated per group, the
column statistics combined per K/V head); the SDPA systems and flex pass enable_gqa=True (an
SDPA backend that cannot serve it answers "No available kernel": status=unsupported);
tilelang and cutedsl refuse it (the seed's MHA kernel takes K/V with the query heads' count).

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
except ImportError:  # SYSTEMS and the refusals are needed without torch (peer.py's CLI)
    torch = None

import flashtensor_backend
import tilelang_backend
import tvm_backend
import workloads as wl
from errors import Unsupported

SYSTEMS = ("torch", "inductor", "sdpa-flash", "sdpa-cudnn", "sdpa-efficient", "sdpa-compiled",
           "flex", "tilelang", "cutedsl", "tvm", "tvm-ms", "flashtensor")
# their first call compiles; the log reports compile_s
COMPILED = ("inductor", "sdpa-compiled", "flex", "tilelang", "cutedsl", "tvm", "tvm-ms",
            "flashtensor")
TILELANG = ("tilelang", "cutedsl")
TVM = ("tvm", "tvm-ms")
TUNED = ("tvm-ms",)  # they need a tuning budget (peer.py --tune-trials)
KERNEL_ONLY = TVM + ("flashtensor",)  # no --e2e
SDPA_BACKENDS = {"sdpa-flash": "FLASH_ATTENTION", "sdpa-cudnn": "CUDNN_ATTENTION",
                 "sdpa-efficient": "EFFICIENT_ATTENTION"}


def _attention_only(system, workload, logits_allowed, any_keys=False):
    """Unsupported unless the workload is P V alone over dense keys (any key set with
    any_keys: the TileLang kernels serve selected blocks too), with logits the system can
    express."""
    row = wl.spec(workload)
    if row.keys != "KEYS_DENSE" and not any_keys:
        raise Unsupported("%s attends to every key under a causal or no mask; %s attends to "
                          "selected key blocks per query (%s)" % (system, workload, row.keys))
    if len(row.outputs) > 1:
        raise Unsupported("%s returns only the attention output P*V; %s also needs %s "
                          "(column reductions of P)" % (system, workload,
                                                        ", ".join(row.outputs[1:])))
    if row.logits not in logits_allowed:
        raise Unsupported("%s has no score modifier, so %s's logit soft-capping "
                          "(50*tanh(S/50)) cannot be expressed" % (system, workload))


def _tilelang(system, workload, device, causal, dtype, blocks, groups):
    _attention_only(system, workload, ("LOGITS_SCALED",), any_keys=True)
    if groups > 1 and wl.spec(workload).keys == "KEYS_DENSE":
        raise Unsupported("%s's dense kernel (the seed's MHA, tilelang_mha.py) has as many K/V "
                          "heads as query heads: no GQA (--groups %d)" % (system, groups))
    tilelang_backend.load(system, on_gpu=device.type == "cuda")
    if wl.spec(workload).keys == "KEYS_SELECTED_BLOCKS":
        if not causal:
            raise Unsupported("%s's NSA kernel (the seed's) is causal only" % system)
        kernel = tilelang_backend.SelectedBlocks(system, blocks or wl.Blocks(), dtype)
        return kernel, system + "-nsa"
    return tilelang_backend.Attention(system, causal, dtype, None), system + "-mha"


def _tvm(system, workload, device, causal, blocks, tuning, seed):
    fn = functools.partial(wl.eager, workload, causal=causal, blocks=blocks)
    return tvm_backend.build(system, fn, device, tuning, seed)


def config_pairs(system):
    """The versions of the packages a system runs on, for the config line (TileLang's,
    TVM's)."""
    if system in TILELANG:
        return tilelang_backend.config_pairs(system)
    if system in TVM:
        return tvm_backend.config_pairs()
    if system == "flashtensor":
        return flashtensor_backend.config_pairs()
    return []


def also_needs(system):
    """What a system needs besides PyTorch, for the reason of a cell without torch."""
    if system in TVM:
        return "; %s also needs TVM: %s" % (system, tvm_backend.INSTALL)
    if system == "flashtensor":
        return "; flashtensor also needs the artifact's compiler built: %s" % (
            flashtensor_backend.INSTALL % "python3")
    return ""


def _to_bhsd(t):
    return t.transpose(1, 2)


def _gqa_kwargs(system, groups, function):
    """{} for MHA, {"enable_gqa": True} for GQA (Unsupported when this torch's `function`
    lacks the argument, which came with torch 2.5)."""
    if groups == 1:
        return {}
    import inspect
    try:
        known = "enable_gqa" in inspect.signature(function).parameters
    except (TypeError, ValueError):  # a builtin without a signature (SDPA): its docstring
        known = "enable_gqa" in (function.__doc__ or "")
    if not known:
        raise Unsupported("%s: this torch %s has no enable_gqa for GQA (--groups %d)"
                          % (system, torch.__version__, groups))
    return {"enable_gqa": True}


def _sdpa(backend_name, causal, gqa):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backend = getattr(SDPBackend, backend_name)

    def run(q, k, v):
        with sdpa_kernel([backend]):
            out = F.scaled_dot_product_attention(_to_bhsd(q), _to_bhsd(k), _to_bhsd(v),
                                                 is_causal=causal, **gqa)
        return (out.transpose(1, 2).contiguous(),)
    return run


def _sdpa_compiled(causal, gqa):
    import torch.nn.functional as F

    def run(q, k, v):
        out = F.scaled_dot_product_attention(_to_bhsd(q), _to_bhsd(k), _to_bhsd(v),
                                             is_causal=causal, **gqa)
        return (out.transpose(1, 2).contiguous(),)
    return torch.compile(run, dynamic=False, fullgraph=True)


def _flex(workload, seqlen, device, causal, groups):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    def causal_mod(b, h, q_idx, kv_idx):
        return kv_idx <= q_idx

    def softcap(score, b, h, q_idx, kv_idx):
        return wl.softcap(score)

    # The block mask depends only on S: built once, like a kernel plan, outside the timing.
    block_mask = (create_block_mask(causal_mod, None, None, seqlen, seqlen, device=device)
                  if causal else None)
    score_mod = softcap if wl.spec(workload).logits == "LOGITS_SOFTCAP" else None

    gqa = _gqa_kwargs("flex", groups, flex_attention)

    def run(q, k, v):
        out = flex_attention(_to_bhsd(q), _to_bhsd(k), _to_bhsd(v), score_mod=score_mod,
                             block_mask=block_mask, **gqa)
        return (out.transpose(1, 2).contiguous(),)
    return torch.compile(run, dynamic=False, fullgraph=True)


def variant_missing(workload, causal, dtype):
    """None when the workload can run with this mask and dtype, else the reason: non-causal
    and bf16 cells exist for the rows without a column statistic (COL_NONE) only."""
    row = wl.spec(workload)
    if (not causal or dtype != "fp16") and row.column != "COL_NONE":
        return ("%s has a column statistic (%s), formulated for causal fp16 only; "
                "--causal 0 and --dtype bf16 are for the attention-only rows (COL_NONE)"
                % (workload, row.column))
    return None


def build(system, workload, seqlen, device, causal=True, dtype="fp16", blocks=None, tuning=None,
          seed=1, groups=1, shape=None, keep_source=None):
    """(callable, impl name). Compilation (inductor, sdpa-compiled, flex, tilelang, cutedsl,
    tvm, tvm-ms) happens on the first call. causal: the mask; dtype: "fp16" or "bf16" (the
    inputs' dtype, chosen by the caller); blocks: the selection of a KEYS_SELECTED_BLOCKS
    workload (workloads.Blocks); tuning: tvm-ms's budget (tvm_backend.Tuning), seed its
    search's; groups: the query heads per K/V head of a dense workload (GQA: k, v have
    H/groups heads; 1: MHA); shape: (batch, heads, seqlen, dim), which flashtensor's models are
    built for; keep_source: the folder for flashtensor's generated source."""
    wl.spec(workload)  # Unformulated when the registry row has a feature not formulated here
    if dtype not in ("fp16", "bf16"):
        raise ValueError("unknown dtype " + dtype)
    reason = variant_missing(workload, causal, dtype)
    if reason:
        raise Unsupported(reason)
    if system in TILELANG:
        return _tilelang(system, workload, device, causal, dtype, blocks, groups)
    if system in TVM:
        return _tvm(system, workload, device, causal, blocks, tuning, seed)
    if system == "flashtensor":
        return flashtensor_backend.build(workload, device, causal, dtype, groups,
                                         shape or (1, 32, seqlen, 128), keep_source)
    if system == "torch":
        return functools.partial(wl.eager, workload, causal=causal, blocks=blocks), "torch-eager"
    if system == "inductor":
        fn = torch.compile(functools.partial(wl.eager, workload, causal=causal, blocks=blocks),
                           dynamic=False, fullgraph=True)
        return fn, "torch-compile-inductor"
    if system in SDPA_BACKENDS:
        _attention_only(system, workload, ("LOGITS_SCALED",))
        if system == "sdpa-cudnn" and device.type != "cuda":
            raise Unsupported("the cuDNN SDPA backend needs a CUDA device")
        backend = SDPA_BACKENDS[system]
        if not hasattr(importlib.import_module("torch.nn.attention").SDPBackend, backend):
            raise Unsupported("this torch %s has no SDPBackend.%s" % (torch.__version__, backend))
        gqa = _gqa_kwargs(system, groups, torch.nn.functional.scaled_dot_product_attention)
        return _sdpa(backend, causal, gqa), "sdpa-" + backend.lower()
    if system == "sdpa-compiled":
        _attention_only(system, workload, ("LOGITS_SCALED",))
        gqa = _gqa_kwargs(system, groups, torch.nn.functional.scaled_dot_product_attention)
        return _sdpa_compiled(causal, gqa), "sdpa-torch-compile"
    if system == "flex":
        _attention_only(system, workload, ("LOGITS_SCALED", "LOGITS_SOFTCAP"))
        try:
            importlib.import_module("torch.nn.attention.flex_attention")
        except ImportError as e:
            raise Unsupported(
                "FlexAttention missing in torch %s: %s" % (torch.__version__, e)) from e
        return _flex(workload, seqlen, device, causal, groups), "flex-attention-compiled"
    raise ValueError("unknown system " + system)


if __name__ == "__main__":
    if sys.argv[1:] not in (["names"], ["names", "all"]):
        sys.exit("usage: systems.py names [all]    (the peer systems that need no tuning "
                 "budget, one per line; all: every one)")
    print("\n".join(s for s in SYSTEMS if sys.argv[2:] == ["all"] or s not in TUNED))
