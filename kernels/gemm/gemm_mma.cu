// gemm_mma.cu: our sm_80 GEMM (gemm_plan.h's GM_*; README.md draws it). Runs on Hopper too.
//
// One CTA per 128 x 256 tile of C (launch order: gemm_tile_of's groups, for L2 reuse), 8 warps
// as 2 (M) x 4 (N), each computing 64 x 64 with mma.sync m16n8k16 (fp32 accumulators: 4 x 8
// tiles of 16 x 8). K goes by 64 through a GM_STAGES-deep ring filled by cp.async: A's
// [128 x 64] and B's [64 x 256] tiles, rows XOR-swizzled in 16-byte chunks (swz in
// kernels/cuda/mma_sm80.cuh) so that ldmatrix reads 8 rows without bank conflicts. A
// fragments come from ldmatrix, B fragments from ldmatrix.trans (B is N-major). Chunks outside
// A or B (the M, N and K edges) are zero-filled by cp.async, and the stores are masked, so any
// M and any K, N that are multiples of 8 run.
#include "gemm_kernels.h"
#include "gemm_plan.h"

#include "cuda_check.h"
#include "mma_sm80.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

using fused::cp_async16;
using fused::swz;

struct Args {
  const half *a, *b; // 16-bit elements of either type: only the mma instruction differs
  void *c;
  int m, n, k;
  int tiles_m, tiles_n, k_blocks;
};

constexpr int kACh = GM_BK / 8; // 16-byte chunks per row of an A tile
constexpr int kBCh = GM_BN / 8; // ... of a B tile

// One k-block's A [128 x 64] and B [64 x 256] tiles into ring stage (ta, tb).
__device__ __forceinline__ void load_stage(const Args &g, half *ta, half *tb, int m0, int n0,
                                           int kb) {
  const int k0 = kb * GM_BK;
#pragma unroll
  for (int i = threadIdx.x; i < GM_BM * kACh; i += GM_THREADS) {
    const int r = i / kACh, c = i % kACh, gr = m0 + r, gk = k0 + c * 8;
    const bool ok = gr < g.m && gk < g.k;
    cp_async16(ta + swz<GM_BK>(r, c), ok ? g.a + (size_t)gr * g.k + gk : g.a, ok);
  }
#pragma unroll
  for (int i = threadIdx.x; i < GM_BK * kBCh; i += GM_THREADS) {
    const int r = i / kBCh, c = i % kBCh, gk = k0 + r, gn = n0 + c * 8;
    const bool ok = gk < g.k && gn < g.n;
    cp_async16(tb + swz<GM_BN>(r, c), ok ? g.b + (size_t)gk * g.n + gn : g.b, ok);
  }
}

template <bool BF16>
__device__ __forceinline__ void mma(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
  if constexpr (BF16)
    fused::mma16816_bf16(c, a, b0, b1);
  else
    fused::mma16816(c, a, b0, b1);
}

// acc += this warp's 64 rows of the A tile times its 64 columns of the B tile (one k-block).
template <bool BF16>
__device__ __forceinline__ void compute_stage(float (&acc)[4][8][4], const half *ta, const half *tb,
                                              int wm, int wn, int lane) {
#pragma unroll
  for (int kk = 0; kk < GM_BK / 16; kk++) {
    uint32_t af[4][4], bf[8][2];
#pragma unroll
    for (int mi = 0; mi < 4; mi++) {
      int row, chunk;
      gm_a_ldm(wm, mi, kk, lane, &row, &chunk);
      fused::ldmatrix_x4(af[mi], ta + swz<GM_BK>(row, chunk));
    }
#pragma unroll
    for (int dp = 0; dp < 4; dp++) {
      uint32_t r[4];
      int row, chunk;
      gm_b_ldm(wn, dp, kk, lane, &row, &chunk);
      fused::ldmatrix_x4_trans(r, tb + swz<GM_BN>(row, chunk));
      bf[2 * dp][0] = r[0], bf[2 * dp][1] = r[1];
      bf[2 * dp + 1][0] = r[2], bf[2 * dp + 1][1] = r[3];
    }
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
      for (int ni = 0; ni < 8; ni++) mma<BF16>(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
  }
}

template <bool BF16> __device__ __forceinline__ void store2(void *c, size_t e, float x, float y) {
  if constexpr (BF16)
    *reinterpret_cast<__nv_bfloat162 *>(static_cast<__nv_bfloat16 *>(c) + e) =
        __floats2bfloat162_rn(x, y);
  else
    *reinterpret_cast<__half2 *>(static_cast<__half *>(c) + e) = __floats2half2_rn(x, y);
}

template <bool BF16>
__global__ void __launch_bounds__(GM_THREADS, 1) gemm_mma_kernel(const Args g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(128) unsigned char gm_smem[];
  half *ring = reinterpret_cast<half *>(gm_smem);
  int mb, nb;
  gemm_tile_of(blockIdx.x, g.tiles_m, g.tiles_n, GM_GROUP_M, &mb, &nb);
  const int m0 = mb * GM_BM, n0 = nb * GM_BN;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int wm = warp >> 2, wn = warp & 3;
  float acc[4][8][4];
#pragma unroll
  for (int mi = 0; mi < 4; mi++)
#pragma unroll
    for (int ni = 0; ni < 8; ni++)
      acc[mi][ni][0] = acc[mi][ni][1] = acc[mi][ni][2] = acc[mi][ni][3] = 0.f;

  // the ring: k-blocks 0 .. S-2 in flight, then per k-block wait for the oldest, refill the
  // stage the previous k-block used (everyone is past it after the barrier), compute
  for (int s = 0; s < GM_STAGES - 1; s++) {
    if (s < g.k_blocks) load_stage(g, ring + gm_a_stage(s), ring + gm_b_stage(s), m0, n0, s);
    fused::cp_async_commit();
  }
  for (int kb = 0; kb < g.k_blocks; kb++) {
    fused::cp_async_wait<GM_STAGES - 2>(); // k-block kb has landed (one group per k-block)
    __syncthreads();
    const int next = kb + GM_STAGES - 1, ns = next % GM_STAGES, cs = kb % GM_STAGES;
    if (next < g.k_blocks)
      load_stage(g, ring + gm_a_stage(ns), ring + gm_b_stage(ns), m0, n0, next);
    fused::cp_async_commit();
    compute_stage<BF16>(acc, ring + gm_a_stage(cs), ring + gm_b_stage(cs), wm, wn, lane);
  }
  fused::cp_async_wait<0>();

#pragma unroll
  for (int mi = 0; mi < 4; mi++)
#pragma unroll
    for (int ni = 0; ni < 8; ni++)
#pragma unroll
      for (int e = 0; e < 4; e += 2) {
        int r, col;
        gm_acc_pos(wm, wn, lane, mi, ni, e, &r, &col);
        r += m0, col += n0; // col is even and N % 8 == 0: col + 1 < N whenever col < N
        if (r < g.m && col < g.n)
          store2<BF16>(g.c, (size_t)r * g.n + col, acc[mi][ni][e], acc[mi][ni][e + 1]);
      }
#else
  __trap(); // compute capability < 8.0: the plan refuses it
#endif
}

} // namespace

int gemm_mma_prepare(const hx_ctx *ctx, gemm_plan *pl, const gemm_problem *p) {
  const void *k = p->dtype == GEMM_BF16 ? (const void *)gemm_mma_kernel<true>
                                        : (const void *)gemm_mma_kernel<false>;
  return gemm_kernel_fits(ctx, k, "mma", pl);
}

int gemm_mma_run(const hx_ctx *ctx, const gemm_plan *pl, const gemm_problem *p,
                 const gemm_dev_io *io) {
  Args g;
  g.a = static_cast<const half *>(io->a);
  g.b = static_cast<const half *>(io->b);
  g.c = io->c;
  g.m = (int)p->m, g.n = (int)p->n, g.k = (int)p->k;
  g.tiles_m = pl->tiles_m, g.tiles_n = pl->tiles_n, g.k_blocks = pl->k_blocks;
  const dim3 grid(pl->tiles), block(GM_THREADS);
  const size_t smem = pl->smem_bytes;
  if (p->dtype == GEMM_BF16)
    gemm_mma_kernel<true><<<grid, block, smem, ctx->stream>>>(g);
  else
    gemm_mma_kernel<false><<<grid, block, smem, ctx->stream>>>(g);
  HX_TRY_LAUNCH(ctx, "gemm_mma_kernel");
  return HX_OK;
}
