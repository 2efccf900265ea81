// weights.cu: the device model's buffers (all through the harness's tracking allocator, so
// peak_mib covers weights, activations, the attention workspace and the KV cache), the seeded
// weight and token draws, and loading weights from safetensors files.
#include "draws.h"
#include "e2e.h"
#include "harness_gpu.h"
#include "safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint16_t **weight_slot(e2e_model *m, int layer, int tensor) {
  if (layer < 0) return tensor == DRAW_EMBED ? &m->w.embed : &m->w.final_norm;
  e2e_layer_weights *w = &m->w.layer[layer];
  switch (tensor) {
  case DRAW_ATTN_NORM: return &w->attn_norm;
  case DRAW_WQKV: return &w->wqkv;
  case DRAW_WO: return &w->wo;
  case DRAW_MLP_NORM: return &w->mlp_norm;
  case DRAW_WGU: return &w->wgu;
  default: return &w->wdown;
  }
}

// Calls fn(layer, tensor) for every weight tensor (E2E_FOR_EACH_WEIGHT order).
template <typename F> static void for_each_weight(const e2e_config *cfg, F fn) {
  E2E_FOR_EACH_WEIGHT(cfg, l, t) fn(l, t);
}

struct load_ctx {
  e2e_model *m;
};

static int put_weight(void *user, const st_slot *slot, const uint16_t *data, size_t n) {
  e2e_model *m = ((load_ctx *)user)->m;
  uint16_t *dst = *weight_slot(m, slot->layer, slot->tensor);
  size_t row_elems = (size_t)(slot->cols ? slot->cols : 1);
  HX_CUDA(cudaMemcpy(dst + (size_t)slot->row0 * row_elems, data, n * 2, cudaMemcpyHostToDevice));
  return 0;
}

static void *alloc_zero(size_t bytes, const char *what, cudaStream_t s) {
  void *p = hx_dev_alloc(bytes, what);
  HX_CUDA(cudaMemsetAsync(p, 0, bytes, s));
  return p;
}

extern "C" int e2e_model_init(e2e_model *m, const e2e_config *cfg, const attn_ctx *ctx,
                              const attn_system *sys, const char *weights_path, char *err,
                              size_t err_len) {
  memset(m, 0, sizeof *m);
  m->cfg = *cfg;
  m->shape.batch = 1;
  m->shape.heads = cfg->heads;
  m->shape.dim = cfg->head_dim;
  m->shape.q_len = m->shape.kv_len = cfg->seqlen;
  cudaStream_t s = ctx->stream;
  const size_t S = (size_t)cfg->seqlen, H = (size_t)cfg->heads, hid = (size_t)cfg->hidden;

  m->w.layer = (e2e_layer_weights *)calloc((size_t)cfg->layers, sizeof *m->w.layer);
  if (!m->w.layer) hx_die(REPRO_EXIT_OOM, "oom", "out of host memory for the layer table");
  for_each_weight(cfg, [&](int layer, int tensor) {
    *weight_slot(m, layer, tensor) =
        (uint16_t *)hx_dev_alloc(e2e_weight_elems(cfg, layer, tensor) * 2, "weights");
  });
  if (weights_path) {
    load_ctx lc = {m};
    if (st_load_weights(cfg, weights_path, put_weight, &lc, err, err_len)) return -1;
  } else {
    for_each_weight(cfg, [&](int layer, int tensor) {
      draw_params p = e2e_draw_params(cfg, tensor);
      e2e_fill_normal(*weight_slot(m, layer, tensor), e2e_weight_elems(cfg, layer, tensor),
                      cfg->seed, DRAW_STREAM_WEIGHT(layer, tensor), p.mean, p.stddev, s);
    });
  }
  m->tokens = (int32_t *)hx_dev_alloc(S * 4, "tokens");
  e2e_fill_tokens(m->tokens, (int)S, cfg->vocab, cfg->seed, s);

  m->x = (uint16_t *)hx_dev_alloc(S * hid * 2, "x");
  m->xn = (uint16_t *)hx_dev_alloc(S * hid * 2, "xn");
  m->qkv = (uint16_t *)hx_dev_alloc(3 * S * hid * 2, "qkv");
  m->attn_out = (uint16_t *)hx_dev_alloc(S * hid * 2, "attn_out");
  m->gu = (uint16_t *)hx_dev_alloc(S * 2 * (size_t)cfg->mlp * 2, "gate_up");
  m->out = (uint16_t *)hx_dev_alloc(S * hid * 2, "out");

  const workload_id wl = cfg->workload;
  const workload_info *w = &workload_table[wl];
  if (workload_needs_exp_rand(wl))
    m->exp_rand = (float *)hx_dev_alloc(attn_input_bytes(ATTN_IN_exp_rand, &m->shape), "exp_rand");
  if (workload_needs_corm_mask(wl)) {
    m->corm_mask =
        (float *)hx_dev_alloc(attn_input_bytes(ATTN_IN_corm_mask, &m->shape), "corm_mask");
    e2e_fill_corm_mask(m->corm_mask, (int)S, s);
  }
  if (w->flags_name) m->attn_flags = (uint8_t *)alloc_zero(H * S, "flags", s);
  if (w->score_name) m->score = (float *)alloc_zero(H * S * 4, "score", s);
  if (w->score2_name) m->score2 = (float *)alloc_zero(H * S * 4, "score2", s);
  m->attn_ws_bytes = sys->workspace_bytes(ctx, wl, &m->shape);
  if (m->attn_ws_bytes) m->attn_ws = hx_dev_alloc(m->attn_ws_bytes, "attention workspace");

  m->cache_cap = e2e_cache_cap(cfg);
  if (m->cache_cap) {
    const size_t L = (size_t)cfg->layers, cap = (size_t)m->cache_cap;
    m->keep_flags = (uint8_t *)alloc_zero(H * S, "keep flags", s);
    m->cache_idx = (int32_t *)alloc_zero(L * H * cap * 4, "cache idx", s);
    m->cache_count = (int32_t *)alloc_zero(L * H * 4, "cache count", s);
    m->k_cache = (uint16_t *)alloc_zero(L * H * cap * cfg->head_dim * 2, "k cache", s);
    m->v_cache = (uint16_t *)alloc_zero(L * H * cap * cfg->head_dim * 2, "v cache", s);
  }
  HX_CUDA(cudaStreamSynchronize(s));
  return 0;
}

extern "C" void e2e_trace_alloc(e2e_model *m) {
  const size_t n = (size_t)m->cfg.layers * m->cfg.heads * m->cfg.seqlen;
  if (m->score) m->trace.score = (float *)hx_dev_alloc(n * 4, "trace score");
  if (m->score2) m->trace.score2 = (float *)hx_dev_alloc(n * 4, "trace score2");
  if (m->attn_flags) m->trace.flags = (uint8_t *)hx_dev_alloc(n, "trace flags");
}

extern "C" void e2e_trace_free(e2e_model *m) {
  hx_dev_free(m->trace.score);
  hx_dev_free(m->trace.score2);
  hx_dev_free(m->trace.flags);
  memset(&m->trace, 0, sizeof m->trace);
}

extern "C" void e2e_model_free(e2e_model *m) {
  e2e_trace_free(m);
  if (m->w.layer)
    for_each_weight(&m->cfg,
                    [&](int layer, int tensor) { hx_dev_free(*weight_slot(m, layer, tensor)); });
  free(m->w.layer);
  void *bufs[] = {m->tokens,      m->x,          m->xn,       m->qkv,        m->attn_out,
                  m->gu,          m->out,        m->exp_rand, m->corm_mask,  m->score,
                  m->score2,      m->attn_flags, m->attn_ws,  m->keep_flags, m->cache_idx,
                  m->cache_count, m->k_cache,    m->v_cache};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) hx_dev_free(bufs[i]);
  memset(m, 0, sizeof *m);
}
