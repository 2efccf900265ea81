/* cuda_check.h: the checks of CUDA and cuBLAS calls, two kinds. Callable from C and CUDA.
 *
 *  - HX_CUDA(call), HX_CUBLAS(call), HX_CUDA_LAUNCH(): a failure ends the program, for the
 *    harness and a binary's own code: the call, file, line and the library's error string, the
 *    log ended with `result status=error` and exit 1 (out of memory: status=oom, exit 3).
 *    hx_cuda_check and hx_cublas_check are in harness_gpu.cu (kron's embedded library has its
 *    own hx_cuda_check: kernels/kron/kron_api_harness.c).
 *  - HX_TRY_CUDA(ctx, call), HX_TRY_LAUNCH(ctx, what), HX_TRY_CUBLAS(ctx, call): a failure
 *    returns HX_OOM or HX_ERR from the enclosing function with the reason in ctx->err
 *    (hx_fail), for the code that never exits (hx_ctx.h). HX_TRY_CUBLAS where cublas_v2.h is
 *    included. */
#ifndef HX_CUDA_CHECK_H
#define HX_CUDA_CHECK_H

#include "hx_ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

void hx_cuda_check(int err, const char *call, const char *file, int line);
void hx_cublas_check(int status, const char *call, const char *file, int line);

#ifdef __cplusplus
}
#endif

#define HX_CUDA(call)   hx_cuda_check((int)(call), #call, __FILE__, __LINE__)
#define HX_CUBLAS(call) hx_cublas_check((int)(call), #call, __FILE__, __LINE__)
/* Check the last kernel launch (launch configuration errors). */
#define HX_CUDA_LAUNCH() HX_CUDA(cudaGetLastError())

#define HX_TRY_CUDA(ctx, call)                                                                   \
  do {                                                                                           \
    cudaError_t try_err_ = (call);                                                               \
    if (try_err_ != cudaSuccess)                                                                 \
      return hx_fail((ctx), try_err_ == cudaErrorMemoryAllocation ? HX_OOM : HX_ERR,             \
                     "%s: %s (%s:%d)", #call, cudaGetErrorString(try_err_), __FILE__, __LINE__); \
  } while (0)
#define HX_TRY_LAUNCH(ctx, what) HX_TRY_CUDA(ctx, cudaGetLastError())
#define HX_TRY_CUBLAS(ctx, call)                                                                   \
  do {                                                                                             \
    cublasStatus_t try_st_ = (call);                                                               \
    if (try_st_ != CUBLAS_STATUS_SUCCESS)                                                          \
      return hx_fail((ctx), try_st_ == CUBLAS_STATUS_ALLOC_FAILED ? HX_OOM : HX_ERR,               \
                     "%s: %s (%s:%d)", #call, cublasGetStatusString(try_st_), __FILE__, __LINE__); \
  } while (0)

#endif
