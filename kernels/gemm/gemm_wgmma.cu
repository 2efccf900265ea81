// gemm_wgmma.cu: our sm_90a GEMM (README.md draws it; the numbers are gemm_plan.h's GW_*).
//
// A persistent kernel: one CTA per SM walks the tiles t = blockIdx.x, + gridDim.x, ... in the
// grouped order of gemm_tile_of. Each CTA is three warpgroups:
//   producer (warpgroup 0)  gives its registers away (setmaxnreg.dec); one thread loops over
//                           the CTA's tiles and their k-blocks, and for each waits until ring
//                           stage s is empty, announces the stage's bytes on full[s]
//                           (arrive.expect_tx) and issues the TMA loads: A's [128 x 64] box and
//                           B's [64 x BN] as BN/64 boxes of [64 x 64] (boxes wholly right of N
//                           are skipped: they only feed columns that are never stored).
//   consumers (1, 2)        claim registers (setmaxnreg.inc); consumer c owns rows 64c..64c+63
//                           of the tile. Per k-block: wait full[s], four wgmma m64nBNk16 (A and
//                           B from shared memory, B transposed by the instruction: it is
//                           N-major), commit, then wait for the previous k-block's group and
//                           release its stage (one arrive per warp on empty[s]). After the
//                           last k-block, the accumulators go straight to global memory
//                           (converted to the dtype), masked at the M and N edges, while the
//                           producer already fills the ring for the next tile.
// TMA zero-fills what lies outside A and B (the K, M and N edges), so any M and any K, N that
// are multiples of 8 (16-byte row pitches) run. The ring's stage counter and phase bit run on
// across tiles; the producer and the consumers walk the same tile sequence, so they agree.
#include "gemm_kernels.h"
#include "gemm_plan.h"

#include "fused/wgmma_sm90.cuh"
#include "gpu_util.cuh"
#include "sm90_async.cuh"
#include "tensor_map.h"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdio.h>

namespace {

struct Params {
  CUtensorMap a_map; // A as {K, M}: boxes {64, 128}
  CUtensorMap b_map; // B as {N, K}: boxes {64, 64}
  void *c;
  int m, n, k;
  int tiles_m, tiles_n, tiles, k_blocks;
};

// Two fp32 values to two adjacent C elements (one 32-bit store).
template <bool BF16> __device__ __forceinline__ void store2(void *c, size_t e, float x, float y) {
  if constexpr (BF16)
    *reinterpret_cast<__nv_bfloat162 *>(static_cast<__nv_bfloat16 *>(c) + e) =
        __floats2bfloat162_rn(x, y);
  else
    *reinterpret_cast<__half2 *>(static_cast<__half *>(c) + e) = __floats2half2_rn(x, y);
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
template <int BN>
__device__ __forceinline__ void produce(const Params &p, uint16_t *ring, uint64_t *full,
                                        uint64_t *empty) {
  constexpr int S = GW_STAGES(BN);
  int stage = 0;
  uint32_t phase = 0;
  for (int t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    int mb, nb;
    gemm_tile_of(t, p.tiles_m, p.tiles_n, GW_GROUP_M, &mb, &nb);
    const int m0 = mb * GW_BM, n0 = nb * BN;
    const int boxes = gw_b_boxes(BN, p.n, n0);
    const uint32_t bytes = GW_A_STAGE_BYTES + boxes * GW_B_BOX_BYTES;
    for (int kb = 0; kb < p.k_blocks; kb++) {
      mbar_wait(&empty[stage], phase ^ 1); // the first pass over the ring waits for nothing
      mbar_expect_tx(&full[stage], bytes);
      tma_load_2d(ring + gw_a_stage(stage), &p.a_map, &full[stage], kb * GW_BK, m0);
      for (int x = 0; x < boxes; x++)
        tma_load_2d(ring + gw_b_box(BN, stage, x), &p.b_map, &full[stage], n0 + x * GW_BOX,
                    kb * GW_BK);
      if (++stage == S) stage = 0, phase ^= 1;
    }
  }
}

// This thread's accumulators to C (converted to the dtype), masked at the M and N edges.
template <int BN, bool BF16>
__device__ __forceinline__ void store_tile(const Params &p, const float (&acc)[BN / 8][4], int m0,
                                           int n0, int c, int warp, int lane) {
#pragma unroll
  for (int j = 0; j < BN / 8; j++) {
#pragma unroll
    for (int e = 0; e < 4; e += 2) {
      int r, col;
      gw_acc_pos(c, warp, lane, j, e, &r, &col);
      r += m0, col += n0; // col is even and N % 8 == 0: col + 1 < N whenever col < N
      if (r < p.m && col < p.n) store2<BF16>(p.c, (size_t)r * p.n + col, acc[j][e], acc[j][e + 1]);
    }
  }
}

template <int BN, bool BF16>
__device__ __forceinline__ void consume(const Params &p, const uint16_t *ring, uint64_t *full,
                                        uint64_t *empty, int c) {
  constexpr int S = GW_STAGES(BN);
  const int warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  int stage = 0;
  uint32_t phase = 0;
  float acc[BN / 8][4];
  for (int t = blockIdx.x; t < p.tiles; t += gridDim.x) {
    int mb, nb;
    gemm_tile_of(t, p.tiles_m, p.tiles_n, GW_GROUP_M, &mb, &nb);
#pragma unroll
    for (int j = 0; j < BN / 8; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    int held = -1; // the stage whose products may still be running
    for (int kb = 0; kb < p.k_blocks; kb++) {
      mbar_wait(&full[stage], phase);
      fused::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < GW_BK / 16; kk++) {
        const uint64_t da =
            fused::sw128_desc(ring + gw_desc_a(stage, c, kk), GW_DESC_A_LBO, GW_DESC_SBO);
        const uint64_t db =
            fused::sw128_desc(ring + gw_desc_b(BN, stage, kk), GW_DESC_B_LBO, GW_DESC_SBO);
        fused::wgmma_ss_tb<BN, BF16>(acc, da, db, 1);
      }
      fused::wgmma_commit();
      fused::wgmma_wait<1>(); // k-block kb - 1's products are done: its stage can be refilled
      if (held >= 0 && lane == 0) mbar_arrive(&empty[held]);
      held = stage;
      if (++stage == S) stage = 0, phase ^= 1;
    }
    fused::wgmma_wait<0>();
    if (held >= 0 && lane == 0) mbar_arrive(&empty[held]);
    store_tile<BN, BF16>(p, acc, mb * GW_BM, nb * BN, c, warp, lane);
  }
}
#endif

template <int BN, bool BF16>
__global__ void __launch_bounds__(GW_THREADS, 1)
    gemm_wgmma_kernel(const __grid_constant__ Params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int S = GW_STAGES(BN);
  extern __shared__ unsigned char gw_smem[];
  uint16_t *ring = reinterpret_cast<uint16_t *>(
      (reinterpret_cast<uintptr_t>(gw_smem) + GW_ALIGN - 1) & ~(uintptr_t)(GW_ALIGN - 1));
  uint64_t *full = reinterpret_cast<uint64_t *>(ring + gw_bar_offset(BN));
  uint64_t *empty = full + S;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; s++) {
      mbar_init(&full[s], 1); // the producer's arrive.expect_tx; the bytes complete it
      mbar_init(&empty[s], GW_EMPTY_ARRIVALS);
    }
    mbar_fence_init();
  }
  __syncthreads();
  const int wg = threadIdx.x >> 7;
  if (wg == 0) {
    regs_release<GW_PRODUCER_REGS>();
    if (threadIdx.x == 0) produce<BN>(p, ring, full, empty);
    return;
  }
  regs_claim<GW_CONSUMER_REGS>();
  consume<BN, BF16>(p, ring, full, empty, wg - 1);
#else
  __trap(); // built without sm_90a: the plan never launches this (compute capability 9.0 only)
#endif
}

// A 2-D tensor map of a row-major [rows, cols] 16-bit matrix, boxes of box_rows x 64 columns,
// 128B swizzle, zeros outside.
int encode(const attn_ctx *ctx, CUtensorMap *map, const void *base, long rows, long cols,
           int box_rows, bool bf16) {
  char why[256];
  tmap_encode_tiled_fn enc = tmap_encoder(why, sizeof why);
  if (!enc) return attn_fail(ctx, ATTN_ERR, "wgmma: %s", why);
  const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
  const cuuint64_t strides[1] = {(cuuint64_t)cols * 2};
  const cuuint32_t box[2] = {GW_BOX, (cuuint32_t)box_rows}, unit[2] = {1, 1};
  CUresult r = enc(map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                   2, const_cast<void *>(base), dims, strides, box, unit,
                   CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return attn_fail(ctx, ATTN_ERR,
                     "wgmma: cuTensorMapEncodeTiled failed (CUresult %d) for a [%ld, %ld] matrix",
                     (int)r, rows, cols);
  return ATTN_OK;
}

Params g_params; // encoded once (prepare), passed by value at each launch

const void *kernel_of(int bn, bool bf16) {
  if (bn == 256)
    return bf16 ? (const void *)gemm_wgmma_kernel<256, true>
                : (const void *)gemm_wgmma_kernel<256, false>;
  return bf16 ? (const void *)gemm_wgmma_kernel<128, true>
              : (const void *)gemm_wgmma_kernel<128, false>;
}

} // namespace

int gemm_wgmma_prepare(const attn_ctx *ctx, gemm_plan *pl, const gemm_problem *p,
                       const gemm_dev_io *io) {
  if (ctx->cc_major != 9 || ctx->cc_minor != 0)
    return attn_fail(ctx, ATTN_UNSUPPORTED,
                     "wgmma runs on compute capability 9.0 only (have %d.%d)", ctx->cc_major,
                     ctx->cc_minor);
  const bool bf16 = p->dtype == GEMM_BF16;
  Params &q = g_params;
  ATTN_TRY(encode(ctx, &q.a_map, io->a, p->m, p->k, GW_BM, bf16));
  ATTN_TRY(encode(ctx, &q.b_map, io->b, p->k, p->n, GW_BK, bf16));
  q.c = io->c;
  q.m = (int)p->m, q.n = (int)p->n, q.k = (int)p->k;
  q.tiles_m = pl->tiles_m, q.tiles_n = pl->tiles_n, q.tiles = pl->tiles;
  q.k_blocks = pl->k_blocks;
  cudaFuncAttributes attr;
  ATTN_TRY_CUDA(ctx, cudaFuncGetAttributes(&attr, kernel_of(pl->bn, bf16)));
  if (attr.binaryVersion < 90)
    return attn_fail(ctx, ATTN_ERR,
                     "wgmma: the loaded kernel is compiled for sm_%d, not sm_90a (build with "
                     "CMAKE_CUDA_ARCHITECTURES including 90a-real)",
                     attr.binaryVersion);
  return gemm_kernel_fits(ctx, kernel_of(pl->bn, bf16), "wgmma", pl);
}

int gemm_wgmma_run(const attn_ctx *ctx, const gemm_plan *pl, const gemm_problem *p) {
  const bool bf16 = p->dtype == GEMM_BF16;
  const dim3 grid(pl->grid), block(GW_THREADS);
  const size_t smem = pl->smem_bytes;
  if (pl->bn == 256 && bf16)
    gemm_wgmma_kernel<256, true><<<grid, block, smem, ctx->stream>>>(g_params);
  else if (pl->bn == 256)
    gemm_wgmma_kernel<256, false><<<grid, block, smem, ctx->stream>>>(g_params);
  else if (bf16)
    gemm_wgmma_kernel<128, true><<<grid, block, smem, ctx->stream>>>(g_params);
  else
    gemm_wgmma_kernel<128, false><<<grid, block, smem, ctx->stream>>>(g_params);
  ATTN_TRY_LAUNCH(ctx, "gemm_wgmma_kernel");
  return ATTN_OK;
}
