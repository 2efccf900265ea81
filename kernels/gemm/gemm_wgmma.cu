// gemm_wgmma.cu: our sm_90a GEMM (README.md draws it; the numbers are gemm_plan.h's GW_*).
//
// A persistent kernel: one CTA per SM walks its units of work u = blockIdx.x, + gridDim.x, ...
// (a unit is a tile in the grouped order of gemm_tile_of; with --cluster 2 a pair of
// M-neighbour tiles, one per CTA of the cluster, gw_unit_tile). Each CTA is three warpgroups:
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

#include "cuda_check.h"
#include "sm90_async.cuh"
#include "tensor_map.h"
#include "wgmma_sm90.cuh"

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
  int tiles_m, tiles_n, units, k_blocks;
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
// The k-blocks of this CTA's units, stage after stage of the ring. With CM = 2 the B boxes
// x with x % 2 == rank are loaded here and multicast to both CTAs of the cluster; the other
// half arrives from the peer (on our full barrier: we expect all of B's bytes).
template <int BN, int CM>
__device__ __forceinline__ void produce(const Params &p, uint16_t *ring, uint64_t *full,
                                        uint64_t *empty, int rank) {
  constexpr int S = GW_STAGES(BN);
  int stage = 0;
  uint32_t phase = 0;
  for (int u = blockIdx.x / CM; u < p.units; u += gridDim.x / CM) {
    int mb, nb;
    gw_unit_tile(u, p.tiles_m, p.tiles_n, CM, rank, &mb, &nb);
    const int m0 = mb * GW_BM, n0 = nb * BN;
    const bool a_in = m0 < p.m; // false only for rank 1 past the last tile row
    const int boxes = gw_b_boxes(BN, p.n, n0);
    const uint32_t bytes = gw_stage_bytes(a_in, boxes);
    for (int kb = 0; kb < p.k_blocks; kb++) {
      // the first pass over the ring waits for nothing; with CM = 2 the peer's consumers
      // arrive here too, so the stage is free in both CTAs before we multicast into it
      if constexpr (CM == 1)
        mbar_wait(&empty[stage], phase ^ 1);
      else
        mbar_wait_cluster(&empty[stage], phase ^ 1);
      mbar_expect_tx(&full[stage], bytes);
      if (a_in) tma_load_2d(ring + gw_a_stage(stage), &p.a_map, &full[stage], kb * GW_BK, m0);
      for (int x = 0; x < boxes; x++) {
        if constexpr (CM == 1)
          tma_load_2d(ring + gw_b_box(BN, stage, x), &p.b_map, &full[stage], n0 + x * GW_BOX,
                      kb * GW_BK);
        else if (x % CM == rank)
          tma_load_2d_multicast(ring + gw_b_box(BN, stage, x), &p.b_map, &full[stage],
                                n0 + x * GW_BOX, kb * GW_BK, (uint16_t)((1u << CM) - 1));
      }
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

// A stage's products are done in this warp: one arrive on its empty barrier in every CTA of
// the cluster (their producers multicast into our copy of the stage). Our own CTA's first:
// a peer that sees this warp's arrive may run a lap ahead and arrive on our barrier for the
// next lap, which must not count towards this one (with boxes owned by one rank only, N - n0
// <= 64, nothing else orders the two).
template <int CM> __device__ __forceinline__ void release(uint64_t *empty, int rank) {
  if constexpr (CM == 1)
    mbar_arrive(empty);
  else
    for (int i = 0; i < CM; i++) mbar_arrive_cluster(empty, (uint32_t)((rank + i) % CM));
}

template <int BN, bool BF16, int CM>
__device__ __forceinline__ void consume(const Params &p, const uint16_t *ring, uint64_t *full,
                                        uint64_t *empty, int c, int rank) {
  constexpr int S = GW_STAGES(BN);
  const int warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  int stage = 0;
  uint32_t phase = 0;
  float acc[BN / 8][4];
  for (int u = blockIdx.x / CM; u < p.units; u += gridDim.x / CM) {
    int mb, nb;
    gw_unit_tile(u, p.tiles_m, p.tiles_n, CM, rank, &mb, &nb);
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
      if (held >= 0 && lane == 0) release<CM>(&empty[held], rank);
      held = stage;
      if (++stage == S) stage = 0, phase ^= 1;
    }
    fused::wgmma_wait<0>();
    if (held >= 0 && lane == 0) release<CM>(&empty[held], rank);
    store_tile<BN, BF16>(p, acc, mb * GW_BM, nb * BN, c, warp, lane);
  }
}
#endif

template <int BN, bool BF16, int CM>
__global__ void __launch_bounds__(GW_THREADS, 1)
    gemm_wgmma_kernel(const __grid_constant__ Params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int S = GW_STAGES(BN);
  extern __shared__ unsigned char gw_smem[];
  uint16_t *ring = reinterpret_cast<uint16_t *>(
      (reinterpret_cast<uintptr_t>(gw_smem) + GW_ALIGN - 1) & ~(uintptr_t)(GW_ALIGN - 1));
  uint64_t *full = reinterpret_cast<uint64_t *>(ring + gw_bar_offset(BN));
  uint64_t *empty = full + S;
  const int rank = CM == 1 ? 0 : (int)cluster_ctarank();
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; s++) {
      mbar_init(&full[s], 1); // the producer's arrive.expect_tx; the bytes complete it
      mbar_init(&empty[s], GW_EMPTY_ARRIVALS(CM));
    }
    mbar_fence_init();
  }
  // the peer's barriers must be initialised before anything multicasts or arrives on them
  if constexpr (CM == 1)
    __syncthreads();
  else
    cluster_sync();
  const int wg = threadIdx.x >> 7;
  if (wg == 0) {
    regs_release<GW_PRODUCER_REGS>();
    if (threadIdx.x == 0) produce<BN, CM>(p, ring, full, empty, rank);
  } else {
    regs_claim<GW_CONSUMER_REGS>();
    consume<BN, BF16, CM>(p, ring, full, empty, wg - 1, rank);
  }
  // the peer's consumers may still arrive on our empty barriers: no CTA leaves before both
  // are done (every thread takes part, the producer's idle ones included)
  if constexpr (CM > 1) cluster_sync();
#else
  __trap(); // built without sm_90a: the plan never launches this (compute capability 9.0 only)
#endif
}

// A 2-D tensor map of a row-major [rows, cols] 16-bit matrix, boxes of box_rows x 64 columns,
// 128B swizzle, zeros outside.
int encode(const hx_ctx *ctx, CUtensorMap *map, const void *base, long rows, long cols,
           int box_rows, bool bf16) {
  char why[256];
  tmap_encode_tiled_fn enc = tmap_encoder(why, sizeof why);
  if (!enc) return hx_fail(ctx, HX_ERR, "wgmma: %s", why);
  const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
  const cuuint64_t strides[1] = {(cuuint64_t)cols * 2};
  const cuuint32_t box[2] = {GW_BOX, (cuuint32_t)box_rows}, unit[2] = {1, 1};
  CUresult r = enc(map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                   2, const_cast<void *>(base), dims, strides, box, unit,
                   CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return hx_fail(ctx, HX_ERR,
                   "wgmma: cuTensorMapEncodeTiled failed (CUresult %d) for a [%ld, %ld] matrix",
                   (int)r, rows, cols);
  return HX_OK;
}

Params g_params; // encoded once (prepare), passed by value at each launch

template <int BN, bool BF16> const void *kernel_of_cm(int cm) {
  return cm == 2 ? (const void *)gemm_wgmma_kernel<BN, BF16, 2>
                 : (const void *)gemm_wgmma_kernel<BN, BF16, 1>;
}
const void *kernel_of(int bn, bool bf16, int cm) {
  if (bn == 256) return bf16 ? kernel_of_cm<256, true>(cm) : kernel_of_cm<256, false>(cm);
  return bf16 ? kernel_of_cm<128, true>(cm) : kernel_of_cm<128, false>(cm);
}

// A launch of one instance: clusters of CM CTAs along x when CM > 1.
template <int BN, bool BF16, int CM> cudaError_t launch(const hx_ctx *ctx, const gemm_plan *pl) {
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  cfg.gridDim = dim3(pl->grid);
  cfg.blockDim = dim3(GW_THREADS);
  cfg.dynamicSmemBytes = pl->smem_bytes;
  cfg.stream = ctx->stream;
  if (CM > 1) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = CM;
    attr[0].val.clusterDim.y = attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
  }
  return cudaLaunchKernelEx(&cfg, gemm_wgmma_kernel<BN, BF16, CM>, g_params);
}

template <int BN, bool BF16> cudaError_t launch_cm(const hx_ctx *ctx, const gemm_plan *pl) {
  return pl->cluster == 2 ? launch<BN, BF16, 2>(ctx, pl) : launch<BN, BF16, 1>(ctx, pl);
}

} // namespace

int gemm_wgmma_prepare(const hx_ctx *ctx, gemm_plan *pl, const gemm_problem *p,
                       const gemm_dev_io *io) {
  if (ctx->cc_major != 9 || ctx->cc_minor != 0)
    return hx_fail(ctx, HX_UNSUPPORTED, "wgmma runs on compute capability 9.0 only (have %d.%d)",
                   ctx->cc_major, ctx->cc_minor);
  const bool bf16 = p->dtype == GEMM_BF16;
  Params &q = g_params;
  HX_TRY(encode(ctx, &q.a_map, io->a, p->m, p->k, GW_BM, bf16));
  HX_TRY(encode(ctx, &q.b_map, io->b, p->k, p->n, GW_BK, bf16));
  q.c = io->c;
  q.m = (int)p->m, q.n = (int)p->n, q.k = (int)p->k;
  q.tiles_m = pl->tiles_m, q.tiles_n = pl->tiles_n, q.units = pl->units;
  q.k_blocks = pl->k_blocks;
  const void *kernel = kernel_of(pl->bn, bf16, pl->cluster);
  cudaFuncAttributes attr;
  HX_TRY_CUDA(ctx, cudaFuncGetAttributes(&attr, kernel));
  if (attr.binaryVersion < 90)
    return hx_fail(ctx, HX_ERR,
                   "wgmma: the loaded kernel is compiled for sm_%d, not sm_90a (build with "
                   "CMAKE_CUDA_ARCHITECTURES including 90a-real)",
                   attr.binaryVersion);
  HX_TRY(gemm_kernel_fits(ctx, kernel, "wgmma", pl));
  if (pl->cluster > 1) { // clusters need SMs side by side in a GPC: as many as fit at once
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute cl[1];
    cfg.gridDim = dim3(pl->grid);
    cfg.blockDim = dim3(GW_THREADS);
    cfg.dynamicSmemBytes = pl->smem_bytes;
    cl[0].id = cudaLaunchAttributeClusterDimension;
    cl[0].val.clusterDim.x = pl->cluster;
    cl[0].val.clusterDim.y = cl[0].val.clusterDim.z = 1;
    cfg.attrs = cl;
    cfg.numAttrs = 1;
    int clusters = 0;
    HX_TRY_CUDA(ctx, cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg));
    if (clusters < 1)
      return hx_fail(ctx, HX_ERR, "wgmma: no cluster of %d CTAs fits on the device", pl->cluster);
    if (pl->grid > clusters * pl->cluster) pl->grid = clusters * pl->cluster;
  }
  return HX_OK;
}

int gemm_wgmma_run(const hx_ctx *ctx, const gemm_plan *pl, const gemm_problem *p) {
  const bool bf16 = p->dtype == GEMM_BF16;
  cudaError_t err;
  if (pl->bn == 256)
    err = bf16 ? launch_cm<256, true>(ctx, pl) : launch_cm<256, false>(ctx, pl);
  else
    err = bf16 ? launch_cm<128, true>(ctx, pl) : launch_cm<128, false>(ctx, pl);
  if (err != cudaSuccess)
    return hx_fail(ctx, HX_ERR, "wgmma: launching gemm_wgmma_kernel failed: %s",
                   cudaGetErrorString(err));
  HX_TRY_LAUNCH(ctx, "gemm_wgmma_kernel");
  return HX_OK;
}
