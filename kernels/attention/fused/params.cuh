// What every dense fused kernel takes: a cell's parameters (Params), `fused`'s tile cache
// policy (NoTileCache) and the workload predicates the kernels test (features, never names:
// workload.h's wl_traits).
//
// Every forward and column pass takes a tile cache policy (`Cache`): NoTileCache for `fused`,
// whose hooks compile to nothing; fused-diag's DiagCache (fused_diag/diag_cache.cuh), which has
// the forward store the exponentials of the score tiles near the diagonal and the column pass
// read them instead of recomputing those tiles.
#pragma once
#include "attn_system.h"
#include "gpu_util.cuh"
#include "mma_sm80.cuh"

#include <math_constants.h>

namespace fused {

struct Params {
  const half *q, *k, *v;
  half *out;
  const float *exp_rand;  // kf: [B, H, Lq, Lkv]
  const float *corm_mask; // corm: [Lq, Lkv]
  float *lse;             // [B, H, Lq], log2 domain
  float *lse_kf;          // [B, H, Lq], log2 domain (kf)
  float *col;             // [B, H, Lkv]
  float *col2;            // [B, H, Lkv] (roco)
  uint8_t *flags;         // [B, H, Lkv] (corm)
  int B, H, Lq, Lkv;
  int Hkv, hpg;       // K/V heads; query heads per K/V head (GQA: query head h reads h / hpg)
  int offset;         // Lkv - Lq: (i, j) is masked when j > i + offset
  float scale;        // 1 / sqrt(D)
  long row_stride;    // H * D: halves between consecutive tokens of one head of q and out
  long kv_row_stride; // Hkv * D: the same for k and v
  int noise_drawn;    // kf on the Hopper kernels: the noise is kf_draw.h's draw of `noise`, drawn
  kf_draw noise;      // where it is read (exp_rand unused)
  // corm's Hopper column pass (corm_rows.cuh; nullptr for the other workloads): each row's threshold
  // [Lq], the count of rows whose mask varies along their live keys, the LSE moved by log2 of
  // the threshold [B, H, Lq]
  float *corm_thr;
  int *corm_varied;
  float *lse_rows;
};

// The tile cache policy of `fused`: no tile is cached (kOn false: the kernels' cache code is
// compiled out).
struct NoTileCache {
  static constexpr bool kOn = false;
  __device__ bool in_band(int, int) const { return false; }
};

constexpr float kLog2e = 1.4426950408889634f;

// The column-score workloads: the forward writes the row LSE their column pass subtracts.
template <int WL> __host__ __device__ constexpr bool needs_lse() {
  return wl_traits<WL>::column_pass;
}
// Workloads whose column pass reads an fp32 S×S input (kf's noise, corm's mask).
template <int WL> __host__ __device__ constexpr bool has_aux() {
  return wl_traits<WL>::keyformer || wl_traits<WL>::any_ge_mask;
}

} // namespace fused
