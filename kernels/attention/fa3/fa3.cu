// The `fa3` system: FlashAttention-3's Hopper forward (Dao-AILab/flash-attention, hopper/) as a
// peer that attnvar runs, checks and logs like its own systems. A peer, not ours: it serves
// what FlashAttention-3 computes (a softmax forward, fp16 or bf16, causal or not, on sm_90: attn,
// and gemma2 through its logits soft-cap) at the head dims of the kernels built here, 64, 96,
// 128 and 256: any
// D up to 256 that is a multiple of 8 runs on the smallest of them at or above it, as
// FlashAttention-3's run_mha_fwd rounds it, except D in 136..192, which FlashAttention-3 runs on
// its hdim-192 kernel (not built); GQA (K/V heads dividing H, read in place, no GQA packing).
// Every other cell is reported unsupported with the reason. Its kernels are built only when
// CMake is given FlashAttention-3's source (-DREPRO_FA3_DIR, kernels/attention/fa3/README.md);
// without them every cell is unsupported and says how to build them. fa3_call.h is the one call
// into them.
#include "fa3_call.h"
#include "peers/peer_system.h"
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

// hopper/flash_api.cpp: round_up_headdim's head dims, head_size % 8 == 0, at most 256.
const int fa3_kernel_dims[] = {64, 96, 128, 192, 256, 0};
const int fa3_built_dims[] = {64, 96, 128, 256, 0}; // fa3.cmake
const peer_serves fa3_serves = {
    "fa3",                                    // system
    "FlashAttention-3's forward",             // forward
    1,                                        // softcap: its _softcap instantiations (gemma2)
    1,                                        // gqa: h_k K/V heads read in place
    fa3_kernel_dims,                          // kernel_dims
    fa3_built_dims,                           // built_dims
    8,                                        // dim_multiple: D rounded up to a kernel's
    "fa3.cmake disables the hdim-192 kernels" // dims_note
};
#endif

int fa3_supports(const attn_ctx *ctx, workload_id wl, const attn_shape *sh, char *why,
                 size_t why_len) {
#ifndef REPRO_HAVE_FA3
  (void)ctx;
  (void)wl;
  (void)sh;
  peer_unbuilt("FlashAttention-3", "REPRO_FA3_DIR", "fa3", why, why_len);
  return ATTN_UNSUPPORTED;
#else
  if (peer_refuses(&fa3_serves, wl, sh, why, why_len)) return ATTN_UNSUPPORTED;
  if (ctx && (ctx->cc_major != 9 || ctx->cc_minor != 0 || ctx->force_sm80)) {
    snprintf(why, why_len, "FlashAttention-3's kernels are built for sm_90a (H100, H200) only");
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
  fa3_call call = {};
  call.p = peer_problem_of(wl, sh, io);
  call.lse = static_cast<float *>(workspace);
  call.scheduler = reinterpret_cast<int *>(static_cast<char *>(workspace) + lse_bytes(sh));
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
