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

/* The inputs on the host: one field per row of inputs.def (q, k, v as fp16 or bf16 bits),
 * NULL where the workload lacks one. */
typedef struct {
#define ATTN_INPUT(name, elem, ...) const attn_host_##elem *name;
#include "inputs.def"
#undef ATTN_INPUT
} ref_inputs;

/* Every pointer the workload writes must be non-NULL (see workload_table). */
typedef struct {
  double *out;    /* [B, Lq, H, D], not rounded (the fp16 rounding is the GPU's error) */
  double *score;  /* the column statistic (pooled when the workload pools), [B, Hkv, Lkv]:
                     per K/V head, summed over its group's query heads (workload.h) */
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

/* Host inputs that own their buffers (hx_host_alloc), the same fields as ref_inputs. */
typedef struct {
#define ATTN_INPUT(name, elem, ...) attn_host_##elem *name;
#include "inputs.def"
#undef ATTN_INPUT
} ref_host_inputs;
/* The ref_inputs view of host inputs. */
static inline ref_inputs ref_inputs_of(const ref_host_inputs *h) {
  ref_inputs in;
#define ATTN_INPUT(name, ...) in.name = h->name;
#include "inputs.def"
#undef ATTN_INPUT
  return in;
}
/* Input id of h, NULL where absent. */
static inline void *ref_host_input(const ref_host_inputs *h, attn_input_id id) {
  switch (id) {
#define ATTN_INPUT(name, ...) \
  case ATTN_IN_##name:        \
    return h->name;
#include "inputs.def"
#undef ATTN_INPUT
  default: return NULL;
  }
}
/* Every input of wl the CPU references read (inputs.def's host column), drawn with seed:
 * bit-identical to the device fills (attnvar_gpu.c); the others NULL. */
void ref_inputs_generate(workload_id wl, const attn_shape *s, uint64_t seed, ref_host_inputs *in);
/* Input id alone, drawn into dst (its attn_input_elems(id, s) elements) on the host. */
void ref_input_fill(attn_input_id id, const attn_shape *s, uint64_t seed, void *dst);
void ref_inputs_free(ref_host_inputs *in);

/* Outputs sized for the workload (unused ones NULL), counted by hx_host_alloc. */
void ref_outputs_alloc(workload_id wl, const attn_shape *s, ref_outputs *out);
void ref_outputs_free(ref_outputs *out);

/* corm_mask[i][j] = 1/(i+1) (float, rounded once: the same value the GPU fill writes). */
static inline float corm_mask_value(int i) { return 1.0f / (float)(i + 1); }
/* The factor of odd keys' thresholds in a varied mask (attn_shape.corm_varied): 1 + 2^-10. */
#define CORM_VARIED_FACTOR 1.0009765625f

#ifdef __cplusplus
}
#endif
#endif
