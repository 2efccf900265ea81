// The Hopper kernels' shared-memory layout and products on top of kernels/cuda/wgmma_sm90.cuh:
// the 128-byte swizzle of shared-memory tiles (fp16/bf16 for Q, K and V; fp32 for kf's noise
// and corm's mask), and the two wgmma products of the forward (mainloop_ws90.cuh), issued and
// left in flight: S = A·Bᵀ with both operands from shared memory and O += P·V with P from
// registers and V read transposed.
#pragma once
#include "params.cuh"
#include "wgmma_sm90.cuh"

namespace fused {

constexpr int k90Align = 1024; // 128B-swizzle atoms must start 1024-byte aligned

// The 64-column slabs a D-wide tile takes in shared memory, and their width in halves: D = 96
// takes two slabs, the second half filled (TMA writes zeros past the tensor's D columns, so
// the padding reads as zeros and the products over D columns never touch it).
template <int D> constexpr int slabs() { return (D + 63) / 64; }
template <int D> constexpr int smem_dim() { return slabs<D>() * 64; }

// A [ROWS, D] fp16 tile as wgmma's 128B-swizzled K-major (or, for V, MN-major) layout: D is cut
// into 64-element slices of ROWS x 128 bytes; within a slice row r's 16-byte chunk c sits at
// chunk c ^ (r & 7). Offset in halves.
template <int ROWS> __device__ __forceinline__ int sw128(int row, int chunk) {
  return (chunk >> 3) * ROWS * 64 + row * 64 + (((chunk & 7) ^ (row & 7)) << 3);
}
// The same swizzle for fp32 (kf's noise, corm's mask, loaded by TMA in boxes one 128-byte row
// wide): element (row, col) of a box of kSw128Floats columns, offset in floats.
constexpr int kSw128Floats = 32;
__device__ __forceinline__ int sw128_f32(int row, int col) {
  return row * kSw128Floats + ((((col >> 2) ^ (row & 7))) << 2) + (col & 3);
}

template <int N, bool BF16 = false>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 8][4], uint64_t a, uint64_t b,
                                         int scale_d) {
  static_assert(N == 64 || N == 80 || N == 128 || N == 176, "wgmma_ss: a key block");
  if constexpr (N == 64)
    wgmma_m64n64k16_ss<BF16>(d, a, b, scale_d);
  else if constexpr (N == 80)
    wgmma_m64n80k16_ss<BF16>(d, a, b, scale_d);
  else if constexpr (N == 176)
    wgmma_m64n176k16_ss<BF16>(d, a, b, scale_d);
  else
    wgmma_m64n128k16_ss<BF16>(d, a, b, scale_d);
}
// d += A (registers) * B (smem desc, MN-major: transposed), N a head dim.
template <int N, bool BF16 = false>
__device__ __forceinline__ void wgmma_rs_tb(float (&d)[N / 8][4], const uint32_t (&a)[4],
                                            uint64_t b) {
  static_assert(N == 64 || N == 96 || N == 128 || N == 256, "wgmma_rs_tb: a head dim");
  if constexpr (N == 64)
    wgmma_m64n64k16_rs<1, BF16>(d, a, b, 1);
  else if constexpr (N == 96)
    wgmma_m64n96k16_rs<1, BF16>(d, a, b, 1);
  else if constexpr (N == 128)
    wgmma_m64n128k16_rs<1, BF16>(d, a, b, 1);
  else
    wgmma_m64n256k16_rs<1, BF16>(d, a, b, 1);
}

// acc (=) A·Bᵀ issued, not waited: A rows a_row0 .. +63 of an A_ROWS-row sw128 tile, B an N-row
// sw128 tile, both D wide.
template <int D, int N, int A_ROWS, bool BF16 = false>
__device__ __forceinline__ void wgmma_abt_issue(float (&acc)[N / 8][4], const half *a_tile,
                                                int a_row0, const half *b_tile) {
  const uint64_t da0 = sw128_desc(a_tile + a_row0 * 64, 16, 1024),
                 db0 = sw128_desc(b_tile, 16, 1024);
#pragma unroll
  for (int kk = 0; kk < D / 16; kk++) { // 64-column slabs of the tiles, 16 columns a step
    const uint32_t a_off = ((kk >> 2) * A_ROWS * 64 + (kk & 3) * 16) * sizeof(half);
    const uint32_t b_off = ((kk >> 2) * N * 64 + (kk & 3) * 16) * sizeof(half);
    wgmma_ss<N, BF16>(acc, desc_advance(da0, a_off), desc_advance(db0, b_off), kk > 0);
  }
}

// O (+)= P·V issued, not waited: P (this warpgroup's 64 rows x N keys) as mma.sync A fragments
// in registers, V an N-row sw128 tile of D columns read MN-major (transposed B): the leading
// offset steps to the next 64 head-dim columns (one N·128-byte slab on), the stride offset to
// the next 8 keys (1024 bytes on). At D = 96 the product reads the second slab's first 32
// columns only. Checked on an H200: the swapped assignment gives rel_l2 ~ 1.
template <int D, int N, bool BF16 = false>
__device__ __forceinline__ void
wgmma_pv_issue(float (&o)[D / 8][4], const uint32_t (&pa)[N / 16][4], const half *v_tile) {
  const uint64_t dv = sw128_desc(v_tile, N * 128, 1024);
#pragma unroll
  for (int kk = 0; kk < N / 16; kk++) // 16 keys a step
    wgmma_rs_tb<D, BF16>(o, pa[kk], desc_advance(dv, kk * 16 * 64 * (int)sizeof(half)));
}

} // namespace fused
