/* ref.c: the seven workloads in double precision, following the workload definitions (workloads.def, README) literally.
 * For each (b, h) and each query row i:
 *   S[i,j] = q_i . k_j · scale              (gemma2: S = 50 tanh(S / 50), before the mask)
 *   S[i,j] = -inf where j > i + (Lkv - Lq)   (causal)
 *   P[i,:] = softmax(S[i,:]);  out_i = sum_j P[i,j] v_j
 * and the column statistics of P:
 *   h2o_score[j]  = sum_i P[i,j]          roco adds roco_sq_score[j] = sum_i P[i,j]^2
 *   snapkv_score  = avg_pool1d(h2o_score, kernel 5, padding 2, stride 1) (pad counts as 0, / 5)
 *   kf_score[j]   = sum_i softmax_j((S[i,j] - log exp_rand[i,j]) / tau)   (masked like S)
 *   corm_score[j] = any_i P[i,j] >= corm_mask[i][j]
 * GQA (Hkv = H / G K/V heads): head h reads K/V head g = h / G, and the column statistics of
 * K/V head g are those sums (any, for corm) over the G query heads of its group too, pooled
 * after the sum.
 * Selected blocks (KEYS_SELECTED_BLOCKS, nsa): for each query, the keys of the blocks of its
 * list (selected_blocks.h) gathered in list order from its K/V head, masked causally, then
 * softmax and P V with the cell's scale; a query without a key gets 0.
 * Slow on purpose: O(B H Lq Lkv D), one row of scratch. */
#include "ref.h"

#include "harness.h"
#include "kf_draw.h"
#include "rng.h"
#include "selected_blocks.h"
#include "workload.h"

#include <math.h>
#include <string.h>

/* q, k, v converted to double once (exactly), so the loops below read plain numbers. */
typedef struct {
  double *q, *k, *v;
} qkv_double;

/* Offsets in the [B, L, H, D] layout (q, out) and the [B, L, Hkv, D] one (k, v). */
static size_t bshd(const attn_shape *s, int b, int len, int i, int h) {
  return (((size_t)b * len + i) * s->heads + h) * s->dim;
}
static size_t bskd(const attn_shape *s, int b, int j, int g) {
  return (((size_t)b * s->kv_len + j) * shape_kv_heads(s) + g) * s->dim;
}

/* Row i of the scores of head (b, h), masked entries -inf. */
static void score_row(workload_id wl, const attn_shape *s, const qkv_double *x, int b, int h, int i,
                      double *row) {
  const double scale = shape_scale(s);
  size_t qo = bshd(s, b, s->q_len, i, h);
  for (int j = 0; j < s->kv_len; j++) {
    size_t ko = bskd(s, b, j, h / shape_groups(s));
    double dot = 0;
    for (int d = 0; d < s->dim; d++) dot += x->q[qo + d] * x->k[ko + d];
    double sc = dot * scale;
    if (workload_table[wl].logits == LOGITS_SOFTCAP)
      sc = GEMMA2_SOFTCAP * tanh(sc / GEMMA2_SOFTCAP);
    row[j] = causal_masked(s, i, j) ? -INFINITY : sc;
  }
}

/* In place: row := softmax(row) over its n entries (-inf entries become 0). */
static void softmax_inplace(double *row, int n) {
  double mx = -INFINITY;
  for (int j = 0; j < n; j++) mx = fmax(mx, row[j]);
  double sum = 0;
  for (int j = 0; j < n; j++) {
    row[j] = row[j] == -INFINITY ? 0.0 : exp(row[j] - mx);
    sum += row[j];
  }
  for (int j = 0; j < n; j++) row[j] /= sum;
}

/* avg_pool1d(kernel w, padding w/2, stride 1, count_include_pad): zero outside [0, n). */
static void pool_avg(const double *x, double *y, int n, int w) {
  for (int j = 0; j < n; j++) {
    double sum = 0;
    for (int t = j - w / 2; t <= j + w / 2; t++)
      if (t >= 0 && t < n) sum += x[t];
    y[j] = sum / w;
  }
}

/* Query head (b, h): out, and its column statistics added into the [Lkv] rows at col0 (its
 * K/V head's). */
static void ref_head(workload_id wl, const attn_shape *s, const ref_inputs *in, const qkv_double *x,
                     const ref_outputs *out, int b, int h, size_t col0, double *p, double *kfp) {
  const workload_info *w = &workload_table[wl];
  const int lq = s->q_len, lkv = s->kv_len, g = h / shape_groups(s);
  double *colsum = out->score ? out->score + col0 : NULL;
  for (int i = 0; i < lq; i++) {
    score_row(wl, s, x, b, h, i, p);
    if (w->column ==
        COL_KEYFORMER) { /* KeyFormer's logits come from the same masked S, before softmax */
      const float *r = in->exp_rand + (((size_t)b * s->heads + h) * lq + i) * lkv;
      for (int j = 0; j < lkv; j++)
        kfp[j] = p[j] == -INFINITY ? -INFINITY : (p[j] - log((double)r[j])) / KF_TAU;
      softmax_inplace(kfp, lkv);
      for (int j = 0; j < lkv; j++) colsum[j] += kfp[j];
    }
    softmax_inplace(p, lkv);

    double *o = out->out + bshd(s, b, lq, i, h);
    for (int d = 0; d < s->dim; d++) o[d] = 0;
    for (int j = 0; j < lkv; j++) {
      const double *vj = x->v + bskd(s, b, j, g);
      for (int d = 0; d < s->dim; d++) o[d] += p[j] * vj[d];
    }
    if (w->column == COL_SUM || w->column == COL_SUM_SQ)
      for (int j = 0; j < lkv; j++) colsum[j] += p[j];
    if (w->column == COL_SUM_SQ)
      for (int j = 0; j < lkv; j++) out->score2[col0 + j] += p[j] * p[j];
    if (w->column == COL_ANY_GE_MASK)
      for (int j = 0; j < lkv; j++) {
        double m = in->corm_mask[(size_t)i * lkv + j];
        double rel = m > 0 ? (p[j] - m) / m : p[j] - m;
        if (rel > out->corm_margin[col0 + j]) out->corm_margin[col0 + j] = rel;
      }
  }
}

/* K/V head (b, g): the G query heads of its group, their column statistics summed (corm: the
 * largest margin, so a flag is any of theirs) into the [B, Hkv, Lkv] outputs, then pooled. */
static void ref_group(workload_id wl, const attn_shape *s, const ref_inputs *in,
                      const qkv_double *x, const ref_outputs *out, int b, int g, double *p,
                      double *kfp) {
  const workload_info *w = &workload_table[wl];
  const int lkv = s->kv_len, G = shape_groups(s);
  size_t col0 = ((size_t)b * shape_kv_heads(s) + g) * lkv; /* [B, Hkv, Lkv] outputs */
  double *colsum = out->score ? out->score + col0 : NULL;
  if (colsum) memset(colsum, 0, (size_t)lkv * sizeof *colsum);
  if (out->score2) memset(out->score2 + col0, 0, (size_t)lkv * sizeof(double));
  if (w->column == COL_ANY_GE_MASK)
    for (int j = 0; j < lkv; j++) out->corm_margin[col0 + j] = -INFINITY;
  for (int r = 0; r < G; r++) ref_head(wl, s, in, x, out, b, g * G + r, col0, p, kfp);
  if (w->pool) { /* pool the column sums in place, through the kf scratch row */
    pool_avg(colsum, kfp, lkv, w->pool);
    memcpy(colsum, kfp, (size_t)lkv * sizeof *colsum);
  }
  if (w->column == COL_ANY_GE_MASK)
    for (int j = 0; j < lkv; j++) out->flags[col0 + j] = out->corm_margin[col0 + j] >= 0;
}

/* KEYS_SELECTED_BLOCKS: query t of head h (K/V head g = h / (H/Hkv)) over its gathered keys. */
static void ref_selected_row(const attn_shape *s, const ref_inputs *in, const qkv_double *x,
                             const ref_outputs *out, int b, int h, int t, double *p, int *key) {
  const int Hkv = shape_kv_heads(s), T = s->selected_blocks, BS = s->block_size, D = s->dim;
  const int g = h / shape_groups(s);
  const int32_t *list = in->block_idx + (((size_t)b * s->q_len + t) * Hkv + g) * T;
  const double *q = x->q + (((size_t)b * s->q_len + t) * s->heads + h) * D;
  int n = 0; /* gathered keys */
  for (int e = 0; e < T; e++) {
    if (!sb_block_live(s, list[e])) continue;
    for (int j = list[e] * BS; j < (list[e] + 1) * BS && j < s->kv_len; j++) {
      if (causal_masked(s, t, j)) continue;
      const double *k = x->k + (((size_t)b * s->kv_len + j) * Hkv + g) * D;
      double dot = 0;
      for (int d = 0; d < D; d++) dot += q[d] * k[d];
      p[n] = dot * shape_scale(s);
      key[n++] = j;
    }
  }
  double *o = out->out + (((size_t)b * s->q_len + t) * s->heads + h) * D;
  for (int d = 0; d < D; d++) o[d] = 0;
  if (n == 0) return;
  softmax_inplace(p, n);
  for (int e = 0; e < n; e++) {
    const double *v = x->v + (((size_t)b * s->kv_len + key[e]) * Hkv + g) * D;
    for (int d = 0; d < D; d++) o[d] += p[e] * v[d];
  }
}

static void ref_selected(const attn_shape *s, const ref_inputs *in, const qkv_double *x,
                         const ref_outputs *out) {
  size_t most = (size_t)s->selected_blocks * s->block_size; /* keys of a full list */
  double *p = hx_host_alloc(most * sizeof *p, "ref gathered scores");
  int *key = hx_host_alloc(most * sizeof *key, "ref gathered keys");
  for (int b = 0; b < s->batch; b++)
    for (int t = 0; t < s->q_len; t++)
      for (int h = 0; h < s->heads; h++) ref_selected_row(s, in, x, out, b, h, t, p, key);
  hx_host_free(key);
  hx_host_free(p);
}

static double *to_double(const uint16_t *t, size_t n, attn_dtype dtype, const char *what) {
  double *d = hx_host_alloc(n * sizeof *d, what);
  for (size_t e = 0; e < n; e++) d[e] = rng_elem_to_float(t[e], dtype == DTYPE_BF16);
  return d;
}

int ref_has_workload(const workload_info *w) {
  /* every logits kind and column statistic; the pool reads a scratch row as wide as the
   * scores, so any width works */
  return workload_features_within(w, ~0u, ~0u, ~0u);
}

void ref_run(workload_id wl, const attn_shape *s, const ref_inputs *in, const ref_outputs *out) {
  size_t nq = shape_q_elems(s), nkv = shape_kv_elems(s);
  qkv_double x = {to_double(in->q, nq, s->dtype, "ref q"), to_double(in->k, nkv, s->dtype, "ref k"),
                  to_double(in->v, nkv, s->dtype, "ref v")};
  if (workload_selected_blocks(wl)) {
    ref_selected(s, in, &x, out);
  } else {
    size_t row_bytes = (size_t)s->kv_len * sizeof(double);
    double *p = hx_host_alloc(row_bytes, "ref score row");
    double *kfp = hx_host_alloc(row_bytes, "ref kf row");
    for (int b = 0; b < s->batch; b++)
      for (int g = 0; g < shape_kv_heads(s); g++) ref_group(wl, s, in, &x, out, b, g, p, kfp);
    hx_host_free(kfp);
    hx_host_free(p);
  }
  hx_host_free(x.v);
  hx_host_free(x.k);
  hx_host_free(x.q);
}

/* ---- buffers ------------------------------------------------------------------------- */

static void *alloc_or_null(int want, size_t n, size_t size, const char *what) {
  return want ? hx_host_alloc(n * size, what) : NULL;
}

/* N(0,1) in the cell's 16-bit type, element e from rng_normal(seed, stream, e): FILL_NORMAL. */
static void fill_normal(uint16_t *dst, size_t n, const attn_shape *s, uint64_t seed,
                        uint32_t stream) {
  const int bf16 = s->dtype == DTYPE_BF16;
  for (size_t e = 0; e < n; e++) dst[e] = rng_float_to_elem(rng_normal(seed, stream, e), bf16);
}

/* The generators of inputs.def's FILL_GEN rows on the host (the device's: gpuref/gpuref.cu). */
typedef void (*host_fill_fn)(void *dst, size_t n, const attn_shape *s, uint64_t seed);

static void ref_fill_exp_rand(void *dst, size_t n, const attn_shape *s, uint64_t seed) {
  float *x = dst;
  (void)s;
  for (size_t e = 0; e < n; e++) x[e] = kf_exp_rand(seed, e);
}

static void ref_fill_corm_mask(void *dst, size_t n, const attn_shape *s, uint64_t seed) {
  float *x = dst;
  (void)seed;
  for (size_t e = 0; e < n; e++) {
    const float v = corm_mask_value((int)(e / s->kv_len));
    x[e] = s->corm_varied && (e % s->kv_len) % 2 ? v * CORM_VARIED_FACTOR : v;
  }
}

static void ref_fill_block_lists(void *dst, size_t n, const attn_shape *s, uint64_t seed) {
  (void)n; /* sb_generate writes the B * Lq * Hkv * T entries of the shape */
  sb_generate(s, seed, dst);
}

/* How each input is drawn on the host: a FILL_NORMAL stream, or a FILL_GEN generator. */
typedef struct {
  uint32_t stream; /* nonzero: FILL_NORMAL from this stream */
  host_fill_fn gen;
} host_fill;

static const host_fill host_fills[ATTN_INPUT_COUNT] = {
#define FILL_NORMAL(stream) \
  { stream, NULL }
#define FILL_GEN(host_fn, dev_fn) \
  { 0, host_fn }
#define ATTN_INPUT(name, elem, elems, needed, host, fill, ...) fill,
#include "inputs.def"
#undef ATTN_INPUT
#undef FILL_GEN
#undef FILL_NORMAL
};

void ref_input_fill(attn_input_id id, const attn_shape *s, uint64_t seed, void *dst) {
  const host_fill *f = &host_fills[id];
  size_t n = attn_input_elems(id, s);
  if (f->stream)
    fill_normal(dst, n, s, seed, f->stream);
  else if (f->gen)
    f->gen(dst, n, s, seed);
  else
    hx_die(REPRO_EXIT_ERROR, "error", "input %s has no host generator (inputs.def)",
           attn_input_table[id].name);
}

/* Input id of wl drawn on the host, or NULL where wl lacks it or only GPU code reads it. */
static void *host_input(attn_input_id id, workload_id wl, const attn_shape *s, uint64_t seed) {
  if (!attn_input_table[id].host || !attn_input_needed(id, wl)) return NULL;
  void *p = hx_host_alloc(attn_input_bytes(id, s), attn_input_table[id].name);
  ref_input_fill(id, s, seed, p);
  return p;
}

void ref_inputs_generate(workload_id wl, const attn_shape *s, uint64_t seed, ref_host_inputs *in) {
#define ATTN_INPUT(name, ...) in->name = host_input(ATTN_IN_##name, wl, s, seed);
#include "inputs.def"
#undef ATTN_INPUT
}

void ref_inputs_free(ref_host_inputs *in) {
#define ATTN_INPUT(name, ...) hx_host_free(in->name);
#include "inputs.def"
#undef ATTN_INPUT
  memset(in, 0, sizeof *in);
}

void ref_outputs_alloc(workload_id wl, const attn_shape *s, ref_outputs *out) {
  const workload_info *w = &workload_table[wl];
  size_t nq = shape_q_elems(s), ns = shape_score_elems(s);
  out->out = hx_host_alloc(nq * sizeof(double), "ref out");
  out->score = alloc_or_null(w->score_name != NULL, ns, sizeof(double), "ref score");
  out->score2 = alloc_or_null(w->score2_name != NULL, ns, sizeof(double), "ref score2");
  out->flags = alloc_or_null(w->flags_name != NULL, ns, sizeof(uint8_t), "ref flags");
  out->corm_margin = alloc_or_null(w->flags_name != NULL, ns, sizeof(double), "ref margin");
}

void ref_outputs_free(ref_outputs *out) {
  hx_host_free(out->out);
  hx_host_free(out->score);
  hx_host_free(out->score2);
  hx_host_free(out->flags);
  hx_host_free(out->corm_margin);
  memset(out, 0, sizeof *out);
}
