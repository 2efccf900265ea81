/* selected_blocks.c: the block lists of KEYS_SELECTED_BLOCKS (selected_blocks.h). */
#include "selected_blocks.h"

#include "harness.h"
#include "rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sb_block_count(const attn_shape *s) {
  return (int)(((int64_t)s->kv_len + s->block_size - 1) / s->block_size);
}

int sb_candidates(const attn_shape *s, int t) {
  int p = t + (s->kv_len - s->q_len);
  return p / s->block_size > 1 ? p / s->block_size : 1;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* One list: n = min(T, c) distinct blocks of 0..c-1 by Floyd's algorithm (each n-subset
 * equally likely), sorted, then the sentinel. taken: nblocks zeroed bytes, left zeroed. */
static void one_list(const attn_shape *s, uint64_t seed, uint64_t list, int c, int32_t *out,
                     unsigned char *taken) {
  const int T = s->selected_blocks, nblocks = sb_block_count(s);
  const int n = T < c ? T : c;
  for (int j = c - n, e = 0; j < c; j++, e++) {
    /* modulo bias < c / 2^64: none that a test could see */
    uint64_t bits = rng_bits(seed, RNG_STREAM_BLOCK_IDX, list * (uint64_t)nblocks + (uint64_t)j);
    int r = (int)(bits % (uint64_t)(j + 1));
    int pick = taken[r] ? j : r;
    taken[pick] = 1;
    out[e] = pick;
  }
  for (int e = 0; e < n; e++) taken[out[e]] = 0;
  qsort(out, (size_t)n, sizeof *out, cmp_i32);
  for (int e = n; e < T; e++) out[e] = nblocks;
}

void sb_generate(const attn_shape *s, uint64_t seed, int32_t *idx) {
  const int Hkv = shape_kv_heads(s), T = s->selected_blocks;
  unsigned char *taken = hx_host_alloc((size_t)sb_block_count(s), "block list scratch");
  memset(taken, 0, (size_t)sb_block_count(s));
  for (int b = 0; b < s->batch; b++)
    for (int t = 0; t < s->q_len; t++)
      for (int g = 0; g < Hkv; g++) {
        uint64_t list = ((uint64_t)b * s->q_len + (uint64_t)t) * (uint64_t)Hkv + (uint64_t)g;
        one_list(s, seed, list, sb_candidates(s, t), idx + list * (uint64_t)T, taken);
      }
  hx_host_free(taken);
}

int64_t sb_keys_of_query(const attn_shape *s, int t) {
  int c = sb_candidates(s, t), T = s->selected_blocks;
  if (c > 1) return (int64_t)(T < c ? T : c) * s->block_size;           /* whole blocks before p */
  int64_t keys = s->block_size < s->kv_len ? s->block_size : s->kv_len; /* block 0 */
  int64_t visible = (int64_t)t + mask_offset(s) + 1;                    /* the causal mask */
  return visible < keys ? visible : keys;
}

double sb_attended_pairs(const attn_shape *s) {
  double per_head = 0;
  for (int t = 0; t < s->q_len; t++) per_head += (double)sb_keys_of_query(s, t);
  return per_head * s->batch * s->heads;
}

const char *sb_shape_problem(const attn_shape *s) {
  static char msg[160];
  if (s->kv_heads < 0 || s->heads % shape_kv_heads(s) != 0) {
    snprintf(msg, sizeof msg, "K/V heads %d must divide heads %d", shape_kv_heads(s), s->heads);
    return msg;
  }
  if (s->block_size < 1 || s->selected_blocks < 1)
    return "block size and selected blocks must be >= 1";
  if (s->q_len > s->kv_len) return "selected blocks need q_len <= kv_len";
  if (!(s->scale >= 0)) return "scale must be >= 0 (0: 1/sqrt(D))";
  return NULL;
}
