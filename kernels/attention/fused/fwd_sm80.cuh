// The sm_80 forward (mma.sync), templated on the head dimension D and the workload (its
// features: workload.h, wl_traits). One CTA per (64-row query block, head, batch): online
// softmax over the causal key blocks only (blocks above the diagonal are never loaded),
// out = P·V, and for the column-score workloads the row log-sum-exp (log2 domain) of the
// scores and, for kf, of the KeyFormer logits. S×S is never written. Q in registers, K, V and
// kf's noise by cp.async.
#pragma once
#include "config_sm80.cuh"
#include "epilogue.cuh"
#include "mask.cuh"

namespace fused {

// BF16: bfloat16 q, k, v, out (the tiles' 16-bit elements read as bf16), else fp16. Cache: the
// tile cache policy (kOn: the exponentials of the band's 64 x 64 tiles go to it).
template <int D, int WL, bool BF16 = false, typename Cache = NoTileCache>
__global__ void __launch_bounds__(kThreads) attn_fwd(Params p, Cache cache) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  half *sq = reinterpret_cast<half *>(smem_raw);
  half *sk = sq + kRows * D;
  half *sv = sk + kCols * D;
  float *saux = reinterpret_cast<float *>(sv + kCols * D); // kf noise tile [kRows][kFwdAuxPitch]

  const int qb = gridDim.x - 1 - blockIdx.x; // longest causal rows first
  const int h = blockIdx.y, b = blockIdx.z;
  const int m0 = qb * kRows;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const long bh = (long)b * p.H + h;
  const half *qbase = p.q + (long)b * p.Lq * p.row_stride + h * D;
  const half *kbase = p.k + (long)b * p.Lkv * p.kv_row_stride + h / p.hpg * D;
  const half *vbase = p.v + (long)b * p.Lkv * p.kv_row_stride + h / p.hpg * D;
  const float *rbase = wl_traits<WL>::keyformer ? p.exp_rand + bh * p.Lq * p.Lkv : nullptr;
  const bool vec4 = (p.Lkv & 3) == 0;

  const int nblocks = key_blocks_upto<kCols>(m0 + kRows, p);
  const int row_base = m0 + warp * 16 + g; // this thread's rows: row_base and row_base + 8
  const float scale_log2 = p.scale * kLog2e;

  load_tile_async<kRows, D, kThreads>(sq, qbase, p.row_stride, m0, p.Lq);
  load_tile_async<kCols, D, kThreads>(sk, kbase, p.kv_row_stride, 0, p.Lkv);
  if (wl_traits<WL>::keyformer)
    load_ftile_async<kRows, kCols, kFwdAuxPitch, kThreads>(saux, rbase, p.Lkv, m0, p.Lq, 0, p.Lkv,
                                                           vec4);
  cp_async_commit();

  float o[D / 8][4];
  frag_zero(o);
  RowState st;
  KfRowSum st_kf;
  st.init();
  st_kf.init();
  uint32_t qa[D / 16][4];

  for (int n = 0; n < nblocks; n++) {
    cp_async_wait<0>();
    __syncthreads(); // K (and the kf noise) of block n ready
    if (n == 0) load_a_frags<D>(qa, sq, warp * 16);
    load_tile_async<kCols, D, kThreads>(sv, vbase, p.kv_row_stride, n * kCols, p.Lkv);
    cp_async_commit();

    const int j0 = n * kCols;
    const bool edge = key_block_edge<kCols>(j0, m0, p);
    float s[kCols / 8][4];
    gemm_abt<D, kCols, BF16>(s, qa, sk);
    mask_scores<WL>(s, p, row_base, j0, edge, scale_log2, t);
    float alpha[2];
    if constexpr (wl_traits<WL>::keyformer) {
      float m_use[2];
      st.new_max<kCols / 8, false>(s, 1.f, m_use, alpha);
      auto noise = [&](int nt, int rr) {
        return *reinterpret_cast<const float2 *>(saux + (warp * 16 + g + rr * 8) * kFwdAuxPitch +
                                                 nt * 8 + 2 * t);
      };
      st_kf.add<kCols / 8, false>(s, scale_log2, m_use, alpha, noise, edge);
      st.exp_sum<kCols / 8, false>(s, 1.f, m_use, alpha);
    } else {
      st.update<kCols / 8>(s, alpha);
    }
    if constexpr (Cache::kOn)
      if (cache.in_band(qb, n))
        cache.template store<kRows>(cache.tile(bh, qb, n), s, st, warp * 16 + g, t);
    frag_scale_rows(o, alpha);

    cp_async_wait<0>();
    __syncthreads(); // V ready; every warp is done reading K and the noise tile
    if (n + 1 < nblocks) {
      load_tile_async<kCols, D, kThreads>(sk, kbase, p.kv_row_stride, (n + 1) * kCols, p.Lkv);
      if (wl_traits<WL>::keyformer)
        load_ftile_async<kRows, kCols, kFwdAuxPitch, kThreads>(saux, rbase, p.Lkv, m0, p.Lq,
                                                               (n + 1) * kCols, p.Lkv, vec4);
      cp_async_commit();
    }
    gemm_pv<D, kCols, BF16>(o, s, sv);
  }

  st.finish();
  store_rows<D, WL, BF16>(o, st, p, row_base, b, h, t);
  if constexpr (wl_traits<WL>::keyformer) store_kf_lse(st_kf, st, p, bh, row_base, t);
}

} // namespace fused
