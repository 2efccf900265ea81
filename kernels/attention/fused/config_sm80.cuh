// The sm_80 kernels' tiling (fwd_sm80.cuh, col_sm80.cuh): four warps of 16 rows, 64-wide steps,
// the padded pitches of the fp32 tiles they stage, and their shared memory.
#pragma once
#include "params.cuh"

namespace fused {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kRows = kWarps * 16; // query rows per attn_fwd CTA, key rows per attn_col CTA
constexpr int kCols = 64;          // key columns per attn_fwd step, query columns per attn_col step
constexpr int kFwdAuxPitch = kCols + 8; // floats; float2 reads of a half-warp hit distinct banks
constexpr int kColAuxPitch = kRows + 4; // floats; scalar reads of a warp hit distinct banks

template <int D, int WL> constexpr int fwd_smem_bytes() {
  return (kRows + 2 * kCols) * D * (int)sizeof(half) +
         (wl_traits<WL>::keyformer ? kRows * kFwdAuxPitch * (int)sizeof(float) : 0);
}
template <int D, int WL> constexpr int col_smem_bytes() {
  return (kRows + 2 * kCols) * D * (int)sizeof(half) +
         (has_aux<WL>() ? 2 * kCols * kColAuxPitch * (int)sizeof(float) : 0);
}

} // namespace fused
