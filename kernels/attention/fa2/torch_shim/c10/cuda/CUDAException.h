/* The two PyTorch macros FlashAttention-2's launch template uses (flash_fwd_launch_template.h
 * includes <c10/cuda/CUDAException.h>), for a build without PyTorch: a failed CUDA call throws
 * fa2_cuda_error, which fa2_launch.cu catches and returns as the cell's reason. */
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

struct fa2_cuda_error : std::runtime_error {
  explicit fa2_cuda_error(const std::string &what) : std::runtime_error(what) {}
};

#define C10_CUDA_CHECK(expr)                                                          \
  do {                                                                                \
    const cudaError_t fa2_err_ = (expr);                                              \
    if (fa2_err_ != cudaSuccess)                                                      \
      throw fa2_cuda_error(std::string(#expr) + ": " + cudaGetErrorString(fa2_err_)); \
  } while (0)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
