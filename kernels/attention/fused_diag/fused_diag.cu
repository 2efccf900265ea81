// The `fused-diag` system: the fused system (kernels/attention/fused/) with a diagonal cache of score
// tiles between its two passes (fused_diag.cuh: P1 writes the band's exponentials, P4 reads
// them). Options come through ctx->opt: diag_k (key blocks per query block; 0: no cache) and
// cache_fp16 (tiles as fp16, else fp32).
//
//   - h2o, roco, snapkv (statistics of P alone) with diag_k > 0: the diag kernels, on the
//     wgmma path on Hopper (128 x 128 tiles) and the mma.sync path elsewhere or with
//     --force-sm80 (64 x 64 tiles).
//   - the same workloads with diag_k = 0: the fused system's own kernels (the same templates,
//     launched here so that --phase-times can time P1 and P4 alone): bit-identical to `fused`.
//   - every other workload (attn, gemma2: no column pass; kf, corm: statistics of other
//     quantities): delegated to `fused`, diag_k ignored, impl= says so.
// Errors go through attn_fail; nothing exits.
#include "attn_system.h"
#include "fused_diag.cuh"
extern "C" {
#include "kvline.h" // a C header without its own extern "C"
}

#include <stdio.h>

using namespace fused_diag;

namespace {

bool hopper(const attn_ctx *ctx) { return ctx->cc_major == 9 && !ctx->force_sm80; }
int tile_of(const attn_ctx *ctx) { return hopper(ctx) ? kT90 : kT80; }

bool wl_cacheable(workload_id wl) {
  const column_kind col = workload_table[wl].column;
  return col == COL_SUM || col == COL_SUM_SQ;
}
// The diag kernels run (rather than the fused ones).
bool use_cache(const attn_ctx *ctx, workload_id wl) {
  return ctx && ctx->opt.diag_k > 0 && wl_cacheable(wl);
}

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Workspace: the fused system's (lse | unpooled column sums), padded to 256 bytes, then the
// cache tiles, then their row maxima.
size_t fused_part_bytes(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  return round_up(attn_system_fused.workspace_bytes(ctx, wl, sh), 256);
}
size_t elem_bytes(const attn_ctx *ctx) { return ctx->opt.cache_fp16 ? 2 : 4; }
long long tiles_total(const attn_ctx *ctx, const attn_shape *sh) {
  const int T = tile_of(ctx);
  return (long long)sh->batch * sh->heads *
         diag_tiles_per_head(diag_blocks(sh->q_len, T), ctx->opt.diag_k);
}

int launched(const attn_ctx *ctx, const char *what) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return ATTN_OK;
  return attn_fail(ctx, ATTN_ERR, "fused-diag: launching %s failed: %s", what,
                   cudaGetErrorString(err));
}

template <typename Kernel, typename... Args>
int launch(const attn_ctx *ctx, Kernel kernel, const char *name, dim3 grid, int threads, int smem,
           Args... args) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess)
    return attn_fail(ctx, ATTN_ERR, "fused-diag: cudaFuncSetAttribute(%s) failed: %s", name,
                     cudaGetErrorString(err));
  kernel<<<grid, threads, smem, ctx->stream>>>(args...);
  return launched(ctx, name);
}

// P1: the forward. k = 0: the fused kernels exactly as the fused system launches them for
// these workloads (attn_fwd_sm90<D, WL, 2, 128> on Hopper, attn_fwd elsewhere).
template <int D, int WL, typename CT>
int phase_p1(const attn_ctx *ctx, const attn_shape *sh, const Params &p, const DiagCache &c) {
  const bool h = hopper(ctx);
  const int rows = h ? kT90 : kRows;
  const dim3 grid((sh->q_len + rows - 1) / rows, sh->heads, sh->batch);
  if (c.k == 0) {
    if (h)
      return launch(ctx, attn_fwd_sm90<D, WL, 2, kT90>, "attn_fwd_sm90", grid, Fwd90::kThreads,
                    Fwd90::smem_bytes<D>(), p);
    return launch(ctx, attn_fwd<D, WL>, "attn_fwd", grid, kThreads, fwd_smem_bytes<D, WL>(), p);
  }
  if (h)
    return launch(ctx, diag_fwd_sm90<D, WL, CT>, "diag_fwd_sm90", grid, Fwd90::kThreads,
                  Fwd90::smem_bytes<D>(), p, c);
  return launch(ctx, diag_fwd_sm80<D, WL, CT>, "diag_fwd_sm80", grid, kThreads,
                fwd_smem_bytes<D, WL>(), p, c);
}

// P4: the column pass (and the pool of the pooled workloads).
template <int D, int WL, typename CT>
int phase_p4(const attn_ctx *ctx, const attn_shape *sh, const Params &p, const DiagCache &c) {
  const bool h = hopper(ctx);
  const int keys = h ? kCol90Keys : kRows;
  const dim3 grid(sh->heads, (sh->kv_len + keys - 1) / keys, sh->batch);
  int rc;
  if (c.k == 0 && h)
    rc = launch(ctx, attn_col_sm90<D, WL>, "attn_col_sm90", grid, kCol90Threads,
                col90_smem_bytes<D, WL>(), p);
  else if (c.k == 0)
    rc = launch(ctx, attn_col<D, WL>, "attn_col", grid, kThreads, col_smem_bytes<D, WL>(), p);
  else if (h)
    rc = launch(ctx, diag_col_sm90<D, WL, CT>, "diag_col_sm90", grid, kCol90Threads,
                diag_col90_smem_bytes<D>(), p, c);
  else
    rc = launch(ctx, diag_col_sm80<D, WL, CT>, "diag_col_sm80", grid, kThreads,
                col_smem_bytes<D, WL>(), p, c);
  if (rc != ATTN_OK || !wl_traits<WL>::pool) return rc;
  const long n = (long)sh->batch * sh->heads * sh->kv_len;
  const unsigned blocks = (unsigned)((n + 255) / 256);
  pool_avg<<<blocks, 256, 0, ctx->stream>>>(p.col, p.col2, sh->batch * sh->heads, sh->kv_len,
                                            wl_traits<WL>::pool);
  return launched(ctx, "pool_avg");
}

template <int D, int WL, typename CT>
int run_phase_t(const attn_ctx *ctx, const attn_shape *sh, const Params &p, const DiagCache &c,
                int phase) {
  if (phase == ATTN_PHASE_P1) return phase_p1<D, WL, CT>(ctx, sh, p, c);
  return phase_p4<D, WL, CT>(ctx, sh, p, c);
}

template <int D>
int run_phase_dim(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const Params &p,
                  const DiagCache &c, int phase) {
  return with_workload(wl, (int)ATTN_UNSUPPORTED, [&](auto w) -> int {
    constexpr int WL = decltype(w)::value;
    if constexpr (cacheable<WL>()) {
      if (ctx->opt.cache_fp16) return run_phase_t<D, WL, half>(ctx, sh, p, c, phase);
      return run_phase_t<D, WL, float>(ctx, sh, p, c, phase);
    }
    return attn_fail(ctx, ATTN_UNSUPPORTED, "fused-diag: %s has no P1/P4 phases of its own",
                     workload_table[wl].name);
  });
}

} // namespace

static int diag_supports(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, char *why,
                         size_t why_len) {
  int rc = attn_system_fused.supports(ctx, wl, sh, why, why_len);
  if (rc != ATTN_OK) return rc;
  /* the cached workloads always run fused-diag's own kernels, built on the lockstep sm_90a
   * forward (the warp-specialized one has no cache stores); impl= says which ran */
  if (ctx && ctx->opt.diag_k < 0) {
    snprintf(why, why_len, "fused-diag: diag_k must be >= 0 (have %d)", ctx->opt.diag_k);
    return ATTN_UNSUPPORTED;
  }
  /* fused runs bf16; the cache's own kernels (h2o, roco, snapkv) read their tiles as fp16 */
  if (wl_cacheable(wl) && sh->dtype != DTYPE_FP16) {
    snprintf(why, why_len, "fused-diag: the diagonal-cache kernels (%s) are fp16 only",
             workload_table[wl].name);
    return ATTN_UNSUPPORTED;
  }
  return ATTN_OK;
}

static size_t diag_workspace_bytes(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  if (!use_cache(ctx, wl)) return attn_system_fused.workspace_bytes(ctx, wl, sh);
  return fused_part_bytes(ctx, wl, sh) + diag_cache_bytes(sh->batch, sh->heads, sh->q_len,
                                                          tile_of(ctx), ctx->opt.diag_k,
                                                          (long long)elem_bytes(ctx));
}

static int diag_run_phase(const attn_ctx *ctx, workload_id wl, const attn_shape *sh,
                          const attn_io *io, void *workspace, int phase) {
  if (!wl_cacheable(wl))
    return attn_fail(ctx, ATTN_UNSUPPORTED, "fused-diag: %s has no P1/P4 phases of its own",
                     workload_table[wl].name);
  if (phase != ATTN_PHASE_P1 && phase != ATTN_PHASE_P4)
    return attn_fail(ctx, ATTN_ERR, "fused-diag: no phase %d", phase);
  // The fused system's parameters for these workloads (fused_run in kernels/attention/fused/fused.cu).
  Params p = {};
  p.q = static_cast<const half *>(io->q);
  p.k = static_cast<const half *>(io->k);
  p.v = static_cast<const half *>(io->v);
  p.out = static_cast<half *>(io->out);
  float *ws = static_cast<float *>(workspace);
  p.lse = ws;
  const bool pooled = workload_table[wl].pool != 0;
  p.col = pooled ? ws + (size_t)sh->batch * sh->heads * sh->q_len : io->score;
  p.col2 = pooled ? io->score : io->score2;
  p.B = sh->batch;
  p.H = sh->heads;
  p.Lq = sh->q_len;
  p.Lkv = sh->kv_len;
  p.offset = mask_offset(sh);
  p.scale = (float)shape_scale(sh);
  p.row_stride = (long)sh->heads * sh->dim;

  DiagCache c = {};
  c.k = use_cache(ctx, wl) ? ctx->opt.diag_k : 0;
  if (c.k > 0) {
    const int T = tile_of(ctx);
    c.tph = diag_tiles_per_head(diag_blocks(sh->q_len, T), c.k);
    char *base = static_cast<char *>(workspace) + fused_part_bytes(ctx, wl, sh);
    c.tiles = base;
    c.rowmax =
        reinterpret_cast<float *>(base + (size_t)tiles_total(ctx, sh) * T * T * elem_bytes(ctx));
  }
  return sh->dim == 64 ? run_phase_dim<64>(ctx, wl, sh, p, c, phase)
                       : run_phase_dim<128>(ctx, wl, sh, p, c, phase);
}

static int diag_run(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const attn_io *io,
                    void *workspace) {
  if (!wl_cacheable(wl)) return attn_system_fused.run(ctx, wl, sh, io, workspace);
  ATTN_TRY(diag_run_phase(ctx, wl, sh, io, workspace, ATTN_PHASE_P1));
  return diag_run_phase(ctx, wl, sh, io, workspace, ATTN_PHASE_P4);
}

// "<fused's impl>+diag" (the cache's kernels), "+diag0" (k = 0: the fused kernels), or
// "+nocache" (a workload the cache does not serve: the fused system runs it).
static const char *diag_impl(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  static char buf[64];
  const char *base = attn_system_fused.impl(ctx, wl, sh);
  const char *tail = !wl_cacheable(wl) ? "+nocache" : use_cache(ctx, wl) ? "+diag" : "+diag0";
  snprintf(buf, sizeof buf, "%s%s", base, tail);
  return buf;
}

// config keys: cache_tile (T), cached_tiles (tiles P4 reads from the cache instead of
// recomputing), cache_mib (tiles and row maxima).
static void diag_config_kv(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, FILE *out) {
  const bool on = use_cache(ctx, wl);
  const int T = tile_of(ctx);
  kv_putf(out, "cache_tile", "%d", T);
  kv_putf(out, "cached_tiles", "%lld", on ? tiles_total(ctx, sh) : 0LL);
  const double bytes = on ? (double)diag_cache_bytes(sh->batch, sh->heads, sh->q_len, T,
                                                     ctx->opt.diag_k, (long long)elem_bytes(ctx))
                          : 0.0;
  kv_putf(out, "cache_mib", "%.3f", bytes / (1024.0 * 1024.0));
}

extern "C" const attn_system attn_system_fused_diag = {
    "fused-diag", diag_supports,  diag_workspace_bytes, diag_run,
    diag_impl,    diag_config_kv, diag_run_phase};
