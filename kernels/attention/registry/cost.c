/* cost.c: the work of a cell (cost.h). */
#include "cost.h"

#include "selected_blocks.h"

double workload_gflop(workload_id wl, const attn_shape *s) {
  if (workload_selected_blocks(wl)) return 4.0 * s->dim * sb_attended_pairs(s) / 1e9;
  double full = 4.0 * s->batch * s->heads * (double)s->q_len * s->kv_len * s->dim / 1e9;
  return s->mask == MASK_NONE ? full : full / 2.0;
}

double workload_macs(workload_id wl, const attn_shape *s) {
  if (workload_selected_blocks(wl)) return (double)s->dim * sb_attended_pairs(s);
  return (double)s->batch * s->heads * (double)s->q_len * s->kv_len * s->dim;
}
