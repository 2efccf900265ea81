// fused-diag's tile cache policy: the hooks by which the fused forward and column pass
// (kernels/attention/fused/) share the k score tiles nearest the diagonal of each query block
// (diag_band.h says which tiles and where they live).
//
//   the forward: for a key block in the band of its query block it writes the tile's
//      exponentials e = exp2(x - m), the very values it has just formed for P·V, and each row's
//      running maximum m (log2 domain) they are relative to (store);
//   the column pass: for a query block whose tile with its key block is in the band it reads e
//      and m instead of recomputing Sᵀ = K·Qᵀ and the exponentials: P = e · exp2(m - lse), one
//      exp2 per query row and tile instead of one per element (add_tile).
//
// Why exponentials and not raw scores: the column pass's costs per element are the Sᵀ MMA and
// one exp2; raw scores would save only the MMA, and an fp16 raw score (|x| up to ~20 in the
// log2 domain) loses ~1e-2 absolute, a relative error of 1e-2 in P. The exponentials are in [0, 1],
// where fp16 keeps 11 bits of relative precision, the precision the forward's own P·V product
// uses. The price is m: T floats per tile.
//
// Only the workloads whose column statistic is a function of P alone take the cache (COL_SUM,
// COL_SUM_SQ, pooled or not: h2o, roco, snapkv: cacheable<WL>). The fused system's kernels
// take NoTileCache (fused/params.cuh), whose hooks compile to nothing.
#pragma once
#include "diag_band.h"
#include "fused/softmax.cuh"

namespace fused {

template <int WL> __host__ __device__ constexpr bool cacheable() {
  return wl_traits<WL>::column == COL_SUM || wl_traits<WL>::column == COL_SUM_SQ;
}

template <typename CT> __device__ __forceinline__ CT to_cache(float v);
template <> __device__ __forceinline__ float to_cache<float>(float v) { return v; }
template <> __device__ __forceinline__ half to_cache<half>(float v) { return __float2half_rn(v); }

template <typename CT> __device__ __forceinline__ float2 load_pair(const CT *p);
template <> __device__ __forceinline__ float2 load_pair<float>(const float *p) {
  return __ldg(reinterpret_cast<const float2 *>(p));
}
template <> __device__ __forceinline__ float2 load_pair<half>(const half *p) {
  return __half22float2(__ldg(reinterpret_cast<const __half2 *>(p)));
}

// The cache: tiles [B*H*tph][T keys][T queries] of CT (float or half) and rowmax [B*H*tph][T]
// (log2 domain), k >= 1 key blocks per query block, tph tiles per (batch, head). A tile is T x T
// with T the kernels' query rows per forward tile and keys per column-pass tile: 128 on the
// sm_90a kernels, 64 on the sm_80 ones.
template <typename CT> struct DiagCache {
  static constexpr bool kOn = true;
  void *tiles;
  float *rowmax;
  int k;
  long long tph;

  __device__ bool in_band(int qb, int kb) const { return diag_in_band(qb, kb, k); }
  // The tile of (batch, head) bh, query block qb, key block kb (in the band).
  __device__ long long tile(long bh, int qb, int kb) const {
    return bh * tph + diag_slot(qb, kb, k);
  }

  // The forward's side: s holds e = exp2(x - m) (the row state has folded the block in) of this
  // thread's rows row_l and row_l + 8 (within the tile) and keys nt * 8 + 2t + {0, 1}. Key-major
  // stores: the eight lanes of one t write 8 consecutive rows of one key (32 bytes in fp32).
  template <int T, int NT>
  __device__ __forceinline__ void store(long long tile, const float (&s)[NT][4], const RowState &st,
                                        int row_l, int t) const {
    CT *pt = static_cast<CT *>(tiles) + tile * T * T;
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const int r = row_l + (e >> 1) * 8, col = nt * 8 + 2 * t + (e & 1);
        pt[col * T + r] = to_cache<CT>(s[nt][e]);
      }
    if (t == 0) {
#pragma unroll
      for (int rr = 0; rr < 2; rr++)
        rowmax[tile * T + row_l + rr * 8] = st.m[rr] == -CUDART_INF_F ? 0.f : st.m[rr];
    }
  }

  // The column pass's side: a cached tile into the column state. This thread's keys are jl0 and
  // jl0 + 8 (within the tile), its queries nt * 8 + 2t + {0, 1}; factor(nt, il, m) gives
  // exp2(m - lse) of queries il and il + 1 from their row maxima m (0 for queries past Lq);
  // live(il, jl) is the kernels' element mask, needed on edge tiles.
  template <int T, int NT, int WL, typename Factor, typename Live>
  __device__ __forceinline__ void add_tile(ColState<WL> &cs, long long tile, int jl0, int t,
                                           Factor factor, Live live) const {
    static_assert(cacheable<WL>(), "the cache serves the statistics of P alone");
    const CT *pt = static_cast<const CT *>(tiles) + tile * T * T;
    const float *m = rowmax + tile * T;
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
      const int il = nt * 8 + 2 * t;
      const float2 f = factor(nt, il, __ldg(reinterpret_cast<const float2 *>(m + il)));
#pragma unroll
      for (int rr = 0; rr < 2; rr++) {
        const int jl = jl0 + rr * 8;
        const float2 e = load_pair<CT>(pt + jl * T + il);
        add_prob(cs, rr, live(il, jl) ? e.x * f.x : 0.f);
        add_prob(cs, rr, live(il + 1, jl) ? e.y * f.y : 0.f);
      }
    }
  }

  // One element's probability into the column state (ColState::add's COL_SUM and COL_SUM_SQ
  // arms, from P instead of the score).
  template <int WL> __device__ static void add_prob(ColState<WL> &cs, int rr, float prob) {
    cs.acc[rr] += prob;
    if (wl_traits<WL>::sum_sq) cs.acc2[rr] += prob * prob;
  }
};

} // namespace fused
