// gemm_gpu.cu: gemmbench's device side (gemm_gpu.h): the context, A/B/C, the cuBLAS system,
// dispatch to our kernels (gemm_wgmma.cu, gemm_mma.cu), timing and copies.
#include "gemm_gpu.h"
#include "gemm_kernels.h"

#include "cuda_check.h"
#include "harness_gpu.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string.h>

static hx_ctx g_ctx;
static gemm_problem g_p;
static gemm_dev_io g_io;

extern "C" const hx_ctx *gemm_gpu_ctx(void) { return &g_ctx; }

extern "C" int gemm_gpu_open(hx_device_info *info, gemm_device *dev, char *why, size_t why_len) {
  if (!hx_gpu_available(why, why_len)) return 0;
  hx_gpu_init(&g_ctx, info);
  cudaDeviceProp prop;
  HX_CUDA(cudaGetDeviceProperties(&prop, 0));
  memset(dev, 0, sizeof *dev);
  dev->cc_major = prop.major;
  dev->cc_minor = prop.minor;
  dev->sms = prop.multiProcessorCount;
  dev->smem_optin = (int)prop.sharedMemPerBlockOptin;
  dev->max_threads = prop.maxThreadsPerBlock;
  dev->regs_per_sm = prop.regsPerMultiprocessor;
  return 1;
}

extern "C" void gemm_gpu_setup(const gemm_problem *p, uint64_t seed) {
  g_p = *p;
  size_t es = gemm_elem_bytes(p->dtype);
  size_t mk = (size_t)p->m * p->k, kn = (size_t)p->k * p->n, mn = (size_t)p->m * p->n;
  void *a = hx_dev_alloc(mk * es, "A");
  void *b = hx_dev_alloc(kn * es, "B");
  g_io.c = hx_dev_alloc(mn * es, "C");
  if (p->dtype == GEMM_FP32) {
    hx_dev_fill_normal_f32((float *)a, mk, seed, GEMM_STREAM_A, g_ctx.stream);
    hx_dev_fill_normal_f32((float *)b, kn, seed, GEMM_STREAM_B, g_ctx.stream);
  } else {
    int bf16 = p->dtype == GEMM_BF16;
    hx_dev_fill_normal(a, mk, seed, GEMM_STREAM_A, bf16, g_ctx.stream);
    hx_dev_fill_normal(b, kn, seed, GEMM_STREAM_B, bf16, g_ctx.stream);
  }
  HX_CUDA(cudaStreamSynchronize(g_ctx.stream));
  g_io.a = a;
  g_io.b = b;
}

// ---- cublas ------------------------------------------------------------------------------------
// Row-major C[M,N] = A[M,K]·B[K,N] is, in cuBLAS's column-major view, Cᵀ (N x M) = Bᵀ (N x K) ·
// Aᵀ (K x M) with no transposes: B first (ld N), then A (ld K), C with ld N.
static int cublas_run(const gemm_problem *p) {
  cudaDataType t = p->dtype == GEMM_FP16   ? CUDA_R_16F
                   : p->dtype == GEMM_BF16 ? CUDA_R_16BF
                                           : CUDA_R_32F;
  const float alpha = 1.0f, beta = 0.0f;
  HX_TRY_CUBLAS(&g_ctx, cublasGemmEx((cublasHandle_t)g_ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_N,
                                     (int)p->n, (int)p->m, (int)p->k, &alpha, g_io.b, t, (int)p->n,
                                     g_io.a, t, (int)p->k, &beta, g_io.c, t, (int)p->n,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return HX_OK;
}

// ---- dispatch ----------------------------------------------------------------------------------
extern "C" int gemm_gpu_prepare(gemm_plan *pl) {
  switch (pl->system) {
  case GEMM_SYS_CUBLAS: return HX_OK;
  case GEMM_SYS_WGMMA: return gemm_wgmma_prepare(&g_ctx, pl, &g_p, &g_io);
  case GEMM_SYS_MMA: return gemm_mma_prepare(&g_ctx, pl, &g_p);
  default: return hx_fail(&g_ctx, HX_UNSUPPORTED, "system %d has no GPU path", pl->system);
  }
}

extern "C" int gemm_gpu_run(const gemm_plan *pl) {
  switch (pl->system) {
  case GEMM_SYS_CUBLAS: return cublas_run(&g_p);
  case GEMM_SYS_WGMMA: return gemm_wgmma_run(&g_ctx, pl, &g_p);
  case GEMM_SYS_MMA: return gemm_mma_run(&g_ctx, pl, &g_p, &g_io);
  default: return hx_fail(&g_ctx, HX_UNSUPPORTED, "system %d has no GPU path", pl->system);
  }
}

static int run_fn(void *arg) { return gemm_gpu_run((const gemm_plan *)arg); }

extern "C" int gemm_gpu_time(const gemm_plan *pl, int warmup, int runs, float *ms, hx_timing *how) {
  return hx_time_runs(g_ctx.stream, run_fn, (void *)pl, warmup, runs, ms, how);
}

extern "C" void gemm_gpu_poison_c(void) {
  hx_dev_poison(g_io.c, (size_t)g_p.m * g_p.n * gemm_elem_bytes(g_p.dtype), g_ctx.stream);
}

extern "C" void gemm_gpu_download(gemm_buf which, size_t e0, size_t n, void *dst) {
  size_t es = gemm_elem_bytes(g_p.dtype);
  const void *base = which == GEMM_BUF_A ? g_io.a : which == GEMM_BUF_B ? g_io.b : g_io.c;
  HX_CUDA(cudaStreamSynchronize(g_ctx.stream)); // the runs before, their faults included
  hx_dev_to_host(dst, (const unsigned char *)base + e0 * es, n * es);
}

extern "C" void gemm_gpu_close(void) {
  HX_CUDA(cudaStreamSynchronize(g_ctx.stream));
  hx_dev_free(const_cast<void *>(g_io.a));
  hx_dev_free(const_cast<void *>(g_io.b));
  hx_dev_free(g_io.c);
  memset(&g_io, 0, sizeof g_io);
  hx_gpu_shutdown(&g_ctx);
}

// ---- the launch checks our kernels share ---------------------------------------------------------
int gemm_kernel_fits(const hx_ctx *ctx, const void *kernel, const char *name, gemm_plan *pl) {
  HX_TRY_CUDA(ctx, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        pl->smem_bytes));
  cudaFuncAttributes attr;
  HX_TRY_CUDA(ctx, cudaFuncGetAttributes(&attr, kernel));
  pl->kernel_regs = attr.numRegs;
  pl->local_bytes = (int)attr.localSizeBytes;
  if (attr.maxThreadsPerBlock < pl->threads)
    return hx_fail(ctx, HX_ERR,
                   "%s: compiled for at most %d threads per block (%d registers), "
                   "the plan launches %d",
                   name, attr.maxThreadsPerBlock, attr.numRegs, pl->threads);
  int ctas = 0;
  HX_TRY_CUDA(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas, kernel, pl->threads,
                                                                 pl->smem_bytes));
  pl->ctas_per_sm = ctas;
  if (ctas < 1)
    return hx_fail(ctx, HX_ERR,
                   "%s: no CTA fits on an SM (%d threads, %d registers each, %d bytes of "
                   "shared memory)",
                   name, pl->threads, attr.numRegs, pl->smem_bytes);
  return HX_OK;
}
