// The `fa3` system: FlashAttention-3's Hopper forward (Dao-AILab/flash-attention, hopper/) as a
// peer that attnvar runs, checks and logs like its own systems. A peer, not ours: it serves
// what FlashAttention-3 computes (the attn workload: a plain softmax forward, fp16 or bf16,
// causal or not, head dims up to 128, one K/V head per query head, on sm_90) and reports every
// other cell unsupported with the reason. Its kernels are built only when CMake is given
// FlashAttention-3's source (-DREPRO_FA3_DIR, kernels/attention/fa3/README.md); without them every cell
// is unsupported and says how to build them. fa3_call.h is the one call into them.
#include "attn_system.h"
#include "fa3_call.h"
extern "C" {
#include "kvline.h" // a C header without its own extern "C"
}

#include <stdio.h>

namespace {

#ifdef REPRO_HAVE_FA3
size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }
size_t lse_bytes(const attn_shape *sh) {
  return round_up((size_t)sh->batch * sh->heads * sh->q_len * sizeof(float), 256);
}

// Why a cell is outside what FlashAttention-3 computes, or NULL. Judged on the workload's
// features (a workload that is attn under another name is served too).
const char *shape_problem(workload_id wl, const attn_shape *sh) {
  if ((int)wl < 0 || wl >= WL_COUNT) return "unknown workload";
  const workload_info *w = &workload_table[wl];
  if (w->logits != LOGITS_SCALED || w->keys != KEYS_DENSE || w->column != COL_NONE)
    return "FlashAttention-3's forward computes the plain softmax (attn) only: no softcap, "
           "column statistic or selected blocks";
  if (sh->dtype != DTYPE_FP16 && sh->dtype != DTYPE_BF16) return "fa3 runs fp16 and bf16 only";
  if (sh->dim < 8 || sh->dim > 128 || sh->dim % 8 != 0)
    return "fa3 is built for head dims 8..128, multiples of 8";
  if (shape_kv_heads(sh) != sh->heads) return "fa3 is built without GQA packing: G = H only";
  if (sh->q_len < 1 || sh->q_len > sh->kv_len) return "fa3 here needs 1 <= q_len <= kv_len";
  return NULL;
}
#endif

int fa3_supports(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, char *why,
                 size_t why_len) {
#ifndef REPRO_HAVE_FA3
  (void)ctx;
  (void)wl;
  (void)sh;
  snprintf(why, why_len,
           "built without FlashAttention-3: configure with -DREPRO_FA3_DIR=<its checkout> "
           "(kernels/attention/fa3/README.md)");
  return ATTN_UNSUPPORTED;
#else
  const char *problem = shape_problem(wl, sh);
  if (!problem && ctx && (ctx->cc_major != 9 || ctx->cc_minor != 0 || ctx->force_sm80))
    problem = "FlashAttention-3's kernels are built for sm_90a (H100, H200) only";
  if (problem) {
    snprintf(why, why_len, "%s", problem);
    return ATTN_UNSUPPORTED;
  }
  return ATTN_OK;
#endif
}

// The row LSE (FlashAttention-3 writes it, attn does not read it), then the scheduler's ints.
size_t fa3_workspace_bytes(const attn_ctx *, workload_id, const attn_shape *sh) {
#ifdef REPRO_HAVE_FA3
  return lse_bytes(sh) + (size_t)fa3_scheduler_ints(sh->batch) * sizeof(int);
#else
  (void)sh;
  return 0;
#endif
}

int fa3_run(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const attn_io *io,
            void *workspace) {
  char why[256];
#ifdef REPRO_HAVE_FA3
  // The cell was judged by supports() (attnvar and llama_e2e ask it before run, as for every
  // system), so run does not judge it again.
  (void)wl;
  fa3_call call = {};
  call.q = io->q;
  call.k = io->k;
  call.v = io->v;
  call.out = io->out;
  call.lse = static_cast<float *>(workspace);
  call.scheduler = reinterpret_cast<int *>(static_cast<char *>(workspace) + lse_bytes(sh));
  call.batch = sh->batch;
  call.heads = sh->heads;
  call.q_len = sh->q_len;
  call.kv_len = sh->kv_len;
  call.dim = sh->dim;
  call.causal = sh->mask == MASK_CAUSAL;
  call.bf16 = sh->dtype == DTYPE_BF16;
  call.scale = (float)shape_scale(sh);
  call.cc_major = ctx->cc_major;
  call.cc_minor = ctx->cc_minor;
  call.sm_count = ctx->sm_count;
  // The causal kernels' scheduler counts claimed tiles up from zero and never resets the count:
  // zeroed before every call, inside the timed work, as flash_attn_func allocates it zeroed per
  // call.
  const cudaError_t e = cudaMemsetAsync(
      call.scheduler, 0, (size_t)fa3_scheduler_ints(sh->batch) * sizeof(int), ctx->stream);
  if (e != cudaSuccess)
    return attn_fail(ctx, ATTN_ERR, "fa3: zeroing the scheduler's counter failed: %s",
                     cudaGetErrorString(e));
  if (fa3_forward(&call, ctx->stream, why, sizeof why) != 0)
    return attn_fail(ctx, ATTN_ERR, "%s", why);
  return ATTN_OK;
#else
  (void)io;
  (void)workspace;
  fa3_supports(ctx, wl, sh, why, sizeof why); // the reason: how to build the kernels
  return attn_fail(ctx, ATTN_UNSUPPORTED, "%s", why);
#endif
}

const char *fa3_impl(const attn_ctx *, workload_id, const attn_shape *) {
  return "flashattention3-sm90";
}

// The source it was built from, on the log's config line (fa3_source=<commit>).
void fa3_config_kv(const attn_ctx *, workload_id, const attn_shape *, FILE *out) {
#ifdef REPRO_HAVE_FA3
  kv_put(out, "fa3_source", fa3_source());
#else
  kv_put(out, "fa3_source", "none");
#endif
}

} // namespace

extern "C" const attn_system attn_system_fa3 = {"fa3",   fa3_supports, fa3_workspace_bytes,
                                                fa3_run, fa3_impl,     fa3_config_kv};
