/* ref_model.c: the CPU double reference of the prefill (ref_model.h). Written for clarity, not
 * speed: triple loops, one function per step, the same order of steps as forward.cu. */
#include "ref_model.h"

#include "draws.h"
#include "harness.h"
#include "ref/ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double *e2e_ref_weight(e2e_ref_model *m, int layer, int tensor) {
  if (layer < 0) return tensor == DRAW_EMBED ? m->embed : m->final_norm;
  e2e_ref_layer *w = &m->layer[layer];
  double *slots[] = {w->attn_norm, w->wqkv, w->wo, w->mlp_norm, w->wgu, w->wdown};
  return slots[tensor];
}

static double **weight_ptr(e2e_ref_model *m, int layer, int tensor) {
  if (layer < 0) return tensor == DRAW_EMBED ? &m->embed : &m->final_norm;
  e2e_ref_layer *w = &m->layer[layer];
  double **slots[] = {&w->attn_norm, &w->wqkv, &w->wo, &w->mlp_norm, &w->wgu, &w->wdown};
  return slots[tensor];
}

void e2e_ref_model_alloc(e2e_ref_model *m, const e2e_config *cfg) {
  memset(m, 0, sizeof *m);
  m->cfg = *cfg;
  m->layer = hx_host_alloc((size_t)cfg->layers * sizeof *m->layer, "reference layers");
  memset(m->layer, 0, (size_t)cfg->layers * sizeof *m->layer);
  E2E_FOR_EACH_WEIGHT(cfg, l, t)
  *weight_ptr(m, l, t) =
      hx_host_alloc(e2e_weight_elems(cfg, l, t) * sizeof(double), "reference weights");
}

void e2e_ref_model_free(e2e_ref_model *m) {
  if (!m->layer) return;
  E2E_FOR_EACH_WEIGHT(&m->cfg, l, t)
  hx_host_free(*weight_ptr(m, l, t));
  hx_host_free(m->layer);
  memset(m, 0, sizeof *m);
}

void e2e_ref_model_draw(e2e_ref_model *m) {
  const e2e_config *cfg = &m->cfg;
  E2E_FOR_EACH_WEIGHT(cfg, l, t) {
    draw_params p = e2e_draw_params(cfg, t);
    uint32_t stream = DRAW_STREAM_WEIGHT(l, t);
    double *w = *weight_ptr(m, l, t);
    size_t n = e2e_weight_elems(cfg, l, t);
    for (size_t i = 0; i < n; i++)
      w[i] = rng_half_to_float(draw_weight(cfg->seed, stream, i, p.mean, p.stddev));
  }
}

int e2e_ref_model_put(void *user, const st_slot *slot, const uint16_t *data, size_t n) {
  e2e_ref_model *m = user;
  double *w = *weight_ptr(m, slot->layer, slot->tensor);
  w += (size_t)slot->row0 * (size_t)(slot->cols ? slot->cols : 1);
  for (size_t i = 0; i < n; i++) w[i] = rng_half_to_float(data[i]);
  return 0;
}

void e2e_ref_tokens(const e2e_config *cfg, int32_t *tokens) {
  for (int i = 0; i < cfg->seqlen; i++) tokens[i] = draw_token(cfg->seed, (uint64_t)i, cfg->vocab);
}

/* ---- trace ------------------------------------------------------------------------------------ */

static size_t trace_n(const e2e_config *c) { return (size_t)c->layers * c->heads * c->seqlen; }

void e2e_ref_trace_alloc(e2e_ref_trace *t, const e2e_config *cfg) {
  memset(t, 0, sizeof *t);
  size_t n = trace_n(cfg), cap = (size_t)e2e_cache_cap(cfg), lh = (size_t)cfg->layers * cfg->heads;
  workload_id wl = cfg->workload;
  if (workload_table[wl].score_name) t->score = hx_host_alloc(n * sizeof(double), "trace score");
  if (workload_table[wl].score2_name) t->score2 = hx_host_alloc(n * sizeof(double), "trace score2");
  if (workload_table[wl].flags_name) {
    t->flags = hx_host_alloc(n, "trace flags");
    t->corm_margin = hx_host_alloc(n * sizeof(double), "trace corm margin");
  }
  if (cap) {
    t->idx = hx_host_alloc(lh * cap * sizeof(int32_t), "trace idx");
    t->count = hx_host_alloc(lh * sizeof(int32_t), "trace count");
  }
}

void e2e_ref_trace_free(e2e_ref_trace *t) {
  hx_host_free(t->score);
  hx_host_free(t->score2);
  hx_host_free(t->flags);
  hx_host_free(t->corm_margin);
  hx_host_free(t->idx);
  hx_host_free(t->count);
  memset(t, 0, sizeof *t);
}

/* ---- pieces -------------------------------------------------------------------------------- */

void e2e_ref_rmsnorm(const double *x, const double *w, double *y, int rows, int n, double eps) {
  for (int r = 0; r < rows; r++) {
    const double *xr = x + (size_t)r * n;
    double ss = 0;
    for (int i = 0; i < n; i++) ss += xr[i] * xr[i];
    double inv = 1.0 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++) y[(size_t)r * n + i] = xr[i] * inv * w[i];
  }
}

void e2e_ref_rope(double *x, int seqlen, int heads, int head_dim, double theta) {
  int half = head_dim / 2;
  for (int s = 0; s < seqlen; s++)
    for (int h = 0; h < heads; h++) {
      double *v = x + ((size_t)s * heads + h) * head_dim;
      for (int i = 0; i < half; i++) {
        double angle = s * pow(theta, -2.0 * i / head_dim);
        double c = cos(angle), sn = sin(angle), a = v[i], b = v[i + half];
        v[i] = a * c - b * sn;
        v[i + half] = b * c + a * sn;
      }
    }
}

double e2e_ref_silu(double x) { return x / (1.0 + exp(-x)); }

void e2e_ref_linear(const double *x, const double *w, double *y, int rows, int out, int in,
                    int accumulate) {
  for (int r = 0; r < rows; r++)
    for (int o = 0; o < out; o++) {
      const double *xr = x + (size_t)r * in, *wr = w + (size_t)o * in;
      double acc = 0;
      for (int i = 0; i < in; i++) acc += xr[i] * wr[i];
      y[(size_t)r * out + o] = accumulate ? y[(size_t)r * out + o] + acc : acc;
    }
}

typedef struct {
  double key;
  int pos;
} keyed_pos;

/* Larger key first; equal keys: lower position first. */
static int by_key_then_pos(const void *a, const void *b) {
  const keyed_pos *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? 1 : -1;
  return (x->pos > y->pos) - (x->pos < y->pos);
}

void e2e_ref_topk_flags(const double *key, int n, int k, uint8_t *flags) {
  /* sort the unmarked positions by (key desc, position asc) and mark the first k: O(n log n),
   * fast enough to re-select 32 layers x 32 heads x 4096 keys on the host in the GPU check */
  keyed_pos *v = hx_host_alloc((size_t)(n ? n : 1) * sizeof *v, "top-k sort");
  int m = 0;
  for (int j = 0; j < n; j++)
    if (!flags[j]) v[m].key = key[j], v[m].pos = j, m++;
  qsort(v, (size_t)m, sizeof *v, by_key_then_pos);
  for (int i = 0; i < k && i < m; i++) flags[v[i].pos] = 1;
  hx_host_free(v);
}

int e2e_ref_compact(const uint8_t *flags, int n, int cap, int32_t *idx) {
  int total = 0;
  for (int j = 0; j < n; j++) total += flags[j] != 0;
  int skip = total > cap ? total - cap : 0, pos = 0, kept = 0;
  for (int j = 0; j < n; j++) {
    if (!flags[j]) continue;
    if (pos++ >= skip) idx[kept++] = j;
  }
  for (int i = kept; i < cap; i++) idx[i] = -1;
  return kept;
}

double e2e_ref_roco_std(double score, double score2, int q_len) {
  double mean = score / q_len, var = score2 / q_len - mean * mean;
  return sqrt(var > 0 ? var : 0);
}

int e2e_ref_select_head(const e2e_config *cfg, const double *score, const double *score2,
                        const uint8_t *corm_flags, int32_t *idx) {
  const int S = cfg->seqlen, cap = e2e_cache_cap(cfg);
  if (cap == 0) return 0;
  uint8_t *flags = hx_host_alloc((size_t)S, "selection flags");
  double *std = NULL;
  memset(flags, 0, (size_t)S);
  switch (workload_table[cfg->workload].select) {
  case SEL_TOPK_STD:
    std = hx_host_alloc((size_t)S * sizeof *std, "selection std");
    for (int j = 0; j < S; j++) std[j] = e2e_ref_roco_std(score[j], score2[j], S);
    e2e_ref_topk_flags(std, S, cfg->keep_std, flags);
    e2e_ref_topk_flags(score, S, cfg->keep, flags);
    hx_host_free(std);
    break;
  case SEL_FLAGS: memcpy(flags, corm_flags, (size_t)S); break;
  case SEL_TOPK: e2e_ref_topk_flags(score, S, cfg->keep, flags); break;
  case SEL_NONE: break;
  }
  int count = e2e_ref_compact(flags, S, cap, idx);
  hx_host_free(flags);
  return count;
}

/* ---- the forward ------------------------------------------------------------------------------ */

/* Everything one layer needs besides the weights, allocated once per forward. */
typedef struct {
  double *xn, *qkv, *q, *k, *v, *gu, *act; /* attention output: o.out */
  uint16_t *q16, *k16, *v16;
  float *exp_rand, *corm_mask;
  ref_outputs o;
  size_t bytes[16];
} ref_scratch;

static void *scratch(ref_scratch *s, int slot, size_t bytes) {
  s->bytes[slot] = bytes;
  return hx_host_alloc(bytes, "reference activations");
}

static void attention_layer(const e2e_config *c, int layer, ref_scratch *sc,
                            const attn_shape *shape) {
  const size_t S = (size_t)c->seqlen, hid = (size_t)c->hidden;
  /* split q|k|v rows, RoPE in double, round to fp16 as the GPU stores them */
  for (size_t s = 0; s < S; s++) {
    memcpy(sc->q + s * hid, sc->qkv + s * 3 * hid, hid * sizeof(double));
    memcpy(sc->k + s * hid, sc->qkv + s * 3 * hid + hid, hid * sizeof(double));
    memcpy(sc->v + s * hid, sc->qkv + s * 3 * hid + 2 * hid, hid * sizeof(double));
  }
  e2e_ref_rope(sc->q, c->seqlen, c->heads, c->head_dim, c->rope_theta);
  e2e_ref_rope(sc->k, c->seqlen, c->heads, c->head_dim, c->rope_theta);
  for (size_t i = 0; i < S * hid; i++) {
    sc->q16[i] = rng_float_to_half((float)sc->q[i]);
    sc->k16[i] = rng_float_to_half((float)sc->k[i]);
    sc->v16[i] = rng_float_to_half((float)sc->v[i]);
  }
  if (workload_needs_exp_rand(c->workload)) {
    const size_t S = (size_t)c->seqlen,
                 planes = attn_input_elems(ATTN_IN_exp_rand, shape) / (S * S);
    const kf_draw d = draw_kf_noise(c->seed, layer);
    for (size_t h = 0; h < planes; h++) {
      const uint32_t key = kf_draw_plane_key(d, h);
      for (size_t ij = 0; ij < S * S; ij++) /* in-plane index i·S + j (kf_draw.h) */
        sc->exp_rand[h * S * S + ij] = kf_draw_at(key, (uint32_t)ij);
    }
  }
  ref_inputs in = {.q = sc->q16,
                   .k = sc->k16,
                   .v = sc->v16,
                   .exp_rand = sc->exp_rand,
                   .corm_mask = sc->corm_mask};
  ref_run(c->workload, shape, &in, &sc->o);
}

void e2e_ref_forward(const e2e_ref_model *m, const int32_t *tokens, double *out,
                     e2e_ref_trace *trace) {
  const e2e_config *c = &m->cfg;
  const size_t S = (size_t)c->seqlen, hid = (size_t)c->hidden, f = (size_t)c->mlp;
  const size_t HS = (size_t)c->heads * S;
  const attn_shape shape = {1,         c->heads,    c->head_dim, c->seqlen,
                            c->seqlen, MASK_CAUSAL, DTYPE_FP16,  ATTN_DENSE};
  const workload_id wl = c->workload;
  const int cap = e2e_cache_cap(c);
  ref_scratch sc;
  memset(&sc, 0, sizeof sc);
  double *x = scratch(&sc, 0, S * hid * sizeof(double));
  sc.xn = scratch(&sc, 1, S * hid * sizeof(double));
  sc.qkv = scratch(&sc, 2, S * 3 * hid * sizeof(double));
  sc.q = scratch(&sc, 3, S * hid * sizeof(double));
  sc.k = scratch(&sc, 4, S * hid * sizeof(double));
  sc.v = scratch(&sc, 5, S * hid * sizeof(double));
  sc.gu = scratch(&sc, 7, S * 2 * f * sizeof(double));
  sc.act = scratch(&sc, 8, S * f * sizeof(double));
  sc.q16 = scratch(&sc, 9, S * hid * 2);
  sc.k16 = scratch(&sc, 10, S * hid * 2);
  sc.v16 = scratch(&sc, 11, S * hid * 2);
  if (workload_needs_exp_rand(wl))
    sc.exp_rand = scratch(&sc, 12, attn_input_bytes(ATTN_IN_exp_rand, &shape));
  if (workload_needs_corm_mask(wl)) {
    sc.corm_mask = scratch(&sc, 13, attn_input_bytes(ATTN_IN_corm_mask, &shape));
    for (size_t i = 0; i < S; i++)
      for (size_t j = 0; j < S; j++) sc.corm_mask[i * S + j] = corm_mask_value((int)i);
  }
  ref_outputs_alloc(wl, &shape, &sc.o);

  for (size_t s = 0; s < S; s++)
    memcpy(x + s * hid, m->embed + (size_t)tokens[s] * hid, hid * sizeof(double));
  for (int l = 0; l < c->layers; l++) {
    const e2e_ref_layer *w = &m->layer[l];
    e2e_ref_rmsnorm(x, w->attn_norm, sc.xn, (int)S, (int)hid, c->rms_eps);
    e2e_ref_linear(sc.xn, w->wqkv, sc.qkv, (int)S, (int)(3 * hid), (int)hid, 0);
    attention_layer(c, l, &sc, &shape);
    if (trace) {
      size_t at = (size_t)l * HS;
      if (trace->score) memcpy(trace->score + at, sc.o.score, HS * sizeof(double));
      if (trace->score2) memcpy(trace->score2 + at, sc.o.score2, HS * sizeof(double));
      if (trace->flags) memcpy(trace->flags + at, sc.o.flags, HS);
      if (trace->corm_margin)
        memcpy(trace->corm_margin + at, sc.o.corm_margin, HS * sizeof(double));
      for (int h = 0; h < c->heads && cap; h++) {
        size_t hs = (size_t)h * S;
        trace->count[(size_t)l * c->heads + h] = e2e_ref_select_head(
            c, sc.o.score ? sc.o.score + hs : NULL, sc.o.score2 ? sc.o.score2 + hs : NULL,
            sc.o.flags ? sc.o.flags + hs : NULL, trace->idx + ((size_t)l * c->heads + h) * cap);
      }
    }
    e2e_ref_linear(sc.o.out, w->wo, x, (int)S, (int)hid, (int)hid, 1);
    e2e_ref_rmsnorm(x, w->mlp_norm, sc.xn, (int)S, (int)hid, c->rms_eps);
    e2e_ref_linear(sc.xn, w->wgu, sc.gu, (int)S, (int)(2 * f), (int)hid, 0);
    for (size_t s = 0; s < S; s++)
      for (size_t i = 0; i < f; i++)
        sc.act[s * f + i] = e2e_ref_silu(sc.gu[s * 2 * f + i]) * sc.gu[s * 2 * f + f + i];
    e2e_ref_linear(sc.act, w->wdown, x, (int)S, (int)hid, (int)f, 1);
  }
  e2e_ref_rmsnorm(x, m->final_norm, out, (int)S, (int)hid, c->rms_eps);

  ref_outputs_free(&sc.o);
  void *bufs[] = {x,     sc.xn,  sc.qkv, sc.q,   sc.k,   sc.v,        NULL,
                  sc.gu, sc.act, sc.q16, sc.k16, sc.v16, sc.exp_rand, sc.corm_mask};
  for (int i = 0; i < 14; i++) hx_host_free(bufs[i]);
}
