// The `flashinfer` system: FlashInfer's single-request prefill (flashinfer-ai/flashinfer,
// include/flashinfer/attention/hopper/: the kernel flashinfer.single_prefill_with_kv_cache runs
// on an H100/H200 with backend "auto", its FA3-style sm_90 path) as a peer that attnvar runs,
// checks and logs like its own systems. A peer, not ours: it serves what that call computes (the
// plain softmax and its logits soft-cap, gemma2's; fp16 or bf16, causal or not, head dims 64,
// 128 and 256, every one its sm_90 prefill has (not 96: SinglePrefillWithKVCacheDispatched
// static_asserts 64, 128 or 256, and "auto" sends other head dims to its sm_80 path, not built
// here), GQA (K/V heads dividing H, group_size = H / Hkv), on sm_90) and reports every other
// cell unsupported with the reason. Its kernels are built only when CMake is given FlashInfer's
// source (-DREPRO_FLASHINFER_DIR, kernels/attention/flashinfer/README.md); without them every
// cell is unsupported and says how to build them. flashinfer_call.h is the one call into them.
#include "flashinfer_call.h"
#include "peers/peer_system.h"
extern "C" {
#include "kvline.h" // a C header without its own extern "C"
}

#include <stdio.h>

namespace {

#ifdef REPRO_HAVE_FLASHINFER
// include/flashinfer/attention/hopper/prefill_sm90.cuh's head dims, all built (flashinfer.cmake)
const int flashinfer_dims[] = {64, 128, 256, 0};
const peer_serves flashinfer_serves = {
    "flashinfer",                  // system
    "FlashInfer's single prefill", // forward
    1,                             // softcap
    1,                             // gqa: group_size = H / Hkv
    flashinfer_dims,               // kernel_dims
    flashinfer_dims,               // built_dims
    0,                             // dim_multiple: D must be a kernel's own
    // dims_note
    "its sm_90 prefill's; backend \"auto\" runs other head dims, 96 among them, on its sm_80 "
    "path, which is not built"};
#endif

int flashinfer_supports(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, char *why,
                        size_t why_len) {
#ifndef REPRO_HAVE_FLASHINFER
  (void)ctx;
  (void)wl;
  (void)sh;
  peer_unbuilt("FlashInfer", "REPRO_FLASHINFER_DIR", "flashinfer", why, why_len);
  return ATTN_UNSUPPORTED;
#else
  if (peer_refuses(&flashinfer_serves, wl, sh, why, why_len)) return ATTN_UNSUPPORTED;
  if (ctx && ctx->cc_major != 9) {
    snprintf(why, why_len,
             "flashinfer is built for sm_90a (H100, H200), the path backend \"auto\" takes "
             "there; its sm_80 path is not built");
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
  const flashinfer_call call = peer_problem_of(wl, sh, io);
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
