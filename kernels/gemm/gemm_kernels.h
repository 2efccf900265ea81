// gemm_kernels.h: the entry points of our two GEMM kernels for gemm_gpu.cu. Each returns
// ATTN_OK or an ATTN_* code with the reason written through attn_fail (never exits).
//   prepare  once per process, before any run: kernel attributes (shared memory), the
//            compiled kernel's registers/spills/occupancy into the plan, and for wgmma the
//            two tensor maps (A and B do not move between runs)
//   run      enqueue one C = A·B on ctx->stream
#pragma once
#include "attn_system.h"
#include "gemm_plan.h"

struct gemm_dev_io {
  const void *a, *b;
  void *c;
};

int gemm_wgmma_prepare(const attn_ctx *ctx, gemm_plan *pl, const gemm_problem *p,
                       const gemm_dev_io *io);
int gemm_wgmma_run(const attn_ctx *ctx, const gemm_plan *pl, const gemm_problem *p);

int gemm_mma_prepare(const attn_ctx *ctx, gemm_plan *pl, const gemm_problem *p);
int gemm_mma_run(const attn_ctx *ctx, const gemm_plan *pl, const gemm_problem *p,
                 const gemm_dev_io *io);

// The checks of a compiled kernel every prepare makes: dynamic shared memory granted, no
// fewer threads per block than the plan, at least one CTA resident per SM; fills the plan's
// kernel_regs, local_bytes (spills) and ctas_per_sm.
int gemm_kernel_fits(const attn_ctx *ctx, const void *kernel, const char *name, gemm_plan *pl);
