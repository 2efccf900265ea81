// How the fused kernels of the dense workloads are launched, shared by the `fused` system
// (fused.cu) and fused-diag (fused_diag/fused_diag.cu), which runs the same kernels with its
// tile cache: TMA descriptors, the warp-specialized kernels' persistent grid and tile order,
// the forward's tile rows, and which kernel serves a cell (the Hopper kernels where they can
// load their inputs, else the sm_80 ones). Errors go through attn_fail, never exit.
#pragma once
#include "attn_system.h"
#include "col_sm80.cuh"
#include "col_ws90.cuh"
#include "corm_rows.cuh"
#include "fwd_sm80.cuh"
#include "fwd_ws90.cuh"
#include "tensor_map.h"

#include <limits.h>
#include <stdio.h>

namespace fused {

// One launch's error, reported with the kernel's name.
static int launched(const attn_ctx *ctx, const char *what) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return ATTN_OK;
  return attn_fail(ctx, ATTN_ERR, "fused: launching %s failed: %s", what, cudaGetErrorString(err));
}

template <typename Kernel, typename... Args>
static int launch_cfg(const attn_ctx *ctx, Kernel kernel, const char *name, dim3 grid, int threads,
                      int smem, const Args &...args) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess)
    return attn_fail(ctx, ATTN_ERR, "fused: cudaFuncSetAttribute(%s) failed: %s", name,
                     cudaGetErrorString(err));
  kernel<<<grid, threads, smem, ctx->stream>>>(args...);
  return launched(ctx, name);
}

// Hopper runs the wgmma kernels unless --force-sm80 asks for the mma.sync path.
static bool hopper(const attn_ctx *ctx) { return ctx->cc_major == 9 && !ctx->force_sm80; }
// The Hopper forward serves every workload; kf's noise tiles come by TMA, which wants a row
// pitch of a multiple of 16 bytes (Lkv % 4 == 0): otherwise kf's forward is the sm_80 kernel.
static bool use_sm90(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  if (!hopper(ctx)) return false;
  return workload_table[wl].column != COL_KEYFORMER || sh->kv_len % 4 == 0;
}

// A TMA descriptor (cuTensorMapEncodeTiled), elements outside the tensor read as zeros.
static int encode_tiled(const attn_ctx *ctx, CUtensorMap *map, CUtensorMapDataType type, int rank,
                        const void *base, const cuuint64_t *dims, const cuuint64_t *strides,
                        const cuuint32_t *box, CUtensorMapSwizzle swizzle) {
  char why[256];
  tmap_encode_tiled_fn encode = tmap_encoder(why, sizeof why);
  if (!encode) return attn_fail(ctx, ATTN_ERR, "fused: %s", why);
  const cuuint32_t unit[4] = {1, 1, 1, 1};
  CUresult r = encode(map, type, (cuuint32_t)rank, const_cast<void *>(base), dims, strides, box,
                      unit, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return attn_fail(ctx, ATTN_ERR, "fused: cuTensorMapEncodeTiled failed (CUresult %d)", (int)r);
  return ATTN_OK;
}

// A 4-D TMA descriptor of a [B, L, H, D] fp16 (bf16: bfloat16) tensor as {D, H, L, B}: boxes
// of 64 head-dim columns (128 bytes, the swizzle span) x rows tokens of one head,
// 128B-swizzled, rows past L and columns past D (D = 96's second box) read as zeros.
static int encode_map(const attn_ctx *ctx, CUtensorMap *map, const half *base, int D, int H, int L,
                      int B, int rows, bool bf16 = false) {
  const cuuint64_t dims[4] = {(cuuint64_t)D, (cuuint64_t)H, (cuuint64_t)L, (cuuint64_t)B};
  const cuuint64_t strides[3] = {(cuuint64_t)D * sizeof(half), (cuuint64_t)H * D * sizeof(half),
                                 (cuuint64_t)L * H * D * sizeof(half)};
  const cuuint32_t box[4] = {64, 1, (cuuint32_t)rows, 1};
  return encode_tiled(ctx, map,
                      bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4,
                      base, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
}

// The row LSE [B*H, Lq] fp32 as a 2-D tensor {Lq, B*H}, boxes of `rows` (rows past Lq read as
// zeros). TMA wants a row pitch of a multiple of 16 bytes: Lq % 4 == 0 (col_ws_usable).
static int encode_lse_map(const attn_ctx *ctx, CUtensorMap *map, const float *lse, int Lq, int BH,
                          int rows) {
  const cuuint64_t dims[2] = {(cuuint64_t)Lq, (cuuint64_t)BH};
  const cuuint64_t strides[1] = {(cuuint64_t)Lq * sizeof(float)};
  const cuuint32_t box[2] = {(cuuint32_t)rows, 1};
  return encode_tiled(ctx, map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, lse, dims, strides, box,
                      CU_TENSOR_MAP_SWIZZLE_NONE);
}

// An fp32 [depth, Lq, Lkv] aux input (kf's noise, corm's mask) as a 3-D tensor {Lkv, Lq, depth},
// 128B-swizzled boxes of box_keys x rows (box_keys * 4 bytes: at most the swizzle span).
static int encode_aux_map(const attn_ctx *ctx, CUtensorMap *map, const float *aux,
                          const attn_shape *sh, int depth, int box_keys, int rows) {
  const cuuint64_t dims[3] = {(cuuint64_t)sh->kv_len, (cuuint64_t)sh->q_len, (cuuint64_t)depth};
  const cuuint64_t strides[2] = {(cuuint64_t)sh->kv_len * sizeof(float),
                                 (cuuint64_t)sh->kv_len * sh->q_len * sizeof(float)};
  const cuuint32_t box[3] = {(cuuint32_t)box_keys, (cuuint32_t)rows, 1};
  return encode_tiled(ctx, map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, aux, dims, strides, box,
                      CU_TENSOR_MAP_SWIZZLE_128B);
}

// How many (batch, head) pairs the tile schedule interleaves (tile_scheduler.cuh). Without a mask
// every tile costs the same and the order only decides which running CTAs share K/V blocks:
// one head at a time shares most. Under the causal mask the heaviest-first order needs a few
// heads' light tiles to even out the last wave: twice the tiles that run at once is the best
// chunk at B1 and level with the others at B16 (PERF-fused.md).
static int ws_heads_per_chunk(int sm_count, long qtiles_per_head, int pairs, bool causal) {
  const long chunk = causal ? 2 * sm_count / qtiles_per_head : 1;
  return (int)(chunk < 1 ? 1 : chunk > pairs ? pairs : chunk);
}

// A warp-specialized kernel (the forward, fwd_ws90.cuh, or the column pass,
// col_ws90.cuh) over `blocks` blocks per (batch, head) pair of `heads` heads (the query
// heads for the forward, the K/V heads for the column pass): one CTA per SM (its shared
// memory allows no second), each claiming tiles, or with --sm90-fwd ws1 one CTA per tile; the
// tile order interleaves ws_heads_per_chunk pairs.
template <typename Kernel, typename Maps, typename Cache>
static int launch_ws(const attn_ctx *ctx, const attn_shape *sh, Kernel kernel, const char *name,
                     const Maps &maps, const Params &p, const Cache &cache, int threads, int smem,
                     long blocks, int heads) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess)
    return attn_fail(ctx, ATTN_ERR, "fused: cudaFuncSetAttribute(%s) failed: %s", name,
                     cudaGetErrorString(err));
  const long ntiles = blocks * heads * sh->batch;
  if (ntiles > INT_MAX)
    return attn_fail(ctx, ATTN_UNSUPPORTED, "fused: %ld tiles of %s exceed the kernel's int range",
                     ntiles, name);
  const bool persistent = ctx->sm90_fwd == SM90_FWD_WS && ctx->sm_count > 0;
  const int grid = persistent && ntiles > ctx->sm_count ? ctx->sm_count : (int)ntiles;
  const int chunk =
      ws_heads_per_chunk(ctx->sm_count, blocks, sh->batch * heads, p.offset < sh->kv_len);
  kernel<<<grid, threads, smem, ctx->stream>>>(maps, p, chunk, cache);
  return launched(ctx, name);
}

// The warp-specialized forward's query rows per tile (64 per consumer warpgroup): 192 where
// ws_wide_serves and --sm90-rows ask for it, or by default where 192-row tiles are the faster
// ones (D = 64, same-run ratios against 128-row tiles in PERF-fused.md): without a mask at 4
// waves of 192-row tiles or more (a wave of them is 1.5x the work of one of 128-row tiles);
// under a causal mask, where a tile's work grows along the diagonal and the last wave is
// uneven, at 16 waves or more.
template <int D, int WL> static int ws_fwd_rows(const attn_ctx *ctx, const attn_shape *sh) {
  if (!ws_wide_serves<D, WL>() || ctx->sm90_rows == SM90_ROWS_128) return 128;
  if (ctx->sm90_rows == SM90_ROWS_192) return 192;
  const long tiles = (sh->q_len + 191L) / 192 * sh->heads * sh->batch;
  const long min_waves = mask_offset(sh) < sh->kv_len ? 16 : 4;
  return ctx->sm_count > 0 && tiles >= min_waves * ctx->sm_count ? 192 : 128;
}

// The warp-specialized forward (fwd_ws90.cuh), the forward on Hopper. NC consumer warpgroups,
// COLS keys per stage (0: WsCfg's choice); DRAW: kf's noise drawn (p.noise_drawn).
template <int D, int WL, bool BF16, int NC, typename Cache, int COLS = 0, bool DRAW = false>
static int launch_fwd_ws90(const attn_ctx *ctx, const attn_shape *sh, const Params &p,
                           const Cache &cache) {
  WsMaps maps;
  using C = WsCfg<D, WL, NC, COLS>;
  ATTN_TRY(encode_map(ctx, &maps.q, p.q, D, sh->heads, sh->q_len, sh->batch, C::kRows, BF16));
  ATTN_TRY(encode_map(ctx, &maps.k, p.k, D, p.Hkv, sh->kv_len, sh->batch, C::kCols, BF16));
  ATTN_TRY(encode_map(ctx, &maps.v, p.v, D, p.Hkv, sh->kv_len, sh->batch, C::kCols, BF16));
  if (C::kNoise && !DRAW) // exp_rand [B*H, Lq, Lkv], boxes of one consumer's 64 rows
    ATTN_TRY(
        encode_aux_map(ctx, &maps.noise, p.exp_rand, sh, sh->batch * sh->heads, kSw128Floats, 64));
  return launch_ws(ctx, sh, attn_fwd_ws90<D, WL, BF16, NC, Cache, COLS, DRAW>, "attn_fwd_ws90",
                   maps, p, cache, C::kThreads, C::smem_bytes(),
                   (sh->q_len + C::kRows - 1) / C::kRows, sh->heads);
}

// Keys per stage without a mask: 176 at D = 128 (FlashAttention-3's block there: fewer, longer
// steps; S in 88 registers beside O's 64) for the workloads without a softcap, noise or cache;
// 0 (WsCfg's choice) elsewhere.
template <int D, int WL, typename Cache> constexpr int ws_cols_unmasked() {
  return D == 128 && !wl_traits<WL>::softcap && !wl_traits<WL>::keyformer && !Cache::kOn ? 176 : 0;
}
// Whether `cols`-key stages beat 128-key ones over kv_len keys: a 176-key step costs about 3 %
// less per key (H200, same run: PERF-fused.md v34), and both pay for their last block's padding.
static bool ws_cols_pay(int cols, long kv_len) {
  const long padded = (kv_len + cols - 1) / cols * cols,
             padded128 = (kv_len + kWsCols - 1) / kWsCols * kWsCols;
  return padded * 97 < padded128 * 100;
}

template <int D, int WL, bool BF16, typename Cache>
static int launch_fwd_sm90(const attn_ctx *ctx, const attn_shape *sh, const Params &p,
                           const Cache &cache) {
  if constexpr (ws_wide_serves<D, WL>() && !Cache::kOn)
    if (ws_fwd_rows<D, WL>(ctx, sh) == 192)
      return launch_fwd_ws90<D, WL, BF16, 3>(ctx, sh, p, cache);
  constexpr int kUnmaskedCols = ws_cols_unmasked<D, WL, Cache>();
  if constexpr (kUnmaskedCols > 0)
    if (sh->mask == MASK_NONE && ws_cols_pay(kUnmaskedCols, sh->kv_len))
      return launch_fwd_ws90<D, WL, BF16, 2, Cache, kUnmaskedCols>(ctx, sh, p, cache);
  if constexpr (wl_traits<WL>::keyformer && !Cache::kOn)
    if (p.noise_drawn) return launch_fwd_ws90<D, WL, BF16, 2, Cache, 0, true>(ctx, sh, p, cache);
  return launch_fwd_ws90<D, WL, BF16, 2>(ctx, sh, p, cache);
}

// The warp-specialized column pass (col_ws90.cuh) runs on Hopper where TMA can load its
// inputs: row pitches of a multiple of 16 bytes, the LSE's (Lq % 4 == 0) and the aux input's
// (Lkv % 4 == 0). Elsewhere the sm_80 column pass runs.
template <int WL> static bool col_ws_usable(const attn_ctx *ctx, const attn_shape *sh) {
  return hopper(ctx) && col_ws_serves<WL>() && sh->q_len % 4 == 0 &&
         (!has_aux<WL>() || sh->kv_len % 4 == 0);
}

// DRAW: the aux input not staged, no aux map: kf's noise drawn by the consumers (p.noise_drawn),
// corm against its row thresholds (corm_rows.cuh: the LSE map reads lse_rows).
template <int D, int WL, bool BF16, typename Cache, bool DRAW = false>
static int launch_col_ws90(const attn_ctx *ctx, const attn_shape *sh, const Params &p,
                           const Cache &cache) {
  if constexpr (!col_ws_serves<WL>()) {
    return attn_fail(ctx, ATTN_ERR, "fused: no ws column pass for this workload");
  } else {
    constexpr bool kf = wl_traits<WL>::keyformer;
    if constexpr (kf && !Cache::kOn && !DRAW)
      if (p.noise_drawn) return launch_col_ws90<D, WL, BF16, Cache, true>(ctx, sh, p, cache);
    using C = ColWsCfg<WL, D, DRAW>;
    const int bh = sh->batch * sh->heads;
    ColWsMaps maps;
    ATTN_TRY(encode_map(ctx, &maps.q, p.q, D, sh->heads, sh->q_len, sh->batch, C::QN, BF16));
    ATTN_TRY(encode_map(ctx, &maps.k, p.k, D, p.Hkv, sh->kv_len, sh->batch, kCwsKeys, BF16));
    const float *lse = kf ? p.lse_kf : wl_traits<WL>::any_ge_mask && DRAW ? p.lse_rows : p.lse;
    ATTN_TRY(encode_lse_map(ctx, &maps.lse, lse, sh->q_len, bh, C::QN));
    if (C::kAux)
      ATTN_TRY(encode_aux_map(ctx, &maps.aux, kf ? p.exp_rand : p.corm_mask, sh, kf ? bh : 1,
                              kSw128Floats, C::QN));
    return launch_ws(ctx, sh, attn_col_ws90<D, WL, BF16, Cache, DRAW>, "attn_col_ws90", maps, p,
                     cache, kCwsThreads, C::smem_bytes(), (sh->kv_len + kCwsKeys - 1) / kCwsKeys,
                     p.Hkv);
  }
}

// The forward (P1): the Hopper kernel when sm90 (the caller's use_sm90 or its cache's path),
// else the sm_80 one; cache: the tile cache policy (NoTileCache for fused).
template <int D, int WL, bool BF16, typename Cache>
static int run_forward(const attn_ctx *ctx, const attn_shape *sh, const Params &p,
                       const Cache &cache, bool sm90) {
  if (sm90) return launch_fwd_sm90<D, WL, BF16>(ctx, sh, p, cache);
  dim3 grid((sh->q_len + kRows - 1) / kRows, sh->heads, sh->batch);
  return launch_cfg(ctx, attn_fwd<D, WL, BF16, Cache>, "attn_fwd", grid, kThreads,
                    fwd_smem_bytes<D, WL>(), p, cache);
}

// corm's mask check and moved LSE (corm_rows.cuh), before its two column passes.
static int corm_rows_prepare(const attn_ctx *ctx, const attn_shape *sh, const Params &p) {
  cudaError_t err = cudaMemsetAsync(p.corm_varied, 0, sizeof(int), ctx->stream);
  if (err != cudaSuccess)
    return attn_fail(ctx, ATTN_ERR, "fused: cudaMemsetAsync failed: %s", cudaGetErrorString(err));
  const unsigned rows = (unsigned)((sh->q_len + kCormRowsWarps - 1) / kCormRowsWarps);
  corm_rows_check<<<rows, kCormRowsWarps * 32, 0, ctx->stream>>>(
      p.corm_mask, sh->q_len, sh->kv_len, p.offset, p.corm_thr, p.corm_varied);
  ATTN_TRY(launched(ctx, "corm_rows_check"));
  const long n = (long)sh->batch * sh->heads * sh->q_len;
  corm_rows_lse<<<(unsigned)((n + 255) / 256), 256, 0, ctx->stream>>>(p.lse, p.corm_thr, p.lse_rows,
                                                                      n, sh->q_len);
  return launched(ctx, "corm_rows_lse");
}

// The column pass (P4): the warp-specialized one when ws (the caller's col_ws_usable or its
// cache's path), else attn_col; then the pool, if the workload pools. corm on the
// warp-specialized pass: the mask check, then the pass against the row thresholds and the one
// with the mask's tiles, of which the check's case keeps one (corm_rows.cuh).
template <int D, int WL, bool BF16, typename Cache>
static int run_column_pass(const attn_ctx *ctx, const attn_shape *sh, const Params &p,
                           const Cache &cache, bool ws) {
  if constexpr (wl_traits<WL>::any_ge_mask && !Cache::kOn)
    if (ws && p.corm_varied) {
      ATTN_TRY(corm_rows_prepare(ctx, sh, p));
      ATTN_TRY((launch_col_ws90<D, WL, BF16, Cache, true>(ctx, sh, p, cache)));
      return launch_col_ws90<D, WL, BF16, Cache, false>(ctx, sh, p, cache);
    }
  int rc;
  if (ws) {
    rc = launch_col_ws90<D, WL, BF16>(ctx, sh, p, cache);
  } else {
    dim3 col_grid(p.Hkv, (sh->kv_len + kRows - 1) / kRows, sh->batch);
    rc = launch_cfg(ctx, attn_col<D, WL, BF16, Cache>, "attn_col", col_grid, kThreads,
                    col_smem_bytes<D, WL>(), p, cache);
  }
  if (rc != ATTN_OK || !wl_traits<WL>::pool) return rc;
  long n = (long)sh->batch * p.Hkv * sh->kv_len;
  pool_avg<<<(unsigned)((n + 255) / 256), 256, 0, ctx->stream>>>(p.col, p.col2, sh->batch * p.Hkv,
                                                                 sh->kv_len, wl_traits<WL>::pool);
  return launched(ctx, "pool_avg");
}

// The workspace of a dense cell (floats): lse [B*H*Lq] | lse_kf [B*H*Lq] (COL_KEYFORMER) or
// corm's lse_rows [B*H*Lq], thresholds [Lq] and count of varying rows [1] (COL_ANY_GE_MASK) |
// unpooled column sums [B*Hkv*Lkv] (pooled workloads). Linear in S.
static size_t dense_lse_floats(workload_id wl, const attn_shape *sh) {
  if (!workload_has_column_pass(wl)) return 0;
  const size_t rows = (size_t)sh->batch * sh->heads * sh->q_len;
  if (workload_table[wl].column == COL_ANY_GE_MASK) return 2 * rows + sh->q_len + 1;
  return rows * (workload_needs_exp_rand(wl) ? 2 : 1);
}
static size_t dense_workspace_bytes(workload_id wl, const attn_shape *sh) {
  size_t floats = dense_lse_floats(wl, sh);
  if (workload_table[wl].pool) floats += (size_t)sh->batch * shape_kv_heads(sh) * sh->kv_len;
  return floats * sizeof(float);
}

// The kernels' parameters of a dense cell: its inputs and outputs, and the workspace laid out
// as dense_workspace_bytes says.
static Params dense_params(workload_id wl, const attn_shape *sh, const attn_io *io,
                           void *workspace) {
  Params p = {};
  p.q = static_cast<const half *>(io->q);
  p.k = static_cast<const half *>(io->k);
  p.v = static_cast<const half *>(io->v);
  p.out = static_cast<half *>(io->out);
  p.exp_rand = io->exp_rand;
  p.corm_mask = io->corm_mask;
  float *ws = static_cast<float *>(workspace);
  const size_t lq = (size_t)sh->batch * sh->heads * sh->q_len;
  p.lse = ws;
  p.lse_kf = workload_needs_exp_rand(wl) ? ws + lq : nullptr;
  if (workload_table[wl].column == COL_ANY_GE_MASK) {
    p.lse_rows = ws + lq;
    p.corm_thr = ws + 2 * lq;
    p.corm_varied = reinterpret_cast<int *>(ws + 2 * lq + sh->q_len);
  }
  // A pooled workload sums columns into the workspace and pools them into io->score (passed
  // as col2).
  const bool pooled = workload_table[wl].pool != 0;
  p.col = pooled ? ws + dense_lse_floats(wl, sh) : io->score;
  p.col2 = pooled ? io->score : io->score2;
  p.flags = io->flags;
  p.B = sh->batch;
  p.H = sh->heads;
  p.Lq = sh->q_len;
  p.Lkv = sh->kv_len;
  p.offset = mask_offset(sh); // Lkv without a mask: no key is ever past the diagonal
  p.scale = (float)shape_scale(sh);
  p.row_stride = (long)sh->heads * sh->dim;
  p.Hkv = shape_kv_heads(sh);
  p.hpg = shape_groups(sh);
  p.kv_row_stride = (long)p.Hkv * sh->dim;
  p.noise_drawn = workload_needs_exp_rand(wl) && io->exp_rand_drawn;
  p.noise = io->exp_rand_draw;
  return p;
}

} // namespace fused
