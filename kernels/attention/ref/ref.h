/* ref.h: the CPU double-precision reference of the seven workloads (ref.c, written to follow
 * the workload definitions line by line), an independently written second
 * formulation (ref_online.c: row log-sum-exp first, then column sweeps, like a fused
 * kernel) used to check the first, and host input generation with the same generator the
 * GPU fills use. */
#ifndef REF_H
#define REF_H

#include "attn_system.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const uint16_t *q, *k, *v; /* fp16 bits, [B, Lq, H, D] and [B, Lkv, G, D] */
  const float *exp_rand;     /* kf:   [B, H, Lq, Lkv] */
  const float *corm_mask;    /* corm: [Lq, Lkv] */
  const int32_t *block_idx;  /* KEYS_SELECTED_BLOCKS: [B, Lq, G, T] (selected_blocks.h) */
} ref_inputs;

/* Every pointer the workload writes must be non-NULL (see workload_table). */
typedef struct {
  double *out;    /* [B, Lq, H, D], not rounded (the fp16 rounding is the GPU's error) */
  double *score;  /* the column statistic (pooled when the workload pools), [B, H, Lkv] */
  double *score2; /* roco_sq_score */
  uint8_t *flags; /* corm_score */
  /* corm: per column, max over rows i of (P[i,j] - mask[i,j]) / mask[i,j]; >= 0 exactly
   * when the flag is set. The check uses it to skip columns too close to call. */
  double *corm_margin;
} ref_outputs;

/* The literal formulation: explicit P rows, normalised, then column sums. */
/* 1 when the reference implements every feature of the registry row w (workloads.def). */
int ref_has_workload(const workload_info *w);
void ref_run(workload_id wl, const attn_shape *s, const ref_inputs *in, const ref_outputs *out);
/* The second formulation: lse per row (online max/sum), P recomputed per element. */
void ref_online_run(workload_id wl, const attn_shape *s, const ref_inputs *in,
                    const ref_outputs *out);

/* Host inputs drawn from rng.h with seed, identical to the GPU fills (harness_gpu.h). */
typedef struct {
  uint16_t *q, *k, *v;
  float *exp_rand, *corm_mask; /* NULL unless the workload needs them */
  int32_t *block_idx;          /* NULL unless KEYS_SELECTED_BLOCKS */
} ref_host_inputs;
/* The ref_inputs view of host inputs. */
static inline ref_inputs ref_inputs_of(const ref_host_inputs *h) {
  ref_inputs in = {h->q, h->k, h->v, h->exp_rand, h->corm_mask, h->block_idx};
  return in;
}
void ref_inputs_generate(workload_id wl, const attn_shape *s, uint64_t seed, ref_host_inputs *in);
void ref_inputs_free(ref_host_inputs *in);

/* Outputs sized for the workload (unused ones NULL), counted by hx_host_alloc. */
void ref_outputs_alloc(workload_id wl, const attn_shape *s, ref_outputs *out);
void ref_outputs_free(ref_outputs *out);

/* corm_mask[i][j] = 1/(i+1) (float, rounded once: the same value the GPU fill writes). */
static inline float corm_mask_value(int i) { return 1.0f / (float)(i + 1); }

#ifdef __cplusplus
}
#endif
#endif
