/* e2e.h: the Llama-2-7B-shaped prefill of llama_e2e: its configuration, the KV-cache
 * selection rule of each workload, and the device model (weights, activations, cache) that
 * the forward runs on. Plain C interface; the CUDA parts live in the .cu files beside it:
 *
 *   weights.cu   device buffers and the seeded weight/token draws (or a safetensors file)
 *   layers.cu    embedding, RMSNorm, RoPE, SiLU·mul, exp_rand, corm_mask kernels
 *   gemm.cu      the cuBLAS GEMM wrapper (y = x·Wᵀ [+ y]) and the GEMM benchmark
 *   select.cu    KV-cache selection: top-k flags, compaction to sorted indices, gathers
 *   forward.cu   one forward: the layer loop, calling the attention system through attn_system
 *   ref_model.c  the CPU double reference of the same model (small configurations)
 *   llama_e2e.c  the binary: CLI, log, CPU path; run_gpu.c its GPU path: check, timing
 *
 * Layouts (row-major, fp16 unless said): hidden states [S, hidden]; a linear layer's weight
 * [out, in] as in PyTorch (y = x·Wᵀ); q, k, v [S, heads, head_dim] each (workload.h layout,
 * batch 1); wqkv is q_proj, k_proj, v_proj stacked [3·hidden, hidden]; wgu is gate_proj, up_proj
 * stacked [2·mlp, hidden]. RoPE uses the rotate-half pairing (i, i + head_dim/2) of HF Llama,
 * so real checkpoints load unchanged. */
#ifndef E2E_H
#define E2E_H

#include "attn_system.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  workload_id workload;
  int layers, hidden, heads, head_dim, mlp, vocab, seqlen;
  double rms_eps;    /* 1e-5 */
  double rope_theta; /* 10000 */
  /* KV-cache budgets per head (the original artifact's numbers at S=4096). */
  int keep;     /* SEL_TOPK: top-k by score; SEL_TOPK_STD: top-k by score after the std part */
  int keep_std; /* roco: top-k by standard deviation of attention */
  int corm_cap; /* corm: at most this many marked keys, the most recent ones */
  uint64_t seed;
} e2e_config;

/* Llama-2-7B shapes, h2o..gemma2 budgets 512/256/512, seed 1. */
void e2e_config_default(e2e_config *cfg);
/* NULL when consistent, else a message naming the offending option. */
const char *e2e_config_invalid(const e2e_config *cfg);
/* NULL when the model can run the workload, else why not (a selected-block workload: the model
 * has no KV-cache rule for it); the run then ends with status=unsupported. */
const char *e2e_workload_unsupported(const e2e_config *cfg);

/* Keys kept per head (the cache's capacity): 0 for attn and gemma2, which select nothing. */
int e2e_cache_cap(const e2e_config *cfg);

/* GEMM and attention flops of one forward (GEMMs 2·m·n·k; attention the paper's 4·H·S²·D/2). */
double e2e_gemm_flops(const e2e_config *cfg);
double e2e_attn_flops(const e2e_config *cfg);

/* Weight tensors, for the draws (draws.h) and the loaders: six per layer, then the two
 * model-wide ones. */
enum {
  DRAW_ATTN_NORM,
  DRAW_WQKV,
  DRAW_WO,
  DRAW_MLP_NORM,
  DRAW_WGU,
  DRAW_WDOWN,
  DRAW_PER_LAYER,
  DRAW_EMBED = DRAW_PER_LAYER,
  DRAW_FINAL_NORM
};
/* A weight element is mean + stddev·N(0,1) rounded to fp16: 1/sqrt(fan_in) for the linear
 * layers, N(0,1) for the embedding, 1 ± 0.1 for the RMSNorm gains, so activations stay near
 * unit size through the layers. */
typedef struct {
  float mean, stddev;
} draw_params;
draw_params e2e_draw_params(const e2e_config *cfg, int tensor);

/* Element counts of each weight tensor (one layer's, or the model's). */
typedef struct {
  size_t embed, norm, wqkv, wo, wgu, wdown;
} e2e_weight_sizes;
e2e_weight_sizes e2e_weight_sizes_of(const e2e_config *cfg);
/* Elements of one weight tensor: layer -1 for the model-wide ones (DRAW_EMBED, DRAW_FINAL_NORM). */
size_t e2e_weight_elems(const e2e_config *cfg, int layer, int tensor);
/* Loop over every weight tensor: (layer -1, embed), (-1, final norm), then each layer's six. */
#define E2E_FOR_EACH_WEIGHT(cfg, l, t)     \
  for (int l = -1; l < (cfg)->layers; l++) \
    for (int t = l < 0 ? DRAW_EMBED : 0; t < (l < 0 ? DRAW_FINAL_NORM + 1 : DRAW_PER_LAYER); t++)

/* ---- the device model (weights.cu, forward.cu) --------------------------------------- */

typedef struct {
  uint16_t *attn_norm, *wqkv, *wo, *mlp_norm, *wgu, *wdown; /* fp16 bits */
} e2e_layer_weights;

typedef struct {
  uint16_t *embed;          /* [vocab, hidden] */
  uint16_t *final_norm;     /* [hidden] */
  e2e_layer_weights *layer; /* host array of `layers` entries */
} e2e_weights;

/* Per-layer copies of what the selection saw, kept only when checking (NULL otherwise):
 * score/score2 fp32 [layers, heads, S], flags uint8 [layers, heads, S]. */
typedef struct {
  float *score, *score2;
  uint8_t *flags;
} e2e_trace;

/* Optional phase timing of one forward (--breakdown): events recorded between phases. */
enum { PHASE_GEMM, PHASE_ATTN, PHASE_SELECT, PHASE_OTHER, PHASE_COUNT };
typedef struct e2e_phase_timer e2e_phase_timer;

typedef struct {
  e2e_config cfg;
  attn_shape shape;
  e2e_weights w;
  int32_t *tokens;    /* [S] */
  uint16_t *x;        /* residual stream [S, hidden] */
  uint16_t *xn;       /* normed input of a GEMM [S, hidden] */
  uint16_t *qkv;      /* q, k, v, each [S, heads, head_dim], back to back */
  uint16_t *attn_out; /* [S, hidden] */
  uint16_t *gu;       /* gate | up [S, 2·mlp]; SiLU(gate)·up is written over gate */
  uint16_t *out;      /* final normed hidden states [S, hidden] */
  /* attention side inputs/outputs (NULL where the workload has none) */
  float *exp_rand;  /* kf: [heads, S, S], drawn per layer */
  float *corm_mask; /* corm: [S, S] */
  float *score, *score2;
  uint8_t *attn_flags;
  void *attn_ws;
  size_t attn_ws_bytes;
  /* selection: per-layer cache of the kept keys */
  int cache_cap;
  uint8_t *keep_flags;         /* [heads, S] scratch */
  int32_t *cache_idx;          /* [layers, heads, cache_cap], ascending, -1 past count */
  int32_t *cache_count;        /* [layers, heads] */
  uint16_t *k_cache, *v_cache; /* [layers, heads, cache_cap, head_dim] */
  e2e_trace trace;
} e2e_model;

/* Allocate every buffer through the harness's tracking allocator (out of memory ends the
 * run with status=oom); draw weights and tokens from cfg->seed, or load the weights from a
 * safetensors file when weights_path is not NULL (tokens are still drawn). Returns 0, or -1
 * with a message in err for a bad weights file. */
int e2e_model_init(e2e_model *m, const e2e_config *cfg, const attn_ctx *ctx, const attn_system *sys,
                   const char *weights_path, char *err, size_t err_len);
void e2e_model_free(e2e_model *m);
/* Allocate / free the per-layer trace (check mode). */
void e2e_trace_alloc(e2e_model *m);
void e2e_trace_free(e2e_model *m);

/* One forward on ctx->stream with the given attention system: no allocation, no sync.
 * Returns HX_OK or the system's error code. timer may be NULL. */
int e2e_forward(e2e_model *m, const attn_system *sys, const attn_ctx *ctx, e2e_phase_timer *timer);

e2e_phase_timer *e2e_phase_timer_new(int layers);
/* Milliseconds per phase of the forward the timer was passed to (synchronises). */
void e2e_phase_timer_read(e2e_phase_timer *t, double ms[PHASE_COUNT]);
void e2e_phase_timer_free(e2e_phase_timer *t);

/* ---- kernels (layers.cu, select.cu) ---------------------------------------------------- */
void e2e_embed(const int32_t *tokens, const uint16_t *embed, uint16_t *x, int seqlen, int hidden,
               cudaStream_t s);
void e2e_rmsnorm(const uint16_t *x, const uint16_t *w, uint16_t *y, int rows, int n, float eps,
                 cudaStream_t s);
void e2e_rope(uint16_t *qk, int seqlen, int heads, int head_dim, float theta, int tensors,
              cudaStream_t s);
void e2e_silu_mul(uint16_t *gu, int rows, int mlp, cudaStream_t s);
/* Whether sys draws kf's noise where it reads it for this shape (attn_system.draws_exp_rand):
 * then the forward writes no exp_rand tensor for it. */
int e2e_draws_exp_rand(const attn_system *sys, const attn_ctx *ctx, workload_id wl,
                       const attn_shape *shape);
/* KeyFormer's noise of one layer (draws.h) into `rows` rows of S (row i of head h at h·S + i):
 * whole rows, or with causal only each row's columns j <= i, the entries a causal attention
 * reads (the others keep what an earlier fill left there). */
void e2e_fill_exp_rand(float *dst, int rows, int S, uint64_t seed, int layer, int causal,
                       cudaStream_t s);
void e2e_fill_corm_mask(float *dst, int seqlen, cudaStream_t s);
void e2e_fill_normal(uint16_t *dst, size_t n, uint64_t seed, uint32_t stream_id, float mean,
                     float stddev, cudaStream_t s);
void e2e_fill_tokens(int32_t *dst, int n, int vocab, uint64_t seed, cudaStream_t s);

/* The selection of one layer: scores -> keep_flags -> cache_idx/count -> gathered K, V. */
void e2e_select(const e2e_model *m, int layer, cudaStream_t s);

/* ---- cuBLAS (gemm.cu) ---------------------------------------------------------------------- */
/* y[b] = x·W[b]ᵀ + beta·y[b] for b < batch: x [rows, in] (leading dimension ldx), W[b]
 * [out, in] at w + b·out·in, y[b] [rows, out] (leading dimension ldy) at y + b·stride_y.
 * fp16 in and out, fp32 accumulation. */
void e2e_gemm_xwT(void *cublas, const uint16_t *x, int ldx, const uint16_t *w, uint16_t *y, int ldy,
                  long long stride_y, int rows, int out, int in, float beta, int batch);
/* Time each GEMM shape of a layer alone and a large square GEMM (the ceiling); prints one
 * `gemm` line per shape to the log. */
void e2e_gemm_bench(const e2e_config *cfg, const hx_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
