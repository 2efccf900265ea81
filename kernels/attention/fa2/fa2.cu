// The `fa2` system: FlashAttention-2's forward (Dao-AILab/flash-attention, csrc/flash_attn/) as
// a peer that attnvar runs, checks and logs like its own systems. A peer, not ours: it serves
// what FlashAttention-2's flash_attn_func computes (the plain softmax forward and its logits
// soft-cap, gemma2's; fp16 or bf16, causal or not, head dims 64, 96, 128 and 256 (D equal to
// one: the build has no uneven head dims), GQA (K/V heads dividing H, read in place), on sm_80
// and sm_90) and reports every other cell unsupported with the reason. Its kernels are built only
// when CMake is given FlashAttention-2's source (-DREPRO_FA2_DIR, kernels/attention/fa2/README.md);
// without them every cell is unsupported and says how to build them. fa2_call.h is the one
// call into them.
#include "fa2_call.h"
#include "peers/peer_system.h"
extern "C" {
#include "kvline.h" // a C header without its own extern "C"
}

#include <stdio.h>

namespace {

#ifdef REPRO_HAVE_FA2
const int fa2_dims[] = {64, 96, 128, 256, 0}; // fa2.cmake's instantiations
const peer_serves fa2_serves = {
    "fa2",                        // system
    "FlashAttention-2's forward", // forward
    1,                            // softcap
    1,                            // gqa: h_k K/V heads read in place
    fa2_dims,                     // kernel_dims
    fa2_dims,                     // built_dims
    0,                            // dim_multiple: D must be a kernel's own
    "fa2.cmake sets FLASHATTENTION_DISABLE_UNEVEN_K and leaves out hdim 32, 160, 192" // dims_note
};

size_t lse_bytes(const attn_shape *sh) {
  const size_t n = (size_t)sh->batch * sh->heads * sh->q_len * sizeof(float);
  return (n + 255) / 256 * 256;
}
#endif

int fa2_supports(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, char *why,
                 size_t why_len) {
#ifndef REPRO_HAVE_FA2
  (void)ctx;
  (void)wl;
  (void)sh;
  peer_unbuilt("FlashAttention-2", "REPRO_FA2_DIR", "fa2", why, why_len);
  return ATTN_UNSUPPORTED;
#else
  if (peer_refuses(&fa2_serves, wl, sh, why, why_len)) return ATTN_UNSUPPORTED;
  if (ctx && ctx->cc_major != 8 && ctx->cc_major != 9) {
    snprintf(why, why_len,
             "FlashAttention-2's kernels are built for sm_80 and sm_90 (A100, H100, H200)");
    return ATTN_UNSUPPORTED;
  }
  return ATTN_OK;
#endif
}

// The row LSE that FlashAttention-2 writes (no workload here reads it).
size_t fa2_workspace_bytes(const attn_ctx *, workload_id, const attn_shape *sh) {
#ifdef REPRO_HAVE_FA2
  return lse_bytes(sh);
#else
  (void)sh;
  return 0;
#endif
}

int fa2_run(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, const attn_io *io,
            void *workspace) {
  char why[256];
#ifdef REPRO_HAVE_FA2
  // supports() judged the cell (attnvar asks it before run, as for every system).
  fa2_call call = {peer_problem_of(wl, sh, io), static_cast<float *>(workspace)};
  if (fa2_forward(&call, ctx->stream, why, sizeof why) != 0)
    return attn_fail(ctx, ATTN_ERR, "%s", why);
  return ATTN_OK;
#else
  (void)io;
  (void)workspace;
  fa2_supports(ctx, wl, sh, why, sizeof why); // the reason: how to build the kernels
  return attn_fail(ctx, ATTN_UNSUPPORTED, "%s", why);
#endif
}

const char *fa2_impl(const attn_ctx *, workload_id, const attn_shape *) {
  return "flashattention2";
}

// The source it was built from, on the log's config line (fa2_source=<commit>).
void fa2_config_kv(const attn_ctx *, workload_id, const attn_shape *, FILE *out) {
#ifdef REPRO_HAVE_FA2
  kv_put(out, "fa2_source", fa2_source());
#else
  kv_put(out, "fa2_source", "none");
#endif
}

} // namespace

extern "C" const attn_system attn_system_fa2 = {"fa2",   fa2_supports, fa2_workspace_bytes,
                                                fa2_run, fa2_impl,     fa2_config_kv};
