/* harness_gpu.h: the device half of the kernel harness (implemented in harness_gpu.cu),
 * shared by attnvar and llama_e2e. Callable from C and CUDA.
 *
 *  - HX_CUDA / HX_CUBLAS: check a call; on failure print the call, file, line and the
 *    library's error string, end the log with `result status=error` and exit 1
 *    (an out-of-memory error ends it with status=oom and exits 3).
 *  - a tracking device allocator (current and peak bytes) that every buffer of a cell goes
 *    through, the cuBLAS workspace included, so peak_mib means "the cell's own buffers".
 *  - the context (stream, cuBLAS handle bound to it and to a counted workspace, device
 *    properties), device info for the meta line, CUDA-event timing, NaN poisoning, and the
 *    seeded input fills (rng.h, bit-identical to the host's). */
#ifndef HARNESS_GPU_H
#define HARNESS_GPU_H

#include "attn_system.h"
#include "harness.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Check helpers (the macros pass the call's text, file and line). */
void hx_cuda_check(int err, const char *call, const char *file, int line);
void hx_cublas_check(int status, const char *call, const char *file, int line);
#define HX_CUDA(call)   hx_cuda_check((int)(call), #call, __FILE__, __LINE__)
#define HX_CUBLAS(call) hx_cublas_check((int)(call), #call, __FILE__, __LINE__)
/* Check the last kernel launch (launch configuration errors). */
#define HX_CUDA_LAUNCH() HX_CUDA(cudaGetLastError())

/* ---- device memory --------------------------------------------------------------------- */
/* cudaMalloc through the tracker; out of memory ends the run with status=oom, exit 3. */
void *hx_dev_alloc(size_t bytes, const char *what);
/* Like hx_dev_alloc but returns NULL on out-of-memory (for callers that can fall back). */
void *hx_dev_try_alloc(size_t bytes, const char *what);
void hx_dev_free(void *p); /* NULL is fine */
size_t hx_dev_current_bytes(void);
size_t hx_dev_peak_bytes(void);
void hx_dev_reset_peak(void); /* peak := current */

/* ---- context ---------------------------------------------------------------------------- */
/* Select device 0, create the stream and the cuBLAS handle (bound to the stream, with a
 * workspace from the tracking allocator), read the properties, fill info for the meta line. */
void hx_gpu_init(attn_ctx *ctx, hx_device_info *info, int force_sm80);
void hx_gpu_shutdown(attn_ctx *ctx);
/* A system's entry point returned rc != ATTN_OK: end the log with the matching status
 * (unsupported, oom, error) and the system's own reason from ctx->err. what names the call. */
void hx_die_system(const attn_ctx *ctx, const char *what, int rc) __attribute__((noreturn));
/* 1 when a CUDA device can be used; otherwise 0 with the runtime's reason in why (call this
 * before hx_gpu_init to end a GPU-less run with a complete log instead of a bare error). */
int hx_gpu_available(char *why, size_t why_len);
void hx_device_info_gpu(hx_device_info *info); /* also called by hx_gpu_init */

/* ---- timing -------------------------------------------------------------------------------- */
/* Run fn(arg) warmup times untimed, then `runs` timed runs on stream; ms[0..runs) get the
 * milliseconds per call and *how the method (never NULL on return of ATTN_OK when how is
 * given). A call that takes HX_SAMPLE_MS or more is timed alone between two CUDA events
 * (events). A shorter one is captured HX_SAMPLE_MS / its time times into a CUDA graph that
 * each run replays between two events (graph), so the host's launch cost, which a short
 * call can exceed, is not in the number; a call that cannot be captured (a host
 * synchronisation, an error under capture) is timed as that many back-to-back calls (loop).
 * These are the rules of scripts/peers/peer.py. REPRO_TIMING=events forces one call per run
 * (a measurement switch). fn returns 0 or an ATTN_ code, which stops the loop and is
 * returned. */
typedef int (*hx_run_fn)(void *arg);
int hx_time_runs(cudaStream_t stream, hx_run_fn fn, void *arg, int warmup, int runs, float *ms,
                 hx_timing *how);

/* ---- fills ---------------------------------------------------------------------------------- */
/* Every byte 0xff: fp16 and fp32 NaN, uint8 255 (neither 0 nor 1): unwritten outputs fail. */
void hx_dev_poison(void *p, size_t bytes, cudaStream_t stream);
/* N(0,1) in the cell's 16-bit type from (seed, stream_id, element index), bit-identical to rng_normal + the
 * host's rng_float_to_elem (fp16 or bf16 bits). */
void hx_dev_fill_normal(void *dst, size_t n, uint64_t seed, uint32_t stream_id, attn_dtype dtype,
                        cudaStream_t stream);
/* N(0,1) as fp32 from (seed, stream_id, element index), bit-identical to rng_normal. */
void hx_dev_fill_normal_f32(float *dst, size_t n, uint64_t seed, uint32_t stream_id,
                            cudaStream_t stream);
/* The device generators of inputs.def's FILL_GEN rows: dst's n elements for a cell of shape
 * s, bit-identical to the host's (ref/ref.c). */
typedef void (*hx_dev_fill_fn)(void *dst, size_t n, const attn_shape *s, uint64_t seed,
                               cudaStream_t stream);
/* fp32 1 + |N(0,1)| (KeyFormer's exp_rand, rng_exp_rand), element index = flat index. */
void hx_dev_fill_exp_rand(void *dst, size_t n, const attn_shape *s, uint64_t seed,
                          cudaStream_t stream);
/* corm_mask[i][j] = 1/(i+1), fp32 [Lq, Lkv]. */
void hx_dev_fill_corm_mask(void *dst, size_t n, const attn_shape *s, uint64_t seed,
                           cudaStream_t stream);

/* Copy device -> host (synchronous, checked). */
void hx_dev_to_host(void *dst, const void *src, size_t bytes);
/* Copy host -> device (synchronous, checked). */
void hx_host_to_dev(void *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
