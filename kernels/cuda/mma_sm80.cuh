// Warp-level building blocks of the sm_80 path: cp.async tile loads into XOR-swizzled shared
// memory, ldmatrix fragment loads and the m16n8k16 fp16 tensor-core MMA (fp32 accumulate).
// The same instructions run on Hopper, which is how the sm_80 path is checked without an A100.
#pragma once
#include "smem_addr.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace fused {

// Shared-memory tiles hold rows of D halves as 16-byte chunks; chunk c of row r is stored at
// chunk position c ^ (r & 7), so the 8 rows that one ldmatrix phase reads hit 8 different bank
// groups instead of one. D = 32 (4 chunks, two rows per 128 bytes; the selected-block kernel):
// c ^ ((r >> 1) & 3), the same 8 distinct groups. D = 96 (12 chunks, 192-byte rows): the first
// 8 chunks as D = 64's, the last 4 as D = 32's among themselves; rows r and r + 1 then sit 4
// groups apart, so either rule still gives 8 rows 8 distinct groups.
template <int D> __device__ __forceinline__ int swz(int row, int chunk) {
  static_assert(D == 32 || D == 96 || D % 64 == 0, "swz: rows of 32, 96 or a multiple of 64");
  if constexpr (D == 32)
    return row * D + ((chunk ^ ((row >> 1) & 3)) << 3);
  else if constexpr (D == 96)
    return row * D + ((chunk < 8 ? chunk ^ (row & 7) : 8 + ((chunk - 8) ^ ((row >> 1) & 3))) << 3);
  else
    return row * D + ((chunk ^ (row & 7)) << 3);
}

// 16-byte global->shared copy; when !valid the destination is zero-filled (src-size 0).
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, bool valid) {
  int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(smem)), "l"(gmem),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n"); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Copy rows [row0, row0 + ROWS) of a [rows, D] fp16 matrix whose consecutive rows are
// row_stride halves apart into a swizzled ROWS x D tile. Rows >= nrows are zero-filled.
template <int ROWS, int D, int NTHREADS>
__device__ __forceinline__ void load_tile_async(half *tile, const half *base, long row_stride,
                                                int row0, int nrows) {
  constexpr int CHUNKS = D / 8;
  constexpr int TOTAL = ROWS * CHUNKS;
#pragma unroll
  for (int i = threadIdx.x; i < TOTAL; i += NTHREADS) {
    int r = i / CHUNKS, c = i % CHUNKS;
    int gr = row0 + r;
    bool valid = gr < nrows;
    const half *src = base + (long)(valid ? gr : 0) * row_stride + c * 8;
    cp_async16(tile + swz<D>(r, c), src, valid);
  }
}

// 4-byte copy (float tiles whose rows are not 16-byte aligned).
__device__ __forceinline__ void cp_async4(void *smem, const void *gmem) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_u32(smem)), "l"(gmem));
}
// 8-byte copy (double elements one by one).
__device__ __forceinline__ void cp_async8(void *smem, const void *gmem) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(smem_u32(smem)), "l"(gmem));
}

// Copy a ROWS x COLS fp32 tile (rows row0.., columns col0.. of a matrix with ld floats per
// row) into shared memory with PITCH floats per row. Rows >= nrows and columns >= ncols read
// a clamped in-range element instead (their values must be masked by the caller) so no
// garbage such as log(0) can reach the arithmetic. vec4: ld, col0 and the base are multiples
// of 4 floats, so 16-byte copies are legal.
template <int ROWS, int COLS, int PITCH, int NTHREADS>
__device__ __forceinline__ void load_ftile_async(float *tile, const float *base, long ld, int row0,
                                                 int nrows, int col0, int ncols, bool vec4) {
  if (vec4) {
    constexpr int CHUNKS = COLS / 4;
#pragma unroll
    for (int i = threadIdx.x; i < ROWS * CHUNKS; i += NTHREADS) {
      int r = i / CHUNKS, c = i % CHUNKS;
      int gr = min(row0 + r, nrows - 1), gc = col0 + c * 4;
      if (gc >= ncols) gc = 0;
      cp_async16(tile + r * PITCH + c * 4, base + gr * ld + gc, true);
    }
  } else {
#pragma unroll 4
    for (int i = threadIdx.x; i < ROWS * COLS; i += NTHREADS) {
      int r = i / COLS, c = i % COLS;
      int gr = min(row0 + r, nrows - 1), gc = min(col0 + c, ncols - 1);
      cp_async4(tile + r * PITCH + c, base + gr * ld + gc);
    }
  }
}

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// log2 without the denormal-input fix-up __log2f adds (a compare and two selects): for
// KeyFormer's noise, r >= 1 (or 0 where TMA fills past the end, read only under the mask).
__device__ __forceinline__ float fast_log2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float fast_tanh(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const half *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const half *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}

// c += a * b for one 16x8x16 tile. Fragment layouts (g = lane / 4, t = lane % 4):
//   a: {row g, k 2t..2t+1}, {row g+8, k 2t..}, {row g, k 2t+8..}, {row g+8, k 2t+8..}
//   b: {k 2t..2t+1, col g}, {k 2t+8.., col g}
//   c: {row g, col 2t}, {row g, col 2t+1}, {row g+8, col 2t}, {row g+8, col 2t+1}
__device__ __forceinline__ void mma16816(float c[4], const uint32_t a[4], uint32_t b0,
                                         uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
               "{%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The same with bfloat16 a and b fragments (the GEMM's bf16 path).
__device__ __forceinline__ void mma16816_bf16(float c[4], const uint32_t a[4], uint32_t b0,
                                              uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
               "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The fused kernels' element type as a flag: BF16 bfloat16 operands, else fp16 (their
// tiles are 16-bit either way: copies and ldmatrix do not care).
template <bool BF16>
__device__ __forceinline__ void mma16816_of(float c[4], const uint32_t a[4], uint32_t b0,
                                            uint32_t b1) {
  if constexpr (BF16)
    mma16816_bf16(c, a, b0, b1);
  else
    mma16816(c, a, b0, b1);
}
// Two floats as a packed pair of the element type (round to nearest).
template <bool BF16> __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (BF16) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
  } else {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
  }
}

// A fragments of a warp's 16 rows (tile rows row0..row0+15) for every 16-wide k chunk of D.
template <int D>
__device__ __forceinline__ void load_a_frags(uint32_t a[D / 16][4], const half *tile, int row0) {
  int lane = threadIdx.x & 31;
#pragma unroll
  for (int kk = 0; kk < D / 16; kk++)
    ldmatrix_x4(a[kk], tile + swz<D>(row0 + (lane & 15), kk * 2 + (lane >> 4)));
}

// acc[n-tile][4] = A (16 x D, in registers) * B^T, B an N x D swizzled tile in shared memory.
template <int D, int N, bool BF16 = false>
__device__ __forceinline__ void gemm_abt(float acc[N / 8][4], const uint32_t a[D / 16][4],
                                         const half *btile) {
  int lane = threadIdx.x & 31;
#pragma unroll
  for (int nt = 0; nt < N / 8; nt++)
#pragma unroll
    for (int e = 0; e < 4; e++) acc[nt][e] = 0.f;
#pragma unroll
  for (int np = 0; np < N / 16; np++) {
    int row = np * 16 + (lane & 7) + ((lane >> 4) << 3);
#pragma unroll
    for (int kk = 0; kk < D / 16; kk++) {
      uint32_t b[4];
      ldmatrix_x4(b, btile + swz<D>(row, kk * 2 + ((lane >> 3) & 1)));
      mma16816_of<BF16>(acc[2 * np], a[kk], b[0], b[1]);
      mma16816_of<BF16>(acc[2 * np + 1], a[kk], b[2], b[3]);
    }
  }
}

// o[d-tile][4] += P (16 x N, fp32 accumulators converted to fp16 / bf16 A fragments) * V (N x D
// tile).
template <int D, int N, bool BF16 = false>
__device__ __forceinline__ void gemm_pv(float o[D / 8][4], const float p[N / 8][4],
                                        const half *vtile) {
  int lane = threadIdx.x & 31;
#pragma unroll
  for (int kk = 0; kk < N / 16; kk++) {
    uint32_t a[4];
    a[0] = pack2<BF16>(p[2 * kk][0], p[2 * kk][1]);
    a[1] = pack2<BF16>(p[2 * kk][2], p[2 * kk][3]);
    a[2] = pack2<BF16>(p[2 * kk + 1][0], p[2 * kk + 1][1]);
    a[3] = pack2<BF16>(p[2 * kk + 1][2], p[2 * kk + 1][3]);
    int row = kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3);
#pragma unroll
    for (int dp = 0; dp < D / 16; dp++) {
      uint32_t b[4];
      ldmatrix_x4_trans(b, vtile + swz<D>(row, dp * 2 + (lane >> 4)));
      mma16816_of<BF16>(o[2 * dp], a, b[0], b[1]);
      mma16816_of<BF16>(o[2 * dp + 1], a, b[2], b[3]);
    }
  }
}

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffff, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffff, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffff, x, 1);
  return x + __shfl_xor_sync(0xffffffff, x, 2);
}

} // namespace fused
