/* config.c: the model's shape, its KV-cache budgets, flop counts and weight draw scales. */
#include "e2e.h"

#include <math.h>
#include <stdio.h>

void e2e_config_default(e2e_config *cfg) {
  cfg->workload = WL_ATTN;
  cfg->layers = 32;
  cfg->hidden = 4096;
  cfg->heads = 32;
  cfg->head_dim = 128;
  cfg->mlp = 11008;
  cfg->vocab = 32000;
  cfg->seqlen = 4096;
  cfg->rms_eps = 1e-5;
  cfg->rope_theta = 10000.0;
  cfg->keep = 512;
  cfg->keep_std = 256;
  cfg->corm_cap = 512;
  cfg->seed = 1;
}

const char *e2e_config_invalid(const e2e_config *cfg) {
  static char msg[160];
  if (cfg->heads <= 0 || cfg->hidden % cfg->heads != 0) {
    snprintf(msg, sizeof msg, "--hidden %d is not a multiple of --heads %d", cfg->hidden,
             cfg->heads);
    return msg;
  }
  if (cfg->head_dim != cfg->hidden / cfg->heads) return "head_dim must be hidden/heads";
  if (cfg->head_dim % 8 != 0) return "hidden/heads must be a multiple of 8 (16-byte rows)";
  if (cfg->head_dim > 256) return "hidden/heads must be at most 256";
  if (cfg->hidden % 8 != 0 || cfg->mlp % 8 != 0)
    return "--hidden and --mlp must be multiples of 8 (16-byte rows for the tensor cores)";
  return NULL;
}

const char *e2e_workload_unsupported(const e2e_config *cfg) {
  static char msg[200];
  if (!workload_selected_blocks(cfg->workload)) return NULL;
  snprintf(msg, sizeof msg,
           "workload %s attends to selected key blocks (KEYS_SELECTED_BLOCKS): the e2e model has "
           "no block lists or KV-cache selection rule for it",
           workload_names[cfg->workload]);
  return msg;
}

int e2e_cache_cap(const e2e_config *cfg) {
  int s = cfg->seqlen, cap;
  switch (workload_table[cfg->workload].select) {
  case SEL_TOPK: cap = cfg->keep; break;
  case SEL_TOPK_STD: cap = cfg->keep_std + cfg->keep; break;
  case SEL_FLAGS: cap = cfg->corm_cap; break;
  default: return 0; /* SEL_NONE: no selection */
  }
  return cap < s ? cap : s;
}

double e2e_gemm_flops(const e2e_config *cfg) {
  double s = cfg->seqlen, h = cfg->hidden, f = cfg->mlp;
  double per_layer = 2.0 * s * h * (3.0 * h + h + 2.0 * f) + 2.0 * s * f * h;
  return per_layer * cfg->layers;
}

double e2e_attn_flops(const e2e_config *cfg) {
  double s = cfg->seqlen;
  return 4.0 * cfg->heads * s * s * cfg->head_dim / 2.0 * cfg->layers;
}

e2e_weight_sizes e2e_weight_sizes_of(const e2e_config *cfg) {
  size_t h = (size_t)cfg->hidden, f = (size_t)cfg->mlp;
  e2e_weight_sizes z = {.embed = (size_t)cfg->vocab * h,
                        .norm = h,
                        .wqkv = 3 * h * h,
                        .wo = h * h,
                        .wgu = 2 * f * h,
                        .wdown = h * f};
  return z;
}

size_t e2e_weight_elems(const e2e_config *cfg, int layer, int tensor) {
  e2e_weight_sizes z = e2e_weight_sizes_of(cfg);
  if (layer < 0) return tensor == DRAW_EMBED ? z.embed : z.norm;
  switch (tensor) {
  case DRAW_ATTN_NORM:
  case DRAW_MLP_NORM: return z.norm;
  case DRAW_WQKV: return z.wqkv;
  case DRAW_WO: return z.wo;
  case DRAW_WGU: return z.wgu;
  default: return z.wdown;
  }
}

draw_params e2e_draw_params(const e2e_config *cfg, int tensor) {
  draw_params p = {0.0f, 1.0f};
  switch (tensor) {
  case DRAW_ATTN_NORM:
  case DRAW_MLP_NORM:
  case DRAW_FINAL_NORM: p.mean = 1.0f, p.stddev = 0.1f; break;
  case DRAW_WQKV:
  case DRAW_WO:
  case DRAW_WGU: p.stddev = (float)(1.0 / sqrt((double)cfg->hidden)); break;
  case DRAW_WDOWN: p.stddev = (float)(1.0 / sqrt((double)cfg->mlp)); break;
  default: break; /* DRAW_EMBED: N(0, 1) */
  }
  return p;
}
