// The `fused` system: FlashTensor-style kernels that never materialise the S×S matrix.
// attn and gemma2 take one pass (attn_fwd). The column-score workloads take two: attn_fwd
// also writes the row log-sum-exp, then attn_col recomputes the scores column-block-wise and
// reduces them over the queries (and pools the result where the workload pools). Errors are
// returned with their reason in ctx->err (attn_fail), never exited on. See fused_sm80.cuh.
// The selected-block workloads (nsa) take their own kernel, fused_nsa.cuh.
#include "attn_system.h"
#include "fused_colws90.cuh"
#include "fused_nsa.cuh"
#include "fused_sm90.cuh"
#include "fused_ws90.cuh"
#include "selected_blocks.h"
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

template <typename Kernel, typename P>
static int launch_cfg(const attn_ctx *ctx, Kernel kernel, const char *name, dim3 grid, int threads,
                      int smem, const P &p) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess)
    return attn_fail(ctx, ATTN_ERR, "fused: cudaFuncSetAttribute(%s) failed: %s", name,
                     cudaGetErrorString(err));
  kernel<<<grid, threads, smem, ctx->stream>>>(p);
  return launched(ctx, name);
}

template <typename Kernel>
static int launch(const attn_ctx *ctx, Kernel kernel, const char *name, dim3 grid, int smem,
                  const Params &p) {
  return launch_cfg(ctx, kernel, name, grid, kThreads, smem, p);
}

// Hopper runs the wgmma kernels unless --force-sm80 asks for the mma.sync path.
static bool hopper(const attn_ctx *ctx) { return ctx->cc_major == 9 && !ctx->force_sm80; }
// The Hopper forwards serve every workload but kf, whose noise tiles only the
// warp-specialized one loads (by TMA: a row pitch of a multiple of 16 bytes, Lkv % 4 == 0);
// otherwise kf's forward is the sm_80 kernel.
static bool use_sm90(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  if (!hopper(ctx)) return false;
  if (workload_table[wl].column != COL_KEYFORMER) return true;
  return ctx->sm90_fwd != SM90_FWD_LOCKSTEP && sh->kv_len % 4 == 0;
}

// Tile configurations measured on an H200 (PERF-fused.md, v4): two warpgroups sharing
// 128-key stages beat one warpgroup per CTA and 64-key stages.
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
// 128B-swizzled, rows past L read as zeros.
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

// How many (batch, head) pairs the tile schedule interleaves (fused_ws90.cuh). Without a mask
// every tile costs the same and the order only decides which running CTAs share K/V blocks:
// one head at a time shares most (B16 H96 non-causal: 30.4 ms at 1, 33.0 at 8). Under the
// causal mask the heaviest-first order needs a few heads' light tiles to even out the last
// wave: twice the tiles that run at once (8 heads at S=4096, D=128) was best at B1 (v14: 0.292
// ms; 4 heads 0.295, 16 0.301, 32 0.318) and level at B16 (PERF-fused.md, v12-v14).
static int ws_heads_per_chunk(int sm_count, long qtiles_per_head, int pairs, bool causal) {
  const long chunk = causal ? 2 * sm_count / qtiles_per_head : 1;
  return (int)(chunk < 1 ? 1 : chunk > pairs ? pairs : chunk);
}

// A warp-specialized kernel (the forward, fused_ws90.cuh, or the column pass,
// fused_colws90.cuh) over `blocks` blocks per (batch, head) pair: one CTA per SM (its shared
// memory allows no second), each claiming tiles, or with --sm90-fwd ws1 one CTA per tile; the
// tile order interleaves ws_heads_per_chunk pairs.
template <typename Kernel, typename Maps>
static int launch_ws(const attn_ctx *ctx, const attn_shape *sh, Kernel kernel, const char *name,
                     const Maps &maps, const Params &p, int threads, int smem, long blocks) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess)
    return attn_fail(ctx, ATTN_ERR, "fused: cudaFuncSetAttribute(%s) failed: %s", name,
                     cudaGetErrorString(err));
  const long ntiles = blocks * sh->heads * sh->batch;
  if (ntiles > INT_MAX)
    return attn_fail(ctx, ATTN_UNSUPPORTED, "fused: %ld tiles of %s exceed the kernel's int range",
                     ntiles, name);
  const bool persistent = ctx->sm90_fwd == SM90_FWD_WS && ctx->sm_count > 0;
  const int grid = persistent && ntiles > ctx->sm_count ? ctx->sm_count : (int)ntiles;
  const int chunk =
      ws_heads_per_chunk(ctx->sm_count, blocks, sh->batch * sh->heads, p.offset < sh->kv_len);
  kernel<<<grid, threads, smem, ctx->stream>>>(maps, p, chunk);
  return launched(ctx, name);
}

// The warp-specialized forward's query rows per tile (64 per consumer warpgroup): 192 where
// ws_wide_serves and --sm90-rows ask for it, or by default where it measured faster (v25,
// v26; D = 64, same-run ratios against 128-row tiles): without a mask at 4 waves of 192-row
// tiles or more (B16 H96 -5.5 %, B4 H32 -7 %, B1 H32 at 5.3 waves level to -1.7 %; fewer
// waves not measured: a wave of 192-row tiles is 1.5x the work of one of 128-row tiles);
// under a causal mask, where a tile's work grows along the diagonal and the last wave is
// uneven, at 16 waves or more (B16 H96 S4096 -4.2 %, B16 H32 S2048 -4.5 %, B4 H32 S8192 -3.9 %,
// B4 H32 S4096 at 21 waves -2 %; slower at 5.3-11.6 waves: B1 H32 +2 %, B2 H32 +4.6 %, B2 H16
// S8192 +4 %, B8 H32 S1024 +2 %).
template <int D, int WL> static int ws_fwd_rows(const attn_ctx *ctx, const attn_shape *sh) {
  if (!ws_wide_serves<D, WL>() || ctx->sm90_rows == SM90_ROWS_128) return 128;
  if (ctx->sm90_rows == SM90_ROWS_192) return 192;
  const long tiles = (sh->q_len + 191L) / 192 * sh->heads * sh->batch;
  const long min_waves = mask_offset(sh) < sh->kv_len ? 16 : 4;
  return ctx->sm_count > 0 && tiles >= min_waves * ctx->sm_count ? 192 : 128;
}

// The warp-specialized forward (fused_ws90.cuh), the default on Hopper (v9, persistent since
// v10); --sm90-fwd lockstep runs the v4-v8 kernel instead. NC consumer warpgroups.
template <int D, int WL, bool BF16, int NC>
static int launch_fwd_ws90(const attn_ctx *ctx, const attn_shape *sh, const Params &p) {
  WsMaps maps;
  using C = WsCfg<D, WL, NC>;
  ATTN_TRY(encode_map(ctx, &maps.q, p.q, D, sh->heads, sh->q_len, sh->batch, C::kRows, BF16));
  ATTN_TRY(encode_map(ctx, &maps.k, p.k, D, sh->heads, sh->kv_len, sh->batch, kWsCols, BF16));
  ATTN_TRY(encode_map(ctx, &maps.v, p.v, D, sh->heads, sh->kv_len, sh->batch, kWsCols, BF16));
  if (C::kNoise) // exp_rand [B*H, Lq, Lkv], boxes of one consumer's 64 rows
    ATTN_TRY(
        encode_aux_map(ctx, &maps.noise, p.exp_rand, sh, sh->batch * sh->heads, kSw128Floats, 64));
  return launch_ws(ctx, sh, attn_fwd_ws90<D, WL, BF16, NC>, "attn_fwd_ws90", maps, p, C::kThreads,
                   C::smem_bytes(), (sh->q_len + C::kRows - 1) / C::kRows);
}

template <int D, int WL, bool BF16>
static int launch_fwd_sm90(const attn_ctx *ctx, const attn_shape *sh, const Params &p) {
  if (ctx->sm90_fwd != SM90_FWD_LOCKSTEP) {
    if constexpr (ws_wide_serves<D, WL>())
      if (ws_fwd_rows<D, WL>(ctx, sh) == 192) return launch_fwd_ws90<D, WL, BF16, 3>(ctx, sh, p);
    return launch_fwd_ws90<D, WL, BF16, 2>(ctx, sh, p);
  }
  if constexpr (wl_traits<WL>::keyformer) { // use_sm90 keeps kf off the lockstep kernel
    return attn_fail(ctx, ATTN_ERR, "fused: the lockstep forward has no kf variant");
  } else {
    using C = Cfg90<2, 128>;
    dim3 grid((sh->q_len + C::kRows - 1) / C::kRows, sh->heads, sh->batch);
    return launch_cfg(ctx, attn_fwd_sm90<D, WL, 2, 128, BF16>, "attn_fwd_sm90", grid, C::kThreads,
                      C::template smem_bytes<D>(), p);
  }
}

// The warp-specialized column pass (fused_colws90.cuh) runs next to the warp-specialized
// forward; the lockstep forward keeps attn_col_sm90. TMA wants row pitches of a multiple of 16
// bytes: the LSE's (Lq % 4 == 0) and the aux input's (Lkv % 4 == 0).
template <int WL> static bool col_ws_usable(const attn_ctx *ctx, const attn_shape *sh) {
  return col_ws_serves<WL>() && ctx->sm90_fwd != SM90_FWD_LOCKSTEP && sh->q_len % 4 == 0 &&
         (!has_aux<WL>() || sh->kv_len % 4 == 0);
}

template <int D, int WL, bool BF16>
static int launch_col_ws90(const attn_ctx *ctx, const attn_shape *sh, const Params &p) {
  if constexpr (!col_ws_serves<WL>()) {
    return attn_fail(ctx, ATTN_ERR, "fused: no ws column pass for this workload");
  } else {
    using C = ColWsCfg<WL>;
    constexpr bool kf = wl_traits<WL>::keyformer;
    const int bh = sh->batch * sh->heads;
    ColWsMaps maps;
    ATTN_TRY(encode_map(ctx, &maps.q, p.q, D, sh->heads, sh->q_len, sh->batch, C::QN, BF16));
    ATTN_TRY(encode_map(ctx, &maps.k, p.k, D, sh->heads, sh->kv_len, sh->batch, kCwsKeys, BF16));
    ATTN_TRY(encode_lse_map(ctx, &maps.lse, kf ? p.lse_kf : p.lse, sh->q_len, bh, C::QN));
    if (C::kAux)
      ATTN_TRY(encode_aux_map(ctx, &maps.aux, kf ? p.exp_rand : p.corm_mask, sh, kf ? bh : 1,
                              kSw128Floats, C::QN));
    return launch_ws(ctx, sh, attn_col_ws90<D, WL, BF16>, "attn_col_ws90", maps, p, kCwsThreads,
                     C::template smem_bytes<D>(), (sh->kv_len + kCwsKeys - 1) / kCwsKeys);
  }
}

// The forward: a Hopper kernel where use_sm90 says so, else the sm_80 one.
template <int D, int WL, bool BF16>
static int run_forward(const attn_ctx *ctx, const attn_shape *sh, const Params &p) {
  if (use_sm90(ctx, (workload_id)WL, sh)) return launch_fwd_sm90<D, WL, BF16>(ctx, sh, p);
  dim3 grid((sh->q_len + kRows - 1) / kRows, sh->heads, sh->batch);
  return launch(ctx, attn_fwd<D, WL, BF16>, "attn_fwd", grid, fwd_smem_bytes<D, WL>(), p);
}

// The column pass: the warp-specialized one where it can run, else attn_col_sm90 on Hopper and
// attn_col elsewhere; then the pool, if the workload pools.
template <int D, int WL, bool BF16>
static int run_column_pass(const attn_ctx *ctx, const attn_shape *sh, const Params &p) {
  int rc;
  if (hopper(ctx) && col_ws_usable<WL>(ctx, sh)) {
    rc = launch_col_ws90<D, WL, BF16>(ctx, sh, p);
  } else if (hopper(ctx)) {
    dim3 grid(sh->heads, (sh->kv_len + kCol90Keys - 1) / kCol90Keys, sh->batch);
    rc = launch_cfg(ctx, attn_col_sm90<D, WL, BF16>, "attn_col_sm90", grid, kCol90Threads,
                    col90_smem_bytes<D, WL>(), p);
  } else {
    dim3 col_grid(sh->heads, (sh->kv_len + kRows - 1) / kRows, sh->batch);
    rc = launch(ctx, attn_col<D, WL, BF16>, "attn_col", col_grid, col_smem_bytes<D, WL>(), p);
  }
  if (rc != ATTN_OK || !wl_traits<WL>::pool) return rc;
  long n = (long)sh->batch * sh->heads * sh->kv_len;
  pool_avg<<<(unsigned)((n + 255) / 256), 256, 0, ctx->stream>>>(
      p.col, p.col2, sh->batch * sh->heads, sh->kv_len, wl_traits<WL>::pool);
  return launched(ctx, "pool_avg");
}

template <int D, int WL, bool BF16>
static int run_workload(const attn_ctx *ctx, const attn_shape *sh, const Params &p) {
  int rc = run_forward<D, WL, BF16>(ctx, sh, p);
  if constexpr (needs_lse<WL>())
    if (rc == ATTN_OK) rc = run_column_pass<D, WL, BF16>(ctx, sh, p);
  return rc;
}

template <int D, bool BF16>
static int run_dim(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const Params &p) {
  return with_workload(wl, (int)ATTN_UNSUPPORTED, [&](auto w) -> int {
    constexpr int WL = decltype(w)::value;
    if constexpr (!wl_traits<WL>::selected_blocks) return run_workload<D, WL, BF16>(ctx, sh, p);
    return attn_fail(ctx, ATTN_UNSUPPORTED, "fused: no dense kernel for %s",
                     workload_table[wl].name);
  });
}

// ---- selected blocks (fused_nsa.cuh) ----------------------------------------------------------

// MT 16-row tiles of query heads per CTA: as many as the group has, up to 4.
static int nsa_tiles(const attn_shape *sh) {
  const int hpg = sh->heads / shape_kv_heads(sh);
  return hpg <= 16 ? 1 : hpg <= 32 ? 2 : 4;
}
static int nsa_head_tiles(const attn_shape *sh) {
  const int rows = 16 * nsa_tiles(sh);
  return (sh->heads / shape_kv_heads(sh) + rows - 1) / rows;
}

template <int D, int MT, bool BF16>
static int launch_nsa(const attn_ctx *ctx, const attn_shape *sh, NsaParams p) {
  using C = NsaCfg<D, MT>;
  p.head_tiles = nsa_head_tiles(sh);
  dim3 grid(sh->q_len, p.Hkv * p.head_tiles, sh->batch);
  return launch_cfg(ctx, nsa_fwd<D, MT, BF16>, "nsa_fwd", grid, kNsaThreads, C::smem_bytes(), p);
}

template <int D, bool BF16>
static int run_nsa_dim(const attn_ctx *ctx, const attn_shape *sh, const NsaParams &p) {
  switch (nsa_tiles(sh)) {
  case 1: return launch_nsa<D, 1, BF16>(ctx, sh, p);
  case 2: return launch_nsa<D, 2, BF16>(ctx, sh, p);
  default: return launch_nsa<D, 4, BF16>(ctx, sh, p);
  }
}

template <bool BF16>
static int run_nsa(const attn_ctx *ctx, const attn_shape *sh, const attn_io *io) {
  NsaParams p = {};
  p.q = static_cast<const half *>(io->q);
  p.k = static_cast<const half *>(io->k);
  p.v = static_cast<const half *>(io->v);
  p.out = static_cast<half *>(io->out);
  p.idx = io->block_idx;
  p.B = sh->batch;
  p.H = sh->heads;
  p.Hkv = shape_kv_heads(sh);
  p.Lq = sh->q_len;
  p.Lkv = sh->kv_len;
  p.hpg = sh->heads / p.Hkv;
  p.block_size = sh->block_size;
  p.selected = sh->selected_blocks;
  p.offset = mask_offset(sh);
  p.scale_log2 = (float)shape_scale(sh) * kLog2e;
  switch (sh->dim) {
  case 32: return run_nsa_dim<32, BF16>(ctx, sh, p);
  case 64: return run_nsa_dim<64, BF16>(ctx, sh, p);
  default: return run_nsa_dim<128, BF16>(ctx, sh, p);
  }
}

// What the selected-block kernel cannot run (after the common checks), else NULL.
static const char *nsa_problem(const attn_shape *sh, char *why, size_t why_len) {
  const char *problem = sb_shape_problem(sh);
  if (problem) return problem;
  if (sh->dim != 32 && sh->dim != 64 && sh->dim != 128) {
    snprintf(why, why_len,
             "the fused selected-block kernel supports head dim 32, 64 and 128, not %d", sh->dim);
    return why;
  }
  if ((long)shape_kv_heads(sh) * nsa_head_tiles(sh) > 65535 || sh->batch > 65535) {
    snprintf(why, why_len, "K/V heads * head tiles or batch exceeds the grid (65535)");
    return why;
  }
  return NULL;
}

// Workspace layout (floats): lse [B*H*Lq] | lse_kf [B*H*Lq] (COL_KEYFORMER) | unpooled
// column sums [B*H*Lkv] (pooled workloads). Linear in S.
static size_t ws_lse_floats(workload_id wl, const attn_shape *sh) {
  if (!workload_has_column_pass(wl)) return 0;
  return (size_t)sh->batch * sh->heads * sh->q_len * (workload_needs_exp_rand(wl) ? 2 : 1);
}

} // namespace fused

using namespace fused;

// The warp-specialized forward's rows per tile for this cell (ws_fwd_rows; 128 where the
// 192-row kernel is not built: ws_wide_serves).
static int ws_rows_of(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  return with_workload(wl, 128, [&](auto w) {
    constexpr int WL = decltype(w)::value;
    return sh->dim == 64 ? ws_fwd_rows<64, WL>(ctx, sh) : ws_fwd_rows<128, WL>(ctx, sh);
  });
}

static int fused_supports(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, char *why,
                          size_t why_len) {
  if (ctx && ctx->cc_major < 8) {
    snprintf(why, why_len, "fused kernels need compute capability >= 8.0 (have %d.%d)",
             ctx->cc_major, ctx->cc_minor);
    return ATTN_UNSUPPORTED;
  }
  if (sh->dtype != DTYPE_FP16 && sh->dtype != DTYPE_BF16) {
    snprintf(why, why_len, "fused kernels run fp16 and bf16 only");
    return ATTN_UNSUPPORTED;
  }
  if ((int)wl >= 0 && wl < WL_COUNT && ctx && ctx->sm90_rows == SM90_ROWS_192 &&
      ws_rows_of(ctx, wl, sh) != 192) {
    snprintf(why, why_len,
             "--sm90-rows 192: the 192-row forward is built for attn-like workloads (no "
             "softcap, column statistic, noise or selected blocks) at head dim 64 only");
    return ATTN_UNSUPPORTED;
  }
  if ((int)wl >= 0 && wl < WL_COUNT && workload_selected_blocks(wl)) {
    const char *problem = nsa_problem(sh, why, why_len);
    if (problem && problem != why) snprintf(why, why_len, "%s", problem);
    return problem ? ATTN_UNSUPPORTED : ATTN_OK;
  }
  if (sh->dim != 64 && sh->dim != 128) {
    snprintf(why, why_len, "fused kernels support head dim 64 and 128, not %d", sh->dim);
    return ATTN_UNSUPPORTED;
  }
  if (sh->q_len < 1 || sh->q_len > sh->kv_len) {
    snprintf(why, why_len, "fused kernels need 1 <= q_len <= kv_len (have %d, %d)", sh->q_len,
             sh->kv_len);
    return ATTN_UNSUPPORTED;
  }
  if ((int)wl < 0 || wl >= WL_COUNT) {
    snprintf(why, why_len, "unknown workload %d", (int)wl);
    return ATTN_UNSUPPORTED;
  }
  if (workload_table[wl].pool && workload_table[wl].column != COL_SUM) {
    snprintf(why, why_len, "fused kernels pool COL_SUM statistics only");
    return ATTN_UNSUPPORTED;
  }
  return ATTN_OK;
}

static size_t fused_workspace_bytes(const attn_ctx *, workload_id wl, const attn_shape *sh) {
  size_t floats = ws_lse_floats(wl, sh);
  if (workload_table[wl].pool) floats += (size_t)sh->batch * sh->heads * sh->kv_len;
  return floats * sizeof(float);
}

// One cell in the element type BF16 picks (fused_run).
template <bool BF16>
static int run_typed(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const attn_io *io,
                     void *workspace) {
  if (workload_selected_blocks(wl)) return run_nsa<BF16>(ctx, sh, io);
  Params p = {};
  p.q = static_cast<const half *>(io->q);
  p.k = static_cast<const half *>(io->k);
  p.v = static_cast<const half *>(io->v);
  p.out = static_cast<half *>(io->out);
  p.exp_rand = io->exp_rand;
  p.corm_mask = io->corm_mask;
  float *ws = static_cast<float *>(workspace);
  size_t lq = (size_t)sh->batch * sh->heads * sh->q_len;
  p.lse = ws;
  p.lse_kf = workload_needs_exp_rand(wl) ? ws + lq : nullptr;
  // A pooled workload sums columns into the workspace and pools them into io->score (passed
  // as col2).
  const bool pooled = workload_table[wl].pool != 0;
  p.col = pooled ? ws + ws_lse_floats(wl, sh) : io->score;
  p.col2 = pooled ? io->score : io->score2;
  p.flags = io->flags;
  p.B = sh->batch;
  p.H = sh->heads;
  p.Lq = sh->q_len;
  p.Lkv = sh->kv_len;
  p.offset = mask_offset(sh); // Lkv without a mask: no key is ever past the diagonal
  p.scale = (float)shape_scale(sh);
  p.row_stride = (long)sh->heads * sh->dim;
  return sh->dim == 64 ? run_dim<64, BF16>(ctx, wl, sh, p) : run_dim<128, BF16>(ctx, wl, sh, p);
}

static int fused_run(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const attn_io *io,
                     void *workspace) {
  return sh->dtype == DTYPE_BF16 ? run_typed<true>(ctx, wl, sh, io, workspace)
                                 : run_typed<false>(ctx, wl, sh, io, workspace);
}

// Whether run_workload takes the warp-specialized column pass for this cell.
static bool col_ws_runs(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  return with_workload(
      wl, false, [&](auto w) { return hopper(ctx) && col_ws_usable<decltype(w)::value>(ctx, sh); });
}

// The log's impl: the forward (its tile rows when 192), and for the column-statistic
// workloads which column pass ran.
static const char *fused_impl(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  if (workload_selected_blocks(wl)) return "fused-nsa-mma16816"; // mma.sync on every arch
  if (!hopper(ctx)) return "fused-sm80";
  if (!use_sm90(ctx, wl, sh)) return "fused-sm80fwd-sm90col";
  if (ctx->sm90_fwd == SM90_FWD_LOCKSTEP) return "fused-sm90";
  static const char *const names[2][2][2] = {
      // [ws1][192 rows][ws column pass]
      {{"fused-sm90ws-persistent", "fused-sm90ws-persistent-colws"},
       {"fused-sm90ws-persistent-r192", "fused-sm90ws-persistent-r192-colws"}},
      {{"fused-sm90ws1", "fused-sm90ws1-colws"},
       {"fused-sm90ws1-r192", "fused-sm90ws1-r192-colws"}}};
  return names[ctx->sm90_fwd == SM90_FWD_WS1][ws_rows_of(ctx, wl, sh) == 192]
              [col_ws_runs(ctx, wl, sh)];
}

extern "C" const attn_system attn_system_fused = {"fused", fused_supports, fused_workspace_bytes,
                                                  fused_run, fused_impl};
