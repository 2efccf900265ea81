// kron_launch.cu: v3's launches (kron_launch.h): the stage and gradient kernels of
// kron_kernels.cu on a launcher's stream, each checked against the plan (kron_stage_check,
// kron_gstep_check, shared with the CPU backend) and the device first, chained with
// programmatic dependent launch where the device has it; gA's zeroing.
#include "cuda_check.h"
#include "harness.h"
#include "kron_kernels.cuh"
#include "kron_launch.h"

#include <cuda_runtime.h>

#include <string.h>

static cudaStream_t stream_of(const kron_launcher *L) { return (cudaStream_t)L->stream; }

static void launch_fail(const char *name, const char *why) {
  hx_die(REPRO_EXIT_ERROR, "error", "%s: launch configuration: %s", name, why);
}

// A v3 kernel on the launcher's stream, with programmatic dependent launch where it has it.
template <typename... Params, typename... Args>
static void launch_v3(const kron_launcher *L, void (*kernel)(Params...), dim3 grid, size_t smem,
                      Args... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(KRON_THREADS);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream_of(L);
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = L->pdl ? 1 : 0;
  HX_CUDA(cudaLaunchKernelEx(&cfg, kernel, args...));
}

static int step_begin(const kron_launcher *L, const char *name) {
  return L->step_begin ? L->step_begin(name) : -1;
}
static void step_end(const kron_launcher *L, int step) {
  if (L->step_end) L->step_end(step);
}

// 0 when a block of kernel with smem bytes fits the device, else -1 with why
static int fits(const void *kernel, size_t smem, size_t smem_optin, char *why, size_t len) {
  if (smem > smem_optin) {
    snprintf(why, len, "%zu bytes of shared memory, the device allows %zu", smem, smem_optin);
    return -1;
  }
  int blocks = 0;
  HX_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, KRON_THREADS, smem));
  if (blocks < 1) {
    snprintf(why, len, "no block of this kernel fits on an SM");
    return -1;
  }
  return 0;
}

// Once per kernel and size (unless the launcher's plans were checked whole): a block fits.
static void check_fits(const kron_launcher *L, const char *name, const void *kernel, size_t smem) {
  static const void *seen_kernel[16];
  static size_t seen_smem[16];
  static int nseen;
  if (L->fits_checked) return;
  for (int i = 0; i < nseen; i++)
    if (seen_kernel[i] == kernel && seen_smem[i] == smem) return;
  char why[128];
  if (fits(kernel, smem, L->smem_optin, why, sizeof why)) launch_fail(name, why);
  if (nseen < 16) seen_kernel[nseen] = kernel, seen_smem[nseen++] = smem;
}

// the stage's kernel: the tensor-core one of its warp tile, else the CUDA-core one
template <typename T>
static void launch_stage(const kron_launcher *L, const char *name, const kron_stage *st,
                         const stage_args &a, const void *in, void *out) {
  kron_stage_kernel<T> kernel = kron_stage_fn<T>(st->mt[0] == KRON_MT_TC, st->wm, st->wn);
  if (!kernel) launch_fail(name, "a tensor-core warp tile without a kernel");
  check_fits(L, name, (const void *)kernel, st->smem);
  int stp = step_begin(L, name);
  launch_v3(L, kernel, dim3(st->grid), st->smem, a, (const T *)in, (T *)out);
  HX_CUDA_LAUNCH();
  step_end(L, stp);
}

static void v3_stage(kron_be *be, const char *name, const kron_shape *s, const kron_stage *st,
                     int trans, const void *const *Ak, const void *in, void *out,
                     void *const *side) {
  const kron_launcher *L = (const kron_launcher *)be->impl;
  char why[256];
  if (kron_stage_check(s, st, be->es, why, sizeof why)) launch_fail(name, why);
  kron_stage_smem lay;
  kron_stage_layout(s, st, be->es, trans, &lay);
  stage_args a;
  memset(&a, 0, sizeof a);
  a.st = *st;
  a.g = st->k1 - st->k0;
  a.trans = trans;
  for (int l = 0; l < a.g; l++) {
    a.f[l] = s->f[st->k0 + l];
    a.A[l] = Ak[st->k0 + l];
    a.a_sm[l] = (int)lay.a[l];
    a.lda[l] = (int)lay.lda[l];
    if (l + 1 < a.g) a.side[l] = side[l];
  }
  for (int i = 0; i < 3; i++) a.buf[i] = (int)lay.buf[i];
  if (be->es == 4)
    launch_stage<float>(L, name, st, a, in, out);
  else
    launch_stage<double>(L, name, st, a, in, out);
}

// the gradient kernel's grid and shared memory: blocks along the rows (the largest split),
// axes, output blocks (the most of any axis)
static void grad_grid(const kron_shape *s, const kron_plan *p, dim3 *grid, size_t *smem) {
  unsigned gx = 1, gz = 1;
  *smem = 0;
  for (int k = 0; k < s->m; k++) {
    const kron_gstep *g = &p->ga[k];
    gx = (unsigned)g->ksplit > gx ? (unsigned)g->ksplit : gx;
    gz = (unsigned)(g->nob * g->nob) > gz ? (unsigned)(g->nob * g->nob) : gz;
    *smem = g->smem > *smem ? g->smem : *smem;
  }
  *grid = dim3(gx, (unsigned)s->m, gz);
}

static void v3_grad(kron_be *be, const char *name, const kron_shape *s, const kron_plan *p,
                    const void *const *G, const void *const *T, void *gA) {
  const kron_launcher *L = (const kron_launcher *)be->impl;
  char why[256];
  grad_args a;
  memset(&a, 0, sizeof a);
  a.m = s->m;
  if (!p->has_grad) launch_fail(name, "the plan has no gradient steps");
  for (int k = 0; k < s->m; k++) {
    const kron_gstep *g = &p->ga[k];
    if (kron_gstep_check(s, k, g, be->es, why, sizeof why)) launch_fail(name, why);
    a.ga[k] = *g;
    a.f[k] = s->f[k];
    a.aoff[k] = s->aoff[k];
    a.slot[k] = (int)kron_gstep_slot_elems(g);
    a.G[k] = G[k];
    a.Tin[k] = T[k];
  }
  dim3 grid;
  size_t smem;
  grad_grid(s, p, &grid, &smem);
  if (grid.z > 65535) launch_fail(name, "too many output blocks");
  const void *kernel =
      be->es == 4 ? (const void *)kron_grad_fn<float>() : (const void *)kron_grad_fn<double>();
  check_fits(L, name, kernel, smem);
  int stp = step_begin(L, name);
  if (be->es == 4)
    launch_v3(L, kron_grad_fn<float>(), grid, smem, a, (float *)gA);
  else
    launch_v3(L, kron_grad_fn<double>(), grid, smem, a, (double *)gA);
  HX_CUDA_LAUNCH();
  step_end(L, stp);
}

static void v3_zero(kron_be *be, void *p, long long n) {
  const kron_launcher *L = (const kron_launcher *)be->impl;
  HX_CUDA(cudaMemsetAsync(p, 0, (size_t)n * (size_t)be->es, stream_of(L)));
}

extern "C" void kron_launch_backend(kron_be *be, kron_launcher *L) {
  be->impl = L;
  be->stage = v3_stage;
  be->grad = v3_grad;
  be->zero = v3_zero;
}

extern "C" void kron_launch_setup(kron_launch_limits *lim) {
  int dev = 0, optin = 0, nsm = 0, smem_sm = 0, major = 0;
  HX_CUDA(cudaGetDevice(&dev));
  HX_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  HX_CUDA(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
  HX_CUDA(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  HX_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  // let the v3 kernels take up to the opt-in maximum of dynamic shared memory, and prefer
  // shared memory over L1 (more blocks per SM)
  for (int i = 0; i < kron_nkernels; i++) {
    const void *fn = kron_kernels[i].fn;
    HX_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    HX_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 cudaSharedmemCarveoutMaxShared));
  }
  lim->device = dev;
  lim->smem_optin = (size_t)optin;
  lim->smem_sm = (size_t)smem_sm;
  lim->nsm = nsm;
  lim->cc_major = major;
}

template <typename T>
static int check_plan_of(const kron_shape *s, const kron_plan *p, size_t smem_optin, char *why,
                         size_t len) {
  char sub[128];
  for (int i = 0; i < p->nstages; i++) {
    const kron_stage *st = &p->st[i];
    kron_stage_kernel<T> kernel = kron_stage_fn<T>(st->mt[0] == KRON_MT_TC, st->wm, st->wn);
    if (!kernel) {
      snprintf(why, len, "stage %d: a tensor-core warp tile %dx%d without a kernel", i + 1, st->wm,
               st->wn);
      return -1;
    }
    if (fits((const void *)kernel, st->smem, smem_optin, sub, sizeof sub)) {
      snprintf(why, len, "stage %d: %s", i + 1, sub);
      return -1;
    }
  }
  if (!p->has_grad) return 0;
  dim3 grid;
  size_t smem;
  grad_grid(s, p, &grid, &smem);
  if (grid.z > 65535) {
    snprintf(why, len, "gradient kernel: too many output blocks");
    return -1;
  }
  if (fits((const void *)kron_grad_fn<T>(), smem, smem_optin, sub, sizeof sub)) {
    snprintf(why, len, "gradient kernel: %s", sub);
    return -1;
  }
  return 0;
}

extern "C" int kron_launch_check_plan(const kron_shape *s, const kron_plan *p, int es,
                                      size_t smem_optin, char *why, size_t len) {
  return es == 4 ? check_plan_of<float>(s, p, smem_optin, why, len)
                 : check_plan_of<double>(s, p, smem_optin, why, len);
}
