// The Hopper kernels' tiling per head dim and workload: the forward's WsCfg, the column pass's
// ColWsCfg, which workloads each serves, and their TMA descriptors. Each choice is a same-run
// measurement in PERF-fused.md.
#pragma once
#include "gemm_sm90.cuh"

#include <cuda.h> // CUtensorMap (the maps are encoded on the host, fused_launch.cuh)

namespace fused {

constexpr int kWsCols = 128; // keys per forward stage (WsCfg::kCols: 80 at D = 256, kf 64, COLS_)

// The forward: NC_ consumer warpgroups of 64 query rows (3 only where ws_wide_serves, picked by
// fused_launch.cuh's ws_fwd_rows), COLS_ keys per stage where the dispatcher picks them
// (ws_cols_unmasked: 176 at D = 128 without a mask), else kCols below.
template <int D, int WL, int NC_ = 2, int COLS_ = 0> struct WsCfg {
  static_assert(D == 64 || D == 96 || D == 128 || D == 256, "WsCfg: a head dim the kernel has");
  static constexpr bool kNoise = wl_traits<WL>::keyformer;
  static constexpr int NC = NC_;
  static constexpr int kDs = smem_dim<D>(); // a row's halves in shared memory (D = 96: 128)
  // D = 256: 80-key stages fit Q, two stages and O's 128 accumulators; kf's noise leaves 64.
  static constexpr int kCols = COLS_ ? COLS_ : D <= 128 ? kWsCols : kNoise ? 64 : 80;
  static_assert(kCols % 16 == 0, "a key block is whole k-steps of P·V");
  static constexpr int kRows = 64 * NC;
  static constexpr int kThreads = 128 * (NC + 1);
  // K and V are released apart, so two stages let the next K load under the last P·V (and
  // leave D = 128 64 KiB free); D = 96 takes three, D = 64 four; kf's noise tiles take the room
  // of a third.
  static constexpr int kStages = D == 64 ? 4 : D == 96 && !kNoise ? 3 : 2;
  // The warpgroup index and the claimed tile broadcast from lane 0: ptxas then builds the
  // wgmma descriptors in uniform registers (faster at D > 64 and for gemma2, slower otherwise).
  static constexpr bool kUniformIndex = D > 64 || wl_traits<WL>::softcap;
  // The key blocks before a consumer's first edge block run in a loop without mask code (it
  // pays at D = 128; kf and D = 64 are slower with it). With it O is rescaled after the P·V
  // wait (FlashAttention-3's order); kf at D > 64 rescales early, under the next S GEMM.
  static constexpr bool kSplitEdge = D > 64 && !kNoise;
  static constexpr bool kEarlyRescale = D > 64 && !kSplitEdge;
  // Each consumer computes only its own rows' key blocks. 192-row tiles only: in 128-row ones
  // both consumers need the same blocks when Lq = Lkv (the only waste is a consumer with no
  // rows, at Lq % 128 in 1..64), and the branch slows ptxas's code.
  static constexpr bool kOwnBlocks = NC > 2;
  static_assert(!kOwnBlocks || !kNoise, "kf's noise tiles: the skip does not release them");
  // setmaxnreg: the sum over the 128-thread warpgroups stays within the SM's 64 K registers.
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
// plain forward only (gemma2's softcap spills, kf's noise tiles need the shared memory).
template <int D, int WL> __host__ __device__ constexpr bool ws_wide_serves() {
  return D == 64 && !wl_traits<WL>::softcap && !wl_traits<WL>::keyformer &&
         !wl_traits<WL>::column_pass && !wl_traits<WL>::selected_blocks;
}

// TMA descriptors of q, k, v as 4-D tensors {D, H, L, B} (k, v: H = Hkv; boxes {64, 1, rows,
// 1}); kf's noise as a 3-D tensor {Lkv, Lq, B*H} (boxes {kSw128Floats, 64, 1}).
struct WsMaps {
  CUtensorMap q, k, v, noise;
};

constexpr int kCwsKeys = 128; // keys per column tile (64 per consumer)
constexpr int kCwsThreads = 384;

// The column pass: QN queries per step. An aux input (kf's noise, corm's mask) takes a
// QN x kCwsKeys fp32 tile per stage, so 64-query steps keep four stages (128-query steps are
// faster where they fit). At D = 256 a consumer's K fragments take 64 registers: 64-query
// score buffers, and two stages with an aux input. DRAW: the aux input is not staged, so no aux
// tile (kf's noise drawn by the consumers; corm's thresholds in the LSE, corm_rows.cuh).
template <int WL, int D, bool DRAW = false> struct ColWsCfg {
  static constexpr bool kAux = has_aux<WL>() && !DRAW;
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
// The workloads the column pass serves: every column statistic.
template <int WL> __host__ __device__ constexpr bool col_ws_serves() { return needs_lse<WL>(); }

// TMA descriptors: q and k as in WsMaps (boxes of QN and kCwsKeys rows), the row LSE as a 2-D
// fp32 tensor {Lq, B*H} (boxes of QN), the aux input as a 3-D fp32 tensor {Lkv, Lq, B*H} (kf)
// or {Lkv, Lq, 1} (corm's one mask for all heads), boxes {kSw128Floats, QN, 1}.
struct ColWsMaps {
  CUtensorMap q, k, lse, aux;
};

} // namespace fused
