/* check_sample: a check of sampled (batch, K/V head) groups, for cells whose every group would
 * cost the GPU reference too long (attnvar --check-pairs N: sdpa-scale's B16 H96 S4096 has
 * 1536). N groups are drawn from the cell's seed; each group's part of every input and output
 * is cut out (inputs.def's slice column) into a compact cell of shape batch N, heads G, one K/V
 * head, which the reference and the comparison take as they take any cell: a group's outputs
 * depend on its own q rows and its K/V head only, so the compact cell's reference equals the
 * full cell's on those groups. The log says which groups (attn_sample_print). */
#ifndef ATTN_CHECK_SAMPLE_H
#define ATTN_CHECK_SAMPLE_H

#include "workload.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
  int n;      /* groups drawn (0: the check covers every group, no sample) */
  int total;  /* groups of the cell: batch * K/V heads */
  int *group; /* n group indices b * Hkv + g, ascending (hx_host_alloc'ed) */
} attn_sample;

/* Draws n distinct groups of shape s from seed (n <= 0 or n >= the total: no sample). */
void attn_sample_draw(const attn_shape *s, int n, uint64_t seed, attn_sample *out);
void attn_sample_free(attn_sample *smp);
/* The compact cell: batch n, the heads of one group, one K/V head; the rest as s. */
attn_shape attn_sample_shape(const attn_shape *s, const attn_sample *smp);
/* The slices of the outputs: out as q ([B, Lq, H, D]), the column statistics per K/V head
 * ([B, Hkv, Lkv]: score, score2, flags). */
attn_slice attn_out_slice(const attn_shape *s);
attn_slice attn_score_slice(const attn_shape *s);
/* Elements of one group's part of a buffer of slice sl. */
size_t attn_slice_elems(attn_slice sl);

/* A 2-D copy: height rows of width bytes, from src (rows spitch bytes apart) to dst (dpitch
 * apart); host memory (attn_copy2d_host) or device memory (attnvar's, through CUDA). */
typedef void (*attn_copy2d_fn)(void *dst, size_t dpitch, const void *src, size_t spitch,
                               size_t width, size_t height, void *ctx);
void attn_copy2d_host(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                      size_t height, void *ctx);
/* Copies every sampled group's part of src (slice sl, elements of es bytes) into dst, group k
 * at slot k (attn_slice_elems(sl) elements each). Not for a shared slice (the compact cell
 * reads the buffer itself). */
void attn_sample_gather(const attn_sample *smp, attn_slice sl, size_t es, const void *src,
                        void *dst, attn_copy2d_fn copy, void *ctx);
/* The log's record: check_sample groups=N of=TOTAL picked="b:g b:g ...". */
void attn_sample_print(const attn_sample *smp, const attn_shape *s);

#endif
