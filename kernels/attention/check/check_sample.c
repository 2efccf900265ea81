/* check_sample.c: the groups of a sampled check, their slices and the compact cell
 * (check_sample.h). */
#include "check_sample.h"

#include "harness.h"
#include "kvline.h"
#include "rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* A partial Fisher-Yates shuffle of 0..total-1, its first n entries sorted. */
void attn_sample_draw(const attn_shape *s, int n, uint64_t seed, attn_sample *out) {
  memset(out, 0, sizeof *out);
  out->total = s->batch * shape_kv_heads(s);
  if (n <= 0 || n >= out->total) return;
  int *perm = hx_host_alloc((size_t)out->total * sizeof *perm, "check sample");
  for (int i = 0; i < out->total; i++) perm[i] = i;
  for (int i = 0; i < n; i++) {
    int j = i + (int)(rng_bits(seed, RNG_STREAM_CHECK_SAMPLE, (uint64_t)i) %
                      (uint64_t)(out->total - i));
    int t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  qsort(perm, (size_t)n, sizeof *perm, cmp_int);
  out->n = n;
  out->group = perm;
}

void attn_sample_free(attn_sample *smp) {
  hx_host_free(smp->group);
  memset(smp, 0, sizeof *smp);
}

attn_shape attn_sample_shape(const attn_shape *s, const attn_sample *smp) {
  attn_shape c = *s;
  c.batch = smp->n;
  c.heads = shape_groups(s);
  c.kv_heads = 1;
  return c;
}

attn_slice attn_out_slice(const attn_shape *s) {
  return SLICE(2, s->q_len, s->heads, s->dim, shape_groups(s));
}

attn_slice attn_score_slice(const attn_shape *s) {
  return SLICE(1, shape_kv_heads(s), s->kv_len, 1, 1);
}

size_t attn_slice_elems(attn_slice sl) {
  return (size_t)(sl.dim == 1 ? sl.n * sl.C * sl.E : sl.A * sl.n * sl.E);
}

void attn_copy2d_host(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                      size_t height, void *ctx) {
  (void)ctx;
  for (size_t r = 0; r < height; r++)
    memcpy((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
}

void attn_sample_gather(const attn_sample *smp, attn_slice sl, size_t es, const void *src,
                        void *dst, attn_copy2d_fn copy, void *ctx) {
  long long hkv = sl.dim == 1 ? sl.A / sl.n : sl.C / sl.n; /* groups per batch row */
  size_t per_batch = (size_t)(sl.A * sl.C * sl.E) * es, slot = attn_slice_elems(sl) * es;
  for (int k = 0; k < smp->n; k++) {
    long long b = smp->group[k] / hkv, g = smp->group[k] % hkv;
    const char *from = (const char *)src + (size_t)b * per_batch;
    char *to = (char *)dst + (size_t)k * slot;
    if (sl.dim == 1) /* indices [g n, g n + n) of A: one contiguous block */
      copy(to, slot, from + (size_t)(g * sl.n * sl.C * sl.E) * es, slot, slot, 1, ctx);
    else /* of C: for every index of A, n E contiguous elements */
      copy(to, (size_t)(sl.n * sl.E) * es, from + (size_t)(g * sl.n * sl.E) * es,
           (size_t)(sl.C * sl.E) * es, (size_t)(sl.n * sl.E) * es, (size_t)sl.A, ctx);
  }
}

void attn_sample_print(const attn_sample *smp, const attn_shape *s) {
  int hkv = shape_kv_heads(s);
  size_t cap = (size_t)smp->n * 24 + 1, len = 0;
  char *picked = hx_host_alloc(cap, "check sample line");
  picked[0] = '\0';
  for (int k = 0; k < smp->n; k++)
    len += (size_t)snprintf(picked + len, cap - len, "%s%d:%d", k ? " " : "", smp->group[k] / hkv,
                            smp->group[k] % hkv);
  FILE *out = hx_log();
  fprintf(out, "check_sample groups=%d of=%d", smp->n, smp->total);
  kv_put(out, "picked", picked);
  fputc('\n', out);
  hx_host_free(picked);
}
