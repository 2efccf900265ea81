/* workload.h: what each of the seven workloads reads and writes (names, extra inputs, output
 * tensors), sizes of its buffers, and its flop count. Host C, shared by attnvar, the
 * references, the checks and the tests. The math itself: shared design notes. */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include "attnvar.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char *name;        /* CLI and log name: attn h2o roco kf snapkv corm gemma2 */
  const char *score_name;  /* check-line name of io.score, NULL when absent */
  const char *score2_name; /* io.score2 (roco_sq_score) */
  const char *flags_name;  /* io.flags (corm_score) */
  int needs_exp_rand, needs_corm_mask;
} workload_info;

extern const workload_info workload_table[WL_COUNT];
extern const char *const workload_names[WL_COUNT];

/* Element counts of each buffer (0 when the workload lacks it). */
size_t shape_q_elems(const attn_shape *s);     /* q and out: B * Lq * H * D */
size_t shape_kv_elems(const attn_shape *s);    /* k and v:   B * Lkv * H * D */
size_t shape_score_elems(const attn_shape *s); /* B * H * Lkv */
size_t shape_exp_rand_elems(const attn_shape *s); /* B * H * Lq * Lkv */
size_t shape_corm_mask_elems(const attn_shape *s); /* Lq * Lkv */

/* The paper's count, every workload, causal or not: 4 * B * H * Lq * Lkv * D / 2, in GFLOP. */
double workload_gflop(const attn_shape *s);

/* Causal mask: (i, j) is masked when j > i + (Lkv - Lq). */
static inline int causal_masked(const attn_shape *s, int i, int j) {
  return j > i + (s->kv_len - s->q_len);
}

#ifdef __cplusplus
}
#endif
#endif
