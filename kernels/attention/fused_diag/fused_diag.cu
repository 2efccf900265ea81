// The `fused-diag` system: the fused system's kernels (kernels/attention/fused/) with a
// diagonal cache of score tiles between its two passes, the DiagCache policy of
// diag_cache.cuh: P1 (the forward) writes the band's exponentials, P4 (the column pass) reads
// them. Options come through ctx->opt: diag_k (key blocks per query block; 0: no cache) and
// cache_fp16 (tiles as fp16, else fp32).
//
//   - h2o, roco, snapkv (statistics of P alone) with diag_k > 0: the fused kernels with the
//     cache, on Hopper the warp-specialized ones (128 x 128 tiles) where the column pass's TMA
//     can load the LSE (Lq % 4 == 0), else and with --force-sm80 the sm_80 ones (64 x 64).
//   - the same workloads with diag_k = 0: the fused system itself, its phases run one at a
//     time (so --phase-times can time P1 and P4 alone): the very kernels of `fused`.
//   - every other workload (attn, gemma2: no column pass; kf, corm: statistics of other
//     quantities): delegated to `fused`, diag_k ignored, impl= says so.
// Errors go through attn_fail; nothing exits.
#include "attn_system.h"
#include "diag_cache.cuh"
#include "fused/fused_launch.cuh"
extern "C" {
#include "kvline.h" // a C header without its own extern "C"
}

#include <stdio.h>

using namespace fused;

namespace {

// cacheable<WL> (diag_cache.cuh) for a runtime workload id.
bool wl_cacheable(workload_id wl) {
  return with_workload(wl, false, [](auto w) { return cacheable<decltype(w)::value>(); });
}
// The cache's kernels run (rather than the fused system's).
bool use_cache(const attn_ctx *ctx, workload_id wl) {
  return ctx && ctx->opt.diag_k > 0 && wl_cacheable(wl);
}
// The cache's kernels are the warp-specialized Hopper ones (else the sm_80 ones): both passes
// on one path, so the forward's tiles are the column pass's.
bool sm90_path(const attn_ctx *ctx, const attn_shape *sh) {
  return hopper(ctx) && sh->q_len % 4 == 0;
}
int tile_of(const attn_ctx *ctx, const attn_shape *sh) {
  return sm90_path(ctx, sh) ? kWsCols : kRows;
}

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Workspace: the fused system's (lse | unpooled column sums), padded to 256 bytes, then the
// cache tiles, then their row maxima.
size_t fused_part_bytes(workload_id wl, const attn_shape *sh) {
  return round_up(dense_workspace_bytes(wl, sh), 256);
}
size_t elem_bytes(const attn_ctx *ctx) { return ctx->opt.cache_fp16 ? 2 : 4; }
long long tiles_total(const attn_ctx *ctx, const attn_shape *sh) {
  return (long long)sh->batch * sh->heads *
         diag_tiles_per_head(diag_blocks(sh->q_len, tile_of(ctx, sh)), ctx->opt.diag_k);
}
size_t cache_bytes(const attn_ctx *ctx, const attn_shape *sh) {
  return diag_cache_bytes(sh->batch, sh->heads, sh->q_len, tile_of(ctx, sh), ctx->opt.diag_k,
                          (long long)elem_bytes(ctx));
}

// The cache over the workspace past the fused system's part.
template <typename CT>
DiagCache<CT> cache_in(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, void *workspace) {
  const int T = tile_of(ctx, sh);
  char *base = static_cast<char *>(workspace) + fused_part_bytes(wl, sh);
  DiagCache<CT> c = {};
  c.k = ctx->opt.diag_k;
  c.tph = diag_tiles_per_head(diag_blocks(sh->q_len, T), c.k);
  c.tiles = base;
  c.rowmax = reinterpret_cast<float *>(base + (size_t)tiles_total(ctx, sh) * T * T * sizeof(CT));
  return c;
}

// P1 or P4 of a cacheable workload with the cache of element type CT.
template <int D, int WL, typename CT>
int run_cached(const attn_ctx *ctx, const attn_shape *sh, const Params &p, const DiagCache<CT> &c,
               int phase) {
  const bool sm90 = sm90_path(ctx, sh);
  if (phase == ATTN_PHASE_P1) return run_forward<D, WL, false>(ctx, sh, p, c, sm90);
  return run_column_pass<D, WL, false>(ctx, sh, p, c, sm90);
}

template <int D>
int run_cached_dim(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const attn_io *io,
                   void *workspace, int phase) {
  const Params p = dense_params(wl, sh, io, workspace);
  return with_workload(wl, (int)ATTN_UNSUPPORTED, [&](auto w) -> int {
    constexpr int WL = decltype(w)::value;
    if constexpr (cacheable<WL>()) {
      if (ctx->opt.cache_fp16)
        return run_cached<D, WL, half>(ctx, sh, p, cache_in<half>(ctx, wl, sh, workspace), phase);
      return run_cached<D, WL, float>(ctx, sh, p, cache_in<float>(ctx, wl, sh, workspace), phase);
    }
    return attn_fail(ctx, ATTN_UNSUPPORTED, "fused-diag: %s has no cache", workload_table[wl].name);
  });
}

} // namespace

static int diag_supports(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, char *why,
                         size_t why_len) {
  int rc = attn_system_fused.supports(ctx, wl, sh, why, why_len);
  if (rc != ATTN_OK) return rc;
  if (ctx && ctx->opt.diag_k < 0) {
    snprintf(why, why_len, "fused-diag: diag_k must be >= 0 (have %d)", ctx->opt.diag_k);
    return ATTN_UNSUPPORTED;
  }
  /* the cache's kernels are instantiated for head dims 64 and 128 and fp16 inputs only (any
   * diag_k: one rule per cell) */
  if (wl_cacheable(wl) && sh->dim != 64 && sh->dim != 128) {
    snprintf(why, why_len, "fused-diag: the diagonal-cache kernels (%s) run head dim 64 and 128",
             workload_table[wl].name);
    return ATTN_UNSUPPORTED;
  }
  if (wl_cacheable(wl) && shape_kv_heads(sh) != sh->heads) {
    snprintf(why, why_len, "fused-diag: the diagonal cache (%s) holds one K/V head per query head",
             workload_table[wl].name);
    return ATTN_UNSUPPORTED;
  }
  if (wl_cacheable(wl) && sh->dtype != DTYPE_FP16) {
    snprintf(why, why_len, "fused-diag: the diagonal-cache kernels (%s) are fp16 only",
             workload_table[wl].name);
    return ATTN_UNSUPPORTED;
  }
  return ATTN_OK;
}

static size_t diag_workspace_bytes(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  if (!use_cache(ctx, wl)) return attn_system_fused.workspace_bytes(ctx, wl, sh);
  return fused_part_bytes(wl, sh) + cache_bytes(ctx, sh);
}

static int diag_run_phase(const attn_ctx *ctx, workload_id wl, const attn_shape *sh,
                          const attn_io *io, void *workspace, int phase) {
  if (!wl_cacheable(wl))
    return attn_fail(ctx, ATTN_UNSUPPORTED, "fused-diag: %s has no P1/P4 phases of its own",
                     workload_table[wl].name);
  if (phase != ATTN_PHASE_P1 && phase != ATTN_PHASE_P4)
    return attn_fail(ctx, ATTN_ERR, "fused-diag: no phase %d", phase);
  if (!use_cache(ctx, wl)) return attn_system_fused.run_phase(ctx, wl, sh, io, workspace, phase);
  return sh->dim == 64 ? run_cached_dim<64>(ctx, wl, sh, io, workspace, phase)
                       : run_cached_dim<128>(ctx, wl, sh, io, workspace, phase);
}

static int diag_run(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const attn_io *io,
                    void *workspace) {
  if (!wl_cacheable(wl)) return attn_system_fused.run(ctx, wl, sh, io, workspace);
  ATTN_TRY(diag_run_phase(ctx, wl, sh, io, workspace, ATTN_PHASE_P1));
  return diag_run_phase(ctx, wl, sh, io, workspace, ATTN_PHASE_P4);
}

// "<kernels>+diag" (the cache's kernels: fused's Hopper impl, or fused-sm80), "<fused's
// impl>+diag0" (k = 0: the fused system), or "+nocache" (a workload the cache does not serve:
// the fused system runs it).
static const char *diag_impl(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  static char buf[64];
  const bool on = use_cache(ctx, wl);
  const char *base = on && !sm90_path(ctx, sh) ? "fused-sm80" : attn_system_fused.impl(ctx, wl, sh);
  const char *tail = !wl_cacheable(wl) ? "+nocache" : on ? "+diag" : "+diag0";
  snprintf(buf, sizeof buf, "%s%s", base, tail);
  return buf;
}

// config keys: cache_tile (T), cached_tiles (tiles P4 reads from the cache instead of
// recomputing), cache_mib (tiles and row maxima).
static void diag_config_kv(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, FILE *out) {
  const bool on = use_cache(ctx, wl);
  kv_putf(out, "cache_tile", "%d", tile_of(ctx, sh));
  kv_putf(out, "cached_tiles", "%lld", on ? tiles_total(ctx, sh) : 0LL);
  const double bytes = on ? (double)cache_bytes(ctx, sh) : 0.0;
  kv_putf(out, "cache_mib", "%.3f", bytes / (1024.0 * 1024.0));
}

extern "C" const attn_system attn_system_fused_diag = {
    "fused-diag", diag_supports,  diag_workspace_bytes, diag_run,
    diag_impl,    diag_config_kv, diag_run_phase};
