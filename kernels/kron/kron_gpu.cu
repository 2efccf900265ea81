// kron_gpu.cu: kronlayer's GPU device and backend (kron_dev.h, kron.h): cuBLAS GEMMs for v1
// and v2, a tiled batched transpose (v1's permute), a column reduction (v2's gA partials), and
// the launches of v3's kernels (kron_kernels.cu): each checked against the plan and the device
// first, chained with programmatic dependent launch where the device has it.
#include "harness_gpu.h"
#include "kron_dev.h"
#include "kron_kernels.cuh"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static attn_ctx g_ctx;
static size_t g_smem_optin;
static int g_pdl; // launch v3's kernels with programmatic dependent launch (sm_90 and later)

// ---- profile steps: an event pair around each backend call while profiling --------------------
typedef struct {
  char name[64];
  cudaEvent_t ev[2];
} gpu_step;
static kron_prof *g_prof;
static gpu_step *g_steps;
static int g_nsteps, g_capsteps;
static cudaEvent_t g_base;

static int step_begin(const char *name) {
  if (!g_prof) return -1;
  if (g_nsteps == g_capsteps) {
    int cap = g_capsteps ? 2 * g_capsteps : 64;
    gpu_step *grown = (gpu_step *)realloc(g_steps, (size_t)cap * sizeof *grown);
    if (!grown) hx_die(REPRO_EXIT_OOM, "oom", "out of host memory for profile events");
    g_steps = grown;
    g_capsteps = cap;
  }
  gpu_step *st = &g_steps[g_nsteps];
  snprintf(st->name, sizeof st->name, "%s", name);
  HX_CUDA(cudaEventCreate(&st->ev[0]));
  HX_CUDA(cudaEventCreate(&st->ev[1]));
  HX_CUDA(cudaEventRecord(st->ev[0], g_ctx.stream));
  return g_nsteps++;
}

static void step_end(int i) {
  if (i >= 0) HX_CUDA(cudaEventRecord(g_steps[i].ev[1], g_ctx.stream));
}

static void gpu_prof_start(kron_be *be, kron_prof *p) {
  (void)be;
  g_prof = p;
  g_nsteps = 0;
  HX_CUDA(cudaEventCreate(&g_base));
  HX_CUDA(cudaEventRecord(g_base, g_ctx.stream));
}

static void gpu_prof_stop(kron_be *be) {
  (void)be;
  HX_CUDA(cudaStreamSynchronize(g_ctx.stream));
  for (int i = 0; i < g_nsteps; i++) {
    float t0 = 0, dur = 0;
    HX_CUDA(cudaEventElapsedTime(&t0, g_base, g_steps[i].ev[0]));
    HX_CUDA(cudaEventElapsedTime(&dur, g_steps[i].ev[0], g_steps[i].ev[1]));
    kron_prof_add(g_prof, g_steps[i].name, t0 * 1e3, dur * 1e3);
    HX_CUDA(cudaEventDestroy(g_steps[i].ev[0]));
    HX_CUDA(cudaEventDestroy(g_steps[i].ev[1]));
  }
  HX_CUDA(cudaEventDestroy(g_base));
  g_prof = NULL;
  g_nsteps = 0;
}

// ---- v1's and v2's kernels: the batched transpose and the column reduction ------------------
static unsigned grid_1d(long long n, int block) {
  long long g = (n + block - 1) / block;
  if (g < 1) g = 1;
  return (unsigned)(g < (1LL << 30) ? g : (1LL << 30));
}

// dst[b][c][r] = src[b][r][c]: 32x32 tiles through shared memory (padded: no bank conflicts)
template <typename T>
__global__ void k_transpose(const T *__restrict__ src, T *__restrict__ dst, long long nb,
                            long long rows, long long cols) {
  __shared__ T tile[32][33];
  long long tr = (rows + 31) / 32, tc = (cols + 31) / 32, ntiles = nb * tr * tc;
  for (long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
    long long b = t / (tr * tc), rb = (t / tc) % tr, cb = t % tc;
    const T *s = src + b * rows * cols;
    T *d = dst + b * rows * cols;
    for (int y = threadIdx.y; y < 32; y += blockDim.y) {
      long long r = rb * 32 + y, c = cb * 32 + threadIdx.x;
      if (r < rows && c < cols) tile[y][threadIdx.x] = s[r * cols + c];
    }
    __syncthreads();
    for (int y = threadIdx.y; y < 32; y += blockDim.y) {
      long long c = cb * 32 + y, r = rb * 32 + threadIdx.x;
      if (r < rows && c < cols) d[c * rows + r] = tile[threadIdx.x][y];
    }
    __syncthreads();
  }
}

// out[e] = sum_b in[b*len + e]
template <typename T>
__global__ void k_reduce(const T *__restrict__ in, long long nb, long long len,
                         T *__restrict__ out) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < len;
       e += (long long)gridDim.x * blockDim.x) {
    T acc = 0;
    for (long long b = 0; b < nb; b++) acc += in[b * len + e];
    out[e] = acc;
  }
}

// ---- the backend ------------------------------------------------------------------------------
static int as_int(long long v, const char *what) {
  if (v > INT_MAX)
    hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported", "%s = %lld is beyond cuBLAS's int arguments",
           what, v);
  return (int)v;
}

static void gpu_gemm(kron_be *be, const char *name, int ta, int tb, long long m, long long n,
                     long long k, const void *A, long long lda, long long sA, const void *B,
                     long long ldb, long long sB, void *C, long long ldc, long long sC,
                     long long batch) {
  cublasHandle_t h = (cublasHandle_t)g_ctx.cublas;
  cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  int im = as_int(m, "m"), in = as_int(n, "n"), ik = as_int(k, "k"), bt = as_int(batch, "batch");
  int ila = as_int(lda, "lda"), ilb = as_int(ldb, "ldb"), ilc = as_int(ldc, "ldc");
  int st = step_begin(name);
  if (be->es == 4) {
    const float one = 1, zero = 0;
    if (batch == 1)
      HX_CUBLAS(cublasSgemm(h, oa, ob, im, in, ik, &one, (const float *)A, ila, (const float *)B,
                            ilb, &zero, (float *)C, ilc));
    else
      HX_CUBLAS(cublasSgemmStridedBatched(h, oa, ob, im, in, ik, &one, (const float *)A, ila, sA,
                                          (const float *)B, ilb, sB, &zero, (float *)C, ilc, sC,
                                          bt));
  } else {
    const double one = 1, zero = 0;
    if (batch == 1)
      HX_CUBLAS(cublasDgemm(h, oa, ob, im, in, ik, &one, (const double *)A, ila, (const double *)B,
                            ilb, &zero, (double *)C, ilc));
    else
      HX_CUBLAS(cublasDgemmStridedBatched(h, oa, ob, im, in, ik, &one, (const double *)A, ila, sA,
                                          (const double *)B, ilb, sB, &zero, (double *)C, ilc, sC,
                                          bt));
  }
  step_end(st);
}

static void gpu_reduce(kron_be *be, const char *name, const void *in, long long nb, long long len,
                       void *out) {
  int st = step_begin(name);
  if (be->es == 4)
    k_reduce<float>
        <<<grid_1d(len, 256), 256, 0, g_ctx.stream>>>((const float *)in, nb, len, (float *)out);
  else
    k_reduce<double>
        <<<grid_1d(len, 256), 256, 0, g_ctx.stream>>>((const double *)in, nb, len, (double *)out);
  HX_CUDA_LAUNCH();
  step_end(st);
}

static void gpu_transpose(kron_be *be, const char *name, const void *src, void *dst, long long nb,
                          long long rows, long long cols) {
  long long ntiles = nb * ((rows + 31) / 32) * ((cols + 31) / 32);
  unsigned grid = (unsigned)(ntiles < (1LL << 30) ? ntiles : (1LL << 30));
  dim3 block(32, 8);
  int st = step_begin(name);
  if (be->es == 4)
    k_transpose<float>
        <<<grid, block, 0, g_ctx.stream>>>((const float *)src, (float *)dst, nb, rows, cols);
  else
    k_transpose<double>
        <<<grid, block, 0, g_ctx.stream>>>((const double *)src, (double *)dst, nb, rows, cols);
  HX_CUDA_LAUNCH();
  step_end(st);
}

static void gpu_zero(kron_be *be, void *p, long long n) {
  HX_CUDA(cudaMemsetAsync(p, 0, (size_t)n * (size_t)be->es, g_ctx.stream));
}

// Validation before every v3 launch: the plan's own check (kron_stage_check, shared with the
// CPU backend), the device's shared memory, and, once per kernel and size, that a block fits
// on an SM at all.
static void launch_fail(const char *name, const char *why) {
  hx_die(REPRO_EXIT_ERROR, "error", "%s: launch configuration: %s", name, why);
}

// A v3 kernel on the stream, with programmatic dependent launch where the device has it.
template <typename... Params, typename... Args>
static void launch_v3(void (*kernel)(Params...), dim3 grid, size_t smem, Args... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(KRON_THREADS);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = g_ctx.stream;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at;
  cfg.numAttrs = g_pdl ? 1 : 0;
  HX_CUDA(cudaLaunchKernelEx(&cfg, kernel, args...));
}

static void check_fits(const char *name, const void *kernel, size_t smem) {
  static const void *seen_kernel[16];
  static size_t seen_smem[16];
  static int nseen;
  for (int i = 0; i < nseen; i++)
    if (seen_kernel[i] == kernel && seen_smem[i] == smem) return;
  if (smem > g_smem_optin) {
    char why[128];
    snprintf(why, sizeof why, "%zu bytes of shared memory, the device allows %zu", smem,
             g_smem_optin);
    launch_fail(name, why);
  }
  int blocks = 0;
  HX_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, KRON_THREADS, smem));
  if (blocks < 1) launch_fail(name, "no block of this kernel fits on an SM");
  if (nseen < 16) seen_kernel[nseen] = kernel, seen_smem[nseen++] = smem;
}

// the stage's kernel: the tensor-core one of its warp tile, else the CUDA-core one
template <typename T>
static void launch_stage(const char *name, const kron_stage *st, const stage_args &a, const void *A,
                         const void *in, void *out) {
  kron_stage_kernel<T> kernel = kron_stage_fn<T>(st->mt[0] == KRON_MT_TC, st->wm, st->wn);
  if (!kernel) launch_fail(name, "a tensor-core warp tile without a kernel");
  check_fits(name, (const void *)kernel, st->smem);
  int stp = step_begin(name);
  launch_v3(kernel, dim3(st->grid), st->smem, a, (const T *)A, (const T *)in, (T *)out);
  HX_CUDA_LAUNCH();
  step_end(stp);
}

static void gpu_stage(kron_be *be, const char *name, const kron_shape *s, const kron_stage *st,
                      int trans, const void *A, const void *in, void *out, void *const *side) {
  char why[256];
  if (kron_stage_check(s, st, be->es, why, sizeof why)) launch_fail(name, why);
  kron_stage_smem L;
  kron_stage_layout(s, st, be->es, trans, &L);
  stage_args a;
  memset(&a, 0, sizeof a);
  a.st = *st;
  a.g = st->k1 - st->k0;
  a.trans = trans;
  for (int l = 0; l < a.g; l++) {
    a.f[l] = s->f[st->k0 + l];
    a.aoff[l] = s->aoff[st->k0 + l];
    a.a_sm[l] = (int)L.a[l];
    a.lda[l] = (int)L.lda[l];
    if (l + 1 < a.g) a.side[l] = side[l];
  }
  for (int i = 0; i < 3; i++) a.buf[i] = (int)L.buf[i];
  if (be->es == 4)
    launch_stage<float>(name, st, a, A, in, out);
  else
    launch_stage<double>(name, st, a, A, in, out);
}

static void gpu_grad(kron_be *be, const char *name, const kron_shape *s, const kron_plan *p,
                     const void *const *G, const void *const *T, void *gA) {
  char why[256];
  grad_args a;
  memset(&a, 0, sizeof a);
  a.m = s->m;
  unsigned gx = 1, gz = 1;
  size_t smem = 0;
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
    gx = (unsigned)g->ksplit > gx ? (unsigned)g->ksplit : gx;
    gz = (unsigned)(g->nob * g->nob) > gz ? (unsigned)(g->nob * g->nob) : gz;
    smem = g->smem > smem ? g->smem : smem;
  }
  if (gz > 65535) launch_fail(name, "too many output blocks");
  const void *kernel =
      be->es == 4 ? (const void *)kron_grad_fn<float>() : (const void *)kron_grad_fn<double>();
  check_fits(name, kernel, smem);
  dim3 grid(gx, (unsigned)s->m, gz);
  int stp = step_begin(name);
  if (be->es == 4)
    launch_v3(kron_grad_fn<float>(), grid, smem, a, (float *)gA);
  else
    launch_v3(kron_grad_fn<double>(), grid, smem, a, (double *)gA);
  HX_CUDA_LAUNCH();
  step_end(stp);
}

// a `kernel_attr` line per v3 kernel: registers and spills (spills would explain a slow kernel)
static void gpu_describe(FILE *out) {
  for (int i = 0; i < kron_nkernels; i++) {
    cudaFuncAttributes at;
    HX_CUDA(cudaFuncGetAttributes(&at, kron_kernels[i].fn));
    fprintf(out, "kernel_attr name=%s regs=%d local_bytes=%zu max_threads=%d\n",
            kron_kernels[i].name, at.numRegs, at.localSizeBytes, at.maxThreadsPerBlock);
  }
}

// ---- the device ---------------------------------------------------------------------------------
static void gpu_upload(void *dst, const void *src, size_t bytes) {
  if (bytes) HX_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}
static void gpu_poison(void *p, size_t bytes) { hx_dev_poison(p, bytes, g_ctx.stream); }
static void gpu_sync(void) {
  HX_CUDA(cudaStreamSynchronize(g_ctx.stream));
  HX_CUDA_LAUNCH();
}
static void gpu_time_runs(kron_fn fn, void *arg, int warmup, int runs, float *ms,
                          hx_timing *how) {
  int rc = hx_time_runs(g_ctx.stream, fn, arg, warmup, runs, ms, how);
  if (rc) hx_die(REPRO_EXIT_ERROR, "error", "a timed run failed (code %d)", rc);
}
static size_t gpu_peak(void) { return hx_dev_peak_bytes(); }

extern "C" int kron_gpu_open(kron_dev *dev, kron_be *be, int es, hx_device_info *info, char *why,
                             size_t why_len) {
  if (!hx_gpu_available(why, why_len)) return 0;
  hx_gpu_init(&g_ctx, info, 0);
  const char *pdl = getenv("REPRO_KRON_PDL"); // "0": plain launches (a measurement switch)
  g_pdl = g_ctx.cc_major >= 9 && !(pdl && !strcmp(pdl, "0"));
  int optin = 0;
  HX_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  g_smem_optin = (size_t)optin;
  // let the v3 kernels take up to the opt-in maximum of dynamic shared memory, and prefer
  // shared memory over L1 (more blocks per SM)
  for (int i = 0; i < kron_nkernels; i++) {
    const void *fn = kron_kernels[i].fn;
    HX_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    HX_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 cudaSharedmemCarveoutMaxShared));
  }
  int nsm = 0, smem_sm = 0;
  HX_CUDA(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
  HX_CUDA(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
  memset(dev, 0, sizeof *dev);
  dev->on_gpu = 1;
  dev->alloc = hx_dev_alloc;
  dev->free = hx_dev_free;
  dev->upload = gpu_upload;
  dev->download = hx_dev_to_host;
  dev->poison = gpu_poison;
  dev->sync = gpu_sync;
  dev->time_runs = gpu_time_runs;
  dev->prof_start = gpu_prof_start;
  dev->prof_stop = gpu_prof_stop;
  dev->peak_bytes = gpu_peak;
  dev->smem_optin = g_smem_optin;
  dev->smem_sm = (size_t)smem_sm;
  dev->nsm = nsm;
  dev->describe = gpu_describe;
  memset(be, 0, sizeof *be);
  be->es = es;
  be->gemm = gpu_gemm;
  be->reduce = gpu_reduce;
  be->transpose = gpu_transpose;
  be->zero = gpu_zero;
  be->stage = gpu_stage;
  be->grad = gpu_grad;
  return 1;
}

extern "C" void kron_gpu_close(void) {
  hx_gpu_shutdown(&g_ctx);
  free(g_steps);
  g_steps = NULL;
  g_capsteps = 0;
}
