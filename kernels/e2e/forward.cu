// forward.cu: one prefill forward of the model, every step enqueued on ctx->stream:
//   x = embed[tokens]
//   per layer: xn = RMSNorm(x) -> q|k|v = xn·Wqkvᵀ (one batched GEMM) -> RoPE(q, k)
//              -> the workload's attention (attn_system) -> its KV-cache selection
//              -> x += attn·Woᵀ (the residual add is the GEMM's beta = 1)
//              -> xn = RMSNorm(x) -> gate|up = xn·Wguᵀ -> gate = SiLU(gate)·up
//              -> x += gate·Wdownᵀ (beta = 1)
//   out = RMSNorm(x)
// The residual add rides on cuBLAS's epilogue (C = A·B + 1·C in fp32, rounded once), which
// saves two passes over x per layer and rounds once where PyTorch rounds twice.
#include "draws.h"
#include "e2e.h"
#include "harness_gpu.h"

#include <stdlib.h>

// ---- phase timer ----------------------------------------------------------------------
struct e2e_phase_timer {
  cudaEvent_t *events;
  int *phase; // phase[i]: what ran between events[i-1] and events[i]
  int n, cap;
};

extern "C" e2e_phase_timer *e2e_phase_timer_new(int layers) {
  e2e_phase_timer *t = (e2e_phase_timer *)calloc(1, sizeof *t);
  if (!t) hx_die(REPRO_EXIT_ERROR, "error", "out of host memory for the phase timer");
  t->cap = 16 * layers + 8;
  t->events = (cudaEvent_t *)calloc((size_t)t->cap, sizeof *t->events);
  t->phase = (int *)calloc((size_t)t->cap, sizeof *t->phase);
  if (!t->events || !t->phase)
    hx_die(REPRO_EXIT_ERROR, "error", "out of host memory for the phase timer");
  for (int i = 0; i < t->cap; i++) HX_CUDA(cudaEventCreate(&t->events[i]));
  return t;
}

static void mark(e2e_phase_timer *t, int phase, cudaStream_t s) {
  if (!t) return;
  if (t->n == t->cap) hx_die(REPRO_EXIT_ERROR, "error", "phase timer: more than %d events", t->cap);
  t->phase[t->n] = phase;
  HX_CUDA(cudaEventRecord(t->events[t->n++], s));
}

extern "C" void e2e_phase_timer_read(e2e_phase_timer *t, double ms[PHASE_COUNT]) {
  for (int p = 0; p < PHASE_COUNT; p++) ms[p] = 0.0;
  if (t->n) HX_CUDA(cudaEventSynchronize(t->events[t->n - 1]));
  for (int i = 1; i < t->n; i++) {
    float e = 0.0f;
    HX_CUDA(cudaEventElapsedTime(&e, t->events[i - 1], t->events[i]));
    ms[t->phase[i]] += e;
  }
  t->n = 0;
}

extern "C" void e2e_phase_timer_free(e2e_phase_timer *t) {
  if (!t) return;
  for (int i = 0; i < t->cap; i++) HX_CUDA(cudaEventDestroy(t->events[i]));
  free(t->events);
  free(t->phase);
  free(t);
}

// ---- the forward ---------------------------------------------------------------------

static void trace_layer(const e2e_model *m, int layer, cudaStream_t s) {
  const e2e_trace *t = &m->trace;
  size_t n = (size_t)m->cfg.heads * m->cfg.seqlen;
  if (t->score && m->score)
    HX_CUDA(cudaMemcpyAsync(t->score + layer * n, m->score, n * 4, cudaMemcpyDeviceToDevice, s));
  if (t->score2 && m->score2)
    HX_CUDA(cudaMemcpyAsync(t->score2 + layer * n, m->score2, n * 4, cudaMemcpyDeviceToDevice, s));
  if (t->flags && m->attn_flags)
    HX_CUDA(cudaMemcpyAsync(t->flags + layer * n, m->attn_flags, n, cudaMemcpyDeviceToDevice, s));
}

extern "C" int e2e_draws_exp_rand(const attn_system *sys, const attn_ctx *ctx, workload_id wl,
                                  const attn_shape *shape) {
  return workload_needs_exp_rand(wl) && sys->draws_exp_rand && sys->draws_exp_rand(ctx, wl, shape);
}

static int attention(e2e_model *m, const attn_system *sys, const attn_ctx *ctx, int layer) {
  const e2e_config *c = &m->cfg;
  const size_t hd = (size_t)c->seqlen * c->hidden;
  /* KeyFormer's noise, drawn per layer (draws.h). A system that draws it where it reads it
   * (e2e_draws_exp_rand) gets the draw's seed and stream instead of a tensor. The others read
   * the tensor, written in full for the first layer, then only where the causal mask lets
   * attention read it (the rest keeps the first layer's draws, never read: every
   * implementation masks through mask_offset); the same values as a full draw where they
   * matter, half the writes of a full draw per layer (PERF-e2e.md). */
  attn_io io = {};
  if (workload_needs_exp_rand(c->workload)) {
    io.exp_rand_drawn = e2e_draws_exp_rand(sys, ctx, c->workload, &m->shape);
    io.exp_rand_draw = draw_kf_noise(c->seed, layer);
    const int causal_part =
        layer > 0 && m->shape.mask == MASK_CAUSAL && mask_offset(&m->shape) == 0;
    if (!io.exp_rand_drawn)
      e2e_fill_exp_rand(m->exp_rand, c->heads * c->seqlen, c->seqlen, c->seed, layer, causal_part,
                        ctx->stream);
    io.exp_rand = io.exp_rand_drawn ? NULL : m->exp_rand;
  }
  io.q = m->qkv;
  io.k = m->qkv + hd;
  io.v = m->qkv + 2 * hd;
  io.corm_mask = m->corm_mask;
  io.out = m->attn_out;
  io.score = m->score;
  io.score2 = m->score2;
  io.flags = m->attn_flags;
  return sys->run(ctx, c->workload, &m->shape, &io, m->attn_ws);
}

extern "C" int e2e_forward(e2e_model *m, const attn_system *sys, const attn_ctx *ctx,
                           e2e_phase_timer *timer) {
  const e2e_config *c = &m->cfg;
  const int S = c->seqlen, h = c->hidden, f = c->mlp;
  const float eps = (float)c->rms_eps;
  cudaStream_t s = ctx->stream;
  const size_t hd = (size_t)S * h;

  mark(timer, PHASE_OTHER, s);
  e2e_embed(m->tokens, m->w.embed, m->x, S, h, s);
  for (int l = 0; l < c->layers; l++) {
    const e2e_layer_weights *w = &m->w.layer[l];
    e2e_rmsnorm(m->x, w->attn_norm, m->xn, S, h, eps, s);
    mark(timer, PHASE_OTHER, s);
    e2e_gemm_xwT(ctx->cublas, m->xn, h, w->wqkv, m->qkv, h, (long long)hd, S, h, h, 0.0f, 3);
    mark(timer, PHASE_GEMM, s);
    e2e_rope(m->qkv, S, c->heads, c->head_dim, (float)c->rope_theta, 2, s);
    mark(timer, PHASE_OTHER, s);
    int rc = attention(m, sys, ctx, l);
    if (rc != HX_OK) return rc;
    mark(timer, PHASE_ATTN, s);
    trace_layer(m, l, s);
    e2e_select(m, l, s);
    mark(timer, PHASE_SELECT, s);
    e2e_gemm_xwT(ctx->cublas, m->attn_out, h, w->wo, m->x, h, 0, S, h, h, 1.0f, 1);
    mark(timer, PHASE_GEMM, s);
    e2e_rmsnorm(m->x, w->mlp_norm, m->xn, S, h, eps, s);
    mark(timer, PHASE_OTHER, s);
    e2e_gemm_xwT(ctx->cublas, m->xn, h, w->wgu, m->gu, 2 * f, 0, S, 2 * f, h, 0.0f, 1);
    mark(timer, PHASE_GEMM, s);
    e2e_silu_mul(m->gu, S, f, s);
    mark(timer, PHASE_OTHER, s);
    // down projection reads the SiLU·up product in place: rows of 2·mlp, first mlp used
    e2e_gemm_xwT(ctx->cublas, m->gu, 2 * f, w->wdown, m->x, h, 0, S, h, f, 1.0f, 1);
    mark(timer, PHASE_GEMM, s);
  }
  e2e_rmsnorm(m->x, m->w.final_norm, m->out, S, h, eps, s);
  mark(timer, PHASE_OTHER, s);
  return HX_OK;
}
