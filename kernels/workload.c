/* workload.c: look-ups over the registry (workload.h) and buffer sizes. */
#include "workload.h"

#include <stdio.h>
#include <string.h>

int workload_find(const char *name) {
  for (int w = 0; w < WL_COUNT; w++)
    if (name && strcmp(name, workload_table[w].name) == 0) return w;
  return -1;
}

const char *workload_choices(void) {
  static char buf[512];
  if (buf[0]) return buf;
  size_t used = 0;
  for (int w = 0; w < WL_COUNT; w++)
    used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", w ? "|" : "",
                             workload_table[w].name);
  return buf;
}

void workload_list(FILE *out) {
  for (int w = 0; w < WL_COUNT; w++) fprintf(out, "%s\n", workload_table[w].name);
}

size_t shape_q_elems(const attn_shape *s) {
  return (size_t)s->batch * s->q_len * s->heads * s->dim;
}
size_t shape_kv_elems(const attn_shape *s) {
  return (size_t)s->batch * s->kv_len * s->heads * s->dim;
}
size_t shape_score_elems(const attn_shape *s) {
  return (size_t)s->batch * s->heads * s->kv_len;
}
size_t shape_exp_rand_elems(const attn_shape *s) {
  return (size_t)s->batch * s->heads * s->q_len * s->kv_len;
}
size_t shape_corm_mask_elems(const attn_shape *s) { return (size_t)s->q_len * s->kv_len; }

double workload_gflop(const attn_shape *s) {
  return 4.0 * s->batch * s->heads * (double)s->q_len * s->kv_len * s->dim / 2.0 / 1e9;
}
