/* cost.h: the work of a cell, by its key set: the multiply-adds of q.k and the paper's GFLOP
 * count. Dense keys from the shape alone (workload.h); KEYS_SELECTED_BLOCKS from the keys the
 * block lists attend (selected_blocks.h). Host C. */
#ifndef ATTN_COST_H
#define ATTN_COST_H

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The paper's count (4 * B * H * Lq * Lkv * D / 2 for its causal cells, whatever the
 * workload), in GFLOP; without a mask the full 4 * B * H * Lq * Lkv * D. KEYS_SELECTED_BLOCKS:
 * 4 * D * the (b, h, query, key) pairs attended (valid keys only, selected_blocks.h). */
double workload_gflop(workload_id wl, const attn_shape *s);
/* Multiply-adds of q.k over the cell: B * H * Lq * Lkv * D, or D * the attended pairs for
 * KEYS_SELECTED_BLOCKS (what the CPU cap and the choice of check reference measure). */
double workload_macs(workload_id wl, const attn_shape *s);

#ifdef __cplusplus
}
#endif
#endif
