// gpu_util.cuh: small device helpers shared by the unfused kernels and the GPU reference:
// block-wide reductions, grid sizing; and the attention systems' spelling of the harness's
// checks that return (cuda_check.h) on an attn_ctx. Header-only, CUDA only.
#ifndef GPU_UTIL_CUH
#define GPU_UTIL_CUH

#include "attn_system.h"
#include "cuda_check.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stddef.h>

// The checks of cuda_check.h on an attn_ctx's harness part, as the systems under fused/ and
// unfused/ write them: a failing call records what failed in ctx->err and returns from the
// enclosing function with ATTN_OOM or ATTN_ERR. Systems never exit: the binary decides how the
// log ends.
#define ATTN_TRY_CUDA(ctx, call)          HX_TRY_CUDA(&(ctx)->hx, call)
#define ATTN_TRY_LAUNCH(ctx, kernel_name) HX_TRY_LAUNCH(&(ctx)->hx, kernel_name)
#define ATTN_TRY_CUBLAS(ctx, call)        HX_TRY_CUBLAS(&(ctx)->hx, call)
// Propagate a non-OK status from a helper that already recorded its reason.
#define ATTN_TRY(expr) HX_TRY(expr)

struct op_sum {
  __device__ float operator()(float a, float b) const { return a + b; }
  __device__ float identity() const { return 0.0f; }
};
struct op_max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
  __device__ float identity() const { return -INFINITY; }
};

// Reduce v over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the
// result. scratch: 32 floats of shared memory; safe to call repeatedly with the same scratch.
template <typename Op> __device__ float block_reduce(float v, float *scratch, Op op) {
  for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nwarps = blockDim.x / 32;
  __syncthreads(); // the previous call's readers are done with scratch
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < nwarps ? scratch[lane] : op.identity();
  for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

// Grid size for a grid-stride loop over n items (capped; the loop covers the rest).
static inline unsigned grid_stride_blocks(size_t n, unsigned block) {
  size_t g = (n + block - 1) / block;
  if (g == 0) g = 1;
  return (unsigned)(g < (1u << 20) ? g : (1u << 20));
}

#endif
