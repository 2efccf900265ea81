"""The seven FlashTensor attention workloads in PyTorch: inputs, the eager formulation (the
`torch` peer) and an independent reference used by the check.

Math (shared design notes, README "Workloads"): q, k, v fp16 [B, S, H, D]; scale 1/sqrt(D);
causal mask triu(-inf, diagonal = kv_len - q_len + 1); P = softmax(S) in fp32.
  attn    out = P V
  h2o     out, h2o_score[b,h,j] = sum_i P[i,j]
  roco    out, roco_score = sum_i P[i,j], roco_sq_score = sum_i P[i,j]^2
  kf      out, kf_score[j] = sum_i softmax_j((S[i,j] - log exp_rand[i,j]) / 1.5)
  snapkv  out, avg_pool1d(sum_i P[i,j], kernel 5, padding 2, stride 1, pad counted as 0)
  corm    out, corm_score[j] = any_i P[i,j] >= corm_mask[i,j]   (bool)
  gemma2  S <- 50 tanh(S / 50) before the mask; out = P V
The eager formulation follows the FlashTensor artifact's PyTorch modules (fp16 matmuls, the
fp16 mask added to fp16 scores, softmax in fp32, P cast to fp16 for P V): that is what the
paper timed as "PyTorch". Written here from the math above, not copied.
"""
import math

import torch
import torch.nn.functional as F

WORKLOADS = ("attn", "h2o", "roco", "kf", "snapkv", "corm", "gemma2")
OUTPUTS = {
    "attn": ("out",),
    "h2o": ("out", "h2o_score"),
    "roco": ("out", "roco_score", "roco_sq_score"),
    "kf": ("out", "kf_score"),
    "snapkv": ("out", "snapkv_score"),
    "corm": ("out", "corm_score"),
    "gemma2": ("out",),
}
KF_TAU = 1.5
GEMMA2_SOFTCAP = 50.0
SNAPKV_POOL = 5


def make_inputs(workload, batch, seqlen, heads, dim, seed, device, dtype=torch.float16):
    """Workload inputs as a tuple in call order, drawn from a seeded torch.Generator.

    q, k, v ~ N(0, 1) [B, S, H, D]; kf adds exp_rand = 1 + |N(0, 1)| fp32 [B, H, S, S];
    corm adds corm_mask fp32 [S, S] with corm_mask[i][j] = 1 / (i + 1)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)

    def normal(*shape):
        return torch.randn(*shape, generator=gen, device=device, dtype=torch.float32)

    shape = (batch, seqlen, heads, dim)
    q, k, v = (normal(*shape).to(dtype) for _ in range(3))
    if workload == "kf":
        exp_rand = 1.0 + normal(batch, heads, seqlen, seqlen).abs_()
        return q, k, v, exp_rand
    if workload == "corm":
        return q, k, v, corm_mask(seqlen, device)
    return q, k, v


def corm_mask(seqlen, device):
    """fp32 [S, S], row i all 1 / (i + 1)."""
    rows = torch.arange(1, seqlen + 1, device=device, dtype=torch.float32)
    return (1.0 / rows)[:, None].expand(seqlen, seqlen).contiguous()


def causal_mask(q_len, kv_len, device, dtype):
    """[1, 1, q_len, kv_len]: 0 where allowed, -inf where j > i + (kv_len - q_len)."""
    mask = torch.full((1, 1, q_len, kv_len), float("-inf"), device=device, dtype=dtype)
    return torch.triu(mask, diagonal=kv_len - q_len + 1)


def column_scores(workload, probs, scores=None, extra=None):
    """The workload's per-key outputs from P [B, H, Lq, Lkv] (fp32), as a tuple."""
    if workload == "h2o":
        return (probs.sum(dim=2),)
    if workload == "roco":
        return probs.sum(dim=2), (probs * probs).sum(dim=2)
    if workload == "snapkv":
        return (F.avg_pool1d(probs.sum(dim=2), kernel_size=SNAPKV_POOL, padding=SNAPKV_POOL // 2,
                             stride=1),)
    if workload == "corm":
        return ((probs >= extra).any(dim=2),)
    if workload == "kf":
        gumbel = -torch.log(extra)
        return (F.softmax((scores.float() + gumbel) / KF_TAU, dim=-1).sum(dim=2),)
    return ()


def eager(workload, q, k, v, extra=None):
    """The `torch` peer: one call computes every output of the workload (tuple)."""
    batch, q_len, heads, dim = q.shape
    kv_len = k.shape[1]
    mask = causal_mask(q_len, kv_len, q.device, q.dtype)
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    scores = torch.matmul(qt, kt.transpose(-2, -1)) / math.sqrt(dim)
    if workload == "gemma2":
        scores = torch.tanh(scores / GEMMA2_SOFTCAP) * GEMMA2_SOFTCAP
    scores = scores + mask
    probs = F.softmax(scores.float(), dim=-1)
    out = torch.matmul(probs.to(q.dtype), vt).transpose(1, 2).contiguous()
    return (out,) + column_scores(workload, probs, scores, extra)


def reference(workload, q, k, v, extra=None, dtype=torch.float32):
    """Independent reference: every (b, h) separately in `dtype` (fp32 on the GPU, fp64 on the
    CPU), one S x S matrix alive at a time. Returns the outputs in OUTPUTS order, out as
    [B, S, H, D] and the scores as [B, H, S], all in `dtype` (corm as 0/1)."""
    batch, q_len, heads, dim = q.shape
    kv_len = k.shape[1]
    rows = torch.arange(q_len, device=q.device)[:, None]
    cols = torch.arange(kv_len, device=q.device)[None, :]
    allowed = cols <= rows + (kv_len - q_len)
    out = torch.empty(batch, q_len, heads, dim, device=q.device, dtype=dtype)
    nscores = len(OUTPUTS[workload]) - 1
    scores_out = [torch.empty(batch, heads, kv_len, device=q.device, dtype=dtype)
                  for _ in range(nscores)]
    for b in range(batch):
        for h in range(heads):
            qi, ki, vi = (t[b, :, h, :].to(dtype) for t in (q, k, v))
            s = (qi @ ki.T) * (1.0 / math.sqrt(dim))
            if workload == "gemma2":
                s = GEMMA2_SOFTCAP * torch.tanh(s / GEMMA2_SOFTCAP)
            s = s.masked_fill(~allowed, float("-inf"))
            p = torch.softmax(s, dim=-1)
            out[b, :, h, :] = p @ vi
            col = p.sum(dim=0)
            if workload in ("h2o", "roco"):
                scores_out[0][b, h] = col
            if workload == "roco":
                scores_out[1][b, h] = (p * p).sum(dim=0)
            if workload == "snapkv":
                padded = F.pad(col, (SNAPKV_POOL // 2, SNAPKV_POOL // 2))
                scores_out[0][b, h] = padded.unfold(0, SNAPKV_POOL, 1).mean(dim=-1)
            if workload == "kf":
                g = (s - torch.log(extra[b, h].to(dtype))) / KF_TAU
                scores_out[0][b, h] = torch.softmax(g, dim=-1).sum(dim=0)
            if workload == "corm":
                scores_out[0][b, h] = (p >= extra.to(dtype)).any(dim=0).to(dtype)
    return (out,) + tuple(scores_out)


# Tolerances of the check, relative L2 against the reference. fp16 inputs and fp16 P V give
# about 1e-3 on out; the column sums are fp32 sums of fp32 P computed from fp16 scores.
# corm flags compare 0/1 vectors: a flag can flip where P[i,j] ties corm_mask[i,j] within the
# fp16 rounding of the scores, so a few flips in a thousand are allowed. `hidden` is the e2e
# model's final hidden states, fp16 through all layers (32 layers measured 2.2e-3).
TOLERANCE = {"out": 2e-2, "corm_score": 1e-1, "hidden": 5e-2}
DEFAULT_TOLERANCE = 1e-2


def compare(name, got, want):
    """(rel_l2, max_abs, ok) of got against want, both moved to want's dtype."""
    got = got.to(want.dtype)
    diff = got - want
    denom = torch.linalg.vector_norm(want).item()
    err = torch.linalg.vector_norm(diff).item()
    rel = err / denom if denom > 0 else err
    max_abs = diff.abs().max().item() if diff.numel() else 0.0
    ok = math.isfinite(rel) and rel <= TOLERANCE.get(name, DEFAULT_TOLERANCE)
    return rel, max_abs, ok
