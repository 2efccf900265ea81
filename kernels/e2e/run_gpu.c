/* run_gpu.c: llama_e2e's GPU path: set up the model, check it, time it, print the log.
 *
 * Check (--check, before timing, all of it freed before peak memory is measured):
 *   hidden     final hidden states against the CPU double reference when the configuration
 *              is small (e2e_ref_flops), else against the other GPU system (fused <-> unfused),
 *              rel_l2 <= e2e_hidden_bound(layers);
 *   kv_select  the kept positions of every layer and head against the same reference, exact
 *              except near ties (select_check.h);
 *   select_rule the GPU's selection against the CPU selection rule applied to the GPU's own
 *              scores: exact (roco's std within 1e-6 relative);
 *   kv_gather  the last layer's gathered K and V rows against k and v at the kept positions:
 *              exact. */
#include "e2e.h"
#include "e2e_run.h"
#include "harness_gpu.h"
#include "kvline.h"
#include "ref_model.h"
#include "rng.h"
#include "select_check.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What one checked forward leaves on the host. */
typedef struct {
  uint16_t *hidden;                     /* [S, hidden] fp16 */
  int32_t *idx, *count;                 /* [L, H, cap], [L, H] */
  double *score, *score2, *corm_margin; /* traced keys, widened (corm_margin stays NULL) */
  uint8_t *flags;
} run_copy;

static void *host(size_t bytes, const char *what) { return hx_host_alloc(bytes ? bytes : 1, what); }

static double *widen(const float *dev, size_t n, const char *what) {
  if (!dev) return NULL;
  float *f = host(n * 4, what);
  double *d = host(n * 8, what);
  hx_dev_to_host(f, dev, n * 4);
  for (size_t i = 0; i < n; i++) d[i] = f[i];
  hx_host_free(f);
  return d;
}

/* Run one forward with sys (its own workspace if it is not the model's) and copy it out. */
static int checked_forward(e2e_model *m, const attn_system *sys, const attn_ctx *ctx,
                           run_copy *rc) {
  const e2e_config *c = &m->cfg;
  void *own_ws = m->attn_ws;
  size_t ws_bytes = sys->workspace_bytes(ctx, c->workload, &m->shape);
  void *ws = NULL;
  if (ws_bytes > m->attn_ws_bytes) m->attn_ws = ws = hx_dev_alloc(ws_bytes, "reference workspace");
  int err = e2e_forward(m, sys, ctx, NULL);
  HX_CUDA(cudaStreamSynchronize(ctx->stream));
  m->attn_ws = own_ws;
  hx_dev_free(ws);
  if (err) return err;
  const size_t n_out = (size_t)c->seqlen * c->hidden, lh = (size_t)c->layers * c->heads;
  const size_t n_tr = lh * c->seqlen, cap = (size_t)m->cache_cap;
  memset(rc, 0, sizeof *rc);
  rc->hidden = host(n_out * 2, "hidden copy");
  hx_dev_to_host(rc->hidden, m->out, n_out * 2);
  if (cap) {
    rc->idx = host(lh * cap * 4, "idx copy");
    rc->count = host(lh * 4, "count copy");
    hx_dev_to_host(rc->idx, m->cache_idx, lh * cap * 4);
    hx_dev_to_host(rc->count, m->cache_count, lh * 4);
  }
  rc->score = widen(m->trace.score, n_tr, "score copy");
  rc->score2 = widen(m->trace.score2, n_tr, "score2 copy");
  if (m->trace.flags) {
    rc->flags = host(n_tr, "flags copy");
    hx_dev_to_host(rc->flags, m->trace.flags, n_tr);
  }
  return 0;
}

static int report_hidden(const uint16_t *got, const double *want, size_t n, int layers) {
  hx_check chk = hx_compare_f16(got, want, n, e2e_hidden_bound(layers), INFINITY);
  hx_print_check("hidden", &chk);
  return chk.ok;
}

/* GPU selection == the CPU rule applied to the GPU's own traced scores. */
static int check_select_rule(const e2e_config *c, const run_copy *got) {
  const size_t S = (size_t)c->seqlen, lh = (size_t)c->layers * c->heads,
               cap = (size_t)e2e_cache_cap(c);
  int32_t *idx = host(lh * cap * 4, "rule idx"), *count = host(lh * 4, "rule count");
  for (size_t i = 0; i < lh; i++)
    count[i] = e2e_ref_select_head(c, got->score ? got->score + i * S : NULL,
                                   got->score2 ? got->score2 + i * S : NULL,
                                   got->flags ? got->flags + i * S : NULL, idx + i * cap);
  e2e_sel_want want = {idx, count, got->score, got->score2, NULL};
  e2e_sel_check r = e2e_compare_selection(c, &want, got->idx, got->count, 1e-6, 0.0);
  e2e_print_selection_check("kv_select_rule", "cpu-rule-on-own-scores", &r);
  hx_host_free(idx);
  hx_host_free(count);
  return r.ok;
}

/* The last layer's cache rows equal k, v (still in the qkv buffer) at the kept positions. */
static int check_gather(const e2e_model *m) {
  const e2e_config *c = &m->cfg;
  const size_t S = (size_t)c->seqlen, H = (size_t)c->heads, D = (size_t)c->head_dim;
  const size_t cap = (size_t)m->cache_cap, hd = S * H * D, L = (size_t)c->layers;
  uint16_t *kv = host(2 * hd * 2, "k v copy");
  uint16_t *kc = host(H * cap * D * 2, "k cache copy"), *vc = host(H * cap * D * 2, "v cache copy");
  int32_t *idx = host(H * cap * 4, "idx copy"), *count = host(H * 4, "count copy");
  hx_dev_to_host(kv, m->qkv + hd, 2 * hd * 2);
  hx_dev_to_host(kc, m->k_cache + (L - 1) * H * cap * D, H * cap * D * 2);
  hx_dev_to_host(vc, m->v_cache + (L - 1) * H * cap * D, H * cap * D * 2);
  hx_dev_to_host(idx, m->cache_idx + (L - 1) * H * cap, H * cap * 4);
  hx_dev_to_host(count, m->cache_count + (L - 1) * H, H * 4);
  size_t rows = 0, bad = 0;
  for (size_t h = 0; h < H; h++)
    for (int slot = 0; slot < count[h]; slot++, rows++) {
      size_t j = (size_t)idx[h * cap + slot];
      const uint16_t *k = kv + (j * H + h) * D, *v = kv + hd + (j * H + h) * D;
      const uint16_t *kr = kc + (h * cap + slot) * D, *vr = vc + (h * cap + slot) * D;
      bad += memcmp(k, kr, D * 2) != 0 || memcmp(v, vr, D * 2) != 0;
    }
  FILE *out = hx_log();
  fputs("check", out);
  kv_put(out, "output", "kv_gather");
  kv_putf(out, "rows", "%zu", rows);
  kv_putf(out, "mismatches", "%zu", bad);
  kv_putf(out, "ok", "%d", bad == 0);
  fputc('\n', out);
  hx_host_free(kv);
  hx_host_free(kc);
  hx_host_free(vc);
  hx_host_free(idx);
  hx_host_free(count);
  return bad == 0;
}

/* Reference = the CPU double model on the GPU's own weights and tokens. */
static int check_against_cpu(e2e_model *m, const run_copy *got) {
  const e2e_config *c = &m->cfg;
  e2e_ref_model ref;
  e2e_ref_model_alloc(&ref, c);
  E2E_FOR_EACH_WEIGHT(c, l, t) {
    const uint16_t *dev;
    if (l < 0)
      dev = t == DRAW_EMBED ? m->w.embed : m->w.final_norm;
    else {
      const e2e_layer_weights *w = &m->w.layer[l];
      const uint16_t *p[] = {w->attn_norm, w->wqkv, w->wo, w->mlp_norm, w->wgu, w->wdown};
      dev = p[t];
    }
    size_t n = e2e_weight_elems(c, l, t);
    uint16_t *h16 = host(n * 2, "weight copy");
    hx_dev_to_host(h16, dev, n * 2);
    st_slot slot = {.layer = l, .tensor = t};
    e2e_ref_model_put(&ref, &slot, h16, n);
    hx_host_free(h16);
  }
  const size_t n_out = (size_t)c->seqlen * c->hidden;
  int32_t *tokens = host((size_t)c->seqlen * 4, "tokens copy");
  hx_dev_to_host(tokens, m->tokens, (size_t)c->seqlen * 4);
  double *want = host(n_out * 8, "reference hidden");
  e2e_ref_trace tr;
  e2e_ref_trace_alloc(&tr, c);
  e2e_ref_forward(&ref, tokens, want, &tr);
  int ok = report_hidden(got->hidden, want, n_out, c->layers);
  if (m->cache_cap) {
    e2e_sel_want w = {tr.idx, tr.count, tr.score, tr.score2, tr.corm_margin};
    e2e_sel_check r =
        e2e_compare_selection(c, &w, got->idx, got->count, e2e_hidden_bound(c->layers), 0.0);
    e2e_print_selection_check("kv_select", "cpu-ref", &r);
    ok &= r.ok;
  }
  e2e_ref_trace_free(&tr);
  hx_host_free(want);
  hx_host_free(tokens);
  e2e_ref_model_free(&ref);
  return ok;
}

/* Reference = the other GPU system on the same weights. */
static int check_against_gpu(const e2e_model *m, const char *other_name, const run_copy *want_run,
                             const run_copy *got) {
  const e2e_config *c = &m->cfg;
  const size_t n_out = (size_t)c->seqlen * c->hidden;
  double *want = host(n_out * 8, "reference hidden");
  for (size_t i = 0; i < n_out; i++) want[i] = rng_half_to_float(want_run->hidden[i]);
  int ok = report_hidden(got->hidden, want, n_out, c->layers);
  hx_host_free(want);
  if (m->cache_cap) {
    /* corm: no margins from a GPU run; differences up to 2% of kept keys pass, unjudged */
    e2e_sel_want w = {want_run->idx, want_run->count, want_run->score, want_run->score2, NULL};
    e2e_sel_check r =
        e2e_compare_selection(c, &w, got->idx, got->count, e2e_hidden_bound(c->layers), 0.02);
    e2e_print_selection_check("kv_select", other_name, &r);
    ok &= r.ok;
  }
  return ok;
}

static void finish_run(const attn_ctx *ctx, int rc, const char *what) {
  if (rc != HX_OK) hx_die_system(&ctx->hx, what, rc);
}

static int run_checks(e2e_model *m, const attn_system *sys, const attn_system *other,
                      const attn_ctx *ctx) {
  const e2e_config *c = &m->cfg;
  e2e_trace_alloc(m);
  int ok = 1, use_cpu = e2e_ref_flops(c) <= E2E_REF_MAX_FLOPS;
  run_copy want_run, got;
  char why[256] = "";
  if (!other) snprintf(why, sizeof why, "no GPU system to check %s against", sys->name);
  int other_ok =
      !use_cpu && other && other->supports(ctx, c->workload, &m->shape, why, sizeof why) == HX_OK;
  if (other_ok) finish_run(ctx, checked_forward(m, other, ctx, &want_run), other->name);
  finish_run(ctx, checked_forward(m, sys, ctx, &got), sys->name);
  if (use_cpu)
    ok &= check_against_cpu(m, &got);
  else if (other_ok)
    ok &= check_against_gpu(m, other->name, &want_run, &got);
  else
    fprintf(hx_log(),
            "# check: hidden and kv_select skipped: too large for the CPU reference and %s is "
            "unsupported (%s)\n",
            other ? other->name : "no other system", why);
  if (m->cache_cap) {
    ok &= check_select_rule(c, &got);
    ok &= check_gather(m);
  }
  e2e_trace_free(m);
  return ok; /* the host copies are few and small next to the weights; left to exit */
}

static int forward_fn(void *arg) {
  void **a = arg;
  return e2e_forward(a[0], a[1], a[2], NULL);
}

void e2e_run_gpu(const e2e_options *o) {
  const e2e_config *c = &o->cfg;
  attn_ctx ctx;
  hx_device_info info;
  memset(&ctx, 0, sizeof ctx);
  hx_gpu_init(&ctx.hx, &info);
  ctx.force_sm80 = o->force_sm80;
  const system_entry *entry = &system_table[o->system];
  const attn_system *sys = entry->gpu;
  int other_index = entry->check_against ? system_find(entry->check_against) : -1;
  const attn_system *other = other_index >= 0 ? system_table[other_index].gpu : NULL;
  if (!sys)
    hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported", "%s has no GPU implementation", entry->name);
  hx_print_header(&info);
  attn_shape shape = {1,         c->heads,    c->head_dim, c->seqlen,
                      c->seqlen, MASK_CAUSAL, DTYPE_FP16,  ATTN_DENSE};
  /* impl: the system's, and for kf whether it draws the noise itself (no exp_rand tensor) */
  char impl[160];
  snprintf(impl, sizeof impl, "%s%s", sys->impl ? sys->impl(&ctx, c->workload, &shape) : sys->name,
           e2e_draws_exp_rand(sys, &ctx, c->workload, &shape) ? "+drawn-noise" : "");
  e2e_print_config(o, impl);
  if (e2e_workload_unsupported(c))
    hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported", "%s", e2e_workload_unsupported(c));
  char why[256] = "";
  if (sys->supports(&ctx, c->workload, &shape, why, sizeof why) != HX_OK)
    hx_die(REPRO_EXIT_UNSUPPORTED, "unsupported", "%s", why);

  e2e_model m;
  char err[512];
  if (e2e_model_init(&m, c, &ctx, sys, o->weights, err, sizeof err))
    hx_die(REPRO_EXIT_ERROR, "error", "%s", err);
  int ok = o->check ? run_checks(&m, sys, other, &ctx) : 1;
  if (!ok) hx_die(REPRO_EXIT_CHECK_FAILED, "error", "check failed (see the check lines)");
  if (o->gemm_bench) e2e_gemm_bench(c, &ctx.hx);
  if (o->breakdown) {
    e2e_phase_timer *t = e2e_phase_timer_new(c->layers);
    finish_run(&ctx, e2e_forward(&m, sys, &ctx, t), sys->name);
    double ms[PHASE_COUNT], total = 0;
    e2e_phase_timer_read(t, ms);
    static const char *const names[PHASE_COUNT] = {"gemm", "attention", "select", "other"};
    for (int p = 0; p < PHASE_COUNT; p++) total += ms[p];
    for (int p = 0; p < PHASE_COUNT; p++) {
      fputs("phase", hx_log());
      kv_put(hx_log(), "name", names[p]);
      kv_putf(hx_log(), "ms", "%.3f", ms[p]);
      kv_putf(hx_log(), "share", "%.3f", total > 0 ? ms[p] / total : 0.0);
      if (p == PHASE_GEMM)
        kv_putf(hx_log(), "tflops", "%.1f", e2e_gemm_flops(c) / (ms[p] * 1e-3) / 1e12);
      fputc('\n', hx_log());
    }
    e2e_phase_timer_free(t);
  }

  hx_dev_reset_peak();
  float *ms = host((size_t)o->runs * sizeof *ms, "timings");
  void *args[3] = {&m, (void *)sys, &ctx};
  hx_timing how;
  finish_run(&ctx, hx_time_runs(ctx.stream, forward_fn, args, o->warmup, o->runs, ms, &how),
             sys->name);
  hx_stats st = hx_stats_of(ms, o->runs, how);
  double peak = (double)hx_dev_peak_bytes();
  if (o->dump) {
    const size_t n = (size_t)c->seqlen * c->hidden;
    uint16_t *h16 = host(n * 2, "dump");
    float *f = host(n * 4, "dump");
    hx_dev_to_host(h16, m.out, n * 2);
    for (size_t i = 0; i < n; i++) f[i] = rng_half_to_float(h16[i]);
    char why[256];
    if (e2e_dump_floats(o->dump, f, n, why, sizeof why))
      hx_die(REPRO_EXIT_ERROR, "error", "--dump %s: cannot write: %s", o->dump, why);
  }
  hx_print_result_ok(&st, ms, o->runs, o->warmup, -1.0, peak);
  e2e_model_free(&m);
  hx_gpu_shutdown(&ctx.hx);
  exit(REPRO_EXIT_OK);
}
