// The warp-specialized sm_90a forward, fused's forward on Hopper: attn_fwd (fwd_sm80.cuh)
// restructured the way Hopper wants it.
//
//   warpgroup 0  producer: one thread issues TMA loads (tensor maps, 128B swizzle) of each
//                tile's Q and of K and V per key block (WsCfg::kCols keys) into a ring of
//                stages; a K and a V "full" mbarrier per stage (transaction bytes), and a K and
//                a V "empty" one the consumers arrive on once done with the stage's K (its S
//                GEMM) and its V (its P·V), so the next K loads under the last P·V. kf: each
//                consumer's fp32 noise tile (64 rows x kCols keys, 128B-swizzled boxes of 32
//                floats) beside K and V. It gives its registers away (setmaxnreg.dec).
//   warpgroups 1..NC  consumers (two; three for 192-row tiles), 64 query rows each
//                (setmaxnreg.inc): per block n, S_n = Q·K_nᵀ and O += P_{n-1}·V_{n-1} issued
//                back to back, then S_n's softmax under that P·V (every workload, gemma2 too:
//                waiting for the P·V first is slower at every head dim). The consumers take
//                turns issuing (ping-pong), so one's softmax runs under the other's GEMMs. kf
//                folds the noise into a KfRowSum between the row max and the exponentials.
// No block-wide barrier after the prologue: the producer and the consumers meet at mbarriers
// only. Persistent: one CTA per SM claims query tiles (tile_scheduler.cuh); the rings run on
// across tiles and the next tile's Q loads once every consumer has issued its last S GEMM, so
// the next tile's first loads overlap this tile's last P·V and its epilogue. Outputs: out, the
// row LSE of the column-score workloads, kf's lse_kf. A tile cache policy (fused-diag) may keep
// the exponentials of the tiles near the diagonal for the column pass.
#pragma once
#include "mainloop_ws90.cuh"

namespace fused {

// A consumer warpgroup (wg 1 ..): the tiles the producer publishes, each through WsFwdTile's
// key-block steps and epilogue. Its registers (O, S, P, the row statistics) live here and are
// WsFwdTile's by reference, as separate locals: ptxas gets the code it was tuned on.
template <int D, int WL, bool BF16, int NC_, typename Cache, int COLS_, bool DRAW>
__device__ __forceinline__ void ws_fwd_consumer(const Params &p, int chunk, const Cache &cache,
                                                const WsFwdSmem<WsCfg<D, WL, NC_, COLS_>> &sm,
                                                int wg) {
  using C = WsCfg<D, WL, NC_, COLS_>;
  constexpr int kCols = C::kCols;
  const ConsumerThread th(wg); // c: 0 .. NC-1, rows m0 + 64 c ..
  const float scale_log2 = p.scale * kLog2e;
  float o[D / 8][4];
  float s[kCols / 8][4];
  uint32_t pa[kCols / 16][4];
  RowState st;
  KfRowSum st_kf;
  // kf: this thread's noise pairs (row warp·16 + g + 8 rr, keys nt·8 + 2t ..) in its consumer's
  // tile: box nt / 4 holds keys 32 (nt / 4) ..; within a box the offset depends on nt % 4 (rows
  // 8 apart share the swizzle), so four offsets serve every pair.
  const float *snoise = sm.snoise0 + th.c * C::kNoiseFloats;
  int noise_off[4];
#pragma unroll
  for (int k = 0; k < 4; k++) noise_off[k] = sw128_f32(th.warp * 16 + th.g, k * 8 + 2 * th.t);
  auto noise_at = [&](int nt, int rr) {
    return *reinterpret_cast<const float2 *>(snoise + (nt / 4) * 64 * kSw128Floats +
                                             rr * 8 * kSw128Floats + noise_off[nt % 4]);
  };
  const int next_c = th.c + 1 == C::NC ? 0 : th.c + 1; // whose turn follows mine
  const bool lead = th.c == 0;
  if (th.c == C::NC - 1) pass_turn(0); // consumer 0 takes the first turn
  uint32_t it = 0;
  for (int round = 0;; round++) {
    const int tix = ws_next_tile<C::kUniformIndex>(sm.full_q, sm.tile_slot, round);
    if (tix < 0) break;
    const WsTile tile = ws_tile<C::kRows>(tix, p, chunk);
    const int m0 = tile.qb * C::kRows;
    const int row_base = m0 + th.c * 64 + th.warp * 16 + th.g; // rows row_base and row_base + 8
    const int wg_row0 = m0 + th.c * 64;
    // kf with drawn noise: the plane's key and this thread's two rows' first in-plane indices
    // (kf_draw.h), so that noise_drawn_at(j0) gives what noise_at reads.
    uint32_t noise_key = 0, noise_row[2] = {0u, 0u};
    if constexpr (C::kNoise && DRAW) {
      noise_key = kf_draw_plane_key(p.noise, (uint64_t)tile.b * p.H + tile.h);
#pragma unroll
      for (int rr = 0; rr < 2; rr++)
        noise_row[rr] = (uint32_t)(row_base + 8 * rr) * (uint32_t)p.Lkv + 2u * th.t;
    }
    auto noise_drawn_at = [&](int j0) {
      return [&, j0](int nt, int rr) {
        const uint32_t idx = noise_row[rr] + (uint32_t)(j0 + nt * 8);
        return make_float2(kf_draw_at(noise_key, idx), kf_draw_at(noise_key, idx + 1u));
      };
    };
    const int nblocks = key_blocks_upto<kCols>((tile.qb + 1) * C::kRows, p);
    const int my_blocks = !C::kOwnBlocks    ? nblocks
                          : wg_row0 >= p.Lq ? 0
                                            : max(1, key_blocks_upto<kCols>(wg_row0 + 64, p));
    frag_zero(o);
    st.init();
    st_kf.init();
    WsFwdTile<D, WL, BF16, NC_, Cache, COLS_, DRAW, decltype(noise_at), decltype(noise_drawn_at)>
        steps{s,    o,     pa, st, st_kf,  p,    row_base,  wg_row0, scale_log2, th,
              tile, cache, it, sm, next_c, lead, my_blocks, nblocks, noise_at,   noise_drawn_at};
    if (C::kOwnBlocks && my_blocks == 0) { // no rows of mine: Q is not read, every block skipped
      mbar_arrive(sm.empty_q);
      for (int n = 0; n < nblocks; n++) steps.skip_block(it + n);
      it += nblocks;
      continue;
    }
    steps.mma();
    it += nblocks;
    steps.store();
  }
  if (th.c == 0) wait_turn(0); // the last turn, passed after the last consumer's last GEMM
}

// BF16: bfloat16 q, k, v, out (tensor maps of bf16, bf16 wgmma), else fp16. NC_: consumer
// warpgroups. COLS_: keys per stage (0: WsCfg's). Cache: the tile cache policy (kOn: the
// exponentials of the band's 128 x 128 tiles go to it). DRAW (kf): the consumers draw the noise
// (kf_draw.h, p.noise) instead of reading exp_rand's tiles.
template <int D, int WL, bool BF16 = false, int NC_ = 2, typename Cache = NoTileCache,
          int COLS_ = 0, bool DRAW = false>
__global__ void __launch_bounds__(WsCfg<D, WL, NC_, COLS_>::kThreads, 1)
    attn_fwd_ws90(const __grid_constant__ WsMaps maps, Params p, int chunk, Cache cache) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = WsCfg<D, WL, NC_, COLS_>;
  static_assert(!Cache::kOn || (C::kRows == C::kCols && !C::kNoise && !wl_traits<WL>::softcap),
                "the cache's tiles are square and hold the exponentials of P alone");
  extern __shared__ unsigned char smem_ws[];
  const WsFwdSmem<C> sm(smem_ws);
  const int ntiles = (p.Lq + C::kRows - 1) / C::kRows * p.H * p.B;
  const int wg =
      C::kUniformIndex ? __shfl_sync(0xffffffffu, threadIdx.x >> 7, 0) : threadIdx.x >> 7;
  if (threadIdx.x == 0) sm.init_barriers();
  __syncthreads();
  if (wg == 0) { // the producer
    regs_release<C::kProducerRegs>();
    if (threadIdx.x != 0) return;
    WsFwdProducer<D, WL, NC_, COLS_, DRAW> load(maps, p, sm, chunk);
    ws_produce_tiles(ntiles, sm.empty_q, sm.full_q, sm.tile_slot, load);
    return;
  }
  regs_claim<C::kConsumerRegs>();
  ws_fwd_consumer<D, WL, BF16, NC_, Cache, COLS_, DRAW>(p, chunk, cache, sm, wg);
#else
  __trap(); // built without sm_90a: the dispatcher never launches this
#endif
}

} // namespace fused
