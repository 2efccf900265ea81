// The `fused` system: FlashTensor-style kernels that never materialise the S×S matrix.
// attn and gemma2 take one pass (attn_fwd). The column-score workloads take two: attn_fwd
// also writes the row log-sum-exp, then attn_col recomputes the scores column-block-wise and
// reduces them over the queries (and snapkv pools the result). See fused_sm80.cuh.
#include "attnvar.h"
#include "fused_sm90.cuh"

#include <stdio.h>

namespace fused {

// One launch's error, reported with the kernel's name; run() returns ATTN_ERR on any.
static int launched(const char *what) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return ATTN_OK;
  fprintf(stderr, "fused: launching %s failed: %s\n", what, cudaGetErrorString(err));
  return ATTN_ERR;
}

template <typename Kernel>
static int launch_cfg(Kernel kernel, const char *name, dim3 grid, int threads, int smem,
                      cudaStream_t stream, const Params &p) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess) {
    fprintf(stderr, "fused: cudaFuncSetAttribute(%s) failed: %s\n", name, cudaGetErrorString(err));
    return ATTN_ERR;
  }
  kernel<<<grid, threads, smem, stream>>>(p);
  return launched(name);
}

template <typename Kernel>
static int launch(Kernel kernel, const char *name, dim3 grid, int smem, cudaStream_t stream,
                  const Params &p) {
  return launch_cfg(kernel, name, grid, kThreads, smem, stream, p);
}

// The Hopper forward serves every workload but kf (see fused_sm90.cuh) unless forced off.
static bool use_sm90(const attn_ctx *ctx, workload_id wl) {
  return ctx->cc_major == 9 && !ctx->force_sm80 && wl != WL_KF;
}

// Tile configurations measured on an H200 (PERF-fused.md, v4): two warpgroups sharing
// 128-key stages beat one warpgroup per CTA and 64-key stages.
template <int D, int WL>
static int launch_fwd_sm90(const attn_ctx *ctx, const attn_shape *sh, const Params &p) {
  using C = Cfg90<2, 128>;
  dim3 grid((sh->q_len + C::kRows - 1) / C::kRows, sh->heads, sh->batch);
  return launch_cfg(attn_fwd_sm90<D, WL, 2, 128>, "attn_fwd_sm90", grid, C::kThreads,
                    C::template smem_bytes<D>(), ctx->stream, p);
}

template <int D, int WL>
static int run_workload(const attn_ctx *ctx, const attn_shape *sh, const Params &p) {
  dim3 fwd_grid((sh->q_len + kRows - 1) / kRows, sh->heads, sh->batch);
  int rc;
  if constexpr (WL != WL_KF) {
    if (use_sm90(ctx, (workload_id)WL)) rc = launch_fwd_sm90<D, WL>(ctx, sh, p);
    else rc = launch(attn_fwd<D, WL>, "attn_fwd", fwd_grid, fwd_smem_bytes<D, WL>(), ctx->stream, p);
  } else {
    rc = launch(attn_fwd<D, WL>, "attn_fwd", fwd_grid, fwd_smem_bytes<D, WL>(), ctx->stream, p);
  }
  if constexpr (needs_lse<WL>()) {
    if (rc != ATTN_OK) return rc;
    if (col_on_sm90<WL>() && use_sm90(ctx, (workload_id)WL)) {
      dim3 grid(sh->heads, (sh->kv_len + kCol90Keys - 1) / kCol90Keys, sh->batch);
      rc = launch_cfg(attn_col_sm90<D, WL>, "attn_col_sm90", grid, kCol90Threads,
                      col90_smem_bytes<D>(), ctx->stream, p);
    } else {
      dim3 col_grid(sh->heads, (sh->kv_len + kRows - 1) / kRows, sh->batch);
      rc = launch(attn_col<D, WL>, "attn_col", col_grid, col_smem_bytes<D, WL>(), ctx->stream, p);
    }
    if (rc != ATTN_OK || WL != WL_SNAPKV) return rc;
    long n = (long)sh->batch * sh->heads * sh->kv_len;
    snapkv_pool<<<(unsigned)((n + 255) / 256), 256, 0, ctx->stream>>>(
        p.col, p.col2, sh->batch * sh->heads, sh->kv_len);
    return launched("snapkv_pool");
  }
  return rc;
}

template <int D>
static int run_dim(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const Params &p) {
  switch (wl) {
  case WL_ATTN: return run_workload<D, WL_ATTN>(ctx, sh, p);
  case WL_H2O: return run_workload<D, WL_H2O>(ctx, sh, p);
  case WL_ROCO: return run_workload<D, WL_ROCO>(ctx, sh, p);
  case WL_KF: return run_workload<D, WL_KF>(ctx, sh, p);
  case WL_SNAPKV: return run_workload<D, WL_SNAPKV>(ctx, sh, p);
  case WL_CORM: return run_workload<D, WL_CORM>(ctx, sh, p);
  case WL_GEMMA2: return run_workload<D, WL_GEMMA2>(ctx, sh, p);
  default: return ATTN_UNSUPPORTED;
  }
}

// Workspace layout (floats): lse [B*H*Lq] | lse_kf [B*H*Lq] (kf) | unpooled column sums
// [B*H*Lkv] (snapkv). Linear in S.
static size_t ws_lse_floats(workload_id wl, const attn_shape *sh) {
  if (wl == WL_ATTN || wl == WL_GEMMA2) return 0;
  return (size_t)sh->batch * sh->heads * sh->q_len * (wl == WL_KF ? 2 : 1);
}

} // namespace fused

using namespace fused;

static int fused_supports(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, char *why,
                          size_t why_len) {
  if (ctx && ctx->cc_major < 8) {
    snprintf(why, why_len, "fused kernels need compute capability >= 8.0 (have %d.%d)",
             ctx->cc_major, ctx->cc_minor);
    return ATTN_UNSUPPORTED;
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
  return ATTN_OK;
}

static size_t fused_workspace_bytes(const attn_ctx *, workload_id wl, const attn_shape *sh) {
  size_t floats = ws_lse_floats(wl, sh);
  if (wl == WL_SNAPKV) floats += (size_t)sh->batch * sh->heads * sh->kv_len;
  return floats * sizeof(float);
}

static int fused_run(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const attn_io *io,
                     void *workspace) {
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
  p.lse_kf = wl == WL_KF ? ws + lq : nullptr;
  // snapkv sums columns into the workspace and pools them into io->score (passed as col2).
  p.col = wl == WL_SNAPKV ? ws + ws_lse_floats(wl, sh) : io->score;
  p.col2 = wl == WL_SNAPKV ? io->score : io->score2;
  p.flags = io->flags;
  p.B = sh->batch;
  p.H = sh->heads;
  p.Lq = sh->q_len;
  p.Lkv = sh->kv_len;
  p.offset = sh->kv_len - sh->q_len;
  p.scale = 1.f / sqrtf((float)sh->dim);
  p.row_stride = (long)sh->heads * sh->dim;
  return sh->dim == 64 ? run_dim<64>(ctx, wl, sh, p) : run_dim<128>(ctx, wl, sh, p);
}

static const char *fused_impl(const attn_ctx *ctx, workload_id wl, const attn_shape *) {
  return use_sm90(ctx, wl) ? "fused-sm90" : "fused-sm80";
}

extern "C" const attn_system attn_system_fused = {"fused", fused_supports, fused_workspace_bytes,
                                                  fused_run, fused_impl};
