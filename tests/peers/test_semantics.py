#!/usr/bin/env python3
"""CPU semantic checks of the PyTorch peers; they need torch and exit 77 (CTest SKIP) without.

  Every workload is every row of kernels/attention/registry/workloads.def plus synthetic rows that
  combine the existing features anew (COMBINED, added through $REPRO_WORKLOADS_DEF): a new
  combination must need no Python change.
  1. workloads.reference (fp64) against a plain-Python loop implementation of the design's
     math at a tiny size, every workload (the reference must itself be right);
  2. the eager formulation (the `torch` peer) with fp32 inputs against the reference (tight),
     and with fp16 inputs through workloads.compare (the peers' own check), which must also
     reject a wrong answer (a non-causal attention);
  3. the e2e KV-cache selection against a brute-force Python selection, every workload;
  4. the e2e model: a tiny configuration, fp32 forward against the fp64 reference (the
     selected-block rows, which the model refuses, excepted);
  5. peer.py --device cpu, end to end: every workload with torch, attn with sdpa-flash, h2o
     with inductor, the e2e torch model; each log complete and check ok=1, exit 0; nsa at
     --heads 16 with --groups 16 and 4 (query heads per K/V head: config kv_heads=1 and 4);
     every dense workload with --groups 2 (GQA) and sampled pairs; --e2e --groups 2 refused.
  6. GQA (G = 2 and 4 query heads per K/V head) on every dense workload: the reference against
     the loops (which take K/V head h // G and sum the group's statistics), the eager
     formulation against the reference, and both against the MHA reference on K/V heads
     repeated G times (out equal; each K/V head's statistic the group's per-head ones summed,
     any for flags, pooled after the sum).
Ends with "N passed, N failed".
"""
import argparse
import math
import os
import random
import subprocess
import sys
import tempfile

try:
    import torch
except ImportError:
    print("torch is not importable by %s: skipped" % sys.executable)
    sys.exit(77)

from tally import Tally

tally = Tally()
check = tally.check


def rel_l2(a, b):
    a, b = a.double(), b.double()
    norm_b = max(torch.linalg.vector_norm(b).item(), 1e-300)
    return (torch.linalg.vector_norm(a - b) / norm_b).item()


# ---- 1. plain-Python reference ------------------------------------------------------------

def loops_reference(row, q, k, v, extra):
    """The design's math with Python floats, one element at a time, from the row's features.
    GQA when k, v have Hkv < H heads: head h reads K/V head h // (H / Hkv), and the statistics
    of a K/V head are summed (flags: any) over its heads, pooled after the sum."""
    B, S, H, D = q.shape
    Hkv = k.shape[2]
    G = H // Hkv
    q, k, v = q.tolist(), k.tolist(), v.tolist()
    extra = extra.tolist() if extra is not None else None
    out = [[[[0.0] * D for _ in range(H)] for _ in range(S)] for _ in range(B)]
    s1 = [[[0.0] * S for _ in range(Hkv)] for _ in range(B)]  # sum, keyformer sum or flags
    s2 = [[[0.0] * S for _ in range(Hkv)] for _ in range(B)]  # sum of squares
    for b in range(B):
        for h in range(H):
            g = h // G
            col = [0.0] * S
            for i in range(S):
                logits = []
                for j in range(i + 1):  # causal, q_len == kv_len
                    x = sum(q[b][i][h][d] * k[b][j][g][d] for d in range(D)) / math.sqrt(D)
                    if row.logits == "LOGITS_SOFTCAP":
                        x = 50.0 * math.tanh(x / 50.0)
                    logits.append(x)
                m = max(logits)
                e = [math.exp(x - m) for x in logits]
                z = sum(e)
                p = [x / z for x in e]
                for d in range(D):
                    out[b][i][h][d] = sum(p[j] * v[b][j][g][d] for j in range(i + 1))
                for j in range(i + 1):
                    col[j] += p[j]
                    s2[b][g][j] += p[j] * p[j]
                    if row.column == "COL_ANY_GE_MASK" and p[j] >= extra[i][j]:
                        s1[b][g][j] = 1.0
                if row.column == "COL_KEYFORMER":
                    kf = [(logits[j] - math.log(extra[b][h][i][j])) / 1.5 for j in range(i + 1)]
                    gm = max(kf)
                    ge = [math.exp(x - gm) for x in kf]
                    gz = sum(ge)
                    for j in range(i + 1):
                        s1[b][g][j] += ge[j] / gz
            if row.column in ("COL_SUM", "COL_SUM_SQ"):
                s1[b][g] = [a + c for a, c in zip(s1[b][g], col)]
            if row.pool and h % G == G - 1:  # the group's last head: pool its sum
                w = row.pool
                s1[b][g] = [sum(s1[b][g][t] for t in range(j - w // 2, j + w // 2 + 1)
                                if 0 <= t < S) / w for j in range(S)]
    outs = [torch.tensor(out, dtype=torch.float64)]
    if row.column != "COL_NONE":
        outs.append(torch.tensor(s1, dtype=torch.float64))
    if row.column == "COL_SUM_SQ":
        outs.append(torch.tensor(s2, dtype=torch.float64))
    return outs


def loops_selected(q, k, v, idx, blocks, causal):
    """KEYS_SELECTED_BLOCKS with Python floats: query t of head h attends to the keys j of the
    listed live blocks of its K/V head h // (H / Hkv) (and, causal, j <= t)."""
    B, S, H, D = q.shape
    Hkv = k.shape[2]
    q, k, v, idx = q.tolist(), k.tolist(), v.tolist(), idx.tolist()
    scale = blocks.scale_for(D)
    out = [[[[0.0] * D for _ in range(H)] for _ in range(S)] for _ in range(B)]
    for b in range(B):
        for t in range(S):
            for h in range(H):
                g = h // (H // Hkv)
                keys = [j for blk in idx[b][t][g] if blk >= 0
                        for j in range(blk * blocks.block_size, (blk + 1) * blocks.block_size)
                        if j < S and (j <= t or not causal)]
                if not keys:
                    continue
                x = [scale * sum(q[b][t][h][d] * k[b][j][g][d] for d in range(D)) for j in keys]
                m = max(x)
                e = [math.exp(y - m) for y in x]
                z = sum(e)
                for d in range(D):
                    out[b][t][h][d] = sum(e[n] * v[b][j][g][d] for n, j in enumerate(keys)) / z
    return [torch.tensor(out, dtype=torch.float64)]


def check_lists(idx, seqlen, blocks):
    """block_lists: every list min(T, c) distinct ascending blocks of 0..c-1, then the
    sentinel ceil(S / BS)."""
    nblocks = -(-seqlen // blocks.block_size)
    bad = 0
    for per_t in idx.tolist():  # every batch
        for t, per_g in enumerate(per_t):
            c = max(1, t // blocks.block_size)
            n = min(blocks.selected, c)
            for lst in per_g:
                bad += (len(lst) != blocks.selected or lst[:n] != sorted(set(lst[:n]))
                        or not all(0 <= x < c for x in lst[:n])
                        or any(x != nblocks for x in lst[n:]))
    check(bad == 0, "%d block lists break the rule" % bad)


def test_reference_against_loops():
    for workload in wl.WORKLOADS:
        if wl.selected_blocks(workload):
            for causal in (True, False):
                blocks = wl.Blocks(groups=2, block_size=3, selected=2, scale=0.3)
                inputs = wl.make_inputs(workload, 2, 13, 4, 3, seed=3, device="cpu",
                                        dtype=torch.float64, blocks=blocks)
                check(inputs[1].shape[2] == 2 and inputs[3].shape[2] == 2,
                      "%s: groups 2 of 4 heads: k %s, block_idx %s, want 2 K/V heads"
                      % (workload, tuple(inputs[1].shape), tuple(inputs[3].shape)))
                check_lists(inputs[3], 13, blocks)
                want = loops_selected(*inputs, blocks, causal)
                got = wl.reference(workload, *inputs, dtype=torch.float64, causal=causal,
                                   blocks=blocks)
                eager = wl.eager(workload, *inputs, causal=causal, blocks=blocks)
                for name, g, e, w in zip(wl.OUTPUTS[workload], got, eager, want):
                    err, err_e = rel_l2(g, w), rel_l2(e, w)
                    # eager's softmax runs in fp32 (the artifact's), hence its looser bound
                    check(err < 1e-12 and err_e < 1e-6, "%s %s causal %d: reference %.3e, "
                          "eager %.3e vs loops" % (workload, name, causal, err, err_e))
            continue
        inputs = wl.make_inputs(workload, 2, 7, 2, 3, seed=3, device="cpu", dtype=torch.float64)
        if len(inputs) > 3:
            inputs = inputs[:3] + (inputs[3].double(),)
        extra = inputs[3] if len(inputs) > 3 else None
        want = loops_reference(registry.find(workload), *inputs[:3], extra)
        got = wl.reference(workload, *inputs, dtype=torch.float64)
        check(len(got) == len(want) == len(wl.OUTPUTS[workload]),
              "%s: reference gives %d outputs, loops %d" % (workload, len(got), len(want)))
        for name, g, w in zip(wl.OUTPUTS[workload], got, want):
            err = rel_l2(g, w)
            check(err < 1e-12, "%s %s: reference vs loops rel_l2 %.3e" % (workload, name, err))


# ---- 2. eager formulation -------------------------------------------------------------------

def test_eager_against_reference():
    for workload in wl.WORKLOADS:
        # selected blocks: every query head on one K/V head (groups = heads: 3, then 2)
        kw, kw16 = ({"blocks": wl.Blocks(groups=g, block_size=8, selected=3)} if
                    wl.selected_blocks(workload) else {} for g in (3, 2))
        inputs = wl.make_inputs(workload, 1, 48, 3, 16, seed=5, device="cpu", dtype=torch.float32,
                                **kw)
        got = wl.eager(workload, *inputs, **kw)
        want = wl.reference(workload, *inputs, dtype=torch.float64, **kw)
        for name, g, w in zip(wl.OUTPUTS[workload], got, want):
            err = rel_l2(g, w)
            check(err < 1e-5, "%s %s: fp32 eager vs reference rel_l2 %.3e" % (workload, name, err))
        inputs16 = wl.make_inputs(workload, 1, 64, 2, 32, seed=6, device="cpu", **kw16)
        got16 = wl.eager(workload, *inputs16, **kw16)
        want16 = wl.reference(workload, *inputs16, dtype=torch.float64, **kw16)
        for name, g, w in zip(wl.OUTPUTS[workload], got16, want16):
            rel, _, ok = wl.compare(g, w, wl.tolerance(workload, name))
            check(ok, "%s %s: fp16 eager fails the peers' check (rel_l2 %.3e)" % (workload, name,
                                                                                rel))
    # the check must be able to fail: attention without the causal mask is wrong
    q, k, v = wl.make_inputs("attn", 1, 64, 2, 32, seed=7, device="cpu")
    full = torch.softmax(q.double().transpose(1, 2) @ k.double().transpose(1, 2).transpose(-1, -2)
                         / math.sqrt(32), dim=-1) @ v.double().transpose(1, 2)
    want = wl.reference("attn", q, k, v, dtype=torch.float64)[0]
    check(not wl.compare(full.transpose(1, 2), want, wl.tolerance("attn", "out"))[2],
          "check accepts a non-causal out")
    # and for selected blocks: attention over every causal key instead of the listed ones
    # (groups 1: MHA, so the dense reference takes the same k, v)
    for workload in filter(wl.selected_blocks, wl.WORKLOADS):
        blocks = wl.Blocks(groups=1, block_size=8, selected=2)
        q, k, v, idx = wl.make_inputs(workload, 1, 64, 2, 32, seed=8, device="cpu",
                                      blocks=blocks)
        dense = wl.reference("attn", q, k, v, dtype=torch.float64)[0]
        want = wl.reference(workload, q, k, v, idx, dtype=torch.float64, blocks=blocks)[0]
        check(not wl.compare(dense, want, wl.tolerance(workload, "out"))[2],
              "%s: check accepts attention over every key" % workload)
        check(abs(wl.gflop(workload, 1, 64, 2, 32, True, blocks) * 1e9
                  - 4 * 32 * 2 * sum(min(t + 1, 8) if t < 16 else min(2, t // 8) * 8
                                     for t in range(64))) < 1e-6, "%s: gflop" % workload)


# ---- 6. GQA ---------------------------------------------------------------------------------

def repeated_mha(workload, inputs, groups):
    """The MHA reference (fp64) on K/V heads repeated G times: per query head, [B, H, S]."""
    q, k, v = inputs[:3]
    rep = [t.repeat_interleave(groups, dim=2) for t in (k, v)]
    return wl.reference(workload, q, *rep, *inputs[3:], dtype=torch.float64)


def group_combined(row, stat, groups):
    """Per-query-head [B, H, S] statistics (already pooled: the pool is linear) combined per
    K/V head: summed, any (max of 0/1) for flags."""
    b, h, n = stat.shape
    grouped = stat.view(b, h // groups, groups, n)
    return grouped.amax(dim=2) if row.column == "COL_ANY_GE_MASK" else grouped.sum(dim=2)


def test_gqa():
    dense = [w for w in wl.WORKLOADS if not wl.selected_blocks(w)]
    for workload in dense:
        row = registry.find(workload)
        for groups, heads in ((2, 4), (4, 4)):
            # the reference against the loops (tiny, fp64)
            inputs = wl.make_inputs(workload, 2, 7, heads, 3, seed=3, device="cpu",
                                    dtype=torch.float64, groups=groups)
            check(inputs[0].shape[2] == heads and inputs[1].shape[2] == heads // groups
                  and inputs[2].shape[2] == heads // groups,
                  "%s G=%d: q %s, k %s, want %d and %d heads" % (
                      workload, groups, tuple(inputs[0].shape), tuple(inputs[1].shape), heads,
                      heads // groups))
            if len(inputs) > 3:
                inputs = inputs[:3] + (inputs[3].double(),)
            extra = inputs[3] if len(inputs) > 3 else None
            want = loops_reference(row, *inputs[:3], extra)
            got = wl.reference(workload, *inputs, dtype=torch.float64)
            eager = wl.eager(workload, *inputs)
            mha = repeated_mha(workload, inputs, groups)
            for n, (name, g, e, w, m) in enumerate(zip(wl.OUTPUTS[workload], got, eager, want,
                                                       mha)):
                if n > 0:  # a statistic: per K/V head
                    check(tuple(g.shape) == tuple(e.shape) == (2, heads // groups, 7),
                          "%s G=%d %s: shapes %s %s" % (workload, groups, name,
                                                        tuple(g.shape), tuple(e.shape)))
                    m = group_combined(row, m, groups)
                err, err_e, err_m = rel_l2(g, w), rel_l2(e.double(), w), rel_l2(m, w)
                check(err < 1e-12 and err_e < 1e-6 and err_m < 1e-12,
                      "%s G=%d %s: reference %.3e, eager %.3e, repeated MHA %.3e vs loops" % (
                          workload, groups, name, err, err_e, err_m))
            # sampled pairs: each pair's score row is its K/V head's
            pairs = [(1, heads - 1), (0, 1)]
            sampled = wl.reference(workload, *inputs, dtype=torch.float64, pairs=pairs)
            for n, (name, g, s_) in enumerate(zip(wl.OUTPUTS[workload], got, sampled)):
                sel = wl.select_pairs(n == 0, g, pairs, groups)
                check(rel_l2(s_, sel) < 1e-12, "%s G=%d %s: sampled pairs %.3e" % (
                    workload, groups, name, rel_l2(s_, sel)))
        # fp16 inputs at a larger size: the eager formulation passes the peers' check
        inputs16 = wl.make_inputs(workload, 1, 64, 4, 32, seed=6, device="cpu", groups=2)
        got16 = wl.eager(workload, *inputs16)
        want16 = wl.reference(workload, *inputs16, dtype=torch.float64)
        for name, g, w in zip(wl.OUTPUTS[workload], got16, want16):
            rel, _, ok = wl.compare(g, w, wl.tolerance(workload, name))
            check(ok, "%s G=2 %s: fp16 eager fails the peers' check (rel_l2 %.3e)" % (
                workload, name, rel))
    # the check must be able to fail: the per-query-head (MHA) reading of the K/V heads, k and
    # v's heads taken as h % Hkv instead of h // G, is wrong
    q, k, v = wl.make_inputs("h2o", 1, 32, 4, 16, seed=9, device="cpu", dtype=torch.float64,
                             groups=2)
    wrong = [t[:, :, [0, 1, 0, 1]] for t in (k, v)]
    want = wl.reference("h2o", q, k, v, dtype=torch.float64)
    bad = wl.reference("h2o", q, *wrong, dtype=torch.float64)
    check(not wl.compare(bad[0], want[0], wl.tolerance("h2o", "out"))[2],
          "check accepts K/V head h %% Hkv for h // G")
    check(groups_ok_error(lambda: wl.make_inputs("attn", 1, 8, 6, 4, seed=1, device="cpu",
                                                 groups=4)),
          "make_inputs accepts groups 4 of 6 heads")


def groups_ok_error(call):
    """True when call() raises ValueError."""
    try:
        call()
    except ValueError:
        return True
    return False


# ---- 3. selection ---------------------------------------------------------------------------

def brute_selection(select, named, q_len, cap):
    """Python lists: the kept indices of each head, ascending (named: slot -> [1, H, S])."""
    kept = []
    for h in range(next(iter(named.values())).shape[1]):
        if select == "SEL_FLAGS":
            f = named["flags"][0, h].tolist()
            marked = [j for j in range(len(f)) if f[j]]
            kept.append(sorted(marked[-cap:]))
            continue
        s = named["score"][0, h].tolist()
        n = len(s)
        if select == "SEL_TOPK_STD":
            sq = named["score2"][0, h].tolist()
            std = [math.sqrt(max(sq[j] / q_len - (s[j] / q_len) ** 2, 0.0)) for j in range(n)]
            by_std = sorted(range(n), key=lambda j: -std[j])[:min(llama.KEEP_STD, n)]
            rest = [j for j in sorted(range(n), key=lambda j: -s[j]) if j not in by_std]
            kept.append(sorted(by_std + rest[:cap - len(by_std)]))
        else:
            kept.append(sorted(sorted(range(n), key=lambda j: -s[j])[:cap]))
    return kept


def test_selection():
    rng = random.Random(11)
    for row in registry.workloads():
        if row.select == "SEL_NONE":
            continue
        workload = row.name
        for seqlen in (40, 700, 1000):
            heads = 3
            cap = llama.cache_cap(workload, seqlen)

            # distinct values: no ties, so the selection is unique (the defaults bind this
            # iteration's seqlen and heads)
            def distinct(seqlen=seqlen, heads=heads):
                vals = rng.sample(range(1, 10 * seqlen * heads), seqlen * heads)
                return torch.tensor(vals, dtype=torch.float64).view(1, heads, seqlen) / (
                    10 * seqlen)
            s1 = distinct().float()
            named = {"score": s1, "score2": distinct(),
                     "flags": (s1 > 0.5 + 0.3 * torch.arange(heads).view(1, heads, 1)
                               / heads).float()}
            if row.select == "SEL_TOPK_STD":
                # sum of squares = sum^2 / q_len + r with r distinct: distinct std, no ties
                s1 = s1.double() * 50
                named.update(score=s1, score2=s1 * s1 / seqlen + distinct())
            named = {slot: named[slot] for slot in row.slots}
            idx, count = llama.selected_indices(workload, tuple(named.values()), seqlen, cap)
            want = brute_selection(row.select, named, seqlen, cap)
            for h in range(heads):
                n = int(count[h])
                got = idx[h].tolist()
                check(got[:n] == want[h] and all(x == -1 for x in got[n:]),
                      "%s S=%d head %d: selection %s..., want %s..." % (workload, seqlen, h,
                                                                       got[:8], want[h][:8]))


# ---- 4. e2e model ---------------------------------------------------------------------------

def test_e2e_model():
    cfg = llama.Config(layers=2, hidden=64, heads=4, mlp=96, vocab=50, seqlen=24)
    for workload in wl.WORKLOADS:
        if wl.selected_blocks(workload):
            continue  # the e2e model refuses them (peer.py --e2e: status=unsupported)
        weights = llama.make_weights(cfg, 1, "cpu", dtype=torch.float32)
        corm_mask = (wl.corm_mask(cfg.seqlen, "cpu") if wl.extra_input(workload) == "corm_mask"
                     else None)
        cache = llama.Cache(cfg, workload, "cpu", dtype=torch.float32)
        def attn(*a, w=workload):
            return wl.eager(w, *a)
        got = llama.forward(attn, workload, cfg, weights, cache, corm_mask,
                            torch.Generator().manual_seed(4))
        want = llama.reference_forward(workload, cfg, weights, corm_mask,
                                       torch.Generator().manual_seed(4), dtype=torch.float64)
        err = rel_l2(got, want)
        check(err < 1e-5, "e2e %s: fp32 forward vs fp64 reference rel_l2 %.3e" % (workload, err))
        check(bool(torch.isfinite(got).all()), "e2e %s: non-finite hidden states" % workload)
        for layer_rows, layer_counts in zip(cache.idx.tolist(), cache.count.tolist()):
            for row, count in zip(layer_rows, layer_counts):
                valid = [x for x in row if x >= 0]
                check(valid == sorted(set(valid)) and len(valid) == count
                      and row[:count] == valid,
                      "e2e %s: cache row %s... (count %d) not ascending, unique, packed"
                      % (workload, row[:8], count))
        check(cache.cap == 0 or int(cache.count.min()) > 0, "e2e %s: empty cache" % workload)


# ---- 5. peer.py end to end ------------------------------------------------------------------

SMALL = ["--device", "cpu", "--seqlen", "64", "--heads", "2", "--dim", "32", "--warmup", "1",
         "--runs", "2"]
E2E_SMALL = ["--device", "cpu", "--e2e", "--seqlen", "32", "--layers", "2", "--hidden", "128",
             "--heads", "2", "--mlp", "256", "--vocab", "100", "--warmup", "0", "--runs", "1"]


def last_value(args, option):
    """The int value of the last `option` in args (the one argparse keeps)."""
    return int(args[len(args) - args[::-1].index(option)])


def test_peer_cli(peer):
    cells = [["--system", "torch", "--workload", w] + SMALL for w in wl.WORKLOADS]
    cells += [["--system", "torch", "--workload", w] + SMALL +
              ["--groups", "1", "--block-size", "16", "--selected-blocks", "2", "--scale", "0.1",
               "--causal", "0"] for w in filter(wl.selected_blocks, wl.WORKLOADS)]
    # --groups is the query heads per K/V head (the seed's and TileLang's): H16 G16 runs one
    # K/V head, G4 four
    cells += [["--system", "torch", "--workload", w] + SMALL +
              ["--heads", "16", "--groups", g, "--block-size", "16", "--selected-blocks", "2"]
              for w in filter(wl.selected_blocks, wl.WORKLOADS) for g in ("16", "4")]
    # GQA on the dense workloads: --groups 2 of --heads 4 (config groups=2 kv_heads=2), the
    # statistics per K/V head; h2o also with sampled pairs
    cells += [["--system", "torch", "--workload", w] + SMALL + ["--heads", "4", "--groups", "2"]
              for w in wl.WORKLOADS if not wl.selected_blocks(w)]
    cells += [["--system", "torch", "--workload", "h2o"] + SMALL +
              ["--heads", "4", "--groups", "2", "--check-pairs", "2"]]
    cells += [["--system", "sdpa-flash", "--workload", "attn"] + SMALL,
              ["--system", "inductor", "--workload", "h2o"] + SMALL,
              ["--system", "torch", "--workload", "roco"] + E2E_SMALL]
    for args in cells:
        res = subprocess.run([sys.executable, peer] + args, capture_output=True, text=True,
                             timeout=300)
        what = " ".join(args[:4])
        check(res.returncode == 0, "%s: exit %d: %s" % (what, res.returncode,
                                                         res.stdout[-500:] + res.stderr[-500:]))
        records = [kvlog.parse(ln) for ln in res.stdout.splitlines() if not ln.startswith("#")]
        tags = [t for t, _ in records]
        n_checks = 1 if "--e2e" in args else len(wl.OUTPUTS[args[3]])
        check(tags == ["meta", "config"] + ["check"] * n_checks + ["result"],
              "%s: tags %s" % (what, tags))
        if "--groups" in args:
            heads, groups = last_value(args, "--heads"), last_value(args, "--groups")
            config = dict(dict(records).get("config", []))
            check(config.get("groups") == str(groups)
                  and config.get("kv_heads") == str(heads // groups),
                  "%s --heads %d --groups %d: config groups=%r kv_heads=%r" % (
                      what, heads, groups, config.get("groups"), config.get("kv_heads")))
        for tag, pairs in records:
            d = dict(pairs)
            if tag == "check":
                check(d.get("ok") == "1", "%s: %s" % (what, d))
            if tag == "result":
                check(d.get("status") == "ok" and float(d.get("avg_ms", "nan")) > 0,
                      "%s: result %s" % (what, d))
                check(("gflops_s" in d) != ("--e2e" in args), "%s: gflops_s presence" % what)
    for workload in filter(wl.selected_blocks, wl.WORKLOADS):  # the e2e model refuses these
        res = subprocess.run([sys.executable, peer, "--system", "torch", "--workload", workload]
                             + E2E_SMALL, capture_output=True, text=True, timeout=300)
        check(res.returncode == 4 and "status=unsupported" in res.stdout,
              "--e2e %s: exit %d: %s" % (workload, res.returncode, res.stdout[-300:]))
    # the e2e model is MHA: GQA refused with the reason, not ignored
    res = subprocess.run([sys.executable, peer, "--system", "torch", "--workload", "h2o"]
                         + E2E_SMALL + ["--groups", "2"], capture_output=True, text=True,
                         timeout=300)
    check(res.returncode == 4 and "status=unsupported" in res.stdout and "MHA" in res.stdout,
          "--e2e --groups 2: exit %d: %s" % (res.returncode, res.stdout[-300:]))


# New combinations of the existing features, added to a copy of the registry.
COMBINED = [
    'WORKLOAD(C1, "combo_softcap_sq", LOGITS_SOFTCAP, KEYS_DENSE, COL_SUM_SQ, 3, '
    'SEL_TOPK_STD, "c1_score", "c1_sq", NULL, 5e-3, 1e-2)',
    'WORKLOAD(C2, "combo_kf_pool", LOGITS_SOFTCAP, KEYS_DENSE, COL_KEYFORMER, 7, SEL_TOPK, '
    '"c2_score", NULL, NULL, 5e-3, 1e-2)',
    'WORKLOAD(C3, "combo_flags_cap", LOGITS_SOFTCAP, KEYS_DENSE, COL_ANY_GE_MASK, 0, '
    'SEL_FLAGS, NULL, NULL, "c3_flags", 5e-3, 1e-2)',
]


def main():
    global wl, llama, kvlog, registry
    p = argparse.ArgumentParser()
    p.add_argument("--peer", required=True)
    p.add_argument("--def", dest="def_path", help="the registry (default: "
                   "kernels/attention/registry/workloads.def beside scripts/peers)")
    a = p.parse_args()
    peer = os.path.abspath(a.peer)
    sys.path.insert(0, os.path.dirname(peer))
    source = a.def_path or os.environ.get("REPRO_WORKLOADS_DEF") or os.path.join(
        os.path.dirname(peer), "..", "..", "kernels", "attention", "registry", "workloads.def")
    with tempfile.TemporaryDirectory() as directory:
        combined = os.path.join(directory, "combined.def")
        with open(source, encoding="utf-8") as f, open(combined, "w", encoding="utf-8") as g:
            g.write(f.read() + "\n" + "\n".join(COMBINED) + "\n")
        os.environ["REPRO_WORKLOADS_DEF"] = combined  # before registry is imported; peer.py too
        import kvlog as kvlog_module
        import llama as llama_module
        import registry as registry_module
        import workloads as wl_module
        wl, llama, kvlog, registry = wl_module, llama_module, kvlog_module, registry_module
        check(len(wl.WORKLOADS) == len(registry_module.load(source)) + len(COMBINED),
              "the combined registry has %d workloads" % len(wl.WORKLOADS))
        torch.manual_seed(0)
        test_reference_against_loops()
        test_eager_against_reference()
        test_selection()
        test_e2e_model()
        test_gqa()
        test_peer_cli(peer)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
