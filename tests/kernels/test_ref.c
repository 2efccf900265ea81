/* Properties of the CPU reference (kernels/attention/ref) on fresh random inputs, and agreement with the
 * independently written online formulation. The seed comes from the clock unless
 * REPRO_TEST_SEED is set; it is printed so a failure can be replayed. */
#include "../check.h"
#include "cost.h"
#include "harness.h"
#include "ref/ref.h"
#include "rng.h"
#include "workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  ref_host_inputs hin;
  ref_inputs in;
  ref_outputs out;
} run_t;

static void run_ref(workload_id wl, const attn_shape *s, uint64_t seed, run_t *r) {
  ref_inputs_generate(wl, s, seed, &r->hin);
  r->in = ref_inputs_of(&r->hin);
  ref_outputs_alloc(wl, s, &r->out);
  ref_run(wl, s, &r->in, &r->out);
}

static void run_free(run_t *r) {
  ref_outputs_free(&r->out);
  ref_inputs_free(&r->hin);
}

/* ref and ref_online agree on every output of every dense workload (the selected-block ones:
 * test_selected_blocks.c). */
static void test_two_formulations(const attn_shape *s, uint64_t seed) {
  for (int w = 0; w < WL_COUNT; w++) {
    if (workload_selected_blocks((workload_id)w)) continue;
    run_t r;
    run_ref((workload_id)w, s, seed, &r);
    ref_outputs o;
    ref_outputs_alloc((workload_id)w, s, &o);
    ref_online_run((workload_id)w, s, &r.in, &o);
    size_t nq = shape_q_elems(s), ns = shape_score_elems(s);
    CHECKF(check_rel_l2(o.out, r.out.out, nq) < 1e-12, "%s out", workload_names[w]);
    if (o.score)
      CHECKF(check_rel_l2(o.score, r.out.score, ns) < 1e-12, "%s score", workload_names[w]);
    if (o.score2)
      CHECKF(check_rel_l2(o.score2, r.out.score2, ns) < 1e-12, "%s score2", workload_names[w]);
    if (o.flags) CHECKF(memcmp(o.flags, r.out.flags, ns) == 0, "%s flags", workload_names[w]);
    ref_outputs_free(&o);
    run_free(&r);
  }
}

/* Column sums of a row-stochastic matrix add up to the number of rows: every workload whose
 * score is an unpooled column sum of a softmax (COL_SUM, COL_SUM_SQ, COL_KEYFORMER). Under
 * GQA a K/V head's score sums its G query heads' rows: G * Lq. */
static void test_column_sums(const attn_shape *s, uint64_t seed) {
  for (int k = 0; k < WL_COUNT; k++) {
    const workload_info *w = &workload_table[k];
    int sums = w->column == COL_SUM || w->column == COL_SUM_SQ || w->column == COL_KEYFORMER;
    if (!sums || w->pool) continue;
    run_t r;
    run_ref((workload_id)k, s, seed, &r);
    const int rows = shape_groups(s) * s->q_len;
    for (int bg = 0; bg < s->batch * shape_kv_heads(s); bg++) {
      double sum = 0;
      for (int j = 0; j < s->kv_len; j++) sum += r.out.score[(size_t)bg * s->kv_len + j];
      CHECKF(fabs(sum - rows) < 1e-9 * rows, "%s: column sums %.12f, rows %d", w->name, sum, rows);
    }
    run_free(&r);
  }
}

/* Causal: row 0 sees only key 0, so out row 0 is v row 0; the last key is seen by the last
 * row only; changing the last key and value leaves every earlier row alone. */
static void test_causal(const attn_shape *s, uint64_t seed) {
  run_t r;
  run_ref(WL_H2O, s, seed, &r);
  int bad = 0;
  for (int b = 0; b < s->batch; b++)
    for (int h = 0; h < s->heads; h++)
      for (int d = 0; d < s->dim; d++) {
        size_t e = (((size_t)b * s->q_len) * s->heads + h) * s->dim + d;
        bad += fabs(r.out.out[e] - rng_half_to_float(r.hin.v[e])) > 1e-12;
      }
  CHECKF(bad == 0, "%d elements of out row 0 differ from v row 0", bad);

  /* perturb key and value S-1 of every head */
  ref_outputs o;
  ref_outputs_alloc(WL_H2O, s, &o);
  for (int b = 0; b < s->batch; b++)
    for (int h = 0; h < s->heads; h++)
      for (int d = 0; d < s->dim; d++) {
        size_t e = (((size_t)b * s->kv_len + s->kv_len - 1) * s->heads + h) * s->dim + d;
        r.hin.k[e] ^= 0x8000; /* sign flips: finite, different values */
        r.hin.v[e] ^= 0x8000;
      }
  ref_run(WL_H2O, s, &r.in, &o);
  size_t row = (size_t)s->heads * s->dim, changed_early = 0, changed_last = 0;
  for (int b = 0; b < s->batch; b++)
    for (size_t e = 0; e < (size_t)s->q_len * row; e++) {
      size_t idx = (size_t)b * s->q_len * row + e;
      int changed = o.out[idx] != r.out.out[idx];
      if (e / row == (size_t)s->q_len - 1)
        changed_last += changed;
      else
        changed_early += changed;
    }
  CHECKF(changed_early == 0, "%zu elements of rows < S-1 changed with key S-1", changed_early);
  CHECKF(s->q_len == 1 || changed_last > 0, "the last row ignored its last key");
  ref_outputs_free(&o);
  run_free(&r);
}

/* snapkv is the h2o score pooled (kernel 5, pad 2, zeros counted); roco's first score is
 * h2o's and its squares stay below it; corm's flags follow their margin, column 0 is always
 * set (P[0][0] = 1 >= 1/1). */
static void test_relations(const attn_shape *s, uint64_t seed) {
  run_t h2o, snap, roco, corm;
  run_ref(WL_H2O, s, seed, &h2o);
  run_ref(WL_SNAPKV, s, seed, &snap);
  run_ref(WL_ROCO, s, seed, &roco);
  run_ref(WL_CORM, s, seed, &corm);
  int n = s->kv_len, bad_pool = 0, bad_roco = 0, bad_corm = 0;
  for (int bh = 0; bh < s->batch * s->heads; bh++) {
    const double *x = h2o.out.score + (size_t)bh * n;
    for (int j = 0; j < n; j++) {
      double want = 0;
      for (int t = j - 2; t <= j + 2; t++) want += (t >= 0 && t < n) ? x[t] : 0.0;
      want /= 5;
      size_t c = (size_t)bh * n + j;
      bad_pool += fabs(snap.out.score[c] - want) > 1e-12;
      bad_roco += roco.out.score[c] != x[j] || roco.out.score2[c] > roco.out.score[c] ||
                  roco.out.score2[c] <= 0;
      bad_corm += corm.out.flags[c] != (corm.out.corm_margin[c] >= 0);
    }
    bad_corm += corm.out.flags[(size_t)bh * n] != 1;
  }
  CHECKF(bad_pool == 0, "%d snapkv scores are not the pooled h2o scores", bad_pool);
  CHECKF(bad_roco == 0, "%d roco scores break roco == h2o, 0 < roco_sq <= roco", bad_roco);
  CHECKF(bad_corm == 0, "%d corm flags disagree with their margin", bad_corm);
  run_free(&corm);
  run_free(&roco);
  run_free(&snap);
  run_free(&h2o);
}

/* gemma2's cap 50 tanh(x/50) barely moves logits of size ~3: out close to attn's but not
 * equal (the cap is applied). */
static void test_softcap(const attn_shape *s, uint64_t seed) {
  run_t a, g;
  run_ref(WL_ATTN, s, seed, &a);
  run_ref(WL_GEMMA2, s, seed, &g);
  double d = check_rel_l2(g.out.out, a.out.out, shape_q_elems(s));
  CHECKF(d < 1e-2, "gemma2 vs attn rel diff %g", d);
  CHECKF(s->kv_len == 1 || d > 0, "gemma2 equals attn: soft cap not applied");
  run_free(&g);
  run_free(&a);
}

/* A hand-sized case: D = 1, S = 2, q = k = 1 everywhere, v = (1, 3): row 1 sees logits
 * (1, 1) -> P = (1/2, 1/2), out = 2; h2o = (1 + 1/2, 1/2); corm: P[1][1] = 1/2 >= 1/2. */
static void test_by_hand(void) {
  attn_shape s = {1, 1, 1, 2, 2, MASK_CAUSAL, DTYPE_FP16, ATTN_DENSE};
  uint16_t one = rng_float_to_half(1.0f), three = rng_float_to_half(3.0f);
  uint16_t q[2] = {one, one}, k[2] = {one, one}, v[2] = {one, three};
  float mask[4] = {1.0f, 1.0f, 0.5f, 0.5f};
  ref_inputs in = {.q = q, .k = k, .v = v, .corm_mask = mask};
  ref_outputs o;
  ref_outputs_alloc(WL_CORM, &s, &o);
  ref_run(WL_CORM, &s, &in, &o);
  CHECKF(o.out[0] == 1.0 && fabs(o.out[1] - 2.0) < 1e-15, "out %g %g", o.out[0], o.out[1]);
  CHECKF(o.flags[0] == 1 && o.flags[1] == 1, "corm flags %d %d", o.flags[0], o.flags[1]);
  ref_outputs_free(&o);
  ref_outputs_alloc(WL_H2O, &s, &o);
  ref_run(WL_H2O, &s, &in, &o);
  CHECKF(fabs(o.score[0] - 1.5) < 1e-15 && fabs(o.score[1] - 0.5) < 1e-15, "h2o %g %g", o.score[0],
         o.score[1]);
  ref_outputs_free(&o);
}

/* The cell's softmax scale (attnvar --scale) reaches both formulations: D = 1, S = 2, q = 1,
 * k = (1, 2), v = (1, 3), scale ln 3: row 1's logits (ln 3, 2 ln 3) -> P = (1/4, 3/4), out 2.5
 * (the default scale 1/sqrt(1) would give (1 + 3e) / (1 + e) = 2.46). */
static void test_scale_by_hand(void) {
  attn_shape s = {1, 1, 1, 2, 2, MASK_CAUSAL, DTYPE_FP16, ATTN_DENSE};
  s.scale = log(3.0);
  uint16_t one = rng_float_to_half(1.0f), two = rng_float_to_half(2.0f),
           three = rng_float_to_half(3.0f);
  uint16_t q[2] = {one, one}, k[2] = {one, two}, v[2] = {one, three};
  ref_inputs in = {.q = q, .k = k, .v = v};
  ref_outputs o, on;
  ref_outputs_alloc(WL_ATTN, &s, &o);
  ref_outputs_alloc(WL_ATTN, &s, &on);
  ref_run(WL_ATTN, &s, &in, &o);
  ref_online_run(WL_ATTN, &s, &in, &on);
  CHECKF(fabs(o.out[1] - 2.5) < 1e-12, "ref out %.15g, want 2.5", o.out[1]);
  CHECKF(fabs(on.out[1] - 2.5) < 1e-12, "ref_online out %.15g, want 2.5", on.out[1]);
  ref_outputs_free(&o);
  ref_outputs_free(&on);
}

/* Without a mask every row sees every key: row 0's output differs from the causal one (which
 * is v row 0) and changing the last key moves every row. */
static void test_unmasked(uint64_t seed) {
  attn_shape c = {1, 2, 16, 12, 12, MASK_CAUSAL, DTYPE_FP16, ATTN_DENSE}, u = c;
  u.mask = MASK_NONE;
  run_t rc, ru;
  run_ref(WL_H2O, &c, seed, &rc);
  run_ref(WL_H2O, &u, seed, &ru);
  size_t row = (size_t)c.heads * c.dim;
  CHECKF(check_rel_l2(ru.out.out, rc.out.out, row) > 1e-3, "unmasked row 0 equals the causal one");
  /* last key's column sum: causal sees it from the last row only (P = its share there), the
   * unmasked sum runs over every row */
  for (int h = 0; h < c.heads; h++) {
    double causal_last = rc.out.score[(size_t)h * c.kv_len + c.kv_len - 1];
    double free_last = ru.out.score[(size_t)h * c.kv_len + c.kv_len - 1];
    CHECKF(free_last > causal_last, "head %d: last key's score %g <= causal %g", h, free_last,
           causal_last);
  }
  CHECK(workload_gflop(WL_H2O, &u) == 2 * workload_gflop(WL_H2O, &c));
  run_free(&rc);
  run_free(&ru);
}

/* bf16 inputs are bfloat16 bits of the same N(0,1) draws: within bf16 rounding of the fp16
 * ones, and not equal to them. */
static void test_bf16_inputs(uint64_t seed) {
  attn_shape h = {1, 2, 16, 9, 9, MASK_CAUSAL, DTYPE_FP16, ATTN_DENSE}, b = h;
  b.dtype = DTYPE_BF16;
  ref_host_inputs ih, ib;
  ref_inputs_generate(WL_ATTN, &h, seed, &ih);
  ref_inputs_generate(WL_ATTN, &b, seed, &ib);
  size_t n = shape_q_elems(&h), differ = 0, far = 0;
  for (size_t e = 0; e < n; e++) {
    float x = rng_half_to_float(ih.q[e]), y = rng_bf16_to_float(ib.q[e]);
    differ += ih.q[e] != ib.q[e];
    far += fabsf(x - y) > fabsf(x) * (1.0f / 128) + 1e-6f;
  }
  CHECKF(differ > n / 2, "bf16 inputs look like fp16 bits (%zu of %zu differ)", differ, n);
  CHECKF(far == 0, "%zu bf16 inputs are not the rounded draws", far);
  CHECK(rng_float_to_bf16(1.0f) == 0x3f80 && rng_bf16_to_float(0x3f80) == 1.0f);
  CHECK(rng_float_to_bf16(1.0f + 1.0f / 256) == 0x3f80); /* tie to even */
  CHECK(rng_float_to_bf16(1.0f + 3.0f / 256) == 0x3f82); /* tie to even, up */
  ref_inputs_free(&ih);
  ref_inputs_free(&ib);
}

/* ---- GQA (kv_heads < heads) ----------------------------------------------------------- */

/* The inputs of GQA shape g with K/V head h / G repeated into every query head h: the same
 * cell as the MHA shape m (g with kv_heads 0); q and the per-query-head exp_rand, corm_mask
 * unchanged. */
static ref_host_inputs repeat_kv(const attn_shape *g, const attn_shape *m,
                                 const ref_host_inputs *in) {
  ref_host_inputs r = *in;
  size_t n = shape_kv_elems(m);
  const int G = shape_groups(g), hkv = shape_kv_heads(g), D = g->dim;
  r.k = hx_host_alloc(n * sizeof *r.k, "repeated k");
  r.v = hx_host_alloc(n * sizeof *r.v, "repeated v");
  for (int b = 0; b < g->batch; b++)
    for (int j = 0; j < g->kv_len; j++)
      for (int h = 0; h < g->heads; h++) {
        size_t dst = (((size_t)b * g->kv_len + j) * g->heads + h) * D;
        size_t src = (((size_t)b * g->kv_len + j) * hkv + h / G) * D;
        memcpy(r.k + dst, in->k + src, (size_t)D * sizeof *r.k);
        memcpy(r.v + dst, in->v + src, (size_t)D * sizeof *r.v);
      }
  return r;
}

/* A GQA cell (G > 1) equals the MHA cell on K/V heads repeated G times: out equal (the same
 * arithmetic per query head), and each K/V head's column statistic the MHA per-head ones
 * summed over its group (flags: any of them; pooled: the pool is linear, so the sum of the
 * pooled ones), for both formulations. The MHA side is ref alone, written per query head. */
static void test_gqa_repeated(const attn_shape *g, uint64_t seed) {
  attn_shape m = *g;
  m.kv_heads = 0;
  const int G = shape_groups(g), hkv = shape_kv_heads(g), n = g->kv_len;
  CHECKF(G > 1, "shape with kv_heads %d of %d heads is no GQA shape", g->kv_heads, g->heads);
  for (int w = 0; w < WL_COUNT; w++) {
    if (workload_selected_blocks((workload_id)w)) continue;
    const char *name = workload_names[w];
    ref_host_inputs hin;
    ref_inputs_generate((workload_id)w, g, seed, &hin);
    ref_host_inputs rep = repeat_kv(g, &m, &hin);
    ref_inputs in = ref_inputs_of(&hin), in_rep = ref_inputs_of(&rep);
    ref_outputs mha, gqa[2];
    ref_outputs_alloc((workload_id)w, &m, &mha);
    ref_run((workload_id)w, &m, &in_rep, &mha);
    ref_outputs_alloc((workload_id)w, g, &gqa[0]);
    ref_outputs_alloc((workload_id)w, g, &gqa[1]);
    ref_run((workload_id)w, g, &in, &gqa[0]);
    ref_online_run((workload_id)w, g, &in, &gqa[1]);
    CHECKF(shape_score_elems(g) * G == shape_score_elems(&m), "%s: score elements %zu, MHA %zu",
           name, shape_score_elems(g), shape_score_elems(&m));
    for (int f = 0; f < 2; f++) {
      const ref_outputs *o = &gqa[f];
      const char *form = f ? "ref_online" : "ref";
      CHECKF(check_rel_l2(o->out, mha.out, shape_q_elems(g)) < 1e-12, "%s %s G=%d: out", form, name,
             G);
      int bad_score = 0, bad_score2 = 0, bad_flags = 0;
      for (int b = 0; b < g->batch; b++)
        for (int kv = 0; kv < hkv; kv++)
          for (int j = 0; j < n; j++) {
            size_t c = ((size_t)b * hkv + kv) * n + j;
            double sum = 0, sum2 = 0;
            int any = 0;
            for (int r = 0; r < G; r++) {
              size_t cm = ((size_t)b * g->heads + kv * G + r) * n + j;
              if (mha.score) sum += mha.score[cm];
              if (mha.score2) sum2 += mha.score2[cm];
              if (mha.flags) any |= mha.flags[cm];
            }
            if (o->score) bad_score += !(fabs(o->score[c] - sum) <= 1e-12 * (1 + fabs(sum)));
            if (o->score2) bad_score2 += !(fabs(o->score2[c] - sum2) <= 1e-12 * (1 + fabs(sum2)));
            if (o->flags) bad_flags += o->flags[c] != any;
          }
      CHECKF(bad_score == 0, "%s %s G=%d: %d scores are not the group's summed MHA scores", form,
             name, G, bad_score);
      CHECKF(bad_score2 == 0, "%s %s G=%d: %d score2 are not the group's summed MHA ones", form,
             name, G, bad_score2);
      CHECKF(bad_flags == 0, "%s %s G=%d: %d flags are not any of the group's MHA flags", form,
             name, G, bad_flags);
    }
    ref_outputs_free(&gqa[1]);
    ref_outputs_free(&gqa[0]);
    ref_outputs_free(&mha);
    hx_host_free(rep.v);
    hx_host_free(rep.k);
    ref_inputs_free(&hin);
  }
}

/* The K/V heads are distinct: a GQA cell reads K/V head h / G, not h (nor h % Hkv). Changing
 * K/V head 1 moves exactly the outputs of query heads G .. 2G-1 and the scores of K/V head 1. */
static void test_gqa_heads_read(uint64_t seed) {
  attn_shape g = {1, 4, 8, 11, 11, MASK_CAUSAL, DTYPE_FP16, 2, 0, 0, 0.0, 0};
  run_t r;
  run_ref(WL_H2O, &g, seed, &r);
  for (int j = 0; j < g.kv_len; j++) /* K/V head 1's keys and values, sign-flipped */
    for (int d = 0; d < g.dim; d++) {
      size_t e = ((size_t)j * 2 + 1) * g.dim + d;
      r.hin.k[e] ^= 0x8000;
      r.hin.v[e] ^= 0x8000;
    }
  ref_outputs o;
  ref_outputs_alloc(WL_H2O, &g, &o);
  ref_run(WL_H2O, &g, &r.in, &o);
  int moved[4] = {0}, same[4] = {0};
  for (int i = 0; i < g.q_len; i++)
    for (int h = 0; h < g.heads; h++)
      for (int d = 0; d < g.dim; d++) {
        size_t e = ((size_t)i * g.heads + h) * g.dim + d;
        moved[h] += o.out[e] != r.out.out[e];
        same[h] += o.out[e] == r.out.out[e];
      }
  CHECKF(moved[0] == 0 && moved[1] == 0, "heads 0, 1 (K/V head 0) moved: %d %d", moved[0],
         moved[1]);
  CHECKF(same[2] == 0 && same[3] == 0, "heads 2, 3 (K/V head 1) kept %d %d elements", same[2],
         same[3]);
  CHECKF(memcmp(o.score, r.out.score, (size_t)g.kv_len * sizeof *o.score) == 0,
         "K/V head 0's scores moved");
  CHECKF(memcmp(o.score + g.kv_len, r.out.score + g.kv_len, (size_t)g.kv_len * sizeof *o.score),
         "K/V head 1's scores did not move");
  ref_outputs_free(&o);
  run_free(&r);
}

/* corm's mask: 1/(i+1) along each row, and with corm_varied odd keys' 2^-10 higher (no row
 * constant), even keys unchanged; the two formulations agree on both. */
static void test_corm_mask_varied(uint64_t seed) {
  attn_shape s = {1, 2, 16, 9, 9, MASK_CAUSAL, DTYPE_FP16, ATTN_DENSE};
  for (int varied = 0; varied <= 1; varied++) {
    s.corm_varied = varied;
    ref_host_inputs in;
    ref_inputs_generate(WL_CORM, &s, seed, &in);
    int bad = 0;
    for (int i = 0; i < s.q_len; i++)
      for (int j = 0; j < s.kv_len; j++) {
        const float want =
            varied && j % 2 ? corm_mask_value(i) * CORM_VARIED_FACTOR : corm_mask_value(i);
        bad += in.corm_mask[(size_t)i * s.kv_len + j] != want;
      }
    CHECKF(bad == 0, "corm_varied %d: %d mask elements off", varied, bad);
    CHECKF(!varied || in.corm_mask[1] != in.corm_mask[0], "a varied row is constant");
    ref_inputs_free(&in);
  }
  test_two_formulations(&s, seed);
}

int main(void) {
  const char *env = getenv("REPRO_TEST_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
  printf("seed %llu (set REPRO_TEST_SEED to replay)\n", (unsigned long long)seed);
  /* B, H, D, Lq, Lkv: S = 1, odd sizes, two batches, several heads */
  const attn_shape shapes[] = {{1, 1, 8, 1, 1, MASK_CAUSAL, DTYPE_FP16, ATTN_DENSE},
                               {1, 2, 16, 17, 17, MASK_CAUSAL, DTYPE_FP16, ATTN_DENSE},
                               {2, 3, 8, 33, 33, MASK_CAUSAL, DTYPE_FP16, ATTN_DENSE},
                               {1, 1, 64, 50, 50, MASK_CAUSAL, DTYPE_FP16, ATTN_DENSE},
                               {1, 2, 128, 9, 9, MASK_CAUSAL, DTYPE_FP16, ATTN_DENSE}};
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
    const attn_shape *s = &shapes[i];
    uint64_t sd = seed + i;
    test_two_formulations(s, sd);
    test_column_sums(s, sd);
    test_causal(s, sd);
    test_relations(s, sd);
    test_softcap(s, sd);
  }
  test_corm_mask_varied(seed);
  /* without a mask, and in bf16: the two formulations still agree, columns still sum */
  const attn_shape variants[] = {{1, 2, 16, 17, 17, MASK_NONE, DTYPE_FP16, ATTN_DENSE},
                                 {2, 3, 8, 33, 21, MASK_NONE, DTYPE_FP16, ATTN_DENSE},
                                 {1, 2, 16, 17, 17, MASK_CAUSAL, DTYPE_BF16, ATTN_DENSE},
                                 {2, 1, 64, 20, 20, MASK_NONE, DTYPE_BF16, ATTN_DENSE}};
  for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
    test_two_formulations(&variants[i], seed + 100 + i);
    test_column_sums(&variants[i], seed + 100 + i);
  }
  /* GQA: G = 2 and 4 query heads per K/V head ({B, H, D, Lq, Lkv, mask, dtype, kv_heads,
   * 0, 0, 0}): the two formulations agree, columns sum to G * Lq, and the cell equals MHA on
   * repeated K/V heads */
  const attn_shape gqa[] = {{2, 4, 8, 13, 13, MASK_CAUSAL, DTYPE_FP16, 2, 0, 0, 0.0, 0},
                            {1, 4, 16, 17, 17, MASK_CAUSAL, DTYPE_FP16, 1, 0, 0, 0.0, 0},
                            {2, 8, 8, 9, 9, MASK_CAUSAL, DTYPE_FP16, 2, 0, 0, 0.0, 0},
                            {1, 6, 16, 12, 12, MASK_CAUSAL, DTYPE_FP16, 3, 0, 0, 0.0, 0},
                            {2, 4, 8, 11, 15, MASK_NONE, DTYPE_FP16, 1, 0, 0, 0.0, 0},
                            {1, 8, 16, 10, 10, MASK_CAUSAL, DTYPE_BF16, 4, 0, 0, 0.0, 0}};
  for (size_t i = 0; i < sizeof gqa / sizeof *gqa; i++) {
    test_two_formulations(&gqa[i], seed + 200 + i);
    test_column_sums(&gqa[i], seed + 200 + i);
    test_gqa_repeated(&gqa[i], seed + 200 + i);
  }
  test_gqa_heads_read(seed);
  test_unmasked(seed);
  test_bf16_inputs(seed);
  test_by_hand();
  test_scale_by_hand();
  return check_report();
}
