/* ref_online.c: a second, independently written formulation of the workloads, used to check
 * ref.c. Instead of materialising normalised rows it works like a fused kernel:
 *   pass 1, per query row: online max / sum over the visible keys (the causal mask is a loop
 *     bound here, not a -inf), the output accumulated with rescaling, and the row's
 *     log-sum-exp (a second one over KeyFormer's logits for kf);
 *   pass 2, per key column: P[i,j] = exp(S[i,j] - lse_i) recomputed for every visible row
 *     and reduced (sum, sum of squares, KeyFormer sum, corm margin);
 *   snapkv's pooling through prefix sums.
 * GQA (Hkv = H / G K/V heads): pass 1 runs for each of the G query heads of K/V head g (which
 * read its k and v), then pass 2 walks key column j of g once over all G heads' visible rows:
 * the column statistics are per K/V head, summed over its group (corm: the largest margin).
 * Selected blocks (KEYS_SELECTED_BLOCKS): every key j of the row is scanned in order and kept
 * when the block j / BS appears in the query's list (and the causal mask allows it), with the
 * online max / sum; no gather, no per-list order.
 * Double precision throughout; O(B H Lq Lkv D) twice. */
#include "ref.h"

#include "harness.h"
#include "rng.h"
#include "selected_blocks.h"
#include "workload.h"

#include <math.h>
#include <string.h>

typedef struct {
  workload_id wl;
  const attn_shape *s;
  const ref_inputs *in;
  int b, h;
} head_view;

/* Last visible key of row i (causal, bottom-right aligned), or -1 when none. */
static int last_key(const attn_shape *s, int i) {
  int last = i + mask_offset(s);
  return last < s->kv_len - 1 ? last : s->kv_len - 1;
}

/* Element offset of key / value j of the K/V head that head hv reads ([B, Lkv, Hkv, D]). */
static size_t kv_offset(const head_view *hv, int j) {
  const attn_shape *s = hv->s;
  const int hkv = shape_kv_heads(s), g = hv->h / shape_groups(s);
  return (((size_t)hv->b * s->kv_len + j) * hkv + g) * s->dim;
}

static double logit(const head_view *hv, int i, int j) {
  const attn_shape *s = hv->s;
  const uint16_t *q = hv->in->q + (((size_t)hv->b * s->q_len + i) * s->heads + hv->h) * s->dim;
  const uint16_t *k = hv->in->k + kv_offset(hv, j);
  double dot = 0;
  const int bf16 = s->dtype == DTYPE_BF16;
  for (int d = 0; d < s->dim; d++)
    dot += (double)rng_elem_to_float(q[d], bf16) * rng_elem_to_float(k[d], bf16);
  double x = dot * shape_scale(s);
  return workload_table[hv->wl].logits == LOGITS_SOFTCAP ? GEMMA2_SOFTCAP * tanh(x / GEMMA2_SOFTCAP)
                                                         : x;
}

static double kf_logit(const head_view *hv, int i, int j, double x) {
  const attn_shape *s = hv->s;
  size_t idx = (((size_t)hv->b * s->heads + hv->h) * s->q_len + i) * s->kv_len + j;
  return (x - log(hv->in->exp_rand[idx])) / KF_TAU;
}

/* Pass 1 for row i: writes out_i, returns lse_i; *lse_kf gets KeyFormer's row lse. */
static double row_pass(const head_view *hv, int i, double *acc, double *out_row, double *lse_kf) {
  const attn_shape *s = hv->s;
  double m = -INFINITY, l = 0, mk = -INFINITY, lk = 0;
  for (int d = 0; d < s->dim; d++) acc[d] = 0;
  for (int j = 0; j <= last_key(s, i); j++) {
    double x = logit(hv, i, j);
    if (x > m) { /* new running max: rescale what was accumulated under the old one */
      double c = exp(m - x);
      l *= c;
      for (int d = 0; d < s->dim; d++) acc[d] *= c;
      m = x;
    }
    double e = exp(x - m);
    l += e;
    const uint16_t *v = hv->in->v + kv_offset(hv, j);
    for (int d = 0; d < s->dim; d++) acc[d] += e * rng_elem_to_float(v[d], s->dtype == DTYPE_BF16);
    if (workload_table[hv->wl].column == COL_KEYFORMER) {
      double t = kf_logit(hv, i, j, x);
      if (t > mk) {
        lk *= exp(mk - t);
        mk = t;
      }
      lk += exp(t - mk);
    }
  }
  for (int d = 0; d < s->dim; d++) out_row[d] = acc[d] / l;
  *lse_kf = mk + log(lk);
  return m + log(l);
}

/* Pass 2 for column j of the [B, Hkv, Lkv] outputs at offset c: over the rows of the group's
 * G query heads, grp->h its first; lse and lse_kf hold G rows of Lq, one per head. */
static void column_pass(const head_view *grp, int G, int j, const double *lse, const double *lse_kf,
                        const ref_outputs *out, size_t c) {
  const attn_shape *s = grp->s;
  double sum = 0, sum_sq = 0, margin = -INFINITY;
  int first_row = j - mask_offset(s); /* rows i >= first_row see key j */
  for (int r = 0; r < G; r++) {
    const head_view hv = {grp->wl, s, grp->in, grp->b, grp->h + r};
    const double *lr = lse + (size_t)r * s->q_len, *lkr = lse_kf + (size_t)r * s->q_len;
    for (int i = first_row > 0 ? first_row : 0; i < s->q_len; i++) {
      double x = logit(&hv, i, j);
      if (workload_table[hv.wl].column == COL_KEYFORMER) {
        sum += exp(kf_logit(&hv, i, j, x) - lkr[i]);
        continue;
      }
      double p = exp(x - lr[i]);
      sum += p;
      sum_sq += p * p;
      if (workload_table[hv.wl].column == COL_ANY_GE_MASK) {
        double mk = hv.in->corm_mask[(size_t)i * s->kv_len + j];
        double rel = mk > 0 ? p / mk - 1.0 : p - mk;
        margin = rel > margin ? rel : margin;
      }
    }
  }
  if (out->score) out->score[c] = sum;
  if (out->score2) out->score2[c] = sum_sq;
  if (workload_table[grp->wl].column == COL_ANY_GE_MASK) {
    /* rows that do not see key j have P = 0, below every positive mask value */
    out->corm_margin[c] = margin;
    out->flags[c] = margin >= 0;
  }
}

/* score[j] = (sum of score[j-w/2 .. j+w/2] inside [0, n)) / w, via prefix sums. */
static void pool_prefix(double *score, int n, int w, double *prefix) {
  prefix[0] = 0;
  for (int t = 0; t < n; t++) prefix[t + 1] = prefix[t] + score[t];
  for (int j = 0; j < n; j++) {
    int lo = j - w / 2, hi = j + w / 2 + 1;
    lo = lo < 0 ? 0 : lo;
    hi = hi > n ? n : hi;
    score[j] = (prefix[hi] - prefix[lo]) / w;
  }
}

/* Key j is in one of the T blocks of list (an absent entry never equals j / BS: it is past
 * the keys or negative). */
static int in_list(const int32_t *list, int T, int block) {
  for (int e = 0; e < T; e++)
    if (list[e] == block) return 1;
  return 0;
}

/* KEYS_SELECTED_BLOCKS, query t of head h: a scan over every key, the list as a membership
 * test, online softmax; out = 0 when no key is kept. */
static void selected_row(const attn_shape *s, const ref_inputs *in, const ref_outputs *out, int b,
                         int h, int t, double *acc) {
  const int Hkv = shape_kv_heads(s), T = s->selected_blocks, D = s->dim;
  const int g = h / shape_groups(s), bf16 = s->dtype == DTYPE_BF16;
  const int32_t *list = in->block_idx + (((size_t)b * s->q_len + t) * Hkv + g) * T;
  const uint16_t *q = in->q + (((size_t)b * s->q_len + t) * s->heads + h) * D;
  double m = -INFINITY, l = 0;
  for (int d = 0; d < D; d++) acc[d] = 0;
  for (int j = 0; j <= last_key(s, t); j++) {
    if (!in_list(list, T, j / s->block_size)) continue;
    const uint16_t *k = in->k + (((size_t)b * s->kv_len + j) * Hkv + g) * D;
    const uint16_t *v = in->v + (((size_t)b * s->kv_len + j) * Hkv + g) * D;
    double dot = 0;
    for (int d = 0; d < D; d++)
      dot += (double)rng_elem_to_float(q[d], bf16) * rng_elem_to_float(k[d], bf16);
    double x = dot * shape_scale(s);
    if (x > m) { /* rescale under the new max */
      double c = exp(m - x);
      l *= c;
      for (int d = 0; d < D; d++) acc[d] *= c;
      m = x;
    }
    double e = exp(x - m);
    l += e;
    for (int d = 0; d < D; d++) acc[d] += e * rng_elem_to_float(v[d], bf16);
  }
  double *o = out->out + (((size_t)b * s->q_len + t) * s->heads + h) * D;
  for (int d = 0; d < D; d++) o[d] = l > 0 ? acc[d] / l : 0.0;
}

void ref_online_run(workload_id wl, const attn_shape *s, const ref_inputs *in,
                    const ref_outputs *out) {
  size_t lse_bytes = (size_t)s->q_len * sizeof(double);
  size_t acc_bytes = (size_t)s->dim * sizeof(double);
  if (workload_selected_blocks(wl)) {
    double *acc = hx_host_alloc(acc_bytes, "online acc");
    for (int b = 0; b < s->batch; b++)
      for (int t = 0; t < s->q_len; t++)
        for (int h = 0; h < s->heads; h++) selected_row(s, in, out, b, h, t, acc);
    hx_host_free(acc);
    return;
  }
  const int G = shape_groups(s), hkv = shape_kv_heads(s);
  size_t pre_bytes = ((size_t)s->kv_len + 1) * sizeof(double);
  double *lse = hx_host_alloc((size_t)G * lse_bytes, "online lse");
  double *lse_kf = hx_host_alloc((size_t)G * lse_bytes, "online kf lse");
  double *acc = hx_host_alloc(acc_bytes, "online acc");
  double *prefix = hx_host_alloc(pre_bytes, "online prefix");
  int column_stats = workload_has_column_pass(wl), pool = workload_table[wl].pool;
  for (int b = 0; b < s->batch; b++)
    for (int g = 0; g < hkv; g++) {
      for (int r = 0; r < G; r++) { /* pass 1 for each query head of the group */
        const int h = g * G + r;
        head_view hv = {wl, s, in, b, h};
        for (int i = 0; i < s->q_len; i++) {
          double *o = out->out + (((size_t)b * s->q_len + i) * s->heads + h) * s->dim;
          size_t e = (size_t)r * s->q_len + (size_t)i;
          lse[e] = row_pass(&hv, i, acc, o, &lse_kf[e]);
        }
      }
      head_view grp = {wl, s, in, b, g * G};
      size_t c0 = ((size_t)b * hkv + g) * s->kv_len;
      for (int j = 0; column_stats && j < s->kv_len; j++)
        column_pass(&grp, G, j, lse, lse_kf, out, c0 + (size_t)j);
      if (pool) pool_prefix(out->score + c0, s->kv_len, pool, prefix);
    }
  hx_host_free(prefix);
  hx_host_free(acc);
  hx_host_free(lse_kf);
  hx_host_free(lse);
}
