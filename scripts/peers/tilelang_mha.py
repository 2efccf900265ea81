"""The TileLang attention forward of the tilebench study (its MHA kernel): out = softmax(scale ·
Q·Kᵀ) V per (batch, head), Q, K, V and out [B, S, H, D], the causal mask bottom-right aligned
(q_len == kv_len here, so query i sees keys 0..i), written in TileLang's tile language after
the shape of the public tile-ai/tilelang flash-attention example (bshd layout): one block of
block_M query rows per CTA, a pipelined loop over key blocks with the online softmax in
registers (tilelang_softmax.py), exp2 with the scale folded into log2(e) units. Compiled by
tilelang_backend.

Tiles: 128 query rows x 128 keys, 2 stages, 256 threads (two warpgroups on Hopper)."""

import tilelang_softmax

PASS_CONFIGS = ("TL_ENABLE_FAST_MATH",)  # tilelang.PassConfigKey names, set true


def tiles(dim):
    """(block_M, block_N, stages, threads)."""
    return 128, 128, 2, 256


def kernel(batch, heads, seqlen, dim, causal, dtype, scale):
    """The prim_func for one shape; dtype "fp16" or "bf16"; scale the softmax scale."""
    import tilelang.language as T
    softmax_step = tilelang_softmax.step()
    elem = {"fp16": T.float16, "bf16": T.bfloat16}[dtype]
    accum = T.float32
    block_M, block_N, stages, threads = tiles(dim)
    shape = [batch, seqlen, heads, dim]
    scale_log2 = scale * tilelang_softmax.LOG2E

    @T.prim_func
    def mha(Q: T.Tensor(shape, elem), K: T.Tensor(shape, elem), V: T.Tensor(shape, elem),
            Output: T.Tensor(shape, elem)):
        with T.Kernel(T.ceildiv(seqlen, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], elem)
            K_shared = T.alloc_shared([block_N, dim], elem)
            V_shared = T.alloc_shared([block_N, dim], elem)
            O_shared = T.alloc_shared([block_M, dim], elem)
            acc_s = T.alloc_fragment([block_M, block_N], accum)
            acc_s_cast = T.alloc_fragment([block_M, block_N], elem)
            acc_o = T.alloc_fragment([block_M, dim], accum)
            row_max = T.alloc_fragment([block_M], accum)
            row_max_prev = T.alloc_fragment([block_M], accum)
            row_rescale = T.alloc_fragment([block_M], accum)
            block_sum = T.alloc_fragment([block_M], accum)
            row_sum = T.alloc_fragment([block_M], accum)

            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(row_sum, 0)
            T.fill(row_max, -T.infinity(accum))
            # causal: the key blocks up to this query block's last row
            n_blocks = (T.min(T.ceildiv(seqlen, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                        if causal else T.ceildiv(seqlen, block_N))
            for k in T.Pipelined(n_blocks, num_stages=stages):
                T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)
                if causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0,
                                                     -T.infinity(accum))
                else:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(k * block_N + j >= seqlen,
                                                     -T.infinity(accum), 0)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True,
                       policy=T.GemmWarpPolicy.FullRow)
                softmax_step(acc_s, acc_s_cast, acc_o, row_max, row_max_prev, row_rescale,
                             block_sum, row_sum, scale_log2, block_M, block_N, dim)
                T.copy(V[bz, k * block_N:(k + 1) * block_N, by, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= row_sum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, bx * block_M:(bx + 1) * block_M, by, :])

    return mha
