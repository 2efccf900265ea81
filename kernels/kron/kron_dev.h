/* kron_dev.h: what kronlayer's driver needs from a device (memory, copies, timing, profile
 * steps): the CPU one lives in kronlayer.c, the GPU one in kron_gpu.cu. */
#ifndef KRON_DEV_H
#define KRON_DEV_H

#include "harness.h"
#include "kron.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*kron_fn)(void *arg);

typedef struct {
  int on_gpu;
  void *(*alloc)(size_t bytes, const char *what); /* dies with status=oom */
  void (*free)(void *p);
  void (*upload)(void *dst, const void *src, size_t bytes);
  void (*download)(void *dst, const void *src, size_t bytes);
  void (*poison)(void *p, size_t bytes); /* every byte 0xff: NaN */
  void (*sync)(void);
  /* warmup untimed calls, then runs timed ones (ms per call each), and how they were timed */
  void (*time_runs)(kron_fn fn, void *arg, int warmup, int runs, float *ms, hx_timing *how);
  /* profile: the backend records one step per call between start and stop */
  void (*prof_start)(kron_be *be, kron_prof *p);
  void (*prof_stop)(kron_be *be);
  size_t (*peak_bytes)(void);
  size_t smem_optin;           /* largest dynamic shared memory per block (v3's default budget) */
  size_t smem_sm;              /* shared memory per SM (v3's blocks per SM) */
  int nsm;                     /* SMs (v3's grid) */
  void (*describe)(FILE *out); /* log lines about the kernels (NULL: none) */
} kron_dev;

#ifdef REPRO_HAVE_CUDA
/* 1 with dev, be and info set up on GPU 0; 0 with the reason in why (no usable GPU). */
int kron_gpu_open(kron_dev *dev, kron_be *be, int es, hx_device_info *info, char *why,
                  size_t why_len);
void kron_gpu_close(void);
#endif

#ifdef __cplusplus
}
#endif
#endif
