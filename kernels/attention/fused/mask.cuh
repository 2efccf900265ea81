// The causal mask and the key range of every dense pass: query i sees key j when
// j <= i + p.offset and j < Lkv (p.offset = Lkv without a mask). Which key blocks a query tile
// reaches, which blocks cross the diagonal or an end (edge blocks take the element mask, the
// others none), and the masked scores of the forwards (gemma2's softcap with them).
#pragma once
#include "softmax.cuh"

namespace fused {

// Key blocks of COLS keys up to the causal limit of the query rows before row_end.
template <int COLS> __device__ __forceinline__ int key_blocks_upto(int row_end, const Params &p) {
  const int last_row = min(row_end, p.Lq) - 1;
  const int kv_end = min(p.Lkv, last_row + p.offset + 1);
  return (kv_end + COLS - 1) / COLS;
}

// Whether the COLS keys from j0 cross the diagonal of the query rows from row0, or the keys'
// end: such a block needs the element mask.
template <int COLS>
__device__ __forceinline__ bool key_block_edge(int j0, int row0, const Params &p) {
  return j0 + COLS - 1 > row0 + p.offset || j0 + COLS > p.Lkv;
}

// The first block of COLS keys that crosses the diagonal of the rows from row0 or the keys' end
// (key_block_edge is monotone in the block): the blocks before it need no mask.
template <int COLS> __device__ __forceinline__ int first_edge_block(int row0, const Params &p) {
  const int diag = row0 + p.offset - (COLS - 1), end = p.Lkv - COLS;
  if (diag < 0 || end < 0) return 0;
  return min(diag, end) / COLS + 1;
}

// Whether a column pass's tile of KEYS keys from j0 and QUERIES queries from i0 crosses the
// diagonal or an end (else every element is live).
template <int KEYS, int QUERIES>
__device__ __forceinline__ bool col_tile_edge(int j0, int i0, const Params &p) {
  return j0 + KEYS - 1 > i0 + p.offset || i0 + QUERIES > p.Lq || j0 + KEYS > p.Lkv;
}

// Block j0's raw q·k (accumulator layout, rows row_base and row_base + 8 of this thread) ->
// masked log2 scores in place (SCALE false: masked raw scores, for RowState::update_raw).
// edge: the block crosses the diagonal or the end of the keys.
template <int WL, int NT, bool SCALE = true>
__device__ __forceinline__ void mask_scores(float (&s)[NT][4], const Params &p, int row_base,
                                            int j0, bool edge, float scale_log2, int t) {
  if (!SCALE && !edge) return;
#pragma unroll
  for (int nt = 0; nt < NT; nt++)
#pragma unroll
    for (int e = 0; e < 4; e++) {
      float x = SCALE ? score_log2<WL>(s[nt][e], scale_log2) : s[nt][e];
      if (edge) {
        int row = row_base + (e >> 1) * 8, col = j0 + nt * 8 + 2 * t + (e & 1);
        if (col > row + p.offset || col >= p.Lkv) x = -CUDART_INF_F;
      }
      s[nt][e] = x;
    }
}

// Softcapped scores for RowState::update_raw: s <- tanh(qk · scale / cap) (the log2 score is
// that times cap · log2 e, which update_raw's exponent FFMA applies), masked entries -inf.
// tanh.approx (MUFU) for every score: a polynomial on the FMA pipe measures slower at every
// head dim (PERF-fused.md).
template <int WL, int NT>
__device__ __forceinline__ void softcap_scores(float (&s)[NT][4], const Params &p, int row_base,
                                               int j0, bool edge, float scale_log2, int t) {
  const float c1 = scale_log2 * (1.f / (GEMMA2_SOFTCAP * kLog2e)); // scale / cap
#pragma unroll
  for (int nt = 0; nt < NT; nt++)
#pragma unroll
    for (int e = 0; e < 4; e++) s[nt][e] = fast_tanh(s[nt][e] * c1);
  if (edge) mask_scores<WL, NT, false>(s, p, row_base, j0, true, 0.f, t); // mask only
}

} // namespace fused
