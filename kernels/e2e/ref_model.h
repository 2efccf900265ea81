/* ref_model.h: the CPU double-precision reference of the whole prefill (small configurations:
 * the tiny check is 2 layers, hidden 256, 4 heads of 64, S=64). Plain C. Weights are the
 * model's fp16 values widened to double; every activation stays in double except q, k, v,
 * which are rounded to fp16 before attention, as the GPU stores them, so the attention part
 * can be the kernels' own reference (kernels/attention/ref/ref.h, ref_run). The pieces are exported for
 * the tests (tests/e2e/test_e2e_pieces.c checks them against independent formulations). */
#ifndef E2E_REF_MODEL_H
#define E2E_REF_MODEL_H

#include "e2e.h"
#include "safetensors.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double *attn_norm, *wqkv, *wo, *mlp_norm, *wgu, *wdown;
} e2e_ref_layer;

typedef struct {
  e2e_config cfg;
  double *embed, *final_norm;
  e2e_ref_layer *layer;
} e2e_ref_model;

/* What the selection saw and chose, per layer (host, sized by e2e_ref_trace_alloc). */
typedef struct {
  double *score, *score2; /* [layers, heads, S] (NULL where the workload has none) */
  uint8_t *flags;         /* corm [layers, heads, S] */
  double *corm_margin;    /* corm [layers, heads, S]: >= 0 exactly when flagged */
  int32_t *idx, *count;   /* [layers, heads, cap], [layers, heads] */
} e2e_ref_trace;

void e2e_ref_model_alloc(e2e_ref_model *m, const e2e_config *cfg);
void e2e_ref_model_free(e2e_ref_model *m);
/* Fill every weight from the seeded draws (draws.h): the same fp16 values the GPU draws. */
void e2e_ref_model_draw(e2e_ref_model *m);
/* Store one tensor given as fp16 bits (a safetensors slot, or a copy of the GPU's weights).
 * Matches st_put_fn; user is the e2e_ref_model. */
int e2e_ref_model_put(void *user, const st_slot *slot, const uint16_t *data, size_t n);
/* The weight buffer of (layer, tensor), layer -1 for embed / final norm. */
double *e2e_ref_weight(e2e_ref_model *m, int layer, int tensor);

void e2e_ref_trace_alloc(e2e_ref_trace *t, const e2e_config *cfg);
void e2e_ref_trace_free(e2e_ref_trace *t);

/* tokens drawn as the GPU draws them */
void e2e_ref_tokens(const e2e_config *cfg, int32_t *tokens);

/* The forward: out [S, hidden] = final RMSNorm of the last residual stream. trace may be
 * NULL. */
void e2e_ref_forward(const e2e_ref_model *m, const int32_t *tokens, double *out,
                     e2e_ref_trace *trace);

/* ---- pieces ---------------------------------------------------------------------------- */
void e2e_ref_rmsnorm(const double *x, const double *w, double *y, int rows, int n, double eps);
/* In place on one [S, heads, head_dim] tensor, rotate-half pairs (i, i + head_dim/2). */
void e2e_ref_rope(double *x, int seqlen, int heads, int head_dim, double theta);
double e2e_ref_silu(double x);
/* y[rows, out] (+)= x[rows, in]·W[out, in]ᵀ; accumulate adds into y (the residual). */
void e2e_ref_linear(const double *x, const double *w, double *y, int rows, int out, int in,
                    int accumulate);
/* Mark in flags[0..n) the k largest keys among unmarked positions (ties: lower position). */
void e2e_ref_topk_flags(const double *key, int n, int k, uint8_t *flags);
/* Ascending marked positions into idx[0..cap) (the last cap if more), -1 after; returns the
 * count kept. */
int e2e_ref_compact(const uint8_t *flags, int n, int cap, int32_t *idx);
/* One head's selection (e2e.h / select.cu rules): score, score2 [S] (score2 roco only),
 * flags [S] (corm only) -> idx [cap], returns count. */
int e2e_ref_select_head(const e2e_config *cfg, const double *score, const double *score2,
                        const uint8_t *corm_flags, int32_t *idx);
/* roco's key: the standard deviation of a key's attention over q_len queries. */
double e2e_ref_roco_std(double score, double score2, int q_len);

#ifdef __cplusplus
}
#endif
#endif
