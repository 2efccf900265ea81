/* gemm_gpu.h: what gemmbench's main (plain C) needs from the device side (gemm_gpu.cu):
 * the context, A/B/C on the device, one system's preparation, runs, timing and copies.
 * Failures of a system come back as HX_* codes with the reason in gemm_gpu_ctx()->err; a
 * failing CUDA call of the harness itself ends the log (HX_CUDA). */
#ifndef GEMM_GPU_H
#define GEMM_GPU_H

#include "gemm.h"
#include "gemm_plan.h"

#include "hx_ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef REPRO_HAVE_CUDA
typedef enum { GEMM_BUF_A = 0, GEMM_BUF_B = 1, GEMM_BUF_C = 2 } gemm_buf;

/* 1 with device 0 up (info for the meta line, dev for the plan); 0 with the reason in why. */
int gemm_gpu_open(hx_device_info *info, gemm_device *dev, char *why, size_t why_len);
const hx_ctx *gemm_gpu_ctx(void);
/* Allocate A, B, C through the tracking allocator and draw A and B on the device (the same
 * bits as gemm_input_bits). Out of memory ends the log with status=oom. */
void gemm_gpu_setup(const gemm_problem *p, uint64_t seed);
/* One-time work of the plan's system before any run: tensor maps, kernel attributes, and the
 * compiled kernel's registers, spills and CTAs per SM (into pl; a kernel that cannot be
 * resident is an error). */
int gemm_gpu_prepare(gemm_plan *pl);
/* Enqueue one C = A·B on the context's stream. */
int gemm_gpu_run(const gemm_plan *pl);
/* warmup untimed runs, then runs timed ones (ms each, CUDA events). */
int gemm_gpu_time(const gemm_plan *pl, int warmup, int runs, float *ms, hx_timing *how);
void gemm_gpu_poison_c(void);
/* n elements of a buffer from element e0 on, to the host (synchronous: kernel faults of the
 * runs before surface here and end the log). */
void gemm_gpu_download(gemm_buf which, size_t e0, size_t n, void *dst);
void gemm_gpu_close(void);
#endif

#ifdef __cplusplus
}
#endif
#endif
