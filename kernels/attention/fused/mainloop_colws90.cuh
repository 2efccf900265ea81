// The Hopper column pass's mainloop (attn_col_ws90, col_ws90.cuh): its shared memory, the
// producer's loads of a key tile and its query blocks, and a consumer's GEMMs and sums over
// them. Everything here is inlined into the kernel; keep the order of waits, issues and loads
// (PERF-fused.md).
#pragma once
#include "epilogue.cuh"
#include "mask.cuh"
#include "pipeline.cuh"

#include <type_traits>

namespace fused {

// Shared memory: the tile's K, then per stage a query block's Q, its aux tile (kf / corm:
// 1024-aligned) and its LSE, then the barriers and the producer's claim.
template <typename C> struct ColWsSmem {
  static constexpr int NST = C::kStages, QN = C::QN, NC = 2;
  half *sk, *sq0;
  float *saux0, *slse0;
  uint64_t *full_k, *empty_k; // K: every consumer thread arrives once it holds its K fragments
  Ring<NST> q;                // a query block's Q, LSE and aux tile
  int *tile_slot;
  __device__ __forceinline__ explicit ColWsSmem(unsigned char *raw) {
    sk = reinterpret_cast<half *>((reinterpret_cast<uintptr_t>(raw) + k90Align - 1) &
                                  ~(uintptr_t)(k90Align - 1));
    sq0 = sk + kCwsKeys * C::kDs;
    saux0 = reinterpret_cast<float *>(sq0 + NST * QN * C::kDs);
    slse0 = saux0 + NST * C::kAuxFloats;
    full_k = reinterpret_cast<uint64_t *>(slse0 + NST * QN);
    empty_k = full_k + 1, q.full = empty_k + 1, q.empty = q.full + NST;
    tile_slot = reinterpret_cast<int *>(q.empty + NST);
  }
  __device__ __forceinline__ void init_barriers() const { // thread 0
    mbar_init(full_k, 1);
    mbar_init(empty_k, NC * 128);
    for (int s = 0; s < NST; s++) {
      mbar_init(&q.full[s], 1);
      mbar_init(&q.empty[s], NC * 128);
    }
    mbar_fence_init();
  }
};

// The producer thread: per tile its K (one buffer), then its query blocks, each with its LSE
// (a second, plain TMA map) and kf's noise / corm's mask tile (128B-swizzled boxes of 32
// keys), into the ring, which runs on across tiles (`it`).
template <int D, int WL, typename Cache, bool DRAW> struct ColWsProducer {
  using C = ColWsCfg<WL, D, DRAW>;
  static constexpr int NST = C::kStages, QN = C::QN, kAuxFloats = C::kAuxFloats, kDs = C::kDs;
  // TMA writes whole boxes (the padding of D = 96 too), and counts their bytes.
  static constexpr uint32_t kKBytes = kCwsKeys * kDs * (uint32_t)sizeof(half);
  static constexpr uint32_t kQBytes =
      QN * kDs * (uint32_t)sizeof(half) + (QN + kAuxFloats) * (uint32_t)sizeof(float);
  const ColWsMaps &maps;
  const Params &p;
  const Cache &cache;
  const ColWsSmem<C> &sm;
  const int chunk;
  int it = 0;
  const uint64_t stream_policy; // kf's noise: read once, evict first

  __device__ __forceinline__ ColWsProducer(const ColWsMaps &maps_, const Params &p_,
                                           const Cache &cache_, const ColWsSmem<C> &sm_, int chunk_)
      : maps(maps_), p(p_), cache(cache_), sm(sm_), chunk(chunk_),
        stream_policy(wl_traits<WL>::keyformer ? l2_evict_first_policy() : 0) {}

  __device__ __forceinline__ void operator()(int t) { // tile t's loads
    const ColWsTile tile = col_ws_tile<QN>(t, p, chunk);
    mbar_expect_tx(sm.full_k, kKBytes);
    for (int sl = 0; sl < slabs<D>(); sl++)
      tma_load_4d(sm.sk + sl * kCwsKeys * 64, &maps.k, sm.full_k, sl * 64, tile.q.hkv,
                  tile.kb * kCwsKeys, tile.b);
    int h = tile.q.first_head(), n = tile.q.qb0; // block k's head and query block
    for (int k = 0; k < tile.q.count(); k++, it++, tile.q.advance(h, n)) load_block(tile, h, n);
  }
  // Query block n of head h into stage it % NST (only its LSE where the cache holds the tile).
  __device__ __forceinline__ void load_block(const ColWsTile &tile, int h, int n) const {
    const int st = it % NST;
    // kf's noise is per (batch, head); corm's mask is one [Lq, Lkv] matrix for all.
    const int aux_z = wl_traits<WL>::keyformer ? tile.b * p.H + h : 0;
    const bool cached = Cache::kOn && cache.in_band(n, tile.kb);
    sm.q.wait_empty(it);
    mbar_expect_tx(&sm.q.full[st], cached ? QN * (uint32_t)sizeof(float) : kQBytes);
    for (int sl = 0; !cached && sl < slabs<D>(); sl++)
      tma_load_4d(sm.sq0 + st * QN * kDs + sl * QN * 64, &maps.q, &sm.q.full[st], sl * 64, h,
                  n * QN, tile.b);
    tma_load_2d(sm.slse0 + st * QN, &maps.lse, &sm.q.full[st], n * QN, tile.b * p.H + h);
    for (int kb = 0; kb < kAuxFloats / (QN * kSw128Floats); kb++) // none when DRAW
      if constexpr (wl_traits<WL>::keyformer)                     // read once: evict first
        tma_load_3d_hint(sm.saux0 + st * kAuxFloats + kb * QN * kSw128Floats, &maps.aux,
                         &sm.q.full[st], tile.kb * kCwsKeys + kb * kSw128Floats, n * QN, aux_z,
                         stream_policy);
      else // corm's one mask serves every head
        tma_load_3d(sm.saux0 + st * kAuxFloats + kb * QN * kSw128Floats, &maps.aux, &sm.q.full[st],
                    tile.kb * kCwsKeys + kb * kSw128Floats, n * QN, aux_z);
  }
};

// This thread's K fragments (wgmma's A layout, as mma.sync m16n8k16's) of keys r and r + 8 of
// the sw128 K tile.
template <int D>
__device__ __forceinline__ void load_k_frags(uint32_t (&kf)[D / 16][4], const half *sk, int r,
                                             int t) {
#pragma unroll
  for (int kk = 0; kk < D / 16; kk++)
#pragma unroll
    for (int i = 0; i < 4; i++) // (row half, column half): a0 (r, 2t) a1 (r+8, 2t) a2 (r, 2t+8) ..
      kf[kk][i] = *reinterpret_cast<const uint32_t *>(
          sk + sw128<kCwsKeys>(r + 8 * (i & 1), 2 * kk + (i >> 1)) + 2 * t);
}

// The LSE of this thread's queries (columns nt * 8 + 2t, +1) of a query block, from the
// stage's LSE at shared address `slse` (ld.shared: a generic load costs ncu-visible waits).
template <int QN>
__device__ __forceinline__ void load_lse(float2 (&l)[QN / 8], uint32_t slse, int t) {
#pragma unroll
  for (int nt = 0; nt < QN / 8; nt++)
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n"
                 : "=f"(l[nt].x), "=f"(l[nt].y)
                 : "r"(slse + (uint32_t)(nt * 8 + 2 * t) * 4u));
}

// This thread's elements of a stage's aux tile: keys kl, kl + 8 (rr) of queries nt·8 + 2t + e1.
// Box kl / 32 holds keys 32 (kl / 32) ..; rows 8 apart share the swizzle, so off[rr][e1] (the
// offset for nt = 0) serves every nt. Bank-conflict free: a warp's 8 keys and 4 query pairs hit
// 32 distinct banks.
template <int QN> struct ColAuxView {
  int off[2][2];
  __device__ void init(int kl, int t) {
    const int kk = kl % kSw128Floats; // kk + 8 < 32: both keys in one box
#pragma unroll
    for (int rr = 0; rr < 2; rr++)
#pragma unroll
      for (int e1 = 0; e1 < 2; e1++)
        off[rr][e1] = kl / kSw128Floats * QN * kSw128Floats + sw128_f32(2 * t + e1, kk + 8 * rr);
  }
  __device__ float at(const float *stage, int nt, int rr, int e1) const {
    return stage[nt * 8 * kSw128Floats + off[rr][e1]];
  }
};

// The aux of corm against its row thresholds (corm_rows.cuh): none, the threshold is in the LSE.
struct RowThresholds {};

// One query block's Sᵀ (keys x queries) into the column statistic; EDGE: apply the mask.
// aux(nt, rr, e1): the aux input (kf, corm) of query i0 + nt·8 + 2t + e1 and key j + 8 rr
// (the stage's tile, or kf's noise drawn), else unused; RowThresholds: corm against the moved
// LSE, a compare of the log2 score with no exponential.
template <int WL, int QN, bool EDGE, typename Aux>
__device__ __forceinline__ void col_ws_block(ColState<WL> &cs, const float (&s)[QN / 8][4],
                                             const float2 (&l)[QN / 8], float scale_log2, int t,
                                             int j, int i0, const Params &p, Aux aux) {
#pragma unroll
  for (int nt = 0; nt < QN / 8; nt++)
#pragma unroll
    for (int e = 0; e < 4; e++) {
      const int rr = e >> 1, e1 = e & 1, i = i0 + nt * 8 + 2 * t + e1, key = j + rr * 8;
      const bool live = !EDGE || (key < p.Lkv && key <= i + p.offset && i < p.Lq);
      const float row_lse = e1 ? l[nt].y : l[nt].x;
      if constexpr (std::is_same<Aux, RowThresholds>::value) {
        cs.add_raw_above(rr, s[nt][e], scale_log2, row_lse, live);
      } else {
        const float a = has_aux<WL>() ? aux(nt, rr, e1) : 0.f;
        cs.add_raw(rr, s[nt][e], scale_log2, row_lse, live, a);
      }
    }
}

// The block through col_ws_block with the mask where edge.
template <int WL, int QN, typename Aux>
__device__ __forceinline__ void
col_ws_block_any(ColState<WL> &cs, const float (&s)[QN / 8][4], const float2 (&l)[QN / 8],
                 float scale_log2, int t, int j, int i0, const Params &p, Aux aux, bool edge) {
  if (edge)
    col_ws_block<WL, QN, true>(cs, s, l, scale_log2, t, j, i0, p, aux);
  else
    col_ws_block<WL, QN, false>(cs, s, l, scale_log2, t, j, i0, p, aux);
}

// Block n's GEMM into s (none for a cached block: its commit group is empty), once its stage
// (ring slot cur) is full: Sᵀ = K·Q_nᵀ, K from registers.
template <int D, int QN, int NST, bool BF16, typename Cached>
__device__ __forceinline__ void col_ws_issue(float (&s)[QN / 8][4], const uint32_t (&kf)[D / 16][4],
                                             int n, uint32_t cur, uint64_t *const &full,
                                             const uint64_t &q_desc0, Cached &cached) {
  constexpr int kDs = smem_dim<D>();
  const uint32_t st = cur % NST;
  mbar_wait(&full[st], (cur / NST) & 1);
  if (cached(n)) {
    wgmma_commit();
    return;
  }
  const uint64_t stage_desc = desc_advance(q_desc0, st * QN * kDs * (uint32_t)sizeof(half));
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < D / 16; kk++) { // 64-column slabs of QN rows, 16 columns a step
    const uint32_t off = ((kk >> 2) * QN * 64 + (kk & 3) * 16) * (uint32_t)sizeof(half);
    const uint64_t desc = desc_advance(stage_desc, off);
    if constexpr (QN == 64)
      wgmma_m64n64k16_rs<0, BF16>(s, kf[kk], desc, kk > 0);
    else
      wgmma_m64n128k16_rs<0, BF16>(s, kf[kk], desc, kk > 0);
  }
  wgmma_commit();
}

// A consumer warpgroup's sums over one tile's query blocks (its 64 keys), two at a time: block
// n+1's Sᵀ = K·Q_nᵀ GEMM (64 x QN) runs while block n is exponentiated and summed (two score
// buffers, so the exponentials, MUFU, run under the GEMM). Like WsFwdTile it stands in for
// per-tile lambdas: the consumer's registers and constants are attn_col_ws90's (col_ws90.cuh),
// held by reference (PERF-fused.md).
template <int D, int WL, bool BF16, typename Cache, bool DRAW> struct ColWsTileSteps {
  using C = ColWsCfg<WL, D, DRAW>;
  static constexpr bool kDraw = wl_traits<WL>::keyformer && DRAW;
  // corm against its row thresholds (corm_rows.cuh): P >= m_i is s2 - lse'_i >= 0
  static constexpr bool kRowThresholds = wl_traits<WL>::any_ge_mask && DRAW;
  static constexpr int NST = C::kStages, QN = C::QN, kAuxFloats = C::kAuxFloats, kDs = C::kDs;
  const Params &p;
  const Cache &cache;
  const ColWsSmem<C> &sm;
  const int &t;
  const int &kl; // this thread's keys in the tile: kl and kl + 8
  const float &scale_log2;
  const uint64_t &q_desc0; // moved on per stage and k-step
  const uint32_t &slse_u32;
  ColAuxView<QN> &av;
  uint64_t *const &full, *const &empty;
  float *const &saux0;
  uint32_t (&kf)[D / 16][4];
  float (&sa)[QN / 8][4];
  float (&sb)[QN / 8][4];
  float2 (&lse)[QN / 8];
  uint32_t &it; // the ring's counter (unsigned: stage and phase are a mask and a shift)
  ColState<WL> &cs;
  // The tile, my first key in it, the statistic's row (the cache's too: hpg = 1).
  const ColWsTile &tile;
  const int &j;
  const long &bh;

  // Query block n's tile comes from the cache (uniform over the CTA).
  __device__ __forceinline__ bool cached(int n) { return Cache::kOn && cache.in_band(n, tile.kb); }

  // Block cur's LSE, read before the next block's GEMM is issued, so the loads run under the
  // issue and the wait rather than right after the wait.
  __device__ __forceinline__ void fetch_lse(uint32_t cur) {
    load_lse<QN>(lse, slse_u32 + (cur % NST) * QN * 4u, t);
  }

  // Query block n of head h (the group's block that advance() reached) into the sums; then its
  // stage (its Q, read by the finished GEMM, and its LSE) is released.
  __device__ __forceinline__ void consume(const float (&s)[QN / 8][4], int n, int h, uint32_t cur) {
    const int i0 = n * QN, j0 = tile.kb * kCwsKeys;
    const float *saux = saux0 + (cur % NST) * kAuxFloats;
    const bool edge = col_tile_edge<kCwsKeys, QN>(j0, i0, p);
    if constexpr (Cache::kOn) {
      if (cached(n)) {
        add_cached(n, i0, j0, edge);
        mbar_arrive(&empty[cur % NST]);
        return;
      }
    }
    if constexpr (kDraw) {
      // kf_draw.h's in-plane index (query i0 + nt·8 + 2t + e1, key j + 8 rr): from base on
      const uint32_t key = kf_draw_plane_key(p.noise, (uint64_t)tile.b * p.H + h);
      const uint32_t base = (uint32_t)(i0 + 2 * t) * (uint32_t)p.Lkv + (uint32_t)j;
      const uint32_t lkv = (uint32_t)p.Lkv;
      auto drawn = [&](int nt, int rr, int e1) {
        return kf_draw_at(key, base + (uint32_t)(nt * 8 + e1) * lkv + 8u * (uint32_t)rr);
      };
      col_ws_block_any<WL, QN>(cs, s, lse, scale_log2, t, j, i0, p, drawn, edge);
    } else if constexpr (kRowThresholds) {
      col_ws_block_any<WL, QN>(cs, s, lse, scale_log2, t, j, i0, p, RowThresholds{}, edge);
    } else {
      auto &view = av; // the closure holds the view's address, not this
      auto staged = [&](int nt, int rr, int e1) { return view.at(saux, nt, rr, e1); };
      col_ws_block_any<WL, QN>(cs, s, lse, scale_log2, t, j, i0, p, staged, edge);
    }
    mbar_arrive(&empty[cur % NST]);
  }

  // A cached block n (queries from i0, keys from j0) into the sums from the tile cache.
  __device__ __forceinline__ void add_cached(int n, int i0, int j0, bool edge) {
    auto live = [&](int il, int jl) {
      const int i = i0 + il, key = j0 + jl;
      return !edge || (key < p.Lkv && key <= i + p.offset && i < p.Lq);
    };
    // exp2(m - lse) of queries il, il + 1; past Lq the LSE reads as 0 and live() is false
    auto factor = [&](int nt, int, float2 m) {
      return make_float2(fast_exp2(m.x - lse[nt].x), fast_exp2(m.y - lse[nt].y));
    };
    cache.template add_tile<kCwsKeys, QN / 8>(cs, cache.tile(bh, n, tile.kb), kl, t, factor, live);
  }
};

} // namespace fused
