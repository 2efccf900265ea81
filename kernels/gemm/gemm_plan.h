/* gemm_plan.h: the tile plans of our two GEMM kernels as plain numbers, shared by the kernels
 * (gemm_wgmma.cu, gemm_mma.cu: template arguments and shared-memory carving), the host-side
 * launch checks (gemm_plan.c) and the CPU tests (tests/gemm/). README.md draws them.
 *
 * wgmma (sm_90a), one CTA per SM, persistent:
 *   tile GW_BM x BN x GW_BK, BN = 256 (or 128 when there are fewer 256-wide tiles than SMs),
 *   384 threads = producer warpgroup (one thread issues TMA) + 2 consumer warpgroups
 *   (64 rows of the tile each: wgmma m64nBNk16, accumulators in registers),
 *   a ring of GW_STAGES(BN) stages, each A [128 x 64] and B [64 x BN] as 64-column boxes of
 *   [64 x 64] (128 bytes a row, 128B swizzle), a full and an empty mbarrier per stage.
 * mma (sm_80), one CTA per tile: GM_BM x GM_BN x GM_BK, 8 warps of 64 x 64 (2 x 4), a
 *   GM_STAGES-deep cp.async ring, XOR-swizzled rows (kernels/cuda/mma_sm80.cuh). */
#ifndef GEMM_PLAN_H
#define GEMM_PLAN_H

#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#define GEMM_HD static inline __host__ __device__
#else
#define GEMM_HD static inline
#endif

/* ---- wgmma ---------------------------------------------------------------------------------- */
#define GW_BM                128
#define GW_BK                64
#define GW_BOX               64 /* TMA box width: 64 16-bit elements = 128 bytes = the swizzle span */
#define GW_THREADS           384 /* producer warpgroup + 2 consumer warpgroups */
#define GW_CONSUMERS         2
#define GW_PRODUCER_REGS     40   /* setmaxnreg.dec (the producer needs few) */
#define GW_CONSUMER_REGS     232  /* setmaxnreg.inc (128 accumulators + addressing) */
#define GW_ENTRY_REGS        168  /* __launch_bounds__(384, 1): 65536 / 384 rounded down to 8 */
#define GW_ALIGN             1024 /* a 128B-swizzle atom (8 rows of 128 bytes) starts 1024-aligned */
#define GW_GROUP_M           8    /* tile rows per group of the launch order (L2 reuse) */
#define GW_STAGES(bn)        ((bn) == 256 ? 4 : 6)
#define GW_A_STAGE_BYTES     (GW_BM * GW_BK * 2)
#define GW_B_BOX_BYTES       (GW_BK * GW_BOX * 2)
#define GW_B_STAGE_BYTES(bn) (GW_BK * (bn)*2)
/* alignment slack + the ring + full[] and empty[] mbarriers */
#define GW_SMEM_BYTES(bn) \
  (GW_ALIGN + GW_STAGES(bn) * (GW_A_STAGE_BYTES + GW_B_STAGE_BYTES(bn)) + 2 * GW_STAGES(bn) * 8)
/* the consumers' warps (of every CTA of the cluster) arrive on a stage's empty barrier once
 * each */
#define GW_EMPTY_ARRIVALS(cm) (GW_CONSUMERS * 4 * (cm))

/* Where things sit in the ring, in 16-bit elements from its 1024-aligned base: the S stages
 * of A, then the S stages of B (each BN/64 boxes of [64 x 64]), then the barriers. The kernel
 * and tests/gemm/'s emulation of it both use these. */
GEMM_HD int gw_a_stage(int stage) { return stage * GW_BM * GW_BK; }
GEMM_HD int gw_b_box(int bn, int stage, int box) {
  return GW_STAGES(bn) * GW_BM * GW_BK + (stage * (bn / GW_BOX) + box) * GW_BK * GW_BOX;
}
GEMM_HD int gw_bar_offset(int bn) { return GW_STAGES(bn) * (GW_BM + bn) * GW_BK; }
/* B boxes a tile starting at column n0 loads: those left of N (the rest only feed columns the
 * epilogue never stores, so they are skipped). */
GEMM_HD int gw_b_boxes(int bn, int n, int n0) {
  int left = (n - n0 + GW_BOX - 1) / GW_BOX;
  return left < bn / GW_BOX ? left : bn / GW_BOX;
}
/* Bytes a stage's full barrier expects in a CTA: its A box (unless the tile lies past M) and
 * every B box of the tile (with --cluster 2, half of them multicast by the peer). */
GEMM_HD unsigned gw_stage_bytes(int a_in, int boxes) {
  return (a_in ? GW_A_STAGE_BYTES : 0) + (unsigned)boxes * GW_B_BOX_BYTES;
}
/* wgmma descriptors of k-step kk (16 wide) of a stage: consumer c's A (rows 64c.., K-major,
 * start advanced 32 bytes per k-step inside the 128-byte swizzled row) and B (N-major: the
 * boxes are GW_DESC_B_LBO bytes apart, k-step = 16 rows of 128 bytes); 8-row groups are
 * 1024 bytes apart in both (the stride byte offset). */
#define GW_DESC_A_LBO 16 /* unused by a swizzled K-major operand; 16 by convention */
#define GW_DESC_B_LBO GW_B_BOX_BYTES
#define GW_DESC_SBO   1024
GEMM_HD int gw_desc_a(int stage, int c, int kk) {
  return gw_a_stage(stage) + c * 64 * GW_BK + kk * 16;
}
GEMM_HD int gw_desc_b(int bn, int stage, int kk) {
  return gw_b_box(bn, stage, 0) + kk * 16 * GW_BOX;
}
/* Tile row and column of accumulator d[j][e] of lane in warp (0..3) of consumer c: the wgmma
 * m64nN layout (kernels/cuda/wgmma_sm90.cuh), e = 0, 1 on row g, 2, 3 on row g + 8. */
GEMM_HD void gw_acc_pos(int c, int warp, int lane, int j, int e, int *row, int *col) {
  *row = c * 64 + warp * 16 + (lane >> 2) + (e >= 2 ? 8 : 0);
  *col = 8 * j + 2 * (lane & 3) + (e & 1);
}

/* ---- mma.sync ------------------------------------------------------------------------------- */
#define GM_BM         128
#define GM_BN         256
#define GM_BK         64
#define GM_STAGES     3
#define GM_THREADS    256
#define GM_GROUP_M    8
#define GM_SMEM_BYTES (GM_STAGES * (GM_BM * GM_BK + GM_BK * GM_BN) * 2)

/* The ring in 16-bit elements: S stages of A [128 x 64], then S of B [64 x 256], each tile's
 * rows in 16-byte chunks placed at chunk ^ (row & 7) (fused::swz). */
GEMM_HD int gm_a_stage(int stage) { return stage * GM_BM * GM_BK; }
GEMM_HD int gm_b_stage(int stage) { return GM_STAGES * GM_BM * GM_BK + stage * GM_BK * GM_BN; }
/* ldmatrix.x4 row and chunk lane addresses for the A fragment of m16 tile mi of warp row wm at
 * k-step kk: lanes 0-15 rows 0-15 at k 0-7, lanes 16-31 the same rows at k 8-15 (registers:
 * rows 0-7 / 8-15 x k 0-7, then x k 8-15: the m16n8k16 A fragment). */
GEMM_HD void gm_a_ldm(int wm, int mi, int kk, int lane, int *row, int *chunk) {
  *row = wm * 64 + mi * 16 + (lane & 15);
  *chunk = kk * 2 + (lane >> 4);
}
/* ldmatrix.x4.trans lane addresses for the B fragments of column pair dp (16 columns) of warp
 * column wn at k-step kk: lanes 0-7 k 0-7, 8-15 k 8-15 of columns 0-7, lanes 16-31 the same of
 * columns 8-15. Registers 0, 1 are n-tile 2dp's b0, b1, registers 2, 3 n-tile 2dp + 1's. */
GEMM_HD void gm_b_ldm(int wn, int dp, int kk, int lane, int *row, int *chunk) {
  *row = kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3);
  *chunk = wn * 8 + dp * 2 + (lane >> 4);
}
/* Tile row and column of acc[mi][ni][e] of lane in warp (wm, wn): the m16n8 C fragment. */
GEMM_HD void gm_acc_pos(int wm, int wn, int lane, int mi, int ni, int e, int *row, int *col) {
  *row = wm * 64 + mi * 16 + (lane >> 2) + (e >= 2 ? 8 : 0);
  *col = wn * 64 + ni * 8 + 2 * (lane & 3) + (e & 1);
}

/* Shared-memory limit per block we design for: an H100's opt-in maximum. */
#define GEMM_SMEM_LIMIT (227 * 1024)

/* The t-th tile in launch order: tile rows in groups of group_m, and within a group column by
 * column, so the CTAs that run at the same time share rows of A and columns of B in L2. A
 * bijection of [0, tiles_m·tiles_n) onto the tiles (tests/gemm/ checks it). */
GEMM_HD void gemm_tile_of(int t, int tiles_m, int tiles_n, int group_m, int *mb, int *nb) {
  int per_group = group_m * tiles_n;
  int first_m = (t / per_group) * group_m;
  int rows = tiles_m - first_m < group_m ? tiles_m - first_m : group_m;
  int r = t % per_group;
  *mb = first_m + r % rows;
  *nb = r / rows;
}

/* --cluster 2: pairs of CTAs (a cluster along M) take pairs of M-neighbour tiles that share
 * their B tile; each CTA loads its own A and half of B's boxes (box x by rank x % 2),
 * multicast to both, so a CTA reads 32 instead of 48 KiB per k-block from L2. A unit of work
 * is such a pair (one tile with --cluster 1), in gemm_tile_of's order over tile-row pairs;
 * rank r of the cluster takes tile row 2·pair + r (past the last row when tiles_m is odd:
 * its A load is skipped and every store masked, but it still multicasts its half of B). */
GEMM_HD int gw_units(int tiles_m, int tiles_n, int cm) { return (tiles_m + cm - 1) / cm * tiles_n; }
GEMM_HD void gw_unit_tile(int u, int tiles_m, int tiles_n, int cm, int rank, int *mb, int *nb) {
  int pm;
  gemm_tile_of(u, (tiles_m + cm - 1) / cm, tiles_n, GW_GROUP_M / cm, &pm, nb);
  *mb = pm * cm + rank;
}

/* ---- plans (gemm_plan.c) ---------------------------------------------------------------------- */
/* What the plan is checked against: cudaDeviceProp's numbers (gemm_gpu.cu fills it). */
typedef struct {
  int cc_major, cc_minor;
  int sms;
  int smem_optin;  /* sharedMemPerBlockOptin */
  int max_threads; /* maxThreadsPerBlock */
  int regs_per_sm; /* regsPerMultiprocessor */
} gemm_device;

typedef struct {
  int system;    /* gemm_system_id */
  char impl[80]; /* the config line's impl= */
  int bm, bn, bk, stages, threads, smem_bytes, group_m;
  int cluster; /* wgmma: CTAs per cluster (1 or 2) */
  int tiles_m, tiles_n, tiles, k_blocks, grid;
  int units; /* wgmma: units of work (tiles, or tile pairs with --cluster 2) */
  /* from the compiled kernel (cudaFuncGetAttributes, occupancy), set on the GPU; 0 until then */
  int kernel_regs, local_bytes, ctas_per_sm;
} gemm_plan;

/* The plan of system for p on dev: HX_OK (0), or HX_UNSUPPORTED (4) with the reason in why.
 * tile_n, cluster: wgmma's --tile-n (0: automatic) and --cluster (0: 1). Checks what the launch
 * needs (shared memory, the register split, TMA's 16-byte pitches, the box and swizzle sizes)
 * before anything runs. dev may be NULL (an H100's 132 SMs are assumed, nothing checked). */
int gemm_plan_make(int system, const gemm_problem *p, int tile_n, int cluster,
                   const gemm_device *dev, gemm_plan *pl, char *why, size_t why_len);
/* "plan kernel=.. tile=BMxBNxBK stages=.. threads=.. smem_bytes=.. tiles=.. grid=.." (ours only). */
void gemm_plan_print(const gemm_plan *pl);

#ifdef __cplusplus
}
#endif
#endif
