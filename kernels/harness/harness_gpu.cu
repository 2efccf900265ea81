// harness_gpu.cu: device half of the harness: checks, tracking allocator, context, device
// info, timing (CUDA events, graphs), poisoning and the seeded N(0,1) fills (see harness_gpu.h).
#include "harness_gpu.h"
#include "rng.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cuBLAS workspace: NVIDIA recommends 32 MiB on Hopper (4 MiB elsewhere); one size for all. */
#define HX_CUBLAS_WORKSPACE_BYTES ((size_t)32 << 20)

/* While hx_time_runs tries to capture a call into a CUDA graph, a failing check marks the
 * capture as failed instead of ending the run: the call is then timed without a graph. */
static int capture_trial;
static int capture_failed;

extern "C" void hx_cuda_check(int err, const char *call, const char *file, int line) {
  if (err == cudaSuccess) return;
  if (capture_trial) {
    capture_failed = 1;
    return;
  }
  cudaError_t e = (cudaError_t)err;
  if (e == cudaErrorMemoryAllocation)
    hx_die(REPRO_EXIT_OOM, "oom", "%s:%d: %s: %s", file, line, call, cudaGetErrorString(e));
  hx_die(REPRO_EXIT_ERROR, "error", "%s:%d: %s: %s (%s)", file, line, call, cudaGetErrorString(e),
         cudaGetErrorName(e));
}

extern "C" void hx_cublas_check(int status, const char *call, const char *file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  if (capture_trial) {
    capture_failed = 1;
    return;
  }
  cublasStatus_t s = (cublasStatus_t)status;
  if (s == CUBLAS_STATUS_ALLOC_FAILED)
    hx_die(REPRO_EXIT_OOM, "oom", "%s:%d: %s: %s", file, line, call, cublasGetStatusString(s));
  hx_die(REPRO_EXIT_ERROR, "error", "%s:%d: %s: %s (%s)", file, line, call,
         cublasGetStatusString(s), cublasGetStatusName(s));
}

/* ---- tracking allocator: a small table of live blocks (a cell has a dozen at most) ---- */
typedef struct {
  void *ptr;
  size_t bytes;
} live_block;

static live_block *blocks;
static size_t n_blocks, cap_blocks;
static size_t dev_current, dev_peak;

extern "C" void *hx_dev_try_alloc(size_t bytes, const char *what) {
  void *p = NULL;
  cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError(); /* clear the sticky-free error so later calls are clean */
    return NULL;
  }
  if (e != cudaSuccess)
    hx_die(REPRO_EXIT_ERROR, "error", "cudaMalloc(%zu bytes for %s): %s", bytes, what,
           cudaGetErrorString(e));
  if (n_blocks == cap_blocks) {
    size_t cap = cap_blocks ? 2 * cap_blocks : 32;
    live_block *grown = (live_block *)realloc(blocks, cap * sizeof *grown);
    if (!grown) hx_die(REPRO_EXIT_OOM, "oom", "out of host memory tracking device blocks");
    blocks = grown;
    cap_blocks = cap;
  }
  blocks[n_blocks].ptr = p;
  blocks[n_blocks].bytes = bytes;
  n_blocks++;
  dev_current += bytes;
  if (dev_current > dev_peak) dev_peak = dev_current;
  return p;
}

extern "C" void *hx_dev_alloc(size_t bytes, const char *what) {
  void *p = hx_dev_try_alloc(bytes, what);
  if (!p)
    hx_die(REPRO_EXIT_OOM, "oom", "out of device memory allocating %.1f MiB for %s (%.1f MiB held)",
           bytes / 1048576.0, what, dev_current / 1048576.0);
  return p;
}

extern "C" void hx_dev_free(void *p) {
  if (!p) return;
  for (size_t i = 0; i < n_blocks; i++) {
    if (blocks[i].ptr != p) continue;
    dev_current -= blocks[i].bytes;
    blocks[i] = blocks[--n_blocks];
    HX_CUDA(cudaFree(p));
    return;
  }
  hx_die(REPRO_EXIT_ERROR, "error", "hx_dev_free: %p was not allocated by hx_dev_alloc", p);
}

extern "C" size_t hx_dev_current_bytes(void) { return dev_current; }
extern "C" size_t hx_dev_peak_bytes(void) { return dev_peak; }
extern "C" void hx_dev_reset_peak(void) { dev_peak = dev_current; }

/* ---- device info and context ------------------------------------------------------------ */

/* 1 when tok (len bytes) looks like a driver version: digits and dots with at least one dot. */
static int is_version_token(const char *tok, size_t len) {
  int dots = 0;
  for (size_t i = 0; i < len; i++) {
    if (tok[i] == '.')
      dots++;
    else if (tok[i] < '0' || tok[i] > '9')
      return 0;
  }
  return dots > 0 && tok[0] != '.';
}

/* The kernel driver's version ("580.159.04") from /proc, whose first line reads e.g.
 * "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ...":
 * the first version-shaped word. cudaDriverGetVersion only knows the CUDA API level the
 * driver supports, which we use when /proc has no answer. */
static void read_driver_version(char *dst, size_t cap) {
  FILE *f = fopen("/proc/driver/nvidia/version", "r");
  if (f) {
    char line[512];
    if (fgets(line, sizeof line, f)) {
      for (const char *p = line; *p;) {
        p += strspn(p, " \t\n");
        size_t len = strcspn(p, " \t\n");
        if (len > 0 && len < cap && is_version_token(p, len)) {
          memcpy(dst, p, len);
          dst[len] = '\0';
          fclose(f);
          return;
        }
        p += len;
      }
    }
    fclose(f);
  }
  int v = 0;
  HX_CUDA(cudaDriverGetVersion(&v));
  snprintf(dst, cap, "cuda%d.%d", v / 1000, (v % 1000) / 10);
}

/* nvidia-smi's spelling of a device UUID: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx. */
static void format_uuid(const cudaUUID_t *id, char *dst, size_t cap) {
  const unsigned char *b = (const unsigned char *)id->bytes;
  snprintf(dst, cap, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
           b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
           b[14], b[15]);
}

extern "C" void hx_device_info_gpu(hx_device_info *info) {
  hx_device_info_cpu(info);
  int dev = 0, rt = 0;
  HX_CUDA(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  HX_CUDA(cudaGetDeviceProperties(&prop, dev));
  snprintf(info->gpu, sizeof info->gpu, "%s", prop.name);
  snprintf(info->cc, sizeof info->cc, "%d.%d", prop.major, prop.minor);
  info->sms = prop.multiProcessorCount;
  int clock_khz = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev) == cudaSuccess)
    info->clock_mhz = clock_khz / 1000;
  read_driver_version(info->driver, sizeof info->driver);
  format_uuid(&prop.uuid, info->uuid, sizeof info->uuid);
  const char *index = getenv("REPRO_GPU_INDEX");
  if (index) snprintf(info->index, sizeof info->index, "%s", index);
  HX_CUDA(cudaRuntimeGetVersion(&rt));
  snprintf(info->cuda, sizeof info->cuda, "%d.%d", rt / 1000, (rt % 1000) / 10);
}

extern "C" int hx_gpu_available(char *why, size_t why_len) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    snprintf(why, why_len, "no usable GPU: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    return 0;
  }
  if (count == 0) {
    snprintf(why, why_len, "no usable GPU: no CUDA device visible");
    return 0;
  }
  return 1;
}

static void *cublas_workspace;

extern "C" void hx_gpu_init(hx_ctx *ctx, hx_device_info *info) {
  memset(ctx, 0, sizeof *ctx);
  int count = 0;
  HX_CUDA(cudaGetDeviceCount(&count));
  HX_CUDA(cudaSetDevice(0));
  hx_device_info_gpu(info);
  cudaDeviceProp prop;
  HX_CUDA(cudaGetDeviceProperties(&prop, 0));
  ctx->sm_count = prop.multiProcessorCount;
  ctx->cc_major = prop.major;
  ctx->cc_minor = prop.minor;
  static char system_err[512];
  system_err[0] = '\0';
  ctx->err = system_err;
  ctx->err_len = sizeof system_err;
  HX_CUDA(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking));
  cublasHandle_t handle;
  HX_CUBLAS(cublasCreate(&handle));
  HX_CUBLAS(cublasSetStream(handle, ctx->stream));
  cublas_workspace = hx_dev_alloc(HX_CUBLAS_WORKSPACE_BYTES, "cuBLAS workspace");
  HX_CUBLAS(cublasSetWorkspace(handle, cublas_workspace, HX_CUBLAS_WORKSPACE_BYTES));
  ctx->cublas = handle;
}

extern "C" void hx_die_system(const hx_ctx *ctx, const char *what, int rc) {
  const char *why = ctx->err && ctx->err[0] ? ctx->err : "no reason given";
  if (rc == HX_UNSUPPORTED) hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported", "%s: %s", what, why);
  if (rc == HX_OOM) hx_die(REPRO_EXIT_OOM, "oom", "%s: out of memory: %s", what, why);
  hx_die(REPRO_EXIT_ERROR, "error", "%s failed (code %d): %s", what, rc, why);
}

extern "C" void hx_gpu_shutdown(hx_ctx *ctx) {
  if (ctx->cublas) HX_CUBLAS(cublasDestroy((cublasHandle_t)ctx->cublas));
  ctx->cublas = NULL;
  hx_dev_free(cublas_workspace);
  cublas_workspace = NULL;
  if (ctx->stream) HX_CUDA(cudaStreamDestroy(ctx->stream));
  ctx->stream = NULL;
}

/* ---- timing ------------------------------------------------------------------------------ */

/* One sample: `calls` calls of fn, or one replay of graph when given. */
static int run_sample(cudaStream_t stream, hx_run_fn fn, void *arg, cudaGraphExec_t graph,
                      int calls) {
  if (graph) {
    HX_CUDA(cudaGraphLaunch(graph, stream));
    return 0;
  }
  int rc = 0;
  for (int i = 0; i < calls && !rc; i++) rc = fn(arg);
  return rc;
}

/* ms[0..n) := milliseconds of n samples, one event pair each, all enqueued before the one
 * synchronisation so the samples run back to back as in the warmup (no idle GPU between). */
static int time_samples(cudaStream_t stream, hx_run_fn fn, void *arg, cudaGraphExec_t graph,
                        int calls, int n, float *ms) {
  cudaEvent_t *ev = (cudaEvent_t *)malloc(2 * (size_t)n * sizeof *ev);
  if (!ev) hx_die(REPRO_EXIT_OOM, "oom", "out of host memory for %d timing events", n);
  for (int i = 0; i < 2 * n; i++) HX_CUDA(cudaEventCreate(&ev[i]));
  int rc = 0;
  for (int i = 0; i < n && !rc; i++) {
    HX_CUDA(cudaEventRecord(ev[2 * i], stream));
    rc = run_sample(stream, fn, arg, graph, calls);
    HX_CUDA(cudaEventRecord(ev[2 * i + 1], stream));
  }
  HX_CUDA(cudaStreamSynchronize(stream));
  HX_CUDA_LAUNCH();
  for (int i = 0; i < n && !rc; i++)
    HX_CUDA(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
  for (int i = 0; i < 2 * n; i++) HX_CUDA(cudaEventDestroy(ev[i]));
  free(ev);
  return rc;
}

/* fn called `calls` times into a CUDA graph, instantiated and uploaded; NULL when the calls
 * cannot be captured (fn synchronises, allocates or fails under capture), with every error
 * of the attempt cleared. */
static cudaGraphExec_t capture_calls(cudaStream_t stream, hx_run_fn fn, void *arg, int calls) {
  capture_trial = 1;
  capture_failed = 0;
  int rc = 0;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) != cudaSuccess)
    capture_failed = 1;
  for (int i = 0; i < calls && !rc && !capture_failed; i++) rc = fn(arg);
  cudaGraph_t graph = NULL;
  cudaError_t end = cudaStreamEndCapture(stream, &graph);
  capture_trial = 0;
  cudaGraphExec_t exec = NULL;
  if (!rc && !capture_failed && end == cudaSuccess && graph &&
      cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
    exec = NULL;
  if (exec && cudaGraphUpload(exec, stream) != cudaSuccess) {
    cudaGraphExecDestroy(exec);
    exec = NULL;
  }
  if (graph) cudaGraphDestroy(graph);
  (void)cudaGetLastError(); /* the attempt's errors are not the run's */
  HX_CUDA(cudaStreamSynchronize(stream));
  return exec;
}

/* Calls per timed run: enough that a run lasts HX_SAMPLE_MS, from the fastest of three
 * single calls; 1 when REPRO_TIMING=events. */
static int calls_per_sample(cudaStream_t stream, hx_run_fn fn, void *arg, int *rc) {
  const char *forced = getenv("REPRO_TIMING");
  if (forced && !strcmp(forced, "events")) return 1;
  float one[3];
  *rc = time_samples(stream, fn, arg, NULL, 1, 3, one);
  if (*rc) return 1; /* the samples are not all there; the caller stops on rc */
  float fastest = one[0] < one[1] ? one[0] : one[1];
  return hx_calls_per_sample(fastest < one[2] ? fastest : one[2]);
}

extern "C" int hx_time_runs(cudaStream_t stream, hx_run_fn fn, void *arg, int warmup, int runs,
                            float *ms, hx_timing *how) {
  for (int i = 0; i < warmup; i++) {
    int rc = fn(arg);
    if (rc) return rc;
  }
  HX_CUDA(cudaStreamSynchronize(stream));
  HX_CUDA_LAUNCH();
  int rc = 0;
  hx_timing used = {HX_TIMING_EVENTS, calls_per_sample(stream, fn, arg, &rc)};
  cudaGraphExec_t graph = NULL;
  if (!rc && used.calls_per_run > 1) {
    graph = capture_calls(stream, fn, arg, used.calls_per_run);
    used.method = graph ? HX_TIMING_GRAPH : HX_TIMING_LOOP;
    if (graph) rc = run_sample(stream, fn, arg, graph, 1); /* the first replay is not timed */
  }
  if (!rc) rc = time_samples(stream, fn, arg, graph, used.calls_per_run, runs, ms);
  for (int i = 0; i < runs && !rc; i++) ms[i] /= (float)used.calls_per_run;
  if (graph) HX_CUDA(cudaGraphExecDestroy(graph));
  if (how) *how = used;
  return rc;
}

/* ---- fills -------------------------------------------------------------------------------- */

extern "C" void hx_dev_poison(void *p, size_t bytes, cudaStream_t stream) {
  if (p && bytes) HX_CUDA(cudaMemsetAsync(p, 0xff, bytes, stream));
}

static unsigned grid_for(size_t n, unsigned block) {
  size_t g = (n + block - 1) / block;
  return (unsigned)(g < 65535u * 16u ? (g ? g : 1) : 65535u * 16u); /* grid-stride beyond */
}

__global__ void fill_normal_kernel(uint16_t *dst, size_t n, uint64_t seed, uint32_t stream_id,
                                   int bf16) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = rng_float_to_elem(rng_normal(seed, stream_id, i), bf16);
}

__global__ void fill_normal_f32_kernel(float *dst, size_t n, uint64_t seed, uint32_t stream_id) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = rng_normal(seed, stream_id, i);
}

extern "C" void hx_dev_fill_normal(void *dst, size_t n, uint64_t seed, uint32_t stream_id, int bf16,
                                   cudaStream_t stream) {
  if (!n) return;
  fill_normal_kernel<<<grid_for(n, 256), 256, 0, stream>>>((uint16_t *)dst, n, seed, stream_id,
                                                           bf16);
  HX_CUDA_LAUNCH();
}

extern "C" void hx_dev_fill_normal_f32(float *dst, size_t n, uint64_t seed, uint32_t stream_id,
                                       cudaStream_t stream) {
  if (!n) return;
  fill_normal_f32_kernel<<<grid_for(n, 256), 256, 0, stream>>>(dst, n, seed, stream_id);
  HX_CUDA_LAUNCH();
}

extern "C" void hx_dev_to_host(void *dst, const void *src, size_t bytes) {
  if (bytes) HX_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

extern "C" void hx_host_to_dev(void *dst, const void *src, size_t bytes) {
  if (bytes) HX_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
}
