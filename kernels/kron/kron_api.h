/* kron_api.h: v3 of the Kronecker layer (kron.h) as a library on caller-owned buffers, the way
 * the PyTorch extension (torch_ext/) calls it: a plan built once per shape, dtype and device,
 * then forward and backward calls that launch on the caller's CUDA stream (device pointers) or
 * run the CPU backend (kron_cpu.c, v3's kernels emulated; host pointers).
 *
 * Buffers (elements of the plan's dtype, row-major, caller-owned; see kron.h for the math):
 *   x, y, gy, gx   [B, N]
 *   A              m pointers, A[k] the factor A_k [f_k, f_k] (anywhere: no copy is made)
 *   gA             every factor's gradient back to back (gA_k at kron_shape.aoff[k])
 *   saved          kron_api_saved_elems: what the forward keeps for the backward (T_1..T_{m-1}),
 *                  written by kron_api_fwd, read by kron_api_bwd
 *   scratch        kron_api_scratch_elems: the backward's intermediates (G_1..G_{m-1})
 * Sizes of 0 elements take NULL. Every call returns 0, or -1 with the reason in why; a failure
 * inside the kernels' code (a CUDA error, an internal check, host memory) returns -1 too when
 * the process links kron_api_harness.c (the extension), and ends the process through the
 * harness otherwise (kronlayer's tests). Calls on different plans may run on different threads
 * at once; a plan is read-only after kron_api_plan_make. */
#ifndef KRON_API_H
#define KRON_API_H

#include "kron.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KRON_API_CPU (-1) /* kron_api_plan_make's device: the CPU backend */

typedef struct {
  kron_shape s;
  int es;            /* 4 (fp32) or 8 (fp64) */
  int device;        /* KRON_API_CPU, or the CUDA device the plan was made for */
  kron_plan plan[2]; /* v3's forward and backward plans */
  int pdl;           /* CUDA: programmatic dependent launch between v3's kernels */
  size_t smem_optin; /* CUDA: the device's largest dynamic shared memory per block */
} kron_api_plan;

/* 1 when this build launches on CUDA devices (built with KRON_API_CUDA), else 0. */
int kron_api_has_cuda(void);

/* v3's plan for batch x (f[0] x ... x f[m-1]) in es-byte elements on device (KRON_API_CPU: the
 * CPU backend, which plans as for an H100; else a CUDA device, whose kernels it also checks
 * against the device). 0, or -1 with why (a shape kron_shape_init refuses, a factor whose
 * matrix does not fit v3's shared memory, no CUDA in this build). */
int kron_api_plan_make(kron_api_plan *p, long long batch, int m, const int *f, int es, int device,
                       char *why, size_t why_len);

long long kron_api_saved_elems(const kron_api_plan *p);
long long kron_api_scratch_elems(const kron_api_plan *p);

/* y = x·(A_1 ⊗ ... ⊗ A_m)^T; saved gets what the backward needs. stream: a cudaStream_t for
 * CUDA plans (NULL: the legacy default stream), ignored on the CPU. */
int kron_api_fwd(const kron_api_plan *p, void *stream, const void *x, const void *const *A, void *y,
                 void *saved, char *why, size_t why_len);

/* gx and gA (overwritten, not accumulated) given gy, from the forward's x, A and saved. */
int kron_api_bwd(const kron_api_plan *p, void *stream, const void *x, const void *const *A,
                 const void *saved, const void *gy, void *gx, void *gA, void *scratch, char *why,
                 size_t why_len);

/* The plan's stages, tiles and gradient steps in one line (kronlayer's `plan` record). */
void kron_api_describe(const kron_api_plan *p, kron_pass pass, char *dst, size_t cap);

/* ---- failures inside a call (kron_api.c, used by kron_api_harness.c) ------------------------ */
/* The innermost kron_api call running on this thread, where a failure returns to: hx_die in
 * kron_api_harness.c writes its message to why and calls kron_api_unwind, which frees the
 * host blocks the call allocated and returns -1 from it. NULL outside a call. */
typedef struct kron_api_frame kron_api_frame;
kron_api_frame *kron_api_current(void);
void kron_api_unwind(kron_api_frame *f, const char *msg) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif
#endif
