"""The TileLang NSA forward of the tilebench study: DeepSeek NSA's selected-block branch with GQA,
written in TileLang's tile language after the shape of the public tile-ai/tilelang NSA example.
Q and out [B, S, H, D]; K, V [B, S, H/G, D] (G = groups, query heads per K/V head);
block_idx int32 [B, S, H/G, T]: query t of K/V head h attends the keys of the listed blocks
(entries of BS keys; an entry past the sequence pads the list), causally (key <= t).

One CTA per (query t, K/V head, batch) holds the G query heads of that K/V head as the rows of
its tiles, padded to 16 rows (the MMA's row count) when G is smaller; the pipelined loop walks
the T list entries with the online softmax (tilelang_softmax.py). Compiled by
tilelang_backend."""

import tilelang_softmax

MMA_ROWS = 16

# as the TileLang NSA example: plain copies, no warp specialisation (its layout inference
# rejects the 16-row tiles with them)
PASS_CONFIGS = ("TL_ENABLE_FAST_MATH", "TL_DISABLE_TMA_LOWER", "TL_DISABLE_WARP_SPECIALIZED")


def kernel(batch, heads, seqlen, dim, groups, block_size, selected, dtype, scale):
    """The prim_func for one shape; dtype "fp16" or "bf16"; scale the softmax scale."""
    import tilelang.language as T
    softmax_step = tilelang_softmax.step()
    elem = {"fp16": T.float16, "bf16": T.bfloat16}[dtype]
    accum = T.float32
    kv_heads = heads // groups
    rows = -(-groups // MMA_ROWS) * MMA_ROWS
    BS = block_size
    scale_log2 = scale * tilelang_softmax.LOG2E
    q_shape = [batch, seqlen, heads, dim]
    kv_shape = [batch, seqlen, kv_heads, dim]
    idx_shape = [batch, seqlen, kv_heads, selected]

    @T.prim_func
    def nsa(Q: T.Tensor(q_shape, elem), K: T.Tensor(kv_shape, elem),
            V: T.Tensor(kv_shape, elem), BlockIdx: T.Tensor(idx_shape, T.int32),
            Output: T.Tensor(q_shape, elem)):
        with T.Kernel(seqlen, kv_heads, batch, threads=32) as (t, h, b):
            Q_shared = T.alloc_shared([rows, dim], elem)
            K_shared = T.alloc_shared([BS, dim], elem)
            V_shared = T.alloc_shared([BS, dim], elem)
            O_shared = T.alloc_shared([rows, dim], elem)
            acc_s = T.alloc_fragment([rows, BS], accum)
            acc_s_cast = T.alloc_fragment([rows, BS], elem)
            acc_o = T.alloc_fragment([rows, dim], accum)
            row_max = T.alloc_fragment([rows], accum)
            row_max_prev = T.alloc_fragment([rows], accum)
            row_rescale = T.alloc_fragment([rows], accum)
            block_sum = T.alloc_fragment([rows], accum)
            row_sum = T.alloc_fragment([rows], accum)

            T.clear(Q_shared)
            T.copy(Q[b, t, h * groups:(h + 1) * groups, :], Q_shared[0:groups, :])
            T.fill(acc_o, 0)
            T.fill(row_sum, 0)
            T.fill(row_max, -T.infinity(accum))
            for e in T.Pipelined(selected, num_stages=2):
                start = BlockIdx[b, t, h, e] * BS
                if start <= t and start >= 0:
                    T.copy(K[b, start:start + BS, h, :], K_shared)
                    for i, j in T.Parallel(rows, BS):
                        acc_s[i, j] = T.if_then_else(t >= start + j, 0, -T.infinity(accum))
                    T.gemm(Q_shared, K_shared, acc_s, transpose_B=True,
                           policy=T.GemmWarpPolicy.FullRow)
                    softmax_step(acc_s, acc_s_cast, acc_o, row_max, row_max_prev,
                                 row_rescale, block_sum, row_sum, scale_log2, rows, BS, dim)
                    T.copy(V[b, start:start + BS, h, :], V_shared)
                    T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(rows, dim):
                acc_o[i, j] /= row_sum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared[0:groups, :], Output[b, t, h * groups:(h + 1) * groups, :])

    return nsa
