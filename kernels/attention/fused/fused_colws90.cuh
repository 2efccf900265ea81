// The warp-specialized sm_90a column pass: the column statistic of every column-score workload
// (h2o, roco, snapkv; kf and corm with their fp32 S×S aux input) on the machinery of
// attn_fwd_ws90. Same math, mask and outputs as attn_col (fused_sm80.cuh), which serves the
// shapes TMA cannot take (a row pitch of no multiple of 16 bytes) and GPUs before Hopper.
//
//   warpgroup 0  producer: one thread loads, per 128-key tile, the K tile (TMA, one buffer) and
//                then the tile's query blocks (QN queries of Q, TMA, 128B swizzle, with their
//                row LSE through a second, plain TMA map, and for kf / corm the block's
//                QN x 128 fp32 noise / mask tile, 128B-swizzled boxes of 32 keys) into an
//                NST-stage ring guarded by full/empty mbarriers, the ring running on across
//                tiles.
//   warpgroups 1, 2  consumers: 64 keys each. A consumer copies its K rows into registers once
//                per tile (wgmma's A from registers; the K buffer is then free for the next
//                tile's K), then per query block issues Sᵀ = K·Q_nᵀ (64 x QN) and, while the
//                tensor cores run it, exponentiates and sums the previous block's Sᵀ: two
//                score buffers, so the exponentials (MUFU) run under the next GEMM instead of
//                after it.
// Its GEMM and its exponentials ask the tensor pipe and the MUFU for equal time, and neither
// runs full (PERF-fused.md): 64-query steps, K from shared memory, the consumers taking turns,
// 256 keys per CTA and exponentials on the FMA pipe all measure slower.
// Persistent: one CTA per SM claims tiles (key block, head, batch), first keys (the longest
// causal columns) first, through the forward's claim counter (fused_ws90.cuh). A tile cache
// policy (fused-diag) may supply the tiles near the diagonal, which then take no GEMM.
#pragma once
#include "fused_ws90.cuh"

namespace fused {

constexpr int kCwsKeys = 128; // keys per tile (64 per consumer)
constexpr int kCwsThreads = 384;

// Per workload and head dim: QN queries per step; with an aux input (kf's noise, corm's mask) a
// stage holds the QN x kCwsKeys fp32 aux tile too, and 64-query steps keep four stages within
// the shared memory (the others take 128-query steps, the faster ones: PERF-fused.md). At
// D = 256 a consumer's K fragments take 64 registers, so its two score buffers are of 64
// queries, and with an aux input two stages fit. D = 96 takes D = 128's shared memory (its
// second 64-column slab half-filled: fused_sm90.cuh). DRAW: kf's noise drawn by the consumers,
// so no aux tile and the steps of the workloads without one.
template <int WL, int D, bool DRAW = false> struct ColWsCfg {
  static constexpr bool kAux = has_aux<WL>() && !(wl_traits<WL>::keyformer && DRAW);
  static constexpr int kDs = smem_dim<D>();
  static constexpr int QN = kAux || D > 128 ? 64 : 128;
  static constexpr int kStages = kAux && D > 128 ? 2 : 4;
  static constexpr int kAuxFloats = kAux ? QN * kCwsKeys : 0; // per stage
  static constexpr int smem_bytes() {
    return (kCwsKeys + kStages * QN) * kDs * (int)sizeof(half) +
           kStages * (kAuxFloats + QN) * (int)sizeof(float) + k90Align + (2 + 2 * kStages) * 8 + 8;
  }
  static_assert(smem_bytes() <= 227 * 1024, "shared memory per block");
};
// The workloads this pass serves: every column statistic.
template <int WL> __host__ __device__ constexpr bool col_ws_serves() { return needs_lse<WL>(); }

// TMA descriptors: q and k as in WsMaps (boxes of QN and kCwsKeys rows), the row LSE as a 2-D
// fp32 tensor {Lq, B*H} (boxes of QN), the aux input as a 3-D fp32 tensor {Lkv, Lq, B*H} (kf)
// or {Lkv, Lq, 1} (corm's one mask for all heads), boxes {kSw128Floats, QN, 1}.
struct ColWsMaps {
  CUtensorMap q, k, lse, aux;
};

// Tile t: key block kb of batch b and K/V head q.hkv, and the query blocks it sums (q: those of
// each of the group's query heads that see the key block; GQA's statistic is per K/V head).
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
// stage's LSE at shared address `slse` (ld.shared: a generic load of it cost ncu-visible waits).
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

// One query block's Sᵀ (keys x queries) into the column statistic; EDGE: apply the mask.
// aux(nt, rr, e1): the aux input (kf, corm) of query i0 + nt·8 + 2t + e1 and key j + 8 rr
// (the stage's tile, or kf's noise drawn), else unused.
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
      const float a = has_aux<WL>() ? aux(nt, rr, e1) : 0.f;
      cs.add_raw(rr, s[nt][e], scale_log2, e1 ? l[nt].y : l[nt].x, live, a);
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

// BF16: bfloat16 q and k (their tensor maps too), else fp16. Cache: the tile cache policy
// (fused_sm80.cuh; kOn: a query block whose tile with this key block is cached loads only its
// LSE, runs no GEMM and is summed from the cache).
// DRAW (kf): the consumers draw the noise (kf_draw.h, p.noise) instead of reading exp_rand's
// tiles.
template <int D, int WL, bool BF16 = false, typename Cache = NoTileCache, bool DRAW = false>
__global__ void __launch_bounds__(kCwsThreads, 1)
    attn_col_ws90(const __grid_constant__ ColWsMaps maps, Params p, int chunk, Cache cache) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = ColWsCfg<WL, D, DRAW>;
  constexpr bool kDraw = wl_traits<WL>::keyformer && DRAW;
  static_assert(!Cache::kOn || (C::QN == kCwsKeys && !C::kAux),
                "the cache's tiles are square and hold the exponentials of P alone");
  constexpr int NST = C::kStages, QN = C::QN, NC = 2, kAuxFloats = C::kAuxFloats, kDs = C::kDs;
  // TMA writes whole boxes (the padding of D = 96 too), and counts their bytes.
  constexpr uint32_t kKBytes = kCwsKeys * kDs * (uint32_t)sizeof(half);
  constexpr uint32_t kQBytes =
      QN * kDs * (uint32_t)sizeof(half) + (QN + kAuxFloats) * (uint32_t)sizeof(float);
  extern __shared__ unsigned char smem_cws[];
  half *sk = reinterpret_cast<half *>((reinterpret_cast<uintptr_t>(smem_cws) + k90Align - 1) &
                                      ~(uintptr_t)(k90Align - 1));
  half *sq0 = sk + kCwsKeys * kDs;
  float *saux0 = reinterpret_cast<float *>(sq0 + NST * QN * kDs); // kf / corm: 1024-aligned
  float *slse0 = saux0 + NST * kAuxFloats;
  uint64_t *full_k = reinterpret_cast<uint64_t *>(slse0 + NST * QN);
  uint64_t *empty_k = full_k + 1, *full = empty_k + 1, *empty = full + NST;
  int *tile_slot = reinterpret_cast<int *>(empty + NST); // the producer's claim, for the consumers

  const int ntiles = (p.Lkv + kCwsKeys - 1) / kCwsKeys * p.Hkv * p.B;
  const int wg = threadIdx.x >> 7;

  if (threadIdx.x == 0) {
    mbar_init(full_k, 1);
    mbar_init(empty_k, NC * 128); // every consumer thread, once it holds its K fragments
    for (int s = 0; s < NST; s++) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], NC * 128);
    }
    mbar_fence_init();
  }
  __syncthreads();

  // Query block number `it` of this CTA lives in stage it % NST, phase (it / NST) & 1.
  if (wg == 0) { // ---- producer ----
    regs_release<40>();
    if (threadIdx.x != 0) return;
    int it = 0;
    const uint64_t stream_policy = wl_traits<WL>::keyformer ? l2_evict_first_policy() : 0;
    for (int round = 0, t = blockIdx.x;; round++, t = ws_claim_tile()) {
      mbar_wait(empty_k, (round & 1) ^ 1); // the consumers hold the last tile's K
      if (t >= ntiles) {
        *tile_slot = -1;
        mbar_arrive(full_k);
        ws_release_counter();
        break;
      }
      *tile_slot = t; // published by the arrive below, read after full_k
      const ColWsTile tile = col_ws_tile<QN>(t, p, chunk);
      mbar_expect_tx(full_k, kKBytes);
      for (int sl = 0; sl < slabs<D>(); sl++)
        tma_load_4d(sk + sl * kCwsKeys * 64, &maps.k, full_k, sl * 64, tile.q.hkv,
                    tile.kb * kCwsKeys, tile.b);
      int h = tile.q.first_head(), n = tile.q.qb0; // block k's head and query block
      for (int k = 0; k < tile.q.count(); k++, it++, tile.q.advance(h, n)) {
        const int st = it % NST;
        // kf's noise is per (batch, head); corm's mask is one [Lq, Lkv] matrix for all.
        const int aux_z = wl_traits<WL>::keyformer ? tile.b * p.H + h : 0;
        const bool cached = Cache::kOn && cache.in_band(n, tile.kb); // the LSE alone
        mbar_wait(&empty[st], ((it / NST) & 1) ^ 1);
        mbar_expect_tx(&full[st], cached ? QN * (uint32_t)sizeof(float) : kQBytes);
        for (int sl = 0; !cached && sl < slabs<D>(); sl++)
          tma_load_4d(sq0 + st * QN * kDs + sl * QN * 64, &maps.q, &full[st], sl * 64, h, n * QN,
                      tile.b);
        tma_load_2d(slse0 + st * QN, &maps.lse, &full[st], n * QN, tile.b * p.H + h);
        for (int kb = 0; kb < kAuxFloats / (QN * kSw128Floats); kb++) // none when kDraw
          if constexpr (wl_traits<WL>::keyformer)                     // read once: evict first
            tma_load_3d_hint(saux0 + st * kAuxFloats + kb * QN * kSw128Floats, &maps.aux, &full[st],
                             tile.kb * kCwsKeys + kb * kSw128Floats, n * QN, aux_z, stream_policy);
          else // corm's one mask serves every head
            tma_load_3d(saux0 + st * kAuxFloats + kb * QN * kSw128Floats, &maps.aux, &full[st],
                        tile.kb * kCwsKeys + kb * kSw128Floats, n * QN, aux_z);
      }
    }
    return;
  }

  // ---- consumers ----
  regs_claim<232>();
  const int c = wg - 1;
  const int warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const int kl = c * 64 + warp * 16 + g; // this thread's keys in the tile: kl and kl + 8
  const float scale_log2 = p.scale * kLog2e;
  const uint64_t q_desc0 = sw128_desc(sq0, 16, 1024); // moved on per stage and k-step
  const uint32_t slse_u32 = smem_u32(slse0);
  ColAuxView<QN> av;
  av.init(kl, t);

  uint32_t kf[D / 16][4];
  float sa[QN / 8][4], sb[QN / 8][4];
  float2 lse[QN / 8];
  uint32_t it = 0; // unsigned: stage and phase are a mask and a shift
  for (int round = 0;; round++) {
    mbar_wait(full_k, round & 1);
    const int tix = lds_volatile(tile_slot);
    if (tix < 0) break;
    const ColWsTile tile = col_ws_tile<QN>(tix, p, chunk);
    load_k_frags<D>(kf, sk, kl, t);
    mbar_arrive(empty_k);

    const int j = tile.kb * kCwsKeys + kl;
    const long bh = (long)tile.b * p.Hkv + tile.q.hkv; // the statistic's row; the cache's (hpg = 1)
    // Query block n's tile comes from the cache (uniform over the CTA).
    auto cached = [&](int n) { return Cache::kOn && cache.in_band(n, tile.kb); };
    // Block n's GEMM (none for a cached block: its commit group is empty).
    auto issue = [&](float(&s)[QN / 8][4], int n, uint32_t cur) {
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
    };
    ColState<WL> cs;
    // Block n (ring slot cur): its LSE is read before the next block's GEMM is issued, so the
    // loads run under the issue and the wait rather than right after the wait.
    auto fetch_lse = [&](uint32_t cur) { load_lse<QN>(lse, slse_u32 + (cur % NST) * QN * 4u, t); };
    // Query block n of head h (the group's block that advance() reached).
    auto consume = [&](const float(&s)[QN / 8][4], int n, int h, uint32_t cur) {
      const int i0 = n * QN, j0 = tile.kb * kCwsKeys;
      const float *saux = saux0 + (cur % NST) * kAuxFloats;
      const bool edge =
          j0 + kCwsKeys - 1 > i0 + p.offset || i0 + QN > p.Lq || j0 + kCwsKeys > p.Lkv;
      if constexpr (Cache::kOn) {
        if (cached(n)) {
          auto live = [&](int il, int jl) {
            const int i = i0 + il, key = j0 + jl;
            return !edge || (key < p.Lkv && key <= i + p.offset && i < p.Lq);
          };
          // exp2(m - lse) of queries il, il + 1; past Lq the LSE reads as 0 and live() is false
          auto factor = [&](int nt, int, float2 m) {
            return make_float2(fast_exp2(m.x - lse[nt].x), fast_exp2(m.y - lse[nt].y));
          };
          cache.template add_tile<kCwsKeys, QN / 8>(cs, cache.tile(bh, n, tile.kb), kl, t, factor,
                                                    live);
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
      } else {
        auto staged = [&](int nt, int rr, int e1) { return av.at(saux, nt, rr, e1); };
        col_ws_block_any<WL, QN>(cs, s, lse, scale_log2, t, j, i0, p, staged, edge);
      }
      mbar_arrive(&empty[cur % NST]); // its Q (read by the finished GEMM) and LSE are done with
    };
    // Two score buffers: block k+1's GEMM runs while block k is summed. Blocks are numbered
    // through the group's heads (ColWsTile) and walked by tile.q.advance, so no division sits
    // before a GEMM's issue: (ha, na) is the head and query block in sa, (hb, nb) in sb.
    const int cnt = tile.q.count();
    int ha = tile.q.first_head(), na = tile.q.qb0, hb = ha, nb = na;
    tile.q.advance(hb, nb);
    issue(sa, na, it);
    int k = 0;
    for (; k + 2 < cnt; k += 2) {
      fetch_lse(it + k);
      issue(sb, nb, it + k + 1);
      wgmma_wait<1>();
      consume(sa, na, ha, it + k);
      ha = hb, na = nb;
      tile.q.advance(ha, na); // block k + 2
      fetch_lse(it + k + 1);
      issue(sa, na, it + k + 2);
      wgmma_wait<1>();
      consume(sb, nb, hb, it + k + 1);
      hb = ha, nb = na;
      tile.q.advance(hb, nb); // block k + 3
    }
    if (k + 1 < cnt) {
      fetch_lse(it + k);
      issue(sb, nb, it + k + 1);
      wgmma_wait<1>();
      consume(sa, na, ha, it + k);
      fetch_lse(it + k + 1);
      wgmma_wait<0>();
      consume(sb, nb, hb, it + k + 1);
    } else {
      fetch_lse(it + k);
      wgmma_wait<0>();
      consume(sa, na, ha, it + k);
    }
    it += cnt;
    cs.store(p, bh, tile.kb * kCwsKeys + kl);
  }
#else
  __trap(); // built without sm_90a: the dispatcher never launches this
#endif
}

} // namespace fused
