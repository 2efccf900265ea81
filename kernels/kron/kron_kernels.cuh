// kron_kernels.cuh: v3's kernels (kron_kernels.cu) as the host side (kron_launch.cu) sees them:
// their arguments, and the kernels as pointers taken where they are defined, for the launches
// (cudaLaunchKernelEx), the launch checks and the kernel attributes.
#ifndef KRON_KERNELS_CUH
#define KRON_KERNELS_CUH

#include "kron.h"

// A stage's kernel arguments: the plan's stage and what the launch derives from it.
struct stage_args {
  kron_stage st;
  int g, trans;
  int f[KRON_MAX_FACTORS];
  const void *A[KRON_MAX_FACTORS];                   // A_l (the stage's l-th factor)
  int a_sm[KRON_MAX_FACTORS], lda[KRON_MAX_FACTORS]; // A_l in shared memory
  int buf[3];                                        // the tile buffers in shared memory
  void *side[KRON_MAX_FACTORS];
};

// The gradient kernel's arguments: every axis's step, factor and buffers (G_k, T_{k-1}).
struct grad_args {
  int m;
  kron_gstep ga[KRON_MAX_FACTORS];
  int f[KRON_MAX_FACTORS];
  long long aoff[KRON_MAX_FACTORS];
  int slot[KRON_MAX_FACTORS]; // elements of one tile in shared memory
  const void *G[KRON_MAX_FACTORS], *Tin[KRON_MAX_FACTORS];
};

template <typename T> using kron_stage_kernel = void (*)(stage_args, const T *, T *);
template <typename T> using kron_grad_kernel = void (*)(grad_args, T *);

// A stage's kernel: k_stage_tc<T, wm, wn> with tc (the stage's micro-tile is KRON_MT_TC), else
// k_stage<T>; nullptr: no kernel for that warp tile (not in KRON_TC_STAGE_TILES).
template <typename T> kron_stage_kernel<T> kron_stage_fn(int tc, int wm, int wn);
// k_grad<T>
template <typename T> kron_grad_kernel<T> kron_grad_fn();

// Every kernel by name: kron_launch.cu sets their attributes on a device, kron_gpu.cu logs their
// registers and spills (a `kernel_attr` line each: spills would explain a slow kernel).
struct kron_kernel_entry {
  const char *name;
  const void *fn;
};
extern const kron_kernel_entry kron_kernels[];
extern const int kron_nkernels;

#endif
