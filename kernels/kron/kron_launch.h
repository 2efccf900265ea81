/* kron_launch.h: v3's kernel launches on a CUDA stream (kron_launch.cu): a backend's stage,
 * grad and zero calls (kron.h), each launch checked against the plan and the device first,
 * chained with programmatic dependent launch where the device has it. kronlayer's GPU backend
 * (kron_gpu.cu) and the library (kron_api.c) both launch v3 through it. Failures go through
 * the harness (HX_CUDA, hx_die). */
#ifndef KRON_LAUNCH_H
#define KRON_LAUNCH_H

#include "kron.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  void *stream;      /* cudaStream_t the kernels go on */
  int pdl;           /* 1: programmatic dependent launch (sm_90 and later) */
  size_t smem_optin; /* the device's largest dynamic shared memory per block */
  int fits_checked;  /* 1: kron_launch_check_plan passed for every plan launched through this
                        launcher (no occupancy query per launch) */
  /* profile steps around each launch (NULL: none): begin returns the step's id or -1 */
  int (*step_begin)(const char *name);
  void (*step_end)(int step);
} kron_launcher;

/* The current device and its limits for v3's plans, after allowing every v3 kernel the opt-in
 * maximum of dynamic shared memory (shared memory preferred over L1) on that device. */
typedef struct {
  int device;
  size_t smem_optin, smem_sm;
  int nsm, cc_major;
} kron_launch_limits;
void kron_launch_setup(kron_launch_limits *lim);

/* be's v3 calls (stage, grad, zero) launch through L (be->impl = L; be->es set by the caller;
 * the other calls are left as they are). L must outlive be's use. */
void kron_launch_backend(kron_be *be, kron_launcher *L);

/* 0 when every launch of plan p (for shape s) has a kernel whose block fits smem_optin and an
 * SM of the current device; else -1 with why. */
int kron_launch_check_plan(const kron_shape *s, const kron_plan *p, int es, size_t smem_optin,
                           char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
