// gemm_kernels.h: the entry points of our two GEMM kernels for gemm_gpu.cu. Each returns
// HX_OK or an HX_* code with the reason written through hx_fail (never exits).
//   prepare  once per process, before any run: kernel attributes (shared memory), the
//            compiled kernel's registers/spills/occupancy into the plan, and for wgmma the
//            two tensor maps (A and B do not move between runs)
//   run      enqueue one C = A·B on ctx->stream
#pragma once
#include "gemm_plan.h"
#include "hx_ctx.h"

struct gemm_dev_io {
  const void *a, *b;
  void *c;
};

int gemm_wgmma_prepare(const hx_ctx *ctx, gemm_plan *pl, const gemm_problem *p,
                       const gemm_dev_io *io);
int gemm_wgmma_run(const hx_ctx *ctx, const gemm_plan *pl, const gemm_problem *p);

int gemm_mma_prepare(const hx_ctx *ctx, gemm_plan *pl, const gemm_problem *p);
int gemm_mma_run(const hx_ctx *ctx, const gemm_plan *pl, const gemm_problem *p,
                 const gemm_dev_io *io);

// The checks of a compiled kernel every prepare makes: dynamic shared memory granted, no
// fewer threads per block than the plan, at least one CTA resident per SM; fills the plan's
// kernel_regs, local_bytes (spills) and ctas_per_sm.
int gemm_kernel_fits(const hx_ctx *ctx, const void *kernel, const char *name, gemm_plan *pl);
