// The `flashinfer` system: FlashInfer's single-request prefill (flashinfer-ai/flashinfer,
// include/flashinfer/attention/hopper/: the kernel flashinfer.single_prefill_with_kv_cache runs
// on an H100/H200 with backend "auto", its FA3-style sm_90 path) as a peer that attnvar runs,
// checks and logs like its own systems. A peer, not ours: it serves what that call computes (the
// plain softmax and its logits soft-cap, gemma2's; fp16 or bf16, causal or not, head dims 64
// and 128, GQA, on sm_90) and reports every other cell unsupported with the reason. Its kernels
// are built only when CMake is given FlashInfer's source (-DREPRO_FLASHINFER_DIR,
// kernels/attention/flashinfer/README.md); without them every cell is unsupported and says how
// to build them. flashinfer_call.h is the one call into them.
#include "attn_system.h"
#include "flashinfer_call.h"
extern "C" {
#include "kvline.h" // a C header without its own extern "C"
}

#include <stdio.h>

namespace {

#ifdef REPRO_HAVE_FLASHINFER
// Why a cell is outside what FlashInfer's single prefill computes, or NULL. Judged on the
// workload's features (gemma2 is the soft-capped softmax, attn the plain one).
const char *shape_problem(workload_id wl, const attn_shape *sh) {
  if ((int)wl < 0 || wl >= WL_COUNT) return "unknown workload";
  const workload_info *w = &workload_table[wl];
  if ((w->logits != LOGITS_SCALED && w->logits != LOGITS_SOFTCAP) || w->keys != KEYS_DENSE ||
      w->column != COL_NONE)
    return "FlashInfer's single prefill computes the softmax (attn) and its logits soft-cap "
           "(gemma2) only: no column statistic, noise or selected blocks";
  if (sh->dtype != DTYPE_FP16 && sh->dtype != DTYPE_BF16)
    return "flashinfer runs fp16 and bf16 only";
  if (sh->dim != 64 && sh->dim != 128)
    return "flashinfer is built for head dims 64 and 128 (the instantiations flashinfer.cmake "
           "compiles)";
  if (sh->heads % shape_kv_heads(sh) != 0) return "flashinfer needs H a multiple of the K/V heads";
  if (sh->q_len < 1 || sh->q_len > sh->kv_len) return "flashinfer here needs 1 <= q_len <= kv_len";
  return NULL;
}
#endif

int flashinfer_supports(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, char *why,
                        size_t why_len) {
#ifndef REPRO_HAVE_FLASHINFER
  (void)ctx;
  (void)wl;
  (void)sh;
  snprintf(why, why_len,
           "built without FlashInfer: configure with -DREPRO_FLASHINFER_DIR=<its checkout> "
           "(kernels/attention/flashinfer/README.md)");
  return ATTN_UNSUPPORTED;
#else
  const char *problem = shape_problem(wl, sh);
  if (!problem && ctx && ctx->cc_major != 9)
    problem = "flashinfer is built for sm_90a (H100, H200), the path backend \"auto\" takes "
              "there; its sm_80 path is not built";
  if (problem) {
    snprintf(why, why_len, "%s", problem);
    return ATTN_UNSUPPORTED;
  }
  return ATTN_OK;
#endif
}

// Nothing: single_prefill_with_kv_cache's return_lse=False writes no LSE, and its sm_90 path
// does not use the temporary buffer the Python side allocates.
size_t flashinfer_workspace_bytes(const attn_ctx *, workload_id, const attn_shape *) { return 0; }

int flashinfer_run(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const attn_io *io,
                   void *workspace) {
  char why[256];
  (void)workspace;
#ifdef REPRO_HAVE_FLASHINFER
  // supports() judged the cell (attnvar asks it before run, as for every system).
  flashinfer_call call = {};
  call.q = io->q;
  call.k = io->k;
  call.v = io->v;
  call.out = io->out;
  call.batch = sh->batch;
  call.heads = sh->heads;
  call.kv_heads = shape_kv_heads(sh);
  call.q_len = sh->q_len;
  call.kv_len = sh->kv_len;
  call.dim = sh->dim;
  call.causal = sh->mask == MASK_CAUSAL;
  call.bf16 = sh->dtype == DTYPE_BF16;
  call.scale = shape_scale(sh);
  call.softcap = workload_table[wl].logits == LOGITS_SOFTCAP ? (double)GEMMA2_SOFTCAP : 0.0;
  if (flashinfer_forward(&call, ctx->stream, why, sizeof why) != 0)
    return attn_fail(ctx, ATTN_ERR, "%s", why);
  return ATTN_OK;
#else
  (void)io;
  flashinfer_supports(ctx, wl, sh, why, sizeof why); // the reason: how to build the kernels
  return attn_fail(ctx, ATTN_UNSUPPORTED, "%s", why);
#endif
}

const char *flashinfer_impl(const attn_ctx *, workload_id, const attn_shape *) {
  return "flashinfer-single-prefill-sm90";
}

// The source it was built from, on the log's config line (flashinfer_source=<commit>).
void flashinfer_config_kv(const attn_ctx *, workload_id, const attn_shape *, FILE *out) {
#ifdef REPRO_HAVE_FLASHINFER
  kv_put(out, "flashinfer_source", flashinfer_source());
#else
  kv_put(out, "flashinfer_source", "none");
#endif
}

} // namespace

extern "C" const attn_system attn_system_flashinfer = {
    "flashinfer",   flashinfer_supports, flashinfer_workspace_bytes,
    flashinfer_run, flashinfer_impl,     flashinfer_config_kv};
