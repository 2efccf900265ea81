// The `fused` system: FlashTensor-style kernels that never materialise the S×S matrix.
// attn and gemma2 take one pass (attn_fwd). The column-score workloads take two: attn_fwd
// also writes the row log-sum-exp, then attn_col recomputes the scores column-block-wise and
// reduces them over the queries (and pools the result where the workload pools). Errors are
// returned with their reason in ctx->err (attn_fail), never exited on. See fwd_sm80.cuh,
// col_sm80.cuh and, for which kernel runs where, fused_launch.cuh.
// The dense kernels serve head dims 64, 96, 128 and 256 and GQA (query head h reads K/V head
// h / G; the column statistics are per K/V head). The selected-block workloads (nsa) take their
// own kernel, fused_nsa.cuh.
#include "attn_system.h"
#include "fused_launch.cuh"
#include "fused_nsa.cuh"
#include "fused_nsa_pack.cuh"
#include "selected_blocks.h"

#include <stdio.h>

namespace fused {

// The phases of one dense cell: kAllPhases both, ATTN_PHASE_P1 the forward, ATTN_PHASE_P4 the
// column pass (the workloads that have one).
constexpr int kAllPhases = -1;
template <int D, int WL, bool BF16>
static int run_workload(const attn_ctx *ctx, const attn_shape *sh, const Params &p, int phase) {
  const NoTileCache none;
  int rc = ATTN_OK;
  if (phase != ATTN_PHASE_P4)
    rc = run_forward<D, WL, BF16>(ctx, sh, p, none, use_sm90(ctx, (workload_id)WL, sh));
  if constexpr (needs_lse<WL>())
    if (rc == ATTN_OK && phase != ATTN_PHASE_P1)
      rc = run_column_pass<D, WL, BF16>(ctx, sh, p, none, col_ws_usable<WL>(ctx, sh));
  return rc;
}

template <int D, bool BF16>
static int run_dim(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const Params &p,
                   int phase) {
  return with_workload(wl, (int)ATTN_UNSUPPORTED, [&](auto w) -> int {
    constexpr int WL = decltype(w)::value;
    if constexpr (!wl_traits<WL>::selected_blocks)
      return run_workload<D, WL, BF16>(ctx, sh, p, phase);
    return attn_fail(ctx, ATTN_UNSUPPORTED, "fused: no dense kernel for %s",
                     workload_table[wl].name);
  });
}

// The dense kernels' head dims: f(std::integral_constant<int, D>) for sh->dim (fused_supports
// admits no other).
template <typename F> static auto with_dense_dim(int dim, F &&f) {
  switch (dim) {
  case 64: return f(std::integral_constant<int, 64>());
  case 96: return f(std::integral_constant<int, 96>());
  case 128: return f(std::integral_constant<int, 128>());
  default: return f(std::integral_constant<int, 256>());
  }
}
static bool dense_dim(int dim) { return dim == 64 || dim == 96 || dim == 128 || dim == 256; }

// ---- selected blocks (fused_nsa.cuh) ----------------------------------------------------------

// MT 16-row tiles of query heads per CTA: as many as the group has, up to 4.
static int nsa_tiles(const attn_shape *sh) {
  const int hpg = shape_groups(sh);
  return hpg <= 16 ? 1 : hpg <= 32 ? 2 : 4;
}
static int nsa_head_tiles(const attn_shape *sh) {
  const int rows = 16 * nsa_tiles(sh);
  return (shape_groups(sh) + rows - 1) / rows;
}

template <int D, int MT, bool BF16>
static int launch_nsa(const attn_ctx *ctx, const attn_shape *sh, NsaParams p) {
  using C = NsaCfg<D, MT>;
  p.head_tiles = nsa_head_tiles(sh);
  dim3 grid(sh->q_len, p.Hkv * p.head_tiles, sh->batch);
  return launch_cfg(ctx, nsa_fwd<D, MT, BF16>, "nsa_fwd", grid, kNsaThreads, C::smem_bytes(), p);
}

// Groups of at most 16 heads at D <= 64: a warp per query (nsa_fwd_warp).
static dim3 nsa_warp_grid(const attn_shape *sh) {
  return dim3((sh->q_len + kNsaWarps - 1) / kNsaWarps, shape_kv_heads(sh), sh->batch);
}
template <int D, int NST, bool BF16>
static int launch_nsa_warp_stages(const attn_ctx *ctx, const attn_shape *sh, const NsaParams &p) {
  return launch_cfg(ctx, nsa_fwd_warp<D, NST, BF16>, "nsa_fwd_warp", nsa_warp_grid(sh), kNsaThreads,
                    NsaWarpCfg<D, NST>::smem_bytes(), p);
}
// One stage when every list fits in one chunk.
template <int D, bool BF16>
static int launch_nsa_warp(const attn_ctx *ctx, const attn_shape *sh, const NsaParams &p) {
  if ((long)sh->selected_blocks * sh->block_size > kNsaWarpKeys)
    return launch_nsa_warp_stages<D, 2, BF16>(ctx, sh, p);
  return launch_nsa_warp_stages<D, 1, BF16>(ctx, sh, p);
}

// Groups of 1, 2, 4 or 8 heads with blocks of a multiple of 32 keys: the CTA walks the union of
// its queries' lists (nsa_pack), when the union's bookkeeping fits beside its stages.
constexpr int kNsaPackUnionMaxBytes = 32 * 1024;
static bool nsa_pack_fits(const attn_shape *sh) {
  const int G = shape_groups(sh);
  if (G > kNsaPackMaxGroup || (G & (G - 1)) || sh->block_size % kNsaPackKeys) return false;
  return nsa_pack_union(sh->kv_len, sh->block_size, sh->selected_blocks, G).bytes() <=
         kNsaPackUnionMaxBytes;
}

template <int D, int G, bool BF16>
static int launch_nsa_pack(const attn_ctx *ctx, const attn_shape *sh, const NsaParams &p) {
  const NsaPackUnion un = nsa_pack_union(p.Lkv, p.block_size, p.selected, G);
  const int queries = nsa_pack_cta_queries(G);
  dim3 grid((sh->q_len + queries - 1) / queries, p.Hkv, sh->batch);
  return launch_cfg(ctx, nsa_pack<D, G, BF16>, "nsa_pack", grid, kNsaThreads,
                    NsaPackCfg<D>::kFixedBytes + un.bytes(), p, un);
}

template <int D, bool BF16>
static int run_nsa_dim(const attn_ctx *ctx, const attn_shape *sh, const NsaParams &p) {
  if (nsa_pack_fits(sh)) switch (shape_groups(sh)) {
    case 1: return launch_nsa_pack<D, 1, BF16>(ctx, sh, p);
    case 2: return launch_nsa_pack<D, 2, BF16>(ctx, sh, p);
    case 4: return launch_nsa_pack<D, 4, BF16>(ctx, sh, p);
    default: return launch_nsa_pack<D, 8, BF16>(ctx, sh, p);
    }
  if constexpr (D <= 64)
    if (shape_groups(sh) <= 16) return launch_nsa_warp<D, BF16>(ctx, sh, p);
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
  p.hpg = shape_groups(sh);
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

} // namespace fused

using namespace fused;

// The warp-specialized forward's rows per tile for this cell (ws_fwd_rows; 128 where the
// 192-row kernel is not built: ws_wide_serves).
static int ws_rows_of(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  return with_workload(wl, 128, [&](auto w) {
    return with_dense_dim(sh->dim, [&](auto d) {
      return ws_fwd_rows<decltype(d)::value, decltype(w)::value>(ctx, sh);
    });
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
  if (!dense_dim(sh->dim)) {
    snprintf(why, why_len, "fused kernels support head dim 64, 96, 128 and 256, not %d", sh->dim);
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
  return dense_workspace_bytes(wl, sh);
}

// Whether run_workload takes the warp-specialized column pass for this cell.
static bool col_ws_runs(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  return with_workload(wl, false,
                       [&](auto w) { return col_ws_usable<decltype(w)::value>(ctx, sh); });
}

// Whether run() draws kf's noise itself (attn_io.exp_rand_drawn): where both passes run the
// Hopper kernels, whose consumers compute it in registers (kf_draw.h); the sm_80 kernels read
// the tensor.
static int fused_draws_exp_rand(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  return ctx && (int)wl >= 0 && wl < WL_COUNT && workload_needs_exp_rand(wl) &&
         !workload_selected_blocks(wl) && use_sm90(ctx, wl, sh) && col_ws_runs(ctx, wl, sh);
}

// One cell (kAllPhases) or one of its phases in the element type BF16 picks.
template <bool BF16>
static int run_typed(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const attn_io *io,
                     void *workspace, int phase) {
  if (workload_selected_blocks(wl)) return run_nsa<BF16>(ctx, sh, io);
  if (workload_needs_exp_rand(wl) && io->exp_rand_drawn && !fused_draws_exp_rand(ctx, wl, sh))
    return attn_fail(ctx, ATTN_UNSUPPORTED,
                     "fused: kf's noise is drawn in the Hopper kernels only (this cell runs the "
                     "sm_80 path, which reads exp_rand)");
  const Params p = dense_params(wl, sh, io, workspace);
  return with_dense_dim(
      sh->dim, [&](auto d) { return run_dim<decltype(d)::value, BF16>(ctx, wl, sh, p, phase); });
}

// P1 (the forward) or P4 (the column pass) alone, for --phase-times and for fused-diag at k = 0.
static int fused_run_phase(const attn_ctx *ctx, workload_id wl, const attn_shape *sh,
                           const attn_io *io, void *workspace, int phase) {
  if (phase != ATTN_PHASE_P1 && phase != ATTN_PHASE_P4)
    return attn_fail(ctx, ATTN_ERR, "fused: no phase %d", phase);
  if (!workload_has_column_pass(wl) || workload_selected_blocks(wl))
    return attn_fail(ctx, ATTN_UNSUPPORTED, "fused: %s has no column pass (no P1/P4 phases)",
                     workload_table[wl].name);
  return sh->dtype == DTYPE_BF16 ? run_typed<true>(ctx, wl, sh, io, workspace, phase)
                                 : run_typed<false>(ctx, wl, sh, io, workspace, phase);
}

static int fused_run(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const attn_io *io,
                     void *workspace) {
  return sh->dtype == DTYPE_BF16 ? run_typed<true>(ctx, wl, sh, io, workspace, kAllPhases)
                                 : run_typed<false>(ctx, wl, sh, io, workspace, kAllPhases);
}

// The log's impl: the forward (its tile rows when 192), and for the column-statistic
// workloads which column pass ran.
static const char *fused_impl(const attn_ctx *ctx, workload_id wl, const attn_shape *sh) {
  if (workload_selected_blocks(wl)) return "fused-nsa-mma16816"; // mma.sync on every arch
  if (!hopper(ctx)) return "fused-sm80";
  if (!use_sm90(ctx, wl, sh)) return "fused-sm80"; // kf with Lkv % 4 != 0: no TMA for its noise
  static const char *const names[2][2][2] = {
      // [ws1][192 rows][ws column pass]
      {{"fused-sm90ws-persistent", "fused-sm90ws-persistent-colws"},
       {"fused-sm90ws-persistent-r192", "fused-sm90ws-persistent-r192-colws"}},
      {{"fused-sm90ws1", "fused-sm90ws1-colws"},
       {"fused-sm90ws1-r192", "fused-sm90ws1-r192-colws"}}};
  return names[ctx->sm90_fwd == SM90_FWD_WS1][ws_rows_of(ctx, wl, sh) == 192]
              [col_ws_runs(ctx, wl, sh)];
}

extern "C" const attn_system attn_system_fused = {
    "fused",    fused_supports, fused_workspace_bytes, fused_run,
    fused_impl, NULL,           fused_run_phase,       fused_draws_exp_rand};
