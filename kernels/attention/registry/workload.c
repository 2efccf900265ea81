/* workload.c: look-ups over the registry (workload.h) and buffer sizes. */
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int workload_find(const char *name) {
  for (int w = 0; w < WL_COUNT; w++)
    if (name && strcmp(name, workload_table[w].name) == 0) return w;
  return -1;
}

const char *workload_row_problem(const workload_info *w) {
  int score = w->score_name != NULL, score2 = w->score2_name != NULL, flags = w->flags_name != NULL;
  if (!w->name || !w->name[0]) return "empty name";
  switch (w->column) {
  case COL_NONE:
    if (score || score2 || flags) return "COL_NONE with score outputs";
    break;
  case COL_SUM:
  case COL_KEYFORMER:
    if (!score || score2 || flags) return "this column statistic writes score only";
    break;
  case COL_SUM_SQ:
    if (!score || !score2 || flags) return "COL_SUM_SQ writes score and score2";
    break;
  case COL_ANY_GE_MASK:
    if (score || score2 || !flags) return "COL_ANY_GE_MASK writes flags only";
    break;
  default: return "unknown column statistic";
  }
  if (w->logits != LOGITS_SCALED && w->logits != LOGITS_SOFTCAP) return "unknown logits";
  if (w->keys != KEYS_DENSE && w->keys != KEYS_SELECTED_BLOCKS) return "unknown keys";
  /* the selected-block kernels compute P V alone, from plain scaled logits */
  if (w->keys == KEYS_SELECTED_BLOCKS &&
      (w->logits != LOGITS_SCALED || w->column != COL_NONE || w->select != SEL_NONE))
    return "KEYS_SELECTED_BLOCKS combines with LOGITS_SCALED, COL_NONE and SEL_NONE only";
  if (w->pool < 0 || (w->pool && (w->pool % 2 == 0 || !score)))
    return "pool must be 0 or an odd width over a score";
  switch (w->select) {
  case SEL_NONE: break;
  case SEL_TOPK:
    if (!score) return "SEL_TOPK needs a score";
    break;
  case SEL_TOPK_STD:
    if (!score2) return "SEL_TOPK_STD needs score and score2";
    break;
  case SEL_FLAGS:
    if (!flags) return "SEL_FLAGS needs flags";
    break;
  default: return "unknown selection";
  }
  if (!(w->tol_rel_l2 > 0) || !(w->tol_max_abs > 0)) return "tolerances must be positive";
  return NULL;
}

int workload_features_within(const workload_info *w, unsigned logits_set, unsigned keys_set,
                             unsigned column_set) {
  if (workload_row_problem(w)) return 0; /* unknown features included */
  return (logits_set & FEATURE_BIT(w->logits)) && (keys_set & FEATURE_BIT(w->keys)) &&
         (column_set & FEATURE_BIT(w->column));
}

const char *names_join(const char *const *names, int n, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? "|" : "", names[i]);
  return buf;
}

const char *workload_choices(void) {
  static char buf[512];
  return buf[0] ? buf : names_join(workload_names, WL_COUNT, buf, sizeof buf);
}

void workload_list(FILE *out) {
  for (int w = 0; w < WL_COUNT; w++) fprintf(out, "%s\n", workload_table[w].name);
}

size_t shape_q_elems(const attn_shape *s) {
  return (size_t)s->batch * s->q_len * s->heads * s->dim;
}
size_t shape_kv_elems(const attn_shape *s) {
  return (size_t)s->batch * s->kv_len * shape_kv_heads(s) * s->dim;
}
double shape_scale(const attn_shape *s) {
  return s->scale > 0 ? s->scale : 1.0 / sqrt((double)s->dim);
}
size_t shape_score_elems(const attn_shape *s) {
  return (size_t)s->batch * shape_kv_heads(s) * s->kv_len;
}

const char *dtype_name(attn_dtype dtype) { return dtype == DTYPE_BF16 ? "bf16" : "fp16"; }
