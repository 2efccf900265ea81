// kron_gpu.cu: kronlayer's GPU device and backend (kron_dev.h, kron.h): cuBLAS GEMMs for v1
// and v2, a tiled batched transpose (v1's permute), a column reduction (v2's gA partials), and
// v3's group kernels, which apply a group of factors to a tile held in shared memory
// (kron_tile.h has the index arithmetic, shared with the CPU emulation in kron_cpu.c).
#include "harness_gpu.h"
#include "kron_dev.h"
#include "kron_tile.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static attn_ctx g_ctx;
static size_t g_smem_optin;

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

// ---- kernels ----------------------------------------------------------------------------------
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

// The group's factors: sizes and offsets, by value.
struct group_args {
  kron_group g;
  int f[KRON_MAX_FACTORS];
  long long aoff[KRON_MAX_FACTORS];
  long long blocks;
};

extern __shared__ __align__(16) unsigned char kron_smem[];

// out tile = A (or A^T) on the tile axis of stride st, length f. Tile indices are ints (a tile
// is at most one block's shared memory): kron_tile.h's formulas in 32 bits.
template <typename T>
__device__ void tile_axis(const T *in, T *out, int tile, int st, int f, const T *__restrict__ A,
                          bool transpose) {
  for (int e = threadIdx.x; e < tile; e += blockDim.x) {
    int i = (e / st) % f, first = e - i * st;
    T acc = 0;
    if (transpose)
      for (int j = 0; j < f; j++) acc += __ldg(&A[j * f + i]) * in[first + j * st];
    else
      for (int j = 0; j < f; j++) acc += __ldg(&A[i * f + j]) * in[first + j * st];
    out[e] = acc;
  }
}

// gA[i][j] += sum over the tile's fibres of G[.., i, ..]·T[.., j, ..]: kron_fiber_elem without
// divisions (fibre (hi, lo) holds elements hi·st·f + i·st + lo)
template <typename T>
__device__ void tile_grad(const T *G, const T *Tl, int tile, int st, int f, T *gA) {
  int nhi = tile / (st * f);
  for (int pr = threadIdx.x; pr < f * f; pr += blockDim.x) {
    int i = pr / f, j = pr % f;
    T acc = 0;
    for (int hi = 0; hi < nhi; hi++) {
      const T *g = G + hi * st * f + i * st, *t = Tl + hi * st * f + j * st;
      for (int lo = 0; lo < st; lo++) acc += g[lo] * t[lo];
    }
    atomicAdd(&gA[pr], acc);
  }
}

template <typename T>
__global__ void k_group_fwd(group_args ga, const T *__restrict__ A, const T *__restrict__ in,
                            T *__restrict__ out) {
  const kron_group &g = ga.g;
  int tile = (int)kron_tile_elems(&g), mg = g.k1 - g.k0;
  T *buf = (T *)kron_smem;
  for (long long blk = blockIdx.x; blk < ga.blocks; blk += gridDim.x) {
    T *cur = buf, *nxt = buf + tile;
    for (int t = threadIdx.x; t < tile; t += blockDim.x) cur[t] = in[kron_tile_global(&g, blk, t)];
    __syncthreads();
    for (int l = 0; l < mg; l++) {
      tile_axis(cur, nxt, tile, (int)g.st[l], ga.f[l], A + ga.aoff[l], false);
      __syncthreads();
      T *sw = cur;
      cur = nxt;
      nxt = sw;
    }
    for (int t = threadIdx.x; t < tile; t += blockDim.x) out[kron_tile_global(&g, blk, t)] = cur[t];
    __syncthreads();
  }
}

template <typename T>
__global__ void k_group_bwd(group_args ga, const T *__restrict__ A, const T *__restrict__ t_in,
                            const T *__restrict__ g_out, T *__restrict__ g_in, T *__restrict__ gA) {
  const kron_group &g = ga.g;
  int tile = (int)kron_tile_elems(&g), mg = g.k1 - g.k0;
  T *Tt = (T *)kron_smem; // mg tiles: the group's input and the activations between its axes
  for (long long blk = blockIdx.x; blk < ga.blocks; blk += gridDim.x) {
    T *cur = Tt + mg * tile, *nxt = cur + tile;
    for (int t = threadIdx.x; t < tile; t += blockDim.x) {
      long long e = kron_tile_global(&g, blk, t);
      Tt[t] = t_in[e];
      cur[t] = g_out[e];
    }
    __syncthreads();
    for (int l = 0; l + 1 < mg; l++) {
      tile_axis(Tt + l * tile, Tt + (l + 1) * tile, tile, (int)g.st[l], ga.f[l], A + ga.aoff[l],
                false);
      __syncthreads();
    }
    for (int l = mg - 1; l >= 0; l--) {
      // gA_k reads cur and T_l, the A^T pass writes nxt: one barrier covers both
      tile_grad(cur, Tt + l * tile, tile, (int)g.st[l], ga.f[l], gA + ga.aoff[l]);
      tile_axis(cur, nxt, tile, (int)g.st[l], ga.f[l], A + ga.aoff[l], true);
      __syncthreads();
      T *sw = cur;
      cur = nxt;
      nxt = sw;
    }
    for (int t = threadIdx.x; t < tile; t += blockDim.x)
      g_in[kron_tile_global(&g, blk, t)] = cur[t];
    __syncthreads();
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

static group_args make_args(const kron_shape *s, const kron_group *g) {
  group_args ga;
  memset(&ga, 0, sizeof ga);
  ga.g = *g;
  for (int l = 0; l < g->k1 - g->k0; l++) {
    ga.f[l] = s->f[g->k0 + l];
    ga.aoff[l] = s->aoff[g->k0 + l];
  }
  ga.blocks = kron_group_blocks(g, s->batch);
  return ga;
}

static void gpu_group_fwd(kron_be *be, const char *name, const kron_shape *s, const kron_group *g,
                          const void *A, const void *in, void *out) {
  group_args ga = make_args(s, g);
  size_t smem = 2 * (size_t)kron_tile_elems(g) * (size_t)be->es;
  unsigned grid = (unsigned)(ga.blocks < (1LL << 30) ? ga.blocks : (1LL << 30));
  int st = step_begin(name);
  if (be->es == 4)
    k_group_fwd<float><<<grid, g->threads, smem, g_ctx.stream>>>(ga, (const float *)A,
                                                                 (const float *)in, (float *)out);
  else
    k_group_fwd<double><<<grid, g->threads, smem, g_ctx.stream>>>(
        ga, (const double *)A, (const double *)in, (double *)out);
  HX_CUDA_LAUNCH();
  step_end(st);
}

static void gpu_group_bwd(kron_be *be, const char *name, const kron_shape *s, const kron_group *g,
                          const void *A, const void *t_in, const void *g_out, void *g_in,
                          void *gA) {
  group_args ga = make_args(s, g);
  size_t smem = kron_group_smem(g, be->es);
  unsigned grid = (unsigned)(ga.blocks < (1LL << 30) ? ga.blocks : (1LL << 30));
  int st = step_begin(name);
  if (be->es == 4)
    k_group_bwd<float><<<grid, g->threads, smem, g_ctx.stream>>>(
        ga, (const float *)A, (const float *)t_in, (const float *)g_out, (float *)g_in,
        (float *)gA);
  else
    k_group_bwd<double><<<grid, g->threads, smem, g_ctx.stream>>>(
        ga, (const double *)A, (const double *)t_in, (const double *)g_out, (double *)g_in,
        (double *)gA);
  HX_CUDA_LAUNCH();
  step_end(st);
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
static void gpu_time_runs(kron_fn fn, void *arg, int warmup, int runs, float *ms) {
  int rc = hx_time_runs(g_ctx.stream, fn, arg, warmup, runs, ms);
  if (rc) hx_die(REPRO_EXIT_ERROR, "error", "a timed run failed (code %d)", rc);
}
static size_t gpu_peak(void) { return hx_dev_peak_bytes(); }

extern "C" int kron_gpu_open(kron_dev *dev, kron_be *be, int es, hx_device_info *info, char *why,
                             size_t why_len) {
  if (!hx_gpu_available(why, why_len)) return 0;
  hx_gpu_init(&g_ctx, info, 0);
  int optin = 0;
  HX_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  g_smem_optin = (size_t)optin;
  // let every group kernel take up to the opt-in maximum of dynamic shared memory
  HX_CUDA(
      cudaFuncSetAttribute(k_group_fwd<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  HX_CUDA(cudaFuncSetAttribute(k_group_fwd<double>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               optin));
  HX_CUDA(
      cudaFuncSetAttribute(k_group_bwd<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  HX_CUDA(cudaFuncSetAttribute(k_group_bwd<double>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               optin));
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
  memset(be, 0, sizeof *be);
  be->es = es;
  be->gemm = gpu_gemm;
  be->reduce = gpu_reduce;
  be->transpose = gpu_transpose;
  be->zero = gpu_zero;
  be->group_fwd = gpu_group_fwd;
  be->group_bwd = gpu_group_bwd;
  return 1;
}

extern "C" void kron_gpu_close(void) {
  hx_gpu_shutdown(&g_ctx);
  free(g_steps);
  g_steps = NULL;
  g_capsteps = 0;
}
