// The sm_80 column pass (mma.sync). One CTA per (64-key block, K/V head, batch): recomputes
// Sᵀ = K·Qᵀ for the query rows at or below the diagonal, turns it into probabilities with the
// row LSE and reduces over the queries in registers: Σ_i P (COL_SUM), Σ_i P and Σ_i P²
// (COL_SUM_SQ), Σ_i softmax_j((S - log r)/tau) (COL_KEYFORMER), any_i P >= mask
// (COL_ANY_GE_MASK). Each key column is owned by one CTA: no atomics, deterministic sums.
#pragma once
#include "config_sm80.cuh"
#include "epilogue.cuh"
#include "mask.cuh"
#include "tile_scheduler.cuh"

namespace fused {

// Grid: (K/V heads, key blocks, batch). Heads vary fastest so the CTAs resident at one time work
// on the same key columns of different heads and share corm's mask tiles in L2. Under GQA a CTA
// owns its key columns for every query head of the group: it sums the group's heads' query
// blocks one after another (the statistic per K/V head), K loaded once.
// BF16: bfloat16 q and k, else fp16. Cache: the tile cache policy (kOn: the band's tiles come
// from it; their query tiles are loaded all the same, which keeps the pipeline uniform; one K/V
// head per query head, fused-diag's supports says so).
template <int D, int WL, bool BF16 = false, typename Cache = NoTileCache>
__global__ void __launch_bounds__(kThreads) attn_col(Params p, Cache cache) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  half *sk = reinterpret_cast<half *>(smem_raw);
  half *sq0 = sk + kRows * D;                                    // two query tiles, double-buffered
  float *saux0 = reinterpret_cast<float *>(sq0 + 2 * kCols * D); // two [kCols][kColAuxPitch] tiles

  const int hkv = blockIdx.x, kb = blockIdx.y, b = blockIdx.z;
  const int j0 = kb * kRows;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const half *kbase = p.k + (long)b * p.Lkv * p.kv_row_stride + hkv * D;
  const bool vec4 = (p.Lkv & 3) == 0;
  // Query head h's (batch b) inputs: its Q rows, its row LSE, its aux matrix (kf's noise is per
  // (batch, head); corm's mask is one [Lq, Lkv] matrix for all).
  auto qbase = [&](int h) { return p.q + (long)b * p.Lq * p.row_stride + h * D; };
  auto lse_of = [&](int h) {
    return (wl_traits<WL>::keyformer ? p.lse_kf : p.lse) + ((long)b * p.H + h) * p.Lq;
  };
  auto abase = [&](int h) {
    return wl_traits<WL>::keyformer ? p.exp_rand + ((long)b * p.H + h) * p.Lq * p.Lkv : p.corm_mask;
  };

  const GroupBlocks blocks = group_blocks(hkv, p, max(0, j0 - p.offset), kCols);
  const int count = blocks.count();
  const int col_base = j0 + warp * 16 + g; // this thread's key columns: col_base, col_base + 8
  const float scale_log2 = p.scale * kLog2e;
  auto load_block = [&](int h, int n, int buf) { // query block n of head h
    load_tile_async<kCols, D, kThreads>(sq0 + buf * kCols * D, qbase(h), p.row_stride, n * kCols,
                                        p.Lq);
    if (has_aux<WL>())
      load_ftile_async<kCols, kRows, kColAuxPitch, kThreads>(
          saux0 + buf * kCols * kColAuxPitch, abase(h), p.Lkv, n * kCols, p.Lq, j0, p.Lkv, vec4);
  };

  load_tile_async<kRows, D, kThreads>(sk, kbase, p.kv_row_stride, j0, p.Lkv);
  int h = blocks.first_head(), n = blocks.qb0; // block k's head and query block
  int h_next = h, n_next = n;                  // block k + 1's
  blocks.advance(h_next, n_next);
  if (count > 0) load_block(h, n, 0);
  cp_async_commit();

  ColState<WL> cs;
  uint32_t ka[D / 16][4];

  for (int k = 0; k < count; k++, h = h_next, n = n_next, blocks.advance(h_next, n_next)) {
    const int buf = k & 1;
    const long bh = (long)b * p.H + h;
    const float *lse = lse_of(h);
    cp_async_wait<0>();
    __syncthreads();
    if (k == 0) load_a_frags<D>(ka, sk, warp * 16);
    if (k + 1 < count) {
      load_block(h_next, n_next, buf ^ 1);
      cp_async_commit();
    }
    const float *aux = saux0 + buf * kCols * kColAuxPitch;
    const int i0 = n * kCols;
    // Tiles crossing the diagonal or the ends need the element mask; the rest are all live.
    // (mask.cuh's col_tile_edge, written out: through the helper kf's and corm's code differs.)
    const bool edge = j0 + kRows - 1 > i0 + p.offset || i0 + kCols > p.Lq || j0 + kRows > p.Lkv;
    if constexpr (Cache::kOn) {
      if (cache.in_band(n, kb)) { // uniform over the CTA
        auto live = [&](int il, int jl) {
          return !edge || (i0 + il < p.Lq && j0 + jl < p.Lkv && j0 + jl <= i0 + il + p.offset);
        };
        // exp2(m - lse) of queries il and il + 1 (0 past Lq)
        auto factor = [&](int, int il, float2 m) {
          float2 f;
          f.x = i0 + il < p.Lq ? fast_exp2(m.x - __ldg(lse + i0 + il)) : 0.f;
          f.y = i0 + il + 1 < p.Lq ? fast_exp2(m.y - __ldg(lse + i0 + il + 1)) : 0.f;
          return f;
        };
        cache.template add_tile<kRows, kCols / 8>(cs, cache.tile(bh, n, kb), warp * 16 + g, t,
                                                  factor, live);
        continue;
      }
    }
    float s[kCols / 8][4];
    gemm_abt<D, kCols, BF16>(s, ka, sq0 + buf * kCols * D);
#pragma unroll
    for (int nt = 0; nt < kCols / 8; nt++)
#pragma unroll
      for (int c = 0; c < 2; c++) {
        const int il = nt * 8 + 2 * t + c; // query index within the tile
        const int row = i0 + il;
        const float row_lse = row < p.Lq ? __ldg(lse + row) : CUDART_INF_F;
#pragma unroll
        for (int rr = 0; rr < 2; rr++) {
          const int jl = warp * 16 + g + rr * 8; // key index within the tile
          const int col = j0 + jl;
          const bool live = !edge || (row < p.Lq && col < p.Lkv && col <= row + p.offset);
          const float x = score_log2<WL>(s[nt][2 * rr + c], scale_log2);
          cs.add(rr, x, row_lse, has_aux<WL>() ? aux[il * kColAuxPitch + jl] : 0.f, live);
        }
      }
  }

  store_cols(cs, p, (long)b * p.Hkv + hkv, col_base);
}

} // namespace fused
