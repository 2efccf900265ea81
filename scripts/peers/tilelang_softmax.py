"""The online-softmax step shared by the tilebench study's TileLang attention kernels
(tilelang_mha.py, tilelang_nsa.py), as a TileLang macro: inlined where it is called.

One step takes the raw scores of a key block (acc_s [rows, cols], masked entries -inf), folds
them into the running row maximum and row sum, turns acc_s into exp2(scale·(s - max)) and its
16-bit copy acc_s_cast (the P·V operand), and rescales the output accumulator acc_o
[rows, dim] to the new maximum. scale_log2 is the softmax scale times log2(e)."""

LOG2E = 1.44269504


def step():
    """The macro (built on first use, so importing this file needs no TileLang)."""
    import tilelang.language as T

    @T.macro
    def online_softmax_step(acc_s, acc_s_cast, acc_o, row_max, row_max_prev, row_rescale,
                            block_sum, row_sum, scale_log2, rows, cols, dim):
        T.copy(row_max, row_max_prev)
        T.reduce_max(acc_s, row_max, dim=1, clear=False)
        for i in T.Parallel(rows):
            row_max[i] = T.max(row_max[i], row_max_prev[i])
        for i in T.Parallel(rows):
            row_rescale[i] = T.exp2(row_max_prev[i] * scale_log2 - row_max[i] * scale_log2)
        for i, j in T.Parallel(rows, cols):
            acc_s[i, j] = T.exp2(acc_s[i, j] * scale_log2 - row_max[i] * scale_log2)
        T.reduce_sum(acc_s, block_sum, dim=1)
        for i in T.Parallel(rows):
            row_sum[i] = row_sum[i] * row_rescale[i] + block_sum[i]
        T.copy(acc_s, acc_s_cast)
        for i, j in T.Parallel(rows, dim):
            acc_o[i, j] *= row_rescale[i]

    return online_softmax_step
