/* selected_blocks.h: the block lists of KEYS_SELECTED_BLOCKS (workloads.def; the selected
 * branch of DeepSeek's Native Sparse Attention, with GQA), drawn once on the host and read by
 * every implementation (CPU references, GPU reference, unfused, fused) from the one
 * block_idx input, int32 [B, Lq, Hkv, T] (Hkv = shape_kv_heads: H / attnvar's --groups).
 *
 * The rule (this kit's own; seed 003 shows no generator code): for batch b, K/V head g and query t at key
 * position p = t + (Lkv - Lq), the candidates are blocks 0 .. c - 1 with c = max(1, p / BS)
 * (the whole blocks before p's own, or block 0); min(T, c) distinct ones are drawn uniformly
 * (Floyd's sampling on rng_bits(seed, RNG_STREAM_BLOCK_IDX, ...)), sorted ascending, and the
 * list is padded to T entries with the sentinel ceil(Lkv / BS), the first index past the keys.
 * An entry idx is a block when 0 <= idx and idx * BS < Lkv; anything else (the sentinel, or
 * the seed's own pad value S) is absent. Query t attends to key j when j lies in a block of
 * its list and, with the causal mask, j <= t + mask_offset. With the causal mask every query
 * attends to at least key 0 (block 0 is its only candidate while p < 2 BS). */
#ifndef SELECTED_BLOCKS_H
#define SELECTED_BLOCKS_H

#include "workload.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks of the keys, ceil(Lkv / BS): also the sentinel that pads a list. */
int sb_block_count(const attn_shape *s);
/* Entry idx of a list names a block of the keys. */
static inline int sb_block_live(const attn_shape *s, int32_t idx) {
  return idx >= 0 && (int64_t)idx * s->block_size < s->kv_len;
}
/* Candidates of query t: max(1, p / BS), p its key position. */
int sb_candidates(const attn_shape *s, int t);
/* The lists of the cell: idx[((b * Lq + t) * Hkv + g) * T + e], B * Lq * Hkv * T entries. */
void sb_generate(const attn_shape *s, uint64_t seed, int32_t *idx);
/* Keys query t attends to, from the rule alone (the same for every b, h and seed): the
 * selected blocks are whole and before p, except block 0 while it is the only candidate. */
int64_t sb_keys_of_query(const attn_shape *s, int t);
/* Attended (b, h, query, key) pairs of the cell: B * H * sum_t sb_keys_of_query. */
double sb_attended_pairs(const attn_shape *s);
/* NULL when the shape's selection is usable (its K/V heads divide heads, BS and T positive,
 * Lq <= Lkv), else why not; static storage. */
const char *sb_shape_problem(const attn_shape *s);

#ifdef __cplusplus
}
#endif
#endif
