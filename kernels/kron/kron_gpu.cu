// kron_gpu.cu: kronlayer's GPU device and backend (kron_dev.h, kron.h): cuBLAS GEMMs for v1
// and v2, a tiled batched transpose (v1's permute), a column reduction (v2's gA partials), and
// v3's kernels (kron_kernels.cu) launched through kron_launch.cu on the run's stream, each
// launch a profile step.
#include "harness_gpu.h"
#include "kron_dev.h"
#include "kron_kernels.cuh"
#include "kron_launch.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static hx_ctx g_ctx;
static kron_launcher g_launcher; // v3's launches: the run's stream, the profile steps

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
static void gpu_time_runs(kron_fn fn, void *arg, int warmup, int runs, float *ms, hx_timing *how) {
  int rc = hx_time_runs(g_ctx.stream, fn, arg, warmup, runs, ms, how);
  if (rc) hx_die(REPRO_EXIT_ERROR, "error", "a timed run failed (code %d)", rc);
}
static size_t gpu_peak(void) { return hx_dev_peak_bytes(); }

extern "C" int kron_gpu_open(kron_dev *dev, kron_be *be, int es, hx_device_info *info, char *why,
                             size_t why_len) {
  if (!hx_gpu_available(why, why_len)) return 0;
  hx_gpu_init(&g_ctx, info);
  kron_launch_limits lim;
  kron_launch_setup(&lim);
  const char *pdl = getenv("REPRO_KRON_PDL"); // "0": plain launches (a measurement switch)
  memset(&g_launcher, 0, sizeof g_launcher);
  g_launcher.stream = g_ctx.stream;
  g_launcher.pdl = lim.cc_major >= 9 && !(pdl && !strcmp(pdl, "0"));
  g_launcher.smem_optin = lim.smem_optin;
  g_launcher.step_begin = step_begin;
  g_launcher.step_end = step_end;
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
  dev->smem_optin = lim.smem_optin;
  dev->smem_sm = lim.smem_sm;
  dev->nsm = lim.nsm;
  dev->describe = gpu_describe;
  memset(be, 0, sizeof *be);
  be->es = es;
  be->gemm = gpu_gemm;
  be->reduce = gpu_reduce;
  be->transpose = gpu_transpose;
  kron_launch_backend(be, &g_launcher);
  return 1;
}

extern "C" void kron_gpu_close(void) {
  hx_gpu_shutdown(&g_ctx);
  free(g_steps);
  g_steps = NULL;
  g_capsteps = 0;
}
