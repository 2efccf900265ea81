"""The FlashTensor attention workloads in PyTorch: inputs, the eager formulation (the `torch`
peer) and an independent reference used by the check.

The workloads are the rows of the registry kernels/attention/registry/workloads.def
(registry.py reads it); each is a composition of features, and the math here dispatches on them,
never on a workload's name:
q, k, v fp16 [B, S, H, D]; scale 1/sqrt(D); causal mask triu(-inf, diagonal = kv_len - q_len + 1);
P = softmax(S) in fp32.
  logits  LOGITS_SCALED   S = q.k / sqrt(D)
          LOGITS_SOFTCAP  S <- 50 tanh(S / 50) before the mask
  column  COL_NONE        out = P V only
          COL_SUM         score[j] = sum_i P[i,j]
          COL_SUM_SQ      score[j] = sum_i P[i,j], score2[j] = sum_i P[i,j]^2
          COL_KEYFORMER   score[j] = sum_i softmax_j((S[i,j] - log exp_rand[i,j]) / 1.5)
          COL_ANY_GE_MASK flags[j] = any_i P[i,j] >= corm_mask[i,j]   (bool)
  pool    w > 0: score <- avg_pool1d(score, kernel w, padding w/2, stride 1, pad counted as 0)
  GQA     every workload: k, v [B, S, H/G, D] with G the query heads per K/V head (groups;
          1 is MHA); query head h attends with K/V head h // G (the eager formulation repeats
          each K/V head G times, as repeat_interleave), and the column statistics are per K/V
          head, [B, H/G, S]: the per-head statistic summed over the G heads of the group (any,
          for flags), pooled after the sum
  keys    KEYS_DENSE           every key (before the mask)
          KEYS_SELECTED_BLOCKS DeepSeek NSA's selected branch with GQA (Blocks: groups G, the
                               query heads per K/V head as in the tile-benchmark seed and
                               TileLang, block_size, selected, scale): k, v [B, S, H/G, D];
                               extra input block_idx [B, S, H/G, T], drawn by the rule of
                               kernels/attention/registry/selected_blocks.h from this
                               generator; query t attends to the keys of its listed blocks
                               (and, causal, j <= t); P V only
A row whose features are not all here fails with Unformulated ("workload X: column COL_Y has no
PyTorch formulation"); formulation_missing(row) says so without torch.
The eager formulation follows the FlashTensor artifact's PyTorch modules (fp16 matmuls, the
fp16 mask added to fp16 scores, softmax in fp32, P cast to fp16 for P V): that is what the
paper timed as "PyTorch". Written here from the math above, not copied.
"""
import math

import registry
from selection import selection_missing

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the feature tables and formulation_missing() need no torch
    torch = F = None

WORKLOADS = registry.names()
KEYS = ("KEYS_DENSE", "KEYS_SELECTED_BLOCKS")
OUTPUTS = {row.name: row.outputs for row in registry.workloads()}
KF_TAU = 1.5
GEMMA2_SOFTCAP = 50.0


class Unformulated(Exception):
    """A registry row uses a feature that has no PyTorch formulation here."""


def softcap(s):
    """LOGITS_SOFTCAP: 50 tanh(S / 50), applied before the mask."""
    return GEMMA2_SOFTCAP * torch.tanh(s / GEMMA2_SOFTCAP)


# LOGITS_*: what is applied to q.k / sqrt(D) before the mask (None: nothing).
LOGITS = {"LOGITS_SCALED": None, "LOGITS_SOFTCAP": softcap}


def _sum_eager(probs, scores, extra):
    return (probs.sum(dim=2),)


def _sum_sq_eager(probs, scores, extra):
    return probs.sum(dim=2), (probs * probs).sum(dim=2)


def _keyformer_eager(probs, scores, extra):
    gumbel = -torch.log(extra)
    return (F.softmax((scores.float() + gumbel) / KF_TAU, dim=-1).sum(dim=2),)


def _any_ge_eager(probs, scores, extra):
    return ((probs >= extra).any(dim=2),)


# The reference's column statistics of one (b, h): p, s [Lq, Lkv] in the reference dtype.
def _sum_ref(p, s, extra, b, h):
    return (p.sum(dim=0),)


def _sum_sq_ref(p, s, extra, b, h):
    return p.sum(dim=0), (p * p).sum(dim=0)


def _keyformer_ref(p, s, extra, b, h):
    g = (s - torch.log(extra[b, h].to(p.dtype))) / KF_TAU
    return (torch.softmax(g, dim=-1).sum(dim=0),)


def _any_ge_ref(p, s, extra, b, h):
    return ((p >= extra.to(p.dtype)).any(dim=0).to(p.dtype),)


class Column:
    """A COL_* feature: the output slots it fills (registry.OUTPUT_SLOTS), its extra input
    (None, "exp_rand" or "corm_mask"), its eager and reference formulations, and how the
    statistics of a K/V head's G query heads combine under GQA (any: flags, else a sum)."""

    def __init__(self, slots, extra, eager, reference, any_of_group=False):
        self.slots, self.extra, self.eager, self.reference = slots, extra, eager, reference
        self.any_of_group = any_of_group

    def group_eager(self, stat, groups):
        """[B, H, S] per query head -> [B, H/G, S] per K/V head (stat itself when G = 1)."""
        if groups == 1:
            return stat
        b, h, n = stat.shape
        grouped = stat.view(b, h // groups, groups, n)
        return grouped.any(dim=2) if self.any_of_group else grouped.sum(dim=2)

    def combine(self, acc, stat):
        """The reference's group statistic so far (None before the first head) with one more
        head's."""
        if acc is None:
            return stat
        return torch.maximum(acc, stat) if self.any_of_group else acc + stat


COLUMNS = {
    "COL_NONE": Column((), None, None, None),
    "COL_SUM": Column(("score",), None, _sum_eager, _sum_ref),
    "COL_SUM_SQ": Column(("score", "score2"), None, _sum_sq_eager, _sum_sq_ref),
    "COL_KEYFORMER": Column(("score",), "exp_rand", _keyformer_eager, _keyformer_ref),
    "COL_ANY_GE_MASK": Column(("flags",), "corm_mask", _any_ge_eager, _any_ge_ref,
                              any_of_group=True),
}


def kv_heads_of(heads, groups):
    """K/V heads of a cell with `heads` query heads and `groups` query heads per K/V head
    (groups divides heads; ValueError otherwise)."""
    if groups < 1 or heads % groups:
        raise ValueError("groups %d must divide heads %d" % (groups, heads))
    return heads // groups


def kernel_missing(row):
    """None when the attention of registry row `row` (logits, keys, column, pool, output names)
    has a PyTorch formulation here, else the reason."""
    what = "workload %s" % row.name
    if row.logits not in LOGITS:
        return "%s: logits %s has no PyTorch formulation" % (what, row.logits)
    if row.keys not in KEYS:
        return "%s: keys %s has no PyTorch formulation" % (what, row.keys)
    if row.keys == "KEYS_SELECTED_BLOCKS" and (row.logits, row.column) != ("LOGITS_SCALED",
                                                                           "COL_NONE"):
        return ("%s: keys KEYS_SELECTED_BLOCKS is formulated with LOGITS_SCALED and COL_NONE "
                "only" % what)
    column = COLUMNS.get(row.column)
    if column is None:
        return "%s: column %s has no PyTorch formulation" % (what, row.column)
    if row.slots != column.slots:
        return ("%s: column %s writes the outputs %s, the row names %s" % (
            what, row.column, "+".join(("out",) + column.slots), "+".join(("out",) + row.slots)))
    if row.pool:
        if "score" not in column.slots:
            return "%s: pool %d needs a score output, column %s has none" % (
                what, row.pool, row.column)
        if row.pool % 2 == 0:
            return "%s: pool %d has no PyTorch formulation (a centred pool needs an odd width)" % (
                what, row.pool)
    return None


def formulation_missing(row):
    """None when every feature of registry row `row` has a PyTorch formulation here (the
    attention, and the e2e model's KV-cache selection), else the reason."""
    return kernel_missing(row) or selection_missing(row)


def spec(workload):
    """The registry row of `workload`, checked to have a formulation (else Unformulated)."""
    row = registry.find(workload)
    reason = kernel_missing(row)
    if reason:
        raise Unformulated(reason)
    return row


def extra_input(workload):
    """The name of the workload's extra input ("exp_rand", "corm_mask", "block_idx") or None."""
    row = spec(workload)
    if row.keys == "KEYS_SELECTED_BLOCKS":
        return "block_idx"
    return COLUMNS[row.column].extra


def selected_blocks(workload):
    """True when the workload's keys are selected blocks (it takes a Blocks)."""
    return spec(workload).keys == "KEYS_SELECTED_BLOCKS"


class Blocks:
    """The selection of a KEYS_SELECTED_BLOCKS cell: groups G, the query heads per K/V head
    (the tile-benchmark seed's and TileLang's groups: head_kv = heads // groups; 1 is MHA,
    G = heads one K/V head), block_size BS, selected T (entries of a list), scale (None:
    1/sqrt(D))."""

    def __init__(self, groups=1, block_size=32, selected=8, scale=None):
        self.groups, self.block_size, self.selected, self.scale = (groups, block_size, selected,
                                                                   scale)

    def kv_heads(self, heads):
        """K/V heads of a cell with `heads` query heads: heads // groups (groups divides it)."""
        return kv_heads_of(heads, self.groups)

    def scale_for(self, dim):
        return 1.0 / math.sqrt(dim) if self.scale is None else self.scale


def candidates(seqlen, block_size, device):
    """[S] int64: max(1, t // BS), the blocks query t may select
    (kernels/attention/registry/selected_blocks.h)."""
    return (torch.arange(seqlen, device=device) // block_size).clamp(min=1)


def block_lists(batch, seqlen, kv_heads, block_size, selected, gen, device):
    """block_idx int64 [B, S, kv_heads, T] by the rule of
    kernels/attention/registry/selected_blocks.h: min(T, c) distinct blocks of 0..c-1
    (c = candidates) uniformly at random (the T smallest of iid uniform keys over the
    candidates), ascending, padded with the sentinel ceil(S / BS). The rule is the C
    generator's; the draws are torch's (other lists than attnvar's for a seed)."""
    nblocks = -(-seqlen // block_size)
    keys = torch.rand(batch, seqlen, kv_heads, nblocks, generator=gen, device=device)
    cand = candidates(seqlen, block_size, device)
    outside = torch.arange(nblocks, device=device)[None, :] >= cand[:, None]  # [S, nblocks]
    keys = keys.masked_fill(outside[None, :, None, :], float("inf"))
    take = min(selected, nblocks)
    top, pos = torch.topk(keys, take, dim=-1, largest=False)
    idx = pos.masked_fill(torch.isinf(top), nblocks).sort(dim=-1).values
    if selected > take:
        pad = torch.full((batch, seqlen, kv_heads, selected - take), nblocks, device=device,
                         dtype=idx.dtype)
        idx = torch.cat([idx, pad], dim=-1)
    return idx


def keys_of_query(t, seqlen, blocks, causal):
    """Keys query t attends to, from the rule alone (kernels' sb_keys_of_query): the selected
    blocks are whole and before t, except block 0 while it is the only candidate."""
    c = max(1, t // blocks.block_size)
    if c > 1:
        return min(blocks.selected, c) * blocks.block_size
    return min(blocks.block_size, seqlen, t + 1 if causal else seqlen)


def gflop(workload, batch, seqlen, heads, dim, causal, blocks=None):
    """The GFLOP of a cell: the paper's 4*B*H*S^2*D (halved when causal), or for selected
    blocks 4 * D * the attended (b, h, query, key) pairs."""
    if selected_blocks(workload):
        blocks = blocks or Blocks()
        pairs = sum(keys_of_query(t, seqlen, blocks, causal) for t in range(seqlen))
        return 4.0 * dim * pairs * batch * heads / 1e9
    return 4.0 * batch * heads * seqlen ** 2 * dim / (2 if causal else 1) / 1e9


def make_inputs(workload, batch, seqlen, heads, dim, seed, device, dtype=None, blocks=None,
                groups=1):
    """Workload inputs as a tuple in call order, drawn from a seeded torch.Generator.

    q ~ N(0, 1) [B, S, H, D], k, v ~ N(0, 1) [B, S, H/G, D] (fp16 by default; G = groups, the
    query heads per K/V head, 1: MHA); COL_KEYFORMER adds exp_rand = 1 + |N(0, 1)| fp32
    [B, H, S, S] (per query head); COL_ANY_GE_MASK adds corm_mask fp32 [S, S] with
    corm_mask[i][j] = 1 / (i + 1); KEYS_SELECTED_BLOCKS takes G from blocks.groups (and
    refuses another groups) and adds block_idx [B, S, H/G, T] (block_lists)."""
    extra = extra_input(workload)
    dtype = torch.float16 if dtype is None else dtype
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)

    def normal(*shape):
        return torch.randn(*shape, generator=gen, device=device, dtype=torch.float32)

    shape = (batch, seqlen, heads, dim)
    if extra == "block_idx":
        blocks = blocks or Blocks()
        if groups != 1 and groups != blocks.groups:
            raise ValueError("selected blocks take their groups from blocks (%d), not %d"
                             % (blocks.groups, groups))
        kv_heads = blocks.kv_heads(heads)
        kv_shape = (batch, seqlen, kv_heads, dim)
        q, k, v = (normal(*s).to(dtype) for s in (shape, kv_shape, kv_shape))
        return q, k, v, block_lists(batch, seqlen, kv_heads, blocks.block_size,
                                    blocks.selected, gen, device)
    kv_shape = (batch, seqlen, kv_heads_of(heads, groups), dim)
    q, k, v = (normal(*s).to(dtype) for s in (shape, kv_shape, kv_shape))
    if extra == "exp_rand":
        exp_rand = 1.0 + normal(batch, heads, seqlen, seqlen).abs_()
        return q, k, v, exp_rand
    if extra == "corm_mask":
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


def column_scores(workload, probs, scores=None, extra=None, groups=1):
    """The workload's per-key outputs from P [B, H, Lq, Lkv] (fp32), as a tuple: per K/V head
    ([B, H/G, Lkv], the group's statistics combined, then pooled) under GQA (groups G > 1)."""
    row = spec(workload)
    column = COLUMNS[row.column]
    if column.eager is None:
        return ()
    out = tuple(column.group_eager(stat, groups) for stat in column.eager(probs, scores, extra))
    if row.pool:
        pooled = F.avg_pool1d(out[0], kernel_size=row.pool, padding=row.pool // 2, stride=1)
        out = (pooled,) + out[1:]
    return out


def _block_keys(idx, block_size, seqlen, causal):
    """(key index clamped into range, valid) of every gathered key of the lists idx
    [B, S, Hkv, T]: [B, S, Hkv, T * BS] each; valid where the block is live, the key inside the
    keys and (causal) not after its query."""
    offsets = torch.arange(block_size, device=idx.device)
    keys = (idx[..., None] * block_size + offsets).flatten(-2)
    valid = (idx >= 0)[..., None].expand(*idx.shape, block_size).flatten(-2) & (keys < seqlen)
    if causal:
        t = torch.arange(seqlen, device=idx.device)[None, :, None, None]
        valid = valid & (keys <= t)
    return keys.clamp(0, seqlen - 1), valid


def nsa_eager(q, k, v, idx, causal=True, blocks=None):
    """KEYS_SELECTED_BLOCKS, the naive PyTorch NSA: gather each query's keys and values
    ([B, S, Hkv, T * BS, D] copies, Hkv = k's K/V heads), fp16 scores of each K/V head's
    H/Hkv query heads, masked, fp32 softmax, P cast to fp16 for P V."""
    blocks = blocks or Blocks()
    batch, seqlen, heads, dim = q.shape
    kv_heads = k.shape[2]
    keys, valid = _block_keys(idx, blocks.block_size, seqlen, causal)
    b = torch.arange(batch, device=q.device)[:, None, None, None]
    g = torch.arange(kv_heads, device=q.device)[None, None, :, None]
    kg, vg = k[b, keys, g], v[b, keys, g]  # [B, S, Hkv, N, D]
    qg = q.view(batch, seqlen, kv_heads, heads // kv_heads, dim)
    scores = torch.matmul(qg, kg.transpose(-2, -1)) * blocks.scale_for(dim)  # [B, S, Hkv, hpg, N]
    scores = scores.masked_fill(~valid[:, :, :, None, :], float("-inf"))
    probs = F.softmax(scores.float(), dim=-1)
    out = torch.matmul(probs.to(q.dtype), vg)
    return (out.reshape(batch, seqlen, heads, dim),)


def groups_of(q, k):
    """G, the query heads per K/V head of q [B, S, H, D] and k [B, S, Hkv, D] (ValueError
    when Hkv does not divide H)."""
    heads, kv_heads = q.shape[2], k.shape[2]
    if kv_heads < 1 or heads % kv_heads:
        raise ValueError("%d K/V heads do not divide %d query heads" % (kv_heads, heads))
    return heads // kv_heads


def repeat_kv(t, groups):
    """[B, Hkv, S, D] -> [B, Hkv * G, S, D], each K/V head repeated G times in a row (as
    repeat_interleave(G, dim=1), written with expand and reshape, which every exporter knows)."""
    if groups == 1:
        return t
    b, hkv, n, d = t.shape
    return t[:, :, None].expand(b, hkv, groups, n, d).reshape(b, hkv * groups, n, d)


def eager(workload, q, k, v, extra=None, causal=True, blocks=None):
    """The `torch` peer: one call computes every output of the workload (tuple). GQA when k
    and v have fewer heads than q: K/V repeated per group, the statistics combined per group."""
    if selected_blocks(workload):
        return nsa_eager(q, k, v, extra, causal=causal, blocks=blocks)
    logits = LOGITS[spec(workload).logits]
    batch, q_len, heads, dim = q.shape
    kv_len = k.shape[1]
    groups = groups_of(q, k)
    mask = causal_mask(q_len, kv_len, q.device, q.dtype) if causal else 0
    qt = q.transpose(1, 2)
    kt, vt = repeat_kv(k.transpose(1, 2), groups), repeat_kv(v.transpose(1, 2), groups)
    scores = torch.matmul(qt, kt.transpose(-2, -1)) / math.sqrt(dim)
    if logits is not None:
        scores = logits(scores)
    scores = scores + mask
    probs = F.softmax(scores.float(), dim=-1)
    out = torch.matmul(probs.to(q.dtype), vt).transpose(1, 2).contiguous()
    return (out,) + column_scores(workload, probs, scores, extra, groups)


def sample_pairs(batch, heads, n):
    """None (every pair) when n is 0 or covers them all, else n distinct (b, h) pairs spread
    evenly over the flattened b * heads + h index, the first and the last included."""
    total = batch * heads
    if n <= 0 or n >= total:
        return None
    idx = sorted({round(i * (total - 1) / (n - 1)) for i in range(n)} if n > 1 else {0})
    return [divmod(i, heads) for i in idx]


def select_pairs(is_out, t, pairs, groups=1):
    """The part of an output the sampled reference covers: out [B, S, H, D] -> [n, S, D],
    scores [B, H/G, S] -> [n, S] (pair (b, h): the row of its K/V head h // G); t itself
    when pairs is None."""
    if pairs is None:
        return t
    if is_out:
        return torch.stack([t[b, :, h, :] for b, h in pairs])
    return torch.stack([t[b, h // groups] for b, h in pairs])


def nsa_reference(q, k, v, idx, dtype, causal, pairs, blocks):
    """KEYS_SELECTED_BLOCKS reference: per (b, h), dense attention over all S keys of its K/V
    head with a mask built from the lists (key j allowed when its block j // BS is listed),
    no gather. out [B, S, H, D], or [n, S, D] for `pairs`."""
    blocks = blocks or Blocks()
    batch, seqlen, heads, dim = q.shape
    kv_heads = k.shape[2]
    nblocks = -(-seqlen // blocks.block_size)
    block_of = torch.arange(seqlen, device=q.device) // blocks.block_size
    rows = torch.arange(seqlen, device=q.device)[:, None]
    todo = pairs if pairs is not None else [(b, h) for b in range(batch) for h in range(heads)]
    out = (torch.empty(batch, seqlen, heads, dim, device=q.device, dtype=dtype) if pairs is None
           else torch.empty(len(todo), seqlen, dim, device=q.device, dtype=dtype))
    for i, (b, h) in enumerate(todo):
        g = h // (heads // kv_heads)
        listed = torch.zeros(seqlen, nblocks + 1, dtype=torch.bool, device=q.device)
        listed.scatter_(1, idx[b, :, g].clamp(0, nblocks).long(), True)  # sentinel: column nblocks
        allowed = listed[:, block_of]
        if causal:
            allowed = allowed & (torch.arange(seqlen, device=q.device)[None, :] <= rows)
        s = (q[b, :, h].to(dtype) @ k[b, :, g].to(dtype).T) * blocks.scale_for(dim)
        p = torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)
        o = p.nan_to_num(0.0) @ v[b, :, g].to(dtype)  # a row without a key: 0
        if pairs is None:
            out[b, :, h] = o
        else:
            out[i] = o
    return (out,)


def reference(workload, q, k, v, extra=None, dtype=None, causal=True, pairs=None, blocks=None):
    """Independent reference: every (b, h) separately in `dtype` (fp32 by default; fp32 on the
    GPU, fp64 on the CPU), one S x S matrix alive at a time. Returns the outputs in OUTPUTS
    order, out as [B, S, H, D] and the scores as [B, H/G, S], all in `dtype` (flags as 0/1).
    GQA (k, v with H/G heads): head h reads K/V head h // G, and K/V head g's statistics are
    its G heads' combined (summed; flags: any), then pooled.
    With `pairs` (a list of (b, h)) only those: out [n, S, D], scores [n, S], the statistics
    of h's K/V head (select_pairs).
    KEYS_SELECTED_BLOCKS: extra is block_idx, blocks the selection (nsa_reference)."""
    if selected_blocks(workload):
        dtype = torch.float32 if dtype is None else dtype
        return nsa_reference(q, k, v, extra, dtype, causal, pairs, blocks)
    row = spec(workload)
    logits, column = LOGITS[row.logits], COLUMNS[row.column]
    dtype = torch.float32 if dtype is None else dtype
    batch, q_len, heads, dim = q.shape
    kv_len, groups = k.shape[1], groups_of(q, k)
    rows = torch.arange(q_len, device=q.device)[:, None]
    cols = torch.arange(kv_len, device=q.device)[None, :]
    allowed = cols <= rows + (kv_len - q_len)

    def head(b, h):
        """(p, s, out) of query head (b, h), which reads K/V head h // G."""
        qi = q[b, :, h, :].to(dtype)
        ki, vi = (t[b, :, h // groups, :].to(dtype) for t in (k, v))
        s = (qi @ ki.T) * (1.0 / math.sqrt(dim))
        if logits is not None:
            s = logits(s)
        if causal:
            s = s.masked_fill(~allowed, float("-inf"))
        p = torch.softmax(s, dim=-1)
        return p, s, p @ vi

    def add_stats(acc, b, h, p, s):
        """acc (a list per slot, None before the first head) with head (b, h)'s statistics."""
        stats = column.reference(p, s, extra, b, h)
        return [column.combine(a, stat) for a, stat in zip(acc, stats)]

    half = row.pool // 2

    def pooled(stats):
        """The group's statistics, the first pooled (the pool applies to the sum)."""
        if row.pool:
            stats = [F.pad(stats[0], (half, half)).unfold(0, row.pool, 1).mean(dim=-1)] + stats[1:]
        return stats

    if pairs is None:
        out = torch.empty(batch, q_len, heads, dim, device=q.device, dtype=dtype)
        scores_out = [torch.empty(batch, heads // groups, kv_len, device=q.device, dtype=dtype)
                      for _ in column.slots]
        for b in range(batch):
            for g in range(heads // groups):
                acc = [None] * len(column.slots)
                for h in range(g * groups, (g + 1) * groups):
                    p, s, o = head(b, h)
                    out[b, :, h, :] = o
                    if column.reference is not None:
                        acc = add_stats(acc, b, h, p, s)
                for j, stat in enumerate(pooled(acc) if column.reference else ()):
                    scores_out[j][b, g] = stat
        return (out,) + tuple(scores_out)
    todo = list(pairs)
    out = torch.empty(len(todo), q_len, dim, device=q.device, dtype=dtype)
    scores_out = [torch.empty(len(todo), kv_len, device=q.device, dtype=dtype)
                  for _ in column.slots]
    for i, (b, h) in enumerate(todo):
        p, s, o = head(b, h)
        out[i] = o
        if column.reference is None:
            continue
        acc = [None] * len(column.slots)
        g = h // groups
        for hh in range(g * groups, (g + 1) * groups):  # the statistics of h's K/V head
            acc = add_stats(acc, b, hh, *((p, s) if hh == h else head(b, hh)[:2]))
        for j, stat in enumerate(pooled(acc)):
            scores_out[j][i] = stat
    return (out,) + tuple(scores_out)


# Tolerances of the check, relative L2 against the reference: the registry's tol_rel_l2 of the
# workload, but never below the floor of the output's slot, because the eager formulation is
# less exact than the kit's kernels on purpose (the artifact's fp16 scores and fp16 P V).
# fp16 inputs and fp16 P V give about 1e-3 on out; the column statistics are fp32 sums of fp32
# P computed from fp16 scores. Flags compare 0/1 vectors: a flag can flip where P[i,j] ties its
# threshold within the fp16 rounding of the scores, so a few flips in a thousand are allowed.
# The e2e model's final hidden states are fp16 through all layers (32 layers measured 2.2e-3).
TOLERANCE_FLOOR = {"out": 2e-2, "score": 1e-2, "score2": 1e-2, "flags": 1e-1}
HIDDEN_TOLERANCE = 5e-2


def tolerance(workload, output):
    """The relative-L2 tolerance of the peers' check of `output` (a name of OUTPUTS)."""
    row = spec(workload)
    slot = dict(zip(row.outputs, ("out",) + row.slots))[output]
    return max(row.tol_rel_l2, TOLERANCE_FLOOR[slot])


def compare(got, want, tol):
    """(rel_l2, max_abs, ok) of got against want, both moved to want's dtype; ok when rel_l2
    is finite and <= tol."""
    got = got.to(want.dtype)
    diff = got - want
    denom = torch.linalg.vector_norm(want).item()
    err = torch.linalg.vector_norm(diff).item()
    rel = err / denom if denom > 0 else err
    max_abs = diff.abs().max().item() if diff.numel() else 0.0
    ok = math.isfinite(rel) and rel <= tol
    return rel, max_abs, ok
