"""The Llama-2-7B-shaped prefill of kernels/e2e (llama_e2e) in PyTorch, for the e2e peers.

Per layer: RMSNorm -> one QKV GEMM -> RoPE -> the workload's attention (the peer system's
callable) -> the workload's KV-cache selection -> output projection -> residual -> RMSNorm ->
gate/up GEMM -> SiLU(gate)*up -> down GEMM -> residual; a final RMSNorm. Batch 1, fp16
weights and activations, random weights from a seeded generator (the time does not depend on
the values). Layouts follow kernels/e2e/e2e.h: weights [out, in] (y = x W^T), QKV stacked
[3 hidden, hidden], gate/up stacked [2 mlp, hidden], RoPE rotate-half (i, i + D/2).

KV-cache selection, the registry row's `select` feature (budgets of kernels/e2e/e2e.h):
SEL_TOPK keeps the top 512 keys per head by score (h2o, kf, snapkv); SEL_TOPK_STD the 256 with
the largest standard deviation of attention over q_len, sqrt(score2/Lq - (score/Lq)^2), plus
the top 512 by score among the rest (roco); SEL_FLAGS the keys whose flag is set, at most 512,
the most recent ones (corm); SEL_NONE none (attn, gemma2). Kept indices are ascending, -1 past
a head's count; K and V rows are gathered into a preallocated per-layer cache.
"""
import math
from dataclasses import dataclass

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the Config and the selection rules need no torch
    torch = F = None

import registry
import workloads as wl
from selection import KEEP_STD, SELECTS, selection_missing

RMS_EPS = 1e-5
ROPE_THETA = 10000.0
EXP_RAND_MIN = 1e-8


@dataclass
class Config:
    layers: int = 32
    hidden: int = 4096
    heads: int = 32
    mlp: int = 11008
    vocab: int = 32000
    seqlen: int = 4096

    @property
    def head_dim(self):
        return self.hidden // self.heads

    def invalid(self):
        """None when consistent, else a message naming the offending option."""
        for name in ("layers", "hidden", "heads", "mlp", "vocab", "seqlen"):
            if getattr(self, name) < 1:
                return "--%s must be >= 1" % name
        if self.hidden % self.heads:
            return "--hidden %d is not a multiple of --heads %d" % (self.hidden, self.heads)
        if self.head_dim % 2:
            return "head dim %d must be even for RoPE" % self.head_dim
        return None


def select_rule(workload):
    """The registry row's select feature, checked (else workloads.Unformulated)."""
    row = registry.find(workload)
    reason = selection_missing(row)
    if reason:
        raise wl.Unformulated(reason)
    return row.select


def cache_cap(workload, seqlen):
    """Keys kept per head (0 for SEL_NONE, which selects nothing)."""
    return SELECTS[select_rule(workload)][1](seqlen)


def make_weights(cfg, seed, device, dtype=None):
    """Seeded N(0, 1/in) linear weights, N(0, 1) embedding, unit norms; tokens uniform; fp16
    unless `dtype` says otherwise."""
    dtype = torch.float16 if dtype is None else dtype
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)

    def linear(out_features, in_features):
        w = torch.empty(out_features, in_features, device=device, dtype=dtype)
        return w.normal_(0.0, 1.0 / math.sqrt(in_features), generator=gen)

    layers = []
    for _ in range(cfg.layers):
        layers.append({
            "attn_norm": torch.ones(cfg.hidden, device=device, dtype=dtype),
            "wqkv": linear(3 * cfg.hidden, cfg.hidden),
            "wo": linear(cfg.hidden, cfg.hidden),
            "mlp_norm": torch.ones(cfg.hidden, device=device, dtype=dtype),
            "wgu": linear(2 * cfg.mlp, cfg.hidden),
            "wdown": linear(cfg.hidden, cfg.mlp),
        })
    embed = torch.empty(cfg.vocab, cfg.hidden, device=device, dtype=dtype).normal_(generator=gen)
    tokens = torch.randint(0, cfg.vocab, (cfg.seqlen,), device=device, generator=gen)
    return {"layers": layers, "embed": embed, "final_norm": torch.ones(cfg.hidden, device=device,
            dtype=dtype), "tokens": tokens}


def _wide(x):
    """x in fp32 at least (fp64 stays fp64 for the CPU reference)."""
    return x.to(torch.promote_types(x.dtype, torch.float32))


def rmsnorm(x, weight):
    xf = _wide(x)
    var = xf.pow(2).mean(dim=-1, keepdim=True)
    return (xf * torch.rsqrt(var + RMS_EPS)).to(x.dtype) * weight


def rope_tables(seqlen, head_dim, device):
    """cos, sin fp32 [S, 1, D] for the rotate-half pairing."""
    inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, head_dim, 2, device=device,
                                                  dtype=torch.float32) / head_dim))
    angles = torch.arange(seqlen, device=device, dtype=torch.float32)[:, None] * inv_freq
    angles = torch.cat((angles, angles), dim=-1)
    return angles.cos()[:, None, :], angles.sin()[:, None, :]


def rope(x, cos, sin):
    """x [S, H, D] -> x*cos + rotate_half(x)*sin, computed in fp32."""
    half = x.shape[-1] // 2
    xf = _wide(x)
    rotated = torch.cat((-xf[..., half:], xf[..., :half]), dim=-1)
    return (xf * cos + rotated * sin).to(x.dtype)


def selected_indices(workload, scores, q_len, cap):
    """(idx int64 [H, cap] ascending with -1 past count, count int64 [H]) from the attention
    outputs' score tensors of one layer (batch 1: [1, H, S] each, in the row's slot order)."""
    select = select_rule(workload)
    named = dict(zip(registry.find(workload).slots, scores))
    heads, seqlen = scores[0].shape[1], scores[0].shape[2]
    device = scores[0].device
    if select == "SEL_FLAGS":
        flags = named["flags"][0].bool()
        count = flags.sum(dim=-1).clamp(max=cap)
        # most recent marked keys first: marked keys rank by index, unmarked below them all
        pos = torch.arange(seqlen, device=device)
        rank = torch.where(flags, pos, pos - seqlen)
        idx = rank.topk(cap, dim=-1).indices.sort(dim=-1).values
        # a head with fewer marks than cap: the unmarked picks are padding -> -1, at the end
        marked = flags.gather(-1, idx)
        idx = torch.where(marked, idx, torch.full_like(idx, seqlen)).sort(dim=-1).values
        idx = torch.where(idx == seqlen, torch.full_like(idx, -1), idx)
        return idx, count
    if select == "SEL_TOPK_STD":
        mean = named["score"][0] / q_len
        std = (named["score2"][0] / q_len - mean * mean).clamp_(min=0).sqrt_()
        n_std = min(KEEP_STD, seqlen)
        by_std = std.topk(n_std, dim=-1).indices
        rest = named["score"][0].scatter(-1, by_std, float("-inf"))
        by_score = rest.topk(cap - n_std, dim=-1).indices
        idx = torch.cat((by_std, by_score), dim=-1).sort(dim=-1).values
    else:  # SEL_TOPK
        idx = named["score"][0].topk(cap, dim=-1).indices.sort(dim=-1).values
    return idx, torch.full((heads,), cap, device=device, dtype=torch.int64)


class Cache:
    """Preallocated per-layer cache of the kept keys (allocated before the timed region)."""

    def __init__(self, cfg, workload, device, dtype=None):
        dtype = torch.float16 if dtype is None else dtype
        self.cap = cache_cap(workload, cfg.seqlen)
        shape = (cfg.layers, cfg.heads, self.cap)
        self.idx = torch.full(shape, -1, device=device, dtype=torch.int64)
        self.count = torch.zeros(cfg.layers, cfg.heads, device=device, dtype=torch.int64)
        self.k = torch.zeros(shape + (cfg.head_dim,), device=device, dtype=dtype)
        self.v = torch.zeros_like(self.k)

    def store(self, layer, workload, outputs, k, v):
        """Select from this layer's attention outputs and gather K, V ([S, H, D])."""
        if self.cap == 0:
            return
        idx, count = selected_indices(workload, outputs[1:], k.shape[0], self.cap)
        gather_at = idx.clamp(min=0)[:, :, None].expand(-1, -1, k.shape[-1])
        self.k[layer] = k.transpose(0, 1).gather(1, gather_at)
        self.v[layer] = v.transpose(0, 1).gather(1, gather_at)
        self.idx[layer] = idx
        self.count[layer] = count


def attention_extra(workload, cfg, device, gen, corm_mask):
    """The workload's extra input for one layer: exp_rand (COL_KEYFORMER) drawn uniform in
    (1e-8, 1] each layer, as llama_e2e does; corm_mask (COL_ANY_GE_MASK) reused."""
    extra = wl.extra_input(workload)
    if extra == "exp_rand":
        u = torch.empty(1, cfg.heads, cfg.seqlen, cfg.seqlen, device=device, dtype=torch.float32)
        return u.uniform_(EXP_RAND_MIN, 1.0, generator=gen)
    if extra == "corm_mask":
        return corm_mask
    return None


def layer_forward(attn_fn, workload, cfg, w, x, cos, sin, extra):
    """One decoder layer on x [S, hidden]; returns (x, attention outputs, k, v)."""
    s, hd = x.shape[0], cfg.head_dim
    qkv = F.linear(rmsnorm(x, w["attn_norm"]), w["wqkv"]).view(s, 3, cfg.heads, hd)
    q = rope(qkv[:, 0], cos, sin)
    k = rope(qkv[:, 1], cos, sin)
    v = qkv[:, 2]
    args = (q[None], k[None], v[None]) + ((extra,) if extra is not None else ())
    outputs = attn_fn(*args)
    x = x + F.linear(outputs[0].view(s, cfg.hidden), w["wo"])
    gate, up = F.linear(rmsnorm(x, w["mlp_norm"]), w["wgu"]).chunk(2, dim=-1)
    x = x + F.linear(F.silu(gate) * up, w["wdown"])
    return x, outputs, k, v


def forward(attn_fn, workload, cfg, weights, cache, corm_mask, gen, layer_fn=layer_forward):
    """The whole prefill: embedding, layers (attention + selection into cache unless it is
    None), final norm."""
    device = weights["embed"].device
    cos, sin = rope_tables(cfg.seqlen, cfg.head_dim, device)
    x = weights["embed"][weights["tokens"]]
    for i, w in enumerate(weights["layers"]):
        extra = attention_extra(workload, cfg, device, gen, corm_mask)
        x, outputs, k, v = layer_fn(attn_fn, workload, cfg, w, x, cos, sin, extra)
        if cache is not None:
            cache.store(i, workload, outputs, k, v)
    return rmsnorm(x, weights["final_norm"])


def reference_forward(workload, cfg, weights, corm_mask, gen, dtype=None):
    """The same model in `dtype` (weights upcast one layer at a time) with the independent
    reference attention; returns the final hidden states. Same generator stream for kf."""
    dtype = torch.float32 if dtype is None else dtype
    def ref_attn(q, k, v, extra=None):
        return wl.reference(workload, q, k, v, extra, dtype=dtype)

    def up(w):
        return {name: t.to(dtype) for name, t in w.items()}

    def ref_layer(attn_fn, workload_, cfg_, w, x, cos, sin, extra):
        return layer_forward(attn_fn, workload_, cfg_, up(w), x, cos, sin, extra)

    ref_weights = dict(weights, embed=weights["embed"].to(dtype),
                       final_norm=weights["final_norm"].to(dtype))
    return forward(ref_attn, workload, cfg, ref_weights, None, corm_mask, gen,
                   layer_fn=ref_layer)
