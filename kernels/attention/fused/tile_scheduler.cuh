// Which work a CTA does: the Hopper kernels' persistent tile order and claim counter, and the
// query blocks a column tile sums under GQA (the sm_80 column pass walks them too).
//
// Tiles (query block, head, batch) are numbered heaviest first within chunks of `chunk` (batch,
// head) pairs: under a causal mask a query block's work grows with its index, so the chunk's
// last query blocks come first. Chunks keep the running CTAs on few heads, so they share each
// K/V block through L2 (all heads interleaved is slower: PERF-fused.md v10); fused_launch.cuh
// sizes them. CTA i takes tile i, then the next unclaimed one from a global counter (greedy list
// scheduling: the CTAs finish together, which a static split cannot do with chunks). With one
// CTA per tile (--sm90-fwd ws1) the hardware hands them out in that order.
#pragma once
#include "config_ws90.cuh"

namespace fused {

// A column CTA's query blocks under GQA: for each of K/V head hkv's hpg query heads in turn, the
// query blocks from qb0 on (the ones at or below the causal diagonal of the CTA's keys). Block 0
// is query block qb0 of query head first_head(); advance() steps to the next.
struct GroupBlocks {
  int hkv, hpg, qb0, per_head;
  __device__ int count() const { return per_head * hpg; }
  __device__ int first_head() const { return hkv * hpg; }
  // The group's blocks in order without a division: (h, n) of block k to those of block k + 1.
  __device__ void advance(int &h, int &n) const {
    if (++n == qb0 + per_head) {
      n = qb0;
      h++;
    }
  }
};
__device__ __forceinline__ GroupBlocks group_blocks(int hkv, const Params &p, int first_row,
                                                    int rows_per_block) {
  const int qb0 = first_row / rows_per_block,
            nblocks = (p.Lq + rows_per_block - 1) / rows_per_block;
  return {hkv, p.hpg, qb0, max(0, nblocks - qb0)};
}

struct WsTile {
  int qb, h, b;
};
// Tile t of nq blocks per (batch, head) of H heads and B batches, heaviest (the last block)
// first.
__device__ __forceinline__ WsTile ws_tile_of(int t, int nq, int H, int B, int chunk) {
  const int hb = H * B;
  const int c0 = t / (nq * chunk) * chunk, hc = min(chunk, hb - c0);
  const int r = t - c0 * nq, bh = c0 + r % hc;
  return {nq - 1 - r / hc, bh % H, bh / H};
}
// The forward's tile t: a query block of ROWS rows.
template <int ROWS> __device__ __forceinline__ WsTile ws_tile(int t, const Params &p, int chunk) {
  return ws_tile_of(t, (p.Lq + ROWS - 1) / ROWS, p.H, p.B, chunk);
}

// The column pass's tile t: key block kb of batch b and K/V head q.hkv, and the query blocks
// it sums (q: those of each of the group's query heads that see the key block; GQA's statistic
// is per K/V head). Numbered as the forward's, heaviest (the first keys) first.
struct ColWsTile {
  int kb, b;
  GroupBlocks q;
};
template <int QN>
__device__ __forceinline__ ColWsTile col_ws_tile(int t, const Params &p, int chunk) {
  const int nk = (p.Lkv + kCwsKeys - 1) / kCwsKeys;
  const WsTile w = ws_tile_of(t, nk, p.Hkv, p.B, chunk);
  const int kb = nk - 1 - w.qb; // ws_tile_of's heaviest block is the last; here it is the first
  return {kb, w.b, group_blocks(w.h, p, max(0, kb * kCwsKeys - p.offset), QN)};
}

// The claim counter and the count of CTAs done with it: the last CTA of a launch resets both,
// so every launch (stream-ordered; one launch at a time per device) starts from zero.
static __device__ int g_ws_next_tile = 0, g_ws_ctas_done = 0;
__device__ __forceinline__ int ws_claim_tile() {
  return (int)gridDim.x + atomicAdd(&g_ws_next_tile, 1);
}
__device__ __forceinline__ void ws_release_counter() {
  if (atomicAdd(&g_ws_ctas_done, 1) == (int)gridDim.x - 1) {
    atomicExch(&g_ws_next_tile, 0);
    atomicExch(&g_ws_ctas_done, 0);
  }
}

} // namespace fused
