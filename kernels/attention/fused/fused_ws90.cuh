// The warp-specialized sm_90a forward, fused's forward on Hopper: the online-softmax forward of
// attn_fwd (fused_sm80.cuh) restructured the way Hopper wants it.
//
//   warpgroup 0  producer: one thread issues TMA loads (tensor maps, 128B swizzle) of each
//                tile's Q and of K and V per key block (128 keys; 80 at D = 256, 64 for kf, 176
//                at D = 128 without a mask where the dispatcher picks them) into an NST-stage
//                ring; a K and a V "full" mbarrier per stage (transaction bytes), and a K and a
//                V "empty" one that the consumers arrive on when they are done with the stage's
//                K (its S GEMM) and its V (its P·V), so that the next K loads under the last
//                P·V. It gives its registers away (setmaxnreg.dec).
//   warpgroups 1..NC  consumers (two; three for 192-row tiles): 64 query rows each
//                (setmaxnreg.inc). Per block n a consumer issues S_n = Q·K_nᵀ and
//                O += P_{n-1}·V_{n-1} back to back (both async) and runs the softmax of S_n once
//                S_n is done, under P_{n-1}·V_{n-1} (at D = 128 the blocks before the diagonal
//                run without mask code, whose branch would make ptxas wait for the P·V before
//                the softmax; WsCfg says where the overlap pays). The consumers take turns
//                issuing through named barriers (ping-pong), so one's softmax runs under the
//                other's GEMMs.
// No block-wide barrier after the prologue: the producer and the consumers only meet at
// mbarriers. Persistent: one CTA per SM claims query tiles one after another (the tile
// schedule below); the K/V ring runs on across tiles and the producer loads the next tile's Q
// as soon as every consumer has issued its last S GEMM, so the next tile's first loads overlap
// this tile's last P·V and its epilogue. Outputs: out, the row LSE of the column-score
// workloads, and for kf (COL_KEYFORMER) the KeyFormer row statistic: the producer loads each
// consumer's fp32 noise tile (64 rows x 128 keys, 32 KiB, one stage per consumer,
// 128B-swizzled boxes of 32 floats) beside K and V, and the consumer folds it into a KfRowSum
// between the row max and the exponentials, then hands the tile back. A tile cache policy
// (fused-diag) may keep the exponentials of the tiles near the diagonal for the column pass.
#pragma once
#include "fused_sm90.cuh"
#include "sm90_async.cuh" // mbarriers, TMA, named barriers, setmaxnreg

#include <cuda.h> // CUtensorMap (the maps are encoded on the host, fused.cu)

namespace fused {

constexpr int kWsCols = 128; // keys per stage (WsCfg::kCols: 80 at D = 256, kf 64, or COLS_)

constexpr int kWsSchedBar = 1; // named barriers 1..NC: the consumers' turns (0 is __syncthreads)

// Per head dim and workload: NC consumer warpgroups of 64 query rows each, the K/V ring depth,
// the registers each warpgroup keeps after setmaxnreg (the sum over 128-thread warpgroups must
// stay within the SM's 64 K). The choices follow same-run measurements on an H100
// (PERF-fused.md): a third consumer at D = 64 spills under ptxas's 128-register launch bound
// for anything but the plain forward. D = 128 and 256 (and kf, whose noise tiles take the
// room) run two K/V stages: K and V are released apart, so the next K loads under the last
// P·V, and D = 128 keeps 64 KiB of shared memory free; D = 96 runs three. Every workload's
// softmax of S_n runs while its own P_{n-1}·V_{n-1} is on the tensor cores (for gemma2, waiting
// for the P·V before the softmax is slower at every head dim: PERF-fused.md).
// NC_ = 3 (192-row tiles) exists where ws_wide_serves says so; the dispatcher picks it for the
// cells it pays on (fused_launch.cuh, ws_fwd_rows).
// D = 96 runs on two 64-column slabs of shared memory, the second half-filled; D = 256 takes
// 80-key stages (kCols; faster than 64-key ones: PERF-fused.md), so that Q, two K/V stages and
// O's 128 accumulators per thread fit the shared memory and the registers; kf's noise tiles
// leave room for 64-key stages only.
// COLS_: keys per stage where the dispatcher picks them (ws_cols_unmasked: 176 at D = 128
// without a mask), else 0 and kCols below.
template <int D, int WL, int NC_ = 2, int COLS_ = 0> struct WsCfg {
  static_assert(D == 64 || D == 96 || D == 128 || D == 256, "WsCfg: a head dim the kernel has");
  static constexpr bool kNoise = wl_traits<WL>::keyformer;
  static constexpr int NC = NC_;
  static constexpr int kDs = smem_dim<D>(); // a row's halves in shared memory
  static constexpr int kCols = COLS_ ? COLS_ : D <= 128 ? kWsCols : kNoise ? 64 : 80;
  static_assert(kCols % 16 == 0, "a key block is whole k-steps of P·V");
  static constexpr int kRows = 64 * NC;
  static constexpr int kThreads = 128 * (NC + 1);
  static constexpr int kStages = D == 64 ? 4 : D == 96 && !kNoise ? 3 : 2;
  // The warpgroup index and the claimed tile broadcast from lane 0, so ptxas knows them
  // warp-uniform and builds the wgmma descriptors in uniform registers: this pays at D = 128
  // and for gemma2, and is slower at D = 64 otherwise.
  static constexpr bool kUniformIndex = D > 64 || wl_traits<WL>::softcap;
  // kSplitEdge: the key blocks before a consumer's first edge block (the diagonal, the keys'
  // end) run in a loop without mask code, which pays at D = 128 (kf and D = 64 stay on one
  // loop, where the split is slower). With the split, every workload rescales O after the P·V
  // wait (FlashAttention-3's order at D = 128); kf at D > 64 rescales it early, under the next
  // S GEMM.
  static constexpr bool kSplitEdge = D > 64 && !kNoise;
  static constexpr bool kEarlyRescale = D > 64 && !kSplitEdge;
  // kOwnBlocks: each consumer computes only its own rows' key blocks (skipping the tile's masked
  // last block, or all of them past the queries' end). 192-row tiles only: in a 128-row tile
  // both consumers need the same blocks when Lq = Lkv (the only waste left is a consumer with
  // no rows, at Lq % 128 in 1..64), and the extra branch makes ptxas's code for them slower.
  static constexpr bool kOwnBlocks = NC > 2;
  static_assert(!kOwnBlocks || !kNoise, "kf's noise tiles: the skip does not release them");
  static constexpr int kProducerRegs = NC == 3 ? 32 : 40;
  static constexpr int kConsumerRegs = NC == 3 ? 160 : 232;
  static_assert(128 * (kProducerRegs + NC * kConsumerRegs) <= 65536, "register budget");
  // kf's noise: one 64 x kCols fp32 tile per consumer.
  static constexpr int kNoiseFloats = kNoise ? 64 * kCols : 0;
  static constexpr int smem_bytes() {
    return (kRows + 2 * kStages * kCols) * kDs * (int)sizeof(half) +
           NC * kNoiseFloats * (int)sizeof(float) + k90Align +
           (2 + 4 * kStages + (kNoise ? 2 * NC : 0)) * 8 + 8;
  }
  static_assert(smem_bytes() <= 227 * 1024, "shared memory per block");
};

// Three consumers (192-row tiles) fit ptxas's 160 registers without spills at D = 64 for the
// plain forward only (gemma2's softcap spills, kf's noise tiles need the shared memory). They
// are faster than 128-row tiles with many waves of tiles and slower with few
// (fused_launch.cuh's ws_fwd_rows picks by the wave count).
template <int D, int WL> __host__ __device__ constexpr bool ws_wide_serves() {
  return D == 64 && !wl_traits<WL>::softcap && !wl_traits<WL>::keyformer &&
         !wl_traits<WL>::column_pass && !wl_traits<WL>::selected_blocks;
}

// TMA descriptors of q, k, v as 4-D tensors {D, H, L, B} (k, v: H = Hkv; boxes {64, 1, rows,
// 1}); kf's
// noise as a 3-D tensor {Lkv, Lq, B*H} (boxes {kSw128Floats, 64, 1}).
struct WsMaps {
  CUtensorMap q, k, v, noise;
};

// ---- the tile schedule ---------------------------------------------------------------------
// Tiles (query block, head, batch) are numbered heaviest first within chunks of `chunk` (batch,
// head) pairs: under a causal mask a query block's work grows with its index, so the chunk's
// last query blocks come first. Chunks keep the running CTAs on few heads, so they share each
// K/V block through L2 (all heads interleaved is slower: PERF-fused.md); fused.cu sizes them.
// CTA i takes tile i, then the next unclaimed one from a global counter (greedy list
// scheduling: the CTAs finish together, which a static split cannot do with chunks). With one
// CTA per tile (--sm90-fwd ws1) the hardware hands them out in that order.
struct WsTile {
  int qb, h, b;
};
// nq blocks per (batch, head); the column pass (fused_colws90.cuh) numbers its key blocks the
// same way, heaviest (the first keys) first.
__device__ __forceinline__ WsTile ws_tile_of(int t, int nq, int H, int B, int chunk) {
  const int hb = H * B;
  const int c0 = t / (nq * chunk) * chunk, hc = min(chunk, hb - c0);
  const int r = t - c0 * nq, bh = c0 + r % hc;
  return {nq - 1 - r / hc, bh % H, bh / H};
}
template <int ROWS> __device__ __forceinline__ WsTile ws_tile(int t, const Params &p, int chunk) {
  return ws_tile_of(t, (p.Lq + ROWS - 1) / ROWS, p.H, p.B, chunk);
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
// Key blocks of the query rows before row_end (their last row's causal limit): a tile's, which
// the producer loads, and each consumer's own (kOwnBlocks), which stops at its 64 rows' diagonal.
// COLS: keys per block.
template <int COLS> __device__ __forceinline__ int ws_blocks_upto(int row_end, const Params &p) {
  const int last_row = min(row_end, p.Lq) - 1;
  const int kv_end = min(p.Lkv, last_row + p.offset + 1);
  return (kv_end + COLS - 1) / COLS;
}
template <int ROWS, int COLS> __device__ __forceinline__ int ws_blocks(int qb, const Params &p) {
  return ws_blocks_upto<COLS>((qb + 1) * ROWS, p);
}
// The first key block that crosses the diagonal of the 64 rows from row0 or the keys' end
// (the consumer's block_edge): blocks before it need no mask.
template <int COLS> __device__ __forceinline__ int ws_first_edge_block(int row0, const Params &p) {
  const int diag = row0 + p.offset - (COLS - 1), end = p.Lkv - COLS;
  if (diag < 0 || end < 0) return 0;
  return min(diag, end) / COLS + 1;
}

// ---- the kernel ---------------------------------------------------------------------------
// BF16: bfloat16 q, k, v, out (tensor maps of bf16, bf16 wgmma), else fp16. NC_: consumer
// warpgroups (64 query rows each). Cache: the tile cache policy (fused_sm80.cuh; kOn: the
// exponentials of the band's 128 x 128 tiles go to it). DRAW (kf): the consumers draw the noise
// (kf_draw.h, p.noise) instead of reading exp_rand's tiles.
template <int D, int WL, bool BF16 = false, int NC_ = 2, typename Cache = NoTileCache,
          int COLS_ = 0, bool DRAW = false>
__global__ void __launch_bounds__(WsCfg<D, WL, NC_, COLS_>::kThreads, 1)
    attn_fwd_ws90(const __grid_constant__ WsMaps maps, Params p, int chunk, Cache cache) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using C = WsCfg<D, WL, NC_, COLS_>;
  constexpr int NST = C::kStages, NC = C::NC, kWsRows = C::kRows, kCols = C::kCols, kDs = C::kDs;
  static_assert(!Cache::kOn || (kWsRows == kCols && !C::kNoise && !wl_traits<WL>::softcap),
                "the cache's tiles are square and hold the exponentials of P alone");
  // TMA writes whole boxes (the padding of D = 96 too), and counts their bytes.
  constexpr uint32_t kStageBytes = kCols * kDs * (uint32_t)sizeof(half);
  constexpr bool kNoise = C::kNoise;
  constexpr bool kDraw = kNoise && DRAW;
  constexpr int kNoiseFloats = C::kNoiseFloats;
  extern __shared__ unsigned char smem_ws[];
  half *sq = reinterpret_cast<half *>((reinterpret_cast<uintptr_t>(smem_ws) + k90Align - 1) &
                                      ~(uintptr_t)(k90Align - 1));
  half *sk0 = sq + kWsRows * kDs;
  half *sv0 = sk0 + NST * kCols * kDs;
  float *snoise0 = reinterpret_cast<float *>(sv0 + NST * kCols * kDs); // kf: one tile per consumer
  uint64_t *full_q = reinterpret_cast<uint64_t *>(snoise0 + NC * kNoiseFloats);
  uint64_t *empty_q = full_q + 1;
  uint64_t *full_k = empty_q + 1, *full_v = full_k + NST;
  uint64_t *empty_k = full_v + NST, *empty_v = empty_k + NST;
  uint64_t *full_n = empty_v + NST, *empty_n = full_n + (kNoise ? NC : 0); // kf's noise tiles
  int *tile_slot = reinterpret_cast<int *>(empty_n + (kNoise ? NC : 0));   // the producer's claim

  const int ntiles = (p.Lq + kWsRows - 1) / kWsRows * p.H * p.B;
  const int wg =
      C::kUniformIndex ? __shfl_sync(0xffffffffu, threadIdx.x >> 7, 0) : threadIdx.x >> 7;

  if (threadIdx.x == 0) {
    mbar_init(full_q, 1);
    mbar_init(empty_q, NC * 128); // every consumer thread, once its last S GEMM of a tile is done
    for (int s = 0; s < NST; s++) {
      mbar_init(&full_k[s], 1);
      mbar_init(&full_v[s], 1);
      // Every consumer thread arrives once per block on each: on empty_k once its S GEMM is
      // done, on empty_v once its P·V is, so that with two stages the next K loads while the
      // last P·V still reads V.
      mbar_init(&empty_k[s], NC * 128);
      mbar_init(&empty_v[s], NC * 128);
    }
    for (int cc = 0; kNoise && cc < NC; cc++) {
      mbar_init(&full_n[cc], 1);
      mbar_init(&empty_n[cc], 128); // consumer cc's threads, once per block
    }
    mbar_fence_init();
  }
  __syncthreads();

  // The K/V ring runs on across tiles: block number `it` of this CTA lives in stage it % NST,
  // and its barriers' phase is (it / NST) & 1 (unsigned: no sign fix-ups in the division).
  if (wg == 0) { // ---- producer ----
    regs_release<C::kProducerRegs>();
    if (threadIdx.x != 0) return;
    uint32_t it = 0;
    const uint64_t stream_policy = kNoise ? l2_evict_first_policy() : 0; // kf's noise: read once
    for (int round = 0, t = blockIdx.x;; round++, t = ws_claim_tile()) {
      mbar_wait(empty_q, (round & 1) ^ 1); // the consumers are done with the last tile's Q
      if (t >= ntiles) {                   // no tile left: wake the consumers with -1 and leave
        *tile_slot = -1;
        mbar_arrive(full_q);
        ws_release_counter();
        break;
      }
      *tile_slot = t; // published by the arrive below (release), read after full_q (acquire)
      const WsTile tile = ws_tile<kWsRows>(t, p, chunk);
      const int nblocks = ws_blocks<kWsRows, kCols>(tile.qb, p);
      const int kv_head = tile.h / p.hpg; // GQA: the group's K/V head
      mbar_expect_tx(full_q, kWsRows * kDs * (uint32_t)sizeof(half));
      for (int sl = 0; sl < slabs<D>(); sl++)
        tma_load_4d(sq + sl * kWsRows * 64, &maps.q, full_q, sl * 64, tile.h, tile.qb * kWsRows,
                    tile.b);
      for (int n = 0; n < nblocks; n++, it++) {
        const uint32_t st = it % NST;
        const uint32_t free_phase = ((it / NST) & 1) ^ 1; // the first round passes at once
        half *sk = sk0 + st * kCols * kDs, *sv = sv0 + st * kCols * kDs;
        mbar_wait(&empty_k[st], free_phase);
        mbar_expect_tx(&full_k[st], kStageBytes);
        for (int sl = 0; sl < slabs<D>(); sl++)
          tma_load_4d(sk + sl * kCols * 64, &maps.k, &full_k[st], sl * 64, kv_head, n * kCols,
                      tile.b);
        mbar_wait(&empty_v[st], free_phase);
        mbar_expect_tx(&full_v[st], kStageBytes);
        for (int sl = 0; sl < slabs<D>(); sl++)
          tma_load_4d(sv + sl * kCols * 64, &maps.v, &full_v[st], sl * 64, kv_head, n * kCols,
                      tile.b);
        // kf: each consumer's noise tile of block n, as soon as it is done with block n - 1's
        // (none where the consumers draw the noise).
        for (int cc = 0; kNoise && !kDraw && cc < NC; cc++) {
          float *sn = snoise0 + cc * kNoiseFloats;
          mbar_wait(&empty_n[cc], (it & 1) ^ 1);
          mbar_expect_tx(&full_n[cc], kNoiseFloats * (uint32_t)sizeof(float));
          for (int kb = 0; kb < kCols / kSw128Floats; kb++)
            tma_load_3d_hint(sn + kb * 64 * kSw128Floats, &maps.noise, &full_n[cc],
                             n * kCols + kb * kSw128Floats, tile.qb * kWsRows + cc * 64,
                             tile.b * p.H + tile.h, stream_policy);
        }
      }
    }
    return;
  }

  // ---- consumers ----
  regs_claim<C::kConsumerRegs>();
  const int c = wg - 1; // 0 .. NC-1: rows m0 + 64 c ..
  const int warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const float scale_log2 = p.scale * kLog2e;

  float o[D / 8][4];
  float s[kCols / 8][4];
  uint32_t pa[kCols / 16][4];
  RowState st;
  KfRowSum st_kf;
  // kf: this thread's noise pairs (row warp·16 + g + 8 rr, keys nt·8 + 2t ..) in its consumer's
  // tile: box nt / 4 holds keys 32 (nt / 4) ..; within a box the offset depends on nt % 4 (rows
  // 8 apart share the swizzle), so four offsets serve every pair.
  const float *snoise = snoise0 + c * kNoiseFloats;
  int noise_off[4];
#pragma unroll
  for (int k = 0; k < 4; k++) noise_off[k] = sw128_f32(warp * 16 + g, k * 8 + 2 * t);
  auto noise_at = [&](int nt, int rr) {
    return *reinterpret_cast<const float2 *>(snoise + (nt / 4) * 64 * kSw128Floats +
                                             rr * 8 * kSw128Floats + noise_off[nt % 4]);
  };

  const int next_c = c + 1 == NC ? 0 : c + 1; // whose turn follows mine
  // With two consumers at D <= 128, only the first polls a block's K and V full barriers inside
  // the loop (FlashAttention-3's scheme), waiting for V after it has issued S: the second issues
  // after the first has passed it the turn, which the first does only after its waits
  // (bar.arrive synchronizes with the bar.sync it releases). Elsewhere every consumer waits for
  // both before its turn (at D = 256 the lead's scheme measured slower: PERF-fused.md v37).
  constexpr bool kLeadPolls = NC == 2 && D <= 128;
  const bool lead = c == 0;
  if (c == NC - 1) named_arrive(kWsSchedBar, 256); // consumer 0 takes the first turn
  uint32_t it = 0;
  for (int round = 0;; round++) {
    mbar_wait(full_q, round & 1);
    const int slot = lds_volatile(tile_slot);
    const int tix = C::kUniformIndex ? __shfl_sync(0xffffffffu, slot, 0) : slot;
    if (tix < 0) break;
    const WsTile tile = ws_tile<kWsRows>(tix, p, chunk);
    const int m0 = tile.qb * kWsRows;
    const int row_base = m0 + c * 64 + warp * 16 + g; // rows row_base and row_base + 8
    const int wg_row0 = m0 + c * 64;
    // kf with drawn noise (kDraw): the plane's key and this thread's two rows' first
    // in-plane indices (kf_draw.h), so that noise_drawn_at(j0) gives what noise_at reads.
    uint32_t noise_key = 0, noise_row[2] = {0u, 0u};
    if constexpr (kDraw) {
      noise_key = kf_draw_plane_key(p.noise, (uint64_t)tile.b * p.H + tile.h);
#pragma unroll
      for (int rr = 0; rr < 2; rr++)
        noise_row[rr] = (uint32_t)(row_base + 8 * rr) * (uint32_t)p.Lkv + 2u * t;
    }
    auto noise_drawn_at = [&](int j0) {
      return [&, j0](int nt, int rr) {
        const uint32_t idx = noise_row[rr] + (uint32_t)(j0 + nt * 8);
        return make_float2(kf_draw_at(noise_key, idx), kf_draw_at(noise_key, idx + 1u));
      };
    };
    // The tile's blocks (the producer loads them all) and mine (C::kOwnBlocks): under a
    // causal mask a 192-row tile's first consumers end one block before its last, and a
    // consumer whose rows all lie past the queries' end (a head's last tile, partly filled: 64
    // of 192 rows at S = 4096) computes none. They keep their turns and release the stages of
    // the blocks they skip.
    const int nblocks = ws_blocks<kWsRows, kCols>(tile.qb, p);
    const int my_blocks = !C::kOwnBlocks    ? nblocks
                          : wg_row0 >= p.Lq ? 0
                                            : max(1, ws_blocks_upto<kCols>(wg_row0 + 64, p));

    frag_zero(o);
    st.init();
    st_kf.init();

    // Gemma2's softcap on the raw-score path: tanh of every score first (MUFU.TANH, masked
    // -inf), cap·log2 e in the exponent's FFMA.
    constexpr bool kRawSoftcap = wl_traits<WL>::softcap;
    static_assert(!(kRawSoftcap && kNoise), "softmax_block: the softcap path has no noise");
    // Whether block n (keys from n · kCols) crosses this warpgroup's diagonal or the keys' end.
    auto block_edge = [&](int n) {
      const int j0 = n * kCols;
      return j0 + kCols - 1 > wg_row0 + p.offset || j0 + kCols > p.Lkv;
    };
    // edge: block_edge(n), or a constant where the caller knows it (the split loops below).
    auto softcap_block = [&](int n, bool edge) {
      if constexpr (kRawSoftcap)
        softcap_scores<WL, kCols / 8>(s, p, row_base, n * kCols, edge, scale_log2, t);
    };
    // Block n's scores in s -> masked log2 scores -> probabilities (s) and the rescale factors.
    auto softmax_block = [&](int n, bool edge, float(&alpha)[2]) {
      const int j0 = n * kCols;
      if constexpr (kRawSoftcap) { // s holds tanh(qk·scale/cap) already
        st.update_raw<kCols / 8>(s, GEMMA2_SOFTCAP * kLog2e, alpha);
      } else if constexpr (kNoise) { // the row max, kf's sum from the noise, the exponentials
        mask_scores<WL, kCols / 8, false>(s, p, row_base, j0, edge, scale_log2, t);
        float m_use[2];
        st.new_max<kCols / 8, true>(s, scale_log2, m_use, alpha);
        if constexpr (kDraw) {
          st_kf.add<kCols / 8, true>(s, scale_log2, m_use, alpha, noise_drawn_at(j0), edge);
        } else {
          const uint32_t cur = it + n;
          mbar_wait(&full_n[c], cur & 1);
          st_kf.add<kCols / 8, true>(s, scale_log2, m_use, alpha, noise_at, edge);
          mbar_arrive(&empty_n[c]);
        }
        st.exp_sum<kCols / 8, true>(s, scale_log2, m_use, alpha);
      } else { // the scale folded into the exponent (p.scale > 0)
        mask_scores<WL, kCols / 8, false>(s, p, row_base, j0, edge, scale_log2, t);
        st.update_raw<kCols / 8>(s, scale_log2, alpha);
      }
    };
    // Block n's exponentials (s, after softmax_block) into the tile cache where it keeps them.
    auto cache_block = [&](int n) {
      if constexpr (Cache::kOn)
        if (cache.in_band(tile.qb, n))
          cache.template store<kCols>(cache.tile((long)tile.b * p.H + tile.h, tile.qb, n), s, st,
                                      c * 64 + warp * 16 + g, t);
    };
    // kEarlyRescale: the O rescale by the last softmax's factors runs after the next S GEMM is
    // issued, before the P·V that accumulates into O, under the S GEMM instead of between the
    // P·V wait and the next issue (FlashAttention-3's order); else right after the P·V wait.
    auto rescale_and_pack = [&](const float(&alpha)[2]) {
      if constexpr (!C::kEarlyRescale) frag_scale_rows(o, alpha);
      frag_pack_a<kCols / 8, BF16>(pa, s);
    };
    auto issue_pv = [&](int stage, const float(&alpha)[2]) {
      if constexpr (C::kEarlyRescale) {
        frag_scale_rows(o, alpha);
        wgmma_fence(); // o written by the multiplies, read by the wgmma
      }
      wgmma_pv_issue<D, kCols, BF16>(o, pa, sv0 + stage * kCols * kDs);
    };
    auto pass_turn = [&]() { named_arrive(kWsSchedBar + next_c, 256); };
    // A block past my rows' diagonal: my turn passes on at once (the consumers' turns stay in
    // step), and my arrivals on its stage's empty barriers follow the stage's K and V, which the
    // producer loads only after the stage's previous use was released, so the arrivals count
    // for this use and not the last one.
    auto skip_block = [&](uint32_t cur) {
      const uint32_t stage = cur % NST;
      named_sync(kWsSchedBar + c, 256);
      pass_turn();
      mbar_wait(&full_k[stage], (cur / NST) & 1);
      mbar_arrive(&empty_k[stage]);
      mbar_wait(&full_v[stage], (cur / NST) & 1);
      mbar_arrive(&empty_v[stage]);
    };

    if (C::kOwnBlocks && my_blocks == 0) { // no rows of mine: Q is not read, every block skipped
      mbar_arrive(empty_q);
      for (int n = 0; n < nblocks; n++) skip_block(it + n);
      it += nblocks;
      continue;
    }
    float alpha[2]; // the last block's rescale factors
    {               // block 0: S_0 only
      const uint32_t stage = it % NST;
      mbar_wait(&full_k[stage], (it / NST) & 1);
      named_sync(kWsSchedBar + c, 256);
      wgmma_fence();
      wgmma_abt_issue<D, kCols, C::kRows, BF16>(s, sq, c * 64, sk0 + stage * kCols * kDs);
      wgmma_commit();
      pass_turn();
      wgmma_wait<0>();
      mbar_arrive(&empty_k[stage]);
      if (my_blocks == 1) mbar_arrive(empty_q);
      softcap_block(0, block_edge(0));
      softmax_block(0, block_edge(0), alpha);
      cache_block(0);
      rescale_and_pack(alpha);
    }
    // Block n >= 1: S_n issued beside P_{n-1}·V_{n-1}, then S_n's softmax. kEdge (a
    // std::integral_constant): whether the block may cross my diagonal or the keys' end (1),
    // not (0), or ask block_edge (kRuntimeEdge). Edge blocks are the last ones (block_edge is
    // monotone in n), so with C::kSplitEdge the steps run as two loops and the unmasked one
    // carries no mask code: with the mask's branch inside the step, ptxas puts the P·V wait at
    // the top of the softmax's basic block, before the row max.
    constexpr int kRuntimeEdge = 2;
    auto step = [&](int n, auto kEdge) {
      const bool edge = kEdge() == kRuntimeEdge ? block_edge(n) : kEdge() == 1;
      const uint32_t cur = it + n, stage = cur % NST, prev = (cur - 1) % NST;
      const uint32_t prev_phase = ((cur - 1) / NST) & 1;
      if (!kLeadPolls || lead) mbar_wait(&full_k[stage], (cur / NST) & 1);
      if (!kLeadPolls) mbar_wait(&full_v[prev], prev_phase);
      named_sync(kWsSchedBar + c, 256); // my turn to issue
      wgmma_fence();
      wgmma_abt_issue<D, kCols, C::kRows, BF16>(s, sq, c * 64, sk0 + stage * kCols * kDs);
      wgmma_commit();
      if (kLeadPolls && lead) mbar_wait(&full_v[prev], prev_phase);
      issue_pv(prev, alpha);
      wgmma_commit();
      pass_turn();
      wgmma_wait<1>(); // S_n is ready; P_{n-1}·V_{n-1} may still run
      mbar_arrive(&empty_k[stage]);
      if (n == my_blocks - 1) mbar_arrive(empty_q); // Q is no longer read: the next tile's may load
      softcap_block(n, edge);
      softmax_block(n, edge, alpha);
      cache_block(n);
      wgmma_wait<0>(); // P_{n-1}·V_{n-1} done: pa and V's stage prev are free, o is current
      mbar_arrive(&empty_v[prev]);
      rescale_and_pack(alpha);
    };
    if constexpr (C::kSplitEdge) {
      const int first_edge = min(ws_first_edge_block<kCols>(wg_row0, p), my_blocks);
      for (int n = 1; n < first_edge; n++) step(n, std::integral_constant<int, 0>());
      for (int n = max(first_edge, 1); n < my_blocks; n++)
        step(n, std::integral_constant<int, 1>());
    } else {
      for (int n = 1; n < my_blocks; n++) step(n, std::integral_constant<int, kRuntimeEdge>());
    }
    { // the last block's P·V
      const uint32_t cur = it + my_blocks - 1, last = cur % NST;
      mbar_wait(&full_v[last], (cur / NST) & 1);
      wgmma_fence();
      issue_pv(last, alpha);
      wgmma_commit();
      for (int n = my_blocks; n < nblocks; n++) skip_block(it + n);
      wgmma_wait<0>();
      mbar_arrive(&empty_v[last]);
    }
    it += nblocks;

    st.finish();
    store_rows<D, WL, BF16>(o, st, p, row_base, tile.b, tile.h, t);
    if constexpr (kNoise) st_kf.store(st, p, (long)tile.b * p.H + tile.h, row_base, t);
  }
  // The last consumer passed the turn after its last GEMM; consumer 0 takes it, so no barrier
  // is left half-arrived when the CTA exits.
  if (c == 0) named_sync(kWsSchedBar, 256);
#else
  __trap(); // built without sm_90a: the dispatcher never launches this
#endif
}

} // namespace fused
