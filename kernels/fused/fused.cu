// Placeholder until the fused kernels land: reports every case unsupported.
#include "attnvar.h"

#include <stdio.h>

static int fused_supports(const attn_ctx *, workload_id, const attn_shape *, char *why,
                          size_t why_len) {
  snprintf(why, why_len, "fused kernels not built yet");
  return ATTN_UNSUPPORTED;
}
static size_t fused_workspace_bytes(const attn_ctx *, workload_id, const attn_shape *) { return 0; }
static int fused_run(const attn_ctx *, workload_id, const attn_shape *, const attn_io *, void *) {
  return ATTN_UNSUPPORTED;
}

extern "C" const attn_system attn_system_fused = {"fused", fused_supports, fused_workspace_bytes,
                                                  fused_run};
