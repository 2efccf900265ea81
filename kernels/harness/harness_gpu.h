/* harness_gpu.h: the device half of the kernel harness (implemented in harness_gpu.cu),
 * shared by every program of kernels/. Callable from C and CUDA.
 *
 *  - the CUDA and cuBLAS checks (cuda_check.h): HX_CUDA / HX_CUBLAS end the program on a
 *    failure, HX_TRY_* return its status.
 *  - a tracking device allocator (current and peak bytes) that every buffer of a cell goes
 *    through, the cuBLAS workspace included, so peak_mib means "the cell's own buffers".
 *  - the context (hx_ctx.h: stream, cuBLAS handle bound to it and to a counted workspace,
 *    device properties), device info for the meta line, CUDA-event timing, NaN poisoning, and
 *    the seeded N(0,1) fills (rng.h, bit-identical to the host's). */
#ifndef HARNESS_GPU_H
#define HARNESS_GPU_H

#include "cuda_check.h"
#include "harness.h"
#include "hx_ctx.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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
void hx_gpu_init(hx_ctx *ctx, hx_device_info *info);
void hx_gpu_shutdown(hx_ctx *ctx);
/* A call that must not exit (a system's entry point, a kernel's preparation) returned
 * rc != HX_OK: end the log with the matching status (unsupported, oom, error) and the call's
 * own reason from ctx->err. what names the call. */
void hx_die_system(const hx_ctx *ctx, const char *what, int rc) __attribute__((noreturn));
/* 1 when a CUDA device can be used; otherwise 0 with the runtime's reason in why (call this
 * before hx_gpu_init to end a GPU-less run with a complete log instead of a bare error). */
int hx_gpu_available(char *why, size_t why_len);
void hx_device_info_gpu(hx_device_info *info); /* also called by hx_gpu_init */

/* ---- timing -------------------------------------------------------------------------------- */
/* Run fn(arg) warmup times untimed, then `runs` timed runs on stream; ms[0..runs) get the
 * milliseconds per call and *how the method (never NULL on return of HX_OK when how is
 * given). A call that takes HX_SAMPLE_MS or more is timed alone between two CUDA events
 * (events). A shorter one is captured HX_SAMPLE_MS / its time times into a CUDA graph that
 * each run replays between two events (graph), so the host's launch cost, which a short
 * call can exceed, is not in the number; a call that cannot be captured (a host
 * synchronisation, an error under capture) is timed as that many back-to-back calls (loop).
 * These are the rules of scripts/peers/peer.py. REPRO_TIMING=events forces one call per run
 * (a measurement switch). fn returns 0 or an HX_ code, which stops the loop and is
 * returned. */
typedef int (*hx_run_fn)(void *arg);
int hx_time_runs(cudaStream_t stream, hx_run_fn fn, void *arg, int warmup, int runs, float *ms,
                 hx_timing *how);

/* ---- fills ---------------------------------------------------------------------------------- */
/* Every byte 0xff: fp16 and fp32 NaN, uint8 255 (neither 0 nor 1): unwritten outputs fail. */
void hx_dev_poison(void *p, size_t bytes, cudaStream_t stream);
/* N(0,1) as 16-bit floats (bf16 1: bfloat16 bits, 0: IEEE fp16) from (seed, stream_id, element
 * index), bit-identical to rng_normal + the host's rng_float_to_elem. */
void hx_dev_fill_normal(void *dst, size_t n, uint64_t seed, uint32_t stream_id, int bf16,
                        cudaStream_t stream);
/* N(0,1) as fp32 from (seed, stream_id, element index), bit-identical to rng_normal. */
void hx_dev_fill_normal_f32(float *dst, size_t n, uint64_t seed, uint32_t stream_id,
                            cudaStream_t stream);

/* Copy device -> host (synchronous, checked). */
void hx_dev_to_host(void *dst, const void *src, size_t bytes);
/* Copy host -> device (synchronous, checked). */
void hx_host_to_dev(void *dst, const void *src, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
