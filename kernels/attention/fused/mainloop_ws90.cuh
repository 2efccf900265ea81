// The Hopper forward's mainloop (attn_fwd_ws90, fwd_ws90.cuh): its shared memory, the
// producer's loads of a tile and a consumer's steps over the tile's key blocks. Everything here
// is inlined into the kernel; the order of the waits, issues and arrives is the schedule
// PERF-fused.md measured, so keep it.
#pragma once
#include "epilogue.cuh"
#include "mask.cuh"
#include "pipeline.cuh"

namespace fused {

// Shared memory: the tile's Q, the K and V rings, kf's noise tiles (one per consumer), the
// barriers and the producer's claim.
template <typename C> struct WsFwdSmem {
  static constexpr int NST = C::kStages, NC = C::NC;
  half *sq, *sk0, *sv0;
  float *snoise0;
  uint64_t *full_q, *empty_q; // Q: every consumer thread arrives once its last S GEMM is done
  Ring<NST> k, v;             // K released once a block's S GEMM is done, V once its P·V is
  uint64_t *full_n, *empty_n; // kf's noise tile of each consumer
  int *tile_slot;
  __device__ __forceinline__ explicit WsFwdSmem(unsigned char *raw) {
    constexpr int kRows = C::kRows, kCols = C::kCols, kDs = C::kDs;
    sq = reinterpret_cast<half *>((reinterpret_cast<uintptr_t>(raw) + k90Align - 1) &
                                  ~(uintptr_t)(k90Align - 1));
    sk0 = sq + kRows * kDs;
    sv0 = sk0 + NST * kCols * kDs;
    snoise0 = reinterpret_cast<float *>(sv0 + NST * kCols * kDs);
    full_q = reinterpret_cast<uint64_t *>(snoise0 + NC * C::kNoiseFloats);
    empty_q = full_q + 1;
    k.full = empty_q + 1, v.full = k.full + NST;
    k.empty = v.full + NST, v.empty = k.empty + NST;
    full_n = v.empty + NST, empty_n = full_n + (C::kNoise ? NC : 0);
    tile_slot = reinterpret_cast<int *>(empty_n + (C::kNoise ? NC : 0));
  }
  // Thread 0, before the block's one barrier. Every consumer thread arrives once per use on Q's,
  // K's and V's empty barriers; a noise tile's consumer's 128 threads once per block.
  __device__ __forceinline__ void init_barriers() const {
    mbar_init(full_q, 1);
    mbar_init(empty_q, NC * 128);
    for (int s = 0; s < NST; s++) {
      mbar_init(&k.full[s], 1);
      mbar_init(&v.full[s], 1);
      mbar_init(&k.empty[s], NC * 128);
      mbar_init(&v.empty[s], NC * 128);
    }
    for (int cc = 0; C::kNoise && cc < NC; cc++) {
      mbar_init(&full_n[cc], 1);
      mbar_init(&empty_n[cc], 128);
    }
    mbar_fence_init();
  }
};

// The producer thread: per tile its Q, then per key block K, V and kf's noise tiles, each as
// soon as the consumers have released its stage. The rings run on across tiles (`it`).
template <int D, int WL, int NC_, int COLS_, bool DRAW> struct WsFwdProducer {
  using C = WsCfg<D, WL, NC_, COLS_>;
  static constexpr int NST = C::kStages, kRows = C::kRows, kCols = C::kCols, kDs = C::kDs;
  // TMA writes whole boxes (the padding of D = 96 too), and counts their bytes.
  static constexpr uint32_t kStageBytes = kCols * kDs * (uint32_t)sizeof(half);
  const WsMaps &maps;
  const Params &p;
  const WsFwdSmem<C> &sm;
  const int chunk;
  uint32_t it = 0;
  const uint64_t stream_policy; // kf's noise: read once

  __device__ __forceinline__ WsFwdProducer(const WsMaps &maps_, const Params &p_,
                                           const WsFwdSmem<C> &sm_, int chunk_)
      : maps(maps_), p(p_), sm(sm_), chunk(chunk_),
        stream_policy(C::kNoise ? l2_evict_first_policy() : 0) {}

  __device__ __forceinline__ void operator()(int t) { // tile t's loads
    const WsTile tile = ws_tile<kRows>(t, p, chunk);
    const int nblocks = key_blocks_upto<kCols>((tile.qb + 1) * kRows, p);
    const int kv_head = tile.h / p.hpg; // GQA: the group's K/V head
    mbar_expect_tx(sm.full_q, kRows * kDs * (uint32_t)sizeof(half));
    for (int sl = 0; sl < slabs<D>(); sl++)
      tma_load_4d(sm.sq + sl * kRows * 64, &maps.q, sm.full_q, sl * 64, tile.h, tile.qb * kRows,
                  tile.b);
    for (int n = 0; n < nblocks; n++, it++) {
      load_kv(kv_head, n, tile.b);
      load_noise(tile, n);
    }
  }
  // Block n's K and V into stage it % NST, each once the consumers have released it.
  __device__ __forceinline__ void load_kv(int kv_head, int n, int b) const {
    const uint32_t st = it % NST;
    const uint32_t free_phase = ((it / NST) & 1) ^ 1; // the first round passes at once
    half *sk = sm.sk0 + st * kCols * kDs, *sv = sm.sv0 + st * kCols * kDs;
    mbar_wait(&sm.k.empty[st], free_phase);
    mbar_expect_tx(&sm.k.full[st], kStageBytes);
    for (int sl = 0; sl < slabs<D>(); sl++)
      tma_load_4d(sk + sl * kCols * 64, &maps.k, &sm.k.full[st], sl * 64, kv_head, n * kCols, b);
    mbar_wait(&sm.v.empty[st], free_phase);
    mbar_expect_tx(&sm.v.full[st], kStageBytes);
    for (int sl = 0; sl < slabs<D>(); sl++)
      tma_load_4d(sv + sl * kCols * 64, &maps.v, &sm.v.full[st], sl * 64, kv_head, n * kCols, b);
  }
  // kf: each consumer's noise tile of block n, as soon as it is done with block n - 1's (none
  // where the consumers draw the noise).
  __device__ __forceinline__ void load_noise(const WsTile &tile, int n) const {
    constexpr int kNoiseFloats = C::kNoiseFloats;
    for (int cc = 0; C::kNoise && !DRAW && cc < C::NC; cc++) {
      float *sn = sm.snoise0 + cc * kNoiseFloats;
      mbar_wait(&sm.empty_n[cc], (it & 1) ^ 1);
      mbar_expect_tx(&sm.full_n[cc], kNoiseFloats * (uint32_t)sizeof(float));
      for (int kb = 0; kb < kCols / kSw128Floats; kb++)
        tma_load_3d_hint(sn + kb * 64 * kSw128Floats, &maps.noise, &sm.full_n[cc],
                         n * kCols + kb * kSw128Floats, tile.qb * kRows + cc * 64,
                         tile.b * p.H + tile.h, stream_policy);
    }
  }
};

// A consumer warpgroup's steps over one tile's key blocks (its 64 query rows): per block n it
// issues S_n = Q·K_nᵀ and O += P_{n-1}·V_{n-1} in its turn, then runs S_n's softmax under that
// P·V. It stands in for per-tile lambdas: the consumer's registers, counters and constants
// are ws_fwd_consumer's (fwd_ws90.cuh), held by reference (so ptxas gets the code it was tuned
// on: PERF-fused.md), the tile's coordinates by value.
template <int D, int WL, bool BF16, int NC_, typename Cache, int COLS_, bool DRAW, typename NoiseAt,
          typename NoiseDrawn>
struct WsFwdTile {
  using C = WsCfg<D, WL, NC_, COLS_>;
  static constexpr int NST = C::kStages, NC = C::NC, kCols = C::kCols, kDs = C::kDs;
  static constexpr bool kNoise = C::kNoise, kDraw = kNoise && DRAW;
  // Gemma2's softcap on the raw-score path: tanh of every score first (MUFU.TANH, masked
  // -inf), cap·log2 e in the exponent's FFMA.
  static constexpr bool kRawSoftcap = wl_traits<WL>::softcap;
  static_assert(!(kRawSoftcap && kNoise), "softmax_block: the softcap path has no noise");
  // With two consumers at D <= 128 only the first (lead) polls a block's K and V full barriers
  // in the loop (FlashAttention-3's scheme), V after it has issued S; the second issues after
  // the lead passes it the turn, which follows its waits (bar.arrive synchronizes with the
  // bar.sync it releases). Elsewhere each consumer waits for both before its turn (at D = 256
  // the lead's scheme is slower: PERF-fused.md v37).
  static constexpr bool kLeadPolls = NC == 2 && D <= 128;
  static constexpr int kRuntimeEdge = 2; // step's kEdge: ask block_edge

  float (&s)[kCols / 8][4];
  float (&o)[D / 8][4];
  uint32_t (&pa)[kCols / 16][4];
  RowState &st;
  KfRowSum &st_kf;
  const Params &p;
  const int row_base, wg_row0; // this thread's rows row_base, row_base + 8; the warpgroup's first
  const float &scale_log2;
  const ConsumerThread &th;
  const WsTile tile;
  const Cache &cache;
  uint32_t &it; // the consumer's blocks so far: the rings' counter
  const WsFwdSmem<C> &sm;
  const int &next_c; // whose turn follows mine
  const bool &lead;
  const int my_blocks, nblocks; // mine (C::kOwnBlocks) and the tile's (the producer loads them)
  NoiseAt &noise_at;
  NoiseDrawn &noise_drawn_at;

  // The tile's key blocks: block 0, the steps, the last P·V.
  __device__ __forceinline__ void mma() {
    float alpha[2]; // the last block's rescale factors
    first_block(alpha);
    // Edge blocks are the last ones, so with C::kSplitEdge the steps run as two loops and the
    // unmasked one carries no mask code: with the mask's branch inside the step, ptxas puts the
    // P·V wait at the top of the softmax's basic block, before the row max.
    if constexpr (C::kSplitEdge) {
      const int first_edge = min(first_edge_block<kCols>(wg_row0, p), my_blocks);
      for (int n = 1; n < first_edge; n++) step<0>(n, alpha);
      for (int n = max(first_edge, 1); n < my_blocks; n++) step<1>(n, alpha);
    } else {
      for (int n = 1; n < my_blocks; n++) step<kRuntimeEdge>(n, alpha);
    }
    last_pv(alpha);
  }

  // The tile's epilogue: out and the row LSE (kf: its lse_kf too).
  __device__ __forceinline__ void store() {
    st.finish();
    store_rows<D, WL, BF16>(o, st, p, row_base, tile.b, tile.h, th.t);
    if constexpr (kNoise) store_kf_lse(st_kf, st, p, (long)tile.b * p.H + tile.h, row_base, th.t);
  }

  // Block 0: S_0 only.
  __device__ __forceinline__ void first_block(float (&alpha)[2]) {
    const uint32_t stage = it % NST;
    mbar_wait(&sm.k.full[stage], (it / NST) & 1);
    wait_turn(th.c);
    wgmma_fence();
    wgmma_abt_issue<D, kCols, C::kRows, BF16>(s, sm.sq, th.c * 64, sm.sk0 + stage * kCols * kDs);
    wgmma_commit();
    pass_turn(next_c);
    wgmma_wait<0>();
    mbar_arrive(&sm.k.empty[stage]);
    if (my_blocks == 1) mbar_arrive(sm.empty_q);
    softcap_block(0, block_edge(0));
    softmax_block(0, block_edge(0), alpha);
    cache_block(0);
    rescale_and_pack(alpha);
  }

  // Block n >= 1: S_n issued beside P_{n-1}·V_{n-1}, then S_n's softmax. kEdge: whether the
  // block may cross my diagonal or the keys' end (1), not (0), or ask block_edge (kRuntimeEdge).
  template <int kEdge> __device__ __forceinline__ void step(int n, float (&alpha)[2]) {
    const bool edge = kEdge == kRuntimeEdge ? block_edge(n) : kEdge == 1;
    const uint32_t cur = it + n, stage = cur % NST, prev = (cur - 1) % NST;
    const uint32_t prev_phase = ((cur - 1) / NST) & 1;
    if (!kLeadPolls || lead) mbar_wait(&sm.k.full[stage], (cur / NST) & 1);
    if (!kLeadPolls) mbar_wait(&sm.v.full[prev], prev_phase);
    wait_turn(th.c); // my turn to issue
    wgmma_fence();
    wgmma_abt_issue<D, kCols, C::kRows, BF16>(s, sm.sq, th.c * 64, sm.sk0 + stage * kCols * kDs);
    wgmma_commit();
    if (kLeadPolls && lead) mbar_wait(&sm.v.full[prev], prev_phase);
    issue_pv(prev, alpha);
    wgmma_commit();
    pass_turn(next_c);
    wgmma_wait<1>(); // S_n is ready; P_{n-1}·V_{n-1} may still run
    mbar_arrive(&sm.k.empty[stage]);
    if (n == my_blocks - 1)
      mbar_arrive(sm.empty_q); // Q is no longer read: the next tile's may load
    softcap_block(n, edge);
    softmax_block(n, edge, alpha);
    cache_block(n);
    wgmma_wait<0>(); // P_{n-1}·V_{n-1} done: pa and V's stage prev are free, o is current
    mbar_arrive(&sm.v.empty[prev]);
    rescale_and_pack(alpha);
  }

  // The last block's P·V, and the blocks past my rows (C::kOwnBlocks) skipped under it.
  __device__ __forceinline__ void last_pv(const float (&alpha)[2]) {
    const uint32_t cur = it + my_blocks - 1, last = cur % NST;
    mbar_wait(&sm.v.full[last], (cur / NST) & 1);
    wgmma_fence();
    issue_pv(last, alpha);
    wgmma_commit();
    for (int n = my_blocks; n < nblocks; n++) skip_block(it + n);
    wgmma_wait<0>();
    mbar_arrive(&sm.v.empty[last]);
  }

  // A block past my rows' diagonal (C::kOwnBlocks): my turn passes on at once (the turns stay in
  // step), and my arrivals on its stage's empty barriers follow the stage's K and V, which the
  // producer loads only after the stage's previous use was released, so they count for this use.
  __device__ __forceinline__ void skip_block(uint32_t cur) {
    const uint32_t stage = cur % NST;
    wait_turn(th.c);
    pass_turn(next_c);
    mbar_wait(&sm.k.full[stage], (cur / NST) & 1);
    mbar_arrive(&sm.k.empty[stage]);
    mbar_wait(&sm.v.full[stage], (cur / NST) & 1);
    mbar_arrive(&sm.v.empty[stage]);
  }

  // Whether block n crosses this warpgroup's diagonal or the keys' end.
  __device__ __forceinline__ bool block_edge(int n) {
    return key_block_edge<kCols>(n * kCols, wg_row0, p);
  }

  // edge: block_edge(n), or a constant where the caller knows it (the split loops).
  __device__ __forceinline__ void softcap_block(int n, bool edge) {
    if constexpr (kRawSoftcap)
      softcap_scores<WL, kCols / 8>(s, p, row_base, n * kCols, edge, scale_log2, th.t);
  }

  // Block n's scores in s -> masked log2 scores -> probabilities (s) and the rescale factors.
  __device__ __forceinline__ void softmax_block(int n, bool edge, float (&alpha)[2]) {
    const int j0 = n * kCols;
    if constexpr (kRawSoftcap) { // s holds tanh(qk·scale/cap) already
      st.update_raw<kCols / 8>(s, GEMMA2_SOFTCAP * kLog2e, alpha);
    } else if constexpr (kNoise) { // the row max, kf's sum from the noise, the exponentials
      mask_scores<WL, kCols / 8, false>(s, p, row_base, j0, edge, scale_log2, th.t);
      float m_use[2];
      st.new_max<kCols / 8, true>(s, scale_log2, m_use, alpha);
      if constexpr (kDraw) {
        st_kf.add<kCols / 8, true>(s, scale_log2, m_use, alpha, noise_drawn_at(j0), edge);
      } else {
        const uint32_t cur = it + n;
        mbar_wait(&sm.full_n[th.c], cur & 1);
        st_kf.add<kCols / 8, true>(s, scale_log2, m_use, alpha, noise_at, edge);
        mbar_arrive(&sm.empty_n[th.c]);
      }
      st.exp_sum<kCols / 8, true>(s, scale_log2, m_use, alpha);
    } else { // the scale folded into the exponent (p.scale > 0)
      mask_scores<WL, kCols / 8, false>(s, p, row_base, j0, edge, scale_log2, th.t);
      st.update_raw<kCols / 8>(s, scale_log2, alpha);
    }
  }

  // Block n's exponentials (s, after softmax_block) into the tile cache where it keeps them.
  __device__ __forceinline__ void cache_block(int n) {
    if constexpr (Cache::kOn)
      if (cache.in_band(tile.qb, n))
        cache.template store<kCols>(cache.tile((long)tile.b * p.H + tile.h, tile.qb, n), s, st,
                                    th.c * 64 + th.warp * 16 + th.g, th.t);
  }

  // C::kEarlyRescale: O is rescaled by the last softmax's factors after the next S GEMM is
  // issued, before the P·V that accumulates into O, under the S GEMM; else right after the P·V
  // wait (FlashAttention-3's order).
  __device__ __forceinline__ void rescale_and_pack(const float (&alpha)[2]) {
    if constexpr (!C::kEarlyRescale) frag_scale_rows(o, alpha);
    frag_pack_a<kCols / 8, BF16>(pa, s);
  }
  __device__ __forceinline__ void issue_pv(int stage, const float (&alpha)[2]) {
    if constexpr (C::kEarlyRescale) {
      frag_scale_rows(o, alpha);
      wgmma_fence(); // o written by the multiplies, read by the wgmma
    }
    wgmma_pv_issue<D, kCols, BF16>(o, pa, sm.sv0 + stage * kCols * kDs);
  }
};

} // namespace fused
