/* attnvar.h: the seven FlashTensor attention workloads, their shapes and buffers, and the
 * interface every system (unfused, fused, ...) implements. Shared by the attnvar binary, the
 * e2e model and the tests. Math of each workload: README "Workloads" / shared design notes.
 *
 * Layouts (row-major):
 *   q, out        fp16 [B, Lq,  H, D]      k, v   fp16 [B, Lkv, H, D]
 *   exp_rand      fp32 [B, H, Lq, Lkv]     (kf only)
 *   corm_mask     fp32 [Lq, Lkv]           (corm only)
 *   score         fp32 [B, H, Lkv]         h2o_score | roco_score | kf_score | snapkv_score
 *   score2        fp32 [B, H, Lkv]         roco_sq_score (roco only)
 *   flags         uint8 [B, H, Lkv]        corm_score, 0 or 1 (corm only)
 * Causal mask: element (i, j) is masked when j > i + (Lkv - Lq). Scale 1/sqrt(D). */
#ifndef ATTNVAR_H
#define ATTNVAR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#include <cuda_runtime.h>
#elif defined(REPRO_HAVE_CUDA)
#include <cuda_runtime_api.h>
#else
typedef struct CUstream_st *cudaStream_t;
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  WL_ATTN,
  WL_H2O,
  WL_ROCO,
  WL_KF,
  WL_SNAPKV,
  WL_CORM,
  WL_GEMMA2,
  WL_COUNT
} workload_id;

#define KF_TAU 1.5f
#define GEMMA2_SOFTCAP 50.0f
#define SNAPKV_POOL 5

typedef struct {
  int batch, heads, dim;
  int q_len, kv_len; /* prefill: q_len == kv_len == seqlen */
} attn_shape;

typedef struct {
  const void *q, *k, *v;  /* fp16 */
  const float *exp_rand;  /* kf */
  const float *corm_mask; /* corm */
  void *out;              /* fp16, every workload */
  float *score;           /* h2o, roco, kf, snapkv */
  float *score2;          /* roco */
  uint8_t *flags;         /* corm */
} attn_io;

/* What a system needs from the process: created once by the harness. */
typedef struct {
  cudaStream_t stream;
  void *cublas;   /* cublasHandle_t, bound to stream */
  int sm_count;
  int cc_major, cc_minor;
  int force_sm80; /* run the sm_80 (mma.sync) path even on Hopper */
} attn_ctx;

/* Return codes of every system entry point. */
enum { ATTN_OK = 0, ATTN_ERR = 1, ATTN_OOM = 3, ATTN_UNSUPPORTED = 4 };

typedef struct {
  const char *name;
  /* ATTN_OK or ATTN_UNSUPPORTED with a reason written to why. */
  int (*supports)(const attn_ctx *ctx, workload_id wl, const attn_shape *shape, char *why,
                  size_t why_len);
  /* Device workspace the run needs, allocated (and counted in peak memory) by the caller. */
  size_t (*workspace_bytes)(const attn_ctx *ctx, workload_id wl, const attn_shape *shape);
  /* Enqueue the computation on ctx->stream; no allocation, no synchronisation. */
  int (*run)(const attn_ctx *ctx, workload_id wl, const attn_shape *shape, const attn_io *io,
             void *workspace);
  /* Optional (NULL: use name): the implementation run() picks for this case, for the log's
   * config impl=... (e.g. "fused-sm90", "fused-sm80"). Added by the kernels helper. */
  const char *(*impl)(const attn_ctx *ctx, workload_id wl, const attn_shape *shape);
} attn_system;

extern const attn_system attn_system_unfused; /* kernels/unfused/ */
extern const attn_system attn_system_fused;   /* kernels/fused/   */

#ifdef __cplusplus
}
#endif
#endif
