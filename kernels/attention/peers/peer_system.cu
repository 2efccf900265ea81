// What the peer systems share on the kit's side (peer_system.h).
#include "peer_system.h"

#include <stdio.h>

peer_problem peer_problem_of(workload_id wl, const attn_shape *sh, const attn_io *io) {
  peer_problem p = {};
  p.q = io->q;
  p.k = io->k;
  p.v = io->v;
  p.out = io->out;
  p.batch = sh->batch;
  p.heads = sh->heads;
  p.kv_heads = shape_kv_heads(sh);
  p.q_len = sh->q_len;
  p.kv_len = sh->kv_len;
  p.dim = sh->dim;
  p.causal = sh->mask == MASK_CAUSAL;
  p.bf16 = sh->dtype == DTYPE_BF16;
  p.scale = shape_scale(sh);
  p.softcap = workload_table[wl].logits == LOGITS_SOFTCAP ? GEMMA2_SOFTCAP : 0.0;
  return p;
}

namespace {

bool has_dim(const int *dims, int d) {
  for (; *dims; dims++)
    if (*dims == d) return true;
  return false;
}

// "64, 96, 128, 256"
void dims_text(const int *dims, char *out, size_t len) {
  size_t n = 0;
  out[0] = '\0';
  for (const int *d = dims; *d && n < len; d++)
    n += (size_t)snprintf(out + n, len - n, "%s%d", d == dims ? "" : ", ", *d);
}

// 1 with the reason in why when the forward does not run head dim D in this build, else 0.
int refuses_dim(const peer_serves *s, int D, char *why, size_t why_len) {
  char built[64];
  dims_text(s->built_dims, built, sizeof built);
  if (s->dim_multiple == 0) {
    if (has_dim(s->built_dims, D)) return 0;
    snprintf(why, why_len, "%s is built for head dims %s only, D equal to one (%s)", s->system,
             built, s->dims_note);
    return 1;
  }
  int largest = 0, pick = 0;
  for (const int *k = s->kernel_dims; *k; k++) {
    largest = *k;
    if (!pick && *k >= D) pick = *k;
  }
  if (D < s->dim_multiple || D % s->dim_multiple != 0 || D > largest) {
    snprintf(why, why_len, "%s runs head dims that are multiples of %d up to %d only", s->forward,
             s->dim_multiple, largest);
    return 1;
  }
  if (has_dim(s->built_dims, pick)) return 0;
  snprintf(why, why_len,
           "%s runs head dim %d on its hdim-%d kernel, not built here (built: %s; %s)", s->forward,
           D, pick, built, s->dims_note);
  return 1;
}

} // namespace

// Judged on the workload's features: a workload that is attn (or gemma2) under another name is
// served too.
int peer_refuses(const peer_serves *s, workload_id wl, const attn_shape *sh, char *why,
                 size_t why_len) {
  if ((int)wl < 0 || wl >= WL_COUNT) {
    snprintf(why, why_len, "unknown workload");
    return 1;
  }
  const workload_info *w = &workload_table[wl];
  const int logits_ok = w->logits == LOGITS_SCALED || (s->softcap && w->logits == LOGITS_SOFTCAP);
  const int kv = shape_kv_heads(sh);
  if (!logits_ok || w->keys != KEYS_DENSE || w->column != COL_NONE)
    snprintf(why, why_len,
             "%s computes the plain softmax (attn)%s only: no %scolumn statistic, noise or "
             "selected blocks",
             s->forward, s->softcap ? " and its logits soft-cap (gemma2)" : "",
             s->softcap ? "" : "softcap, ");
  else if (sh->dtype != DTYPE_FP16 && sh->dtype != DTYPE_BF16)
    snprintf(why, why_len, "%s runs fp16 and bf16 only", s->system);
  else if (refuses_dim(s, sh->dim, why, why_len))
    return 1;
  else if (!s->gqa && kv != sh->heads)
    snprintf(why, why_len, "%s is built without GQA: K/V heads = query heads only", s->system);
  else if (sh->heads % kv != 0)
    snprintf(why, why_len, "%s needs H a multiple of the K/V heads", s->system);
  else if (sh->q_len < 1 || sh->q_len > sh->kv_len)
    snprintf(why, why_len, "%s here needs 1 <= q_len <= kv_len", s->system);
  else
    return 0;
  return 1;
}

void peer_unbuilt(const char *project, const char *cmake_option, const char *folder, char *why,
                  size_t why_len) {
  snprintf(why, why_len,
           "built without %s: configure with -D%s=<its checkout> (kernels/attention/%s/README.md)",
           project, cmake_option, folder);
}
