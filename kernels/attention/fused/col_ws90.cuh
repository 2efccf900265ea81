// The warp-specialized sm_90a column pass: the column statistic of every column-score workload
// (h2o, roco, snapkv; kf and corm with their fp32 S×S aux input) on the forward's machinery.
// Same math, mask and outputs as attn_col (col_sm80.cuh), which serves the shapes TMA cannot
// take (a row pitch of no multiple of 16 bytes) and GPUs before Hopper.
//
//   warpgroup 0  producer: one thread loads per 128-key tile the K tile, then the tile's query
//                blocks (Q, its row LSE, kf's noise / corm's mask tile) into a ring of stages
//                (mainloop_colws90.cuh).
//   warpgroups 1, 2  consumers, 64 keys each: K in registers, block n+1's Sᵀ GEMM issued
//                before block n is exponentiated and summed.
// Its GEMM and its exponentials ask the tensor pipe and the MUFU for equal time, and neither
// runs full (PERF-fused.md): 64-query steps, K from shared memory, the consumers taking turns,
// 256 keys per CTA and exponentials on the FMA pipe all measure slower.
// Persistent: one CTA per SM claims tiles (key block, head, batch), first keys (the longest
// causal columns) first, through the forward's claim counter (tile_scheduler.cuh). A tile cache
// policy (fused-diag) may supply the tiles near the diagonal, which then take no GEMM.
#pragma once
#include "mainloop_colws90.cuh"

namespace fused {

// BF16: bfloat16 q and k (their tensor maps too), else fp16. Cache: the tile cache policy
// (kOn: a query block whose tile with this key block is cached loads only its LSE, runs no
// GEMM and is summed from the cache). DRAW: kf's consumers draw the noise (kf_draw.h, p.noise)
// instead of reading exp_rand's tiles; corm compares against its row thresholds through the
// moved LSE (corm_rows.cuh) instead of reading the mask's tiles. corm's two passes are both
// launched where p.corm_varied is set: the one whose case the mask check did not find ends here.
// The consumers' loop stays in the kernel, with its GEMM issue as a lambda: as a function of
// its own (or ColWsTileSteps methods) ptxas gets other code for kf and corm.
template <int D, int WL, bool BF16 = false, typename Cache = NoTileCache, bool DRAW = false>
__global__ void __launch_bounds__(kCwsThreads, 1)
    attn_col_ws90(const __grid_constant__ ColWsMaps maps, Params p, int chunk, Cache cache) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = ColWsCfg<WL, D, DRAW>;
  constexpr int NST = C::kStages, QN = C::QN;
  static_assert(!Cache::kOn || (QN == kCwsKeys && !C::kAux),
                "the cache's tiles are square and hold the exponentials of P alone");
  if constexpr (wl_traits<WL>::any_ge_mask)
    if (p.corm_varied && (*p.corm_varied != 0) == DRAW) return; // uniform: before any barrier
  extern __shared__ unsigned char smem_cws[];
  const ColWsSmem<C> sm(smem_cws);
  const int ntiles = (p.Lkv + kCwsKeys - 1) / kCwsKeys * p.Hkv * p.B;
  const int wg = threadIdx.x >> 7;
  if (threadIdx.x == 0) sm.init_barriers();
  __syncthreads();
  if (wg == 0) { // the producer
    regs_release<40>();
    if (threadIdx.x != 0) return;
    ColWsProducer<D, WL, Cache, DRAW> load(maps, p, cache, sm, chunk);
    ws_produce_tiles(ntiles, sm.empty_k, sm.full_k, sm.tile_slot, load);
    return;
  }
  regs_claim<232>(); // a consumer: its K rows in registers, 64 keys of each tile
  const ConsumerThread th(wg);
  const int kl = th.c * 64 + th.warp * 16 + th.g; // this thread's keys in the tile: kl, kl + 8
  const float scale_log2 = p.scale * kLog2e;
  const uint64_t q_desc0 = sw128_desc(sm.sq0, 16, 1024); // moved on per stage and k-step
  const uint32_t slse_u32 = smem_u32(sm.slse0);
  ColAuxView<QN> av;
  av.init(kl, th.t);
  uint64_t *const full = sm.q.full, *const empty = sm.q.empty;
  float *const saux0 = sm.saux0;
  uint32_t kf[D / 16][4];
  float sa[QN / 8][4], sb[QN / 8][4];
  float2 lse[QN / 8];
  uint32_t it = 0; // the ring's counter (unsigned: stage and phase are a mask and a shift)
  for (int round = 0;; round++) {
    const int tix = ws_next_tile<false>(sm.full_k, sm.tile_slot, round);
    if (tix < 0) break;
    const ColWsTile tile = col_ws_tile<QN>(tix, p, chunk);
    load_k_frags<D>(kf, sm.sk, kl, th.t); // the K buffer is then free for the next tile's K
    mbar_arrive(sm.empty_k);
    const int j = tile.kb * kCwsKeys + kl;
    const long bh = (long)tile.b * p.Hkv + tile.q.hkv; // the statistic's row
    ColState<WL> cs;
    ColWsTileSteps<D, WL, BF16, Cache, DRAW> steps{
        p,     cache, sm, th.t, kl,  scale_log2, q_desc0, slse_u32, av, full, empty,
        saux0, kf,    sa, sb,   lse, it,         cs,      tile,     j,  bh};
    // Query block n's tile comes from the cache (uniform over the CTA).
    auto cached = [&](int n) { return Cache::kOn && cache.in_band(n, tile.kb); };
    auto issue = [&](float(&s)[QN / 8][4], int n, uint32_t cur) {
      col_ws_issue<D, QN, NST, BF16>(s, kf, n, cur, full, q_desc0, cached);
    };
    // Two score buffers: block k+1's GEMM runs while block k is summed. The blocks are walked
    // through the group's heads by tile.q.advance (no division before a GEMM's issue): (ha, na)
    // is the head and query block in sa, (hb, nb) in sb.
    const int cnt = tile.q.count();
    int ha = tile.q.first_head(), na = tile.q.qb0, hb = ha, nb = na;
    tile.q.advance(hb, nb);
    issue(sa, na, it);
    int k = 0;
    for (; k + 2 < cnt; k += 2) {
      steps.fetch_lse(it + k);
      issue(sb, nb, it + k + 1);
      wgmma_wait<1>();
      steps.consume(sa, na, ha, it + k);
      ha = hb, na = nb;
      tile.q.advance(ha, na); // block k + 2
      steps.fetch_lse(it + k + 1);
      issue(sa, na, it + k + 2);
      wgmma_wait<1>();
      steps.consume(sb, nb, hb, it + k + 1);
      hb = ha, nb = na;
      tile.q.advance(hb, nb); // block k + 3
    }
    if (k + 1 < cnt) {
      steps.fetch_lse(it + k);
      issue(sb, nb, it + k + 1);
      wgmma_wait<1>();
      steps.consume(sa, na, ha, it + k);
      steps.fetch_lse(it + k + 1);
      wgmma_wait<0>();
      steps.consume(sb, nb, hb, it + k + 1);
    } else {
      steps.fetch_lse(it + k);
      wgmma_wait<0>();
      steps.consume(sa, na, ha, it + k);
    }
    it += cnt;
    store_cols(cs, p, bh, tile.kb * kCwsKeys + kl);
  }
#else
  __trap(); // built without sm_90a: the dispatcher never launches this
#endif
}

} // namespace fused
