// gpu_util.cuh: small device helpers shared by the unfused kernels and the GPU reference:
// error checks that return instead of exiting, block-wide reductions, grid sizing.
// Header-only, CUDA only.
#ifndef GPU_UTIL_CUH
#define GPU_UTIL_CUH

#include "attn_system.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stddef.h>

// Error checks for attention systems: a failing call records what failed in ctx->err
// (attn_fail) and returns from the enclosing function with ATTN_OOM or ATTN_ERR. Systems
// never exit: the binary decides how the log ends.
#define ATTN_TRY_CUDA(ctx, call)                                                                   \
  do {                                                                                             \
    cudaError_t try_err_ = (call);                                                                 \
    if (try_err_ != cudaSuccess)                                                                   \
      return attn_fail((ctx), try_err_ == cudaErrorMemoryAllocation ? ATTN_OOM : ATTN_ERR,         \
                       "%s: %s (%s:%d)", #call, cudaGetErrorString(try_err_), __FILE__, __LINE__); \
  } while (0)
#define ATTN_TRY_LAUNCH(ctx, kernel_name) ATTN_TRY_CUDA(ctx, cudaGetLastError())
#define ATTN_TRY_CUBLAS(ctx, call)                                                         \
  do {                                                                                     \
    cublasStatus_t try_st_ = (call);                                                       \
    if (try_st_ != CUBLAS_STATUS_SUCCESS)                                                  \
      return attn_fail((ctx), try_st_ == CUBLAS_STATUS_ALLOC_FAILED ? ATTN_OOM : ATTN_ERR, \
                       "%s: %s (%s:%d)", #call, cublasGetStatusString(try_st_), __FILE__,  \
                       __LINE__);                                                          \
  } while (0)
// Propagate a non-OK status from a helper that already recorded its reason.
#define ATTN_TRY(expr)                      \
  do {                                      \
    int try_rc_ = (expr);                   \
    if (try_rc_ != ATTN_OK) return try_rc_; \
  } while (0)

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
