// gpu_util.cuh: small device helpers shared by the unfused kernels and the GPU reference:
// block-wide reductions, fp16 loads, grid sizing. Header-only, CUDA only.
#ifndef GPU_UTIL_CUH
#define GPU_UTIL_CUH

#include <cuda_fp16.h>
#include <math.h>
#include <stddef.h>

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
template <typename Op>
__device__ float block_reduce(float v, float *scratch, Op op) {
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
